"""The repository scripts a ``run:`` calls (``./ci/tools/x``, ``bash ci/x``,
``source ci/x``): which paths are scripts of the repository, their text, and which
``run:`` texts are worth reading at all."""

from __future__ import annotations

import functools
import re
from pathlib import Path, PurePosixPath

from stagegate.ci.transfers import MAX_SCRIPT

GH = re.compile(r"\bgh\b")
CALL = re.compile(
    r"(?:^|[\s;&|(])(?:(?:ba)?sh\s+|source\s+|\.\s+)?\.?/?((?:\./)?[\w.-]+(?:/[\w.-]+)+)"
)
"""A word that may call a repository script (``./ci/tools/x``, ``bash ci/x``)."""


@functools.lru_cache(maxsize=1_024)
def worth_reading(root: Path, text: str) -> bool:
    """Whether a script may download, write ``$GITHUB_ENV`` or call a repository
    script: the others have no effect stagegate follows (decided once per text)."""
    return (
        GH.search(text) is not None
        or "GITHUB_ENV" in text
        or any(script_path(root, m.group(1)) is not None for m in CALL.finditer(text))
    )


@functools.lru_cache(maxsize=4_096)
def script_path(root: Path, written: str) -> str | None:
    """The repository path of a script a ``run:`` calls (relative to the top, as the
    step's working folder is), where it is a regular file inside the repository."""
    posix = PurePosixPath(written)
    if posix.is_absolute() or ".." in posix.parts or not posix.parts:
        return None
    path = root / posix
    try:
        real = path.resolve()
        top = root.resolve()
    except OSError:
        return None
    if top not in real.parents or not real.is_file():
        return None
    return posix.as_posix()


def script_text(path: Path) -> str | None:
    """A shell script's text: one with a ``sh``/``bash`` shebang, or none and no suffix
    of another language; None for anything else (Python, PowerShell, binaries) or
    where it cannot be read as text within MAX_SCRIPT characters."""
    if path.suffix not in ("", ".sh", ".bash"):
        return None
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SCRIPT + 1)
    except OSError:
        return None
    if len(data) > MAX_SCRIPT or b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and not re.search(r"\b(ba)?sh\b", first):
        return None
    return text
