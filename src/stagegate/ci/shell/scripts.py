"""The repository scripts a ``run:`` calls (``./ci/tools/x``, ``bash ci/x``,
``source ci/x``) and which ``run:`` texts are worth reading at all; the scripts are read
through ``ci.files.Files`` (``repo_path``, ``script``), from the work tree or a commit."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stagegate.ci.files import Files

GH = re.compile(r"\bgh\b")
CALL = re.compile(
    r"(?:^|[\s;&|(])(?:(?:ba)?sh\s+|source\s+|\.\s+)?\.?/?((?:\./)?[\w.-]+(?:/[\w.-]+)+)"
)
"""A word that may call a repository script (``./ci/tools/x``, ``bash ci/x``)."""


def worth_reading(files: Files, text: str) -> bool:
    """Whether a script may download, write ``$GITHUB_ENV`` or call a repository
    script: the others have no effect stagegate follows."""
    sure, calls = _words(text)
    return sure or any(files.repo_path(call) is not None for call in calls)


@functools.lru_cache(maxsize=1_024)
def _words(text: str) -> tuple[bool, tuple[str, ...]]:
    """Whether ``text`` runs ``gh`` or names ``GITHUB_ENV``; else the words that may
    call a repository script (what ``worth_reading`` asks the files), once per text."""
    if GH.search(text) is not None or "GITHUB_ENV" in text:
        return True, ()
    return False, tuple(dict.fromkeys(m.group(1) for m in CALL.finditer(text)))
