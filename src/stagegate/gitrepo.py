"""Every git operation stagegate performs, and the one place GitPython is imported.

GitPython is imported inside the functions that need it, so commands that never
touch git (``status``, ``advance``) start without it. Every failure becomes a
``GitError`` (exit 3) whose message says what to do: run inside a work tree,
fetch the missing ref, deepen a shallow clone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from .errors import GitError

if TYPE_CHECKING:
    import git

FETCH_HINT = (
    "in GitHub Actions, give actions/checkout `fetch-depth: 0` "
    "(or fetch the base: `git fetch origin <base>`)"
)
_LINK_MODE = 0o120000
_MAX_LINKS = 40


def _stderr(error: Any) -> str:
    text = getattr(error, "stderr", "") or str(error)
    text = " ".join(str(text).split())
    for prefix in ("stderr: ", "'", '"'):
        text = text.removeprefix(prefix)
    return text.rstrip("'\"")[:300]


@contextmanager
def _translated(action: str) -> Iterator[None]:
    """Turn any GitPython failure inside the block into a GitError naming ``action``."""
    import git

    try:
        yield
    except GitError:
        raise
    except git.GitCommandNotFound:
        raise GitError(
            f"cannot {action}: the `git` program is not installed or not on PATH; install git."
        ) from None
    except (git.GitError, ValueError, OSError) as error:
        raise GitError(f"cannot {action}: {_stderr(error)}") from None


@dataclass(frozen=True, slots=True)
class FileVersion:
    """One commit in the history of a file, and the file's path at that commit."""

    commit: str
    author: str
    email: str
    date: str  # ISO 8601, the author date
    subject: str
    path: str


@dataclass(slots=True)
class Repository:
    """A git work tree (never bare) and its repository."""

    repo: git.Repo
    root: Path  # the work tree's top folder, symbolic links resolved
    _shallow: bool | None = field(default=None, repr=False)

    # -- refs and commits

    def is_shallow(self) -> bool:
        if self._shallow is None:
            with _translated("inspect the repository"):
                self._shallow = self.repo.git.rev_parse("--is-shallow-repository") == "true"
        return self._shallow

    def resolve(self, ref: str) -> str:
        """The full commit id ``ref`` names; a GitError saying how to fetch it if unknown.

        Asks git itself (not GitPython's own parser), so a commit that is named but
        missing, such as the parent of a shallow clone's tip, counts as unknown."""
        import git

        if not ref or ref.startswith("-"):
            raise GitError(f"{ref!r} is not a git ref; pass a branch, tag or commit id.")
        try:
            found = self.repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
        except git.GitCommandError:
            found = ""
        if found.strip():
            return str(found.strip())
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
        """The checked-out commit (HEAD may be detached)."""
        with _translated("read HEAD"):
            return str(self.repo.head.commit.hexsha) if self.repo.head.is_valid() else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        import git

        try:
            self.repo.git.merge_base("--is-ancestor", ancestor, descendant)
        except git.GitCommandError as error:
            if error.status == 1:
                return False
            raise GitError(
                f"cannot compare {ancestor[:12]} and {descendant[:12]}: {_stderr(error)}"
            ) from None
        return True

    def merge_base(self, a: str, b: str, *, shown: tuple[str, str]) -> str:
        """The best common ancestor of two commits; a GitError with the fix if there is none."""
        import git

        try:
            found = self.repo.git.merge_base(a, b).strip()
        except git.GitCommandError:
            found = ""
        if found:
            return str(found)
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
        with _translated("read the work tree's status"):
            return bool(self.repo.git.status("--porcelain", "--untracked-files=no").strip())

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

    # -- objects

    def source(self, commit: str, prefix: PurePosixPath | str = "") -> GitSource:
        """The files of ``commit`` under ``prefix``, for ``load.load(path, source=...)``."""
        with _translated(f"read commit {commit[:12]}"):
            tree = self.repo.commit(commit).tree
        return GitSource(tree=tree, commit=commit, prefix=PurePosixPath(prefix))

    def tree_id(self, commit: str, path: PurePosixPath | str) -> str | None:
        """The object id at ``path`` in ``commit`` (a tree or blob), None if absent."""
        try:
            return GitSource(tree=self.repo.commit(commit).tree, commit=commit).object_id(str(path))
        except (FileNotFoundError, NotADirectoryError):
            return None

    # -- history

    def file_history(self, path: PurePosixPath | str) -> list[FileVersion]:
        """The commits that changed ``path`` (following renames), newest first.

        Merges whose result equals one parent's are left out, as ``git log`` does, so a
        change merged from a branch is listed at the commit that made it."""
        import git

        fmt = "%x1e%H%x1f%an%x1f%ae%x1f%aI%x1f%s"
        try:
            out = self.repo.git.log(
                "--follow", "-z", "--name-only", f"--format={fmt}", "--", str(path)
            )
        except git.GitCommandError as error:
            raise GitError(f"cannot read the history of {path}: {_stderr(error)}") from None
        versions: list[FileVersion] = []
        for record in out.split("\x1e"):
            if not record.strip("\x00\n"):
                continue
            header, _, rest = record.partition("\x00")
            names = [n for n in rest.strip("\n").split("\x00") if n.strip("\n")]
            sha, author, email, date, subject = (header.split("\x1f") + [""] * 5)[:5]
            versions.append(
                FileVersion(
                    commit=sha,
                    author=author,
                    email=email,
                    date=date,
                    subject=subject,
                    path=names[-1].strip("\n") if names else str(path),
                )
            )
        return versions

    # -- trees for checks that read files

    @contextmanager
    def checkout_elsewhere(self, commit: str) -> Iterator[Path]:
        """A temporary work tree of ``commit`` (``git worktree``), removed afterwards.

        The user's own work tree and index are not touched; hooks do not run."""
        parent = Path(tempfile.mkdtemp(prefix="stagegate-"))
        target = parent / "tree"
        with _translated(f"check out {commit[:12]} into a temporary folder"):
            self.repo.git.execute(
                [
                    "git",
                    "-c",
                    "core.hooksPath=/dev/null",
                    "worktree",
                    "add",
                    "--detach",
                    "--quiet",
                    str(target),
                    commit,
                ]
            )
        try:
            yield target
        finally:
            # Cleanup must not hide the outcome of what ran in the tree.
            with suppress(Exception):
                self.repo.git.worktree("remove", "--force", str(target))
            shutil.rmtree(parent, ignore_errors=True)
            with suppress(Exception):
                self.repo.git.worktree("prune")


def open_repository(start: Path | str = ".") -> Repository:
    """The repository whose work tree holds ``start``; GitError with the fix otherwise."""
    import git

    where = Path(start)
    probe = where if where.is_dir() else where.parent
    if not str(probe):
        probe = Path(".")
    try:
        repo = git.Repo(probe, search_parent_directories=True)
    except git.GitCommandNotFound:
        raise GitError("the `git` program is not installed or not on PATH; install git.") from None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{probe.resolve()} is not in a git repository; run stagegate inside a git work "
            "tree (a clone of your repository), or `git init` one."
        ) from None
    if repo.bare or repo.working_tree_dir is None:
        raise GitError(
            f"{repo.git_dir} is a bare repository; run stagegate inside a work tree "
            "(a clone with its files checked out)."
        )
    try:
        has_commits = repo.head.is_valid()
    except (git.GitError, ValueError):
        has_commits = False
    if not has_commits:
        raise GitError(
            f"the repository at {repo.working_tree_dir} has no commits yet; commit "
            "migration.yaml and the stage files first."
        )
    return Repository(repo=repo, root=Path(repo.working_tree_dir).resolve())


@dataclass(frozen=True, slots=True)
class GitSource:
    """The files of one commit, read from git objects: no checkout, work tree untouched.

    Paths are relative to ``prefix`` (the folder of migration.yaml in the repository).
    Symbolic links stored in the commit are followed inside the commit's tree; one that
    leads outside ``prefix`` counts as escaping, as for files in the work tree."""

    tree: Any  # git.Tree
    commit: str
    prefix: PurePosixPath = PurePosixPath(".")  # noqa: RUF009 - immutable

    def _parts(self, rel: str) -> list[str]:
        base = [] if str(self.prefix) in ("", ".") else list(self.prefix.parts)
        return base + [p for p in PurePosixPath(rel).parts if p not in ("", ".")]

    def _walk(self, parts: list[str]) -> tuple[Any, list[str]]:
        """Follow ``parts`` from the top of the tree: (object, its real path) or raise.

        ValueError: the path leaves the repository; FileNotFoundError: it does not exist;
        NotADirectoryError: a file is used as a folder."""
        pending = list(parts)
        done: list[str] = []
        node: Any = self.tree
        links = 0
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not done:
                    raise ValueError("leaves the repository")
                done.pop()
                node = self.tree.join("/".join(done)) if done else self.tree
                continue
            if node.type != "tree":
                raise NotADirectoryError("/".join([*done, name]))
            try:
                child = node[name]
            except KeyError:
                raise FileNotFoundError("/".join([*done, name])) from None
            if child.type == "blob" and child.mode == _LINK_MODE:
                links += 1
                if links > _MAX_LINKS:
                    raise FileNotFoundError("/".join([*done, name]))
                target = child.data_stream.read().decode("utf-8", "surrogateescape")
                if target.startswith("/"):
                    raise ValueError("absolute symbolic link")
                pending = [p for p in target.split("/")] + pending
                continue
            if child.type not in ("tree", "blob"):
                raise FileNotFoundError("/".join([*done, name]))  # a submodule: not our files
            done.append(name)
            node = child
        return node, done

    def _inside(self, real: list[str]) -> bool:
        base = [] if str(self.prefix) in ("", ".") else list(self.prefix.parts)
        return real[: len(base)] == base

    def _get(self, rel: str) -> Any:
        try:
            node, real = self._walk(self._parts(rel))
        except ValueError:
            raise FileNotFoundError(rel) from None
        if not self._inside(real):
            raise FileNotFoundError(rel)
        return node

    def read(self, rel: str) -> bytes:
        node = self._get(rel)
        if node.type == "tree":
            raise IsADirectoryError(rel)
        data: bytes = node.data_stream.read()
        return data

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        node = self._get(rel)
        if node.type != "tree":
            raise NotADirectoryError(rel)
        entries = []
        for item in node:
            is_dir = item.type == "tree"
            if item.type == "blob" and item.mode == _LINK_MODE:
                try:
                    is_dir = self._get(f"{rel}/{item.name}").type == "tree"
                except (FileNotFoundError, NotADirectoryError):
                    is_dir = False
            if item.type in ("tree", "blob"):
                entries.append((str(item.name), is_dir))
        return entries

    def escapes(self, rel: str) -> bool:
        try:
            _node, real = self._walk(self._parts(rel))
        except ValueError:
            return True
        except (FileNotFoundError, NotADirectoryError):
            return False
        return not self._inside(real)

    def object_id(self, rel: str) -> str:
        """The id of the tree or blob at ``rel`` (for cheap equality tests)."""
        return str(self._get(rel).hexsha)

    def files(self, rel: str) -> dict[str, bytes]:
        """Every file under folder ``rel``, by path relative to it (links not followed)."""
        node = self._get(rel)
        if node.type != "tree":
            raise NotADirectoryError(rel)
        out: dict[str, bytes] = {}
        for item in node.traverse():
            if item.type == "blob" and item.mode != _LINK_MODE:
                out[PurePosixPath(item.path).relative_to(node.path).as_posix()] = (
                    item.data_stream.read()
                )
        return out
