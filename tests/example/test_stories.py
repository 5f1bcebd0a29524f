"""The known failure stories of the CUDA Python migration, each as a broken and a fixed twin.

Each `tests/cases/stories/<story>/broken/` must fail `stagegate check --all` with a
message a release engineer can act on (its `expected.txt`: `fails: KIND at stage N`
lines, then text that must appear verbatim); its `fixed/` twin must pass. Each twin
runs in a git repository of its own (a copy, committed once), so that a story's
`retired` check searches the story's files and nothing else.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

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
    story: Path, sg: Callable[..., Result], tmp_path: Path
) -> None:
    failing, lines = _expected(story)
    assert failing and lines, f"{story}/broken/expected.txt names no failure"
    broken = _tree(story, "broken", tmp_path)
    result = sg("check", "--all", cwd=broken)
    assert result.code == 1, result.output
    for line in lines:
        assert line in result.out, f"expected {line!r} in:\n{result.out}"
    report = json.loads(sg("check", "--all", "--format", "json", cwd=broken).out)
    assert {(r["check"], r["stage"]) for r in report["results"] if not r["ok"]} == failing


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_fixed_twin_passes(story: Path, sg: Callable[..., Result], tmp_path: Path) -> None:
    result = sg("check", "--all", cwd=_tree(story, "fixed", tmp_path))
    assert result.code == 0, result.output
    assert result.out.rstrip().endswith("all passed")


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_twins_run_the_same_checks(story: Path, sg: Callable[..., Result], tmp_path: Path) -> None:
    """A fixed twin proves the fix only if it is held to the broken twin's checks."""

    def checks(variant: str) -> set[tuple[str, str, int]]:
        root = _tree(story, variant, tmp_path)
        report = json.loads(sg("check", "--all", "--format", "json", cwd=root).out)
        return {(r["check"], r["label"], r["stage"]) for r in report["results"]}

    broken, fixed = checks("broken"), checks("fixed")
    # The fixed twin may add a stage (the fix can be a step of its own), not drop a check.
    assert {(c, label) for c, label, _ in broken} <= {(c, label) for c, label, _ in fixed}
