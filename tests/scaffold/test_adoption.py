"""Adoption on the shapes of three real repositories (fixtures of our own writing under
tests/fixtures/adopt/, reproducing their jobs, steps, artifact names and matrices):
watchfiles' include/exclude build matrix, msgpack-python's sdist moved into a job of its
own in a flip, pydantic-core's `uv publish` release. docs/adopt.md walks the first one
(its console blocks are run by tests/example/test_docs_console.py)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO, Result
from scratch import Repo, init, pin_git

Sg = Callable[..., Result]
ADOPT = REPO / "tests" / "fixtures" / "adopt"


@pytest.fixture(autouse=True)
def _pinned_git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def adopted(tmp_path: Path, sg: Sg, name: str) -> Repo:
    """The fixture ``name`` committed in a fresh repository, with what init writes."""
    repo = init(tmp_path / name)
    shutil.copytree(ADOPT / name, repo.root, dirs_exist_ok=True)
    repo.commit(name)
    result = sg("init", "--from-workflows", cwd=repo.root)
    assert result.code == 0, result.output
    return repo


def axes(repo: Repo) -> dict[str, list[str]]:
    """The finite axes init wrote, by name."""
    found: dict[str, list[str]] = {}
    for line in (
        repo.read("migration.yaml").split("\naxes:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    ):
        name, _, value = line.strip().partition(": ")
        if value.startswith("["):
            found[name] = json.loads(value)
    return found


def drifted(sg: Sg, repo: Repo, *args: str) -> dict[str, object]:
    result = sg("drift", *args, "--format", "json", cwd=repo.root)
    assert result.code in (0, 1), result.output
    data: dict[str, object] = json.loads(result.out)
    return data


# --------------------------------------------------------------------------- docs/adopt.md


def _snippets() -> list[tuple[int, list[list[str]]]]:
    """The ```yaml blocks of docs/adopt.md (their line), each cut at `...` lines."""
    text = (REPO / "docs" / "adopt.md").read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"```yaml\n(.*?)```", text, re.DOTALL):
        pieces: list[list[str]] = [[]]
        for line in match.group(1).splitlines():
            if line.strip() == "...":
                pieces.append([])
            else:
                pieces[-1].append(line)
        found.append((text[: match.start()].count("\n") + 1, [p for p in pieces if p]))
    return found


def test_each_yaml_shown_in_docs_adopt_is_in_the_files_the_walk_uses() -> None:
    """What the page shows of migration.yaml, the stage files and ci.yml is, piece by
    piece, in the files its console blocks copy in (tests/fixtures/adopt/steps/)."""
    files = [
        p.read_text(encoding="utf-8").splitlines()
        for p in sorted((ADOPT / "steps").rglob("*"))
        if p.is_file()
    ]
    snippets = _snippets()
    assert len(snippets) >= 8
    for line, pieces in snippets:
        for piece in pieces:
            assert any(
                lines[i : i + len(piece)] == piece for lines in files for i in range(len(lines))
            ), f"docs/adopt.md:{line}: not in any step file:\n" + "\n".join(piece)


# --------------------------------------------------------------------------- watchfiles


def test_watchfiles_include_exclude_matrix_is_the_jobs_rows(tmp_path: Path, sg: Sg) -> None:
    repo = adopted(tmp_path, sg, "watchfiles")
    found = axes(repo)
    assert all(len(values) > 1 for values in found.values()), found  # no one-value axis
    assert found["interpreter"] == ["3.10 3.11 3.12 3.13 3.14", "3.11 3.12 3.13 3.14"]
    uploads = [
        u["name"]
        for u in drifted(sg, repo)["uploads"]  # type: ignore[attr-defined]
        if u["job"] == ".github/workflows/ci.yml#build"
    ]
    assert len(uploads) == 14
    rows = json.loads(sg("matrix", "build", cwd=repo.root).out)["include"]
    assert len(rows) == 14
    made = {
        "pypi_files_{os}_{target}_{i}_{m}".format(
            os=row["os"],
            target=row["target"],
            i=row.get("interpreter", "all"),
            m=row.get("manylinux", ""),
        )
        for row in rows
    }
    assert made == set(uploads)  # each row of the model is one row of the job, and back
    assert sg("check", cwd=repo.root).code == 0


# --------------------------------------------------------------------------- msgpack

SDIST_STAGE = """\
stage: 1
title: The sdist in a job of its own
set:
  sdist-job: true
release_changes:
  - tag: "v0.0.0"
    add: ["sdist"]
"""

SDIST_JOB = """\
  build_sdist:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - run: python -m build -s -o dist
      - uses: actions/upload-artifact@v4
        with: {name: sdist, path: dist}

  combine_wheels:"""


def test_msgpack_exclude_and_a_release_that_takes_what_it_waits_for(tmp_path: Path, sg: Sg) -> None:
    repo = adopted(tmp_path, sg, "msgpack")
    text = repo.read("migration.yaml")
    assert (
        '      - name: "dist-{os}-{py}"   # .github/workflows/test.yml:37\n'
        "        exclude:\n"
        '          - {os: "windows-11-arm", py: "3.10"}\n' in text
    )  # one template and the matrix's exclude, not 47 names
    assert text.count('"dist-') == 1
    assert all(len(values) > 1 for values in axes(repo).values())
    # upload_pypi needs build_wheels only: combine_wheels' wheels-all may not exist yet
    assert (
        '    exclude: ["wheels-all"]\n    jobs: [".github/workflows/wheel.yml#upload_pypi"]' in text
    )
    result = sg("check", cwd=repo.root)
    assert result.code == 0, result.output
    assert "release upload_pypi selects the same 7 artifact names as at stage 0" in result.out
    assert len(json.loads(sg("matrix", "test", cwd=repo.root).out)["include"]) == 47


def test_msgpack_sdist_moves_into_a_job_the_flip_adds(tmp_path: Path, sg: Sg) -> None:
    """Stage 1 is defined while build_sdist does not exist: check --all passes at stage 0
    and says what the flip must add; the flip's pull request adds the job, and verify-pr
    accepts it; a flip without the job is refused."""
    repo = adopted(tmp_path, sg, "msgpack")
    repo.edit(
        "migration.yaml", "flags: {}\n", "flags:\n  sdist-job:\n    summary: A job for the sdist.\n"
    )
    repo.edit(
        "migration.yaml",
        "\nconsumers:\n",
        '  sdist:\n    when: sdist-job\n    artifacts: ["sdist"]\n'
        '    jobs: [".github/workflows/wheel.yml#build_sdist"]\n\nconsumers:\n',
    )
    repo.edit(
        "migration.yaml",
        '      - "wheels-*"   # .github/workflows/wheel.yml:71\n',
        '      - "wheels-*"   # .github/workflows/wheel.yml:71\n      - "sdist"\n',
    )
    repo.write("stages/01-sdist-job.yaml", SDIST_STAGE)
    base = repo.commit("Define stage 1")
    result = sg("check", "--all", cwd=repo.root)
    assert result.code == 0, result.output
    assert (
        "unknown-job: producer sdist: jobs entry '.github/workflows/wheel.yml#build_sdist'"
        in result.out
    )
    assert (
        "the job does not exist yet; the pull request that flips to stage 1 adds it" in result.out
    )
    assert "todo  workflows" in result.out

    # the flip without the job: stage 1's workflows check, now current, fails
    assert sg("advance", cwd=repo.root).code == 1
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("Flip to stage 1, forgetting the job")
    refused = sg("verify-pr", "--base", base, cwd=repo.root)
    assert refused.code == 1
    assert "fix the entry or workflows.paths" in refused.out
    repo.git("reset", "-q", "--hard", base)

    # the flip with it: the sdist leaves build_wheels for build_sdist, the release takes it
    wheel = ".github/workflows/wheel.yml"
    repo.edit(wheel, "\n  combine_wheels:", "\n" + SDIST_JOB)
    repo.edit(
        wheel,
        "      - name: Build sdist\n        if: runner.os == 'Linux' && runner.arch == 'X64'\n"
        "        run: python -m build -s -o wheelhouse\n",
        "",
    )
    repo.edit(
        wheel,
        "  upload_pypi:\n    needs: [build_wheels]",
        "  upload_pypi:\n    needs: [build_wheels, build_sdist]",
    )
    repo.edit(
        wheel,
        "      - uses: pypa/gh-action-pypi-publish@release/v1",
        "      - uses: actions/download-artifact@v4\n        with: {name: sdist, path: dist}\n"
        "      - uses: pypa/gh-action-pypi-publish@release/v1",
    )
    assert sg("advance", cwd=repo.root).code == 0
    repo.commit("Flip to stage 1: build_sdist")
    accepted = sg("verify-pr", "--base", base, cwd=repo.root)
    assert accepted.code == 0, accepted.output
    assert "release upload_pypi selects the 8 artifact names planned" in accepted.out


# --------------------------------------------------------------------------- pydantic-core

ACTIONS = """\
workflows:
  actions:
    mymindstorm/setup-emsdk@v14: {}
    uraimo/run-on-arch-action@v3.0.1: {}

producers:"""


def test_pydantic_core_uv_publish_release_is_adopted(tmp_path: Path, sg: Sg) -> None:
    """The release job publishes with `uv publish` (PyPI) and softprops (the wasm
    wheels): init finds it by its tag trigger and what it downloads; the build matrix is
    all `include` (a placeholder target excluded), build-pgo a matrix of objects with
    an exclude. How continuity reads `uv publish` is tested with continuity itself."""
    repo = adopted(tmp_path, sg, "pydantic-core")
    text = repo.read("migration.yaml")
    assert (
        '  release:\n    summary: "The downloads of .github/workflows/ci.yml#release."\n'
        '    tags: ["**"]\n    select:\n      - "pypi_files_*"' in text
    )
    assert '      - "wasm_wheels"' in text
    assert (
        '      - name: "pypi_files_{platform_os}_{interpreter-2}"   # .github/workflows/ci.yml:130\n'
        "        exclude:\n"
        '          - {platform_os: "macos", interpreter-2: "3.9"}\n' in text
    )
    assert "undefined" not in text  # the placeholder the exclude removes makes no row
    assert all(len(values) > 1 for values in axes(repo).values())
    assert len(json.loads(sg("matrix", "build", cwd=repo.root).out)["include"]) == 15
    assert len(json.loads(sg("matrix", "build-pgo", cwd=repo.root).out)["include"]) == 27
    assert sg("check", cwd=repo.root).code == 0
    unread = {u["expression"] for u in drifted(sg, repo)["unread"]}  # type: ignore[attr-defined]
    assert {"mymindstorm/setup-emsdk@v14", "uraimo/run-on-arch-action@v3.0.1"} <= unread
    # declaring the remote actions leaves at most the publisher stagegate may not read
    repo.edit("migration.yaml", "producers:", ACTIONS)
    data = drifted(sg, repo, "--strict")
    assert data["findings"] == []
    assert all("uv publish" in u["expression"] for u in data["unread"])  # type: ignore[attr-defined]
