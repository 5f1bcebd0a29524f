"""Flag expressions: ``true``, ``false``, flag names, ``not``, ``and``, ``or``, parentheses.

``not`` binds tightest, then ``and``, then ``or``. Parsed by recursive descent into a
small immutable tree; never handed to ``eval``. Errors carry the 0-based column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .errors import LocatedError
from .records import field, record

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
class And:
    operands: tuple[Expr, ...]

    def evaluate(self, flags: Mapping[str, bool]) -> bool:
        return all(op.evaluate(flags) for op in self.operands)

    def names(self) -> frozenset[str]:
        return frozenset().union(*(op.names() for op in self.operands))

    def __str__(self) -> str:
        return " and ".join(f"({op})" if isinstance(op, Or) else str(op) for op in self.operands)


@record
class Or:
    operands: tuple[Expr, ...]

    def evaluate(self, flags: Mapping[str, bool]) -> bool:
        return any(op.evaluate(flags) for op in self.operands)

    def names(self) -> frozenset[str]:
        return frozenset().union(*(op.names() for op in self.operands))

    def __str__(self) -> str:
        return " or ".join(str(op) for op in self.operands)


Expr = Const | Flag | Not | And | Or

TRUE = Const(True)


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
        value, column = tokens[parser.pos]
        raise LocatedError(f"unexpected {value!r}; expected 'and', 'or' or the end.", column)
    return tree


def _tokenize(text: str) -> list[tuple[str, int]]:
    tokens: list[tuple[str, int]] = []
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
            tokens.append((match.group(kind), start))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str, tokens: list[tuple[str, int]]) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def column(self) -> int:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else len(self.text)

    def parse_or(self, depth: int) -> Expr:
        operands = [self.parse_and(depth)]
        while self.peek() == "or":
            self.pos += 1
            operands.append(self.parse_and(depth))
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def parse_and(self, depth: int) -> Expr:
        operands = [self.parse_not(depth)]
        while self.peek() == "and":
            self.pos += 1
            operands.append(self.parse_not(depth))
        return operands[0] if len(operands) == 1 else And(tuple(operands))

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
