"""This repository's own CI (.github/workflows/ci.yml) runs `.ci/run` on every push and
pull request and, on pull requests, `stagegate continuity` against the base, which checks
what release.yml publishes. Here on copies of the two workflows in a scratch repository:
a head that breaks the release fails (exit 1), the real files pass (exit 0)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO, Result, load_yaml
from scratch import Repo, init, pin_git

Sg = Callable[..., Result]

RELEASE = ".github/workflows/release.yml"
CI = ".github/workflows/ci.yml"
ARTIFACT = "name: python-package-distributions"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """The real release.yml and ci.yml committed at the base."""
    pin_git(monkeypatch)
    repo = init(tmp_path / "repo")
    for rel in (RELEASE, CI):
        repo.write(rel, (REPO / rel).read_text(encoding="utf-8"))
    repo.commit("The workflows")
    return repo


def test_ci_runs_the_checks_and_continuity_on_pull_requests() -> None:
    ci = load_yaml(REPO / CI)
    assert ci[True] == {"push": {"branches": ["main"]}, "pull_request": None}  # `on:`
    runs = [s.get("run") for s in ci["jobs"]["test"]["steps"]]
    assert "bash .ci/run" in runs
    job = ci["jobs"]["continuity"]
    assert job["if"] == "github.event_name == 'pull_request'"
    assert job["steps"][0] == {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}}
    step = job["steps"][-1]
    assert step["env"] == {"BASE": "${{ github.event.pull_request.base.sha }}"}
    assert step["run"] == 'stagegate continuity --base "$BASE" --format github'


def test_the_real_release_workflow_passes(repo: Repo, sg: Sg) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("README.md", "a change that leaves the release alone\n")
    repo.commit("Docs")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
    assert result.out.endswith(
        "1 release job, 0 lost, 0 gained, 0 renamed, 0 new findings: ok\n"
    ), result.out
    assert "release job publish (.github/workflows/release.yml:" in result.out


@pytest.mark.parametrize(
    "old, new",
    [
        # the download takes another artifact than the build uploads
        (f"{ARTIFACT}\n          path: dist/\n      - uses: pypa", "name: dists\n          path: dist/\n      - uses: pypa"),
        # the download drops its path: the files land in the working folder, not dist/
        (f"{ARTIFACT}\n          path: dist/\n      - uses: pypa", f"{ARTIFACT}\n      - uses: pypa"),
        # the upload is renamed, the download is not
        (ARTIFACT + "\n          path: dist/\n\n", "name: dists\n          path: dist/\n\n"),
    ],
)
def test_a_head_that_breaks_the_release_fails(repo: Repo, sg: Sg, old: str, new: str) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    text = (repo.root / RELEASE).read_text()
    assert text.count(old) == 1, old
    repo.write(RELEASE, text.replace(old, new))
    repo.commit("Break the release")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    lines = result.out.splitlines()
    assert lines[:3] == [
        "release job publish (.github/workflows/release.yml:36; runs on push-tag): 0 upload "
        "contexts reach its publish step, 1 at the base",
        "  selects nothing: no upload of the run reaches what it publishes",
        "  lost: build ('python-package-distributions', .github/workflows/release.yml:33)",
    ], result.out
    assert lines[3].endswith("1 release job, 1 lost, 0 gained, 0 renamed, 0 new findings: FAILED")
