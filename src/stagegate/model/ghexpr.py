"""GitHub Actions expressions (``${{ ... }}``), parsed and evaluated without guessing.

Values are plain Python values (str, bool, None, float, list, dict) or symbolic:
``Sym`` is text assembled from literal pieces, ``Ph`` placeholders (an axis of the
model, from ``workflows.bind``) and ``Unknown`` pieces; ``Unknown`` is a value nobody
can compute from the YAML alone (a secret, a step's output, ``github.event_name``).
Logic is three-valued: ``truth`` answers True, False or None (undecided). Parsed by
recursive descent with bounded length and depth; never handed to ``eval``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from stagegate.errors import LocatedError
from stagegate.model.expr import Cursor, Token
from stagegate.records import field, record

MAX_EXPRESSION = 10_000
"""Longest expression between ``${{`` and ``}}`` accepted."""
MAX_DEPTH = 50
"""Deepest nesting of an expression (parentheses, calls, indexes)."""
MAX_JSON = 100_000
"""Longest text ``fromJSON`` reads."""


@record
class Ph:
    """An ``{axis}`` placeholder inside a name; ``value``: the matrix value it stands for.

    A value is set only when reading for ``init``, where matrix values are tagged with
    their key so that names can be written back as templates."""

    axis: str
    value: str | None = None


class Tagged(str):
    """A matrix value that remembers its key (only when reading for ``init``)."""

    axis: str

    def __new__(cls, text: str, axis: str) -> Tagged:
        made = super().__new__(cls, text)
        made.axis = axis
        return made


@record
class Unknown:
    """A value that cannot be computed: what it is and why."""

    expression: str
    reason: str
    truth: bool | None = field(default=None, compare=False)


@record
class Sym:
    """Text made of literal strings, placeholders and unknown pieces."""

    parts: tuple[str | Ph | Unknown, ...]


Value = Any
Part = str | Ph | Unknown


def concat(parts: Sequence[Value]) -> Value:
    """Text of values put side by side: a plain str when every piece is known."""
    for value in parts:  # the common case, plain text, without a generator
        if type(value) is not str:
            break
    else:
        return "".join(parts)
    out: list[Part] = []
    for value in parts:
        if isinstance(value, Tagged):
            out.append(Ph(value.axis, str(value)))
        elif isinstance(value, Sym):
            out.extend(value.parts)
        elif isinstance(value, Unknown | Ph):
            out.append(value)
        else:
            out.append(to_text(value))
    merged: list[Part] = []
    for part in out:
        if isinstance(part, str):
            if not part:
                continue
            if merged and isinstance(merged[-1], str):
                merged[-1] += part
                continue
        merged.append(part)
    if all(isinstance(p, str) for p in merged):
        return "".join(p for p in merged if isinstance(p, str))
    return Sym(tuple(merged))


def to_text(value: Value) -> str:
    """How GitHub writes a known value into text."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float | int):
        return _number_text(float(value))
    if isinstance(value, list):
        return "Array"
    if isinstance(value, dict):
        return "Object"
    return str(value)


def _number_text(number: float) -> str:
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return repr(number)


def unknowns(value: Value) -> list[Unknown]:
    if isinstance(value, Unknown):
        return [value]
    if isinstance(value, Sym):
        return [p for p in value.parts if isinstance(p, Unknown)]
    return []


def truth(value: Value) -> bool | None:
    if isinstance(value, Unknown):
        return value.truth
    if isinstance(value, Sym):
        if any((isinstance(p, str) and p) or isinstance(p, Ph) for p in value.parts):
            return True
        return None
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    return True


# --------------------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>0x[0-9a-fA-F]+|[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
    r"(?:[eE][-+]?[0-9]+)?(?![A-Za-z_]))|(?P<word>[A-Za-z_][A-Za-z0-9_-]*)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*]))"
)


# --------------------------------------------------------------------------- syntax tree


@record
class Lit:
    """A literal: a string, a number (always a float, as GitHub reads them), a boolean
    or ``null``."""

    value: str | float | bool | None


@record
class Ref:
    """A bare name: a context (``matrix``, ``env``, ``github``)."""

    name: str


@record
class Prop:
    """``base.name``."""

    base: Node
    name: str


@record
class Index:
    """``base[key]``."""

    base: Node
    key: Node


@record
class Star:
    """``base.*`` or ``base[*]``: the values of an object, the items of an array."""

    base: Node


@record
class Call:
    """``name(args...)``; ``name`` lower-cased (function names ignore case); ``column``:
    where the call starts in the expression."""

    name: str
    args: tuple[Node, ...]
    column: int = field(default=0, compare=False)


@record
class Not:
    """``!operand``."""

    operand: Node


@record
class Bin:
    """``left op right``; ``op`` one of ``|| && == != < <= > >=``."""

    op: str
    left: Node
    right: Node


Node = Lit | Ref | Prop | Index | Star | Call | Not | Bin
"""A node of an expression's syntax tree."""


def parse(text: str) -> Node:
    """The syntax tree of one expression (the text between ``${{`` and ``}}``)."""
    return _parse(text)


@functools.lru_cache(maxsize=16_384)
def _parse(text: str) -> Node:
    """``parse``, once per text: readers meet the same expressions in every matrix row,
    caller and step they evaluate (the tree is immutable; errors are not kept)."""
    if len(text) > MAX_EXPRESSION:
        raise LocatedError(
            f"expression of {len(text):,} characters; the limit is {MAX_EXPRESSION:,}: shorten it."
        )
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            column = len(text) - len(text[pos:].lstrip())
            raise LocatedError(
                f"unexpected {text[column : column + 1]!r} in an expression; "
                "fix the expression's syntax.",
                column,
            )
        kind = match.lastgroup or "op"
        tokens.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    parser = _Parser(text, tokens)
    node = parser.expression(0)
    if parser.pos < len(tokens):
        raise LocatedError(
            f"unexpected {tokens[parser.pos][1]!r} after a complete expression; "
            "fix the expression's syntax.",
            tokens[parser.pos][2],
        )
    return node


class _Parser(Cursor):
    def take(self, token: str) -> None:
        if self.peek() != token:
            raise LocatedError(f"expected {token!r} here; fix the expression.", self.column())
        self.pos += 1

    def expression(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise LocatedError(
                f"the expression nests more than {MAX_DEPTH} levels; simplify it.", self.column()
            )
        return self.binary(0, depth)

    _LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="))

    def binary(self, level: int, depth: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary(depth)
        left = self.binary(level + 1, depth)
        while self.peek() in self._LEVELS[level]:
            op = self.tokens[self.pos][1]
            self.pos += 1
            right = self.binary(level + 1, depth)
            left = Bin(op, left, right)
        return left

    def unary(self, depth: int) -> Node:
        if self.peek() == "!":
            self.pos += 1
            if depth > MAX_DEPTH:
                raise LocatedError(
                    f"the expression nests more than {MAX_DEPTH} levels; simplify it.",
                    self.column(),
                )
            return Not(self.unary(depth + 1))
        return self.postfix(depth)

    def postfix(self, depth: int) -> Node:
        node = self.primary(depth)
        while self.peek() in (".", "["):
            if self.peek() == ".":
                self.pos += 1
                if self.peek() == "*":
                    self.pos += 1
                    node = Star(node)
                    continue
                if self.pos >= len(self.tokens) or self.tokens[self.pos][0] != "word":
                    raise LocatedError(
                        "expected a property name after '.'; fix the expression.", self.column()
                    )
                node = Prop(node, self.tokens[self.pos][1])
                self.pos += 1
            else:
                self.pos += 1
                if self.peek() == "*":
                    self.pos += 1
                    self.take("]")
                    node = Star(node)
                    continue
                inner = self.expression(depth + 1)
                self.take("]")
                node = Index(node, inner)
        return node

    def primary(self, depth: int) -> Node:
        if self.pos >= len(self.tokens):
            raise LocatedError("the expression ends too early; complete it.", self.column())
        kind, token, column = self.tokens[self.pos]
        self.pos += 1
        if kind == "str":
            return Lit(token[1:-1].replace("''", "'"))
        if kind == "num":
            return Lit(float(int(token, 16)) if token.startswith("0x") else float(token))
        if kind == "word":
            if token == "true":
                return Lit(True)
            if token == "false":
                return Lit(False)
            if token == "null":
                return Lit(None)
            if self.peek() == "(":
                self.pos += 1
                args: list[Node] = []
                if self.peek() != ")":
                    args.append(self.expression(depth + 1))
                    while self.peek() == ",":
                        self.pos += 1
                        args.append(self.expression(depth + 1))
                self.take(")")
                return Call(token.lower(), tuple(args), column)
            return Ref(token)
        if token == "(":
            inner = self.expression(depth + 1)
            self.take(")")
            return inner
        raise LocatedError(f"unexpected {token!r}; fix the expression.", column)


def path_of(node: Node) -> str | None:
    """``env.NAME`` for ``env.NAME`` / ``env['NAME']``: the dotted path a bind may name."""
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Prop):
        base = path_of(node.base)
        return None if base is None else f"{base}.{node.name}"
    if isinstance(node, Index) and isinstance(node.key, Lit) and isinstance(node.key.value, str):
        base = path_of(node.base)
        return None if base is None else f"{base}.{node.key.value}"
    return None


_BINDING = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4}
"""How tightly each binary operator binds (all bind to the left); ``!`` and the
postfix forms bind tighter than any."""


def source(node: Node) -> str:
    """The expression written back (for messages about unknown values), in parentheses
    where the tree needs them: parsing it gives the same tree."""
    if isinstance(node, Lit):
        value = node.value
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return to_text(value) if value is not None else "null"
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Prop):
        return f"{_operand(node.base, 9)}.{node.name}"
    if isinstance(node, Index):
        return f"{_operand(node.base, 9)}[{source(node.key)}]"
    if isinstance(node, Star):
        return f"{_operand(node.base, 9)}.*"
    if isinstance(node, Call):
        return f"{node.name}({', '.join(source(a) for a in node.args)})"
    if isinstance(node, Not):
        return f"!{_operand(node.operand, 8)}"
    binding = _BINDING[node.op]
    return f"{_operand(node.left, binding)} {node.op} {_operand(node.right, binding + 1)}"


def _operand(node: Node, binding: int) -> str:
    """``node`` written as an operand that must bind at least as tightly as ``binding``."""
    own = _BINDING[node.op] if isinstance(node, Bin) else 8 if isinstance(node, Not) else 9
    return source(node) if own >= binding else f"({source(node)})"


# --------------------------------------------------------------------------- evaluation


class Evaluator:
    """Evaluates syntax trees; context look-ups go to ``lookup(path)``.

    ``lookup`` receives each context access whose path is fixed text (``env.X``,
    ``needs.gate.outputs.flags``) and returns its value, or ``NotImplemented`` to
    have the evaluator descend into the value of the shorter path."""

    def __init__(self, lookup: Callable[[str], Value]) -> None:
        self.lookup = lookup

    def __call__(self, node: Node) -> Value:
        if isinstance(node, Lit):
            return node.value
        if isinstance(node, Ref | Prop | Index):
            path = path_of(node)
            if path is not None:
                found = self.lookup(path)
                if found is not NotImplemented:
                    return found
            if isinstance(node, Ref):
                return Unknown(source(node), f"{node.name} is not a context stagegate reads")
            base = self(node.base)
            key = node.name if isinstance(node, Prop) else self(node.key)
            return self._member(base, key, node)
        if isinstance(node, Star):
            base = self(node.base)
            if isinstance(base, dict):
                return list(base.values())
            if isinstance(base, list):
                return base
            return unknown_of(base, node)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, Not):
            value = self(node.operand)
            answer = truth(value)
            return Unknown(source(node), _why(value)) if answer is None else not answer
        op = node.op
        left = self(node.left)
        if op in ("&&", "||"):
            answer = truth(left)
            if answer is not None:
                if (op == "&&") != answer:
                    return left
                return self(node.right)
            right = self(node.right)
            other = truth(right)
            if op == "&&" and other is False:
                return right
            return Unknown(source(node), _why(left), truth=True if op == "||" and other else None)
        right = self(node.right)
        return _compare(op, left, right, node)

    def _member(self, base: Value, key: Value, node: Node) -> Value:
        if isinstance(base, Unknown):
            return Unknown(source(node), base.reason)
        if isinstance(key, Unknown | Sym):
            return unknown_of(key, node)
        if isinstance(base, dict):
            if isinstance(key, str):
                for name, value in base.items():
                    if name.lower() == key.lower():
                        return value
            return None
        if isinstance(base, list) and isinstance(key, float | int) and not isinstance(key, bool):
            index = int(key)
            return base[index] if 0 <= index < len(base) and index == key else None
        if isinstance(base, list) and isinstance(key, str):
            return [self._member(item, key, node) for item in base if isinstance(item, dict)]
        return None

    def _call(self, node: Call) -> Value:
        name, arg_nodes = node.name, node.args
        if name in ("success", "always"):
            return True
        if name in ("failure", "cancelled"):
            return False
        args = [self(a) for a in arg_nodes]
        if name == "startswith" and len(args) == 2 and isinstance(args[0], Sym):
            decided = _starts(args[0], args[1])
            if decided is not None:
                return decided
        if name == "contains" and len(args) == 2 and isinstance(args[0], Sym) and _holds(*args):
            return True
        for arg in args:
            if isinstance(arg, Unknown) or (isinstance(arg, Sym) and name != "format"):
                return unknown_of(arg, node)
        if name == "fromjson" and len(args) == 1:
            text = to_text(args[0])
            if len(text) > MAX_JSON:
                return Unknown(source(node), f"fromJSON of {len(text):,} characters")
            try:
                return _json_value(json.loads(text))
            except (ValueError, RecursionError):
                return Unknown(source(node), "fromJSON of text that is not JSON")
        if name == "tojson" and len(args) == 1:
            try:
                return json.dumps(args[0], indent=2)
            except (TypeError, ValueError):
                return Unknown(source(node), "toJSON of a value stagegate cannot write")
        if name in ("contains", "startswith", "endswith") and len(args) == 2:
            hay, needle = args
            if name == "contains" and isinstance(hay, list):
                return any(_equal(item, needle) is True for item in hay)
            if isinstance(hay, Sym):
                return unknown_of(hay, node)
            h, n = to_text(hay).lower(), to_text(needle).lower()
            return (
                n in h
                if name == "contains"
                else h.startswith(n)
                if name == "startswith"
                else h.endswith(n)
            )
        if name == "format" and args:
            return _format(args, node)
        if name == "join" and 1 <= len(args) <= 2:
            items = args[0] if isinstance(args[0], list) else [args[0]]
            sep = to_text(args[1]) if len(args) == 2 else ","
            pieces: list[Value] = []
            for i, item in enumerate(items):
                if i:
                    pieces.append(sep)
                pieces.append(item)
            return concat(pieces)
        return Unknown(source(node), f"{name}() is not computed by stagegate")


def _why(value: Value) -> str:
    found = unknowns(value)
    return found[0].reason if found else "a value stagegate cannot compute"


def unknown_of(value: Value, node: Node) -> Unknown:
    return Unknown(source(node), _why(value))


def _json_value(value: Any) -> Value:
    """JSON numbers as floats, as GitHub reads them."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return value


def _format(args: list[Value], node: Node) -> Value:
    template = args[0]
    if not isinstance(template, str):
        return unknown_of(template, node)
    pieces: list[Value] = []
    i = 0
    literal = ""
    while i < len(template):
        if template.startswith("{{", i):
            literal += "{"
            i += 2
        elif template.startswith("}}", i):
            literal += "}"
            i += 2
        elif template[i] == "{":
            end = template.find("}", i)
            index = template[i + 1 : end] if end > 0 else ""
            if not index.isdigit() or int(index) + 1 >= len(args):
                return Unknown(source(node), "format() with an invalid placeholder")
            pieces += [literal, args[int(index) + 1]]
            literal = ""
            i = end + 1
        else:
            literal += template[i]
            i += 1
    pieces.append(literal)
    return concat(pieces)


def _number(value: Value) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, float | int):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        try:
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def known_prefix(value: Sym) -> str:
    """The text a partly known value starts with (lower case, as comparisons read it)."""
    out = []
    for part in value.parts:
        if not isinstance(part, str):
            break
        out.append(part)
    return "".join(out).lower()


def _starts(hay: Sym, needle: Value) -> bool | None:
    """``startsWith`` of a partly known text: decided where its known start says it
    (``refs/tags/`` + anything starts with ``refs/tags/``, never with ``refs/heads/``)."""
    if isinstance(needle, Unknown | Sym):
        return None
    prefix, wanted = known_prefix(hay), to_text(needle).lower()
    if len(prefix) >= len(wanted):
        return prefix.startswith(wanted)
    return None if wanted.startswith(prefix) else False


def _holds(hay: Value, needle: Value) -> bool:
    """``contains`` of a partly known text that is decided true: one of its known pieces
    holds the needle (``refs/tags/`` + anything contains ``refs/tags/``). Not holding
    it decides nothing: the unknown pieces may."""
    if not isinstance(hay, Sym) or isinstance(needle, Unknown | Sym):
        return False
    wanted = to_text(needle).lower()
    return any(isinstance(part, str) and wanted in part.lower() for part in hay.parts)


def _equal(left: Value, right: Value) -> bool | None:
    for one, other in ((left, right), (right, left)):
        if isinstance(one, Sym) and isinstance(other, str):
            prefix = known_prefix(one)
            if not other.lower().startswith(prefix):
                return False  # its known start differs
    if isinstance(left, Unknown | Sym) or isinstance(right, Unknown | Sym):
        return None
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if type(left) is type(right) and isinstance(left, list | dict):
        return left is right
    if isinstance(left, list | dict) or isinstance(right, list | dict):
        return False
    if left is None and right is None:
        return True
    return _number(left) == _number(right)


def _compare(op: str, left: Value, right: Value, node: Node) -> Value:
    if op in ("==", "!=") and _equal(left, right) is False:
        return op == "!="
    if isinstance(left, Unknown | Sym) or isinstance(right, Unknown | Sym):
        return Unknown(source(node), _why(left if unknowns(left) else right))
    if op in ("==", "!="):
        same = _equal(left, right)
        return same if op == "==" else not same
    if isinstance(left, str) and isinstance(right, str):
        a: Any = left.lower()
        b: Any = right.lower()
    else:
        a, b = _number(left), _number(right)
        if math.isnan(a) or math.isnan(b):
            return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


# --------------------------------------------------------------------------- text


def split_text(text: str) -> list[tuple[str, int]]:
    """``text`` as literal and expression pieces: (piece, offset); expressions keep ``${{``.

    An expression ends at the first ``}}`` outside a string literal. An unclosed one
    raises LocatedError at its start."""
    return list(_split_text(text))


@functools.lru_cache(maxsize=16_384)
def _split_text(text: str) -> tuple[tuple[str, int], ...]:
    """``split_text``, once per text."""
    return tuple(_split(text))


def _split(text: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    pos = 0
    while True:
        start = text.find("${{", pos)
        if start < 0:
            if pos < len(text):
                out.append((text[pos:], pos))
            return out
        if start > pos:
            out.append((text[pos:start], pos))
        i = start + 3
        quoted = False
        while i < len(text):
            char = text[i]
            if char == "'":
                quoted = not quoted
            elif not quoted and text.startswith("}}", i):
                break
            i += 1
        else:
            raise LocatedError(
                "'${{' is not closed by '}}'; close the expression (or write the text without ${{).",
                start,
            )
        out.append((text[start : i + 2], start))
        pos = i + 2
