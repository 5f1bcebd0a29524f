"""Stage 2: the CUDA 12 developer workflow on main; CI builds no CUDA 12 wheel yet.

Run by `stagegate check --stage 2` (the `pytest` check); by hand:
`pytest stages/02-cu12-developer-workflow --stagegate-stage 2`. A deliberate
change of what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

# The contract every stage keeps: pytest runs these two tests here, at this stage.
from continuity import (
    test_cuda13_release_fits_runs_of_every_earlier_stage,  # noqa: F401
    test_cuda13_release_selection_is_pinned,  # noqa: F401
)

from stagegate.testing import StageUnderTest

STAGE = 2


def test_only_the_developer_workflow_turns_on(stage: StageUnderTest) -> None:
    before = stage.at(1)
    assert stage.changed == ["cu12-dev-workflow"]
    assert stage.producers == before.producers
    assert set(stage.consumers) - set(before.consumers) == {"cu12-source-build-smoke"}


def test_ci_builds_no_cuda12_wheel_yet(stage: StageUnderTest) -> None:
    assert not stage.active("bindings-cu12")
    assert stage.select("*cuda12*") == []
    assert stage.select("*") == stage.at(1).select("*")


def test_the_source_build_smoke_test_downloads_nothing(stage: StageUnderTest) -> None:
    # Like ci-pixi-source-test.yml, it builds every package from source.
    assert stage.active("cu12-source-build-smoke")
    assert stage.plan.migration.consumers["cu12-source-build-smoke"].inputs == ()
