"""One repository: refs, merge bases, diffs, a file's history, temporary worktrees."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from stagegate.errors import GitError, UsageError
from stagegate.git.objects import GitSource, Objects
from stagegate.git.run import FETCH_HINT, command_failure, git_said, run, status
from stagegate.records import record

if TYPE_CHECKING:
    pass


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
    """A git work tree (never bare) and its repository, as one command sees it: a ref is
    resolved once per ``Repository`` (stagegate moves no ref; a command that asks twice
    what ``HEAD`` or the base names gets one answer)."""

    __slots__ = ("_objects", "_resolved", "_shallow", "root")

    def __init__(self, root: Path) -> None:
        self.root = root  # the work tree's top folder, symbolic links resolved
        self._shallow: bool | None = None
        self._objects: Objects | None = None
        self._resolved: dict[str, str] = {}
        """The commit each ref resolved names (``HEAD`` included, by ``head`` too)."""

    def __repr__(self) -> str:
        return f"Repository(root={self.root!r})"

    def git(self, *args: str, action: str = "") -> str:
        """``git ARGS`` at the top of the work tree: its output; GitError if it fails."""
        return run(args, self.root, action=action)

    def objects(self) -> Objects:
        """The repository's object reader (one ``git cat-file --batch``, started once)."""
        if self._objects is None:
            self._objects = Objects(self.root)
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
        found = self._commit_of(ref)
        if found is not None:
            return found
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
        """The checked-out commit (HEAD may be detached); None before the first commit.
        The question ``resolve("HEAD")`` asks: one answer serves both."""
        return self._commit_of("HEAD")

    def _commit_of(self, ref: str) -> str | None:
        """The commit ``ref`` names, as ``git rev-parse --verify REF^{commit}`` finds it;
        None if none (unknown, ambiguous, missing from a shallow clone, not a commit).
        Asked of the object reader's process, which the commands that resolve a ref
        read objects with anyway: no git process a ref (``continuity`` resolved three)."""
        known = self._resolved.get(ref)
        if known is None:
            found = self.objects().ask(f"{ref}^{{commit}}")
            if found is not None and found[0] == "commit":
                known = self._resolved[ref] = found[1]
        return known

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
        code, _out, err = status(args, self.root)
        if code in (0, 1):
            return code == 0
        raise command_failure(
            args, self.root, code, err,
            action=f"compare {ancestor[:12]} and {descendant[:12]}",
        )  # fmt: skip

    def merge_base(self, a: str, b: str, *, shown: tuple[str, str]) -> str:
        """The best common ancestor of two commits; a GitError with the fix if there is none."""
        code, found, _err = status(["merge-base", a, b], self.root)
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

    def changed_paths(self, base: str, head: str) -> list[str]:
        """Every path that differs between two commits, from the top of the repository:
        added, changed, deleted, and a renamed file under its old and its new name (as
        ``--no-renames`` lists it: a deletion and an addition, which is what a planner
        needs, without the cost of finding renames)."""
        out = self.git(
            "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--ignore-submodules=none", base, head, "--",
            action=f"compare {base[:12]} with {head[:12]}",
        )  # fmt: skip
        return [name for name in out.split("\0") if name]

    def links(self, *commits: str) -> list[tuple[str, str]]:
        """The symbolic links of the commits' trees as git stores them: (link path, target
        text), each once."""
        found: dict[tuple[str, str], None] = {}
        objects = self.objects()
        for commit in dict.fromkeys(commits):
            out = self.git(
                "ls-tree", "-r", "-z", "--full-tree", commit,
                action=f"list the files of {commit[:12]}",
            )  # fmt: skip
            for entry in out.split("\0"):
                if not entry.startswith("120000 "):
                    continue
                meta, _, path = entry.partition("\t")
                kind, data = objects.read(meta.split()[2], action=f"read the link {path}")
                if kind == "blob":
                    found.setdefault((path, data.decode("utf-8", "surrogateescape")))
        return list(found)

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
    # One git process answers all three; where there is no work tree (a bare repository,
    # the inside of .git), git prints the first two answers, then fails on the third.
    args = ["rev-parse", "--is-bare-repository", "--absolute-git-dir"]
    code, out, err = status([*args, "--show-toplevel"], probe)
    lines = out.split("\n")
    bare, git_dir = [*lines, ""][:2]
    if code != 0 and len(lines) < 2:
        if "not a git repository" in git_said(err).lower():
            raise outside
        raise command_failure(args, probe, code, err)
    if bare.strip() == "true":
        raise GitError(
            f"{git_dir} is a bare repository; run stagegate inside a work tree "
            "(a clone with its files checked out)."
        )
    if code != 0:
        raise command_failure(["rev-parse", "--show-toplevel"], probe, code, err)
    # a line break in a path makes the lines ambiguous: then the top is asked alone
    top = lines[2] if len(lines) == 3 else run(["rev-parse", "--show-toplevel"], probe)
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
