"""cibuildwheel's selectors: space-separated globs over build identifiers, with shell-like
braces (``cp{38,39}-*``, ``cp3{8..10}-*``) expanded first, matched as ``fnmatch`` does on
the runner (case-insensitively on Windows, where ``fnmatch`` folds case)."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

MAX_EXPANSION = 4_096
"""Most globs one selector may expand to (a selector is a few words in practice)."""

_RANGE = re.compile(r"(-?\d+)\.\.(-?\d+)")


class TooLong(ValueError):
    """A selector whose braces expand to more than ``MAX_EXPANSION`` globs."""


def _close(text: str, start: int) -> tuple[int, list[str]] | None:
    """The ``}`` matching the ``{`` at ``start`` and the top-level pieces between them."""
    depth, pieces, piece_start = 0, [], start + 1
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                pieces.append(text[piece_start:i])
                return i, pieces
        elif char == "," and depth == 1:
            pieces.append(text[piece_start:i])
            piece_start = i + 1
        i += 1
    return None


def expand(word: str) -> list[str]:
    """The globs a brace word stands for, in order."""
    i = 0
    while i < len(word):
        if word[i] == "\\":
            i += 2
            continue
        if word[i] == "{":
            found = _close(word, i)
            if found is not None:
                end, pieces = found
                options = _options(pieces)
                if options is not None:
                    head, tail = word[:i], expand(word[end + 1 :])
                    out = [head + o + t for option in options for o in expand(option) for t in tail]
                    if len(out) > MAX_EXPANSION:
                        raise TooLong(word)
                    return out
        i += 1
    return [word]


def _options(pieces: list[str]) -> list[str] | None:
    if len(pieces) > 1:
        return pieces
    matched = _RANGE.fullmatch(pieces[0])
    if matched is None:
        return None  # `{x}` is literal text, as in the shell
    first, last = int(matched[1]), int(matched[2])
    if abs(last - first) >= MAX_EXPANSION:
        raise TooLong(pieces[0])
    step = 1 if last >= first else -1
    return [str(n) for n in range(first, last + step, step)]


class Selector:
    """A selector's globs, ready to match identifiers."""

    def __init__(self, text: str, *, fold_case: bool = False) -> None:
        self.fold = fold_case
        self.pattern = _compiled(text, fold_case)

    def __call__(self, identifier: str) -> bool:
        if self.pattern is None:
            return False
        return self.pattern.match(identifier.lower() if self.fold else identifier) is not None


@lru_cache(maxsize=512)
def _compiled(text: str, fold: bool) -> re.Pattern[str] | None:
    """The globs of a selector as one expression, as ``fnmatchcase`` reads each."""
    globs = [g for word in text.split() for g in expand(word)]
    if not globs:
        return None
    return re.compile("|".join(fnmatch.translate(g.lower() if fold else g) for g in globs))
