"""Generated matrices (issue 23): a compute-matrix job reads ci/test-matrix.yml with yq,
narrows it with the caller's `matrix_filter` through jq and writes the rows to
$GITHUB_OUTPUT; `fromJSON(needs.compute-matrix.outputs.MATRIX)` gives the test job its
rows. Drift reads the rows from the file at the commit read: an edit that drops a row
is a difference. Each form that is not evaluated is unresolved, with a control."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import Result

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: matrix
stage: 0
axes:
  py: ["312", "313", "315"]
producers:
  wheel:
    jobs: [".github/workflows/build.yml#build"]
    artifacts: ["wheel-{py}"]
consumers:
  tests:
    jobs: [".github/workflows/ci.yml#test-64", ".github/workflows/ci.yml#test-arm"]
    inputs:
      - select: "wheel-{py}"
        from: [wheel]
"""

BUILD = """\
on: workflow_call
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["312", "313", "315"]
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: wheel-${{ matrix.py }}
          path: dist
"""

CI = """\
on: push
jobs:
  build:
    uses: ./.github/workflows/build.yml
  test-64:
    needs: build
    uses: ./.github/workflows/test.yml
    with:
      host-platform: linux-64
  test-arm:
    needs: build
    uses: ./.github/workflows/test.yml
    with:
      host-platform: linux-aarch64
      matrix_filter: FILTER
"""

TEST = """\
on:
  workflow_call:
    inputs:
      host-platform: {type: string, required: true}
      matrix_filter: {type: string, default: "."}
defaults:
  run:
    shell: bash --noprofile --norc -xeuo pipefail {0}
jobs:
  compute-matrix:
    runs-on: ubuntu-latest
    env:
      ARCH: ${{ (inputs.host-platform == 'linux-64' && 'amd64') || 'arm64' }}
    outputs:
      MATRIX: ${{ steps.compute-matrix.outputs.MATRIX }}
    steps:
      - id: compute-matrix
        run: |
          TEST_MATRIX=$(yq -o json ".linux[\\"pull-request\\"] | map(select(.ARCH == \\"${ARCH}\\"))" ci/test-matrix.yml)
          MATRIX=$(echo "$TEST_MATRIX" | jq -c 'JQ')
          echo "MATRIX=${MATRIX}" | tee --append "${GITHUB_OUTPUT}"
  test:
    needs: compute-matrix
    strategy:
      matrix: ${{ fromJSON(needs.compute-matrix.outputs.MATRIX) }}
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: wheel-${{ matrix.PY }}
"""

JQ = (
    '${{ inputs.matrix_filter }} | map(. + {RUNNER: (if .DRIVER == "latest" then .DRIVER'
    ' else "latest" end)}) | if (. | length) > 0 then {include: .} else "Error: Empty'
    ' matrix\\n" | halt_error(1) end'
)

ROWS = """\
linux:
  pull-request:
    - { ARCH: 'amd64', PY: '312', DRIVER: 'latest' }
    - { ARCH: 'amd64', PY: '313', DRIVER: '580.1' }
    - { ARCH: 'arm64', PY: '315', DRIVER: 'latest', ENV: { MODE: 'x' } }
    - { ARCH: 'arm64', PY: '316', DRIVER: 'latest', ENV: { MODE: 'y' } }
"""


def tree(
    tmp_path: Path,
    *,
    rows: str | None = ROWS,
    jq: str = JQ,
    arm_filter: str = "'map(select(.ENV.MODE == \"x\"))'",
    test: str = TEST,
) -> Path:
    root = tmp_path / "repo"
    workflows = root / ".github" / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    (root / "migration.yaml").write_text(MODEL)
    (workflows / "build.yml").write_text(BUILD)
    (workflows / "ci.yml").write_text(CI.replace("FILTER", arm_filter))
    (workflows / "test.yml").write_text(test.replace("JQ", jq))
    if rows is not None:
        (root / "ci").mkdir(exist_ok=True)
        (root / "ci" / "test-matrix.yml").write_text(rows)
    return root


def drift(sg: Sg, root: Path) -> tuple[int, dict[str, list[dict[str, object]]]]:
    result = sg("drift", "--strict", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)


def rows_read(data: dict[str, list[dict[str, object]]]) -> list[object]:
    return sorted(
        str(d["select"]) for d in data["downloads"] if d["file"] == ".github/workflows/test.yml"
    )


def test_the_rows_come_from_the_file_and_the_callers_filter_narrows_them(
    sg: Sg, tmp_path: Path
) -> None:
    code, data = drift(sg, tree(tmp_path))
    # linux-64: its two amd64 rows (filter "."); linux-aarch64: the one MODE x row
    assert code == 0, data
    assert rows_read(data) == ["wheel-312", "wheel-313", "wheel-315"]
    assert data["unresolved"] == []
    # the control: without the filter linux-aarch64 also runs the MODE y row
    code, data = drift(sg, tree(tmp_path / "all", arm_filter="."))
    assert rows_read(data) == ["wheel-312", "wheel-313", "wheel-315", "wheel-316"]


def test_an_edit_that_drops_a_row_is_a_difference(sg: Sg, tmp_path: Path) -> None:
    dropped = "\n".join(line for line in ROWS.splitlines() if "'313'" not in line) + "\n"
    code, data = drift(sg, tree(tmp_path, rows=dropped))
    assert code == 1
    assert rows_read(data) == ["wheel-312", "wheel-315"]
    assert [(f["kind"], f["item"]) for f in data["findings"]] == [("select-differs", "tests")]
    assert "wheel-313" in str(data["findings"][0]["message"])


def test_a_filter_that_leaves_no_row_halts_and_is_reported(sg: Sg, tmp_path: Path) -> None:
    """jq's `halt_error` fails compute-matrix: the test job's rows are unresolved, never
    an empty matrix that downloads nothing."""
    code, data = drift(sg, tree(tmp_path, arm_filter="'map(select(.ENV.MODE == \"z\"))'"))
    assert code == 1
    reasons = {str(u["reason"]) for u in data["unresolved"]}
    assert len(reasons) == 1
    (reason,) = reasons
    assert "stops with an error ('Error: Empty matrix'): the step fails there" in reason
    assert reason.startswith(
        "the matrix is generated (${{ fromJSON(needs.compute-matrix.outputs.MATRIX) }} at "
        ".github/workflows/test.yml:25): $MATRIX is assigned at .github/workflows/test.yml:20"
    )
    # the control: linux-64's rows are still read
    assert [r for r in rows_read(data) if "${{" not in r] == ["wheel-312", "wheel-313"]


def test_an_unsupported_jq_form_is_unresolved_with_the_piece_named(sg: Sg, tmp_path: Path) -> None:
    code, data = drift(
        sg, tree(tmp_path, jq="${{ inputs.matrix_filter }} | {include: [.[] | .PY // 1]}")
    )
    assert code == 1
    reasons = {str(u["reason"]) for u in data["unresolved"]}
    assert any(
        "'/' is a jq form stagegate does not evaluate (column 26 of the jq expression" in r
        for r in reasons
    ), reasons
    assert all("${{" in r for r in rows_read(data))


def test_a_missing_matrix_file_is_unresolved(sg: Sg, tmp_path: Path) -> None:
    code, data = drift(sg, tree(tmp_path, rows=None))
    assert code == 1
    reasons = {str(u["reason"]) for u in data["unresolved"]}
    assert any("ci/test-matrix.yml is no file of the repository" in r for r in reasons), reasons


def test_a_file_outside_the_repository_is_never_read(sg: Sg, tmp_path: Path) -> None:
    """A hostile workflow points yq at a file beside the repository (by `..` or by a
    symbolic link): nothing outside is read; the rows are unresolved."""
    for name, target in (("dots", "../outside.yml"), ("link", "ci/link.yml")):
        root = tree(tmp_path / name, test=TEST.replace("ci/test-matrix.yml", target))
        (root.parent / "outside.yml").write_text(ROWS)  # what `..` leads to
        (root / "ci" / "link.yml").symlink_to(root.parent / "outside.yml")
        code, data = drift(sg, root)
        assert code == 1
        reasons = {str(u["reason"]) for u in data["unresolved"]}
        assert any(f"{target} is no file of the repository" in r for r in reasons), reasons
        assert rows_read(data) == [] or all("${{" in r for r in rows_read(data))


def test_a_command_stagegate_does_not_know_stays_unknown(sg: Sg, tmp_path: Path) -> None:
    """`$(python3 -c ...)` computes the matrix: nothing is guessed. The control is the
    first test: the same tree with yq and jq."""
    other = TEST.replace(
        "MATRIX=$(echo \"$TEST_MATRIX\" | jq -c 'JQ')", "MATRIX=$(python3 ci/matrix.py)"
    )
    code, data = drift(sg, tree(tmp_path, test=other))
    assert code == 1
    reasons = {str(u["reason"]) for u in data["unresolved"]}
    assert any("$(python3 ci/matrix.py) runs a command" in r for r in reasons), reasons
