"""What a drift finding says it does to the releases and consumers, and whose it is
(issue 36): a consequence only for the items whose dispatch component and run take an
upload; an undeclared upload labelled with the producer whose rows hold its names; a
release job that downloads the run the model says it releases into a folder its publish
step does not read; a job whose generated matrix has no row.

One small repository, written here: `build.yml` (a tag run) uploads two packages per
Python version; `release.yml`, dispatched with a component, runs `ci/download` on the tag's
run (another run: build.yml's, `workflows.runs` says), which downloads `COMPONENT*` and
moves the wheels into its output folder, then publishes `dist/`;
`tests.yml` tests rows a jq filter picks from a list, per caller.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result

Sg = Callable[..., Result]

BUILD = """\
name: CI
on:
  push:
    tags: ["v*"]
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["312", "313"]
    steps:
      - run: python -m build --wheel
      - uses: actions/upload-artifact@v4
        with:
          name: pkg-alpha-py${{ matrix.py }}
          path: dist/*.whl
      - uses: actions/upload-artifact@v4
        with:
          name: pkg-beta-py${{ matrix.py }}
          path: dist/*.whl
  test-312:
    needs: build
    uses: ./.github/workflows/tests.yml
    with:
      py: "312"
  test-313:
    needs: build
    uses: ./.github/workflows/tests.yml
    with:
      py: "313"
"""

TESTS = """\
on:
  workflow_call:
    inputs:
      py:
        type: string
jobs:
  rows:
    runs-on: ubuntu-latest
    outputs:
      MATRIX: ${{ steps.rows.outputs.MATRIX }}
    steps:
      - id: rows
        run: |
          ROWS='[{"py": "312"}, {"py": "313"}]'
          MATRIX=$(echo "$ROWS" | jq -c 'map(select(.py == "${{ inputs.py }}")) | if length > 0 then {include: .} else "Error: Empty matrix\\n" | halt_error(1) end')
          echo "MATRIX=${MATRIX}" >> "$GITHUB_OUTPUT"
  test:
    needs: rows
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.rows.outputs.MATRIX) }}
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: pkg-alpha-py${{ matrix.py }}
"""

RELEASE = """\
name: Release
on:
  workflow_dispatch:
    inputs:
      component:
        type: choice
        options: [pkg-alpha, pkg-beta]
      run-id:
        type: string
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Download the component's wheels
        env:
          GH_TOKEN: ${{ github.token }}
        run: ./ci/download "${{ inputs.run-id }}" "${{ inputs.component }}" dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""

DOWNLOAD = """\
#!/usr/bin/env bash
set -euo pipefail
RUN_ID="$1"
COMPONENT="$2"
OUTPUT_DIR="${3:-dist}"
gh run download "${RUN_ID}" -p "${COMPONENT}*"
mkdir -p "${OUTPUT_DIR}"
for folder in pkg-*; do
  [[ -d "${folder}" ]] || continue
  find "${folder}" -name "*.whl" -exec mv {} "${OUTPUT_DIR}/" \\;
done
rm -rf pkg-*
"""

MODEL = """\
version: 1
migration: attribution
summary: Two packages, released by component from the tag's run.
stage: 0
axes:
  py: ["312", "313"]
flags:
  gamma:
    summary: A third package, built from stage 1.
workflows:
  bind:
    ".github/workflows/release.yml inputs.run-id": tag-run
  runs:
    ".github/workflows/release.yml#publish": .github/workflows/build.yml
producers:
  alpha:
    summary: Package alpha.
    jobs: [".github/workflows/build.yml#build"]
    artifacts: ["pkg-alpha-py{py}"]
  beta:
    summary: Package beta.
    jobs: [".github/workflows/build.yml#build"]
    artifacts: ["pkg-beta-py{py}"]
  gamma:
    summary: Package gamma, from stage 1.
    when: gamma
    jobs: [".github/workflows/build.yml#build"]
    artifacts: ["pkg-gamma-py{py}"]
  alpha-old:
    summary: Package alpha of the old branch's runs.
    run: old
    artifacts: ["pkg-alpha-old-py{py}"]
consumers:
  tests:
    summary: The test rows.
    jobs: [".github/workflows/build.yml#test-312", ".github/workflows/build.yml#test-313"]
    inputs:
      - select: "pkg-alpha-py{py}"
        from: [alpha]
releases:
  alpha:
    summary: Releases alpha.
    tags: ["v*"]
    select: ["pkg-alpha*"]
    dispatch: {component: pkg-alpha}
    jobs: [".github/workflows/release.yml#publish"]
  beta:
    summary: Releases beta.
    tags: ["beta-v*"]
    select: ["pkg-beta*"]
    dispatch: {component: pkg-beta}
    jobs: [".github/workflows/release.yml#publish"]
  alpha-old:
    summary: Releases alpha from the old branch's runs (no jobs here).
    run: old
    tags: ["old-v*"]
    select: ["pkg-alpha*"]
"""

STAGE = "stage: 1\ntitle: Gamma\nset:\n  gamma: true\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("attribution") / "repo"
    files = {
        ".github/workflows/build.yml": BUILD,
        ".github/workflows/tests.yml": TESTS,
        ".github/workflows/release.yml": RELEASE,
        "ci/download": DOWNLOAD,
        "migration.yaml": MODEL,
        "stages/01-gamma.yaml": STAGE,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "ci" / "download").chmod(0o755)
    return root


def changed(base: Path, tmp_path: Path, rel: str, old: str, new: str) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(base, root)
    text = (root / rel).read_text()
    assert text.count(old) == 1, old
    (root / rel).write_text(text.replace(old, new))
    return root


def drift(sg: Sg, root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = sg("drift", "--strict", "--format", "json", *args, cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)


def upload(name: str) -> str:
    """One more upload step of the build job, after beta's."""
    return (
        "          name: pkg-beta-py${{ matrix.py }}\n          path: dist/*.whl\n"
        "      - uses: actions/upload-artifact@v4\n"
        f"        with:\n          name: {name}\n          path: dist/*.whl\n"
    )


BETA = "          name: pkg-beta-py${{ matrix.py }}\n          path: dist/*.whl\n"


def test_the_repository_agrees_with_its_model(base: Path, sg: Sg) -> None:
    code, data = drift(sg, base)
    assert (code, data["findings"], data["unresolved"]) == (0, [], [])
    wheels = {d["select"] for d in data["downloads"] if d["file"] == "ci/download"}
    assert wheels == {"pkg-alpha*", "pkg-beta*"}  # release.yml read once per component


def test_an_upload_is_a_consequence_only_for_the_release_whose_component_takes_it(
    base: Path, tmp_path: Path, sg: Sg
) -> None:
    """The publish job downloads `pkg-beta*` for component pkg-beta and `pkg-alpha*` for
    pkg-alpha: a new pkg-alpha-extra upload would ship with release alpha only; release
    alpha-old reads the old branch's runs, which hold none of this run's uploads."""
    root = changed(
        base,
        tmp_path,
        ".github/workflows/build.yml",
        BETA,
        upload("pkg-alpha-extra-py${{ matrix.py }}"),
    )
    code, data = drift(sg, root)
    assert code == 1
    (finding,) = data["findings"]
    assert finding["kind"] == "undeclared-upload"
    assert [(c["kind"], c["item"], c["gained"]) for c in finding["consequences"]] == [
        ("release", "alpha", ["pkg-alpha-extra-py312", "pkg-alpha-extra-py313"])
    ]
    assert finding["message"].endswith(
        "Consequence: release alpha would also ship pkg-alpha-extra-py312, pkg-alpha-extra-py313."
    )


def test_an_undeclared_upload_is_labelled_with_the_producer_whose_rows_hold_it(
    base: Path, tmp_path: Path, sg: Sg
) -> None:
    """Not with the first producer listing the job (alpha): gamma has the names, and is off
    at stage 0; at stage 1 the same upload is gamma's row and no finding."""
    root = changed(
        base, tmp_path, ".github/workflows/build.yml", BETA, upload("pkg-gamma-py${{ matrix.py }}")
    )
    code, data = drift(sg, root)
    assert code == 1
    (finding,) = data["findings"]
    assert (finding["kind"], finding["item"]) == ("undeclared-upload", "gamma")
    assert (
        "(producer gamma (migration.yaml:24) has them as rows and lists this job, but is off "
        "at stage 0 (active at stage 1))" in finding["message"]
    )
    assert drift(sg, root, "--stage", "1")[0] == 0


def test_an_upload_of_another_runs_names_is_labelled_with_that_runs_producer(
    base: Path, tmp_path: Path, sg: Sg
) -> None:
    root = changed(
        base,
        tmp_path,
        ".github/workflows/build.yml",
        BETA,
        upload("pkg-alpha-old-py${{ matrix.py }}"),
    )
    code, data = drift(sg, root)
    assert code == 1
    (finding,) = data["findings"]
    assert (finding["kind"], finding["item"]) == ("undeclared-upload", "alpha-old")
    assert (
        "(producer alpha-old (migration.yaml:29) has them as rows, but stands for the uploads "
        "of run old, not this run's)" in finding["message"]
    )
    # release alpha takes them (its pkg-alpha* download reads this run), alpha-old does not
    assert [c["item"] for c in finding["consequences"]] == ["alpha"]


def test_a_release_that_moves_its_wheels_where_it_does_not_publish(
    base: Path, tmp_path: Path, sg: Sg
) -> None:
    """The release job's own run (release.yml's) uploads nothing: what it publishes comes
    from the tag's run (build.yml's). Moved into wheelhouse/, the wheels never reach the
    publish step's dist/."""
    root = changed(
        base,
        tmp_path,
        ".github/workflows/release.yml",
        '"${{ inputs.component }}" dist',
        '"${{ inputs.component }}" wheelhouse',
    )
    code, data = drift(sg, root)
    assert code == 1
    (finding,) = data["findings"]
    assert finding["kind"] == "where-files-land"
    assert finding["file"] == "ci/download" and finding["line"] == 6
    assert (
        "its script then moves them to wheelhouse/*.whl, and the publish step"
        in (finding["message"])
    )
    assert "reads dist/*: those files are not published" in finding["message"]
    lost = {c["item"]: c["lost"] for c in finding["consequences"]}
    assert lost == {
        "alpha": ["pkg-alpha-py312", "pkg-alpha-py313"],
        "beta": ["pkg-beta-py312", "pkg-beta-py313"],
    }


def test_a_caller_whose_generated_matrix_halts_is_a_finding(
    base: Path, tmp_path: Path, sg: Sg
) -> None:
    """test-313 asks for a Python version the rows no longer have: jq stops with
    `Error: Empty matrix`. The other caller still downloads the same names, so what the
    consumer takes is unchanged; the job that runs no row is the finding, and the values it
    leaves unresolved say why."""
    root = changed(
        base,
        tmp_path,
        ".github/workflows/tests.yml",
        """[{"py": "312"}, {"py": "313"}]""",
        """[{"py": "312"}]""",
    )
    code, data = drift(sg, root)
    assert code == 1
    kinds = [(f["kind"], f["item"]) for f in data["findings"]]
    assert ("empty-matrix", "tests") in kinds
    finding = next(f for f in data["findings"] if f["kind"] == "empty-matrix")
    assert finding["message"] == (
        "consumer tests (migration.yaml:34): its job .github/workflows/build.yml#test-313 "
        "runs no matrix row at stage 0: the matrix of .github/workflows/tests.yml#test "
        "(.github/workflows/tests.yml:21) comes from a command that stops with an error "
        "('Error: Empty matrix' at .github/workflows/tests.yml:15), so the job fails before "
        "its first step and downloads nothing. Give the generator rows for "
        ".github/workflows/build.yml#test-313 again, or take the job out of the consumer's jobs."
    )
    # the 313 row is gone from what the consumer's jobs download: that too is a finding
    assert ("select-differs", "tests") in kinds
    (unresolved,) = data["unresolved"]
    assert "stops with an error ('Error: Empty matrix')" in unresolved["reason"]


def test_a_generated_matrix_with_no_row_is_a_finding(base: Path, tmp_path: Path, sg: Sg) -> None:
    """The same without the halt: `{include: []}` is a matrix GitHub refuses to run."""
    root = changed(
        base,
        tmp_path,
        ".github/workflows/tests.yml",
        ' | if length > 0 then {include: .} else "Error: Empty matrix\\n" | halt_error(1) end',
        " | {include: .}",
    )
    text = (root / ".github/workflows/tests.yml").read_text()
    (root / ".github/workflows/tests.yml").write_text(
        text.replace("""[{"py": "312"}, {"py": "313"}]""", """[{"py": "312"}]""")
    )
    code, data = drift(sg, root)
    assert code == 1
    finding = next(f for f in data["findings"] if f["kind"] == "empty-matrix")
    assert "(.github/workflows/tests.yml:21) is generated with no row" in finding["message"]
