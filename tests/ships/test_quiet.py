"""`stagegate continuity` lists a value only where it can change what a release publishes
(issue 34, point 6), on the shapes of NVIDIA/cuda-python's workflows (our own writing):
a release that publishes the CI run found by `gh run list --workflow`, its download's
run id unknown; a script that writes the checkout's folders to $GITHUB_ENV with
`realpath`; wheels gathered in a shell array. Each case has a control that stays
unresolved or blind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_stream import Sg, compare

CI = ".github/workflows/ci.yml"
RELEASE = ".github/workflows/release.yml"

BUILD = """\
name: CI
on:
  push:
    tags: ["v*"]
jobs:
  build:
    strategy:
      matrix:
        python-version: ["3.12", "3.13"]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: pypa/cibuildwheel@v3.1.4
        with:
          output-dir: dist
      - uses: actions/upload-artifact@v4
        with:
          name: core-python${{ matrix.python-version }}
          path: dist/*.whl
"""

LOOKUP = """\
name: Release
on:
  workflow_dispatch:
    inputs:
      git-tag:
        required: true
        type: string
jobs:
  find-run:
    runs-on: ubuntu-latest
    outputs:
      run-id: ${{ steps.lookup.outputs.run-id }}
    steps:
      - id: lookup
        env:
          GH_TOKEN: ${{ github.token }}
        run: |
          RUN_ID=$(gh run list --workflow ci.yml --commit "${{ inputs.git-tag }}" --json databaseId --jq '.[0].databaseId')
          echo "run-id=${RUN_ID}" >> "$GITHUB_OUTPUT"
"""

PUBLISH = """\
  publish:
    needs: [find-run]
    runs-on: ubuntu-latest
    environment: pypi
    permissions:
      id-token: write
    env:
      RUN_ID: ${{ needs.find-run.outputs.run-id }}
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: core-*
          merge-multiple: true
          path: dist
          run-id: ${{ needs.find-run.outputs.run-id }}
          github-token: ${{ github.token }}
      - run: gh run download "${RUN_ID}" -p "core-*" -D more
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def _run(sg: Sg, tmp_path: Path, files: dict[str, str]) -> tuple[int, dict[str, Any], list[str]]:
    """continuity from a commit of ``files`` to one that only appends a comment to the
    release workflow: nothing changes, what is unresolved is listed."""
    head = {RELEASE: files[RELEASE] + "# touched\n"}
    return compare(sg, tmp_path, files, head)


def _unresolved(data: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(u["file"], u["line"], u["expression"]) for u in data["unresolved"]]


def test_the_id_of_a_run_followed_to_its_workflow_is_no_line(sg: Sg, tmp_path: Path) -> None:
    code, data, lines = _run(sg, tmp_path, {CI: BUILD, RELEASE: LOOKUP + PUBLISH})
    assert code == 0, lines
    (release,) = data["releases"]
    assert release["compared"] is True and release["blind"] == [], lines
    assert release["sources"] == [CI, RELEASE]
    assert sorted(c["name"] for c in release["head"]) == ["core-python3.12", "core-python3.13"]
    assert _unresolved(data) == []


def test_the_id_of_a_run_no_workflow_is_known_for_leaves_the_release_blind(
    sg: Sg, tmp_path: Path
) -> None:
    """The control: the run id comes from an input, and nothing says which workflow's run
    it is: the release is reported blind (not compared), which says why."""
    free = LOOKUP.replace("gh run list --workflow ci.yml", "./tools/find-run")
    code, data, lines = _run(sg, tmp_path, {CI: BUILD, RELEASE: free + PUBLISH})
    assert code == 0, lines  # blind at the base too: listed, not failed
    (release,) = data["releases"]
    assert release["compared"] is False
    reasons = {b["reason"] for b in release["blind"]}
    assert all("declare it under workflows.runs" in r for r in reasons), reasons
    assert _unresolved(data) == []
