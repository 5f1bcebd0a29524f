"""Stage 5: v12.9.* tags are built on main and released from main's tag runs.

Run by `stagegate check --stage 5` (the `pytest` check); by hand:
`pytest stages/05-cu12-releases-from-main --stagegate-stage 5`. A deliberate
change of what a release selects is recorded with `--snapshot-update`.
"""

from __future__ import annotations

# The contract every stage keeps: pytest runs these two tests here, at this stage.
from continuity import (
    TAG,
    release_text,
    released,
    test_cuda13_release_fits_runs_of_every_earlier_stage,  # noqa: F401
    test_cuda13_release_selection_is_pinned,  # noqa: F401
)
from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

STAGE = 5


CU12_TAG = "v12.9.8"


def test_v12_9_tags_route_to_mains_release(stage: StageUnderTest) -> None:
    assert stage.changed == ["cu12-release-from-main"]
    assert stage.claimants(CU12_TAG) == ["cuda-bindings-12"]
    assert stage.claimants("cuda-python@v12.9.8") == ["cuda-python-12"]
    assert stage.at(4).claimants(CU12_TAG) == ["cuda-bindings-12-branch"]
    assert stage.claimants(TAG) == ["cuda-bindings-13-exact"]
    assert stage.claimants("cuda-python@v13.4.2") == ["cuda-python-13-exact"]


def test_cuda12_release_selection_is_pinned(stage: StageUnderTest, snapshot: Snapshot) -> None:
    snapshot.assert_match(release_text(stage, CU12_TAG), "cuda12-release.txt")


def test_main_releases_the_same_cuda12_names_from_its_own_run(stage: StageUnderTest) -> None:
    local = released(stage.rows("bindings-cu12"))
    assert stage.release_sources(CU12_TAG) == {"bindings-cu12": local}
    before = stage.at(4)
    assert before.release_sources(CU12_TAG) == {"bindings-cu12-branch": local}
    assert stage.release_sources("cuda-python@v12.9.8") == {
        "metapackage-cu12": ["cuda-python-wheel-cuda12.9.1"]
    }


def test_cuda12_docs_are_built_from_main(stage: StageUnderTest) -> None:
    assert stage.active("docs-cu12")
    assert stage.feeds("docs-cu12", 1) == {"": ["bindings-cu12"]}
    assert stage.feeds("docs-cu12", 2) == {"": ["metapackage-cu12"]}
