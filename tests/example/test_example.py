"""The worked example at the repository root: its plans pinned as snapshots, and its proof.

The plans of every stage (text and JSON) are the reviewed picture of the migration:
a change to the example or to the plan renderer shows up as a diff of
tests/snapshots/plan/; record a deliberate one with `--snapshot-update`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from pytest_snapshot.plugin import Snapshot

from conftest import FIXTURES, REPO, TESTS, Result

SNAPSHOTS = TESTS / "snapshots" / "plan"
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


_PLANS: dict[tuple[Path, int], Result] = {}
"""``plan --format json`` of the example at each stage, run once for the tests that read it."""


def plan_json(sg: Callable[..., Result], example: Path, stage: int) -> Result:
    if (example, stage) not in _PLANS:
        _PLANS[example, stage] = sg("plan", "--stage", str(stage), "--format", "json", cwd=example)
    return _PLANS[example, stage]


@pytest.mark.parametrize("stage", STAGES)
def test_plan_json_is_pinned(
    example: Path, sg: Callable[..., Result], snapshot: Snapshot, stage: int
) -> None:
    result = plan_json(sg, example, stage)
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
        plan = json.loads(plan_json(sg, example, stage).out)
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


# --------------------------------------------------------------------------- the example on the tree

TREE = FIXTURES / "cuda-python-tree"


def example_on_tree(root: Path, after: int = 0) -> Path:
    """The fixture tree (cuda-python's CI at main cb56ab9f) with the example as its migration.

    ``after`` 3 or 7: the tree as the example's stages up to that one leave it, from the
    overlay tests/fixtures/cuda-python-tree-stageN/ (the files those stages change, in
    full; removed.txt lists the files they delete)."""
    shutil.copytree(TREE, root, ignore=shutil.ignore_patterns("migration.yaml", "stages"))
    if after:
        overlay = TREE.with_name(f"{TREE.name}-stage{after}")
        shutil.copytree(
            overlay, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("removed.txt")
        )
        removed = overlay / "removed.txt"
        if removed.exists():
            for line in removed.read_text().splitlines():
                if line and not line.startswith("#"):
                    (root / line).unlink()
    shutil.copy2(REPO / "migration.yaml", root / "migration.yaml")
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, **GIT_ENV}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "cb56ab9f"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)
    return root


Trees = Callable[[int], Path]


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Trees:
    """``trees(after)``: ``example_on_tree`` for 0, 3 or 7 without the stage files' pytest
    checks (``without_pytest_checks``), built once for the module and shared by the tests
    that only read it (audit, drift and the checks that read the workflows write nothing;
    audit and drift print the same on the tree with its pytest checks); a test that changes
    its tree builds its own."""
    built: dict[int, Path] = {}

    def tree(after: int = 0) -> Path:
        if after not in built:
            folder = tmp_path_factory.mktemp(f"tree-after-{after}")
            built[after] = example_on_tree(folder / "cuda-python", after=after)
            without_pytest_checks(built[after])
            _SHARED.add(str(built[after].resolve()))
        return built[after]

    return tree


_SHARED: set[str] = set()
"""The roots of ``trees``: read only, so a reading of one is made once."""
_READ: dict[tuple[object, ...], tuple[Any, Any, dict[Any, Any]]] = {}
"""The workflows' reading of a shared tree at a stage (``ships.read_model``), with what it
took from its stage: `drift` and the check `workflows` read the same tree alike."""


@pytest.fixture(autouse=True)
def _read_shared_trees_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ships.read_model`` of a shared tree made once for the module (`drift` and `check`
    at one stage on one tree make the same reading); any other tree is read afresh."""
    from stagegate.ci import ships

    real = ships.read_model

    def once(migration: Any, stage: int, files: Any, **kwargs: Any) -> Any:
        root = str(Path(migration.root).resolve())  # the tree the command runs in
        if root not in _SHARED:
            return real(migration, stage, files, **kwargs)
        key = (migration.file, root, stage, str(Path(files.root).resolve()))
        if key not in _READ:
            took: dict[Any, Any] = {}
            reading, side = real(migration, stage, files, stage_reads=took)
            _READ[key] = (reading, side, took)
        reading, side, took = _READ[key]
        if kwargs.get("stage_reads") is not None:
            kwargs["stage_reads"].update(took)
        return reading, side

    monkeypatch.setattr(ships, "read_model", once)


def test_audit_at_stage_7_finds_every_branch_reference_of_the_tree(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    root = trees(0)
    result = sg("audit", "--stage", "7", "--format", "json", cwd=root)
    assert result.code == 1, result.output
    report = json.loads(result.out)
    found: dict[str, set[tuple[str, int]]] = {}
    for finding in report["findings"]:
        if finding["item"] == "bindings-cu12-branch":
            found.setdefault(finding["reference"], set()).add((finding["file"], finding["line"]))

    def grep(*args: str) -> set[tuple[str, int]]:
        out = subprocess.run(
            ["git", "grep", "-n", *args, "--", ".github", "ci"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout
        return {
            (path, int(number)) for path, number, _ in (x.split(":", 2) for x in out.splitlines())
        }

    expected = {
        reference: grep("-F", "-e", reference)
        for reference in (
            "backport_branch",
            "BACKPORT_BRANCH",
            "LATEST_PRIOR_RUN_ID",
            "ci/versions.json",
            "12.9.x",
        )
    }
    backport_mode = "BINDINGS_SOURCE *={1,2} *'?backport"
    expected[f"{{regex: {backport_mode}}}"] = grep("-E", "-e", backport_mode)
    # env-vars sets the mode; both test workflows' prior-branch step tests it.
    assert {f for f, _ in expected[f"{{regex: {backport_mode}}}"]} == {
        "ci/tools/env-vars",
        ".github/workflows/test-wheel-linux.yml",
        ".github/workflows/test-wheel-windows.yml",
    }
    # Every line of the tree that holds a listed string is a finding, and each string
    # occurs: the branch is read in build-wheel.yml, both test workflows, backport.yml,
    # dependabot.yml, build-docs.yml's versions.json fallback and env-vars' backport mode.
    assert all(expected.values()), expected
    assert {ref: found.get(ref, set()) for ref in expected} == expected
    assert (".github/workflows/backport.yml", None) in found[".github/workflows/backport.yml"]
    # Listed so that nothing brings them over from the 12.9.x branch: not on main.
    assert "LATEST_MAIN_RUN_ID" not in {f["reference"] for f in report["findings"]}
    assert ".github/BACKPORT_BRANCH" not in found


def test_the_metapackage_name_is_written_unquoted_twelve_times(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    """As at cb56ab9f: build-wheel 1, each test workflow 5, build-docs 1; the pattern
    reference finds each of them and none of the versioned names."""
    root = trees(0)
    lines = subprocess.run(
        ["git", "grep", "-n", "-E", "cuda-python-wheel($|[^-])", "--", ".github", "ci"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert len(lines) == 12
    assert not any('cuda-python-wheel"' in line or "cuda-python-wheel'" in line for line in lines)
    report = json.loads(sg("audit", "--stage", "7", "--format", "json", cwd=root).out)
    found = {
        (f["file"], f["line"]) for f in report["findings"] if f["item"] == "metapackage-unversioned"
    }
    assert found == {(path, int(number)) for path, number, _ in (x.split(":", 2) for x in lines)}


def test_on_the_tree_after_stage_7_nothing_retired_is_left(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    root = trees(7)
    result = sg("audit", "--stage", "7", "--format", "json", cwd=root)
    report = json.loads(result.out)
    assert result.code == 0 and report["findings"] == [], result.output
    # ... and the stage 0 tree holds what the cleanup removed.
    before = trees(0)
    assert sg("audit", "--stage", "7", cwd=before).code == 1


def without_pytest_checks(root: Path) -> None:
    """The stage files of the tree's copy of the example without their pytest checks,
    committed: a test that reads one other check's result need not start a pytest
    process per stage it checks."""
    for stage_file in (root / "stages").glob("*.yaml"):
        text = stage_file.read_text()
        stage_file.write_text(
            re.sub(r"^  - check: pytest\n(?:    [^\n]*\n)*", "", text, flags=re.M)
        )
    env = {**os.environ, **GIT_ENV}
    subprocess.run(
        ["git", "commit", "-q", "-am", "no pytest checks"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )


def flags_wired(sg: Callable[..., Result], root: Path, stage: int) -> dict[str, Any]:
    report = json.loads(sg("check", "--stage", str(stage), "--format", "json", cwd=root).out)
    (found,) = [r for r in report["results"] if r["check"] == "flags-wired"]
    found["text"] = "\n".join(
        [found["message"]]
        + [f"{f.get('file')}:{f.get('line')}: {f['message']}" for f in found.get("findings", [])]
    )
    return cast(dict[str, Any], found)


def test_flags_wired_holds_on_the_stage_3_tree_only(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    """Stage 3 flips local-cu12-bindings: its pull request makes build-wheel.yml read it.
    Stages 1 to 6 run flags-wired (their flips reach CI), on cuda-python's tree."""
    after, before = trees(3), trees(0)
    wired = flags_wired(sg, after, 3)
    assert wired["ok"], wired["text"]
    # On the stage 0 tree nothing reads BUILD_CU12_LOCAL: the flip would change nothing.
    unread = flags_wired(sg, before, 3)
    assert not unread["ok"] and "BUILD_CU12_LOCAL" in unread["text"], unread["text"]
    # At stage 2 the stage 3 tree hard-codes a value the flag does not have yet.
    early = flags_wired(sg, after, 2)
    assert not early["ok"]
    assert ".github/workflows/build-wheel.yml:30: " in early["text"], early["text"]
    assert "BUILD_CU12_LOCAL" in early["text"]


def test_a_release_that_takes_test_artifacts_fails_at_every_stage(
    example: Path, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """cuda-python #705: a release glob fetched `-tests` artifacts. Names alone cannot
    show it (the baseline selected them too); the release's kinds do, at stage 0."""
    root = tmp_path / "example"
    shutil.copytree(example, root)
    migration = root / "migration.yaml"
    text = migration.read_text()
    narrowed = 'select: ["cuda-bindings*"]\n    exclude: ["*-tests", "*python315*"]'
    assert text.count(narrowed) == 2
    migration.write_text(
        text.replace(narrowed, 'select: ["cuda-bindings*"]\n    exclude: ["*python315*"]')
    )
    result = sg("check", "--stage", "0", "--format", "json", cwd=root)
    report = json.loads(result.out)
    assert result.code == 1
    failed = [r for r in report["results"] if not r["ok"]]
    assert {r["check"] for r in failed} == {"release-continuity"}
    text = json.dumps(failed)
    assert "cuda-bindings-python{py}-cuda13.3.0-{platform}-{sha}-tests" in text
    assert "tests" in text and "wheel" in text


# --------------------------------------------------------------------------- drift on the trees


_DRIFTS: dict[tuple[Path, int], Result] = {}
"""``drift --format json`` on a shared tree (``trees``) at a stage, run once for the tests."""


def drift(
    sg: Callable[..., Result], root: Path, stage: int, *, shared: bool = False
) -> tuple[int, dict[str, Any]]:
    """``shared``: ``root`` is one of ``trees``, never changed: a run made before is reused."""
    if not shared or (root, stage) not in _DRIFTS:
        result = sg("drift", "--stage", str(stage), "--format", "json", cwd=root)
        if not shared:
            return result.code, json.loads(result.out)
        _DRIFTS[root, stage] = result
    result = _DRIFTS[root, stage]
    return result.code, json.loads(result.out)


def kinds_and_items(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["kind"], f["item"]) for f in report["findings"]}


def test_drift_passes_on_cuda_pythons_ci_at_stage_0(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    code, report = drift(sg, trees(0), 0, shared=True)
    assert code == 0 and report["findings"] == [], report["findings"]
    # What it compared: every upload of the build job, and the downloads it could read.
    assert len(report["uploads"]) > 100 and len(report["downloads"]) > 50
    prior = [d for d in report["downloads"] if d["run"] == "$LATEST_PRIOR_RUN_ID"]
    assert prior and all(d["exclude"] for d in prior if "cuda-bindings" in d["select"])


def test_drift_compares_the_linux_test_rows_and_shows_the_release_selections(
    trees: Trees, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """test-wheel-linux carries `jobs` (caller-keyed binds give each caller's Python
    versions): deleting one of its downloads is a finding; the releases' download-wheels
    selections are among the downloads, with the script's `continue` filters."""
    code, report = drift(sg, trees(0), 0, shared=True)
    assert code == 0, report["findings"]
    wheels = {
        (d["job"].rpartition("#")[2], d["select"], tuple(d["exclude"]))
        for d in report["downloads"]
        if d["file"] == "ci/tools/download-wheels"
    }
    # release.yml's choice input `component` is read once per option (issue 23)
    for component in ("cuda-core", "cuda-bindings", "cuda-pathfinder", "cuda-python"):
        assert ("publish-pypi", f"{component}*", ("*-tests", "*python315*")) in wheels
        assert ("upload", f"{component}*", ("*-tests", "*python315*")) in wheels
    assert ("upload-assets", "cuda-pathfinder*", ("*-tests", "*python315*")) in wheels
    root = example_on_tree(tmp_path / "cuda-python")  # its own tree: this test changes it
    workflow = root / ".github" / "workflows" / "test-wheel-linux.yml"
    text = workflow.read_text()
    start = text.index("      - name: Download cuda.core build artifacts\n")
    end = text.index("      - name: Download cuda.core Cython tests")
    workflow.write_text(text[:start] + text[end:])
    code, report = drift(sg, root, 0)
    assert code == 1
    # The nightly rows call the same workflow: both consumers lose Core's wheel.
    assert kinds_and_items(report) == {
        ("select-differs", "test-wheel-linux"),
        ("select-differs", "nightly-tests"),
    }
    linux = next(f for f in report["findings"] if f["item"] == "test-wheel-linux")
    assert "the model also selects cuda-core-python310-linux-64-{sha} (core)" in linux["message"]


def test_drift_on_the_stage_3_tree_passes_at_3_and_names_the_new_uploads_at_2(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    root = trees(3)
    code, report = drift(sg, root, 3, shared=True)
    assert code == 0 and report["findings"] == [], report["findings"]
    code, report = drift(sg, root, 2, shared=True)
    assert code == 1
    assert {f["kind"] for f in report["findings"]} == {"undeclared-upload"}
    named = " ".join(f["message"] for f in report["findings"])
    assert "cuda-bindings-python310-cuda12.9.1-linux-64-{sha}" in named
    assert "cuda-bindings-python310-cuda12.9.1-linux-64-{sha}-tests" in named
    assert {f["file"] for f in report["findings"]} == {".github/workflows/build-wheel.yml"}


def test_drift_on_the_stage_7_tree_passes_at_7_and_names_the_old_name_at_6(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    root = trees(7)
    code, report = drift(sg, root, 7, shared=True)
    assert code == 0 and report["findings"] == [], report["findings"]
    code, report = drift(sg, root, 6, shared=True)
    assert code == 1
    # Stage 7 dropped the unversioned metapackage: at stage 6 the model still has it. (The
    # docs jobs' names on this tree take the toolkit from `$(ci/tools/versions build)`,
    # which stagegate does not run: they are unresolved, so no docs consumer differs.)
    assert kinds_and_items(report) == {("missing-upload", "metapackage-unversioned")}
    for finding in report["findings"]:
        assert "cuda-python-wheel" in finding["message"]


def test_drift_at_stage_0_on_the_stage_7_tree_fails(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    code, report = drift(sg, trees(7), 0, shared=True)
    assert code == 1
    kinds = {f["kind"] for f in report["findings"]}
    assert {"undeclared-upload", "missing-upload"} <= kinds


def test_drift_on_the_stage_0_tree_holds_until_stage_3_asks_for_the_cuda12_uploads(
    trees: Trees, sg: Callable[..., Result]
) -> None:
    """Stages 1 and 2 change nothing drift reads; flipping to 3 without its workflow
    change is caught: the model's new producer has no upload."""
    root = trees(0)
    for stage in (1, 2):
        code, report = drift(sg, root, stage, shared=True)
        assert code == 0 and report["findings"] == [], (stage, report["findings"])
    code, report = drift(sg, root, 3, shared=True)
    assert code == 1
    assert kinds_and_items(report) == {("missing-upload", "bindings-cu12")}
    assert len(report["findings"]) == 2  # the wheels and their Cython tests


TR_FORM = "PYTHON_VERSION_FORMATTED=$(echo \"${PY_VER}\" | tr -d '.')"


@pytest.mark.parametrize(
    "rewritten",
    [
        "PYTHON_VERSION_FORMATTED=$(echo \"${PY_VER}\" | sed 's/\\.//g')",
        'PYTHON_VERSION_FORMATTED="${PY_VER//./}"',
    ],
    ids=["sed", "parameter-expansion"],
)
def test_drift_reads_every_upload_whichever_way_env_vars_drops_the_dot(
    trees: Trees, tmp_path: Path, sg: Callable[..., Result], rewritten: str
) -> None:
    """Issue 33: ci/tools/env-vars' Python version written with `sed` or `${PY_VER//./}`
    in place of `tr -d '.'` (a harmless refactor) reads as the same uploads, and
    `drift --strict` still passes; the tree as it is is the control (shared)."""
    code, before = drift(sg, trees(0), 0, shared=True)
    assert code == 0
    root = example_on_tree(tmp_path / "cuda-python")
    script = root / "ci" / "tools" / "env-vars"
    text = script.read_text(encoding="utf-8")
    assert text.count(TR_FORM) == 1
    script.write_text(text.replace(TR_FORM, rewritten), encoding="utf-8")
    result = sg("drift", "--stage", "0", "--strict", "--format", "json", cwd=root)
    assert result.code == 0, result.output
    after = json.loads(result.out)
    assert after["uploads"] == before["uploads"]
    assert after["unresolved"] == [] and len(after["uploads"]) == len(before["uploads"]) > 100
