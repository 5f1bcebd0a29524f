"""An input's `exclude`: names its job downloads with the glob and then deletes.

cuda-python's prior-branch step downloads `cuda-bindings-python${PY}-cuda*-${platform}*`
and then runs `rm -rf ${OLD_BASENAME}-tests`: what the job keeps is the glob minus the
`-tests` artifacts. These tests pin that the checks, `plan` and the pytest plugin see the
glob minus its excludes, and that a bad exclude is reported where it is written.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

from conftest import Result
from stagegate.testing import StageUnderTest
from stagegate.validation import load

Sg = Callable[..., Result]

MIGRATION = """\
version: 1
migration: demo
summary: A download glob followed by a deletion.
stage: 0
axes:
  py: ["311", "312"]
  sha: {pattern: "[0-9a-f]{40}"}
flags:
  local:
    summary: Build the CUDA 12 wheels in this run.
producers:
  branch:
    summary: The maintenance branch's wheels and Cython tests.
    run: branch
    artifacts:
      - "cuda-bindings-python{py}-cuda12.9.1-linux-64-{sha}"
      - "cuda-bindings-python{py}-cuda12.9.1-linux-64-{sha}-tests"
consumers:
  core-build:
    summary: Takes the branch's wheels; deletes the Cython tests it also downloaded.
    inputs:
      - select: "cuda-bindings-python{py}-cuda*-linux-64*"
        from: [branch]
        EXCLUDE
"""

STAGE = "stage: 1\ntitle: Step\nset:\n  local: true\nacceptance:\n  - check: single-source\n"


def tree(tmp_path: Path, exclude: str) -> Path:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    text = (
        MIGRATION.replace("EXCLUDE", exclude)
        if exclude
        else MIGRATION.replace("        EXCLUDE\n", "")
    )
    (root / "migration.yaml").write_text(text)
    (root / "stages" / "01-step.yaml").write_text(STAGE)
    return root


def kept(root: Path) -> dict[str, list[str]]:
    """py value -> the names the core-build input keeps, as every check sees them."""
    from stagegate.engine.match import selections

    stage = StageUnderTest(load(root / "migration.yaml"), 0)
    (item,) = stage.migration.consumers["core-build"].inputs
    return {
        dict(sel.assignment)["py"]: sorted(r.name for r in rows)
        for sel, rows in selections(stage.plan, item)
    }


def test_without_exclude_the_glob_takes_the_tests_too(tmp_path: Path) -> None:
    assert kept(tree(tmp_path, "")) == {
        py: [
            f"cuda-bindings-python{py}-cuda12.9.1-linux-64-{{sha}}",
            f"cuda-bindings-python{py}-cuda12.9.1-linux-64-{{sha}}-tests",
        ]
        for py in ("311", "312")
    }


def test_exclude_drops_the_names_from_every_check_and_from_plan(sg: Sg, tmp_path: Path) -> None:
    root = tree(tmp_path, 'exclude: ["*-tests"]')
    plan = json.loads(sg("plan", "--format", "json", cwd=root).out)
    (item,) = plan["inputs"]["core-build"]
    assert item["exclude"] == ["*-tests"]
    text = sg("plan", cwd=root).out
    assert (
        "cuda-bindings-python{py}-cuda*-linux-64*  (required; from branch; minus *-tests)" in text
    )
    assert sg("check", "--stage", "1", cwd=root).code == 0


def test_an_exclude_that_removes_everything_leaves_the_input_unsatisfied(
    sg: Sg, tmp_path: Path
) -> None:
    root = tree(tmp_path, 'exclude: ["*-linux-64-*"]')
    (root / "stages" / "01-step.yaml").write_text(
        STAGE.replace("single-source", "inputs-satisfied")
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "required input 'cuda-bindings-python{py}-cuda*-linux-64*'" in result.out
    assert "selects nothing" in result.out


def test_the_excluded_rows_are_gone_row_by_row(tmp_path: Path) -> None:
    root = tree(tmp_path, 'exclude: ["*-tests"]')
    assert kept(root) == {
        "311": ["cuda-bindings-python311-cuda12.9.1-linux-64-{sha}"],
        "312": ["cuda-bindings-python312-cuda12.9.1-linux-64-{sha}"],
    }
    stage = StageUnderTest(load(root / "migration.yaml"), 0)
    assert stage.feeds("core-build") == {"py=311": ["branch"], "py=312": ["branch"]}


def test_a_bad_exclude_is_invalid_input_at_its_line(sg: Sg, tmp_path: Path) -> None:
    root = tree(tmp_path, 'exclude: [""]')
    result = sg("validate", cwd=root)
    assert result.code == 2
    line = next(
        i for i, text in enumerate(textwrap.dedent(MIGRATION).splitlines(), 1) if "EXCLUDE" in text
    )
    assert f"migration.yaml:{line}:" in result.output


def test_an_exclude_that_is_not_a_list_is_invalid_input(sg: Sg, tmp_path: Path) -> None:
    root = tree(tmp_path, "exclude: '*-tests'")
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert "exclude" in result.output
