"""The worked example at the repository root: its plans pinned as snapshots, and its proof.

The plans of every stage (text and JSON) are the reviewed picture of the migration:
a change to the example or to the plan renderer shows up as a diff of
tests/snapshots/plan/; record a deliberate one with `--snapshot-update`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_snapshot.plugin import Snapshot

from conftest import REPO, Result

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "plan"
STAGES = range(8)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Example Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "Example Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's own files, alone in a throwaway git repository (`retired` needs one)."""
    root = tmp_path_factory.mktemp("example")
    shutil.copy2(REPO / "migration.yaml", root / "migration.yaml")
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, **GIT_ENV}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "example"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)
    return root


def test_the_example_validates(example: Path, sg: Callable[..., Result]) -> None:
    result = sg("validate", cwd=example)
    assert result.code == 0, result.output
    assert result.out.startswith("migration.yaml: valid: 7 stage files, 9 flags, ")


@pytest.mark.parametrize("stage", STAGES)
def test_plan_text_is_pinned(
    example: Path, sg: Callable[..., Result], snapshot: Snapshot, stage: int
) -> None:
    result = sg("plan", "--stage", str(stage), cwd=example)
    assert result.code == 0, result.output
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(result.out, f"stage-{stage}.txt")


@pytest.mark.parametrize("stage", STAGES)
def test_plan_json_is_pinned(
    example: Path, sg: Callable[..., Result], snapshot: Snapshot, stage: int
) -> None:
    result = sg("plan", "--stage", str(stage), "--format", "json", cwd=example)
    assert result.code == 0, result.output
    plan = json.loads(result.out)
    assert plan["stage"] == stage
    assert {"flags", "producers", "consumers", "releases"} <= set(plan)
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(result.out, f"stage-{stage}.json")


def test_the_cuda13_bindings_come_from_one_producer_at_every_stage(
    example: Path, sg: Callable[..., Result]
) -> None:
    for stage in STAGES:
        plan = json.loads(sg("plan", "--stage", str(stage), "--format", "json", cwd=example).out)
        assert "bindings-cu13" in plan["producers"], stage


def test_check_all_passes_on_the_example(example: Path, sg: Callable[..., Result]) -> None:
    """The headline: every stage keeps the CUDA 13 release, with each stage's own tests."""
    result = sg("check", "--all", "--format", "json", cwd=example)
    report = json.loads(result.out)
    failed = [r["message"] for r in report["results"] if not r["ok"]]
    assert result.code == 0 and report["ok"], "\n".join(failed)
    ran = {(r["check"], r["stage"]) for r in report["results"]}
    for stage in STAGES:
        assert ("release-continuity", stage) in ran
    assert {s for kind, s in ran if kind == "pytest"} == set(range(1, 8))
    assert {s for kind, s in ran if kind == "tags-routed"} == {5, 6, 7}
    assert ("retired", 7) in ran
