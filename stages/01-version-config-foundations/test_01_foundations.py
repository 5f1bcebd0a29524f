"""Stage 1: the shared version reader, and releases narrowed to the toolkit pin.

Run by `stagegate check --stage 1` (the `pytest` check); by hand:
`pytest stages/01-version-config-foundations --stagegate-stage 1`. A deliberate
change of what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

import pytest
from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

STAGE = 1
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


def test_the_narrowed_release_selects_what_the_prefix_glob_selected(stage: StageUnderTest) -> None:
    before = stage.at(0)
    assert before.release(TAG) == "cuda-bindings-13"
    assert stage.release(TAG) == "cuda-bindings-13-exact"
    assert stage.release_selects(TAG) == before.release_selects(TAG)
    assert len(cuda13_wheels(stage)) == 18


def test_the_narrowed_metapackage_release_fits_runs_built_before(stage: StageUnderTest) -> None:
    tag = "cuda-python@v13.4.2"
    assert stage.at(0).release(tag) == "cuda-python-13"
    assert stage.release(tag) == "cuda-python-13-exact"
    assert stage.release_selects(tag, built_at=0) == ["cuda-python-wheel"]
    assert stage.release_selects(tag) == ["cuda-python-wheel"]


def test_cuda13_behaviour_is_unchanged(stage: StageUnderTest) -> None:
    before = stage.at(0)
    assert stage.changed == ["shared-version-reader", "exact-release-selection"]
    assert stage.producers == before.producers
    assert stage.consumers == before.consumers
    assert stage.select("*") == before.select("*")
    assert stage.select("*", run="12.9.x") == before.select("*", run="12.9.x")
