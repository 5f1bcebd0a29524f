"""The worked example's stage 6, planned by `stagegate affected` for the three edits of
the seed's walkthrough ("follow one CUDA 12 source change through the planner ...
compare this with a Core-only edit and a shared-helper edit"), then with the baseline
run taken away, one required artifact taken away, and a file nobody declared.

The repository is the example's migration beside a small tree shaped like
cuda-python's: the three source roots, a shared test-helper package that each root's
tests/ reaches through a symbolic link (inferred: cuda-python shares test helpers
between the roots), and a CI script no item declares.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Result
from scratch import Repo, example_repo, pin_git

# Every producer active at stage 6, in the model's order: the artifacts that are not
# wheels (coverage data, the docs site, the release dry run's archive), then every
# wheel the example builds.
WHEELS = (
    "coverage-data",
    "docs-site",
    "release-dry-run",
    "pathfinder",
    "bindings-cu13",
    "numpy-prerelease",
    "bindings-cu12",
    "core-per-major-tests",
    "metapackage-unversioned",
    "metapackage-cu13",
    "metapackage-cu12",
)
PLANNED_JOBS = (
    "core-build-cu13-half",
    "core-build-cu12-half",
    "cu12-source-build-smoke",
    "test-wheel-linux-same-run",
    "test-wheel-windows-same-run",
    "docs",
    "sdist-tests-reuse",
)


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _tree(repo: Repo) -> None:
    repo.write("cuda_pathfinder/cuda/pathfinder/__init__.py", "")
    for root in ("cuda_bindings", "cuda_bindings_12"):
        repo.write(f"{root}/cuda/bindings/driver.pyx.in", "# the driver API\n")
        repo.write(f"{root}/tests/test_driver.py", "def test_driver(): ...\n")
        repo.write(f"{root}/pyproject.toml", "[project]\nname = 'cuda-bindings'\n")
    repo.write("cuda_core/cuda/core/_device.pyx", "# Device\n")
    repo.write("cuda_core/tests/test_device.py", "def test_device(): ...\n")
    repo.write("cuda_python/pyproject.toml", "[project]\nname = 'cuda-python'\n")
    repo.write("cuda_python_test_helpers/cuda_python_test_helpers/__init__.py", "# shared\n")
    for root in ("cuda_bindings", "cuda_bindings_12", "cuda_core"):
        os.symlink(
            "../../cuda_python_test_helpers/cuda_python_test_helpers",
            repo.root / root / "tests" / "helpers",
        )
    repo.write("ci/tools/env-vars", "#!/bin/sh\n")


EDITS = {
    "cu12-bindings": ("cuda_bindings_12/cuda/bindings/driver.pyx.in", "# the driver API, fixed\n"),
    "core-only": ("cuda_core/cuda/core/_device.pyx", "# Device, faster\n"),
    "shared-helper": (
        "cuda_python_test_helpers/cuda_python_test_helpers/__init__.py",
        "# shared, with a new helper\n",
    ),
    "undeclared": ("ci/tools/env-vars", "#!/bin/sh\nset -eu\n"),
    "readme-link": ("cuda_core/tests/helpers/__init__.py", "# edited through the link\n"),
}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Repo, str]]:
    """The repository, with one branch per edit; yields it and the base commit."""
    repo = example_repo(tmp_path_factory.mktemp("affected") / "repo")
    _tree(repo)
    base = repo.commit("cuda-python's tree")
    for branch, (path, text) in EDITS.items():
        repo.git("checkout", "-q", "-b", branch, base)
        repo.write(path, text)
        repo.commit(f"edit {path}")
    repo.git("checkout", "-q", "main")
    yield repo, base


@functools.cache
def _row_names(migration: Path) -> tuple[str, ...]:
    from stagegate.engine.resolve import resolve
    from stagegate.validation import load

    plan = resolve(load(str(migration)), 6)
    return tuple(
        row.name
        for producer in plan.producers
        if producer.run == "this"
        for row in plan.rows(producer)
    )


def _baseline(repo: Repo, sha: str, *, drop: str | None = None) -> Path:
    """A complete baseline run at ``sha``: every row stage 6 builds, named with ``sha``
    (``drop``: without that one name)."""
    names = [name.replace("{sha}", sha) for name in _row_names(repo.root / "migration.yaml")]
    if drop is not None:
        names.remove(drop)
    path = repo.root.parent / f"baseline-{sha[:7]}-{len(names)}.json"
    path.write_text(json.dumps({"sha": sha, "artifacts": names}), encoding="utf-8")
    return path


Plan = Callable[..., dict[str, Any]]


def _planning_doc() -> str:
    """docs/planning.md, which quotes these plans, with its lines joined."""
    text = (REPO / "docs" / "planning.md").read_text(encoding="utf-8")
    return " ".join(text.replace("`", "").split())


@pytest.fixture
def plan(sg: Callable[..., Result], example: tuple[Repo, str]) -> Plan:
    repo, base = example

    def run(branch: str, *extra: str, baseline: bool | str = True) -> dict[str, Any]:
        args = ["affected", "--base", "main", "--head", branch, "--stage", "6"]
        if baseline is True:
            args += ["--baseline", str(_baseline(repo, base))]
        elif baseline:
            args += ["--baseline", baseline]
        result = sg(*args, *extra, "--format", "json", cwd=repo.root)
        assert result.code == 0, result.output
        data: dict[str, Any] = json.loads(result.out)
        return data

    return run


def _why(data: dict[str, Any]) -> dict[str, str]:
    return {r["item"]: r["because"] for r in data["reasons"]}


def test_a_cuda12_bindings_edit_rebuilds_its_line_and_core_and_reuses_the_rest(
    plan: Plan,
) -> None:
    data = plan("cu12-bindings")
    assert data["changed"] == ["cuda_bindings_12/cuda/bindings/driver.pyx.in"]
    # The matching bindings and metapackage, and Core (its CUDA 12 half is built
    # against those bindings) ...
    assert data["rebuild"] == ["bindings-cu12", "core-per-major-tests", "metapackage-cu12"]
    # ... the Core and wheel tests against those bindings ...
    assert data["retest"] == list(PLANNED_JOBS)
    # ... and every unchanged wheel from the baseline run, the CUDA 13 line's included.
    assert data["reuse"] == [
        "pathfinder",
        "bindings-cu13",
        "numpy-prerelease",
        "metapackage-unversioned",
        "metapackage-cu13",
    ]
    assert data["releases"] == ["cuda-bindings-12", "cuda-python-12"]
    why = _why(data)
    assert why["bindings-cu12"] == (
        "cuda_bindings_12/cuda/bindings/driver.pyx.in matches its paths glob "
        "'cuda_bindings_12/cuda/**'"
    )
    assert why["core-per-major-tests"] == "it is built by core-build-cu12-half, which must run"
    assert why["core-build-cu12-half"] == (
        "it takes cuda-bindings-python{py}-cuda12.9.1-{platform}-{sha} from bindings-cu12, "
        "which rebuilds"
    )
    assert why["core-build-cu13-half"] == (
        "it is part of the build of core-per-major-tests, which rebuilds"
    )
    assert why["bindings-cu13"] == (
        "not rebuilt; core-build-cu13-half, test-wheel-linux-same-run, "
        "test-wheel-windows-same-run, docs take its rows from the baseline run"
    )
    assert why["cuda-bindings-12"] == "it ships rows of bindings-cu12, which rebuild"


def test_a_core_only_edit_rebuilds_core_and_reuses_both_bindings_lines(plan: Plan) -> None:
    data = plan("core-only")
    assert data["rebuild"] == ["core-per-major-tests"]
    assert data["retest"] == [
        "core-build-cu13-half",
        "core-build-cu12-half",
        "test-wheel-linux-same-run",
        "test-wheel-windows-same-run",
        "docs",
        "sdist-tests-reuse",
    ]
    assert data["reuse"] == [
        "pathfinder",
        "bindings-cu13",
        "numpy-prerelease",
        "bindings-cu12",
        "metapackage-unversioned",
        "metapackage-cu13",
        "metapackage-cu12",
    ]
    assert data["releases"] == []  # no release of this migration ships Core


def test_a_shared_helper_edit_reruns_the_tests_through_the_links_and_builds_nothing(
    plan: Plan,
) -> None:
    data = plan("shared-helper")
    # Builds and tests have different graphs: the helpers are no wheel's source, but
    # each root's tests/ reaches them through a symbolic link.
    assert data["rebuild"] == []
    assert data["retest"] == [
        "test-wheel-linux-same-run",
        "test-wheel-windows-same-run",
        "sdist-tests-reuse",
    ]
    assert data["reuse"] == [
        "pathfinder",
        "bindings-cu13",
        "numpy-prerelease",
        "bindings-cu12",
        "core-per-major-tests",
        "metapackage-cu13",
        "metapackage-cu12",
    ]
    assert _why(data)["test-wheel-linux-same-run"] in _planning_doc()
    assert _why(data)["test-wheel-linux-same-run"] == (
        "cuda_python_test_helpers/cuda_python_test_helpers/__init__.py (as "
        "cuda_bindings/tests/helpers/__init__.py, through the symbolic link "
        "cuda_bindings/tests/helpers) matches its paths glob 'cuda_bindings/tests/**'"
    )


def test_an_edit_made_through_a_link_counts_as_the_file_it_reaches(plan: Plan) -> None:
    # Git stores the link, not a second file: editing cuda_core/tests/helpers/... edits
    # the shared file, which is what the diff names.
    data = plan("readme-link")
    assert data["changed"] == ["cuda_python_test_helpers/cuda_python_test_helpers/__init__.py"]
    assert data["retest"] == plan("shared-helper")["retest"]


def _full(data: dict[str, Any]) -> set[str]:
    """The reasons of a full rebuild (every rebuilt and rerun item has the same one)."""
    return {r["because"] for r in data["reasons"] if r["item"] not in data["releases"]}


def test_without_the_baseline_run_the_cuda12_edit_rebuilds_everything(plan: Plan) -> None:
    data = plan("cu12-bindings", baseline=False)
    assert data["rebuild"] == list(WHEELS)
    assert data["retest"] == list(PLANNED_JOBS)
    assert data["reuse"] == []
    assert _full(data) == {
        "full rebuild: no baseline run was given (--baseline), so pathfinder cannot be reused"
    }


def test_a_baseline_file_that_found_no_run_rebuilds_everything(
    plan: Plan, example: tuple[Repo, str]
) -> None:
    repo, _ = example
    none = repo.root.parent / "no-run.json"
    none.write_text('{"sha": null, "artifacts": []}', encoding="utf-8")
    data = plan("core-only", baseline=str(none))
    assert data["rebuild"] == list(WHEELS)
    assert _full(data) == {
        f"full rebuild: {none} names no baseline run, so pathfinder cannot be reused"
    }


def test_one_required_artifact_missing_from_the_baseline_rebuilds_everything(
    plan: Plan, example: tuple[Repo, str]
) -> None:
    repo, base = example
    gone = f"cuda-bindings-python312-cuda13.3.0-win-64-{base}"
    data = plan("cu12-bindings", baseline=str(_baseline(repo, base, drop=gone)))
    assert data["rebuild"] == list(WHEELS)
    assert data["reuse"] == []
    (because,) = _full(data)
    assert re.fullmatch(
        r"full rebuild: the baseline run holds no "
        r"cuda-bindings-python312-cuda13\.3\.0-win-64-\{sha\} \(py=312 platform=win-64\) "
        r"of bindings-cu13, which core-build-cu13-half requires \(migration\.yaml:\d+\)",
        because,
    ), because
    assert because.removeprefix("full rebuild: ") in _planning_doc()
    # A -tests artifact nobody takes from the baseline may be missing: the control.
    unused = f"cuda-bindings-python315-cuda13.3.0-win-64-{base}-tests"
    kept = plan("cu12-bindings", baseline=str(_baseline(repo, base, drop=unused)))
    assert kept["reuse"] and kept["rebuild"] == [
        "bindings-cu12",
        "core-per-major-tests",
        "metapackage-cu12",
    ]


def test_a_baseline_run_at_another_commit_reuses_only_what_did_not_change_since(
    plan: Plan, example: tuple[Repo, str]
) -> None:
    repo, _ = example
    # A run at the Core edit's commit: Core changed between it and the head, so Core
    # cannot be reused by a change that only touches the tests' helpers.
    core = repo.git("rev-parse", "core-only").strip()
    data = plan("shared-helper", baseline=str(_baseline(repo, core)))
    assert data["rebuild"] == list(WHEELS)
    assert _full(data) == {
        "full rebuild: core-per-major-tests cannot be reused: its sources changed between "
        f"the baseline run's commit {core[:12]} and the head "
        "(cuda_core/cuda/core/_device.pyx matches its paths glob 'cuda_core/cuda/**')"
    }
    # The control: a run at the helper edit's commit differs from the Core edit's head
    # in the helpers and in Core, and the Core edit rebuilds Core anyway: the bindings,
    # the metapackages and pathfinder are still reused from it.
    helper = repo.git("rev-parse", "shared-helper").strip()
    served = plan("core-only", baseline=str(_baseline(repo, helper)))
    assert served["rebuild"] == ["core-per-major-tests"]
    assert served["reuse"] == plan("core-only")["reuse"]


def test_a_change_to_an_undeclared_file_rebuilds_everything_and_names_it(plan: Plan) -> None:
    data = plan("undeclared")
    assert data["rebuild"] == list(WHEELS)
    assert data["retest"] == list(PLANNED_JOBS)
    assert _full(data) == {
        "full rebuild: ci/tools/env-vars is outside every declared path: no producer's or "
        "consumer's `paths` cover it, so nothing can be proven unaffected"
    }
