"""Words expanded as bash expands them: parameters and their operators (``${X%%.*}``,
``${X//a/b}``, ``${X:-d}``, ``${X:off:len}``, ``${X^^}``...), command substitutions and
arithmetic (through the ``Context``), brace expansion, field splitting of unquoted
expansions, ``"$@"``. Unknown pieces stay unknown values with their reason; a value
longer than ``budget.MAX_VALUE`` is not built (``Context.too_long``).
"""

from __future__ import annotations

import itertools
from typing import Protocol

from stagegate.ci.budget import MAX_VALUE
from stagegate.ci.shell import arith, patterns
from stagegate.ci.shell.nodes import (
    Arith,
    Element,
    Expand,
    Gh,
    Lit,
    Opaque,
    Param,
    Part,
    Subst,
    Word,
)
from stagegate.ci.shell.values import (
    ON_WORKSPACE,
    Array,
    Bounded,
    Failed,
    Glob,
    known,
    opaque,
    result,
    size,
)
from stagegate.model.ghexpr import Unknown, Value, concat

IFS = " \t\n"
MAX_BRACES = 1_000
"""Most words one brace expansion makes."""


class Context(Protocol):
    """What expanding a word asks of the reading it is in."""

    def lookup(self, name: str) -> Value:
        """A variable's or parameter's value (unknown where not known)."""

    def is_set(self, name: str) -> bool | None:
        """Whether it is set (None: stagegate cannot tell)."""

    def in_repository(self, path: str) -> bool:
        """Whether the repository holds the file ``path`` (from its top, as yq reads it)."""

    def assign(self, name: str, value: Value) -> None: ...

    def array(self, name: str) -> Value:
        """The variable as an array: an ``Array``, or its value as a scalar (element 0),
        an unknown value (how many elements it has is not known too), or None (unset)."""

    def arguments(self) -> tuple[Value, ...] | None:
        """The positional parameters (None outside a script a ``run:`` calls)."""

    def substitute(self, part: Subst) -> Value:
        """The output of ``$(...)``."""

    def gh(self, index: int) -> Value:
        """The value of the script's ``index``-th ``${{ }}`` kept out of its text."""

    def charge(self, units: int) -> None: ...

    def where(self) -> str:
        """``FILE:LINE`` of the command being read (for reasons)."""

    def too_long(self, written: str) -> Unknown:
        """A value over MAX_VALUE, reported at its line."""


class Fails(Exception):
    """The expansion stops the script with an error (``${X:?message}`` of an unset X)."""


# --------------------------------------------------------------------------- one value


def expand(word: Word, ctx: Context) -> Value:
    """The word's value as one string (no splitting, no file names): assignments,
    redirection targets, ``case`` and ``[[ ]]`` operands, here-documents."""
    if len(word.parts) == 1:
        value = piece(word.parts[0], ctx)
        return value if _size(value) <= MAX_VALUE else ctx.too_long(word.source)
    values = [piece(p, ctx) for p in word.parts]
    if sum(_size(v) for v in values) > MAX_VALUE:
        return ctx.too_long(word.source)
    return concat(values)


def _size(value: Value) -> int:
    """A value's size against MAX_VALUE: what jq or yq printed is bounded by its own
    limit (ghexpr.MAX_JSON, what ``fromJSON`` reads), not this one."""
    return 0 if isinstance(value, Bounded) else size(value)


def piece(part: Part, ctx: Context) -> Value:
    """One part's value (``$@`` and ``$*`` joined with spaces)."""
    ctx.charge(1)
    if isinstance(part, Lit):
        return part.text
    if isinstance(part, Param):
        if part.name in ("@", "*"):
            given = ctx.arguments()
            if given is None:
                return ctx.lookup(part.name)
            return concat(_joined(given, " "))
        return ctx.lookup(part.name)
    if isinstance(part, Gh):
        return ctx.gh(part.index)
    if isinstance(part, Expand):
        return parameter(part, ctx)
    if isinstance(part, Subst):
        return ctx.substitute(part)
    if isinstance(part, Arith):
        return arithmetic(part.text, part.source, ctx)
    if isinstance(part, Element):
        return element(part, ctx)
    assert isinstance(part, Opaque)
    return Unknown(part.source, part.reason)


def _joined(values: tuple[Value, ...], sep: str) -> list[Value]:
    out: list[Value] = []
    for i, value in enumerate(values):
        if i:
            out.append(sep)
        out.append(value)
    return out


def text_of(word: Word, ctx: Context) -> str | None:
    """The word's value where it is known text."""
    value = expand(word, ctx)
    return str(value) if isinstance(value, str) else None


# --------------------------------------------------------------------------- fields


def fields(word: Word, ctx: Context) -> list[Value]:
    """The words bash makes of ``word``: brace expansion, then each expansion, then
    unquoted known text split at blanks; a word with unquoted ``*``, ``?`` or ``[`` is
    a ``Glob`` (the file names it stands for are not known)."""
    parts = word.parts
    if len(parts) == 1 and type(parts[0]) is Lit:  # the common case: one piece of text
        lit = parts[0]
        ctx.charge(1)
        if lit.quoted:
            return [lit.text]
        if not any(c in lit.text for c in "{*?["):
            return [lit.text] if lit.text else []
    elif all(
        getattr(p, "quoted", False)
        and getattr(p, "name", "") != "@"
        and (type(p) is not Element or p.index != "@" or p.length)
        for p in parts
    ):
        return [expand(word, ctx)]  # quoted (not "$@"): one field, as it is
    variants = braces(parts)
    if variants is None:
        return [
            Unknown(
                word.source, f"{word.source}: a brace expansion of more than {MAX_BRACES:,} words"
            )
        ]
    out: list[Value] = []
    for parts in variants:
        out += _split(parts, word.source, ctx)
    return out


class _Field:
    __slots__ = ("glob", "pieces", "there")

    def __init__(self) -> None:
        self.pieces: list[Value] = []
        self.there = False
        self.glob = False


def _split(parts: tuple[Part, ...], source: str, ctx: Context) -> list[Value]:
    done: list[_Field] = []
    current = _Field()

    def close() -> None:
        nonlocal current
        if current.there:
            done.append(current)
        current = _Field()

    def add(value: Value, quoted: bool) -> None:
        if quoted or not isinstance(value, str):
            current.pieces.append(value)
            current.there = current.there or quoted or value != ""
            return
        text = str(value)
        if not any(c in IFS for c in text):  # one field: the value itself (a marker, a tag)
            current.pieces.append(value)
            current.there = current.there or text != ""
            current.glob = current.glob or any(c in text for c in "*?[")
            return
        words = text.split()
        if text[:1] in IFS and text:
            close()
        for i, found in enumerate(words):
            if i:
                close()
            current.pieces.append(found)
            current.there = True
            current.glob = current.glob or any(c in found for c in "*?[")
        if text[-1:] in IFS and text:
            close()

    for part in parts:
        given = _many(part, ctx)
        if given is not None:
            for i, value in enumerate(given):
                if part.quoted and i:  # "$@", "${A[@]}": a word each
                    close()
                elif i:  # unquoted: each split, and a word apart from the next
                    add(" ", False)
                if part.quoted:
                    current.pieces.append(value)
                    current.there = True
                else:
                    add(value, False)
            continue
        value = piece(part, ctx)
        quoted = getattr(part, "quoted", False)
        if isinstance(part, Lit):
            current.pieces.append(value)
            current.there = current.there or quoted or bool(value)
            current.glob = current.glob or (not quoted and any(c in value for c in "*?["))
            continue
        add(value, quoted)
    close()
    out: list[Value] = []
    for field in done:
        if sum(_size(p) for p in field.pieces) > MAX_VALUE:
            out.append(ctx.too_long(source))
            continue
        value = concat(field.pieces) if len(field.pieces) != 1 else field.pieces[0]
        out.append(Glob(value) if field.glob and type(value) is str else value)
    return out


def _many(part: Part, ctx: Context) -> tuple[Value, ...] | None:
    """The values ``$@``, ``$*``, ``${A[@]}`` and ``${A[*]}`` stand for, where they are
    known (None: the part is one value), "$*" and "${A[*]}" being one."""
    if type(part) is Param and part.name in ("@", "*"):
        given = ctx.arguments()
        if given is None or (part.quoted and part.name == "*"):
            return None
        return given
    if type(part) is Element and part.index in ("@", "*") and not part.length:
        if part.quoted and part.index == "*":
            return None
        found = _elements(part, ctx)
        return found.values() if isinstance(found, Array) else None
    return None


def _elements(part: Element, ctx: Context) -> Array | Unknown:
    """The array an element expansion reads (a scalar is its element 0)."""
    found = ctx.array(part.name)
    if isinstance(found, Array):
        ctx.charge(len(found.items))
        return found
    if found is None:
        return Array(())
    if isinstance(found, Unknown):
        return Unknown(part.source, f"{part.source}: {found.reason}")
    return Array(((0, found),))


def element(part: Element, ctx: Context) -> Value:
    """``${A[I]}``, ``${A[@]}`` and ``${A[*]}`` as one value (joined with blanks),
    ``${#A[@]}`` (how many elements), ``${#A[I]}``."""
    found = _elements(part, ctx)
    if isinstance(found, Unknown):
        return found
    pattern = next((v for v in found.values() if isinstance(v, Glob)), None)
    if part.index in ("@", "*"):
        if pattern is not None:  # a pattern is as many elements as it matches files
            return Unknown(
                part.source,
                f"{part.source}: {part.name} holds {pattern}, a pattern whose files stagegate "
                "does not know (how many there are)",
            )
        if part.length:
            return str(len(found.items))
        return concat(_joined(found.values(), " ")) if found.items else ""
    try:
        index = arith.evaluate(part.index, lambda name: known(ctx.lookup(name)).text, _no_write)
    except (arith.Failed, Failed) as exc:
        return Unknown(part.source, f"{part.source}: its index {part.index}: {exc}")
    if index < 0 and (not found.items or index + found.items[-1][0] + 1 < 0):
        return Unknown(
            part.source, f"{part.source}: a negative index before the first element (bash fails)"
        )
    if pattern is not None and (
        index < 0 or any(isinstance(v, Glob) for at, v in found.items if at <= index)
    ):
        return Unknown(
            part.source,
            f"{part.source}: {part.name} holds {pattern}, a pattern whose files stagegate does "
            "not know (which element is which)",
        )
    value = found.get(index)
    if value is None:
        return "0" if part.length else ""
    if not part.length:
        return value
    try:
        text = known(value)
    except Failed:
        return Unknown(part.source, f"{part.source}: the length of a value stagegate does not know")
    if opaque(text.text):
        return Unknown(part.source, f"{part.source}: {ON_WORKSPACE}")
    return result(str(len(text.text)), text.keys, "len")


def braces(parts: tuple[Part, ...]) -> list[tuple[Part, ...]] | None:
    """Brace expansion (``a{b,c}``, ``{1..3}``) over the unquoted literal characters of
    a word; None where it makes more than MAX_BRACES words."""
    if not any(isinstance(p, Lit) and not p.quoted and "{" in p.text for p in parts):
        return [parts]
    tokens: list[Part | str] = []
    for part in parts:
        if isinstance(part, Lit) and not part.quoted:
            tokens += list(part.text)
        else:
            tokens.append(part)
    found = _brace_words(tokens, 0)
    if found is None:
        return None
    return [_rejoin(t) for t in found]


def _rejoin(tokens: list[Part | str]) -> tuple[Part, ...]:
    out: list[Part] = []
    for token in tokens:
        if isinstance(token, str):
            if out and isinstance(out[-1], Lit) and not out[-1].quoted:
                out[-1] = Lit(out[-1].text + token, False)
            else:
                out.append(Lit(token, False))
        else:
            out.append(token)
    return tuple(out)


def _brace_words(tokens: list[Part | str], depth: int) -> list[list[Part | str]] | None:
    """The words of one token list, its first brace group expanded, then the rest."""
    if depth > 20:
        return [tokens]
    for start, token in enumerate(tokens):
        if token != "{" or (start and tokens[start - 1] == "$"):
            continue
        group = _group(tokens, start)
        if group is None:
            continue
        end, alternatives = group
        out: list[list[Part | str]] = []
        for alternative in alternatives:
            expanded = _brace_words([*tokens[:start], *alternative, *tokens[end + 1 :]], depth + 1)
            if expanded is None:
                return None
            out += expanded
            if len(out) > MAX_BRACES:
                return None
        return out
    return [tokens]


def _group(tokens: list[Part | str], start: int) -> tuple[int, list[list[Part | str]]] | None:
    """The brace group opening at ``start``: its end and alternatives (a comma list
    or a sequence); None where the braces make no expansion."""
    level = 0
    commas: list[int] = []
    for i in range(start, len(tokens)):
        token = tokens[i]
        if token == "{":
            level += 1
        elif token == "}":
            level -= 1
            if level == 0:
                inner = tokens[start + 1 : i]
                if commas:
                    bounds = [start, *commas, i]
                    return i, [tokens[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                sequence = _sequence(inner)
                return None if sequence is None else (i, [list(s) for s in sequence])
        elif token == "," and level == 1:
            commas.append(i)
    return None


def _sequence(inner: list[Part | str]) -> list[str] | None:
    """``{1..5}``, ``{a..e}``, ``{01..10..2}``: its words; None where it is not one."""
    if not all(isinstance(t, str) for t in inner):
        return None
    text = "".join(t for t in inner if isinstance(t, str))
    pieces = text.split("..")
    if len(pieces) not in (2, 3):
        return None
    step = 1
    if len(pieces) == 3:
        if not pieces[2].lstrip("-").isdigit():
            return None
        step = abs(int(pieces[2])) or 1
    low, high = pieces[0], pieces[1]
    if all(p.lstrip("-").isdigit() for p in (low, high)):
        a, b = int(low), int(high)
        width = (
            max(len(low), len(high))
            if (low.lstrip("-").startswith("0") and len(low.lstrip("-")) > 1)
            or (high.lstrip("-").startswith("0") and len(high.lstrip("-")) > 1)
            else 0
        )
        numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(numbers) > MAX_BRACES:
            return [f"{{{text}}}"] * (MAX_BRACES + 1)
        return [str(n).zfill(width) if n >= 0 else "-" + str(-n).zfill(width - 1) for n in numbers]
    if len(low) == len(high) == 1 and low.isalpha() and high.isalpha():
        a, b = ord(low), ord(high)
        codes = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(c) for c in codes]
    return None


# --------------------------------------------------------------------------- parameters


def parameter(part: Expand, ctx: Context) -> Value:
    """``${NAME OP ARGS}``, as bash computes it on known values."""
    op, written = part.op, part.source
    if op == "length":
        return _length(part, ctx)
    if op == "indirect" or op.startswith("@"):
        return Unknown(written, f"{written} is a shell expansion stagegate does not compute")
    if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
        return _default(part, ctx)
    value = ctx.lookup(part.name)
    try:
        text = known(value)
    except Failed:
        what = "a string operation" if op != ":" else "a substring"
        return Unknown(written, f"{written}: {what} on a value stagegate does not know")
    if opaque(text.text):
        return Unknown(written, f"{written}: {ON_WORKSPACE}")
    try:
        if op in ("%", "%%", "#", "##"):
            return result(_trim(part, text.text, ctx), text.keys, "trim")
        if op in ("/", "//", "/#", "/%"):
            return result(_replace(part, text.text, ctx), text.keys, "sub")
        if op == ":":
            return result(_substring(part, text.text, ctx), text.keys, "slice")
        if op in ("^^", "^", ",,", ","):
            return result(_case(part, text.text, ctx), text.keys, "case")
    except Failed as exc:
        return Unknown(written, f"{written}: {exc}")
    return Unknown(written, f"{written} is a shell expansion stagegate does not compute")


def _length(part: Expand, ctx: Context) -> Value:
    if part.name in ("@", "*"):
        given = ctx.arguments()
        if given is not None:
            return str(len(given))
    value = ctx.lookup(part.name)
    try:
        text = known(value)
    except Failed:
        return Unknown(part.source, f"{part.source}: the length of a value stagegate does not know")
    if opaque(text.text):
        return Unknown(part.source, f"{part.source}: {ON_WORKSPACE}")
    return result(str(len(text.text)), text.keys, "len")


def _default(part: Expand, ctx: Context) -> Value:
    """``${X:-d}``, ``${X-d}``, ``${X:=d}``, ``${X:+a}``, ``${X:?m}`` and their
    colon-less forms: unset (and, with the colon, empty) decide."""
    op, written = part.op, part.source
    arg = part.args[0] if part.args else Word((), "")
    is_set = ctx.is_set(part.name)
    value = ctx.lookup(part.name)
    if is_set is None:
        return Unknown(written, f"{written}: stagegate cannot tell whether {part.name} is set")
    empty: bool | None = (value == "") if isinstance(value, str) else None
    if op.startswith(":") and is_set and empty is None:
        if op == ":+":
            return Unknown(
                written, f"{written}: stagegate cannot tell whether {part.name} is empty"
            )
        return value
    absent = not is_set or (op.startswith(":") and bool(empty))
    kind = op.lstrip(":")
    if kind == "+":
        return "" if absent else expand(arg, ctx)
    if not absent:
        return value
    if kind == "?":
        raise Fails(f"{written}: {part.name} is unset or empty, and the script stops there")
    default = expand(arg, ctx)
    if kind == "=":
        ctx.assign(part.name, default)
    return default


def pattern_chars(word: Word, ctx: Context) -> list[tuple[str, bool]]:
    """A pattern word as (character, literal) pairs: quoted pieces are literal, the
    values of unquoted expansions are patterns; Failed where a piece is not known."""
    out: list[tuple[str, bool]] = []
    for part in word.parts:
        if isinstance(part, Lit):
            out += [(c, part.quoted) for c in part.text]
            continue
        value = piece(part, ctx)
        text = known(value).text
        literal = getattr(part, "quoted", False)
        out += [(c, literal) for c in text]
    return out


def matcher(word: Word | None, ctx: Context) -> patterns.Matcher:
    try:
        compiled = patterns.compile_pattern(pattern_chars(word, ctx) if word else [])
    except patterns.Unread as exc:
        raise Failed(f"{exc}, which stagegate does not read") from None
    except Failed as exc:
        raise Failed(f"a pattern stagegate does not read ({exc})") from None
    return patterns.Matcher(compiled, ctx.charge)


def _trim(part: Expand, text: str, ctx: Context) -> str:
    return patterns.trim(text, part.op, matcher(part.args[0] if part.args else None, ctx))


def _replace(part: Expand, text: str, ctx: Context) -> str:
    found = matcher(part.args[0] if part.args else None, ctx)
    new = known(expand(part.args[1], ctx)).text if len(part.args) > 1 else ""
    return patterns.replace(text, part.op, found, new)


def _substring(part: Expand, text: str, ctx: Context) -> str:
    """``${X:OFFSET}``, ``${X:OFFSET:LENGTH}``, negative ones counting from the end."""

    def number(arg: Word) -> int:
        written = "".join(p.text for p in arg.parts if isinstance(p, Lit))
        try:
            return arith.evaluate(written, lambda name: known(ctx.lookup(name)).text, _no_write)
        except arith.Failed as exc:
            raise Failed(str(exc)) from None

    offset = number(part.args[0]) if part.args else 0
    if offset < 0:
        offset = max(len(text) + offset, -1)
        if offset < 0:
            return ""
    if len(part.args) < 2:
        return text[offset:]
    length = number(part.args[1])
    if length < 0:
        end = len(text) + length
        if end < offset:
            raise Failed("the substring's end is before its start (bash fails)")
        return text[offset:end]
    return text[offset : offset + length]


def _no_write(name: str, value: int) -> None:
    raise Failed(f"an assignment to {name} inside a substring's bounds")


def _case(part: Expand, text: str, ctx: Context) -> str:
    if part.args and part.args[0].parts:
        raise Failed("a case conversion of some characters only, which stagegate does not read")
    if not text.isascii():
        raise Failed("a case conversion of text that is not ASCII")
    if part.op == "^^":
        return text.upper()
    if part.op == ",,":
        return text.lower()
    if part.op == "^":
        return text[:1].upper() + text[1:]
    return text[:1].lower() + text[1:]


def arithmetic(text: str, source: str, ctx: Context) -> Value:
    """``$(( text ))`` on known integers; assignments in it change the variables."""
    keys: set[str] = set()

    def read(name: str) -> str:
        found = known(ctx.lookup(name))
        keys.update(found.keys)
        return found.text

    def write(name: str, value: int) -> None:
        ctx.assign(name, str(value))

    try:
        value = arith.evaluate(text, read, write)
    except (arith.Failed, Failed) as exc:
        return Unknown(source, f"{source} at {ctx.where()}: {exc}")
    return result(str(value), frozenset(keys), "calc")
