"""The gate's rules are pure functions of the migrations they compare, each returning
an immutable ``Rule``; the verdict is immutable too."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from scratch import SMALL, write_small
from stagegate import records
from stagegate.checks.base import Result
from stagegate.commands import gate
from stagegate.model import Migration
from stagegate.records import FrozenInstanceError
from stagegate.validation import load


def _at(tmp_path: Path, stage: int) -> Migration:
    root = tmp_path / f"at{stage}"
    write_small(root)
    (root / "migration.yaml").write_text(SMALL.replace("stage: 0\n", f"stage: {stage}\n"))
    return load(root / "migration.yaml")


def test_one_step(tmp_path: Path) -> None:
    zero, one, two = (_at(tmp_path, s) for s in (0, 1, 2))
    assert gate.one_step(zero, one) == gate.Rule(
        "one-step", True, "the stage moves forward by one: 0 -> 1"
    )
    assert gate.one_step(two, one).message == "the stage moves back by one: 2 -> 1"
    assert gate.one_step(one, one).message == "the stage stays at 1"
    skipped = gate.one_step(zero, two)
    assert not skipped.ok
    assert "skipping stage 1;" in skipped.message
    assert skipped.locations == (two.stage_loc,)
    with pytest.raises(FrozenInstanceError):
        skipped.ok = True  # type: ignore[misc]


def test_checks_pass_and_the_verdict_are_immutable(tmp_path: Path) -> None:
    ok = Result(check="unique-artifacts", label="unique-artifacts", stage=1, ok=True, message="")
    bad = records.replace(ok, ok=False, label="tags-routed tags=v1")
    assert gate.checks_pass([ok], 1).message == (
        "the 1 check of stage 1 (the base's, on the head) passes"
    )
    failed = gate.checks_pass([ok, bad], 1)
    assert not failed.ok and failed.details == ("tags-routed tags=v1",)
    one = _at(tmp_path, 1)
    verdict = gate.Verdict(
        file="migration.yaml",
        base=gate.Side("main", "0" * 40, _at(tmp_path, 0)),
        head=gate.Side("HEAD", "1" * 40, one),
        compared="direct",
        rules=(failed,),
    )
    assert not verdict.ok and verdict.move == "forward"
    with pytest.raises(FrozenInstanceError):
        verdict.rules = ()  # type: ignore[misc]


def test_a_new_migration_and_a_removed_one(tmp_path: Path) -> None:
    assert gate.new_migration_at_stage_0(_at(tmp_path, 0)).ok
    assert not gate.new_migration_at_stage_0(_at(tmp_path, 2)).ok
    finished = _at(tmp_path, 3)
    assert gate.migration_kept(finished, PurePosixPath("migration.yaml")).ok
    assert not gate.migration_kept(_at(tmp_path, 2), PurePosixPath("migration.yaml")).ok
