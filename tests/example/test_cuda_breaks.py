"""bench/cuda_breaks.py's edits on the mirror of cuda-python's CI: every break the mirror
can show fails `check --all` at the current stage (0) with the finding that names it, and
every harmless edit passes `check --all` and `continuity --base HEAD~1`.

The bench runs the same edits on a clone of the real tree (docs/drift.md shows its table);
here the tree is tests/fixtures/cuda-python-tree with the worked example at its top,
committed once for the module, and each edit is one commit on a copy of it. The stage
files' pytest checks are left out of the copy (they read the model, not the workflows, and
each would start a pytest process); everything else of `check --all` runs.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, REPO, Result

sys.path.insert(0, str(REPO / "bench"))
from cuda_breaks import EDITS, Edit, EditFailed, Replace, apply, commit_base, example_into, judge

TREE = FIXTURES / "cuda-python-tree"
ON_MIRROR = [e for e in EDITS if e.mirror is not None]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mirror with the example at its top, without the stage files' pytest checks."""
    root = tmp_path_factory.mktemp("breaks") / "base"
    shutil.copytree(TREE, root, ignore=shutil.ignore_patterns("migration.yaml", "stages"))
    example_into(root)
    for stage_file in (root / "stages").glob("*.yaml"):
        text = stage_file.read_text(encoding="utf-8")
        stage_file.write_text(
            re.sub(r"^  - check: pytest\n(?:    [^\n]*\n)*", "", text, flags=re.M),
            encoding="utf-8",
        )
    commit_base(root)
    return root


def edited(base: Path, tmp_path: Path, edit: Edit) -> Path:
    root = tmp_path / edit.name
    shutil.copytree(base, root, symlinks=True)
    assert edit.mirror is not None
    apply(root, edit, edit.mirror)
    return root


def runner(sg: Callable[..., Result]) -> Callable[[Path, Sequence[str]], tuple[int, str]]:
    def run(root: Path, argv: Sequence[str]) -> tuple[int, str]:
        result = sg(*argv, cwd=root)
        return result.code, result.out

    return run


def stage0_workflows(check_out: str) -> dict[str, Any]:
    """The `workflows` check's result at stage 0 in ``check --all --format json``."""
    report = json.loads(check_out)
    (found,) = [r for r in report["results"] if r["check"] == "workflows" and r["stage"] == 0]
    return found  # type: ignore[no-any-return]


BREAK_FINDINGS = {
    # edit -> a finding kind of the `workflows` check at stage 0, and text its message holds
    "bindings-upload-renamed": ("undeclared-upload", "producer bindings-cu13 ("),
    "download-pattern-narrowed": ("select-differs", "release cuda-bindings-13 ("),
    "tests-skip-dropped": ("select-differs", "-tests (bindings-cu13, by ci/tools/download-wheels"),
    "py313-dropped": ("missing-upload", "cuda-bindings-python313-cuda13.3.0-linux-64-{sha}"),
    "aarch64-deleted": ("missing-upload", "cuda-bindings-python310-cuda13.3.0-linux-aarch64-{sha}"),
    "one-name-eight-legs": ("upload-collision", "upload contexts make the artifact"),
    "release-into-wheelhouse": ("where-files-land", "its script then moves them to wheelhouse/"),
    "matrix-row-removed": ("empty-matrix", "'Error: Empty matrix'"),
    "same-run-cu12-upload": ("undeclared-upload", "producer bindings-cu12 ("),
}


@pytest.mark.parametrize("edit", [e for e in ON_MIRROR if e.kind == "break"], ids=lambda e: e.name)
def test_a_break_fails_the_checks_of_the_current_stage(
    edit: Edit, base: Path, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """`check --stage 0`: what `check --all` holds at the current stage (the stages ahead
    are readiness); the bench runs `check --all` itself on the real tree."""
    root = edited(base, tmp_path, edit)
    kind, text = BREAK_FINDINGS[edit.name]
    result = sg("check", "--stage", "0", "--format", "json", cwd=root)
    assert result.code == 1, result.output
    found = stage0_workflows(result.out)
    assert not found["ok"]
    messages = [f["message"] for f in found["findings"]]
    assert any(m.startswith(f"{kind}: ") and text in m for m in messages), messages


def test_the_harmless_edits_pass_check_all_and_continuity(
    base: Path, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """All of them in one commit (each changes another place): `check --all` and
    `continuity --base HEAD~1` pass."""
    root = tmp_path / "harmless"
    shutil.copytree(base, root, symlinks=True)
    chosen = [e for e in ON_MIRROR if e.kind == "harmless" and e.name != "tr-as-sed"]
    assert {e.name for e in chosen} == {
        "step-renamed",
        "matrix-reordered-retention",
        "gpu-label-changed",
        "tr-as-expansion",
    }  # tr-as-sed rewrites the line tr-as-expansion rewrites: its own test below
    changes = tuple(c for e in chosen for c in e.mirror or ())
    combined = Edit("harmless", "harmless", "every harmless edit", changes)
    apply(root, combined, combined.real)
    outcome = judge(root, combined, runner(sg))
    assert (outcome.check, outcome.continuity) == (0, 0), outcome
    report = json.loads(outcome.check_out)
    ran = {(r["check"], r["stage"]) for r in report["results"]}
    assert {("workflows", s) for s in range(8)} <= ran  # the current stage, and readiness
    assert {("flags-wired", s) for s in range(1, 7)} <= ran
    now = next(r for r in report["results"] if (r["check"], r["stage"]) == ("workflows", 0))
    assert now["message"].startswith("workflows strict=True at stage 0: 13 workflow files, ")
    # continuity follows release.yml's publish jobs to the tag's CI run (ci.yml's, which
    # ci/tools/lookup-run-id looks up): the wheels of every build row reach them
    releases = json.loads(outcome.continuity_out)["releases"]
    reached = {r["job"]: len(r["head"]) for r in releases if r["file"].endswith("/release.yml")}
    assert reached == {"upload-archive": 38, "publish-testpypi": 38, "publish-pypi": 38}


def test_tr_written_as_sed_passes_the_current_stage(
    base: Path, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """The shell reader computes `sed 's/\\.//g'` as it computes `tr -d '.'`: the same
    names, nothing unresolved, and the release ships the same uploads."""
    (edit,) = [e for e in EDITS if e.name == "tr-as-sed"]
    root = edited(base, tmp_path, edit)
    result = sg("check", "--stage", "0", "--format", "json", cwd=root)
    assert result.code == 0, stage0_workflows(result.out)["findings"][:1]
    assert sg("continuity", "--base", "HEAD~1", cwd=root).code == 0


def test_an_edit_whose_text_is_gone_stops_naming_the_file(base: Path, tmp_path: Path) -> None:
    root = tmp_path / "copy"
    shutil.copytree(base, root, symlinks=True)
    edit = Edit("gone", "break", "", (Replace("ci/tools/env-vars", "no such text", "x"),))
    with pytest.raises(EditFailed, match=r"^ci/tools/env-vars: expected 1 occurrence\(s\) of"):
        apply(root, edit, edit.real)
    twice = Replace(".github/workflows/release.yml", '"dist"', '"x"')
    with pytest.raises(EditFailed, match=r"expected 1 occurrence\(s\) of '\"dist\"', found 2"):
        twice.apply(root)
