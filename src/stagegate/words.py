"""Small helpers for the words of messages."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """``1 check``, ``2 checks``: a count with its noun (regular plurals)."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
