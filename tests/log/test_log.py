"""stagegate log: the stage flips from the git history of migration.yaml."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, init, pin_git, small_repo, write_small

Sg = Callable[..., Result]


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _flip(repo: Repo, old: int, new: int, message: str) -> str:
    repo.edit("migration.yaml", f"\nstage: {old}\n", f"\nstage: {new}\n")
    return repo.commit(message)


def test_log_lists_each_flip_with_commit_date_author_and_title(tmp_path: Path, sg: Sg) -> None:
    repo = small_repo(tmp_path / "repo")
    first = _flip(repo, 0, 1, "Narrow the release glob")
    repo.write("README.md", "unrelated\n")
    repo.commit("Docs")
    repo.edit("migration.yaml", "summary: Extra", "summary: More extra")
    repo.commit("Reword the summary (no flip)")
    second = _flip(repo, 1, 2, "Extra wheels")
    third = _flip(repo, 2, 1, "Roll back: the extras broke the docs build")
    created = repo.git("rev-list", "--max-parents=0", "HEAD").strip()
    result = sg("log", cwd=repo.root)
    assert result.code == 0, result.output
    who = "Ada Flipper <ada@example.com>"
    assert result.out == (
        f"migration.yaml: created at stage 0 in {created[:12]} (2023-11-14T22:14:20+00:00, {who})\n"
        "3 stage flips, oldest first:\n"
        f"  {first[:12]}  2023-11-14T22:15:20+00:00  {who}  0 -> 1  Narrow the release glob\n"
        f"  {second[:12]}  2023-11-14T22:18:20+00:00  {who}  1 -> 2  Extra wheels\n"
        f"  {third[:12]}  2023-11-14T22:19:20+00:00  {who}  2 -> 1  Narrow the release glob\n"
    )
    assert result.err == ""


def test_log_as_json(tmp_path: Path, sg: Sg) -> None:
    repo = small_repo(tmp_path / "repo")
    _flip(repo, 0, 1, "One")
    _flip(repo, 1, 3, "Jump")
    result = sg("log", "--format", "json", cwd=repo.root)
    assert result.code == 0
    report = json.loads(result.out)
    assert report["file"] == "migration.yaml"
    assert report["start"]["stage"] == 0
    assert report["start"]["date"] == "2023-11-14T22:14:20+00:00"
    assert [(f["from"], f["to"], f["direction"], f["subject"]) for f in report["flips"]] == [
        (0, 1, "advance", "One"),
        (1, 3, "jump", "Jump"),
    ]
    assert report["flips"][1]["title"] == "The end state"
    assert report["flips"][0]["author"] == "Ada Flipper"
    assert report["flips"][0]["email"] == "ada@example.com"
    assert len(report["flips"][0]["commit"]) == 40


def test_log_follows_renames_and_skips_unreadable_versions(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    (repo.root / "migration.yaml").rename(repo.root / "plan.yaml")
    repo.commit("Start as plan.yaml")
    repo.edit("plan.yaml", "\nstage: 0\n", "\nstage: 1\n")
    repo.commit("Flip under the old name")
    repo.git("mv", "plan.yaml", "migration.yaml")
    repo.commit("Rename")
    text = repo.read("migration.yaml")
    repo.write("migration.yaml", "stage: [broken\n")
    broken = repo.commit("Break it")
    repo.write("migration.yaml", text.replace("\nstage: 1\n", "\nstage: 2\n"))
    repo.commit("Fix it and flip")
    result = sg("log", cwd=repo.root)
    assert result.code == 0, result.output
    assert "0 -> 1  Narrow the release glob" in result.out
    assert "1 -> 2  Extra wheels" in result.out
    assert f"skipped {broken[:12]}: migration.yaml:" in result.out
    assert "2 stage flips" in result.out


def test_log_outside_a_repository(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path)
    result = sg("log", cwd=tmp_path)
    assert result.code == 3
    assert "not in a git repository; run stagegate inside a git work tree" in result.err


def test_log_of_a_file_never_committed(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    repo.write("README.md", "x\n")
    repo.commit("Start")
    write_small(repo.root)
    result = sg("log", cwd=repo.root)
    assert result.code == 3
    assert "migration.yaml has no history in this repository" in result.err


def test_log_in_a_shallow_clone_says_the_history_is_cut(tmp_path: Path, sg: Sg) -> None:
    origin = small_repo(tmp_path / "repo")
    _flip(origin, 0, 1, "One")
    _flip(origin, 1, 2, "Two")
    clone = tmp_path / "clone"
    Repo(tmp_path).git("clone", "-q", "--depth", "1", f"file://{origin.root}", str(clone))
    result = sg("log", cwd=clone)
    assert result.code == 0
    assert "created" not in result.out  # where the shallow history starts is no creation
    assert (
        "at stage 2 in " in result.out and "where this shallow clone's history starts" in result.out
    )
    assert "0 stage flips" in result.out
    assert "this clone is shallow" in result.out


@pytest.mark.parametrize("command", [("log",), ("verify-pr", "--base", "HEAD~1")])
def test_a_folder_passed_as_the_migration_file_is_a_usage_error(
    tmp_path: Path, sg: Sg, command: tuple[str, ...]
) -> None:
    """git answers for every file in a folder; its history is not the migration's."""
    repo = init(tmp_path / "repo")
    write_small(repo.root / "sub")
    repo.commit("Start")
    repo.edit("sub/migration.yaml", "\nstage: 0\n", "\nstage: 1\n")
    repo.commit("One")
    result = sg("-f", "sub", *command, cwd=repo.root)
    assert result.code == 2, result.output
    assert "sub: is a directory; pass the migration file with -f PATH." in result.err


def test_a_commit_merged_beside_a_flip_is_not_a_flip(tmp_path: Path, sg: Sg) -> None:
    """A flip made on a branch, while main edits another line of the file: git lists
    main's edit after the flip by date, yet it changes no stage."""
    repo = small_repo(tmp_path / "repo")
    repo.git("switch", "-q", "-c", "flip")
    flip = _flip(repo, 0, 1, "Flip to stage 1")
    repo.git("switch", "-q", "main")
    repo.edit("migration.yaml", "summary: The end state.", "summary: The final state.")
    repo.commit("Reword a flag summary")
    repo.clock += 60
    repo.git("merge", "-q", "--no-edit", "flip")
    assert "\nstage: 1\n" in repo.read("migration.yaml")
    result = sg("log", "--format", "json", cwd=repo.root)
    assert result.code == 0, result.output
    flips = json.loads(result.out)["flips"]
    assert [(f["commit"], f["from"], f["to"]) for f in flips] == [(flip, 0, 1)]
