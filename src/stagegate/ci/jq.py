"""The common subset of jq (and of yq, which reads it alike), evaluated exactly.

Workflows compute matrices with ``yq -o json EXPR FILE`` and ``echo "$X" | jq -c 'EXPR'``
(cuda-python's compute-matrix jobs). This module parses such an ``EXPR`` into a small
immutable tree and evaluates it on JSON data: ``.``, paths (``.a.b``, ``.a["b-c"]``,
``.[0]``, ``.[]``), ``|``, literals, ``[...]``, ``{K: V}``, ``+``, ``==``/``!=``,
``and``/``or``/``not``, ``if .. then .. elif .. else .. end``, ``map``, ``select``,
``length``, ``any(GEN; COND)``, ``any``, ``empty``, ``error``/``halt_error``, ``inputs``
(the rest of jq's input, ``program``), ``split(STR)``, and ``sub(RE; STR)``/``test(RE)``
on regular expressions of the subset Python's ``re`` matches as jq's Oniguruma does
(``onig``). Anything
else is ``Unsupported`` (the piece named, with its column): never guessed. Never handed
to a shell or ``eval``; bounded in length, depth and work: the work of an evaluation
(each value made, the size of each value added, each node compared or written) is
charged to a budget (``ci.budget``, the reading's when a script runs jq).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from stagegate.ci.budget import Budget, OverBudget
from stagegate.records import record

MAX_TEXT = 10_000
"""Longest jq/yq expression read."""
MAX_DEPTH = 50
"""Deepest nesting of an expression."""
MAX_STEPS = 200_000
"""Units of work of an evaluation given no budget of its own (values made, and sizes)."""
MAX_NODES = 100_000
"""Most values (nested ones counted) one output may hold: what is written, compared."""


class Unsupported(Exception):
    """The expression uses a form this module does not evaluate (``piece`` at ``column``)."""

    def __init__(self, piece: str, column: int, why: str = "") -> None:
        self.piece = piece
        self.column = column
        self.why = why or f"{piece!r} is a jq form stagegate does not evaluate"
        super().__init__(self.why)


class Failed(Exception):
    """jq stops with an error (``error``, ``halt_error``, a type error): the command fails."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- the tree


@record
class Identity:
    pass


@record
class Literal:
    value: Any


@record
class Field:
    """``T.name`` / ``T["name"]`` / ``T[N]``: a key or index of each value ``target`` makes."""

    target: Node
    key: str | int


@record
class Each:
    """``T[]``: the elements of an array, the values of an object."""

    target: Node


@record
class Pipe:
    left: Node
    right: Node


@record
class Binary:
    """``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``+``, ``and``, ``or``."""

    op: str
    left: Node
    right: Node


@record
class If:
    branches: tuple[tuple[Node, Node], ...]
    otherwise: Node


@record
class Array:
    body: Node | None


@record
class Object:
    entries: tuple[tuple[str, Node], ...]


@record
class Call:
    name: str
    args: tuple[Node, ...]


Node = Identity | Literal | Field | Each | Pipe | Binary | If | Array | Object | Call

FUNCTIONS = {
    "map": 1,
    "select": 1,
    "length": 0,
    "not": 0,
    "empty": 0,
    "any": (0, 2),
    "error": (0, 1),
    "halt_error": (0, 1),
    "inputs": 0,
    "split": 1,
    "sub": 2,
    "test": 1,
}
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
KEYWORDS = frozenset({"if", "then", "elif", "else", "end", "and", "or", "true", "false", "null"})

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<number>-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)
    | (?P<field>\.[A-Za-z_][A-Za-z0-9_]*)
    | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|<|>|\.|\||\[|\]|\{|\}|\(|\)|:|;|,|\+)
    | (?P<bad>\S+)
    )""",
    re.X | re.S,
)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        assert match is not None  # every non-space run is some group
        if match.lastgroup is None:
            break  # trailing spaces
        kind = match.lastgroup
        piece = match.group(kind)
        column = match.start(kind)
        if kind == "bad":  # raised where the parser reaches it: the first form read is named
            bad = re.match(r"\S\w*", piece)
            piece = bad.group() if bad else piece
            out.append((kind, piece, column))
            pos = column + len(piece)
            continue
        out.append((kind, piece, column))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def at(self, piece: str) -> bool:
        token = self.peek()
        return token is not None and token[1] == piece and token[0] in ("op", "word")

    def take(self, piece: str) -> None:
        token = self.peek()
        if token is not None and token[0] == "bad":
            raise Unsupported(token[1], token[2])
        if token is None or token[1] != piece:
            found = token[1] if token else "the end"
            raise Unsupported(found, token[2] if token else len(self.text), f"expected {piece!r}")
        self.i += 1

    def parse(self) -> Node:
        if not self.tokens:
            raise Unsupported("", 0, "an empty expression")
        node = self.pipe()
        token = self.peek()
        if token is not None:
            raise Unsupported(token[1], token[2])
        return node

    def pipe(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            token = self.peek()
            raise Unsupported("(", token[2] if token else 0, f"nested deeper than {MAX_DEPTH}")
        left = self.disjunction()
        if self.at(","):
            token = self.peek()
            assert token is not None
            raise Unsupported(",", token[2], "',' (several outputs) is not evaluated")
        if self.at("|"):
            self.i += 1
            left = Pipe(left, self.pipe())
        self.depth -= 1
        return left

    def disjunction(self) -> Node:
        return self.chain("or", self.conjunction)

    def conjunction(self) -> Node:
        return self.chain("and", self.comparison)

    def chain(self, word: str, operand: Callable[[], Node]) -> Node:
        """``A word B word C``, left to right (``or``, ``and``, ``+``)."""
        left = operand()
        while self.at(word):
            self.i += 1
            left = Binary(word, left, operand())
        return left

    def comparison(self) -> Node:
        left = self.addition()
        if any(self.at(op) for op in COMPARISONS):
            op = self.tokens[self.i][1]
            self.i += 1
            left = Binary(op, left, self.addition())
            if any(self.at(op) for op in COMPARISONS):
                token = self.tokens[self.i]
                raise Unsupported(token[1], token[2], "comparisons do not chain in jq")
        return left

    def addition(self) -> Node:
        return self.chain("+", self.postfix)

    def postfix(self) -> Node:
        node = self.term()
        while True:
            token = self.peek()
            if token is None:
                return node
            kind, piece, _column = token
            if kind == "field":
                self.i += 1
                node = Field(node, piece[1:])
            elif piece == "." and kind == "op":
                nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
                if nxt is None or nxt[1] != "[":
                    raise Unsupported(".", token[2])
                self.i += 1
            elif piece == "[" and kind == "op":
                node = self.index(node)
            else:
                return node

    def index(self, target: Node) -> Node:
        bracket = self.tokens[self.i][2]
        self.take("[")
        token = self.peek()
        if token is not None and token[1] == "]":
            self.i += 1
            return Each(target)
        if token is not None and token[0] in ("string", "number"):
            nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
            if nxt is not None and nxt[1] == "]":
                self.i += 2
                if token[0] == "string":
                    return Field(target, _string(token[1], token[2]))
                if "." in token[1] or "e" in token[1].lower():
                    raise Unsupported(token[1], token[2], "an index that is not a whole number")
                return Field(target, int(token[1]))
        raise Unsupported("[", bracket, "a computed index or slice")

    def term(self) -> Node:
        token = self.peek()
        if token is None:
            raise Unsupported("", len(self.text), "the expression ends too early")
        kind, piece, column = token
        if kind == "string":
            self.i += 1
            if "\\(" in piece:
                raise Unsupported(piece, column, "string interpolation \\( ) is not evaluated")
            return Literal(_string(piece, column))
        if kind == "number":
            self.i += 1
            number = float(piece)
            return Literal(int(number) if number.is_integer() and "." not in piece else number)
        if kind == "field":
            self.i += 1
            return Field(Identity(), piece[1:])
        if piece == "." and kind == "op":
            self.i += 1
            nxt = self.peek()
            if nxt is not None and nxt[1] == "[" and nxt[0] == "op":
                return self.index(Identity())
            return Identity()
        if piece == "(":
            self.i += 1
            node = self.pipe()
            self.take(")")
            return node
        if piece == "[":
            self.i += 1
            if self.at("]"):
                self.i += 1
                return Array(None)
            body = self.pipe()
            self.take("]")
            return Array(body)
        if piece == "{":
            return self.object()
        if kind == "word":
            if piece in ("true", "false", "null"):
                self.i += 1
                return Literal({"true": True, "false": False, "null": None}[piece])
            if piece == "if":
                return self.conditional()
            if piece in FUNCTIONS:
                return self.call(piece, column)
        raise Unsupported(piece, column)

    def conditional(self) -> Node:
        self.take("if")
        branches: list[tuple[Node, Node]] = []
        while True:
            condition = self.pipe()
            self.take("then")
            branches.append((condition, self.pipe()))
            if self.at("elif"):
                self.i += 1
                continue
            break
        otherwise: Node = Identity()
        if self.at("else"):
            self.i += 1
            otherwise = self.pipe()
        self.take("end")
        return If(tuple(branches), otherwise)

    def call(self, name: str, column: int) -> Node:
        self.i += 1
        args: list[Node] = []
        if self.at("("):
            self.i += 1
            args.append(self.pipe())
            while self.at(";"):
                self.i += 1
                args.append(self.pipe())
            self.take(")")
        arity = FUNCTIONS[name]
        allowed = arity if isinstance(arity, tuple) else (arity,)
        if len(args) not in allowed:
            raise Unsupported(f"{name}/{len(args)}", column, f"{name} with {len(args)} arguments")
        return Call(name, tuple(args))

    def object(self) -> Node:
        self.take("{")
        entries: list[tuple[str, Node]] = []
        while not self.at("}"):
            token = self.peek()
            if token is None:
                raise Unsupported("{", len(self.text), "an object that is not closed")
            kind, piece, column = token
            if kind == "word" and piece not in KEYWORDS:
                key = piece
            elif kind == "string":
                key = _string(piece, column)
            else:
                raise Unsupported(piece, column, "a computed or $variable object key")
            self.i += 1
            if not self.at(":"):
                raise Unsupported(piece, column, "an object key without ': value'")
            self.i += 1
            value = self.postfix()
            while self.at("|"):
                self.i += 1
                value = Pipe(value, self.postfix())
            entries.append((key, value))
            if self.at(","):
                self.i += 1
            elif not self.at("}"):
                token = self.peek()
                raise Unsupported(token[1] if token else "", token[2] if token else 0)
        self.take("}")
        return Object(tuple(entries))


def _string(piece: str, column: int) -> str:
    try:
        value = json.loads(piece, strict=False)
    except ValueError:
        raise Unsupported(piece, column, "a string with an escape jq and JSON read apart") from None
    assert isinstance(value, str)
    return value


def parse(text: str) -> Node:
    """The tree of a jq/yq expression; Unsupported for a form this module does not read,
    or for a tree deeper than MAX_DEPTH (chains of ``+``, ``.a.b``, ``elif`` count:
    the evaluator walks it by recursion)."""
    if len(text) > MAX_TEXT:
        raise Unsupported(text[:40] + "...", 0, f"an expression longer than {MAX_TEXT:,}")
    node = _Parser(text).parse()
    if _depth(node) > MAX_DEPTH:
        raise Unsupported("", 0, f"an expression nested deeper than {MAX_DEPTH}")
    return node


def _depth(root: Node) -> int:
    """How deep the tree is, found without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        children: list[Any] = [getattr(node, n, None) for n in ("target", "left", "right", "body")]
        children += list(getattr(node, "args", ()))
        children += [v for _k, v in getattr(node, "entries", ())]
        children += [c for pair in getattr(node, "branches", ()) for c in pair]
        children.append(getattr(node, "otherwise", None))
        stack += [(c, depth + 1) for c in children if c is not None]
    return deepest


# --------------------------------------------------------------------------- evaluation


def _kind(value: Any) -> int:
    """jq's order of types: null, false, true, numbers, strings, arrays, objects."""
    if value is None:
        return 0
    if value is False:
        return 1
    if value is True:
        return 2
    if isinstance(value, int | float):
        return 3
    if isinstance(value, str):
        return 4
    return 5 if isinstance(value, list) else 6


def _free(units: int) -> None:
    """The charge of a comparison outside an evaluation: none."""


def equal(a: Any, b: Any, charge: Callable[[int], None] = _free) -> bool:
    """jq's ``==``: by type, then by value (1 == 1.0; true is not 1)."""
    charge(1)
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y, charge) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k], charge) for k in a)
    return bool(a == b)


def compare(a: Any, b: Any, charge: Callable[[int], None] = _free) -> int:
    """jq's order of two values: -1, 0 or 1 (by type, then value; arrays item by item;
    objects by their sorted keys, then their values key by key)."""
    charge(1)
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return -1 if ka < kb else 1
    if isinstance(a, list):
        for x, y in zip(a, b, strict=False):
            found = compare(x, y, charge)
            if found:
                return found
        return (len(a) > len(b)) - (len(a) < len(b))
    if isinstance(a, dict):
        keys_a, keys_b = sorted(a), sorted(b)
        found = compare(keys_a, keys_b, charge)
        if found:
            return found
        for key in keys_a:
            found = compare(a[key], b[key], charge)
            if found:
                return found
        return 0
    if ka <= 2:
        return 0
    return int(a > b) - int(a < b)


def truthy(value: Any) -> bool:
    return value is not None and value is not False


def _name(value: Any) -> str:
    return ["null", "boolean", "boolean", "number", "string", "array", "object"][_kind(value)]


class _Evaluator:
    def __init__(self, charge: Callable[[int], None], stream: Iterator[Any] | None = None) -> None:
        self.charge = charge
        self.stream: Iterator[Any] = stream if stream is not None else iter(())
        """The inputs not read yet (``inputs`` takes them all)."""

    def count(self) -> None:
        self.charge(1)

    def run(self, node: Node, value: Any) -> Iterator[Any]:
        self.count()
        if isinstance(node, Identity):
            yield value
        elif isinstance(node, Literal):
            yield node.value
        elif isinstance(node, Field):
            for target in self.run(node.target, value):
                yield _index(target, node.key)
        elif isinstance(node, Each):
            for target in self.run(node.target, value):
                if isinstance(target, list):
                    yield from target
                elif isinstance(target, dict):
                    yield from target.values()
                else:
                    raise Failed(f"Cannot iterate over {_name(target)}")
        elif isinstance(node, Pipe):
            for middle in self.run(node.left, value):
                yield from self.run(node.right, middle)
        elif isinstance(node, Binary):
            yield from self.binary(node, value)
        elif isinstance(node, If):
            yield from self.conditional(node.branches, node.otherwise, value)
        elif isinstance(node, Array):
            made = [] if node.body is None else list(self.run(node.body, value))
            self.charge(len(made))
            yield made
        elif isinstance(node, Object):
            yield from self.object(node.entries, value)
        else:
            yield from self.call(node, value)

    def binary(self, node: Binary, value: Any) -> Iterator[Any]:
        if node.op in ("and", "or"):
            # jq: for each left output, the right only where the left does not decide
            for left in self.run(node.left, value):
                if truthy(left) == (node.op == "or"):
                    yield node.op == "or"
                    continue
                for right in self.run(node.right, value):
                    yield truthy(right)
            return
        # jq evaluates the right operand in the outer loop
        for right in self.run(node.right, value):
            for left in self.run(node.left, value):
                if node.op == "+":
                    added = _add(left, right)
                    self.charge(_size(added))
                    yield added
                elif node.op in ("==", "!="):
                    yield equal(left, right, self.charge) == (node.op == "==")
                else:
                    order = compare(left, right, self.charge)
                    yield {"<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0}[
                        node.op
                    ]

    def conditional(
        self, branches: tuple[tuple[Node, Node], ...], otherwise: Node, value: Any
    ) -> Iterator[Any]:
        if not branches:
            yield from self.run(otherwise, value)
            return
        condition, then = branches[0]
        for decided in self.run(condition, value):
            if truthy(decided):
                yield from self.run(then, value)
            else:
                yield from self.conditional(branches[1:], otherwise, value)

    def object(self, entries: tuple[tuple[str, Node], ...], value: Any) -> Iterator[Any]:
        """Each object the entries make, the first key's values outermost (built
        entry by entry, not by recursion: an object may have many keys)."""
        partial: list[dict[str, Any]] = [{}]
        for key, node in entries:
            grown: list[dict[str, Any]] = []
            for made in partial:
                for item in self.run(node, value):
                    self.charge(len(made) + 1)
                    grown.append({**made, key: item})
            partial = grown
        yield from partial

    def call(self, node: Call, value: Any) -> Iterator[Any]:
        name, args = node.name, node.args
        if name == "map":
            if not isinstance(value, list | dict):
                raise Failed(f"Cannot iterate over {_name(value)}")
            items = value if isinstance(value, list) else list(value.values())
            made = [out for item in items for out in self.run(args[0], item)]
            self.charge(len(made))
            yield made
        elif name == "select":
            for keep in self.run(args[0], value):
                if truthy(keep):
                    yield value
        elif name == "length":
            yield _length(value)
        elif name == "not":
            yield not truthy(value)
        elif name == "empty":
            return
        elif name == "inputs":
            for item in self.stream:
                self.count()
                yield item
        elif name in ("split", "sub", "test"):
            yield from self.text(name, args, value)
        elif name == "any":
            if not args:
                if not isinstance(value, list | dict):
                    raise Failed(f"Cannot iterate over {_name(value)}")
                items = value if isinstance(value, list) else list(value.values())
                yield any(truthy(v) for v in items)
                return
            found = False
            for item in self.run(args[0], value):
                if any(truthy(c) for c in self.run(args[1], item)):
                    found = True
                    break
            yield found
        else:  # error, halt_error
            # error(M) stops with M; error and halt_error(CODE) with their input
            messages = self.run(args[0], value) if args and name == "error" else iter([value])
            for message in messages:
                if isinstance(message, str):
                    raise Failed(message.rstrip("\n") if name == "halt_error" else message)
                text = _compact(message)
                raise Failed(text if name == "halt_error" else f"{text} (not a string)")

    def one_string(self, node: Node, value: Any, what: str, failure: str = "") -> str:
        """The one string an argument makes (several, or none: not evaluated here);
        ``failure``: jq's message where it is not a string (``{}``: what it is)."""
        made = list(self.run(node, value))
        if len(made) != 1:
            raise Unsupported("", 0, f"{what} that makes {len(made)} values")
        if not isinstance(made[0], str) and failure:
            raise Failed(failure.format(_name(made[0])))
        if not isinstance(made[0], str):
            raise Failed(
                f"{_name(made[0])} ({_compact(made[0])}) cannot be matched, as it is not a string"
            )
        return made[0]

    def text(self, name: str, args: tuple[Node, ...], value: Any) -> Iterator[Any]:
        """``split(STR)``, ``test(RE)``, ``sub(RE; STR)`` on a string."""
        if not isinstance(value, str):
            if name == "split":
                raise Failed("split input and separator must be strings")
            raise Failed(
                f"{_name(value)} ({_compact(value)}) cannot be matched, as it is not a string"
            )
        if name == "split":
            separator = self.one_string(
                args[0], value, "a separator", "split input and separator must be strings"
            )
            if not separator:
                raise Unsupported(
                    "split", 0, "split on an empty string, which jq versions split apart"
                )
            self.charge(len(value) // 8 + 1)
            yield value.split(separator) if value else []
            return
        written = self.one_string(
            args[0], value, "a regular expression", "{} not a string or array"
        )
        pattern = onig(written, value)
        self.charge(len(value) // 8 + 1)
        found = pattern.search(value)
        if name == "sub" and found is not None and found.start() == found.end():
            raise Unsupported(
                name,
                0,
                "a regular expression matching the empty string, which jq versions replace apart",
            )
        if name == "test":
            yield found is not None
            return
        if found is None:
            yield value
            return
        new = self.one_string(args[1], {}, "a replacement")
        yield value[: found.start()] + new + value[found.end() :]


_ONIG = re.compile(
    r"""\\[.\-\\/^$*+?()\[\]{}|]|\[\^?(?:\\[\]\\\-^]|[^\]\\\[])(?:[^\]\\\[]|\\[\]\\\-^])*\]|\(\?:|\((?!\?)|[)|.^$]|[*+?]\??|\{\d+(?:,\d*)?\}\??|[^\\\[\](){}*+?.^$|]"""
)
"""The pieces of a regular expression read alike by jq's Oniguruma and Python's ``re``:
a character or an escaped metacharacter, a bracket expression of characters and ranges
(no ``[``, ``&&`` or ``[:class:]`` in it), ``(``, ``(?:``, ``)``, ``|``, ``.``, ``^``, ``$``, and the
quantifiers (greedy or lazy)."""


def onig(text: str, subject: str) -> re.Pattern[str]:
    """``text`` compiled for matching ``subject`` as jq does; Unsupported for a piece
    outside ``_ONIG`` (``\\d``, ``\\w``, named groups, look-arounds, ``[[:alpha:]]``), or for
    ``^``, ``$`` or ``.`` on a subject holding a line break (Oniguruma's line rules)."""
    pos = 0
    while pos < len(text):
        piece = _ONIG.match(text, pos)
        if piece is None or (piece.group().startswith("[") and "&&" in piece.group()):
            raise Unsupported(
                text[pos : pos + 10],
                pos,
                f"the regular expression {text!r}, which stagegate does not match",
            )
        pos = piece.end()
    if "\n" in subject and re.search(r"(?<!\\)[.^$]", text):
        raise Unsupported(
            text, 0, "^, $ or . on text with line breaks (Oniguruma reads lines apart)"
        )
    try:
        return re.compile(text)
    except re.error as exc:
        raise Failed(f"{text} is not a valid regex: {exc.msg} (jq stops)") from None


def _index(target: Any, key: str | int) -> Any:
    if target is None:
        return None
    if isinstance(key, str):
        if isinstance(target, dict):
            return target.get(key)
        raise Failed(f'Cannot index {_name(target)} with "{key}"')
    if isinstance(target, list):
        if -len(target) <= key < len(target):
            return target[key]
        return None
    raise Failed(f"Cannot index {_name(target)} with number")


def _add(left: Any, right: Any) -> Any:
    if left is None:
        return right
    if right is None:
        return left
    if _kind(left) == _kind(right) == 3:
        return left + right
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, list) and isinstance(right, list):
        return left + right
    if isinstance(left, dict) and isinstance(right, dict):
        return {**left, **right}
    raise Failed(f"{_name(left)} and {_name(right)} cannot be added")


def _length(value: Any) -> Any:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise Failed("boolean has no length")
    if isinstance(value, int | float):
        return abs(value)
    return len(value)


def _size(value: Any) -> int:
    """The work of making ``value`` by adding: its length (a string's in eighths)."""
    if isinstance(value, str):
        return len(value) // 8 + 1
    if isinstance(value, list | dict):
        return len(value) + 1
    return 1


def evaluate(node: Node, value: Any, charge: Callable[[int], None] | None = None) -> list[Any]:
    """Every output of ``node`` on ``value``; Failed where jq stops with an error.
    ``charge`` takes the work from the caller's budget (which raises OverBudget);
    without one, the evaluation has MAX_STEPS units and is Unsupported past them."""
    return program(node, [value], charge=charge)


def program(
    node: Node,
    inputs: list[Any],
    *,
    null_input: bool = False,
    charge: Callable[[int], None] | None = None,
) -> list[Any]:
    """Every output of jq's run of ``node`` over ``inputs`` (after ``-R``/``-s`` made
    them): on each input in turn, ``inputs`` taking the ones not read yet; with
    ``null_input`` (``-n``) once, on null. Failed, Unsupported as ``evaluate``."""
    own = (
        None
        if charge is not None
        else Budget(MAX_STEPS, f"an evaluation of more than {MAX_STEPS:,} values")
    )
    pay = charge if charge is not None else own.charge  # type: ignore[union-attr]
    stream = iter(inputs)
    evaluator = _Evaluator(pay, stream)
    out: list[Any] = []
    try:
        for value in [None] if null_input else stream:
            out += [_bounded(made, pay) for made in evaluator.run(node, value)]
    except OverBudget as exc:
        if charge is not None:
            raise
        raise Unsupported("", 0, exc.why) from None
    return out


def _bounded(value: Any, charge: Callable[[int], None]) -> Any:
    """``value``, once its nodes (shared ones counted each time they are reached) are
    counted: at most MAX_NODES, none deeper than MAX_DEPTH arrays and objects beyond
    what JSON text of MAX_JSON characters holds; Unsupported past them."""
    stack = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise Unsupported("", 0, f"an output of more than {MAX_NODES:,} values")
        if depth > 500:
            raise Unsupported("", 0, "an output nested more than 500 deep")
        if isinstance(item, list):
            stack += [(x, depth + 1) for x in item]
        elif isinstance(item, dict):
            stack += [(x, depth + 1) for x in item.values()]
    charge(seen // 16)
    return value


# --------------------------------------------------------------------------- JSON text


class Inexact(Exception):
    """A value jq versions write differently (a fraction, an infinity)."""


def _check_numbers(value: Any) -> None:
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise Inexact(repr(value))
    if isinstance(value, list):
        for item in value:
            _check_numbers(item)
    elif isinstance(value, dict):
        for item in value.values():
            _check_numbers(item)


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    return value


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write(value: Any, *, compact: bool, raw: bool = False) -> str:
    """One output as jq writes it (``-c``: on one line; else indented by 2; ``-r``: a
    string without quotes); Inexact for a number that is not whole."""
    if raw and isinstance(value, str):
        return value
    _check_numbers(value)
    value = _whole(value)
    if compact:
        return _compact(value)
    return json.dumps(value, ensure_ascii=False, indent=2)


MAX_JSON_DEPTH = 100
"""Deepest nesting of the JSON jq reads (decoding, comparing and writing it recurse)."""


def _nesting(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (strings skipped)."""
    depth = deepest = 0
    inside = escaped = False
    for char in text:
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def read_json(text: str) -> list[Any]:
    """The JSON values of a text, one after another (jq's input); ValueError if not JSON,
    Unsupported if nested deeper than MAX_JSON_DEPTH."""
    if _nesting(text) > MAX_JSON_DEPTH:
        raise Unsupported("", 0, f"JSON nested deeper than {MAX_JSON_DEPTH}")
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            return out
        value, pos = decoder.raw_decode(text, pos)
        out.append(value)
