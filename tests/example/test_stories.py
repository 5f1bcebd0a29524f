"""The known failure stories of the CUDA Python migration, each as a broken and a fixed twin.

Each `tests/cases/stories/<story>/broken/` must fail `stagegate check --all` with a
message a release engineer can act on (its `expected.txt`: `fails: KIND at stage N`
lines, then text that must appear verbatim); its `fixed/` twin must pass. Each twin
runs in a git repository of its own (a copy, committed once), so that a story's
`retired` check searches the story's files and nothing else; `check` writes nothing
there, so the module makes each twin's repository, and its `check --all --format json`
report, once for the tests that read them.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import CASES, Result, story_twin

STORIES = sorted(p for p in (CASES / "stories").iterdir() if p.is_dir())
IDS = [p.name for p in STORIES]


def _tree(story: Path, variant: str, tmp_path: Path) -> Path:
    """The twin copied into a fresh repository (pinned identity, no user configuration)."""
    root = story_twin(story.name, variant, tmp_path / story.name / variant)
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Story",
        "GIT_AUTHOR_EMAIL": "story@example.com",
        "GIT_COMMITTER_NAME": "Story",
        "GIT_COMMITTER_EMAIL": "story@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "story"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


Twin = Callable[[Path, str], Path]


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Twin:
    """``twin(story, variant)``: ``_tree`` made once for the module."""
    made: dict[tuple[str, str], Path] = {}

    def tree(story: Path, variant: str) -> Path:
        key = (story.name, variant)
        if key not in made:
            made[key] = _tree(story, variant, tmp_path_factory.mktemp(f"{story.name}-{variant}"))
        return made[key]

    return tree


_REPORTS: dict[Path, dict[str, Any]] = {}
"""`check --all --format json` of a twin's repository (``twin``), run once for the module."""


def _report(sg: Callable[..., Result], root: Path) -> dict[str, Any]:
    if root not in _REPORTS:
        result = sg("check", "--all", "--format", "json", cwd=root)
        _REPORTS[root] = json.loads(result.out)
    return _REPORTS[root]


def _expected(story: Path) -> tuple[set[tuple[str, int]], list[str]]:
    failing: set[tuple[str, int]] = set()
    lines: list[str] = []
    for line in (story / "broken" / "expected.txt").read_text().splitlines():
        if line.startswith("fails: "):
            kind, _, stage = line.removeprefix("fails: ").partition(" at stage ")
            failing.add((kind, int(stage)))
        elif line:
            lines.append(line)
    return failing, lines


def test_every_story_of_the_facts_and_the_issue_is_here() -> None:
    assert IDS == [
        "branch-artifacts-expire",
        "branch-keeps-py39",
        "broad-release-glob",
        "cython-tests-one-name",
        "metapackage-rename",
        "release-runs-both-toolings",
        "retire-before-local-covers",
        "second-source",
        "tests-artifact-in-release",
        "unquoted-metapackage-leftovers",
    ]


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_broken_twin_fails_naming_producer_row_and_glob(
    story: Path, sg: Callable[..., Result], twin: Twin
) -> None:
    failing, lines = _expected(story)
    assert failing and lines, f"{story}/broken/expected.txt names no failure"
    broken = twin(story, "broken")
    result = sg("check", "--all", cwd=broken)
    assert result.code == 1, result.output
    for line in lines:
        assert line in result.out, f"expected {line!r} in:\n{result.out}"
    report = _report(sg, broken)
    assert {(r["check"], r["stage"]) for r in report["results"] if not r["ok"]} == failing


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_fixed_twin_passes(story: Path, sg: Callable[..., Result], twin: Twin) -> None:
    result = sg("check", "--all", cwd=twin(story, "fixed"))
    assert result.code == 0, result.output
    assert result.out.rstrip().endswith("all passed")


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_twins_run_the_same_checks(story: Path, sg: Callable[..., Result], twin: Twin) -> None:
    """A fixed twin proves the fix only if it is held to the broken twin's checks."""

    def checks(variant: str) -> set[tuple[str, str, int]]:
        report = _report(sg, twin(story, variant))
        return {(r["check"], r["label"], r["stage"]) for r in report["results"]}

    broken, fixed = checks("broken"), checks("fixed")
    # The fixed twin may add a stage (the fix can be a step of its own), not drop a check.
    assert {(c, label) for c, label, _ in broken} <= {(c, label) for c, label, _ in fixed}
