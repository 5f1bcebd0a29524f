"""Stage 6: the CI planner decides per source root and per Core CUDA major.

Run by `stagegate check --stage 6` (the `pytest` check); by hand:
`pytest stages/06-per-root-planning --stagegate-stage 6`. A deliberate change of
what the CUDA 13 release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

# The contract every stage keeps: pytest runs these two tests here, at this stage.
from continuity import (
    test_cuda13_release_fits_runs_of_every_earlier_stage,  # noqa: F401
    test_cuda13_release_selection_is_pinned,  # noqa: F401
)

from stagegate.testing import StageUnderTest

STAGE = 6


def test_reuse_changes_no_artifact_name(stage: StageUnderTest) -> None:
    before = stage.at(5)
    assert stage.changed == ["per-root-planning"]
    assert stage.producers == before.producers
    # The one new job: the sdist tests may now take reused bindings wheels.
    assert set(stage.consumers) - set(before.consumers) == {"sdist-tests-reuse"}
    assert set(before.consumers) <= set(stage.consumers)
    assert stage.releases == before.releases
    assert stage.select("*") == before.select("*")
    assert stage.select("*", run="12.9.x") == before.select("*", run="12.9.x")


def test_the_sdist_tests_take_reused_wheels_of_both_lines(stage: StageUnderTest) -> None:
    inputs = stage.plan.migration.consumers["sdist-tests-reuse"].inputs
    assert not any(i.required for i in inputs)
    fed = [stage.feeds("sdist-tests-reuse", n) for n in range(len(inputs))]
    assert fed == [{"": ["bindings-cu13"]}] * 2 + [{"": ["bindings-cu12"]}] * 2


def test_every_producer_built_on_main_declares_its_source_root(stage: StageUnderTest) -> None:
    # The planner maps changed paths to producers; a producer without `paths`
    # would never be rebuilt selectively.
    # numpy-prerelease is built from numpy's sdist on PyPI: no source root here;
    # coverage-data and release-dry-run are made by scheduled and dispatched runs only.
    producers = stage.plan.migration.producers
    outside = {"numpy-prerelease", "coverage-data", "release-dry-run"}
    roots = {
        p: producers[p].paths
        for p in stage.producers
        if producers[p].run == "this" and p not in outside
    }
    assert all(roots.values()), roots
    # Per root: each bindings line is built from its own root only, so an edit of one
    # line never rebuilds the other (tests/affected/test_example_plans.py plans them).
    assert roots["bindings-cu13"][:2] == ("cuda_bindings/cuda/**", "cuda_bindings/tests/cython/**")
    assert roots["bindings-cu12"][:2] == (
        "cuda_bindings_12/cuda/**",
        "cuda_bindings_12/tests/cython/**",
    )
    assert not any(g.startswith("cuda_bindings/") for g in roots["bindings-cu12"])
    assert not any(g.startswith("cuda_bindings_12/") for g in roots["bindings-cu13"])


def test_tests_may_reuse_every_wheel_and_core_is_built_by_its_halves(
    stage: StageUnderTest,
) -> None:
    consumers = stage.plan.migration.consumers
    for job in ("test-wheel-linux-same-run", "test-wheel-windows-same-run"):
        assert all(i.run == "baseline" for i in consumers[job].inputs), job
    assert consumers["core-build-cu12-half"].feeds == ("core-per-major-tests",)
    assert "core-per-major-tests" in consumers["core-build-cu13-half"].feeds
    # Release and nightly jobs are never planned selectively.
    unplanned = {c for c in stage.consumers if not consumers[c].planned}
    assert unplanned == {
        "docs-release",
        "docs-cu12",
        "nightly-tests-same-run",
        "branch-tests-main-pathfinder",
        "coverage-report",
    }
