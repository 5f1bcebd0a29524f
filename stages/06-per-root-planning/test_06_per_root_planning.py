"""Stage 6: the CI planner decides per source root and per Core CUDA major.

Run by `stagegate check --stage 6` (the `pytest` check); by hand:
`pytest stages/06-per-root-planning --stagegate-stage 6`. A deliberate change of
what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

import pytest
from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

STAGE = 6
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


def test_reuse_changes_no_artifact_name(stage: StageUnderTest) -> None:
    before = stage.at(5)
    assert stage.changed == ["per-root-planning"]
    assert stage.producers == before.producers
    assert stage.consumers == before.consumers
    assert stage.releases == before.releases
    assert stage.select("*") == before.select("*")
    assert stage.select("*", run="12.9.x") == before.select("*", run="12.9.x")


def test_every_producer_built_on_main_declares_its_source_root(stage: StageUnderTest) -> None:
    # The planner maps changed paths to producers; a producer without `paths`
    # would never be rebuilt selectively.
    producers = stage.plan.migration.producers
    roots = {p: producers[p].paths for p in stage.producers if producers[p].run == "this"}
    assert all(roots.values()), roots
    assert roots["bindings-cu13"] == ("cuda_bindings/**",)
    assert roots["bindings-cu12"] == ("cuda_bindings_12/**",)
