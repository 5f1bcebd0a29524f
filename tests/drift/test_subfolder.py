"""A migration under ci/ (the layout docs/ci.md shows for pre-commit) reads the workflows
at the top of the repository: `drift`, the `workflows` check, `init --from-workflows`.
Workflow files are named from the current folder, as every location is. No workflow
file at all is one located error (exit 2), not a finding per producer."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, Result
from scratch import git_env

Sg = Callable[..., Result]

NO_FILES = (
    "no workflow file found: the default workflows.paths ('.github/workflows/*.yml', "
    "'.github/workflows/*.yaml', '.github/actions/*/action.yml') match nothing under "
)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=git_env(), check=True, capture_output=True)


@pytest.fixture
def mono(tmp_path: Path) -> Path:
    """The drift fixture with its migration and stages moved to ci/, in a git work tree."""
    top = tmp_path / "mono"
    shutil.copytree(FIXTURES / "drift" / "repo", top)
    (top / "ci").mkdir()
    for name in ("migration.yaml", "stages"):
        (top / name).rename(top / "ci" / name)
    git(top, "init", "-q", "-b", "main")
    return top


def test_drift_from_the_top_and_from_the_migrations_folder(sg: Sg, mono: Path) -> None:
    for args, cwd in ((("-f", "ci/migration.yaml"), mono), ((), mono / "ci")):
        result = sg(*args, "drift", "--stage", "2", cwd=cwd)
        assert (result.code, result.out) == (
            0,
            "drift at stage 2: 4 workflow files, 12 uploads, 7 downloads: no drift\n",
        ), result.output


def test_workflow_locations_are_named_from_the_current_folder(sg: Sg, mono: Path) -> None:
    build = mono / ".github" / "workflows" / "build.yml"
    build.write_text(build.read_text().replace("}-tests", "}-test", 1))
    from_top = json.loads(sg("-f", "ci/migration.yaml", "drift", "--format", "json", cwd=mono).out)
    from_ci = json.loads(sg("drift", "--format", "json", cwd=mono / "ci").out)
    [top] = [f for f in from_top["findings"] if f["kind"] == "undeclared-upload"]
    [ci] = [f for f in from_ci["findings"] if f["kind"] == "undeclared-upload"]
    assert top["file"] == ".github/workflows/build.yml"
    assert ci["file"] == "../.github/workflows/build.yml"
    assert ci["line"] == top["line"]
    # the jobs a finding names stay the repository's own names (as `jobs` entries write them)
    assert "in job .github/workflows/build.yml#wheels" in ci["message"]


def test_the_workflows_check_sees_the_workflows(sg: Sg, mono: Path) -> None:
    migration = mono / "ci" / "migration.yaml"
    migration.write_text(migration.read_text() + "  - check: workflows\n")
    result = sg("check", "--stage", "2", cwd=mono / "ci")
    assert result.code == 0, result.output
    assert "ok    workflows: 4 workflow files, 12 uploads and 7 downloads agree" in result.out
    # control: a producer the workflows do not upload fails it, at the workflow's line
    migration.write_text(migration.read_text().replace("{sha}-tests", "{sha}-test", 1))
    failed = sg("check", "--stage", "2", cwd=mono / "ci")
    assert failed.code == 1, failed.output
    assert "../.github/workflows/build.yml:" in failed.out


def test_init_from_workflows_in_a_subfolder(sg: Sg, mono: Path) -> None:
    shutil.rmtree(mono / "ci")
    (mono / "ci").mkdir()
    result = sg("-f", "ci/migration.yaml", "init", "--from-workflows", cwd=mono)
    assert result.code == 0, result.output
    text = (mono / "ci" / "migration.yaml").read_text()
    assert 'jobs: [".github/workflows/build.yml#wheels"]' in text
    assert sg("drift", cwd=mono / "ci").code == 0


def test_init_from_workflows_without_workflows_names_the_top(sg: Sg, mono: Path) -> None:
    shutil.rmtree(mono / ".github")
    shutil.rmtree(mono / "ci")
    (mono / "ci").mkdir()
    result = sg("init", "--from-workflows", cwd=mono / "ci")
    assert result.code == 2
    assert "no workflow files in ../.github/workflows; run init without --from-workflows" in (
        result.err
    )


def test_no_workflow_file_is_one_located_error(sg: Sg, mono: Path) -> None:
    shutil.rmtree(mono / ".github")
    result = sg("drift", cwd=mono / "ci")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"migration.yaml:1:1: {NO_FILES}the top of the git work tree (..). Run stagegate in "
        "the repository whose workflows the migration describes, or set workflows.paths to "
        "where the workflow files are (relative to that folder).\n"
        "1 problem found; fix it and run `stagegate validate`.\n"
    )


def test_no_workflow_file_at_the_paths_key(sg: Sg, mono: Path) -> None:
    migration = mono / "ci" / "migration.yaml"
    text = migration.read_text().replace("workflows:\n", "workflows:\n  paths: [ci/*.yml]\n")
    migration.write_text(text)
    line = text.splitlines().index("  paths: [ci/*.yml]") + 1
    result = sg("-f", "ci/migration.yaml", "drift", cwd=mono)
    assert result.code == 2
    assert result.err.startswith(
        f"ci/migration.yaml:{line}:3: no workflow file found: workflows.paths ('ci/*.yml') "
        "match nothing under the top of the git work tree (.). Fix the globs: they are "
        "relative to that folder, like GitHub's '.github/workflows/*.yml'.\n"
    ), result.err
    # control: the paths are relative to the top of the repository, not to ci/
    (mono / ".github" / "workflows" / "build.yml").rename(mono / "ci" / "build.yml")
    found = json.loads(sg("-f", "ci/migration.yaml", "drift", "--format", "json", cwd=mono).out)
    assert {u["file"] for u in found["uploads"]} == {"ci/build.yml"}


def test_outside_a_git_repository_the_migrations_folder(sg: Sg, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    shutil.copytree(FIXTURES / "drift" / "repo", root)
    assert sg("drift", cwd=root).code == 0
    shutil.rmtree(root / ".github")
    result = sg("drift", cwd=root)
    assert result.code == 2
    assert result.err.startswith(
        f"migration.yaml:1:1: {NO_FILES}the migration's folder (.: it is in no git repository)."
    ), result.err


def test_github_annotation_from_the_subfolder_names_the_file_from_the_top(
    sg: Sg, mono: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = mono / ".github" / "workflows" / "build.yml"
    build.write_text(build.read_text().replace("}-tests", "}-test", 1))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(mono))
    result = sg("drift", "--format", "github", cwd=mono / "ci")
    assert result.code == 1
    assert "::error file=.github/workflows/build.yml,line=" in result.out, result.out
