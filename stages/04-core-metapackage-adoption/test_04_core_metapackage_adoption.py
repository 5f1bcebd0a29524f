"""Stage 4: Core and the metapackage adopt the same run's CUDA 12 bindings.

Run by `stagegate check --stage 4` (the `pytest` check); by hand:
`pytest stages/04-core-metapackage-adoption --stagegate-stage 4`. A deliberate
change of what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

import pytest
from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

STAGE = 4
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


BRANCH = {"bindings-cu12-branch", "metapackage-cu12-branch"}


def test_core_cuda12_half_takes_the_local_artifacts(stage: StageUnderTest) -> None:
    assert stage.changed == ["same-run-cu12"]
    assert not stage.active("core-build-cu12-half-branch")
    feeds = stage.feeds("core-build-cu12-half")
    assert len(feeds) == 18
    assert set(map(tuple, feeds.values())) == {("bindings-cu12",)}


def test_no_consumer_reads_the_branch_any_more(stage: StageUnderTest) -> None:
    migration = stage.plan.migration
    for consumer in stage.consumers:
        for index, _ in enumerate(migration.consumers[consumer].inputs):
            fed = {p for ps in stage.feeds(consumer, index).values() for p in ps}
            assert not fed & BRANCH, (consumer, index)


def test_core_cython_tests_are_built_once_per_major(stage: StageUnderTest) -> None:
    assert not stage.active("core")
    assert stage.active("core-per-major-tests")
    per_major = []
    for major in ("cu12", "cu13"):
        names = stage.select(f"cuda-core-python*-{major}-tests")
        assert len(names) == 18, major
        per_major += names
    # No single `-tests` artifact left for one major's outputs to overwrite the other's.
    assert sorted(per_major) == stage.select("cuda-core-python*-tests")


def test_the_metapackage_is_built_per_line_and_keeps_its_old_name(stage: StageUnderTest) -> None:
    assert stage.select("cuda-python-wheel*") == [
        "cuda-python-wheel",
        "cuda-python-wheel-cuda12.9.1",
        "cuda-python-wheel-cuda13.4.1",
    ]
    tag = "cuda-python@v13.4.2"
    assert stage.release(tag) == "cuda-python-13-exact"
    assert stage.release_sources(tag) == {"metapackage-unversioned": ["cuda-python-wheel"]}
    for built_at in range(STAGE + 1):
        assert stage.release_selects(tag, built_at=built_at) == ["cuda-python-wheel"]
