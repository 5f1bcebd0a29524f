"""Stage 3: main builds and tests its CUDA 12 bindings in the same run as CUDA 13.

Run by `stagegate check --stage 3` (the `pytest` check); by hand:
`pytest stages/03-local-cu12-builds --stagegate-stage 3`. A deliberate change of
what the CUDA 13 release selects is recorded with `--snapshot-update`.
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

STAGE = 3


def cuda12_wheels(stage: StageUnderTest, producer: str) -> list[str]:
    return sorted(n for n in stage.rows(producer) if not n.endswith("-tests"))


BUILD_ROWS = 8 * 3  # Python versions (3.15 and 3.15t included) x platforms


def test_this_run_now_holds_cuda12_bindings(stage: StageUnderTest) -> None:
    assert stage.changed == ["local-cu12-bindings"]
    assert stage.active("bindings-cu12")
    local = stage.select("cuda-bindings-python*-cuda12.9.1-*", exclude=["*-tests"])
    assert local == cuda12_wheels(stage, "bindings-cu12")
    assert len(local) == BUILD_ROWS


def test_the_prefix_glob_would_fetch_them_but_the_release_does_not(stage: StageUnderTest) -> None:
    # The story stage 1 prepared for: today's `cuda-bindings*` would now download
    # both lines into a CUDA 13 release.
    broad = stage.select("cuda-bindings*", exclude=["*-tests"])
    assert set(cuda12_wheels(stage, "bindings-cu12")) <= set(broad)
    assert stage.release(TAG) == "cuda-bindings-13-exact"
    assert not set(stage.release_selects(TAG)) & set(broad) - set(cuda13_wheels(stage))


def test_core_cuda12_half_still_takes_the_branch_artifacts(stage: StageUnderTest) -> None:
    feeds = stage.feeds("core-build-cu12-half-branch")
    assert len(feeds) == BUILD_ROWS
    assert set(map(tuple, feeds.values())) == {("bindings-cu12-branch",)}
    assert not stage.active("core-build-cu12-half")


def test_wheel_tests_keep_their_cuda12_inputs_from_the_branch(stage: StageUnderTest) -> None:
    for consumer, select, rows in (
        ("test-wheel-linux", "cuda-bindings-python{tpy}-cuda*-{linux}*", 6 * 2),
        ("test-wheel-windows", "cuda-bindings-python{tpy}-cuda*-win-64*", 6),
    ):
        feeds = stage.feeds(consumer, select)
        assert len(feeds) == rows, consumer
        assert set(map(tuple, feeds.values())) == {("bindings-cu12-branch",)}, consumer
        # ... and the branch's metapackage, which the same step downloads.
        inputs = [i.select.text for i in stage.plan.migration.consumers[consumer].inputs]
        branch = inputs.index("cuda-python-wheel", inputs.index("cuda-python-wheel") + 1)
        assert stage.feeds(consumer, branch) == {"": ["metapackage-cu12-branch"]}, consumer


def test_the_local_cuda12_bindings_are_tested_on_their_own(stage: StageUnderTest) -> None:
    wheel = "cuda-bindings-python{tpy}-cuda12.9.1-{platform}-{sha}"
    for select in (wheel, wheel + "-tests"):
        feeds = stage.feeds("test-bindings-cu12", select)
        assert len(feeds) == 6 * 3
        assert set(map(tuple, feeds.values())) == {("bindings-cu12",)}, select
