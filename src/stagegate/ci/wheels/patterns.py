"""cibuildwheel's selectors: space-separated globs over build identifiers, with shell-like
braces (``cp{38,39}-*``, ``cp3{8..10}-*``) expanded first, matched as ``fnmatch`` does on
the runner (case-insensitively on Windows, where ``fnmatch`` folds case)."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

from stagegate.model import identifiers


def expand(word: str) -> list[str]:
    """The globs a brace word stands for, in order (``model.identifiers.expand``)."""
    try:
        return identifiers.expand(word)
    except identifiers.TooLong as error:
        raise TooLong(str(error)) from None


class TooLong(ValueError):
    """A selector whose braces expand to more than ``MAX_EXPANSION`` globs."""


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
