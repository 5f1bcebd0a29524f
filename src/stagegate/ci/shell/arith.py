"""Shell arithmetic (``$(( ))``, ``(( ))``, ``for (( ; ; ))``, ``${X:off:len}``) on
64-bit integers, as bash computes it: every C operator bash has, assignments and
increments (through ``Names.write``), decimal, octal (``010``), hexadecimal (``0x1f``)
and ``BASE#DIGITS`` numbers. A variable's value must be a number itself (bash would
read other text as an expression of its own): anything else is ``Failed``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MAX_TEXT = 1_000
"""Longest arithmetic expression read (characters)."""
MAX_NESTING = 40
"""Deepest nesting of parentheses and operators."""

_TOKEN = re.compile(
    r"\s*(?:(?P<num>[0-9][0-9A-Za-z_@#]*)|(?P<name>\$?\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$[0-9#])"
    r"|(?P<op>\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:(),]))"
)
_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})
_BINARY: tuple[tuple[str, ...], ...] = (
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<=", ">=", "<", ">"),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)


class Failed(Exception):
    """Why the expression is not computed (bash fails on it, or stagegate does not read it)."""


Read = Callable[[str], str]
"""A variable's text ("" where it is unset); raises Failed where it is not known."""
Write = Callable[[str, int], None]


def wrap(value: int) -> int:
    """``value`` as a signed 64-bit integer, as bash's arithmetic wraps."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def number(text: str) -> int:
    """A number as bash writes one: ``N``, ``0N`` (octal), ``0xN``, ``BASE#N``."""
    if "#" in text:
        base_text, _, digits = text.partition("#")
        if not base_text.isdigit() or not 2 <= int(base_text) <= 64 or not digits:
            raise Failed(f"{text} is not a number bash reads")
        base = int(base_text)
        if base > 36 or not all(c.isalnum() for c in digits):
            raise Failed(f"{text}: a base stagegate does not read")
        try:
            return wrap(int(digits, base))
        except ValueError:
            raise Failed(f"{text}: a digit too great for the base") from None
    try:
        if text[:2] in ("0x", "0X"):
            return wrap(int(text[2:], 16))
        if len(text) > 1 and text.startswith("0"):
            return wrap(int(text[1:], 8))
        return wrap(int(text, 10))
    except ValueError:
        raise Failed(f"{text} is not a number bash reads (octal digits are 0 to 7)") from None


_VALUE = re.compile(r"\s*([-+]?)\s*([0-9][0-9A-Za-z#]*)\s*")


def value_of(name: str, text: str) -> int:
    """The number a variable's text is: "" is 0; a number, possibly signed."""
    if not text.strip():
        return 0
    match = _VALUE.fullmatch(text)
    if match is None:
        raise Failed(f"{name} is {text!r}, not a decimal integer")
    found = number(match.group(2))
    return wrap(-found) if match.group(1) == "-" else found


Tree = tuple[Any, ...]
"""A parsed expression: ("n", int), ("v", name), ("=", name, op, tree), (op, tree...),
("chain", tree, ((op, tree), ...)) for operators of one level, left to right."""


class _Parser:
    """Recursive descent to a tuple tree: ("n", int), ("v", name), (op, operands...)."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def expect(self, op: str) -> None:
        if self.peek() != op:
            raise Failed(f"expected {op!r}")
        self.i += 1

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Failed(f"arithmetic nested more than {MAX_NESTING} deep")

    def comma(self) -> Tree:
        node = self.assignment()
        rest: list[tuple[str, Tree]] = []
        while self.peek() == ",":
            self.i += 1
            rest.append((",", self.assignment()))
        return ("chain", node, tuple(rest)) if rest else node

    def assignment(self) -> Tree:
        self.nest()
        try:
            start = self.i
            if self.i + 1 < len(self.tokens) and self.tokens[self.i][0] == "name":
                op = self.tokens[self.i + 1][1]
                if op in _ASSIGN:
                    name = _name(self.take()[1])
                    self.i += 1
                    return ("=", name, op, self.assignment())
            self.i = start
            return self.ternary()
        finally:
            self.depth -= 1

    def ternary(self) -> Tree:
        condition = self.binary(0)
        if self.peek() != "?":
            return condition
        self.i += 1
        self.nest()
        try:
            then = self.assignment()
            self.expect(":")
            otherwise = self.assignment()
        finally:
            self.depth -= 1
        return ("?", condition, then, otherwise)

    def binary(self, level: int) -> Tree:
        if level == len(_BINARY):
            return self.power()
        node = self.binary(level + 1)
        rest: list[tuple[str, Tree]] = []
        while self.peek() in _BINARY[level]:
            op = self.take()[1]
            rest.append((op, self.binary(level + 1)))
        return ("chain", node, tuple(rest)) if rest else node

    def power(self) -> Tree:
        base = self.unary()
        if self.peek() == "**":
            self.i += 1
            self.nest()
            try:
                return ("**", base, self.power())
            finally:
                self.depth -= 1
        return base

    def unary(self) -> Tree:
        op = self.peek()
        if op in ("+", "-", "!", "~"):
            self.i += 1
            self.nest()
            try:
                return ("u" + op, self.unary())
            finally:
                self.depth -= 1
        if op in ("++", "--"):
            self.i += 1
            if self.i >= len(self.tokens) or self.tokens[self.i][0] != "name":
                raise Failed(f"{op} without a variable")
            return ("pre" + op, _name(self.take()[1]))
        return self.postfix()

    def postfix(self) -> Tree:
        if self.i >= len(self.tokens):
            raise Failed("the expression ends too early")
        kind, text = self.take()
        if kind == "num":
            return ("n", number(text))
        if kind == "name":
            name = _name(text)
            if self.peek() in ("++", "--"):
                return ("post" + self.take()[1], name)
            return ("v", name)
        if text == "(":
            self.nest()
            try:
                node = self.comma()
            finally:
                self.depth -= 1
            self.expect(")")
            return node
        raise Failed(f"{text!r} where a value belongs")


def _name(token: str) -> str:
    return token.lstrip("$").strip("{}")


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise Failed(f"{text[pos:].strip()[:20]!r} is arithmetic stagegate does not read")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


class Evaluator:
    """The value of parsed arithmetic, reading and writing variables through callbacks."""

    def __init__(self, read: Read, write: Write) -> None:
        self.read = read
        self.write = write

    def variable(self, name: str) -> int:
        return value_of(name, self.read(name))

    def run(self, node: Tree) -> int:
        op = node[0]
        if op == "n":
            return int(node[1])
        if op == "v":
            return self.variable(str(node[1]))
        if op == "=":
            return self.assign(str(node[1]), str(node[2]), node[3])
        if op in ("pre++", "pre--", "post++", "post--"):
            name = str(node[1])
            old = self.variable(name)
            new = wrap(old + (1 if op.endswith("++") else -1))
            self.write(name, new)
            return new if op.startswith("pre") else old
        if op in ("u+", "u-", "u!", "u~"):
            value = self.run(node[1])
            return {"u+": value, "u-": wrap(-value), "u!": int(not value), "u~": wrap(~value)}[op]
        if op == "?":
            chosen = node[2] if self.run(node[1]) else node[3]
            return self.run(chosen)
        if op == "**":
            return apply("**", self.run(node[1]), self.run(node[2]))
        assert op == "chain"
        value = self.run(node[1])
        for step, operand in node[2]:
            if step in ("&&", "||"):  # the right operand only where the left does not decide
                value = (
                    int(step == "||")
                    if bool(value) == (step == "||")
                    else int(bool(self.run(operand)))
                )
            else:
                value = apply(step, value, self.run(operand))
        return value

    def assign(self, name: str, op: str, node: Tree) -> int:
        value = self.run(node)
        if op != "=":
            value = apply(op[:-1], self.variable(name), value)
        self.write(name, value)
        return value


def apply(op: str, left: int, right: int) -> int:
    """A binary operator on two integers, with bash's truncating division."""
    if op == ",":
        return right
    if op in ("/", "%"):
        if right == 0:
            raise Failed("a division by zero")
        quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
        return wrap(quotient if op == "/" else left - right * quotient)
    if op == "**":
        if right < 0:
            raise Failed("a negative exponent")
        if right > 64 and abs(left) > 1:
            return wrap(pow(left, right, 1 << 64))
        return wrap(left**right)
    if op in ("<<", ">>"):
        shift = right & 63
        return wrap(left << shift) if op == "<<" else left >> shift
    table: dict[str, Callable[[int, int], int]] = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "&": lambda a, b: a & b,
        "|": lambda a, b: a | b,
        "^": lambda a, b: a ^ b,
        "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b),
        "<": lambda a, b: int(a < b),
        "<=": lambda a, b: int(a <= b),
        ">": lambda a, b: int(a > b),
        ">=": lambda a, b: int(a >= b),
    }
    return wrap(table[op](left, right))


def evaluate(text: str, read: Read, write: Write) -> int:
    """The value of the arithmetic ``text``; Failed where bash fails or stagegate does
    not read it. An empty expression is 0."""
    if len(text) > MAX_TEXT:
        raise Failed(f"an expression longer than {MAX_TEXT:,} characters")
    parser = _Parser(text)
    if not parser.tokens:
        return 0
    node = parser.comma()
    if parser.i != len(parser.tokens):
        raise Failed(f"{parser.tokens[parser.i][1]!r} is arithmetic stagegate does not read")
    return Evaluator(read, write).run(node)
