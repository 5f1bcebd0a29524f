"""advance and rollback: the one-line edit of ``stage:`` in migration.yaml.

Only the characters of the ``stage`` value change; every other byte of the file
stays as it was (comments, CRLF line endings, a byte-order mark, a missing final
newline, anchors and tags). The target stage's checks run first and the file is
written only if they pass, atomically (temporary file in the same folder, fsync,
rename) with its mode kept, through a symbolic link to its target, and only if the
file on disk still holds the bytes that were read.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from .checks import runner
from .checks._base import Result
from .errors import InvalidInput, Problem, Refused, UsageError
from .load import FileSource, Source, read_limited
from .model import Migration
from .records import record
from .validation import load
from .yamlsrc import read, whole_number


@record
class Pinned:
    """The files of ``files``, except that ``name`` holds ``raw``.

    ``flip`` loads the migration from the bytes it already read, so the model that the
    checks judge is exactly the text that will be edited; ``init`` loads what it is
    about to write, before writing it."""

    files: Source
    name: str
    raw: bytes

    def read(self, rel: str) -> bytes:
        return self.raw if rel == self.name else self.files.read(rel)

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        return self.files.listdir(rel)

    def escapes(self, rel: str) -> bool:
        return self.files.escapes(rel)


def read_migration(path: str | Path) -> tuple[Migration, bytes]:
    """Load the migration and keep the exact bytes it was loaded from."""
    file = Path(path)
    try:
        raw = read_limited(file)
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such file; run stagegate in the folder that holds migration.yaml "
            "or pass -f PATH."
        ) from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory; pass the migration file with -f PATH.") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return load(path, source=Pinned(FileSource(file.parent), file.name, raw)), raw


# --------------------------------------------------------------------------- the edit


def stage_span(migration: Migration, raw: bytes) -> tuple[int, int]:
    """The byte offsets of the text of the top-level ``stage`` value in ``raw``.

    Taken from the located document ``load`` read (``Migration.stage_span``), which
    keeps the span of a value written in place as a plain scalar; anchors and tags
    before the number are outside the span and stay."""
    span = migration.stage_span
    if span is None:
        raise InvalidInput(
            [
                Problem(
                    migration.stage_loc,
                    "stage: is not written as a plain number (an alias, a quoted value "
                    "or a collection); write the number itself, e.g. `stage: 3`, so "
                    "that stagegate can flip it.",
                    "$.stage",
                )
            ]
        )
    start, end = span
    if not whole_number(raw[start:end].decode("utf-8", errors="replace")):
        raise InvalidInput(
            [
                Problem(
                    migration.stage_loc,
                    "stage: must be a whole number on one line to be flipped; write e.g. `stage: 3`.",
                    "$.stage",
                )
            ]
        )
    return start, end


def with_stage(migration: Migration, raw: bytes, new: int) -> bytes:
    """``raw`` with the stage value replaced by ``new``; nothing else differs.

    The edited bytes are read back (the one new text this command parses) and
    compared with the document ``load`` read."""
    file = migration.file
    start, end = stage_span(migration, raw)
    after = raw[:start] + str(new).encode("ascii") + raw[end:]
    old_doc = migration.document.data if migration.document is not None else None
    new_doc = read(after, file).data
    if not isinstance(new_doc, dict) or new_doc.get("stage") != new:
        raise RuntimeError(f"the edited {file} does not read back as stage {new}")
    if not isinstance(old_doc, dict) or {k: v for k, v in old_doc.items() if k != "stage"} != {
        k: v for k, v in new_doc.items() if k != "stage"
    }:
        raise RuntimeError(f"the edit of {file} changed more than the stage")
    return after


def _display_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.split("\n")
    ended = lines[-1] == ""
    if ended:
        lines.pop()
    shown = [line.removesuffix("\r") for line in lines]
    if not ended and shown:
        shown[-1] += "\n\\ No newline at end of file"
    return shown


def unified_diff(file: str, before: bytes, after: bytes) -> str:
    """The edit as ``git diff`` would show it (line endings shown as plain lines)."""
    lines = difflib.unified_diff(
        _display_lines(before),
        _display_lines(after),
        fromfile=f"a/{file}",
        tofile=f"b/{file}",
        lineterm="",
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- writing


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename is done all the same
    finally:
        os.close(fd)


LOCK_WAIT = 10.0
"""Seconds to wait for another stagegate that is writing the same file."""


@record
class _Held:
    """The file as verified under the lock: an open descriptor of it and its identity."""

    fd: int
    identity: tuple[int, int, int, int]  # device, inode, size, modification time (ns)


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    at = 0
    while True:
        chunk = os.pread(fd, 1 << 20, at)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        at += len(chunk)


def _unchanged(held: _Held, expected: bytes) -> bool:
    """The locked file still holds ``expected``, untouched since it was verified."""
    return _identity(os.fstat(held.fd)) == held.identity and _read_fd(held.fd) == expected


@contextlib.contextmanager
def _locked(path: Path, target: Path) -> Iterator[_Held | None]:
    """An exclusive ``flock`` on the file now at ``target`` (None: there is no file yet).

    Every stagegate that writes the file takes it, so two flips never write at once;
    a lock won on a file that another writer has meanwhile replaced is let go and taken
    on the new one, so the holder always holds the file that is there."""
    import fcntl
    import time

    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            yield None
            return
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if not isinstance(exc, BlockingIOError):
                        break  # a file system without locks: the compare-and-swap still holds
                    if time.monotonic() > deadline:
                        raise Refused(
                            f"{path} is being written by another process (locked for more "
                            f"than {LOCK_WAIT:g} s); nothing was written. Run the command "
                            "again when it is done."
                        ) from None
                    time.sleep(0.005)
            try:
                now = os.stat(target)
            except FileNotFoundError:
                now = None
            mine = os.fstat(fd)
            if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                yield _Held(fd, _identity(mine))
                return
        finally:
            os.close(fd)  # also lets go of the lock


def _exchange(first: Path, second: Path) -> bool:
    """Swap two names atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or the file system cannot, and nothing was done."""
    import ctypes
    import errno

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd, exchange = -100, 2
    if call(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def _swap(temp: Path, target: Path) -> bool:
    """Put ``temp`` at ``target``: exchanged (True: what was at ``target`` is now at
    ``temp``) where the system can, else renamed over it (False)."""
    if _exchange(temp, target):
        return True
    os.replace(temp, target)
    return False


def _changed_while_writing(path: Path, kept: str = "") -> Refused:
    return Refused(
        f"{path} changed on disk while stagegate was writing it; nothing was written and "
        f"the other change is kept{kept}. Run the command again on the new content."
    )


def _install(
    path: Path, target: Path, temp: Path, held: _Held | None, expected: bytes | None
) -> None:
    """Move the written ``temp`` into place, only over the file that was verified.

    Checked under the lock right before the swap, and again after it: with an atomic
    exchange, the file swapped out must be the verified one, untouched, else it is
    swapped back; without one, an edit made in place meanwhile is written back."""
    if held is None or expected is None:
        os.replace(temp, target)
        return
    if not _unchanged(held, expected):
        raise _changed_while_writing(path)
    if _swap(temp, target):
        out = os.lstat(temp)
        if (out.st_dev, out.st_ino) == held.identity[:2] and _unchanged(held, expected):
            os.unlink(temp)
            return
        _exchange(temp, target)  # put the other writer's file back
        raise _changed_while_writing(path)
    if not _unchanged(held, expected):  # edited in place between the check and the rename
        edited = _read_fd(held.fd)
        with contextlib.suppress(OSError):
            _write_new(target, edited, os.fstat(held.fd).st_mode & 0o7777, None)
        raise _changed_while_writing(path, " (written back)")


def _write_new(target: Path, data: bytes, mode: int | None, owner: tuple[int, int] | None) -> Path:
    """``data`` in a new temporary file beside ``target``, synced; its path."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.fchmod(handle.fileno(), mode)
            if owner is not None and owner != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(handle.fileno(), *owner)
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return Path(temp)


def write_atomic(path: Path, data: bytes, *, expected: bytes | None = None) -> Path:
    """Replace the regular file at ``path`` (its target, if a symbolic link) with ``data``.

    A compare-and-swap: under an exclusive lock on the file, it must still hold
    ``expected`` (when given) before the new bytes are written to a temporary file
    and when that file is swapped in, else Refused and nothing is written; an edit
    made meanwhile by anyone is never lost. Anything but a regular file (a folder, a
    named pipe, a device) is refused (exit 2) and left alone. Mode (and, where
    permitted, owner) of an existing file are kept."""
    target = Path(os.path.realpath(path))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise UsageError(
            f"{path}: is not a regular file ({_kind(info.st_mode)}); stagegate writes only "
            "regular files: name a file to write."
        )
    with _locked(path, target) as held:
        if expected is not None and (held is None or _read_fd(held.fd) != expected):
            raise Refused(
                f"{path} changed on disk while stagegate was running its checks "
                "(its bytes differ from those that were read and checked); nothing was written. "
                "Run the command again on the new content."
            )
        mode = owner = None
        if held is not None:
            mine = os.fstat(held.fd)
            mode, owner = mine.st_mode & 0o7777, (mine.st_uid, mine.st_gid)
        try:
            temp = _write_new(target, data, mode, owner)
        except OSError as exc:
            raise UsageError(
                f"{path}: cannot write in {target.parent}: {exc.strerror or exc}; "
                "check the folder's permissions and free space."
                if isinstance(exc, PermissionError) or not target.parent.is_dir()
                else f"{path}: cannot write: {exc.strerror or exc}"
            ) from None
        ours = os.lstat(temp).st_ino
        try:
            _install(path, target, temp, held, expected)
        except OSError as exc:
            raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from None
        finally:
            with contextlib.suppress(OSError):
                if os.lstat(temp).st_ino == ours:  # not swapped in: ours to remove
                    os.unlink(temp)
    _fsync_dir(target.parent)
    return target


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


# --------------------------------------------------------------------------- commands


@record(kw_only=True)
class Flip:
    """What advance or rollback did (or, with --dry-run, would do)."""

    migration: Migration
    path: str
    old: int
    new: int
    before: bytes
    after: bytes
    results: tuple[Result, ...]
    checked: tuple[int, ...]  # the stages whose checks ran, in order
    dry_run: bool
    failed_stage: int | None = None  # the first stage whose checks failed

    @property
    def ok(self) -> bool:
        return self.failed_stage is None

    @property
    def written(self) -> bool:
        return self.ok and not self.dry_run

    @property
    def diff(self) -> str:
        return unified_diff(self.path, self.before, self.after)


def _run(migration: Migration, stages: Sequence[int]) -> tuple[list[Result], list[int], int | None]:
    """Each stage's checks in order, stopping at the first stage that fails."""
    results: list[Result] = []
    checked: list[int] = []
    for stage in stages:
        found = runner.run_checks(migration, stage)
        results.extend(found)
        checked.append(stage)
        if not all(r.ok for r in found):
            return results, checked, stage
    return results, checked, None


def _finish(
    path: str,
    migration: Migration,
    raw: bytes,
    new: int,
    stages: Sequence[int],
    *,
    dry_run: bool,
) -> Flip:
    after = with_stage(migration, raw, new)
    results, checked, failed = _run(migration, stages)
    flip = Flip(
        migration=migration,
        path=path,
        old=migration.stage,
        new=new,
        before=raw,
        after=after,
        results=tuple(results),
        checked=tuple(checked),
        dry_run=dry_run,
        failed_stage=failed,
    )
    if flip.written:
        write_atomic(Path(path), after, expected=raw)
    return flip


def advance(path: str, *, to: int | None = None, dry_run: bool = False) -> Flip:
    """Move to the next stage (or ``to``) after its checks, and those of every stage
    in between, pass."""
    migration, raw = read_migration(path)
    current, last = migration.stage, migration.last
    if to is None:
        if current >= last:
            raise Refused(
                f"{path}: already at stage {current}, the last stage ({migration.title(current)}); "
                "there is nothing to advance to. Run `stagegate audit` to find what the retired "
                "items left behind."
            )
        target = current + 1
    else:
        if not 0 <= to <= last:
            raise UsageError(f"--to {to}: {path} has stages 0..{last}; pick one of them.")
        if to <= current:
            raise UsageError(
                f"--to {to}: the migration is at stage {current}; advance only moves forward "
                "(`stagegate rollback` goes back one stage)."
            )
        target = to
    return _finish(path, migration, raw, target, range(current + 1, target + 1), dry_run=dry_run)


def irreversible_reason(migration: Migration, stage: int) -> str | None:
    """Why leaving ``stage`` downwards is refused (its ``reversible: false``), or None."""
    definition = migration.stage_def(stage)
    if definition is None or definition.reversible:
        return None
    line = (definition.reversible_loc or definition.loc).line
    return (
        f"stage {stage} ({definition.title}) is not reversible "
        f"({definition.file}:{line}: reversible: false), so the migration cannot go back "
        f"below it; fix forward instead (a change in a new stage)."
    )


def rollback(path: str, *, dry_run: bool = False) -> Flip:
    """Move one stage back, unless the current stage is not reversible; the stage
    rolled back to must pass its checks."""
    migration, raw = read_migration(path)
    current = migration.stage
    if current == 0:
        raise Refused(f"{path}: at stage 0 (before the migration); there is nothing to roll back.")
    reason = irreversible_reason(migration, current)
    if reason is not None:
        raise Refused(f"{path}: rollback refused.", [reason])
    return _finish(path, migration, raw, current - 1, [current - 1], dry_run=dry_run)
