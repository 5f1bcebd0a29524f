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
        "planned: 3 of the 3 of stage 0 kept (2 from another producer), 0 added and 0 dropped "
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
