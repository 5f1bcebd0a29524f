"""Stage 2: the CUDA 12 developer workflow on main; CI builds no CUDA 12 wheel yet.

Run by `stagegate check --stage 2` (the `pytest` check); by hand:
`pytest stages/02-cu12-developer-workflow --stagegate-stage 2`. A deliberate
change of what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

import pytest
from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

STAGE = 2
TAG = "v13.4.2"


@pytest.fixture
def stage(stagegate: StageUnderTest) -> StageUnderTest:
    assert stagegate.stage == STAGE, (
        f"these are stage {STAGE}'s tests, run at stage {stagegate.stage}: "
        f"use `stagegate check --stage {STAGE}` or pytest --stagegate-stage {STAGE}"
    )
    return stagegate


def release_text(stage: StageUnderTest, tag: str) -> str:
    """The committed continuity contract: the release path and every name it downloads."""
    lines = [f"{tag} at stage {stage.stage}: release {stage.release(tag)}"]
    for producer, names in stage.release_sources(tag).items():
        lines += [f"  {name}  (producer {producer})" for name in names]
    return "\n".join(lines) + "\n"


def cuda13_wheels(stage: StageUnderTest) -> list[str]:
    return sorted(n for n in stage.rows("bindings-cu13") if not n.endswith("-tests"))


def test_cuda13_release_selection_is_pinned(stage: StageUnderTest, snapshot: Snapshot) -> None:
    snapshot.assert_match(release_text(stage, TAG), "cuda13-release.txt")
    assert stage.release_sources(TAG) == {"bindings-cu13": cuda13_wheels(stage)}


def test_cuda13_release_fits_runs_of_every_earlier_stage(stage: StageUnderTest) -> None:
    # release.yml runs today's download-wheels (tooling: control) on the tag's run,
    # whichever stage built it.
    for built_at in range(STAGE + 1):
        assert stage.release_selects(TAG, built_at=built_at) == cuda13_wheels(stage), built_at


def test_only_the_developer_workflow_turns_on(stage: StageUnderTest) -> None:
    before = stage.at(1)
    assert stage.changed == ["cu12-dev-workflow"]
    assert stage.producers == before.producers
    assert set(stage.consumers) - set(before.consumers) == {"cu12-source-build-smoke"}


def test_ci_builds_no_cuda12_wheel_yet(stage: StageUnderTest) -> None:
    assert not stage.active("bindings-cu12")
    assert stage.select("*cuda12*") == []
    assert stage.select("*") == stage.at(1).select("*")


def test_the_source_build_smoke_test_takes_only_pathfinder(stage: StageUnderTest) -> None:
    assert stage.feeds("cu12-source-build-smoke", "cuda-pathfinder-wheel") == {"": ["pathfinder"]}
