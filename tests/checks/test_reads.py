"""Each check kind declares what it reads (its ``READS``), which decides where
``check --all`` holds it; docs/checks.md's table says the same."""

from __future__ import annotations

import re

import pytest

from conftest import CASES, REPO
from stagegate import checks
from stagegate.checks import runner
from stagegate.errors import Loc
from stagegate.model import Check
from stagegate.records import replace
from stagegate.validation import load

TABLE = {
    "the model": "model",
    "the user's commands": "commands",
    "today's repository": "repository",
}


def test_every_kind_declares_what_it_reads_and_the_docs_table_agrees() -> None:
    doc = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    listed: dict[str, set[str]] = {}
    for reads, kinds in re.findall(
        r"^\| (the model|the user's commands|today's repository) \| ([^|]+) \|", doc, re.M
    ):
        listed[TABLE[reads]] = set(re.findall(r"`([a-z-]+)`", kinds))
    assert listed == {what: set(checks.reading(what)) for what in checks.READS}
    assert set().union(*listed.values()) == set(checks.kinds())
    assert checks.reading("repository") == {"retired", "flags-wired", "workflows", "reuse-safe"}


def test_the_reads_table_is_what_each_module_declares() -> None:
    """``status`` reads ``READS_OF`` instead of importing the check modules: a kind
    added (or changed) without its line there fails here."""
    assert {kind: module.READS for kind, module in checks.kinds().items()} == checks.READS_OF


def test_repository_checks_of_a_stage_without_importing_a_kind() -> None:
    migration = load(str(CASES / "valid" / "valid-minimal" / "migration.yaml"))
    retired = Check(kind="retired", loc=Loc("m.yaml", 1, 1))
    model = replace(retired, kind="unique-artifacts")
    stage = replace(migration, invariants=(model, retired))
    assert checks.repository_checks(stage, 0) == [retired]
    assert checks.repository_checks(replace(stage, invariants=(model,)), 0) == []


@pytest.mark.parametrize(
    ("kind", "stage", "ahead_fail", "held"),
    [
        ("retired", 2, False, "check"),  # the current stage
        ("retired", 3, False, "readiness"),
        ("retired", 3, True, "check"),
        ("workflows", 1, False, "past"),
        ("flags-wired", 0, True, "past"),
        ("unique-artifacts", 0, False, "check"),  # the model's checks: every stage
        ("unique-artifacts", 3, False, "check"),
        ("pytest", 0, False, "check"),
    ],
)
def test_where_check_all_holds_each_check(
    kind: str, stage: int, ahead_fail: bool, held: str
) -> None:
    migration = replace(
        load(str(CASES / "lifecycle" / "python-versions" / "migration.yaml")), stage=2
    )
    check = Check(kind=kind, loc=Loc("migration.yaml", 1, 1))
    assert runner.role(migration, stage, check, ahead_fail=ahead_fail) == held
