"""Stage 1: the shared version reader, and releases narrowed to the toolkit pin.

Run by `stagegate check --stage 1` (the `pytest` check); by hand:
`pytest stages/01-version-config-foundations --stagegate-stage 1`. A deliberate
change of what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

# The contract every stage keeps: pytest runs these two tests here, at this stage.
from continuity import (
    TAG,
    cuda13_wheels,
    test_cuda13_release_fits_runs_of_every_earlier_stage,  # noqa: F401
    test_cuda13_release_selection_is_pinned,  # noqa: F401
)

from stagegate.testing import StageUnderTest

STAGE = 1


def test_the_narrowed_release_selects_what_the_prefix_glob_selected(stage: StageUnderTest) -> None:
    before = stage.at(0)
    assert before.release(TAG) == "cuda-bindings-13"
    assert stage.release(TAG) == "cuda-bindings-13-exact"
    assert stage.release_selects(TAG) == before.release_selects(TAG)
    # 6 released Python versions x 3 platforms; the 3.15 rows are built, not released.
    assert len(cuda13_wheels(stage)) == 18
    assert len(stage.rows("bindings-cu13")) == 8 * 3 * 2


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
