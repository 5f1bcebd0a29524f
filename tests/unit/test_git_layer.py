"""The one git layer: every git command stagegate runs gets one environment, and only
git's own failures become git errors.

- ``git status`` (the command that takes git's optional index lock) runs with
  ``GIT_OPTIONAL_LOCKS=0``: it leaves the index as it was, where a plain
  ``git status`` rewrites it.
- A ``GIT_DIR``, ``GIT_WORK_TREE`` or ``GIT_INDEX_FILE`` in the caller's environment
  (a git hook exports them) does not reach git: stagegate answers for the repository
  that holds the migration file, in-process and in the audit's side-by-side commands.
- A ``ValueError`` raised in our own code while reading git's answer is a bug: exit
  70, not a git error (exit 3).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import Repo, git_env, pin_git, small_repo
from stagegate.git import objects, run, search
from stagegate.git import repo as git_repo

Sg = Callable[..., Result]


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _dirty_stat(repo: Repo) -> bytes:
    """Make the index's stat data of a tracked file stale (content unchanged), so that
    a ``git status`` allowed to take the optional lock rewrites the index; the index's
    bytes before that."""
    index = repo.root / ".git" / "index"
    before = index.read_bytes()
    path = repo.root / "migration.yaml"
    path.write_bytes(path.read_bytes())  # same bytes, new mtime and ctime
    stat = path.stat()
    import os

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    return before


def test_git_status_leaves_the_index_alone(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "repo")
    before = _dirty_stat(repo)
    assert git_repo.open_repository(repo.root).tracked_changes() is False
    assert (repo.root / ".git" / "index").read_bytes() == before

    # The control: the same git status without GIT_OPTIONAL_LOCKS=0 does rewrite it,
    # so the assertion above can fail.
    subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=repo.root,
        env=git_env(),
        check=True,
        capture_output=True,
    )
    assert (repo.root / ".git" / "index").read_bytes() != before


def test_every_git_command_gets_optional_locks_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even when the caller asks for optional locks, and for each command of a
    ``verify-pr``-like sequence, the audit's and the object reader's."""
    repo = small_repo(tmp_path / "repo")
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "1")
    seen: list[tuple[list[str], dict[str, str]]] = []
    real = subprocess.Popen

    def recording(argv: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(([str(a) for a in argv], dict(kwargs["env"])))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    opened = git_repo.open_repository(repo.root)
    assert opened.tracked_changes() is False
    head = opened.resolve("HEAD")
    assert opened.source(head).read("migration.yaml") == (repo.root / "migration.yaml").read_bytes()
    assert opened.file_history("migration.yaml")[0].commit == head
    assert search.worktree(repo.root).top == opened.root
    commands = {argv[1] for argv, _env in seen}
    assert {"status", "rev-parse", "cat-file", "log"} <= commands
    for argv, env in seen:
        assert env["GIT_OPTIONAL_LOCKS"] == "0", argv
        assert env["LC_ALL"] == "C", argv


def _other_repository(tmp_path: Path) -> Repo:
    other = small_repo(tmp_path / "other")
    other.write("migration.yaml", "not: the migration\n")
    other.commit("Another repository's history")
    return other


def _leak(monkeypatch: pytest.MonkeyPatch, other: Repo, tmp_path: Path) -> None:
    """What a git hook running in ``other`` exports to the programs it starts."""
    monkeypatch.setenv("GIT_DIR", str(other.root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.root))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "no-such-index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(other.root / ".git" / "objects"))


def test_the_callers_git_dir_work_tree_and_index_do_not_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = small_repo(tmp_path / "repo")
    other = _other_repository(tmp_path)
    ours = repo.git("rev-parse", "HEAD").strip()
    _leak(monkeypatch, other, tmp_path)

    opened = git_repo.open_repository(repo.root)
    assert opened.root == repo.root.resolve()
    assert opened.head() == ours
    assert opened.resolve("HEAD") == ours
    assert opened.tracked_changes() is False  # our index, not the missing one
    assert [v.commit for v in opened.file_history("migration.yaml")] == [ours]
    assert opened.source(ours).read("migration.yaml") == (repo.root / "migration.yaml").read_bytes()
    # The audit's side-by-side commands.
    tree = search.worktree(repo.root / "stages")
    assert tree.top == repo.root.resolve() and tree.prefix == "stages/"
    listed = search.start_ls_files(repo.root, [search.WHOLE_TREE]).result()
    assert b"migration.yaml" in listed
    assert listed == [name.encode() for name in repo.git("ls-files", "-z").split("\0") if name]


@pytest.mark.parametrize("name", ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"])
def test_git_env_drops_repository_variables(name: str) -> None:
    env = run.git_env({name: "/elsewhere", "PATH": "/bin", "GIT_CONFIG_GLOBAL": "/g"})
    assert name not in env
    assert env["PATH"] == "/bin"
    assert env["GIT_CONFIG_GLOBAL"] == "/g"  # where the user's configuration is: kept
    assert env["GIT_OPTIONAL_LOCKS"] == "0"


def test_log_from_inside_another_repositorys_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sg: Sg
) -> None:
    repo = small_repo(tmp_path / "repo")
    other = _other_repository(tmp_path)
    _leak(monkeypatch, other, tmp_path)
    ours, theirs = (r.git("rev-parse", "HEAD").strip()[:12] for r in (repo, other))
    result = sg("log", cwd=repo.root)
    assert result.code == 0, result.output
    assert ours != theirs
    assert result.out == (
        f"migration.yaml: created at stage 0 in {ours} (2023-11-14T22:14:20+00:00, "
        "Ada Flipper <ada@example.com>)\n0 stage flips, oldest first:\n"
    )


def _bug(*_args: object, **_kwargs: object) -> object:
    raise ValueError("our parser misread git's output")


@pytest.mark.parametrize(
    ("command", "module", "parser"),
    [
        (("log",), git_repo, "parse_log"),
        (("verify-pr", "--base", "base"), objects, "_parse_tree"),
        (("audit",), search, "parse_grep"),
    ],
)
def test_a_value_error_in_our_parsing_is_a_bug_not_a_git_error(
    command: tuple[str, ...],
    module: object,
    parser: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sg: Sg,
) -> None:
    repo = small_repo(tmp_path / "repo")
    repo.git("branch", "-q", "base")
    repo.edit(  # something for the audit to find
        "migration.yaml",
        "  broad:\n    when: not narrow\n",
        "  broad:\n    when: not narrow\n    legacy: {references: [BROAD_GLOB]}\n",
    )
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write("ci/release.sh", "select BROAD_GLOB\n")
    repo.commit("Flip to stage 1")
    monkeypatch.setattr(module, parser, _bug)
    monkeypatch.setenv("STAGEGATE_TRACEBACK", "")
    result = sg(*command, cwd=repo.root)
    assert result.code == 70, result.output
    assert "internal error (a bug): ValueError: our parser misread git's output" in result.err


def test_git_failures_are_still_git_errors(tmp_path: Path, sg: Sg) -> None:
    """The other side of the line: git's own failure (an unknown base) stays exit 3."""
    repo = small_repo(tmp_path / "repo")
    result = sg("verify-pr", "--base", "no-such-branch", cwd=repo.root)
    assert result.code == 3, result.output
    assert "unknown git ref 'no-such-branch'" in result.err


def test_a_ref_names_the_commit_git_rev_parse_names(tmp_path: Path) -> None:
    """Refs are resolved through the object reader's `git cat-file --batch`, not a
    `git rev-parse` each: every kind of name gives rev-parse's answer, and a name
    rev-parse refuses (ambiguous, not a commit, past the root, unknown) is unknown."""
    repo = Repo(tmp_path)
    repo.git("init", "-q", "-b", "main")
    repo.write("a.txt", "1\n")
    first = repo.commit("first")
    repo.write("a.txt", "2\n")
    second = repo.commit("second")
    repo.git("tag", "-a", "v1", "-m", "annotated", first)
    repo.git("branch", "feature", first)
    repo.git("tag", "feature", second)  # a branch and a tag of one name: rev-parse warns, picks
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    names = [
        "HEAD", "main", "HEAD~1", "HEAD^", "v1", "refs/tags/v1", "feature",
        "refs/heads/feature", second[:7], second, f"{first}", "main@{0}",
        tree, "HEAD~2", "v1~1", "nosuch", "HEAD:a.txt", "",
    ]  # fmt: skip
    for name in names:
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"],
            cwd=tmp_path, env=git_env(), capture_output=True, text=True, check=False,
        )  # fmt: skip
        expected = proc.stdout.strip() if proc.returncode == 0 else None
        fresh = git_repo.Repository(tmp_path.resolve())
        if expected is None:
            with pytest.raises(git_repo.GitError):
                fresh.resolve(name)
        else:
            assert fresh.resolve(name) == expected, name
    assert git_repo.Repository(tmp_path.resolve()).head() == second


@pytest.mark.parametrize("name", ["HEAD\0x", "HEAD ", "no such", "HEAD\nHEAD", "HEAD ^{tree}"])
def test_a_ref_git_cannot_name_is_unknown_not_another_commit(tmp_path: Path, name: str) -> None:
    """A NUL or a line break would make git read another name (the C string, the line);
    a name with spaces that git has no object for is told by how its answer ends (the
    answer repeats the name): each is an unknown ref, never HEAD and never a crash."""
    repo = Repo(tmp_path)
    repo.git("init", "-q", "-b", "main")
    repo.write("a.txt", "1\n")
    repo.commit("first")
    with pytest.raises(git_repo.GitError, match="unknown git ref"):
        git_repo.Repository(tmp_path.resolve()).resolve(name)


def test_a_missing_path_with_a_space_is_a_missing_file(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.git("init", "-q", "-b", "main")
    repo.write("a b.txt", "1\n")
    head = repo.commit("first")
    reader = objects.Objects(tmp_path)
    assert reader.read(f"{head}:a b.txt", action="read a b.txt") == ("blob", b"1\n")
    with pytest.raises(git_repo.GitError, match="no such object"):
        reader.read(f"{head}:a c.txt", action="read a c.txt")
    with pytest.raises(git_repo.GitError, match="is not an object name"):
        reader.read(f"{head}:a b.txt\0x", action="read it")
