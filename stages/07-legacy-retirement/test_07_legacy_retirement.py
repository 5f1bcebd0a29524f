"""Stage 7: the 12.9.x branch and the unversioned metapackage name are retired.

Run by `stagegate check --stage 7` (the `pytest` check); by hand:
`pytest stages/07-legacy-retirement --stagegate-stage 7`. A deliberate change of
what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

# The contract every stage keeps: pytest runs these two tests here, at this stage.
from continuity import (
    TAG,
    test_cuda13_release_fits_runs_of_every_earlier_stage,  # noqa: F401
    test_cuda13_release_selection_is_pinned,  # noqa: F401
)

from stagegate.testing import StageUnderTest

STAGE = 7


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
    assert stage.release_selects(tag) == ["cuda-python-wheel-cuda13.3.0"]
    # The price stage 7's file states: tags built before stage 4 no longer release.
    assert stage.release_selects(tag, built_at=3) == []


def test_every_release_tag_still_routes_to_one_release(stage: StageUnderTest) -> None:
    for tag in (TAG, "v12.9.8", "cuda-python@v13.4.2", "cuda-python@v12.9.8"):
        assert len(stage.claimants(tag)) == 1, tag
