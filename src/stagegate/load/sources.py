"""Where the migration's files come from, and the limits on them.

A ``Source`` is the work tree (``FileSource``) or a commit (``git.objects.GitSource``):
the loader reads through it and never asks which one it has.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Protocol

from stagegate.load.yamlsrc import MAX_BYTES, Document
from stagegate.records import record

STAGE_FILE = re.compile(r"(?P<number>[0-9]{2,})-(?P<slug>[a-z0-9][a-z0-9-]*)\.yaml")

MAX_STAGES = 999
"""Most stage files a migration may have."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""Most bytes the migration file and its stage files may hold together."""
MAX_CHECK_RUNS = 50_000
"""Most check runs ``check --all`` may make: invariants at every stage, plus each stage's own."""


class Source(Protocol):
    """Where the migration's files come from: the work tree, or a git revision."""

    def read(self, rel: str) -> bytes:
        """The bytes of ``rel`` (POSIX, relative to the root); FileNotFoundError if absent."""
        ...

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        """(name, is_dir) of the entries of directory ``rel``; FileNotFoundError if absent."""
        ...

    def escapes(self, rel: str) -> bool:
        """Whether ``rel`` leads outside the root (via ``..`` or a symbolic link)."""
        ...


def read_limited(path: Path) -> bytes:
    """The bytes of the regular file at ``path``: at most one byte past ``MAX_BYTES``.

    A symbolic link to /dev/zero or a named pipe would otherwise be read forever (or
    wait forever for a writer); one byte past the limit is enough for ``decode`` to
    refuse a file that is too large, whatever its size."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(
                errno.EINVAL,
                "not a regular file (a device, pipe or socket); stagegate reads plain files only",
            )
        return handle.read(MAX_BYTES + 1)


@record
class FileSource:
    """Files under a directory of the work tree."""

    root: Path

    def read(self, rel: str) -> bytes:
        return read_limited(self.root / rel)

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        with os.scandir(self.root / rel) as it:
            return [(entry.name, entry.is_dir()) for entry in it]

    def escapes(self, rel: str) -> bool:
        root = self.root.resolve()
        target = (self.root / rel).resolve()
        return target != root and root not in target.parents


@record(kw_only=True)
class StageFile:
    """One stage file as read: its number and slug (from its name), how it is shown, its data."""

    number: int
    slug: str
    shown: str
    doc: Document
    raw: bytes
