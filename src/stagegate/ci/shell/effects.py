"""The commands whose effects stagegate follows, read from their (expanded) words:
``gh run download``'s selections, what ``rm`` takes out of a pattern download, the
lines written to ``$GITHUB_ENV``/``$GITHUB_OUTPUT``, and what ``echo`` and ``printf``
print when some of their arguments are unknown. Pure functions of values."""

from __future__ import annotations

import re

from stagegate.ci.shell import textops
from stagegate.ci.shell.values import Failed, known
from stagegate.ci.transfers import Transfer, shown, text_value
from stagegate.model.ghexpr import Sym, Unknown, Value, concat
from stagegate.records import record, replace

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
USES = frozenset(
    {"mv", "cp", "find", "pip", "pip3", "uv", "rsync", "tar", "unzip", "python", "python3"}
)
"""Commands that use downloaded files: an ``rm`` after one of them is clean-up."""


# --------------------------------------------------------------------------- gh run download


@record
class Download:
    """A ``gh run download``: its names and patterns (as written: values), the run it
    reads (None: this one), its ``-D`` folder."""

    names: tuple[Value, ...]
    patterns: tuple[Value, ...]
    run: Value | None
    folder: Value | None
    run_index: int = 0
    """Where the run is among the arguments (its written form names the run)."""


def download(args: list[Value]) -> Download:
    """The options of ``gh run download ARGS``."""
    names: list[Value] = []
    patterns: list[Value] = []
    run: Value | None = None
    run_index = 0
    folder: Value | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        text = arg if isinstance(arg, str) else ""
        nxt = args[i + 1] if i + 1 < len(args) else None
        for short, long, into in (("-n", "--name", names), ("-p", "--pattern", patterns)):
            if text in (short, long):
                if nxt is not None:
                    into.append(nxt)
                i += 1
                break
            if text.startswith(long + "="):
                into.append(text[len(long) + 1 :])
                break
            if text.startswith(short) and len(text) > 2 and not text.startswith("--"):
                into.append(text[2:].lstrip("="))
                break
        else:
            if text in ("-D", "--dir") and nxt is not None:
                folder = nxt
            if text.startswith("--dir="):
                folder = text[len("--dir=") :]
            if text in ("-D", "--dir", "-R", "--repo"):
                i += 1
            elif not text.startswith("-") and run is None:
                run, run_index = arg, i
        i += 1
    return Download(tuple(names), tuple(patterns), run, folder, run_index)


# --------------------------------------------------------------------------- rm


def exclude(
    pending: list[tuple[Transfer, str | None]], value: Value
) -> list[tuple[Transfer, str | None]]:
    """``rm -rf DIR/NAME`` after ``gh run download -p GLOB -D DIR``: NAME (a glob, as the
    shell expands it) is taken out of what each pattern download keeps."""
    out: list[tuple[Transfer, str | None]] = []
    text = value if isinstance(value, str) else None
    for transfer, folder in pending:
        name: Value = value
        if folder is not None:
            prefix = folder.rstrip("/") + "/"
            if text is not None and text.startswith(prefix):
                name = text[len(prefix) :]
            elif (
                isinstance(value, Sym)
                and isinstance(value.parts[0], str)
                and value.parts[0].startswith(prefix)
            ):
                name = concat([value.parts[0][len(prefix) :], *value.parts[1:]])
            else:
                out.append((transfer, folder))
                continue
        if "/" in shown(name).rstrip("/"):
            out.append((transfer, folder))
            continue
        if isinstance(name, str):
            name = str(name).rstrip("/")
        out.append((replace(transfer, exclude=(*transfer.exclude, text_value(name))), folder))
    return out


# --------------------------------------------------------------------------- printing


def echo(args: list[Value]) -> Value:
    """What ``echo ARGS`` prints, unknown arguments kept as unknown pieces."""
    texts = [a for a in args if isinstance(a, str)]
    if len(texts) == len(args):
        return textops.echo([str(a) for a in args])
    options = 0
    while options < len(args) and isinstance(args[options], str):
        flag = str(args[options])
        if not (len(flag) > 1 and flag[0] == "-" and set(flag[1:]) <= set("neE")):
            break
        if "e" in flag:
            return Unknown("echo -e", "echo -e of a value stagegate does not know")
        options += 1
    newline = not any("n" in str(a) for a in args[:options])
    pieces: list[Value] = []
    for i, arg in enumerate(args[options:]):
        if i:
            pieces.append(" ")
        pieces.append(arg)
    if newline:
        pieces.append("\n")
    return concat(pieces)


def printf(args: list[Value]) -> Value:
    """What ``printf FORMAT ARGS`` prints; with unknown arguments, only for a format of
    plain ``%s`` conversions that takes every argument once."""
    try:
        return textops.printf([known(a).text for a in args])
    except Failed:
        pass
    if not args or not isinstance(args[0], str):
        return Unknown("printf", "printf with a format stagegate does not know")
    form = str(args[0])
    specs = re.findall(r"%[^%]|%%", form)
    conversions = [s for s in specs if s != "%%"]
    if any(s != "%s" for s in conversions) or len(conversions) != len(args) - 1:
        return Unknown("printf", "printf of a value stagegate does not know")
    pieces: list[Value] = []
    rest = list(args[1:])
    for i, chunk in enumerate(re.split(r"(%%|%s)", form)):
        if i % 2 == 0:
            pieces.append(textops.printf([chunk.replace("%", "%%")]) if chunk else "")
        elif chunk == "%%":
            pieces.append("%")
        else:
            pieces.append(rest.pop(0))
    return concat(pieces)


# --------------------------------------------------------------------------- $GITHUB_ENV


def lines(text: Value) -> list[Value]:
    """A printed value's lines (its unknown pieces inside the line they are on)."""
    if isinstance(text, str):
        found: list[Value] = list(text.split("\n"))
    elif isinstance(text, Sym):
        found = [""]
        for part in text.parts:
            if isinstance(part, str):
                first, *more = part.split("\n")
                found[-1] = concat([found[-1], first])
                found += more
            else:
                found[-1] = concat([found[-1], part])
    else:
        return [text]
    if found and found[-1] == "":
        found.pop()
    return found


def assignment(line: Value) -> tuple[str, Value] | None:
    """``NAME=VALUE`` of an env or output file's line; None for any other line."""
    head = line if isinstance(line, str) else line.parts[0] if isinstance(line, Sym) else ""
    if not isinstance(head, str):
        return None
    name, sep, _rest = head.partition("=")
    if not sep or not NAME_RE.fullmatch(name):
        return None
    if isinstance(line, str):
        return name, line.partition("=")[2]
    assert isinstance(line, Sym)
    return name, concat([head.partition("=")[2], *line.parts[1:]])


def delimited(line: Value) -> tuple[str, str] | None:
    """``NAME<<DELIMITER`` (a value of several lines follows); None otherwise."""
    if not isinstance(line, str):
        return None
    name, sep, delimiter = line.partition("<<")
    if not sep or not NAME_RE.fullmatch(name) or not delimiter:
        return None
    return name, delimiter
