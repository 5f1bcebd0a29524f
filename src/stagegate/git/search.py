"""Searching the work tree: the audit's ``git grep``, ``git ls-files`` and ``git blame``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stagegate.errors import GitError
from stagegate.git.run import Pending, command_failure, git_said, spawn
from stagegate.records import record

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- searching the work tree
#
# The audit's commands (`git grep`, `git ls-files`, `git blame`) print NUL-separated
# output (`-z`), so any file name comes back exactly, and the search is exactly what a
# user gets from git. It is much faster than walking the tree from Python, and
# commands that can run side by side are started with `start_*` and collected with
# `Pending.result()`.


@record
class Worktree:
    """The work tree holding a folder: its top folder, and the folder's path inside it."""

    top: Path
    prefix: str  # POSIX, '' at the top, else ending in '/'

    def rel(self, path: str) -> str:
        """``path`` (POSIX, relative to the folder) as a path from the top folder."""
        return self.prefix + path


def start_worktree(folder: Path) -> Pending[Worktree]:
    """The git work tree containing ``folder`` (no commit needed); GitError outside one."""

    def parse(out: bytes) -> Worktree:
        lines = os.fsdecode(out).split("\n")
        return Worktree(top=Path(lines[0]), prefix=lines[1] if len(lines) > 1 else "")

    return Pending(["rev-parse", "--show-toplevel", "--show-prefix"], folder, parse)


def worktree(folder: Path) -> Worktree:
    return start_worktree(folder).result()


def pathspec(path: str, *, glob: bool = False, exclude: bool = False, top: bool = False) -> str:
    """A git pathspec for ``path``: taken literally, or in git's glob syntax (``*`` and
    ``?`` stay within one path component, ``**/`` spans folders); relative to the folder
    git runs in, or to the top of the work tree (``top``). A folder covers everything
    under it. ``:(top)`` alone is the whole work tree."""
    magic = ["exclude"] if exclude else []
    magic.append("glob" if glob else "literal")
    if top:
        magic.append("top")
    return f":({','.join(magic)}){path}"


WHOLE_TREE = ":(top)"


@record
class GrepHit:
    """One matching line: the file as git names it (raw bytes), its 1-based number, the line."""

    path: bytes
    line: int
    text: bytes


def parse_grep(out: bytes) -> list[GrepHit]:
    """``git grep -z -n`` output: ``PATH\\0LINE\\0TEXT\\n`` per line. A path may hold any
    byte but NUL (newlines too); a line holds no newline, so the newline ends the record."""
    hits: list[GrepHit] = []
    pos, end = 0, len(out)
    find = out.find
    while pos < end:
        path_end = find(b"\0", pos)
        number_end = find(b"\0", path_end + 1) if path_end >= 0 else -1
        if number_end < 0 or not out[path_end + 1 : number_end].isdigit():
            raise GitError(
                "git grep printed output stagegate cannot read; check your git version "
                "(2.19 or newer) and its grep settings in `git config --list`."
            )
        text_end = find(b"\n", number_end + 1)
        if text_end < 0:
            text_end = end
        hits.append(
            GrepHit(
                out[pos:path_end],
                int(out[path_end + 1 : number_end]),
                out[number_end + 1 : text_end],
            )
        )
        pos = text_end + 1
    return hits


def start_grep(
    folder: Path, strings: Iterable[str], pathspecs: Sequence[str], *, every_line: bool = False
) -> Pending[list[GrepHit]]:
    """One ``git grep`` for all ``strings`` (fixed, case-sensitive) in the files git tracks
    in the work tree. The strings come on stdin (``-f -``): any number of them fit, and
    none is read as an option. None may be empty or hold a line break (an empty pattern
    would match every line). ``every_line``: report every line of those files instead
    (for a search git cannot narrow).

    Every file is searched as text (``--text``), whatever ``.gitattributes`` says: a
    ``*.yml -diff`` or ``binary`` attribute must not hide a file from the audit. Files
    that really are binary are left out afterwards by their content (``text_hits``)."""
    patterns = b"".join(s.encode("utf-8") + b"\n" for s in strings)
    select = ["-e", ""] if every_line else ["-f", "-"]
    args = [
        "-c", "grep.column=false",
        "grep", "-z", "-n", "--text", "--no-textconv", "-F", "--no-color", "--full-name",
        *select, "--", *pathspecs,
    ]  # fmt: skip
    return Pending(args, folder, parse_grep, ok=(0, 1), stdin=None if every_line else patterns)


BINARY_PROBE = 8000
"""Bytes git reads to tell a binary file by its content (a NUL among them)."""


def _is_text(path: Path) -> bool:
    """Whether a tracked file reads as text; a symbolic link (git searched its target's
    name) or anything but a regular file counts as text and is never followed."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return True
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        return b"\0" not in os.read(fd, BINARY_PROBE)
    except OSError:
        return True
    finally:
        os.close(fd)


def text_hits(top: Path, hits: Sequence[GrepHit]) -> list[GrepHit]:
    """``hits`` without those in binary files, decided by content as git does (a NUL in
    the first 8,000 bytes), never by attributes. ``top``: the work tree's top folder."""
    verdict: dict[bytes, bool] = {}
    kept = []
    for hit in hits:
        if hit.path not in verdict:
            verdict[hit.path] = _is_text(top / os.fsdecode(hit.path))
        if verdict[hit.path]:
            kept.append(hit)
    return kept


# --------------------------------------------------------------------------- committed content
#
# ``.gitattributes`` can make a checkout hold other bytes than the commit:
# ``working-tree-encoding=UTF-16LE`` writes every checkout in UTF-16 (which git grep of
# the work tree skips as binary, or cannot match) while the blob, and the pull
# request's diff, are UTF-8. For the files such an attribute converts, the committed
# content (the index's blob) is searched too.

CONVERTING = ("working-tree-encoding", "filter", "ident")
"""The attributes that make a checkout's bytes differ from the blob's beyond line ends."""
MAX_ARGS = 2000
"""Paths per command line of the blob search."""


def _ask(args: Sequence[str | bytes], cwd: Path, data: bytes, ok: tuple[int, ...] = (0,)) -> bytes:
    """Run git with ``data`` on stdin, reading and writing at once (never stuck on a full
    pipe); its output."""
    proc = spawn(args, cwd, stdin=True)
    out, err = proc.communicate(data)
    if proc.returncode not in ok:
        raise command_failure(args, cwd, proc.returncode, err)
    return out


def _has_attributes(top: Path) -> bool:
    """Whether any attributes file of the repository itself could convert a file: a
    tracked ``.gitattributes`` anywhere, or ``$GIT_DIR/info/attributes``."""
    listed = _ask(["ls-files", "-z", "--", ":(top,glob)**/.gitattributes"], top, b"")
    if listed.strip(b"\0"):
        return True
    info = _ask(["rev-parse", "--git-path", "info/attributes"], top, b"").strip()
    return (top / os.fsdecode(info)).is_file()


def converted_files(folder: Path, top: Path, pathspecs: Sequence[str]) -> list[bytes]:
    """The tracked files of ``pathspecs`` (from ``folder``) whose checkout an attribute
    converts (``CONVERTING``) and that the work tree has not changed since the index:
    for them the work tree does not show what was committed. Names from the top."""
    if not _has_attributes(top):
        return []
    names = _names(_ask(["ls-files", "-z", "--full-name", "--", *pathspecs], folder, b""))
    if not names:
        return []
    out = _ask(
        ["check-attr", "-z", "--stdin", *CONVERTING], top, b"".join(n + b"\0" for n in names)
    )
    fields = out.split(b"\0")
    converted = list(
        dict.fromkeys(
            fields[i]
            for i in range(0, len(fields) - 2, 3)
            if fields[i + 2] not in (b"unspecified", b"unset", b"")
        )
    )
    changed: set[bytes] = set()
    for at in range(0, len(converted), MAX_ARGS):
        chunk = [pathspec(os.fsdecode(n), top=True) for n in converted[at : at + MAX_ARGS]]
        changed.update(
            _names(_ask(["ls-files", "-z", "-m", "--full-name", "--", *chunk], top, b""))
        )
    return [n for n in converted if n not in changed]


def _binary_blobs(top: Path, paths: Iterable[bytes]) -> set[bytes]:
    """Which of ``paths`` hold a binary blob in the index (a NUL in its first 8,000 bytes,
    git's own test)."""
    wanted = sorted(set(paths))
    if not wanted:
        return set()
    out = _ask(["cat-file", "--batch"], top, b"".join(b":" + p + b"\n" for p in wanted))
    binary: set[bytes] = set()
    pos = 0
    for path in wanted:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split(b" ")
        pos = header_end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue  # missing (or not a blob): nothing was printed beyond the header
        size = int(header[2])
        if b"\0" in out[pos : pos + min(size, BINARY_PROBE)]:
            binary.add(path)
        pos += size + 1
    return binary


def committed_hits(
    folder: Path,
    top: Path,
    strings: Iterable[str],
    pathspecs: Sequence[str],
    hits: Sequence[GrepHit],
    *,
    every_line: bool = False,
) -> list[GrepHit]:
    """``hits`` (of the work tree, ``text_hits``) and those of the same search in the
    committed content of the files whose checkout an attribute converts
    (``converted_files``), each line once, in git's order."""
    converted = converted_files(folder, top, pathspecs)
    if not converted:
        return list(hits)
    patterns = b"".join(s.encode("utf-8") + b"\n" for s in strings)
    select = ["-e", ""] if every_line else ["-f", "-"]
    found: list[GrepHit] = []
    for at in range(0, len(converted), MAX_ARGS):
        chunk = [pathspec(os.fsdecode(n), top=True) for n in converted[at : at + MAX_ARGS]]
        args = [
            "-c", "grep.column=false",
            "grep", "--cached", "-z", "-n", "--text", "--no-textconv", "-F", "--no-color",
            "--full-name", *select, "--", *chunk,
        ]  # fmt: skip
        found += parse_grep(_ask(args, top, b"" if every_line else patterns, ok=(0, 1)))
    binary = _binary_blobs(top, {h.path for h in found})
    seen = {(h.path, h.line) for h in hits}
    merged = list(hits) + [
        h for h in found if h.path not in binary and (h.path, h.line) not in seen
    ]
    return sorted(merged, key=lambda h: (h.path, h.line))  # git's order: the index's


def _names(out: bytes) -> list[bytes]:
    return [name for name in out.split(b"\0") if name]


def start_ls_files(
    folder: Path, include: Sequence[str], exclude: Sequence[str] = ()
) -> Pending[list[bytes]]:
    """The tracked files matching any of ``include`` and none of ``exclude`` (pathspecs;
    raw names, from the top folder).

    The exclusions go first on purpose. ``git ls-files`` prunes the index to the
    leading folder common to its positive pathspecs and then matches exclusions
    against names with that folder cut off, so ``a/b/x a/b/y :(exclude)z`` lists
    nothing (git 2.39). An exclusion in first place makes that common folder empty,
    and every pathspec is matched against the whole name."""
    specs = [*exclude, *include]
    return Pending(["ls-files", "-z", "--full-name", "--", *specs], folder, _names)


@record
class BlameLine:
    """Who last changed one line; ``commit`` is None for a line not committed yet."""

    commit: str | None
    author: str
    email: str
    time: int  # author time, seconds since the epoch; 0 when not committed


_NOT_COMMITTED = BlameLine(commit=None, author="", email="", time=0)


def parse_blame(out: bytes) -> dict[int, BlameLine]:
    """``git blame --line-porcelain`` output -> final line number -> its blame."""
    found: dict[int, BlameLine] = {}
    fields: dict[str, str] = {}
    commit, final = "", 0
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):
            found[final] = (
                _NOT_COMMITTED
                if set(commit) == {"0"}
                else BlameLine(
                    commit=commit,
                    author=fields.get("author", ""),
                    email=fields.get("author-mail", "").strip("<>"),
                    time=int(fields.get("author-time", "0") or 0),
                )
            )
            fields, commit = {}, ""
            continue
        line = raw.decode("utf-8", "replace")
        if not commit:
            parts = line.split(" ")
            if len(parts) >= 3 and len(parts[0]) in (40, 64):
                commit, final = parts[0], int(parts[2])
            continue
        key, _, value = line.partition(" ")
        fields[key] = value
    return found


def changed_since_head(tree: Worktree, paths: Iterable[bytes]) -> frozenset[bytes]:
    """Which of ``paths`` (raw, from the top) hold other content in the work tree than in
    HEAD: every one of them without a commit. Two processes side by side, neither reading
    the index: ``git cat-file --batch-check`` names HEAD's blob of each path, ``git
    hash-object --stdin-paths`` hashes the work-tree file as ``git add`` would. Where the
    two agree, a blame of HEAD says what a blame of the work tree says, without loading
    the index (at 300,000 files a work-tree blame spends about 125 ms on it, a blame of
    HEAD about 2 ms). A path these line-based commands cannot take (a line break in it),
    or any failure, counts as changed: it is blamed in the work tree, as before."""
    wanted = sorted(set(paths))
    plain = [p for p in wanted if b"\n" not in p and b"\r" not in p]
    if not plain:
        return frozenset(wanted)

    asks = [
        (
            ["cat-file", "--batch-check=%(objectname)"],
            b"".join(b"HEAD:" + p + b"\n" for p in plain),
        ),
        (["hash-object", "--stdin-paths"], b"".join(p + b"\n" for p in plain)),
    ]
    procs = [(args, data, spawn(args, tree.top, stdin=True)) for args, data in asks]
    answers = []
    for _args, data, proc in procs:  # communicate: writes and reads at once, never stuck
        out, _err = proc.communicate(data)
        answers.append(out.split(b"\n") if proc.returncode == 0 else None)
    theirs, ours = answers
    if theirs is None or ours is None:
        return frozenset(wanted)
    same = {p for p, a, b in zip(plain, theirs, ours, strict=False) if a and a == b}
    return frozenset(p for p in wanted if p not in same)


def blame_lines(
    tree: Worktree, path: bytes, lines: Iterable[int], *, at_head: bool = False
) -> dict[int, BlameLine]:
    """Blame ``lines`` of the work-tree file ``path`` in one ``git blame`` run (``-L`` per
    line); ``at_head``: of HEAD's version, for a file whose content is HEAD's.

    A file with no committed history (only added to the index, or no commit yet)
    comes back as not committed, line by line."""
    wanted = sorted(set(lines))
    args: list[str | bytes] = ["blame", "--line-porcelain"]
    for n in wanted:
        args += ["-L", f"{n},{n}"]
    if at_head:
        args.append("HEAD")
    args += ["--", path]
    proc = spawn(args, tree.top)
    out, err = proc.communicate()
    if proc.returncode == 0:
        return parse_blame(out)
    said = git_said(err)
    if "no such path" in said or "bad revision 'HEAD'" in said or "no such ref" in said:
        return dict.fromkeys(wanted, _NOT_COMMITTED)
    raise command_failure(args, tree.top, proc.returncode, err)


def blame_many(
    tree: Worktree, wanted: Mapping[bytes, Iterable[int]]
) -> dict[tuple[bytes, int], BlameLine]:
    """Blame many files side by side: one ``git blame`` per file, a few at a time, of HEAD's
    version for a file unchanged since HEAD (``changed_since_head``)."""
    from concurrent.futures import ThreadPoolExecutor

    items = sorted((path, sorted(set(lines))) for path, lines in wanted.items())
    if not items:
        return {}
    edited = changed_since_head(tree, wanted)
    workers = max(1, min(len(items), 2 * (os.cpu_count() or 2)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(
            pool.map(
                lambda item: blame_lines(tree, item[0], item[1], at_head=item[0] not in edited),
                items,
            )
        )
    return {
        (path, n): info
        for (path, _), found in zip(items, results, strict=True)
        for n, info in found.items()
    }
