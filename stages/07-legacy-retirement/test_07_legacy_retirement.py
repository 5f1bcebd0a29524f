"""Stage 7: the 12.9.x branch and the unversioned metapackage name are retired.

Run by `stagegate check --stage 7` (the `pytest` check); by hand:
`pytest stages/07-legacy-retirement --stagegate-stage 7`. A deliberate change of
what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

import pytest
from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

STAGE = 7
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


def test_nothing_reads_the_branch(stage: StageUnderTest) -> None:
    migration = stage.plan.migration
    assert not stage.flag("legacy-branch-source")
    assert stage.select("*", run="12.9.x") == []
    assert [r for r in stage.releases if migration.releases[r].run != "this"] == []
    for consumer in stage.consumers:
        for index, _ in enumerate(migration.consumers[consumer].inputs):
            fed = {p for ps in stage.feeds(consumer, index).values() for p in ps}
            assert all(migration.producers[p].run == "this" for p in fed), (consumer, index)


def test_the_unversioned_metapackage_name_is_gone(stage: StageUnderTest) -> None:
    assert stage.select("cuda-python-wheel") == []
    tag = "cuda-python@v13.4.2"
    assert stage.release(tag) == "cuda-python-13-versioned"
    assert stage.release_selects(tag) == ["cuda-python-wheel-cuda13.4.1"]
    # The price stage 7's file states: tags built before stage 4 no longer release.
    assert stage.release_selects(tag, built_at=3) == []


def test_every_release_tag_still_routes_to_one_release(stage: StageUnderTest) -> None:
    for tag in (TAG, "v12.9.8", "cuda-python@v13.4.2", "cuda-python@v12.9.8"):
        assert len(stage.claimants(tag)) == 1, tag
