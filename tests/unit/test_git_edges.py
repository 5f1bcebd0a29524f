"""verify-pr, log and audit in the git situations CI and people produce.

Each situation gets the same three commands; each answer is either the normal
result or a one-line git error with exit 3 that says what to do.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, init, pin_git, small_repo, write_small

Sg = Callable[..., Result]
COMMANDS = {
    "verify-pr": ("verify-pr", "--base", "main"),
    "log": ("log",),
    "audit": ("audit",),
}


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def flip(repo: Repo, to: int, rel: str = "migration.yaml") -> None:
    repo.edit(rel, f"stage: {to - 1}\n", f"stage: {to}\n")
    repo.commit(f"Flip to stage {to}")


def assert_normal(command: str, result: Result) -> None:
    """What each command says when all is well on the small migration."""
    assert result.code == 0, result.output
    expected = {
        "verify-pr": "verify-pr: accepted.",
        "log": "stage flip",
        "audit": "ok: nothing retired at or before stage",
    }[command]
    assert expected in result.out, result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_a_detached_head(command: str, tmp_path: Path, sg: Sg) -> None:
    repo = small_repo(tmp_path / "repo")
    repo.git("branch", "-q", "base")
    flip(repo, 1)
    repo.git("checkout", "-q", "--detach", "HEAD")
    args = ("verify-pr", "--base", "base") if command == "verify-pr" else COMMANDS[command]
    assert_normal(command, sg(*args, cwd=repo.root))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_linked_worktree(command: str, tmp_path: Path, sg: Sg) -> None:
    """``git worktree add``: .git is a file pointing elsewhere; everything still works."""
    repo = small_repo(tmp_path / "repo")
    flip(repo, 1)
    repo.git("worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")
    feature = Repo(tmp_path / "feature")
    flip(feature, 2)
    assert (feature.root / ".git").is_file()
    assert_normal(command, sg(*COMMANDS[command], cwd=feature.root))


@pytest.mark.parametrize("command", ["verify-pr", "log"])
def test_a_repository_without_commits(command: str, tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.git("add", "-A")
    result = sg(*COMMANDS[command], cwd=repo.root)
    assert result.code == 3, result.output
    assert result.err.strip() == (
        f"the repository at {repo.root} has no commits yet; commit migration.yaml and the "
        "stage files first."
    )


def test_audit_without_commits_searches_the_files_git_tracks(tmp_path: Path, sg: Sg) -> None:
    """The audit reads the index, so it works before the first commit."""
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit(
        "migration.yaml",
        "  broad:\n    when: not narrow\n",
        "  broad:\n    when: not narrow\n    legacy: {references: [BROAD_GLOB]}\n",
    )
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write("ci/release.sh", "select BROAD_GLOB\n")
    repo.git("add", "-A")
    result = sg("audit", cwd=repo.root)
    assert result.code == 1, result.output
    assert "ci/release.sh:1: select BROAD_GLOB" in result.out


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bare_repository(command: str, tmp_path: Path, sg: Sg) -> None:
    """Even with the migration's files copied into it: no work tree, so exit 3."""
    origin = small_repo(tmp_path / "origin")
    flip(origin, 1)
    bare = tmp_path / "bare.git"
    Repo(tmp_path).git("clone", "-q", "--bare", str(origin.root), str(bare))
    shutil.copy(origin.root / "migration.yaml", bare / "migration.yaml")
    shutil.copytree(origin.root / "stages", bare / "stages")
    result = sg(*COMMANDS[command], cwd=bare)
    assert result.code == 3, result.output
    what = {
        "audit": ": this git repository has no work tree (a bare clone?)",
    }.get(command, " is a bare repository")
    assert result.err == (
        f"{bare}{what}; run stagegate inside a work tree (a clone with its files checked out).\n"
    )


def test_a_bare_repository_without_the_files_is_a_missing_file(tmp_path: Path, sg: Sg) -> None:
    origin = small_repo(tmp_path / "origin")
    Repo(tmp_path).git("clone", "-q", "--bare", str(origin.root), str(tmp_path / "bare.git"))
    result = sg("audit", cwd=tmp_path / "bare.git")
    assert result.code == 2
    assert result.err == (
        "migration.yaml: no such file; run stagegate in the folder that holds migration.yaml or "
        "one below it in its git repository, or pass -f PATH (or set $STAGEGATE_FILE); looked "
        f"in {tmp_path / 'bare.git'} and the folders above it up to the repository's top.\n"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_paths_with_spaces_and_newlines(command: str, tmp_path: Path, sg: Sg) -> None:
    """The repository and the migration's folder both have a space and a line break."""
    repo = init(tmp_path / "my repo\nsecond line")
    folder = "ci dir\nwith newline"
    write_small(repo.root / folder)
    repo.commit("Add the migration")
    repo.git("branch", "-q", "base")
    flip(repo, 1, f"{folder}/migration.yaml")
    args = ("verify-pr", "--base", "base") if command == "verify-pr" else COMMANDS[command]
    result = sg(*args, cwd=repo.root / folder)
    assert_normal(command, result)
    if command == "log":
        assert "0 -> 1" in result.out


def test_outside_any_repository(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path / "plain")
    for command, args in COMMANDS.items():
        result = sg(*args, cwd=tmp_path / "plain")
        assert result.code == 3, (command, result.output)
        assert result.err == f"{tmp_path / 'plain'} is not in a git repository" + (
            " (git said: fatal: not a git repository (or any of the parent directories): .git)."
            " stagegate searches the files git tracks: run it inside a clone of your repository"
            " (cd into it, or pass -f path/to/migration.yaml), or create one with `git init`"
            " and commit the files.\n"
            if command == "audit"
            else "; run stagegate inside a git work tree (a clone of your repository), or "
            "`git init` one.\n"
        ), command
