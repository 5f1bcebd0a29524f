"""release-continuity compares producer rows, not names alone (issue 22): a release that
keeps selecting a name but takes it from another producer ships other files under it.
Each case is a small hand model; the controls declare the move and pass."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

from conftest import Result

Sg = Callable[..., Result]

BUILDER = """\
version: 1
migration: rows
summary: A release keeps its names while the job that builds them changes.
stage: 0
axes:
  py: ["313", "314"]
  sha: {pattern: "[0-9a-f]{40}"}
flags:
  new_builder:
    summary: Build the wheels in the new builder job.
producers:
  old-wheels:
    when: not new_builder
    artifacts: ["pkg-python{py}-{sha}"]
  new-wheels:
    when: new_builder
    artifacts: ["pkg-python{py}-{sha}"]
  sdist:
    artifacts: ["pkg-sdist-{sha}"]
releases:
  rel:
    tags: ["v1.*"]
    select: ["pkg-*"]
invariants:
  - check: release-continuity
    tag: v1.0.0
"""

QUIET = "stage: {n}\ntitle: Nothing changes\n"
SWITCH = "stage: {n}\ntitle: The new builder\nset:\n  new_builder: true\n"
MOVE = "release_changes:\n  - tag: v1.0.0\n    drop: [{glob}]\n    add: [{glob}]\n"


def make(tmp_path: Path, body: str, *stages: str) -> Path:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(textwrap.dedent(body))
    for number, text in enumerate(stages, start=1):
        (root / "stages" / f"{number:02d}-step.yaml").write_text(text)
    return root


def continuity(sg: Sg, root: Path) -> dict[int, dict[str, object]]:
    """The release-continuity result of each stage of ``check --all``."""
    result = sg("check", "--all", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    return {
        r["stage"]: r for r in json.loads(result.out)["results"] if r["check"] == "release-continuity"
    }


def messages(report: dict[str, object]) -> list[str]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return [f["message"] for f in findings]


MOVED = (
    "release rel (migration.yaml:21) still selects all 2 rows of pkg-python{py}-{sha} "
    "(e.g. pkg-python313-{sha}) but now takes them from producer new-wheels "
    "(migration.yaml:15) instead of producer old-wheels (migration.yaml:12), from which it "
    "took them at stage 0; changed at stage 2 (stages/02-step.yaml): what ships under those "
    "names has changed. If that is meant, declare the move in that stage file's "
    "release_changes (a `drop` and an `add` of the names); else take them from producer "
    "old-wheels (migration.yaml:12) again."
)


def test_a_kept_name_from_another_producer_fails_from_the_stage_that_changes_it(
    tmp_path: Path, sg: Sg
) -> None:
    """The names are equal at every stage; the job that builds them is not."""
    root = make(tmp_path, BUILDER, QUIET.format(n=1), SWITCH.format(n=2), QUIET.format(n=3))
    report = continuity(sg, root)
    assert {stage: r["ok"] for stage, r in report.items()} == {
        0: True,
        1: True,
        2: False,
        3: False,
    }
    assert messages(report[2]) == [MOVED]
    assert messages(report[3]) == [MOVED]  # still names stage 2, where it changed
    assert report[2]["file"] == "migration.yaml" and report[2]["line"] == 25


def test_the_move_declared_in_release_changes_passes(tmp_path: Path, sg: Sg) -> None:
    switch = SWITCH.format(n=2) + MOVE.format(glob="'pkg-python*'")
    root = make(tmp_path, BUILDER, QUIET.format(n=1), switch, QUIET.format(n=3))
    report = continuity(sg, root)
    assert all(r["ok"] for r in report.values()), report
    assert report[3]["message"] == (
        "release-continuity tag=v1.0.0 at stage 3: release rel selects the 3 artifact names "
        "planned: 3 of the 3 of stage 0 kept (2 now from other producers), 0 added and 0 dropped "
        "by the release_changes of stages 1..3"
    )


def test_a_move_declared_for_part_of_the_names_fails_for_the_rest(tmp_path: Path, sg: Sg) -> None:
    switch = SWITCH.format(n=2) + MOVE.format(glob="'pkg-python313-*'")
    report = continuity(sg, make(tmp_path, BUILDER, QUIET.format(n=1), switch))
    assert report[2]["ok"] is False
    assert messages(report[2]) == [
        "release rel (migration.yaml:21) still selects pkg-python314-{sha} but now takes it "
        "from producer new-wheels (migration.yaml:15) instead of producer old-wheels "
        "(migration.yaml:12), from which it took it at stage 0; changed at stage 2 "
        "(stages/02-step.yaml): what ships under that name has changed. If that is meant, "
        "declare the move in that stage file's release_changes (a `drop` and an `add` of the "
        "name); else take it from producer old-wheels (migration.yaml:12) again."
    ]


def test_a_move_declared_a_stage_late_fails_at_the_stage_that_moves(
    tmp_path: Path, sg: Sg
) -> None:
    late = QUIET.format(n=3) + MOVE.format(glob="'pkg-python*'")
    report = continuity(sg, make(tmp_path, BUILDER, QUIET.format(n=1), SWITCH.format(n=2), late))
    assert {stage: r["ok"] for stage, r in report.items()} == {
        0: True,
        1: True,
        2: False,
        3: True,
    }
    assert messages(report[2]) == [MOVED]


SDIST_KEEPS_THE_NAME = """\
version: 1
migration: dist
summary: Wheels renamed per OS; the sdist keeps the old name.
stage: 0
axes:
  sha: {pattern: "[0-9a-f]{40}"}
  os: [linux, windows]
flags:
  per_os:
    summary: Name the wheel artifacts per OS.
producers:
  wheels:
    when: not per_os
    artifacts: ["dist-{sha}"]
  wheels-per-os:
    when: per_os
    artifacts: ["wheels-{os}-{sha}"]
  sdist:
    artifacts: ["dist-{sha}"]
releases:
  rel:
    tags: ["v1.*"]
    select: ["dist-*"]
invariants:
  - check: release-continuity
    tag: v1.0.0
"""


def test_a_name_no_longer_taken_from_one_of_its_producers_fails(tmp_path: Path, sg: Sg) -> None:
    """upload-artifact v3 merged the wheels and the sdist into one `dist`; renaming the
    wheels per OS leaves the release downloading `dist`: the sdist alone. The set of names
    the release selects is the same."""
    per_os = "stage: 1\ntitle: Wheels per OS\nset:\n  per_os: true\n"
    report = continuity(sg, make(tmp_path, SDIST_KEEPS_THE_NAME, per_os))
    assert report[0]["ok"] is True
    assert messages(report[1]) == [
        "release rel (migration.yaml:21) still selects dist-{sha} but no longer takes it from "
        "producer wheels (migration.yaml:12), only from producer sdist (migration.yaml:18), "
        "where it took it from producers sdist (migration.yaml:18) and wheels "
        "(migration.yaml:12) at stage 0; changed at stage 1 (stages/01-step.yaml): what ships "
        "under that name has changed. If that is meant, declare the move in that stage file's "
        "release_changes (a `drop` and an `add` of the name); else take it from producers "
        "sdist (migration.yaml:18) and wheels (migration.yaml:12) again."
    ]


# --------------------------------------------------------------------- changes that cancel out

CHURN = "stage: {n}\ntitle: Churn\nrelease_changes:\n{entries}"


def entry(drop: str, add: str) -> str:
    return f"  - tag: v1.0.0\n    drop: [{drop}]\n    add: [{add}]\n"


def test_entries_whose_drop_and_add_cancel_out_fail_each_at_its_line(
    tmp_path: Path, sg: Sg
) -> None:
    """The second entry drops 3.14 (3.13 is gone already) and adds it back: nothing either."""
    churn = CHURN.format(
        n=1,
        entries=entry("'pkg-python313-*'", "'pkg-python313-*'")
        + entry("'pkg-python31*'", "'pkg-python314-*'"),
    )
    report = continuity(sg, make(tmp_path, BUILDER, churn))
    assert messages(report[1]) == [
        f"stage 1 (stages/01-step.yaml:{line}) release_changes for v1.0.0: drop {drop!r} and "
        f"add {add!r} cancel out: release rel (migration.yaml:21) takes the names they match "
        "from the same producers after this stage as before it (a drop and an add of one name "
        "declare a move only when the name then comes from another producer); a planned "
        "change must change the selection: fix the glob (or the release's select), or remove "
        "the entry."
        for line, drop, add in (
            (4, "pkg-python313-*", "pkg-python313-*"),
            (7, "pkg-python31*", "pkg-python314-*"),
        )
    ]


def test_a_glob_of_an_entry_that_cancels_out_fails_at_the_glob(tmp_path: Path, sg: Sg) -> None:
    """The entry drops 3.13 (a change), but its drop and add of 3.14 change nothing."""
    churn = CHURN.format(
        n=1, entries=entry("'pkg-python313-*', 'pkg-python314-*'", "'pkg-python314-*'")
    )
    result = sg("check", "--all", cwd=make(tmp_path, BUILDER, churn))
    assert result.code == 1
    said = (
        "cancels out: this stage takes the names it matches from the same producers as "
        "before, so release rel (migration.yaml:21) selects what it selected before (a drop "
        "and an add of one name declare a move only when the name then comes from another "
        "producer); a planned change must change the selection: fix the glob (or the "
        "release's select), or remove the entry."
    )
    assert (
        f"        - stage 1 (stages/01-step.yaml) release_changes for v1.0.0: drop "
        f"'pkg-python314-*' {said}\n          at stages/01-step.yaml:5\n"
        f"        - stage 1 (stages/01-step.yaml) release_changes for v1.0.0: add "
        f"'pkg-python314-*' {said}\n          at stages/01-step.yaml:6\n"
    ) in result.out
    # control: without the 3.14 globs the entry is an exact drop of 3.13 (which then
    # fails only as a planned drop whose names the release still selects)
    exact = CHURN.format(n=1, entries="  - tag: v1.0.0\n    drop: ['pkg-python313-*']\n")
    report = continuity(sg, make(tmp_path / "exact", BUILDER, exact))
    assert not any("cancel" in m for m in messages(report[1]))


def test_a_drop_and_add_that_leave_one_producer_out_is_a_declared_change(
    tmp_path: Path, sg: Sg
) -> None:
    """Control for the cancelling entries: the same drop and add of `dist-*` changes which
    producers the release takes `dist-{sha}` from, and passes."""
    per_os = (
        "stage: 1\ntitle: Wheels per OS\nset:\n  per_os: true\nrelease_changes:\n"
        + entry("'dist-*'", "'dist-*'")
    )
    report = continuity(sg, make(tmp_path, SDIST_KEEPS_THE_NAME, per_os))
    assert report[1]["ok"] is True, report[1]
    assert report[1]["message"] == (
        "release-continuity tag=v1.0.0 at stage 1: release rel selects the 1 artifact name "
        "planned: 1 of the 1 of stage 0 kept (1 now from other producers), 0 added and 0 "
        "dropped by the release_changes of stage 1"
    )
