"""Every git operation stagegate performs: the one module that runs git.

Every command goes through one runner, ``_spawn``: the ``git`` executable with one
environment (``git_env``: git's messages in English, no optional locks, none of the
caller's ``GIT_DIR``-like variables) and stdout/stderr as bytes. Commands that can
run side by side are started as ``Pending`` and collected with ``result()``; a
command whose exit code is an answer (``merge-base --is-ancestor``) uses ``_status``.
One translator, ``_command_failure``, turns git's own failures (it could not start,
or exited with a code the caller did not expect) into a ``GitError`` (exit 3) whose
message says what to do: run inside a work tree, fetch the missing ref, deepen a
shallow clone. Nothing else is caught here, so a bug in our own parsing surfaces as
an internal error (exit 70), never as a git error.

GitPython is not used (nor a dependency): its ``Repo``
reads the caller's ``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_OBJECT_DIRECTORY`` while
it discovers a repository, and its ``Git.execute`` starts every process from a copy
of ``os.environ`` that can be added to but not taken from, so it cannot give the one
environment above. Objects of a commit (``GitSource``) are read through one
``git cat-file --batch`` process per repository, on the same runner.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Generic, TypeVar

from .errors import GitError, UsageError
from .records import record

if TYPE_CHECKING:
    from subprocess import Popen

T = TypeVar("T")

FETCH_HINT = (
    "in GitHub Actions, give actions/checkout `fetch-depth: 0` "
    "(or fetch the base: `git fetch origin <base>`)"
)
_LINK_MODE = 0o120000
_TREE_MODE = 0o040000
_SUBMODULE_MODE = 0o160000
_MAX_LINKS = 40


# --------------------------------------------------------------------------- the one runner

KEPT_GIT_VARIABLES = frozenset(
    {
        # where git and its configuration are: the user chose them for every git command
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_COUNT",
        # how far up git may look for a repository
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        # reaching a remote (a `git fetch` in a worktree's hooks is none of ours, but
        # credentials and certificates are the user's settings, not repository state)
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
    }
)
"""The caller's ``GIT_*`` variables that reach git; every other one is dropped."""


def git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git command stagegate runs.

    The caller's, without the ``GIT_*`` variables that say which repository, work
    tree or index to use (a git hook exports ``GIT_DIR``, ``GIT_WORK_TREE`` and
    ``GIT_INDEX_FILE``: stagegate must answer for the repository holding the
    migration file, as pre-commit does); with git's messages in English (some are
    read below) and no optional locks, so a concurrent ``git commit`` never trips
    over a ``git status`` of ours."""
    source = os.environ if environ is None else environ
    env = {
        key: value
        for key, value in source.items()
        if not key.startswith("GIT_")
        or key in KEPT_GIT_VARIABLES
        or key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def _said(raw: bytes) -> str:
    lines = raw.decode("utf-8", "replace").strip().splitlines()
    return "; ".join(line.strip() for line in lines[-3:] if line.strip())


def _command_failure(
    args: Sequence[str | bytes], cwd: Path, code: int, err: bytes, *, action: str = ""
) -> GitError:
    """The one translation of a failed git command into what the user should do.

    ``action`` (``"read the history of x"``) phrases the message as "cannot ...";
    without it the message names the command."""
    said = _said(err)
    cwd = Path(os.path.abspath(cwd))
    if "not a git repository" in said.lower():
        return GitError(
            f"{cwd} is not in a git repository (git said: {said}). stagegate searches the "
            "files git tracks: run it inside a clone of your repository (cd into it, or pass "
            "-f path/to/migration.yaml), or create one with `git init` and commit the files."
        )
    if "must be run in a work tree" in said:
        return GitError(
            f"{cwd}: this git repository has no work tree (a bare clone?); run stagegate "
            "inside a work tree (a clone with its files checked out)."
        )
    if "dubious ownership" in said:
        return GitError(
            f"{cwd}: git refuses to work in this repository: {said}. Follow git's advice "
            "(`git config --global --add safe.directory ...`) and run stagegate again."
        )
    if action:
        return GitError(f"cannot {action}: {said or f'git exited with {code}'}"[:400])
    shown = " ".join(os.fsdecode(a) for a in args)
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return GitError(
        f"`git {shown}` failed in {cwd} (exit {code})" + (f": {said}" if said else "") + "."
    )


def _spawn(args: Sequence[str | bytes], cwd: Path, *, stdin: bool = False) -> Popen[bytes]:
    """Start ``git ARGS`` in ``cwd``: the one place a git process is started."""
    import subprocess

    argv: list[str | bytes] = ["git", *args]
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except FileNotFoundError:
        if not cwd.is_dir():
            raise GitError(
                f"{cwd}: no such folder; pass -f with the path of migration.yaml."
            ) from None
        raise GitError("the `git` program is not installed or not on PATH; install git.") from None
    except OSError as exc:
        raise GitError(f"cannot run git in {cwd}: {exc.strerror or exc}.") from None


class Pending(Generic[T]):
    """A running git command; ``result()`` waits for it and parses its output.

    An exit code outside ``ok`` is git's failure, translated by ``_command_failure``
    (phrased with ``action`` when given); whatever ``parse`` raises is ours and passes
    through untouched."""

    def __init__(
        self,
        args: Sequence[str | bytes],
        cwd: Path,
        parse: Callable[[bytes], T],
        *,
        ok: tuple[int, ...] = (0,),
        stdin: bytes | None = None,
        action: str = "",
    ) -> None:
        self._proc = _spawn(args, cwd, stdin=stdin is not None)
        self._args, self._cwd, self._parse, self._ok = args, cwd, parse, ok
        self._action = action
        if stdin is not None and self._proc.stdin is not None:
            # Written now, so that git starts working while we start the next command.
            try:
                self._proc.stdin.write(stdin)
                self._proc.stdin.close()
            except BrokenPipeError:
                pass  # git stopped early; result() reports why
            self._proc.stdin = None

    def result(self) -> T:
        out, err = self._proc.communicate()
        if self._proc.returncode not in self._ok:
            raise _command_failure(
                self._args, self._cwd, self._proc.returncode, err, action=self._action
            )
        return self._parse(out)

    def cancel(self) -> None:
        """Stop the command (when another one failed and its result is not wanted)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def _text(out: bytes) -> str:
    """A command's output as text, without the final line break (names keep any byte)."""
    return os.fsdecode(out.removesuffix(b"\n"))


def run(args: Sequence[str | bytes], cwd: Path, *, action: str = "") -> str:
    """``git ARGS`` in ``cwd``, waited for: its output as text; GitError if it fails."""
    return Pending(args, cwd, _text, action=action).result()


def _status(args: Sequence[str | bytes], cwd: Path) -> tuple[int, str, bytes]:
    """``git ARGS`` whose exit code is an answer: (exit code, output, stderr)."""
    proc = _spawn(args, cwd)
    out, err = proc.communicate()
    return proc.returncode, _text(out), err


# --------------------------------------------------------------------------- one repository


@record
class FileVersion:
    """One commit in the history of a file, and the file's path at that commit."""

    commit: str
    author: str
    email: str
    date: str  # ISO 8601, the author date
    subject: str
    path: str


_LOG_FORMAT = "%x1e%H%x1f%an%x1f%ae%x1f%aI%x1f%s"


def parse_log(out: str, path: str) -> list[FileVersion]:
    """``git log -z --name-only --format=_LOG_FORMAT`` output -> the versions it lists."""
    versions: list[FileVersion] = []
    for entry in out.split("\x1e"):
        if not entry.strip("\x00\n"):
            continue
        header, _, rest = entry.partition("\x00")
        names = [n for n in rest.strip("\n").split("\x00") if n.strip("\n")]
        sha, author, email, date, subject = (header.split("\x1f") + [""] * 5)[:5]
        versions.append(
            FileVersion(
                commit=sha,
                author=author,
                email=email,
                date=date,
                subject=subject,
                path=names[-1].strip("\n") if names else path,
            )
        )
    return versions


def parse_diff(out: str) -> dict[str, set[int]]:
    """``git diff -U0 --src-prefix=a/ --dst-prefix=b/`` output -> the added or changed
    lines of each file that has some."""
    import re

    changed: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in out.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = changed.setdefault(name[2:], set()) if name.startswith("b/") else None
        elif line.startswith("@@") and current is not None:
            hunk = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            if hunk:
                start, count = int(hunk[1]), int(hunk[2] or 1)
                current.update(range(start, start + count))
    return {name: lines for name, lines in changed.items() if lines}


class Repository:
    """A git work tree (never bare) and its repository."""

    __slots__ = ("_objects", "_shallow", "root")

    def __init__(self, root: Path) -> None:
        self.root = root  # the work tree's top folder, symbolic links resolved
        self._shallow: bool | None = None
        self._objects: _Objects | None = None

    def __repr__(self) -> str:
        return f"Repository(root={self.root!r})"

    def git(self, *args: str, action: str = "") -> str:
        """``git ARGS`` at the top of the work tree: its output; GitError if it fails."""
        return run(args, self.root, action=action)

    def objects(self) -> _Objects:
        """The repository's object reader (one ``git cat-file --batch``, started once)."""
        if self._objects is None:
            self._objects = _Objects(self.root)
        return self._objects

    # -- refs and commits

    def is_shallow(self) -> bool:
        if self._shallow is None:
            answer = self.git(
                "rev-parse", "--is-shallow-repository", action="inspect the repository"
            )
            self._shallow = answer.strip() == "true"
        return self._shallow

    def shallow_boundary(self) -> frozenset[str]:
        """The commits where a shallow clone's history stops (their parents were not fetched)."""
        if not self.is_shallow():
            return frozenset()
        where = Path(
            self.git("rev-parse", "--git-path", "shallow", action="inspect the repository")
        )
        try:
            text = (where if where.is_absolute() else self.root / where).read_text()
        except OSError:
            return frozenset()
        return frozenset(text.split())

    def resolve(self, ref: str) -> str:
        """The full commit id ``ref`` names; a GitError saying how to fetch it if unknown.

        Asks git itself, so a commit that is named but missing, such as the parent of a
        shallow clone's tip, counts as unknown."""
        if not ref or ref.startswith("-"):
            raise GitError(f"{ref!r} is not a git ref; pass a branch, tag or commit id.")
        code, found, _err = _status(
            ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], self.root
        )
        if code == 0 and found.strip():
            return found.strip()
        relative = any(c in ref for c in "~^@:")
        if ref.startswith("origin/"):
            branch = ref.removeprefix("origin/")
            fetch = f"`git fetch origin {branch}:refs/remotes/origin/{branch}`"
        else:
            fetch = f"`git fetch origin {ref}`"
        if self.is_shallow():
            how = "run `git fetch --unshallow`" + ("" if relative else f" or {fetch}")
            raise GitError(
                f"unknown git ref {ref!r}: this clone of {self.root} is shallow, so older "
                f"commits are missing; {how}. {FETCH_HINT[0].upper()}{FETCH_HINT[1:]}."
            )
        how = "check the name (`git log --oneline`)" if relative else f"fetch it with {fetch}"
        raise GitError(
            f"unknown git ref {ref!r}: no commit by that name in {self.root}; {how}. "
            f"{FETCH_HINT[0].upper()}{FETCH_HINT[1:]}."
        )

    def head(self) -> str | None:
        """The checked-out commit (HEAD may be detached); None before the first commit."""
        code, found, err = _status(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], self.root)
        if code == 0 and found.strip():
            return found.strip()
        if code == 1:
            return None
        raise _command_failure(["rev-parse", "HEAD"], self.root, code, err, action="read HEAD")

    def first_parent(self, commit: str) -> str | None:
        """The first parent ``commit`` records; None for a root commit. Read from the
        commit object itself, so a shallow clone's boundary names its (missing) parent."""
        kind, data = self.objects().read(commit, action=f"read commit {commit[:12]}")
        if kind != "commit":
            raise GitError(f"cannot read commit {commit[:12]}: it is a {kind}, not a commit")
        for line in data.split(b"\n"):
            if not line:
                break  # the end of the header
            if line.startswith(b"parent "):
                return line[7:].decode("ascii").strip()
        return None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        args = ["merge-base", "--is-ancestor", ancestor, descendant]
        code, _out, err = _status(args, self.root)
        if code in (0, 1):
            return code == 0
        raise _command_failure(
            args, self.root, code, err,
            action=f"compare {ancestor[:12]} and {descendant[:12]}",
        )  # fmt: skip

    def merge_base(self, a: str, b: str, *, shown: tuple[str, str]) -> str:
        """The best common ancestor of two commits; a GitError with the fix if there is none."""
        code, found, _err = _status(["merge-base", a, b], self.root)
        if code == 0 and found.strip():
            return found.strip()
        if self.is_shallow():
            raise GitError(
                f"{shown[0]} and {shown[1]} have no common history in this shallow clone: the "
                f"commits between them were not fetched. Run `git fetch --unshallow` (or "
                f"`git fetch --deepen=N`); {FETCH_HINT}."
            )
        raise GitError(
            f"{shown[0]} and {shown[1]} share no history (unrelated histories); compare a "
            "pull request with the branch it was made from."
        )

    def tracked_changes(self) -> bool:
        """Whether tracked files in the work tree differ from HEAD."""
        out = self.git(
            "status", "--porcelain", "--untracked-files=no",
            action="read the work tree's status",
        )  # fmt: skip
        return bool(out.strip())

    def rel(self, path: Path) -> PurePosixPath:
        """``path`` (a work-tree path) relative to the top of the work tree."""
        absolute = Path(os.path.abspath(path))
        real = absolute.parent.resolve() / absolute.name
        try:
            return PurePosixPath(real.relative_to(self.root).as_posix())
        except ValueError:
            raise GitError(
                f"{path} is outside the git work tree {self.root}; run stagegate in the "
                "repository that holds the migration."
            ) from None

    def changed_lines(self, base: str, head: str | None = None) -> dict[str, set[int]]:
        """The lines that ``head`` (default: the work tree) added or changed since ``base``,
        per file (POSIX paths from the top of the work tree), as a pull request's diff
        shows them."""
        args = ["diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames"]
        args += ["--src-prefix=a/", "--dst-prefix=b/", base]  # whatever diff.noprefix says
        out = self.git(*args, *([head] if head else []), action=f"compare with {base[:12]}")
        return parse_diff(out)

    # -- objects

    def source(self, commit: str, prefix: PurePosixPath | str = "") -> GitSource:
        """The files of ``commit`` under ``prefix``, for ``load.load(path, source=...)``."""
        objects = self.objects()
        kind, data = objects.read(commit, action=f"read commit {commit[:12]}")
        if kind != "commit" or not data.startswith(b"tree "):
            raise GitError(f"cannot read commit {commit[:12]}: it is a {kind}, not a commit")
        tree = data[5 : data.index(b"\n")].decode("ascii")
        return GitSource(objects=objects, tree=tree, commit=commit, prefix=PurePosixPath(prefix))

    # -- history

    def file_history(self, path: PurePosixPath | str) -> list[FileVersion]:
        """The commits that changed ``path`` (following renames), newest first.

        Merges whose result equals one parent's are left out, as ``git log`` does, so a
        change merged from a branch is listed at the commit that made it."""
        out = self.git(
            "log", "--follow", "-z", "--name-only", f"--format={_LOG_FORMAT}", "--", str(path),
            action=f"read the history of {path}",
        )  # fmt: skip
        return parse_log(out, str(path))

    # -- trees for checks that read files

    @contextmanager
    def checkout_elsewhere(self, commit: str) -> Iterator[Path]:
        """A temporary work tree of ``commit`` (``git worktree``), removed afterwards.

        The user's own work tree and index are not touched; hooks do not run."""
        import tempfile

        parent = Path(tempfile.mkdtemp(prefix="stagegate-"))
        target = parent / "tree"
        self.git(
            "-c", "core.hooksPath=/dev/null",
            "worktree", "add", "--detach", "--quiet", str(target), commit,
            action=f"check out {commit[:12]} into a temporary folder",
        )  # fmt: skip
        try:
            yield target
        finally:
            # Cleanup must not hide the outcome of what ran in the tree.
            with suppress(GitError):
                self.git("worktree", "remove", "--force", str(target))
            import shutil

            shutil.rmtree(parent, ignore_errors=True)
            with suppress(GitError):
                self.git("worktree", "prune")


def open_repository(start: Path | str = ".") -> Repository:
    """The repository whose work tree holds ``start``; GitError with the fix otherwise."""
    where = Path(start)
    probe = where if where.is_dir() else where.parent
    if not str(probe):
        probe = Path(".")
    outside = GitError(
        f"{probe.resolve()} is not in a git repository; run stagegate inside a git work "
        "tree (a clone of your repository), or `git init` one."
    )
    if not probe.is_dir():
        raise outside
    args = ["rev-parse", "--is-bare-repository", "--absolute-git-dir"]
    code, out, err = _status(args, probe)
    if code != 0:
        if "not a git repository" in _said(err).lower():
            raise outside
        raise _command_failure(args, probe, code, err)
    bare, git_dir = [*out.split("\n"), ""][:2]
    if bare.strip() == "true":
        raise GitError(
            f"{git_dir} is a bare repository; run stagegate inside a work tree "
            "(a clone with its files checked out)."
        )
    top = run(["rev-parse", "--show-toplevel"], probe)
    repo = Repository(root=Path(top).resolve())
    if repo.head() is None:
        raise GitError(
            f"the repository at {top} has no commits yet; commit "
            "migration.yaml and the stage files first."
        )
    return repo


def open_migration(file: str) -> tuple[Repository, PurePosixPath]:
    """The repository that holds the migration file ``file``, and the file's path in it.

    The file need not exist in the work tree (``log`` reads a deleted file's history),
    but a folder is refused: git would answer for every file in it."""
    path = Path(file)
    if path.is_dir():
        raise UsageError(f"{file}: is a directory; pass the migration file with -f PATH.")
    repo = open_repository(path.parent)
    return repo, repo.rel(path)


# --------------------------------------------------------------------------- objects of a commit


class _Objects:
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

            self._proc = _spawn(["cat-file", "--batch"], self._root, stdin=True)
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
            raise _command_failure(
                ["cat-file", "--batch"], self._root, proc.returncode or 1, err,
                action=f"read {name[:40]} from git's object store",
            )  # fmt: skip
        fields = header.split()
        if len(fields) != 3:  # "<name> missing" / "ambiguous"
            return None
        data = proc.stdout.read(int(fields[2]) + 1)[:-1]
        return fields[1].decode("ascii"), fields[0].decode("ascii"), data

    def read(self, name: str, *, action: str) -> tuple[str, bytes]:
        """(type, content) of the object ``name`` (an id or ``REV:PATH``); GitError if none."""
        if "\n" in name:
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

    objects: _Objects
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
    procs = [(args, data, _spawn(args, tree.top, stdin=True)) for args, data in asks]
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
    proc = _spawn(args, tree.top)
    out, err = proc.communicate()
    if proc.returncode == 0:
        return parse_blame(out)
    said = _said(err)
    if "no such path" in said or "bad revision 'HEAD'" in said or "no such ref" in said:
        return dict.fromkeys(wanted, _NOT_COMMITTED)
    raise _command_failure(args, tree.top, proc.returncode, err)


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
