"""The text commands of a ``$(...)`` the shell reader evaluates exactly: ``echo``,
``printf '%s'``, ``tr -d SET`` and ``cut -d C -f LIST`` (fed by ``echo ... |`` or a
``<<<`` here-string), ``$(( ))`` integer arithmetic, and the parameter expansions
(``${X%%.*}``, ``${X//a/b}``, ``${X:-d}``, ...). Each needs every value it
reads known; anything else (another command or option, an unknown value, a placeholder
that stands for many values) is an unknown value that says why: never guessed.

When ``init`` reads, a matrix value remembers its key (``ghexpr.Tagged``); what these
commands make of it remembers a key of its own (``KEY-tr``, ``KEY-cut``, ``KEY-calc``),
so that ``init`` can write the rows' names as one template with an axis of the results.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stagegate.ci.shellwords import EXPANSION, SEPARATORS, marked_words, renumbered_words
from stagegate.model.ghexpr import Ph, Sym, Tagged, Unknown, Value

if TYPE_CHECKING:
    from stagegate.ci.shell import Shell

FILTERS = frozenset({"tr", "cut"})
MAX_ARITH = 200
"""Longest ``$(( ))`` expression read (characters)."""
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)")


class Failed(Exception):
    """Why a substitution is not evaluated (its message ends the unknown's reason)."""


class Foreign(Exception):
    """A command none of these: the substitution "runs a command"."""


class _Text:
    """Known text and the matrix keys it was made from (``init``'s tags)."""

    def __init__(self, text: str, keys: frozenset[str]) -> None:
        self.text, self.keys = text, keys


def substitution(shell: Shell, piece: str, segments: list[list[str]] | None = None) -> Value:
    """The value of ``$(...)`` or ``$(( ))`` (``piece``, as the script wrote it);
    ``segments``: its ``pipeline``, where the caller has split it already."""
    at = shell.at
    try:
        if piece.startswith("$((") and piece.endswith("))"):
            return _arithmetic(shell, piece[3:-2])
        return _pipeline(shell, piece[2:-1], segments)
    except Foreign:
        return Unknown(piece, f"{piece} runs a command")
    except Failed as exc:
        where = shell.loc(at)
        return Unknown(piece, f"{piece} at {where.file}:{where.line}: {exc}")


def _known(value: Value) -> _Text:
    """A value as known text: each placeholder must carry its value (``init``'s tags)."""
    if isinstance(value, Tagged):
        return _Text(str(value), frozenset({value.axis}))
    if isinstance(value, str):
        return _Text(value, frozenset())
    if isinstance(value, Unknown):
        raise Failed(f"it reads {value.expression}, which stagegate does not know: {value.reason}")
    if isinstance(value, Sym):
        texts: list[str] = []
        keys: set[str] = set()
        for part in value.parts:
            if isinstance(part, Ph) and part.value is not None:
                texts.append(part.value)
                keys.add(part.axis)
            elif isinstance(part, Ph):
                raise Failed(f"it reads {{{part.axis}}}, which stands for many values")
            elif isinstance(part, Unknown):
                raise Failed(
                    f"it reads {part.expression}, which stagegate does not know: {part.reason}"
                )
            else:
                texts.append(part)
        return _Text("".join(texts), frozenset(keys))
    raise Failed("it reads a value that is not text")


def _result(text: str, keys: frozenset[str], op: str) -> Value:
    """The output, tagged with a key of its own where its input was tagged."""
    if not keys:
        return text
    return Tagged(text, "+".join(sorted(keys)) + "-" + op)


def _words(shell: Shell, inner: str) -> list[str]:
    """The words of a substitution, its values put in ``shell``'s table."""
    marked = "".join(
        part if isinstance(part, str) else shell.sentinel(part.value)
        for part in marked_words(inner)
    )
    words = renumbered_words(marked)
    if words is None:
        raise Failed("an unclosed quote")
    return list(words)


# --------------------------------------------------------------------------- pipelines


def pipeline(shell: Shell, inner: str) -> list[list[str]] | None:
    """The commands of a substitution that is one pipeline (``a | b``), each as its
    words (values in ``shell``'s table; a command may be empty); None for a list of
    commands (``;``, ``&&``, ...). Failed for an unclosed quote."""
    words = _words(shell, inner)
    if not words or any(w in SEPARATORS and w != "|" for w in words):
        return None
    segments: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            segments.append([])
        else:
            segments[-1].append(word)
    return segments


def _pipeline(shell: Shell, inner: str, segments: list[list[str]] | None) -> Value:
    if segments is None:
        segments = pipeline(shell, inner)
    if segments is None or any(s[0] not in ("echo", "printf", *FILTERS) for s in segments if s):
        raise Foreign
    if not all(segments):
        raise Failed("an empty command in a pipeline")
    head = segments[0]
    keys: frozenset[str] = frozenset()
    text: str | None = None
    ops: list[str] = []
    if head[0] == "echo":
        out = _echo(shell, head[1:])
        text, keys = out.text, out.keys
        filters = segments[1:]
    elif head[0] == "printf":
        if len(segments) > 1 and segments[1][0] not in FILTERS:
            raise Failed(f"a command stagegate does not run ({segments[1][0]})")
        out = _printf(shell, head[1:])
        text, keys = out.text, out.keys
        filters = segments[1:]
    else:
        filters = segments
    for i, filt in enumerate(filters):
        tool, args = filt[0], filt[1:]
        if tool not in FILTERS:
            raise Failed(f"a command stagegate does not run ({tool})")
        if any(a.startswith(("<", ">", "2>", "&>")) and a != "<<<" for a in args):
            raise Failed(f"{tool} with a redirection")
        if "<<<" in args:
            at = args.index("<<<")
            if text is not None or i > 0 or at + 2 != len(args):
                raise Failed(f"{tool} reads two inputs")
            given = _known(shell.value(args[at + 1]))
            text, keys = given.text + "\n", keys | given.keys
            args = args[:at]
        if text is None:
            raise Failed(f"{tool} reads its standard input, which stagegate does not know")
        values = [_known(shell.value(a)) for a in args]
        keys = keys.union(*(v.keys for v in values))
        argv = [v.text for v in values]
        text = _tr(argv, text) if tool == "tr" else _cut(argv, text)
        ops.append(tool)
    if text is None:
        raise Failed(f"a command stagegate does not run ({head[0]})")
    return _result(text.rstrip("\n"), keys, ops[-1] if ops else head[0])


def _echo(shell: Shell, args: list[str]) -> _Text:
    if args and args[0].startswith("-") and args[0] != "-":
        raise Failed(f"echo {args[0]}: an option stagegate does not read")
    if any(a.startswith(("<", ">", "2>", "&>")) for a in args):
        raise Failed("echo with a redirection")
    values = [_known(shell.value(a)) for a in args]
    return _Text(
        " ".join(v.text for v in values) + "\n", frozenset().union(*(v.keys for v in values))
    )


ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}


def _printf(shell: Shell, args: list[str]) -> _Text:
    """``printf FORMAT ARGS``: a format of literal text, ``%s``, ``%%`` and the escapes
    ``\\n``, ``\\t``, ``\\\\``, reused while arguments remain (as printf does)."""
    if not args:
        raise Failed("printf without a format")
    values = [_known(shell.value(a)) for a in args]
    form = values[0].text
    if form.startswith("-"):
        raise Failed(f"printf {form}: an option stagegate does not read")
    pieces: list[str | None] = []  # None: where an argument goes
    i = 0
    while i < len(form):
        char = form[i]
        if char == "%":
            nxt = form[i + 1 : i + 2]
            if nxt == "s":
                pieces.append(None)
            elif nxt == "%":
                pieces.append("%")
            else:
                raise Failed(f"printf's format {form!r} has %{nxt}, which stagegate does not read")
            i += 2
            continue
        if char == "\\":
            nxt = form[i + 1 : i + 2]
            if nxt not in ESCAPES:
                raise Failed(f"printf's format {form!r} has \\{nxt}, which stagegate does not read")
            pieces.append(ESCAPES[nxt])
            i += 2
            continue
        pieces.append(char)
        i += 1
    rest = [v.text for v in values[1:]]
    slots = pieces.count(None)
    out: list[str] = []
    while True:
        for piece in pieces:
            out.append(piece if piece is not None else rest.pop(0) if rest else "")
        if not rest or not slots:
            break
    return _Text("".join(out), frozenset().union(*(v.keys for v in values)))


def _characters(spec: str) -> set[str]:
    """The characters of a ``tr`` set: literal characters and ``a-z`` ranges."""
    if "\\" in spec or "[" in spec:
        raise Failed(f"tr's set {spec!r} has escapes or classes, which stagegate does not read")
    chars: set[str] = set()
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            low, high = spec[i], spec[i + 2]
            if low > high:
                raise Failed(f"tr's set {spec!r} has a reversed range {low}-{high}")
            chars.update(chr(c) for c in range(ord(low), ord(high) + 1))
            i += 3
            continue
        chars.add(spec[i])
        i += 1
    return chars


def _tr(args: list[str], text: str) -> str:
    if len(args) != 2 or args[0] != "-d":
        raise Failed("tr other than `tr -d SET`, which stagegate does not read")
    gone = _characters(args[1])
    return "".join(c for c in text if c not in gone)


def _fields(spec: str) -> list[tuple[int, int | None]]:
    """``cut -f``'s list: ``N``, ``N-M``, ``N-``, ``-M``, comma-separated (1-based)."""
    out: list[tuple[int, int | None]] = []
    for item in spec.split(","):
        match = re.fullmatch(r"([0-9]*)(-?)([0-9]*)", item)
        if not match or not (match.group(1) or match.group(3)):
            raise Failed(f"cut's field list {spec!r} is not one stagegate reads")
        low = int(match.group(1) or "1")
        high = int(match.group(3)) if match.group(3) else None if match.group(2) else low
        if low < 1 or (high is not None and high < low):
            raise Failed(f"cut's field list {spec!r} is not one stagegate reads")
        out.append((low, high))
    return out


def _cut(args: list[str], text: str) -> str:
    delimiter, spec = "\t", None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-d", "-f") and i + 1 < len(args):
            value = args[i + 1]
            i += 2
        elif arg[:2] in ("-d", "-f") and len(arg) > 2:
            value = arg[2:]
            i += 1
        else:
            raise Failed(f"cut {arg}: an option or operand stagegate does not read")
        if arg.startswith("-d"):
            delimiter = value
        else:
            spec = value
    if spec is None or len(delimiter) != 1:
        raise Failed("cut other than `cut -d C -f LIST`, which stagegate does not read")
    ranges = _fields(spec)
    lines = text.split("\n")
    ends = text.endswith("\n")
    out: list[str] = []
    for line in lines[:-1] if ends else lines:
        fields = line.split(delimiter)
        if len(fields) == 1:
            out.append(line)  # a line without the delimiter is printed whole
            continue
        keep = [
            f
            for n, f in enumerate(fields, 1)
            if any(low <= n and (high is None or n <= high) for low, high in ranges)
        ]
        out.append(delimiter.join(keep))
    return "\n".join(out) + ("\n" if ends else "")


# --------------------------------------------------------------------------- arithmetic

TOKEN = re.compile(r"\s*(?:([0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|(\ue000[0-9]+\ue001)|([-+*/%()]))")


def _arithmetic(shell: Shell, inner: str) -> Value:
    """``$(( ))`` on known integers: ``+ - * / %``, unary signs and parentheses, with
    bash's truncating division; a variable's value must be a decimal integer."""
    if len(inner) > MAX_ARITH:
        raise Failed(f"an expression longer than {MAX_ARITH:,} characters")
    marked = "".join(
        part if isinstance(part, str) else shell.sentinel(part.value)
        for part in marked_words(inner)
    )
    tokens: list[str | int] = []
    keys: set[str] = set()
    pos = 0
    marked = marked.rstrip()
    while pos < len(marked):
        match = TOKEN.match(marked, pos)
        if match is None:
            raise Failed(f"{marked[pos:].strip()[:20]!r} is arithmetic stagegate does not read")
        pos = match.end()
        number, name, mark, op = match.groups()
        if number is not None:
            if len(number) > 1 and number.startswith("0"):
                raise Failed(f"{number} is octal in shell arithmetic")
            tokens.append(int(number))
        elif op is not None:
            tokens.append(op)
        else:
            value = _known(shell.value(mark) if mark else shell.variable(name))
            if NUMBER.fullmatch(value.text) is None:
                what = name or "a value"
                raise Failed(f"{what} is {value.text!r}, not a decimal integer")
            keys |= value.keys
            tokens.append(int(value.text))
    if not tokens:
        raise Failed("an empty expression")
    if "++" in marked or "--" in marked:
        raise Failed("++ and -- are increments in shell arithmetic")
    parser = _Arith(tokens)
    result = parser.sum()
    if parser.pos != len(tokens):
        raise Failed("arithmetic stagegate does not read")
    if abs(result) >= 2**63:
        raise Failed("a value beyond 64 bits")
    return _result(str(result), frozenset(keys), "calc")


class _Arith:
    """Precedence climbing over ``+ -`` then ``* / %`` then unary signs."""

    def __init__(self, tokens: list[str | int]) -> None:
        self.tokens, self.pos = tokens, 0

    def peek(self) -> str | int | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def sum(self) -> int:
        value = self.product()
        while self.peek() in ("+", "-"):
            op = self.tokens[self.pos]
            self.pos += 1
            right = self.product()
            value = value + right if op == "+" else value - right
        return value

    def product(self) -> int:
        value = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.tokens[self.pos]
            self.pos += 1
            right = self.unary()
            if op == "*":
                value *= right
            elif right == 0:
                raise Failed("a division by zero")
            else:
                quotient = abs(value) // abs(right) * (1 if (value < 0) == (right < 0) else -1)
                value = quotient if op == "/" else value - right * quotient
            if abs(value) >= 2**63:
                raise Failed("a value beyond 64 bits")
        return value

    def unary(self) -> int:
        token = self.peek()
        if token in ("+", "-"):
            self.pos += 1
            value = self.unary()
            return -value if token == "-" else value
        if token == "(":
            self.pos += 1
            value = self.sum()
            if self.peek() != ")":
                raise Failed("an unclosed parenthesis")
            self.pos += 1
            return value
        if isinstance(token, int):
            self.pos += 1
            return token
        raise Failed("arithmetic stagegate does not read")


def glob_pattern(pattern: str) -> re.Pattern[str] | None:
    """A shell pattern (``*``, ``?``, ``[...]``, ``[!...]``, ``\\x``) as a regular
    expression matching exactly what bash's pattern matching does; None for what is not
    read here (quotes, character classes such as ``[[:alpha:]]``, an open bracket)."""
    if set(pattern) & set("\"'$`") or "[:" in pattern:
        return None
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 == len(pattern):
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                return None
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            if not body or "\\" in body:
                return None
            out.append(("[^" if negate else "[") + body.replace("]", "\\]") + "]")
            i = end + 1
            continue
        out.append(".*" if c == "*" else "." if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def trimmed(value: str, op: str, pattern: str) -> str | None:
    """``${X#P}``, ``${X##P}``, ``${X%P}``, ``${X%%P}`` of a known ``value``: the shortest
    (``#``, ``%``) or longest (``##``, ``%%``) prefix or suffix matching ``P`` removed, as
    bash does; None where the pattern is not read (``glob_pattern``)."""
    compiled = glob_pattern(pattern)
    if compiled is None:
        return None
    ends = range(len(value) + 1)
    if op in ("#", "##"):
        for i in ends if op == "#" else reversed(ends):
            if compiled.fullmatch(value, 0, i):
                return value[i:]
        return value
    for i in reversed(ends) if op == "%" else ends:
        if compiled.fullmatch(value, i):
            return value[:i]
    return value


def parameter_expansion(shell: Shell, inner: str, written: str) -> Value:
    """``${X//a/b}``, ``${X/a/b}``, ``${X#a}``, ``${X%a}`` (and ``##``, ``%%``),
    ``${X:-d}``, ``${#X}``: string operations on a known value; ``#``/``%`` patterns
    may use shell wildcards (``ci.textops.trimmed``), ``/`` patterns are literal."""
    match = EXPANSION.fullmatch(inner)
    assert match is not None
    length, name, op, arg = match.group(1), match.group(2), match.group(3), match.group(4)
    value = shell.variable(name)
    if length:
        return (
            str(len(value))
            if isinstance(value, str)
            else Unknown(written, f"{written}: the length of a value stagegate does not know")
        )
    if op in (":-", "-"):
        unset = (
            shell.positional is None or int(name) > len(shell.positional)
            if name.isdigit()
            else name not in shell.vars
            and shell.scope.env_value(name) is NotImplemented
            and shell.reader.bound(f"env.{name}", shell.scope) is NotImplemented
            and name not in shell.reader.env_writers
            and not name.startswith("GITHUB_")
        )
        if unset or (op == ":-" and value == ""):
            if "$" in (arg or "") or "`" in (arg or ""):
                return Unknown(written, f"{written}: a default stagegate does not compute")
            return arg or ""
        return value
    if not isinstance(value, str):
        return Unknown(written, f"{written}: a string operation on a value stagegate does not know")
    if op in ("//", "/"):
        old, _, new = (arg or "").partition("/")
        if set(old) & set("*?[]\\$`"):
            return Unknown(written, f"{written}: a replacement of a shell pattern")
        if not old:
            return value
        return value.replace(old, new) if op == "//" else value.replace(old, new, 1)
    done = trimmed(value, op, arg or "")
    return (
        Unknown(written, f"{written}: a pattern stagegate does not read") if done is None else done
    )
