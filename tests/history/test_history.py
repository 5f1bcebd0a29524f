"""stagegate history: every stage, done, current or ahead, with its flip and readiness.

The whole life of a migration with readiness is in tests/lifecycle; here: the small
migration's history, its formats and its errors."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, pin_git, small_repo

Sg = Callable[..., Result]


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _flip(repo: Repo, old: int, new: int, message: str) -> str:
    repo.edit("migration.yaml", f"\nstage: {old}\n", f"\nstage: {new}\n")
    return repo.commit(message)


def _when(repo: Repo, commit: str) -> str:
    return repo.git("show", "-s", "--format=%cI", commit).strip()


def test_history_marks_each_stage_and_the_flips_that_reached_them(tmp_path: Path, sg: Sg) -> None:
    repo = small_repo(tmp_path / "repo")
    start = repo.git("rev-parse", "HEAD").strip()
    one = _flip(repo, 0, 1, "Narrow the release glob")
    two = _flip(repo, 1, 2, "Extra wheels")
    back = _flip(repo, 2, 1, "Roll back the extra wheels")
    result = sg("history", cwd=repo.root)
    assert result.code == 0, result.output
    assert result.out.splitlines() == [
        "small: stage 1 of 3",
        f"  done      0  before the migration     since {start[:12]} ({_when(repo, start)})",
        f"> current   1  Narrow the release glob  rolled back to it in {back[:12]} "
        f"({_when(repo, back)})",
        "  ahead     2  Extra wheels             nothing in the repository to check",
        "  ahead     3  The end state            nothing in the repository to check",
    ]
    assert one and two
    data = json.loads(sg("history", "--format", "json", cwd=repo.root).out)
    assert data["stage"] == 1 and data["last"] == 3
    assert data["stages"][2]["readiness"] == {"ready": True, "error": None, "checks": []}
    assert data["stages"][2]["flip"] is None


def test_history_on_github_writes_a_step_summary(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = small_repo(tmp_path / "repo")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = sg("history", "--format", "github", cwd=repo.root)
    assert result.code == 0, result.output
    assert result.out.startswith("small: stage 0 of 3\n> current   0  before the migration")
    text = summary.read_text()
    assert text.startswith("### stagegate history\n\nsmall: stage 0 of 3.\n\n| stage | state |")
    assert "| 0 | **current** | before the migration | since " in text


def test_history_outside_git_is_a_git_error(tmp_path: Path, sg: Sg) -> None:
    repo = small_repo(tmp_path / "repo")
    plain = tmp_path / "plain"
    shutil.copytree(repo.root, plain, ignore=shutil.ignore_patterns(".git"))
    result = sg("history", cwd=plain)
    assert result.code == 3, result.output
    assert "git" in result.err
    # the control: the same files in a repository give the history
    assert sg("history", cwd=repo.root).code == 0
