"""The model side of issue 35: a producer declares the wheels its rows carry (`wheels:`),
and release-continuity holds the release to the wheels it shipped at `since`, changed only
by the stages' `release_changes` (`wheels: {add, drop}`). Small hand models; each failure
beside the control that passes."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

from conftest import Result

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: wheels
summary: The wheels move to a new build job.
stage: 0
axes:
  os: [linux, windows]
  sha: {{pattern: "[0-9a-f]{{40}}"}}
flags:
  new_builder:
    summary: Build the wheels in the new job.
producers:
  old-wheels:
    when: not new_builder
    artifacts: ["wheels-{{os}}-{{sha}}"]
    wheels: ["cp3{{8..13}}-manylinux_x86_64", "cp3{{8..13}}-win_amd64"]
  new-wheels:
    when: new_builder
    artifacts: ["wheels-{{os}}-{{sha}}"]
    wheels: [{new}]
releases:
  rel:
    tags: ["v1.*"]
    select: ["wheels-*"]
invariants:
  - check: release-continuity
    tag: v1.0.0
"""
MOVE = "release_changes:\n  - tag: v1.0.0\n    drop: [\"wheels-*\"]\n    add: [\"wheels-*\"]\n"
SWITCH = "stage: 1\ntitle: The new job\nset:\n  new_builder: true\n" + MOVE


def make(tmp_path: Path, new: str, stage: str) -> Path:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(MODEL.format(new=new))
    (root / "stages" / "01-switch.yaml").write_text(textwrap.dedent(stage))
    return root


def findings(sg: Sg, root: Path) -> list[str]:
    result = sg("check", "--stage", "1", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    reports = [r for r in json.loads(result.out)["results"] if r["check"] == "release-continuity"]
    return [f["message"] for r in reports for f in r["findings"]]


SAME = '"cp3{8..13}-{manylinux_x86_64,win_amd64}"'


def test_a_new_job_that_builds_the_same_wheels_passes(sg: Sg, tmp_path: Path) -> None:
    assert findings(sg, make(tmp_path, SAME, SWITCH)) == []


def test_a_new_job_that_skips_cp38_loses_its_wheels(sg: Sg, tmp_path: Path) -> None:
    got = findings(sg, make(tmp_path, '"cp3{9..13}-{manylinux_x86_64,win_amd64}"', SWITCH))
    assert got == [
        "release rel (migration.yaml:21) no longer ships 2 wheels cp38-manylinux_x86_64, "
        "cp38-win_amd64, which it shipped at stage 0 from producer old-wheels "
        "(migration.yaml:12): declare it in the release_changes (wheels: drop) of the stage "
        "that changes it, or build them again."
    ]


def test_a_declared_drop_and_add_pass(sg: Sg, tmp_path: Path) -> None:
    stage = SWITCH + '    wheels:\n      drop: ["cp38-*"]\n      add: ["cp314-*"]\n'
    new = '"cp3{9..14}-{manylinux_x86_64,win_amd64}"'
    assert findings(sg, make(tmp_path, new, stage)) == []


def test_gained_wheels_need_an_add(sg: Sg, tmp_path: Path) -> None:
    got = findings(sg, make(tmp_path, '"cp3{8..14}-{manylinux_x86_64,win_amd64}"', SWITCH))
    assert got == [
        "release rel (migration.yaml:21) now ships 2 wheels cp314-manylinux_x86_64, "
        "cp314-win_amd64 from producer new-wheels (migration.yaml:16), which it did not ship "
        "at stage 0 and no release_changes (wheels: add) of stages 1..1 adds: declare them, "
        "or stop building them."
    ]


def test_a_wheels_glob_that_changes_nothing_fails(sg: Sg, tmp_path: Path) -> None:
    stage = SWITCH + '    wheels:\n      drop: ["cp27-*"]\n'
    assert findings(sg, make(tmp_path, SAME, stage)) == [
        "stage 1 (stages/01-switch.yaml:6) release_changes for v1.0.0: wheels drop 'cp27-*' "
        "drops nothing: no wheel planned at the stage before matches it; a planned change "
        "must change what ships: fix the glob, or remove it."
    ]


def test_a_declared_wheel_must_be_an_exact_identifier(sg: Sg, tmp_path: Path) -> None:
    root = make(tmp_path, '"cp3*-win_amd64", "cp312-windows"', SWITCH)
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert result.err.splitlines() == [
        "migration.yaml:19:18: $.producers.new-wheels.wheels[0]: wheels: '*': a declared wheel "
        "is an exact identifier; braces ({a,b}, {1..3}) may list several, a glob may not",
        "migration.yaml:19:33: $.producers.new-wheels.wheels[1]: wheels: 'cp312-windows' is not "
        "a build identifier (PYTHON-PLATFORM, e.g. cp312-manylinux_x86_64, or PYTHON-abi3-PLATFORM)",
        "2 problems found; fix them and run `stagegate validate`.",
    ]


def test_plan_shows_the_planned_wheels(sg: Sg, tmp_path: Path) -> None:
    stage = SWITCH + '    wheels:\n      drop: ["cp38-*"]\n'
    root = make(tmp_path, '"cp3{9..13}-{manylinux_x86_64,win_amd64}"', stage)
    result = sg("diff", "0", "1", cwd=root)
    assert "stage 1 changes release rel (v1.0.0): + wheels-*, - wheels-*, - wheels cp38-*" in result.out
