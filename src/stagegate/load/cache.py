"""The on-disk cache: parses of files' exact bytes, and migrations that passed validation.

Everything stored is data (JSON, or an empty file named by a digest), keyed by the
stagegate version and its own modules, so a cache never changes what a newer stagegate
decides. Caching is an optimisation: a cache that cannot be read or written is skipped.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stagegate._version import __version__
from stagegate.load.digest import blake2b as _digest
from stagegate.load.yamlsrc import Document

_PACKAGE = os.path.dirname(os.path.dirname(__file__))
_SCHEMA_DIR = Path(_PACKAGE, "schema")
_SCHEMAS = ("migration.schema.json", "stage.schema.json")


@functools.cache
def fingerprint() -> str:
    """Name, size and time of every module of stagegate: part of the validation cache key,
    so that a changed stagegate (an editable install, a patch) validates afresh. Taken
    once per process (every parse-cache lookup asks for it)."""
    entries = []
    folders = [_PACKAGE]
    while folders:  # the package and its subpackages
        with os.scandir(folders.pop()) as it:
            for entry in it:
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    entries.append(f"{entry.path}:{stat.st_size}:{stat.st_mtime_ns}")
                elif entry.is_dir() and entry.name not in ("schema", "__pycache__"):
                    folders.append(entry.path)
    return ",".join(sorted(entries))


MAX_CACHE_ENTRIES = 4 * 1_000
"""Entries kept per cache folder; past it, storing removes the older half. Four of the
largest migrations fit (``load.MAX_STAGES`` stage files and the migration file: a bound
of one migration's size made one of 999 stages evict its own entries at every run, and
parse and store them all again)."""


_COUNTED: dict[str, int] = {}
"""Per cache folder: its entries when this process last counted them, plus the entries
this process stored there since."""


def _prune(folder: Path) -> None:
    """Keep a cache folder small: every edit of a migration file makes a new entry.

    A process counts a folder's entries at its first store there and again whenever its
    count reaches the bound, and adds its own stores in between: a command (one process)
    reads the folder once, as it did for a migration of one file, and a long-lived process
    (an API user, a test session) does not read a folder of thousands of entries at every
    store. Entries other processes store meanwhile are counted by them, and by this
    process when it counts again."""
    key = str(folder)
    known = _COUNTED.get(key)
    if known is not None and known < MAX_CACHE_ENTRIES:
        _COUNTED[key] = known + 1
        return
    try:
        with os.scandir(folder) as it:  # counted first: the entries are read, not stat'ed
            count = sum(1 for _ in it)
        if count <= MAX_CACHE_ENTRIES:
            _COUNTED[key] = count
            return
        with os.scandir(folder) as it:
            entries = [(entry.stat().st_mtime, entry.path) for entry in it]
        removed = sorted(entries)[: len(entries) // 2]
        for _mtime, path in removed:
            os.unlink(path)
        _COUNTED[key] = len(entries) - len(removed)
    except OSError:
        _COUNTED.pop(key, None)  # another process pruned first, or the cache is read-only


def read_json(path: Path) -> Any:
    """What a cache file holds (None: absent, unreadable or not JSON)."""
    import json

    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def store_json(path: Path, data: Any) -> None:
    """Store ``data`` at ``path`` whole or not at all (a temporary file, then a rename), so
    that a process reading it never sees half, and keep its folder small."""
    import json

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(temporary, path)
    except (OSError, ValueError, TypeError):
        return  # caching is an optimisation; never a reason to fail
    _prune(path.parent)


def cache_directory() -> Path | None:
    """The cache folder ($STAGEGATE_CACHE_DIR, else the user's cache folder); None when
    $STAGEGATE_NO_CACHE turns caching off."""
    return ValidCache._directory()


class ValidCache:
    """Remembers migrations (all their files' bytes) that passed every check.

    The key covers the stagegate version, both schemas, the check modules and
    the name and bytes of every file, so a hit means the same input passed the
    same validation before: the schema and the heavier meaning checks are
    skipped, nothing else. Only successes are recorded."""

    def __init__(self) -> None:
        self.directory = self._directory()

    @staticmethod
    def _directory() -> Path | None:
        if os.environ.get("STAGEGATE_NO_CACHE"):
            return None
        explicit = os.environ.get("STAGEGATE_CACHE_DIR")
        if explicit:
            return Path(explicit)
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "stagegate"

    @staticmethod
    def key(files: Iterable[tuple[str, bytes]]) -> str:
        parts = [__version__.encode(), *(_SCHEMA_DIR.joinpath(f).read_bytes() for f in _SCHEMAS)]
        parts.append(fingerprint().encode())
        for name, raw in files:
            parts += [name.encode(), raw]
        digest = _digest()
        for part in parts:  # length-prefixed, so no two sequences of parts hash alike
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def _document_path(self, raw: bytes) -> Path | None:
        if self.directory is None:
            return None
        # stagegate's own modules are part of the key, as for the validation cache: a
        # parse stored by an older parser must not be read back by a newer one
        digest = _digest(
            __version__.encode() + b"\0" + fingerprint().encode() + b"\0" + raw
        ).hexdigest()
        return self.directory / "documents" / f"{digest}.json"

    def document(self, raw: bytes, file: str) -> Document | None:
        """The parse of these exact bytes, if it was stored; JSON, so a cache is data only."""
        path = self._document_path(raw)
        stored = read_json(path) if path is not None else None
        if stored is None:
            return None
        try:
            return Document.restored(file, stored)
        except (ValueError, KeyError, TypeError):
            return None  # foreign: parse the file again

    def store_document(self, raw: bytes, doc: Document) -> None:
        path = self._document_path(raw)
        if path is not None:
            store_json(path, doc.stored())

    def known(self, key: str) -> bool:
        return self.directory is not None and (self.directory / "valid" / key).exists()

    def remember(self, key: str) -> None:
        if self.directory is None:
            return
        try:
            target = self.directory / "valid"
            target.mkdir(parents=True, exist_ok=True)
            (target / key).touch()
        except OSError:
            return  # a read-only home is no reason to fail; we just validate again next time
        _prune(target)
