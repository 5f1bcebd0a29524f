"""Stage 4: Core and the metapackage adopt the same run's CUDA 12 bindings.

Run by `stagegate check --stage 4` (the `pytest` check); by hand:
`pytest stages/04-core-metapackage-adoption --stagegate-stage 4`. A deliberate
change of what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

# The contract every stage keeps: pytest runs these two tests here, at this stage.
from continuity import (
    test_cuda13_release_fits_runs_of_every_earlier_stage,  # noqa: F401
    test_cuda13_release_selection_is_pinned,  # noqa: F401
)

from stagegate.testing import StageUnderTest

STAGE = 4


BRANCH = {"bindings-cu12-branch", "metapackage-cu12-branch"}


def test_core_cuda12_half_takes_the_local_artifacts(stage: StageUnderTest) -> None:
    assert stage.changed == ["same-run-cu12"]
    assert not stage.active("core-build-cu12-half-branch")
    feeds = stage.feeds("core-build-cu12-half")
    assert len(feeds) == 8 * 3
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
        assert len(names) == 8 * 3, major
        per_major += names
    # No single `-tests` artifact left for one major's outputs to overwrite the other's.
    assert sorted(per_major) == stage.select("cuda-core-python*-tests")


def test_the_metapackage_is_built_per_line_and_keeps_its_old_name(stage: StageUnderTest) -> None:
    assert stage.select("cuda-python-wheel*") == [
        "cuda-python-wheel",
        "cuda-python-wheel-cuda12.9.1",
        "cuda-python-wheel-cuda13.3.0",
    ]
    tag = "cuda-python@v13.4.2"
    assert stage.release(tag) == "cuda-python-13-exact"
    assert stage.release_sources(tag) == {"metapackage-unversioned": ["cuda-python-wheel"]}
    for built_at in range(STAGE + 1):
        assert stage.release_selects(tag, built_at=built_at) == ["cuda-python-wheel"]
