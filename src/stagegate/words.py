"""Small helpers for the words of messages."""

from __future__ import annotations

from collections.abc import Iterable


def counted(number: int, noun: str) -> str:
    """``1 check``, ``2 checks``: a count with its noun (regular plurals)."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def suggest(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest of ``choices``, or ``""`` when none is close."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
