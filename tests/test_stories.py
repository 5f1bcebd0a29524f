"""The known failure stories of the CUDA Python migration, each as a broken and a fixed twin.

Each `tests/cases/stories/<story>/broken/` must fail `stagegate check --all` with a
message a release engineer can act on (its `expected.txt`: `fails: KIND at stage N`
lines, then text that must appear verbatim); its `fixed/` twin must pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import CASES, Result

STORIES = sorted(p for p in (CASES / "stories").iterdir() if p.is_dir())
IDS = [p.name for p in STORIES]


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
        "broad-release-glob",
        "cython-tests-one-name",
        "metapackage-rename",
        "retire-before-local-covers",
        "second-source",
    ]


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_broken_twin_fails_naming_producer_row_and_glob(
    story: Path, sg: Callable[..., Result]
) -> None:
    failing, lines = _expected(story)
    assert failing and lines, f"{story}/broken/expected.txt names no failure"
    result = sg("check", "--all", cwd=story / "broken")
    assert result.code == 1, result.output
    for line in lines:
        assert line in result.out, f"expected {line!r} in:\n{result.out}"
    report = json.loads(sg("check", "--all", "--format", "json", cwd=story / "broken").out)
    assert {(r["check"], r["stage"]) for r in report["results"] if not r["ok"]} == failing


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_fixed_twin_passes(story: Path, sg: Callable[..., Result]) -> None:
    result = sg("check", "--all", cwd=story / "fixed")
    assert result.code == 0, result.output
    assert result.out.rstrip().endswith("all passed")


@pytest.mark.parametrize("story", STORIES, ids=IDS)
def test_twins_run_the_same_checks(story: Path, sg: Callable[..., Result]) -> None:
    """A fixed twin proves the fix only if it is held to the broken twin's checks."""

    def checks(variant: str) -> set[tuple[str, str, int]]:
        report = json.loads(sg("check", "--all", "--format", "json", cwd=story / variant).out)
        return {(r["check"], r["label"], r["stage"]) for r in report["results"]}

    broken, fixed = checks("broken"), checks("fixed")
    # The fixed twin may add a stage (the fix can be a step of its own), not drop a check.
    assert {(c, label) for c, label, _ in broken} <= {(c, label) for c, label, _ in fixed}
