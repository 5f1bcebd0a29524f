"""The on-disk cache: parses of files' exact bytes, and migrations that passed validation.

Everything stored is data (JSON, or an empty file named by a digest), keyed by the
stagegate version and its own modules, so a cache never changes what a newer stagegate
decides. Caching is an optimisation: a cache that cannot be read or written is skipped.

Every entry is sealed with a key kept beside the folder, not in it (``FOLDER.key``,
made on first use, readable by its owner only): a parse carries its keyed digest, and a
validated migration's file is named by one. An entry written into the folder by anyone
without the key (a cache restored from another job, a pull request's files) is never
read, so it cannot turn a check or a validation off.
"""

from __future__ import annotations

import functools
import hmac
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stagegate._version import __version__
from stagegate.load.digest import blake2b as _digest
from stagegate.load.yamlsrc import Document

_PACKAGE = os.path.dirname(os.path.dirname(__file__))
_SCHEMA_DIR = Path(_PACKAGE, "schema")
_SCHEMAS = ("migration.schema.json", "stage.schema.json")


KEY_BYTES = 32


@functools.cache
def secret(directory: Path) -> bytes | None:
    """The key that seals the entries of the cache folder ``directory``: ``FOLDER.key``
    beside it, made on first use (None, and no cache, where it cannot be made or read, or
    is not a regular file of this user that only they may read and write)."""
    path = directory.with_name(directory.name + ".key")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        made = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(made, os.urandom(KEY_BYTES))
        finally:
            os.close(made)
    except FileExistsError:
        pass  # made before, or by another process now
    except OSError:
        return None
    try:
        opened = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            info = os.fstat(opened)
            key = os.read(opened, KEY_BYTES + 1)
        finally:
            os.close(opened)
    except OSError:
        return None
    mine = not hasattr(os, "getuid") or (info.st_uid == os.getuid() and not info.st_mode & 0o077)
    if not (stat.S_ISREG(info.st_mode) and mine and len(key) == KEY_BYTES):
        return None
    return key


def sealed(key: bytes, name: str, body: bytes) -> str:
    """The keyed digest of an entry: its name (where it is) and its bytes."""
    return _digest(name.encode("utf-8", "surrogateescape") + b"\0" + body, key=key).hexdigest()


def seal(directory: Path, name: str, body: bytes) -> bytes | None:
    """``body`` as stored under ``name`` in the folder: its keyed digest on a first line
    (None: no key, nothing stored)."""
    key = secret(directory)
    return None if key is None else sealed(key, name, body).encode("ascii") + b"\n" + body


def unseal(directory: Path, name: str, stored: bytes) -> bytes | None:
    """The body of an entry read from the folder, if its digest is the key's (None: no
    key, or written by someone without it)."""
    key = secret(directory)
    mark, _, body = stored.partition(b"\n")
    if key is None or not hmac.compare_digest(mark, sealed(key, name, body).encode("ascii")):
        return None
    return body


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


def read_json(directory: Path, path: Path) -> Any:
    """What a cache file of the folder ``directory`` holds (None: absent, unreadable, not
    JSON, or not sealed with the folder's key)."""
    import json

    try:
        body = unseal(directory, path.relative_to(directory).as_posix(), path.read_bytes())
        return None if body is None else json.loads(body)
    except (OSError, ValueError):
        return None


def store_json(directory: Path, path: Path, data: Any) -> None:
    """Store ``data`` at ``path`` in the folder ``directory``, sealed, whole or not at all
    (a temporary file, then a rename), so that a process reading it never sees half, and
    keep its folder small."""
    import json

    try:
        body = json.dumps(data, separators=(",", ":")).encode("utf-8")
        stored = seal(directory, path.relative_to(directory).as_posix(), body)
        if stored is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(stored)
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
        directory = self._directory()
        self.directory = directory if directory is not None and secret(directory) else None
        """The cache folder (None: no cache, or no key to seal its entries with)."""

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
        stored = read_json(self.directory, path) if path and self.directory else None
        if stored is None:
            return None
        try:
            return Document.restored(file, stored)
        except (ValueError, KeyError, TypeError):
            return None  # foreign: parse the file again

    def store_document(self, raw: bytes, doc: Document) -> None:
        path = self._document_path(raw)
        if path is not None and self.directory is not None:
            store_json(self.directory, path, doc.stored())

    def _valid(self, key: str) -> Path | None:
        """Where a validated migration is remembered: named by the key's digest of
        ``key``, which no one without the key can name."""
        secret_key = secret(self.directory) if self.directory is not None else None
        if self.directory is None or secret_key is None:
            return None
        return self.directory / "valid" / sealed(secret_key, "valid", key.encode("ascii"))

    def known(self, key: str) -> bool:
        path = self._valid(key)
        return path is not None and path.exists()

    def remember(self, key: str) -> None:
        path = self._valid(key)
        if path is None:
            return
        try:
            target = path.parent
            target.mkdir(parents=True, exist_ok=True)
            path.touch()
        except OSError:
            return  # a read-only home is no reason to fail; we just validate again next time
        _prune(target)
