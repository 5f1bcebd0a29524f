"""Small helpers for the words of messages."""

from __future__ import annotations

import re
from collections.abc import Iterable


def counted(number: int, noun: str) -> str:
    """``1 check``, ``2 checks``: a count with its noun (regular plurals)."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The one of ``choices`` most like ``word`` (difflib's ratio, at least ``cutoff``), or
    None: every "did you mean" of stagegate is chosen here."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return close[0] if close else None


def suggest(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest of ``choices``, or ``""`` when none is close."""
    close = closest(word, choices)
    return f"; did you mean {close!r}?" if close else ""


def quoted(text: str) -> str:
    """``text`` in quotes as written: a regular expression's backslashes are not doubled
    (``repr`` would show ``\\b`` for ``\b``)."""
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return repr(text)


_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_SHOWN = {"\n": "\\n", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line(text: str) -> str:
    """``text`` on one line: each line break in it (those of ``str.splitlines``, which
    include the terminal's and the GitHub runner's) shown as an escape: ``\\n`` for a line
    feed, ``\\u2028`` and ``\\u2029`` for the Unicode separators, ``\\xNN`` for the
    control characters (as ``report.printable`` shows them). A value from the user's files
    printed on a line of a report stays on that line, so it cannot add a line of its own
    (a forged ``ok``)."""
    if text.isprintable():
        return text
    return _BREAK.sub(lambda m: _SHOWN.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character but line feed and tab shown as ``\\xNN``.

    Summaries, titles, file names, file lines and commit messages reach the output; an
    escape sequence in them would act on the reader's terminal (an OSC 52 clipboard
    write, a screen clear) and a bare carriage return would overwrite a ``FAIL`` line
    with ``ok``. Every text output goes through here (``cli.show``, the live lines of
    ``check``, error messages, annotations); JSON escapes them its own way (``dumps``)."""
    if text.isascii() and text.isprintable():
        return text
    return CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
