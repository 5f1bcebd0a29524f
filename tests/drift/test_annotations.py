"""Drift annotations land on the workflow line the pull request changed (the upload
step's line), not on the unchanged migration.yaml line of the producer it no longer
makes: `drift --format github`, the `workflows` check and verify-pr."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, Result
from scratch import Repo, init, pin_git

Sg = Callable[..., Result]

BUILD = ".github/workflows/build.yml"
STEP = "          name: ${{ env.NAME }}-${{ github.sha }}-tests"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """The drift fixture committed on main, its stage 1 checking the workflows; a branch
    `pr` checked out."""
    pin_git(monkeypatch)
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "drift" / "repo", root)
    stage = root / "stages" / "01-new-layout.yaml"
    stage.write_text(stage.read_text() + "acceptance:\n  - check: workflows\n")
    repo = init(root)
    repo.commit("The migration and its workflows")
    repo.git("switch", "-q", "-c", "pr")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(root))
    return repo


def rename_the_upload(repo: Repo) -> int:
    """The pull request renames the tests upload; the step's line."""
    path = repo.root / BUILD
    lines = path.read_text().splitlines()
    line = lines.index(STEP) + 1
    path.write_text(path.read_text().replace(STEP, STEP.replace("-tests", "-test")))
    return line


def errors(out: str) -> dict[str, str]:
    """title kind -> 'file:line' of each ::error."""
    found = {}
    for match in re.finditer(
        r"^::error file=([^,]+),line=(\d+),col=\d+,title=([^:]+)::", out, re.M
    ):
        found[match[3].split("%3A ")[-1]] = f"{match[1]}:{match[2]}"
    return found


def test_drift_annotations_on_the_changed_step(
    repo: Repo, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = rename_the_upload(repo)
    repo.commit("Rename the tests upload")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    result = sg("drift", "--format", "github", cwd=repo.root)
    assert result.code == 1
    assert errors(result.out) == {
        "undeclared-upload": f"{BUILD}:{line}",
        "missing-upload": f"{BUILD}:{line}",  # not migration.yaml's line of producer tests
    }
    # the text names the producer's own line, as before
    assert "migration.yaml:30: missing-upload: producer tests" in result.out


def test_outside_a_pull_request_the_producer_line(repo: Repo, sg: Sg) -> None:
    line = rename_the_upload(repo)
    repo.commit("Rename the tests upload")
    result = sg("drift", "--format", "github", cwd=repo.root)
    assert errors(result.out) == {
        "undeclared-upload": f"{BUILD}:{line}",
        "missing-upload": "migration.yaml:30",
    }


def test_the_workflows_check_annotates_the_changed_step(
    repo: Repo, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = rename_the_upload(repo)
    repo.commit("Rename the tests upload")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    result = sg("check", "--stage", "1", "--format", "github", cwd=repo.root)
    assert result.code == 1
    places = re.findall(r"^::error file=([^,]+),line=(\d+)", result.out, re.M)
    assert places == [(BUILD, str(line)), (BUILD, str(line))], result.out


def test_verify_pr_annotates_the_changed_step(repo: Repo, sg: Sg) -> None:
    line = rename_the_upload(repo)
    migration = repo.root / "migration.yaml"
    migration.write_text(migration.read_text().replace("\nstage: 0\n", "\nstage: 1\n"))
    repo.commit("Flip to stage 1, renaming the tests upload")
    result = sg("verify-pr", "--base", "main", "--format", "github", cwd=repo.root)
    assert result.code == 1
    places = re.findall(
        r"^::error file=([^,]+),line=(\d+),col=\d+,title=stagegate workflows", result.out, re.M
    )
    assert places == [(BUILD, str(line)), (BUILD, str(line))], result.out


def test_the_workflow_side_a_finding_names(
    repo: Repo, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A download the consumer's job makes through a composite action, changed by the pull
    request: select-differs names it as its workflow side, and lands there."""
    action = repo.root / ".github" / "actions" / "fetch" / "action.yml"
    lines = action.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if '--name "demo-${kind}' in text)
    action.write_text(action.read_text().replace('"demo-${kind}', '"demox-${kind}'))
    repo.commit("Rename what the action downloads")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    drift = sg("drift", "--format", "github", cwd=repo.root)
    assert errors(drift.out) == {"select-differs": f".github/actions/fetch/action.yml:{line}"}
    checked = sg("check", "--stage", "1", "--format", "github", cwd=repo.root)
    places = re.findall(r"^::error file=([^,]+),line=(\d+)", checked.out, re.M)
    assert places == [(".github/actions/fetch/action.yml", str(line))], checked.out
    monkeypatch.delenv("GITHUB_BASE_REF")
    assert errors(sg("drift", "--format", "github", cwd=repo.root).out) == {
        "select-differs": "migration.yaml:52"
    }


def test_a_changed_download_that_is_not_the_first(
    repo: Repo, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """select-differs of consumer test: the pull request changes the job's own download
    (not the first download the finding names, which comes through an action)."""
    ci = repo.root / ".github" / "workflows" / "ci.yml"
    lines = ci.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "-linux-64-${{ github.sha }}" in text)
    ci.write_text(
        ci.read_text().replace("-linux-64-${{ github.sha }}", "-linux-65-${{ github.sha }}")
    )
    repo.commit("Download another platform's wheel")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    drift = sg("drift", "--format", "github", cwd=repo.root)
    assert errors(drift.out) == {"select-differs": f".github/workflows/ci.yml:{line}"}
    checked = sg("check", "--stage", "1", "--format", "github", cwd=repo.root)
    places = re.findall(r"^::error file=([^,]+),line=(\d+)", checked.out, re.M)
    assert places == [(".github/workflows/ci.yml", str(line))], checked.out
