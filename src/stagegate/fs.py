"""Files written safely: atomic replacement under a lock, and paths kept inside a folder.

``write_atomic`` is how every command that writes a file writes it (temporary file,
fsync, rename, compare-and-swap under an exclusive lock); ``escapes`` says whether a
relative path leads out of a folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from stagegate.errors import Refused, UsageError
from stagegate.records import record


def escapes(root: Path, rel: str) -> bool:
    posix = PurePosixPath(rel)
    if posix.is_absolute() or os.path.isabs(rel) or ".." in posix.parts:
        return True
    resolved, base = (root / rel).resolve(), root.resolve()
    return resolved != base and base not in resolved.parents


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


@contextlib.contextmanager
def holding(path: Path, check: Callable[[bytes | None], None]) -> Iterator[None]:
    """The exclusive lock ``write_atomic`` takes on ``path``, held for the block: a
    change of other files that must not interleave with a write of ``path`` (stages
    renumbered while a flip swaps the stage line) runs under it. ``check`` is handed the
    file's bytes under the lock (None: there is no file) and raises to refuse; the
    block may replace the file (by rename), never write it in place."""
    target = Path(os.path.realpath(path))
    with _locked(path, target) as held:
        check(_read_fd(held.fd) if held is not None else None)
        yield


def write_atomic(
    path: Path,
    data: bytes,
    *,
    expected: bytes | None = None,
    verify: Callable[[], None] | None = None,
) -> Path:
    """Replace the regular file at ``path`` (its target, if a symbolic link) with ``data``.

    A compare-and-swap: under an exclusive lock on the file, it must still hold
    ``expected`` (when given) before the new bytes are written to a temporary file
    and when that file is swapped in, else Refused and nothing is written; an edit
    made meanwhile by anyone is never lost. ``verify`` runs under the lock too, after
    that comparison, and raises to refuse: what else must still be as it was read (the
    stage files a flip checked; ``holding`` takes the same lock to change them). Anything
    but a regular file (a folder, a named pipe, a device) is refused (exit 2) and left
    alone. Mode (and, where permitted, owner) of an existing file are kept."""
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
        if verify is not None:
            verify()
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
