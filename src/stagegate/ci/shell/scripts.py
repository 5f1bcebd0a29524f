"""The repository scripts a ``run:`` calls (``./ci/tools/x``, ``bash ci/x``,
``source ci/x``) and which ``run:`` texts are worth reading at all; the scripts are read
through ``ci.files.Files`` (``repo_path``, ``script``), from the work tree or a commit."""

from __future__ import annotations

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
    return (
        GH.search(text) is not None
        or "GITHUB_ENV" in text
        or any(files.repo_path(m.group(1)) is not None for m in CALL.finditer(text))
    )
