"""The objects of a commit, read through one ``git cat-file --batch`` process per repository.

``GitSource`` is a commit's files as a ``load.sources.Source``: symbolic links are followed
inside the commit's tree, never out of it.
"""

from __future__ import annotations

import threading
from contextlib import suppress
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from stagegate.errors import GitError
from stagegate.git.run import command_failure, spawn
from stagegate.records import record

if TYPE_CHECKING:
    from subprocess import Popen


_LINK_MODE = 0o120000
_TREE_MODE = 0o040000
_SUBMODULE_MODE = 0o160000
_MAX_LINKS = 40

# --------------------------------------------------------------------------- objects of a commit


class Objects:
    """One ``git cat-file --batch`` process: any object by name, read on demand.

    Started on first use, on the one runner; it ends when stagegate does (git reads
    its stdin to the end). Trees are parsed once and kept. Thread-safe."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._proc: Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._trees: dict[str, dict[str, tuple[int, str]]] = {}

    def _ask(self, name: str) -> tuple[str, str, bytes] | None:
        if self._proc is None:
            import weakref

            self._proc = spawn(["cat-file", "--batch"], self._root, stdin=True)
            weakref.finalize(self, _close, self._proc)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # git ended: the header read below is empty
        header = proc.stdout.readline()
        if not header:
            _out, err = proc.communicate()
            self._proc = None
            raise command_failure(
                ["cat-file", "--batch"], self._root, proc.returncode or 1, err,
                action=f"read {name[:40]} from git's object store",
            )  # fmt: skip
        if header.endswith((b" missing\n", b" ambiguous\n")):  # "<name> missing": the
            return None  # name may hold spaces, so it is told by the end of the line
        fields = header.split()
        data = proc.stdout.read(int(fields[2]) + 1)[:-1]
        return fields[1].decode("ascii"), fields[0].decode("ascii"), data

    def ask(self, name: str) -> tuple[str, str, bytes] | None:
        """(type, id, content) of the object ``name`` (any name ``git rev-parse`` takes,
        on one line); None where git has none by that name (or the name is ambiguous)."""
        if "\n" in name or "\0" in name:
            return None
        with self._lock:
            return self._ask(name)

    def read(self, name: str, *, action: str) -> tuple[str, bytes]:
        """(type, content) of the object ``name`` (an id or ``REV:PATH``); GitError if none."""
        if "\n" in name or "\0" in name:  # git would read another name (the line, the C string)
            raise GitError(f"cannot {action}: {name!r} is not an object name")
        with self._lock:
            found = self._ask(name)
        if found is None:
            raise GitError(
                f"cannot {action}: git has no such object; fetch it (`git fetch origin`), "
                f"or deepen a shallow clone (`git fetch --unshallow`)"
            )
        return found[0], found[2]

    def tree(self, sha: str) -> dict[str, tuple[int, str]]:
        """The entries of tree ``sha``: name -> (mode, id), in git's order."""
        entries = self._trees.get(sha)
        if entries is None:
            kind, data = self.read(sha, action=f"read tree {sha[:12]}")
            if kind != "tree":
                raise GitError(f"cannot read tree {sha[:12]}: it is a {kind}")
            entries = _parse_tree(data, len(sha) // 2)
            self._trees[sha] = entries
        return entries


def _close(proc: Popen[bytes]) -> None:
    with suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    with suppress(Exception):
        proc.wait(timeout=5)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _parse_tree(data: bytes, width: int) -> dict[str, tuple[int, str]]:
    """A raw tree object (``MODE SP NAME NUL ID`` per entry, the id ``width`` bytes)."""
    entries: dict[str, tuple[int, str]] = {}
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        mode = int(data[pos:space], 8)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries[name] = (mode, data[nul + 1 : nul + 1 + width].hex())
        pos = nul + 1 + width
    return entries


class _Escapes(Exception):
    """A path leaves the commit's tree (``..`` above the top, or an absolute link).

    Its own class, not ValueError: a ValueError while reading objects is a bug and
    must not pass for a missing file."""


@record
class _Node:
    mode: int
    sha: str

    @property
    def type(self) -> str:
        if self.mode == _TREE_MODE:
            return "tree"
        return "commit" if self.mode == _SUBMODULE_MODE else "blob"


@record
class GitSource:
    """The files of one commit, read from git objects: no checkout, work tree untouched.

    Paths are relative to ``prefix`` (the folder of migration.yaml in the repository).
    Symbolic links stored in the commit are followed inside the commit's tree; one that
    leads outside ``prefix`` counts as escaping, as for files in the work tree."""

    objects: Objects
    tree: str  # the id of the commit's top tree
    commit: str
    prefix: PurePosixPath = PurePosixPath(".")

    def _parts(self, rel: str) -> list[str]:
        base = [] if str(self.prefix) in ("", ".") else list(self.prefix.parts)
        return base + [p for p in PurePosixPath(rel).parts if p not in ("", ".")]

    def _at(self, real: list[str]) -> _Node:
        """The node at a real path (no links in it) from the top of the tree."""
        node = _Node(_TREE_MODE, self.tree)
        for name in real:
            node = _Node(*self.objects.tree(node.sha)[name])
        return node

    def _walk(self, parts: list[str]) -> tuple[_Node, list[str]]:
        """Follow ``parts`` from the top of the tree: (object, its real path) or raise.

        _Escapes: the path leaves the repository; FileNotFoundError: it does not exist;
        NotADirectoryError: a file is used as a folder."""
        pending = list(parts)
        done: list[str] = []
        node = _Node(_TREE_MODE, self.tree)
        links = 0
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not done:
                    raise _Escapes("leaves the repository")
                done.pop()
                node = self._at(done)
                continue
            if node.type != "tree":
                raise NotADirectoryError("/".join([*done, name]))
            entry = self.objects.tree(node.sha).get(name)
            if entry is None:
                raise FileNotFoundError("/".join([*done, name]))
            child = _Node(*entry)
            if child.mode == _LINK_MODE:
                links += 1
                if links > _MAX_LINKS:
                    raise FileNotFoundError("/".join([*done, name]))
                target = self._blob(child).decode("utf-8", "surrogateescape")
                if target.startswith("/"):
                    raise _Escapes("absolute symbolic link")
                pending = [p for p in target.split("/")] + pending
                continue
            if child.type not in ("tree", "blob"):
                raise FileNotFoundError("/".join([*done, name]))  # a submodule: not our files
            done.append(name)
            node = child
        return node, done

    def _blob(self, node: _Node) -> bytes:
        _kind, data = self.objects.read(node.sha, action=f"read {self.commit[:12]}'s files")
        return data

    def _inside(self, real: list[str]) -> bool:
        base = [] if str(self.prefix) in ("", ".") else list(self.prefix.parts)
        return real[: len(base)] == base

    def _get(self, rel: str) -> _Node:
        try:
            node, real = self._walk(self._parts(rel))
        except _Escapes:
            raise FileNotFoundError(rel) from None
        if not self._inside(real):
            raise FileNotFoundError(rel)
        return node

    def read(self, rel: str) -> bytes:
        node = self._get(rel)
        if node.type == "tree":
            raise IsADirectoryError(rel)
        return self._blob(node)

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` is a file of the commit (links followed inside it), as its tree
        says: the file itself is not read."""
        try:
            return self._get(rel).type == "blob"
        except (FileNotFoundError, NotADirectoryError):
            return False

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        node = self._get(rel)
        if node.type != "tree":
            raise NotADirectoryError(rel)
        entries = []
        for name, entry in self.objects.tree(node.sha).items():
            item = _Node(*entry)
            is_dir = item.type == "tree"
            if item.mode == _LINK_MODE:
                try:
                    is_dir = self._get(f"{rel}/{name}").type == "tree"
                except (FileNotFoundError, NotADirectoryError):
                    is_dir = False
            if item.type in ("tree", "blob"):
                entries.append((name, is_dir))
        return entries

    def escapes(self, rel: str) -> bool:
        try:
            _node, real = self._walk(self._parts(rel))
        except _Escapes:
            return True
        except (FileNotFoundError, NotADirectoryError):
            return False
        return not self._inside(real)

    def object_id(self, rel: str) -> str:
        """The id of the tree or blob at ``rel`` (for cheap equality tests)."""
        return self._get(rel).sha

    def files(self, rel: str) -> dict[str, bytes]:
        """Every file under folder ``rel``, by path relative to it (links not followed)."""
        node = self._get(rel)
        if node.type != "tree":
            raise NotADirectoryError(rel)
        out: dict[str, bytes] = {}
        todo: list[tuple[str, str]] = [("", node.sha)]
        while todo:
            where, sha = todo.pop(0)
            for name, entry in self.objects.tree(sha).items():
                item = _Node(*entry)
                path = f"{where}{name}"
                if item.type == "tree":
                    todo.append((f"{path}/", item.sha))
                elif item.type == "blob" and item.mode != _LINK_MODE:
                    out[path] = self._blob(item)
        return out
