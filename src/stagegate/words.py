"""Small helpers for the words of messages."""

from __future__ import annotations

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
