"""Shared by every stage's tests: each test module declares the stage it belongs to.

pytest loads this file for any folder under stages/, whether it runs through the
`pytest` check (`stagegate check --stage N`) or by hand.
"""

from __future__ import annotations

import pytest

from stagegate.testing import StageUnderTest


@pytest.fixture
def stage(stagegate: StageUnderTest, request: pytest.FixtureRequest) -> StageUnderTest:
    """The stage under test, refusing to run a stage's tests at another stage.

    Without this guard a plain `pytest stages/03-...` would test the current stage (0)."""
    expected = request.module.STAGE
    assert stagegate.stage == expected, (
        f"these are stage {expected}'s tests, run at stage {stagegate.stage}: "
        f"use `stagegate check --stage {expected}` or pytest --stagegate-stage {expected}"
    )
    return stagegate
