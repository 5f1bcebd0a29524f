"""The text tools scripts build names with, as pure functions on known text: ``echo``,
``printf``, ``tr``, ``cut``, ``sed``, ``awk '{print $N}'``, ``basename``, ``dirname``
and ``cat``. Each computes exactly what GNU coreutils, GNU sed and awk print for the
forms it reads, and raises ``Failed`` (with why) for any other option or form: the
value is then unknown, never guessed. ``sed`` charges its matching to the reading's
budget (``charge``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from stagegate.ci.budget import MAX_VALUE
from stagegate.ci.shell import regex
from stagegate.ci.shell.patterns import CLASSES


class Failed(Exception):
    """Why a tool's output is not computed (ends the unknown value's reason)."""


Charge = Callable[[int], None]


# --------------------------------------------------------------------------- echo, printf

_ECHO_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
}


def _escapes(text: str, *, echo: bool) -> tuple[str, bool]:
    """Backslash escapes as ``echo -e`` (``echo``) or printf's format read them; the
    text and whether ``\\c`` stopped the output."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ECHO_ESCAPES:
            out.append(_ECHO_ESCAPES[nxt])
            i += 2
        elif nxt == "c" and echo:
            return "".join(out), True
        elif nxt in '"' and not echo:
            out.append(nxt)
            i += 2
        elif nxt in "01234567" and (not echo or nxt == "0"):
            start = i + 2 if echo else i + 1
            digits = text[start : start + 3]
            count = len(digits) - len(digits.lstrip("01234567"))
            out.append(chr(int(digits[:count] or "0", 8) & 0xFF))
            i = start + count
        elif nxt == "x":
            digits = text[i + 2 : i + 4]
            count = len(digits) - len(digits.lstrip("0123456789abcdefABCDEF"))
            if not count:
                out.append("\\x")
                i += 2
                continue
            out.append(chr(int(digits[:count], 16)))
            i += 2 + count
        elif nxt in "uU":
            raise Failed(f"the escape \\{nxt}, which stagegate does not decode")
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out), False


def echo(args: list[str]) -> str:
    """bash's ``echo``: ``-n`` (no line end), ``-e`` (escapes), ``-E``, combined."""
    newline, escapes = True, False
    while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= set("neE"):
        flags = args[0][1:]
        newline = newline and "n" not in flags
        for flag in flags:
            if flag in "eE":
                escapes = flag == "e"
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text, stopped = _escapes(text, echo=True)
        if stopped:
            return text
    return text + "\n" if newline else text


_SPEC = re.compile(r"%([-+ #0]*)([0-9]*)(?:\.([0-9]*))?([a-zA-Z%])")


def _integer(text: str) -> int:
    """A printf numeric argument: decimal, octal, hexadecimal, ``'c`` (its code)."""
    stripped = text.strip()
    if stripped[:1] in ("'", '"') and len(stripped) > 1:
        return ord(stripped[1])
    match = re.fullmatch(r"([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", stripped)
    if match is None:
        raise Failed(f"printf's argument {text!r} is not a number (printf fails)")
    digits = match.group(2)
    value = int(digits, 16 if digits[:2].lower() == "0x" else 8 if digits.startswith("0") else 10)
    return -value if match.group(1) == "-" else value


def _conversion(flags: str, width: str, precision: str | None, kind: str, arg: str | None) -> str:
    for given in (width, precision or ""):
        if len(given.lstrip("0")) > 4 or int(given or 0) > MAX_VALUE:
            shown = given if len(given) <= 12 else f"of {len(given):,} digits"
            raise Failed(
                f"printf's width or precision {shown} makes a value longer than "
                f"{MAX_VALUE:,} characters, which stagegate does not compute"
            )
    spec = "%" + flags + width + ("." + precision if precision is not None else "")
    if kind == "s":
        return (spec + "s") % (arg or "")
    if kind == "b":
        return (spec + "s") % _escapes(arg or "", echo=True)[0]
    if kind == "c":
        return (spec + "s") % (arg or "\0")[:1]  # of nothing: a NUL byte, as bash prints
    if kind in "diouxX":
        value = _integer(arg) if arg else 0
        if kind in "ouxX" and value < 0:
            raise Failed(f"printf %{kind} of a negative number")
        return (spec + ("d" if kind in "iu" else kind)) % value
    raise Failed(f"printf's %{kind}, which stagegate does not read")


def printf(args: list[str]) -> str:
    """bash's ``printf FORMAT ARGS``: ``%s %b %c %d %i %u %o %x %X %%`` with flags,
    width and precision, the format's escapes, reused while arguments remain."""
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        raise Failed("printf without a format (printf fails)")
    form, rest = args[0], list(args[1:])
    if form.startswith("-"):
        raise Failed(f"printf {form}: an option stagegate does not read")
    if "*" in form:
        raise Failed("printf's * width, which stagegate does not read")
    out: list[str] = []
    while True:
        used = 0
        pos = 0
        for match in _SPEC.finditer(form):
            text, _stopped = _escapes(form[pos : match.start()], echo=False)
            out.append(text)
            pos = match.end()
            flags, width, precision, kind = match.groups()
            if kind == "%":
                out.append("%")
                continue
            arg = rest.pop(0) if rest else None
            used += 1
            out.append(_conversion(flags, width, precision, kind, arg))
        tail, _stopped = _escapes(form[pos:], echo=False)
        out.append(tail)
        if not rest or not used:
            return "".join(out)


# --------------------------------------------------------------------------- tr

_CLASS = re.compile(r"\[:([a-z]+):\]")


def _ascii(text: str, tool: str) -> None:
    if not text.isascii():
        raise Failed(f"{tool} reads bytes, and the text is not ASCII")


def _set(spec: str) -> list[str]:
    """The characters of a ``tr`` set, in order: escapes, ``a-z`` ranges, ``[:class:]``."""
    _ascii(spec, "tr")
    out: list[str] = []
    i = 0
    while i < len(spec):
        match = _CLASS.match(spec, i)
        if match:
            name = match.group(1)
            if name not in CLASSES:
                raise Failed(f"tr's class [:{name}:] is not one tr has")
            out += [chr(c) for c in range(128) if CLASSES[name](chr(c))]
            i = match.end()
            continue
        if spec.startswith(("[=", "["), i) and re.match(r"\[.\*[0-9]*\]|\[=.=\]", spec[i:]):
            raise Failed(f"tr's set {spec!r} has [c*n] or [=c=], which stagegate does not read")
        char, i = _tr_char(spec, i)
        if i + 1 < len(spec) and spec[i] == "-":
            high, after = _tr_char(spec, i + 1)
            if high < char:
                raise Failed(f"tr's set {spec!r} has a reversed range {char}-{high} (tr fails)")
            out += [chr(c) for c in range(ord(char), ord(high) + 1)]
            i = after
            continue
        out.append(char)
    return out


def _tr_char(spec: str, i: int) -> tuple[str, int]:
    if spec[i] != "\\" or i + 1 == len(spec):
        return spec[i], i + 1
    nxt = spec[i + 1]
    if nxt in "01234567":
        digits = spec[i + 1 : i + 4]
        count = len(digits) - len(digits.lstrip("01234567"))
        return chr(int(digits[:count], 8) & 0xFF), i + 1 + count
    return {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "b": "\b"}.get(
        nxt, {"f": "\f", "v": "\v"}.get(nxt, nxt)
    ), i + 2


def tr(args: list[str], text: str) -> str:
    """``tr [-c] [-d] [-s] SET1 [SET2]``: translate, delete, squeeze (GNU coreutils)."""
    flags: set[str] = set()
    while args and len(args[0]) > 1 and args[0].startswith("-") and args[0] != "--":
        if not set(args[0][1:]) <= set("cCds"):
            raise Failed(f"tr {args[0]}: an option stagegate does not read")
        flags |= set(args[0][1:].replace("C", "c"))
        args = args[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    _ascii(text, "tr")
    if not args or len(args) > 2:
        raise Failed("tr with no set or more than two (tr fails)")
    if "d" in flags and "s" in flags and len(args) != 2:
        raise Failed("tr -ds with one set (tr fails)")
    translating = len(args) == 2 and "d" not in flags
    if translating and _CLASS.search(args[1]) and sorted(args) != ["[:lower:]", "[:upper:]"]:
        raise Failed(
            f"tr's second set {args[1]!r}: a class tr translates to only as upper to lower"
        )
    if translating and "c" in flags:
        raise Failed("tr -c translating, which stagegate does not read")
    sets = [_set(a) for a in args]
    first = sets[0]
    if "c" in flags:
        first = [chr(c) for c in range(128) if chr(c) not in set(first)]
    if "d" in flags:
        gone = set(first)
        text = "".join(c for c in text if c not in gone)
        squeeze = set(sets[1]) if len(sets) == 2 else set()
        if "s" not in flags and len(sets) == 2:
            raise Failed("tr -d with two sets (tr fails)")
        return _squeeze(text, squeeze) if "s" in flags else text
    if len(sets) == 2:
        if not sets[1]:
            raise Failed("tr with an empty second set (tr fails)")
        target = sets[1] + [sets[1][-1]] * max(0, len(first) - len(sets[1]))
        table = dict(zip(first, target, strict=False))
        text = "".join(table.get(c, c) for c in text)
        return _squeeze(text, set(sets[1])) if "s" in flags else text
    if "s" not in flags:
        raise Failed("tr with one set and no -d or -s (tr fails)")
    return _squeeze(text, set(first))


def _squeeze(text: str, chars: set[str]) -> str:
    out: list[str] = []
    for char in text:
        if out and out[-1] == char and char in chars:
            continue
        out.append(char)
    return "".join(out)


# --------------------------------------------------------------------------- cut


def _ranges(spec: str) -> list[tuple[int, int | None]]:
    """``cut``'s list: ``N``, ``N-M``, ``N-``, ``-M``, separated by commas (1-based)."""
    out: list[tuple[int, int | None]] = []
    for item in spec.split(","):
        match = re.fullmatch(r"([0-9]*)(-?)([0-9]*)", item)
        if not match or not (match.group(1) or match.group(3)):
            raise Failed(f"cut's list {spec!r} is not one cut reads (cut fails)")
        low = int(match.group(1) or "1")
        high = int(match.group(3)) if match.group(3) else None if match.group(2) else low
        if low < 1 or (high is not None and high < low):
            raise Failed(f"cut's list {spec!r} is not one cut reads (cut fails)")
        out.append((low, high))
    return out


def _cut_options(args: list[str]) -> dict[str, str]:
    """cut's options: -d, -f, -c, -b, -s, --complement, --output-delimiter."""
    long = {"--delimiter": "d", "--fields": "f", "--characters": "c", "--bytes": "b"}
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in long and eq:
            found[long[name]] = value
        elif arg == "--complement" or arg == "--only-delimited":
            found[arg] = ""
        elif name == "--output-delimiter" and eq:
            found[name] = value
        elif arg in ("-s",):
            found["--only-delimited"] = ""
        elif arg[:2] in ("-d", "-f", "-c", "-b") and len(arg) > 2:
            found[arg[1]] = arg[2:]
        elif arg in ("-d", "-f", "-c", "-b") and i + 1 < len(args):
            found[arg[1]] = args[i + 1]
            i += 1
        else:
            raise Failed(f"cut {arg}: an option or operand stagegate does not read")
        i += 1
    return found


def cut(args: list[str], text: str) -> str:
    """``cut -d C -f LIST``, ``cut -c LIST`` (GNU coreutils)."""
    options = _cut_options(args)
    modes = [m for m in ("f", "c", "b") if m in options]
    if len(modes) != 1:
        raise Failed("cut needs one of -f, -c, -b (cut fails)")
    mode = modes[0]
    ranges = _ranges(options[mode])
    complement = "--complement" in options
    if not text:
        return ""
    ends = text.endswith("\n")
    lines = text.split("\n")[:-1] if ends else text.split("\n")

    def keep(n: int) -> bool:
        inside = any(low <= n and (high is None or n <= high) for low, high in ranges)
        return inside != complement

    out: list[str] = []
    if mode in ("c", "b"):
        _ascii(text, "cut")
        if "--output-delimiter" in options:
            raise Failed("cut -c with --output-delimiter, which stagegate does not read")
        for line in lines:
            out.append("".join(c for n, c in enumerate(line, 1) if keep(n)))
        return "".join(line + "\n" for line in out) if text else ""
    delimiter = options.get("d", "\t")
    if len(delimiter) != 1:
        raise Failed("cut's delimiter must be a single character (cut fails)")
    joiner = options.get("--output-delimiter", delimiter)
    for line in lines:
        fields = line.split(delimiter)
        if len(fields) == 1:
            if "--only-delimited" not in options:
                out.append(line)  # a line without the delimiter is printed whole
            continue
        out.append(joiner.join(f for n, f in enumerate(fields, 1) if keep(n)))
    return "".join(line + "\n" for line in out)


# --------------------------------------------------------------------------- basename, dirname


def basename(args: list[str]) -> str:
    """``basename NAME [SUFFIX]``, ``-s SUFFIX``, ``-a`` (GNU coreutils)."""
    suffix = ""
    many = False
    names: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-a", "--multiple"):
            many = True
        elif arg in ("-s",) and i + 1 < len(args):
            suffix, many = args[i + 1], True
            i += 1
        elif arg.startswith("--suffix="):
            suffix, many = arg.partition("=")[2], True
        elif arg.startswith("-s") and len(arg) > 2:
            suffix, many = arg[2:], True
        elif arg == "--":
            names += args[i + 1 :]
            break
        elif arg.startswith("-") and arg != "-":
            raise Failed(f"basename {arg}: an option stagegate does not read")
        else:
            names.append(arg)
        i += 1
    if not many and len(names) == 2:
        names, suffix = names[:1], names[1]
    if not names or (not many and len(names) > 1):
        raise Failed("basename with a missing or extra operand (basename fails)")
    return "".join(_basename(name, suffix) + "\n" for name in names)


def _basename(name: str, suffix: str) -> str:
    if not name:
        return ""
    stripped = name.rstrip("/")
    if not stripped:
        return "/"
    base = stripped.rpartition("/")[2]
    if suffix and base != suffix and base.endswith(suffix):
        base = base[: -len(suffix)]
    return base


def dirname(args: list[str]) -> str:
    """``dirname NAME...`` (GNU coreutils)."""
    if args[:1] == ["--"]:
        args = args[1:]
    if not args or any(a.startswith("-") and a != "-" for a in args):
        raise Failed("dirname with an option or no operand, which stagegate does not read")
    return "".join(_dirname(name) + "\n" for name in args)


def _dirname(name: str) -> str:
    stripped = name.rstrip("/")
    if not stripped:
        return "/" if name else "."
    head, slash, _tail = stripped.rpartition("/")
    if not slash:
        return "."
    head = head.rstrip("/")
    return head or "/"


# --------------------------------------------------------------------------- sed


def _split_script(script: str) -> list[str]:
    """A sed script's commands: separated by ``;`` or line breaks (an ``s`` command's
    delimiters and escapes kept together)."""
    commands: list[str] = []
    i = 0
    while i < len(script):
        while i < len(script) and script[i] in " \t\n;":
            i += 1
        if i >= len(script):
            break
        begin = i
        i = _address_end(script, i)
        while i < len(script) and script[i] in " \t!":
            i += 1
        if i < len(script) and script[i] == "d" and i > begin:
            j = i + 1
            while j < len(script) and script[j] in " \t":
                j += 1
            if j < len(script) and script[j] not in ";\n":
                raise Failed("a sed d command followed by more, which stagegate does not read")
            commands.append(script[begin : i + 1])
            i = j
            continue
        if script[i : i + 1] != "s" or i + 1 >= len(script):
            raise Failed(
                f"the sed command {script[begin:].strip()[:20]!r}, which stagegate does not read"
            )
        j = _delimited(script, i + 1, 2, "s command")
        while j < len(script) and script[j] not in ";\n":
            j += 1
        commands.append(script[begin:j].rstrip())
        i = j
    return commands


def _delimited(script: str, at: int, count: int, what: str) -> int:
    """Where ``count`` more of the delimiter ``script[at]`` end (escapes skipped)."""
    delim = script[at]
    if delim in "\\\n ":
        raise Failed(f"a sed {what} with that delimiter")
    j, seen = at + 1, 0
    while j < len(script) and seen < count:
        if script[j] == "\\" and j + 1 < len(script):
            j += 2
            continue
        if script[j] == delim:
            seen += 1
        j += 1
    if seen < count:
        raise Failed(f"an unterminated sed {what} (sed fails)")
    return j


def _address_end(script: str, i: int) -> int:
    """Where a command's address ``/RE/`` or ``\\cREc`` ends (``i``: none there)."""
    if script[i] == "/":
        return _delimited(script, i, 1, "address")
    if script[i] == "\\" and i + 1 < len(script):
        return _delimited(script, i + 1, 1, "address")
    if script[i] in "0123456789$":
        raise Failed("a sed line address, which stagegate does not read")
    return i


class Address:
    """A command's ``/RE/`` (or ``\\cREc``) address, ``!`` negating it: the lines the
    command applies to. GNU's alternation (``\\|``, ``|`` with ``-E``) at the top level is
    read as its branches (a line matches where one does)."""

    def __init__(self, text: str, extended: bool, charge: Charge) -> None:
        start = 1 if text[0] == "/" else 2
        delim = text[start - 1]
        end = _delimited(text, start - 1, 1, "address") - 1
        body = text[start:end]
        rest = text[end + 1 :].strip()
        self.negate = rest == "!"
        if rest not in ("", "!"):
            raise Failed(f"the sed address {text!r}, which stagegate does not read")
        if not body:
            raise Failed("an empty sed regex (the last one used), which stagegate does not read")
        branches = _branches(_undelimit(body, delim), extended)
        try:
            self.matchers = [
                regex.Matcher(regex.parse(b, extended), False, charge) for b in branches
            ]
        except regex.Unread as exc:
            raise Failed(f"a sed address with {exc}, which stagegate does not read") from None

    def takes(self, line: str) -> bool:
        found = any(m.exists(line) for m in self.matchers)
        return found != self.negate


def _undelimit(body: str, delim: str) -> str:
    """An address's regex with ``\\c`` for its delimiter ``c`` read as ``c``."""
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(body[i + 1] if body[i + 1] == delim else body[i : i + 2])
            i += 2
            continue
        out.append(body[i])
        i += 1
    return "".join(out)


def _branches(text: str, extended: bool) -> list[str]:
    """A regex split at its top-level alternation (``\\|`` basic, ``|`` extended);
    alternation inside a group is not read."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char == "[":
            end = _bracket_end(text, i)
            current.append(text[i:end])
            i = end
            continue
        pair = text[i : i + 2]
        bar = pair == "\\|" if not extended else char == "|"
        opening = pair == "\\(" if not extended else char == "("
        closing = pair == "\\)" if not extended else char == ")"
        depth += opening - closing
        if bar and depth:
            raise Failed("alternation inside a group, which stagegate does not read")
        if bar:
            out.append("".join(current))
            current = []
            i += 1 if extended else 2
            continue
        step = 2 if char == "\\" and i + 1 < len(text) else 1
        current.append(text[i : i + step])
        i += step
    out.append("".join(current))
    return out


def _bracket_end(text: str, i: int) -> int:
    """Where the bracket expression opening at ``i`` ends (its length if it does not)."""
    j = i + 1
    if j < len(text) and text[j] == "^":
        j += 1
    if j < len(text) and text[j] == "]":
        j += 1
    while j < len(text) and text[j] != "]":
        if text[j : j + 2] in ("[:", "[.", "[="):
            close = text.find(text[j + 1] + "]", j + 2)
            j = close + 2 if close >= 0 else len(text)
        else:
            j += 1
    return min(j + 1, len(text))


def _s_parts(command: str) -> tuple[str, str, str]:
    """An ``s`` command's pattern, replacement and flags, the delimiter's escapes undone."""
    delim = command[1]
    pieces: list[str] = []
    current: list[str] = []
    i = 2
    while i < len(command) and len(pieces) < 2:
        char = command[i]
        if char == "\\" and i + 1 < len(command):
            nxt = command[i + 1]
            current.append(nxt if nxt == delim else char + nxt)
            i += 2
            continue
        if char == delim:
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    return pieces[0], pieces[1], command[i:]


class Deletion:
    """An addressed ``d`` command: the line goes, and the next cycle starts."""

    print = False

    def __init__(self, command: str, extended: bool, charge: Charge) -> None:
        self.address = Address(command[:-1].rstrip(), extended, charge)


def _command(command: str, extended: bool, charge: Charge) -> Substitution | Deletion:
    if command.endswith("d") and not command.startswith("s"):
        return Deletion(command, extended, charge)
    return Substitution(command, extended, charge)


class Substitution:
    """One ``[ADDRESS[!]]s/REGEX/REPLACEMENT/FLAGS`` command, parsed."""

    def __init__(self, command: str, extended: bool, charge: Charge) -> None:
        at = _address_end(command, 0)
        self.address = Address(command[: command.index("s", at)], extended, charge) if at else None
        command = command[command.index("s", at) :]
        pattern, self.replacement, flags = _s_parts(command)
        match = re.fullmatch(r"([0-9]*)([gpI]*)([0-9]*)", flags)
        if match is None or (match.group(1) and match.group(3)):
            raise Failed(f"the sed flags {flags!r}, which stagegate does not read")
        self.nth = int(match.group(1) or match.group(3) or "1")
        self.every = "g" in match.group(2)
        self.print = "p" in match.group(2)
        if self.nth < 1:
            raise Failed("the sed flag 0 (sed fails)")
        try:
            parsed = regex.parse(pattern, extended)
        except regex.Unread as exc:
            raise Failed(f"a sed expression with {exc}, which stagegate does not read") from None
        if not parsed.slots and not parsed.start and not parsed.end and not pattern:
            raise Failed("an empty sed regex (the last one used), which stagegate does not read")
        self.groups = len(parsed.groups)
        self.matcher = regex.Matcher(parsed, "I" in match.group(2), charge)
        self.check_replacement()

    def check_replacement(self) -> None:
        for found in re.finditer(r"\\(.)", self.replacement):
            char = found.group(1)
            if char.isdigit() and int(char) > self.groups:
                raise Failed(f"\\{char} refers to no group (sed fails)")
            if char in "ULulE":
                raise Failed(f"the case conversion \\{char}, which stagegate does not read")

    def expand(self, line: str, start: int, end: int, ends: list[int]) -> str:
        out: list[str] = []
        text = self.replacement
        i = 0
        while i < len(text):
            char = text[i]
            if char == "&":
                out.append(line[start:end])
            elif char == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                i += 1
                if nxt.isdigit():
                    out.append(
                        self.matcher.group(line, start, ends, int(nxt))
                        if nxt != "0"
                        else line[start:end]
                    )
                else:
                    out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            else:
                out.append(char)
            i += 1
        return "".join(out)

    def apply(self, line: str) -> tuple[str, bool]:
        """The line with the command applied, and whether it replaced anything."""
        out: list[str] = []
        pos = 0
        count = 0
        replaced = False
        last_end = -1
        while pos <= len(line):
            found = self.matcher.search(line, pos)
            if found is None:
                break
            start, end, ends = found
            if start == end and start == last_end:  # no empty match right after a match
                if start < len(line):
                    out.append(line[start])
                pos = start + 1
                continue
            count += 1
            out.append(line[pos:start])
            if count >= self.nth:
                out.append(self.expand(line, start, end, ends))
                replaced = True
            else:
                out.append(line[start:end])
            last_end = end
            if end == start:
                if start < len(line):
                    out.append(line[start])
                pos = start + 1
            else:
                pos = end
            if replaced and not self.every:
                break
        out.append(line[pos:] if pos <= len(line) else "")
        return "".join(out), replaced


def sed(args: list[str], text: str, charge: Charge) -> str:
    """``sed [-E|-r] [-n] [-e] '[/RE/[!]]s/RE/REPLACEMENT/FLAGS'...``: ``s`` commands with
    the flags ``g``, a number, ``p`` and ``I``, and ``/RE/d``; a command's ``/RE/`` or
    ``\\cREc`` address (GNU sed)."""
    scripts: list[str] = []
    extended = quiet = False
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg == "-e" and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 1
        elif arg.startswith("--expression="):
            scripts.append(arg.partition("=")[2])
        elif arg.startswith("-") and len(arg) > 1 and set(arg[1:]) <= set("Ern"):
            extended = extended or bool(set(arg[1:]) & set("Er"))
            quiet = quiet or "n" in arg
        elif arg.startswith("-") and arg != "-":
            raise Failed(f"sed {arg}: an option stagegate does not read")
        else:
            rest.append(arg)
        i += 1
    if not scripts:
        if not rest:
            raise Failed("sed without a script (sed fails)")
        scripts.append(rest.pop(0))
    if rest:
        raise Failed("sed reading files, which stagegate does not read")
    commands = [_command(c, extended, charge) for script in scripts for c in _split_script(script)]
    ends = text.endswith("\n")
    lines = text.split("\n")[:-1] if ends else text.split("\n")
    out: list[str] = []
    for line in lines if text else []:
        printed: list[str] = []
        deleted = False
        for command in commands:
            if command.address is not None and not command.address.takes(line):
                continue
            if isinstance(command, Deletion):
                deleted = True
                break
            line, replaced = command.apply(line)
            if replaced and command.print:
                printed.append(line)
        out += printed
        if not quiet and not deleted:
            out.append(line)
    return "\n".join(out) + ("\n" if out and (ends or len(out) > len(lines)) else "")


# --------------------------------------------------------------------------- grep


def grep(args: list[str], text: str, charge: Charge) -> str:
    """``grep [-v] [-i] [-q] [-E|-F|-G] [-e PATTERN]... [PATTERN]`` on its input: the lines
    that match (``-v``: that do not), as GNU grep prints them. A pattern holding line
    breaks is one pattern per line; GNU's alternation (``\\|``, ``|`` with ``-E``) is read
    at the top level. grep's status: ``grep_status``."""
    patterns: list[str] = []
    mode, invert, fold, quiet = "G", False, False, False
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-e" and i + 1 < len(args):
            patterns.append(args[i + 1])
            i += 1
        elif arg.startswith("--regexp="):
            patterns.append(arg.partition("=")[2])
        elif arg == "--":
            rest += args[i + 1 :]
            break
        elif arg.startswith("-") and len(arg) > 1 and set(arg[1:]) <= set("vEFGiq"):
            for flag in arg[1:]:
                invert = invert or flag == "v"
                fold = fold or flag == "i"
                quiet = quiet or flag == "q"
                mode = flag if flag in "EFG" else mode
        elif arg in ("--invert-match", "--ignore-case", "--extended-regexp", "--fixed-strings"):
            invert = invert or arg == "--invert-match"
            fold = fold or arg == "--ignore-case"
            mode = {"--extended-regexp": "E", "--fixed-strings": "F"}.get(arg, mode)
        elif arg.startswith("-") and arg != "-":
            raise Failed(f"grep {arg}: an option stagegate does not read")
        else:
            rest.append(arg)
        i += 1
    if not patterns:
        if not rest:
            raise Failed("grep without a pattern (grep fails)")
        patterns.append(rest.pop(0))
    if rest:
        raise Failed("grep reading files, which stagegate does not read")
    test = _line_test([p for pattern in patterns for p in pattern.split("\n")], mode, fold, charge)
    ends = text.endswith("\n")
    lines = text.split("\n")[:-1] if ends else text.split("\n")
    kept = [line for line in (lines if text else []) if test(line) != invert]
    if quiet:  # its status alone: a line selected (``grep_status`` of this)
        return QUIET if kept else ""
    return "".join(line + "\n" for line in kept)


class Quiet(str):
    """What ``grep -q`` prints (nothing) where it selected a line: its status is success."""

    __slots__ = ()


QUIET = Quiet("")


def _line_test(patterns: list[str], mode: str, fold: bool, charge: Charge) -> Callable[[str], bool]:
    """Whether a line holds a match of one of ``patterns``."""
    if mode == "F":
        if fold and not all(p.isascii() for p in patterns):
            raise Failed("grep -i on text that is not ASCII, which stagegate does not read")
        wanted = [p.lower() for p in patterns] if fold else patterns
        return lambda line: any(p in (line.lower() if fold else line) for p in wanted)
    extended = mode == "E"
    try:
        matchers = [
            regex.Matcher(regex.parse(branch, extended), fold, charge)
            for pattern in patterns
            for branch in _branches(pattern, extended)
        ]
    except regex.Unread as exc:
        raise Failed(f"a grep pattern with {exc}, which stagegate does not read") from None
    return lambda line: any(m.exists(line) for m in matchers)


def grep_status(printed: str) -> bool:
    """grep's exit status, from what it printed: success where a line was selected."""
    return bool(printed) or isinstance(printed, Quiet)


# --------------------------------------------------------------------------- awk

_AWK = re.compile(r"\s*\{\s*print\s+(.*?)\s*;?\s*\}\s*")
_AWK_ITEM = re.compile(r'\s*(\$(?:[0-9]+|NF)|"[^"\\]*")\s*(,)?')


def _awk_program(program: str) -> list[tuple[str, bool]]:
    """``{ print ITEM[, ITEM]... }``: (item, an output separator after it)."""
    match = _AWK.fullmatch(program)
    if match is None:
        raise Failed(f"the awk program {program!r}, which stagegate does not read")
    items: list[tuple[str, bool]] = []
    pos = 0
    body = match.group(1)
    while pos < len(body):
        found = _AWK_ITEM.match(body, pos)
        if found is None or found.end() == pos:
            raise Failed(f"the awk program {program!r}, which stagegate does not read")
        items.append((found.group(1), bool(found.group(2))))
        pos = found.end()
    if not items or items[-1][1]:
        raise Failed(f"the awk program {program!r}, which stagegate does not read")
    return items


def awk(args: list[str], text: str) -> str:
    """``awk [-F C] '{print $N, $M...}'``: field picks, as awk splits and prints them."""
    separator: str | None = None
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-F" and i + 1 < len(args):
            separator = args[i + 1]
            i += 1
        elif arg.startswith("-F") and len(arg) > 2:
            separator = arg[2:]
        elif arg.startswith("-") and arg != "-":
            raise Failed(f"awk {arg}: an option stagegate does not read")
        else:
            rest.append(arg)
        i += 1
    if len(rest) != 1:
        raise Failed("awk reading files, which stagegate does not read")
    if separator is not None and separator != " " and (len(separator) != 1 or separator in "t\\"):
        raise Failed(f"awk's field separator {separator!r}, which stagegate does not read")
    items = _awk_program(rest[0])
    ends = text.endswith("\n")
    lines = text.split("\n")[:-1] if ends else text.split("\n")
    out: list[str] = []
    for line in lines if text else []:
        fields = line.split() if separator in (None, " ") else line.split(separator)
        if separator not in (None, " ") and line == "":
            fields = []
        pieces: list[str] = []
        for item, comma in items:
            if item.startswith('"'):
                pieces.append(item[1:-1])
            elif item == "$NF":
                pieces.append(fields[-1] if fields else line)  # NF 0: $NF is $0
            else:
                n = int(item[1:])
                pieces.append(line if n == 0 else fields[n - 1] if n <= len(fields) else "")
            if comma:
                pieces.append(" ")
        out.append("".join(pieces))
    return "".join(line + "\n" for line in out)


def cat(args: list[str], text: str) -> str:
    """``cat`` with no file: what it reads."""
    if [a for a in args if a != "-"]:
        raise Failed("cat reading files, which stagegate does not read")
    return text
