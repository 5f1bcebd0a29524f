"""Flag expressions: ``true``, ``false``, flag names, ``not``, ``and``, ``or``, parentheses.

``not`` binds tightest, then ``and``, then ``or``. Parsed by recursive descent into a
small immutable tree; never handed to ``eval``. Errors carry the 0-based column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from stagegate.errors import LocatedError
from stagegate.records import field, record

MAX_LENGTH = 1000
MAX_DEPTH = 50
KEYWORDS = frozenset({"not", "and", "or", "true", "false"})

_TOKEN = re.compile(r"\s*(?:(?P<word>[A-Za-z0-9_][A-Za-z0-9._-]*)|(?P<punct>[()])|(?P<bad>\S))")


@record
class Const:
    value: bool

    def evaluate(self, flags: Mapping[str, bool]) -> bool:
        return self.value

    def names(self) -> frozenset[str]:
        return frozenset()

    def __str__(self) -> str:
        return "true" if self.value else "false"


@record
class Flag:
    name: str
    column: int = field(default=0, compare=False)

    def evaluate(self, flags: Mapping[str, bool]) -> bool:
        return flags[self.name]

    def names(self) -> frozenset[str]:
        return frozenset({self.name})

    def __str__(self) -> str:
        return self.name


@record
class Not:
    operand: Expr

    def evaluate(self, flags: Mapping[str, bool]) -> bool:
        return not self.operand.evaluate(flags)

    def names(self) -> frozenset[str]:
        return self.operand.names()

    def __str__(self) -> str:
        inner = str(self.operand)
        return f"not {inner}" if isinstance(self.operand, Const | Flag | Not) else f"not ({inner})"


@record
class _Junction:
    """``and`` or ``or`` over two or more operands."""

    operands: tuple[Expr, ...]
    WORD = ""
    DECISIVE = False
    """The operand value that decides the whole: false for ``and``, true for ``or``."""
    BINDING = 0
    """How tightly the operator binds; an operand binding less is written in parentheses."""

    def evaluate(self, flags: Mapping[str, bool]) -> bool:
        decisive = self.DECISIVE
        for op in self.operands:
            if op.evaluate(flags) == decisive:
                return decisive
        return not decisive

    def names(self) -> frozenset[str]:
        return frozenset().union(*(op.names() for op in self.operands))

    def __str__(self) -> str:
        return f" {self.WORD} ".join(
            f"({op})" if isinstance(op, _Junction) and op.BINDING < self.BINDING else str(op)
            for op in self.operands
        )


@record
class And(_Junction):
    WORD = "and"
    DECISIVE = False
    BINDING = 2


@record
class Or(_Junction):
    WORD = "or"
    DECISIVE = True
    BINDING = 1


Expr = Const | Flag | Not | And | Or


def parse(text: str | bool) -> Expr:
    """Parse a ``when`` value; YAML booleans are accepted as constants."""
    if isinstance(text, bool):
        return Const(text)
    if len(text) > MAX_LENGTH:
        raise LocatedError(
            f"expression is {len(text)} characters; the limit is {MAX_LENGTH}: "
            "introduce a flag for the combined condition.",
            MAX_LENGTH,
        )
    tokens = _tokenize(text)
    if not tokens:
        raise LocatedError("empty expression; write true, false or a flag expression.", 0)
    parser = _Parser(text, tokens)
    tree = parser.parse_or(0)
    if parser.pos < len(tokens):
        _kind, value, column = tokens[parser.pos]
        raise LocatedError(f"unexpected {value!r}; expected 'and', 'or' or the end.", column)
    return tree


Token = tuple[str, str, int]
"""A parser's token: its kind (the name of the regex group it matched), text and column."""


def _tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:  # only trailing white space is left
            break
        kind = match.lastgroup
        start = match.start(kind) if kind else pos
        if kind == "bad":
            raise LocatedError(
                f"unexpected character {text[start]!r}; expressions use flag names, "
                "not, and, or, true, false and parentheses.",
                start,
            )
        if kind is not None:
            tokens.append((kind, match.group(kind), start))
        pos = match.end()
    return tokens


class Cursor:
    """A recursive-descent parser's place in its tokens (this module's and ``ghexpr``'s)."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        """The next token's text; None at the end."""
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def column(self) -> int:
        """Where the next token starts; the text's length at the end."""
        return self.tokens[self.pos][2] if self.pos < len(self.tokens) else len(self.text)


class _Parser(Cursor):
    _LEVELS = (Or, And)  # the loosest first

    def parse_or(self, depth: int, level: int = 0) -> Expr:
        """``or`` of ``and`` of ``not`` terms (from ``level`` on)."""
        if level == len(self._LEVELS):
            return self.parse_not(depth)
        junction = self._LEVELS[level]
        operands = [self.parse_or(depth, level + 1)]
        while self.peek() == junction.WORD:
            self.pos += 1
            operands.append(self.parse_or(depth, level + 1))
        return operands[0] if len(operands) == 1 else junction(tuple(operands))

    def parse_not(self, depth: int) -> Expr:
        if depth > MAX_DEPTH:
            raise LocatedError(
                f"expression nests more than {MAX_DEPTH} levels; simplify it.", self.column()
            )
        if self.peek() == "not":
            self.pos += 1
            return Not(self.parse_not(depth + 1))
        return self.parse_atom(depth)

    def parse_atom(self, depth: int) -> Expr:
        token = self.peek()
        column = self.column()
        if token is None:
            raise LocatedError("expression ends too early; expected a flag name or '('.", column)
        self.pos += 1
        if token == "(":
            inner = self.parse_or(depth + 1)
            if self.peek() != ")":
                raise LocatedError("missing ')'; close the parenthesis opened here.", column)
            self.pos += 1
            return inner
        if token in ("true", "false"):
            return Const(token == "true")
        if token in KEYWORDS or token == ")":
            raise LocatedError(f"unexpected {token!r}; expected a flag name or '('.", column)
        return Flag(token, column)
