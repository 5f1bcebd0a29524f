"""drift on small repositories written per test: the reference form of reading flags
(docs/examples/flags.yml: the action's `flags` and `matrix P` outputs), flag `env`
names, scoped binds, binds holding expressions, input defaults that are expressions,
and which producers may declare an upload."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: forms
stage: 0
axes:
  py: ["312", "313"]
  platform: [linux-64, win-64]
  sha: {{pattern: "[0-9a-f]{{40}}"}}
flags:
  cu12:
    summary: Build the CUDA 12 wheels here.
    env: BUILD_CU12
{workflows}producers:
  cu12:
    when: cu12
    artifacts: ["cu12-python{{py}}-{{platform}}-{{sha}}"]
{producers}"""

GATE = """\
  gate:
    runs-on: ubuntu-latest
    outputs:
      flags: ${{ steps.flags.outputs.flags }}
      active: ${{ steps.flags.outputs.active }}
      matrix: ${{ steps.cu12.outputs.matrix }}
    steps:
      - id: flags
        uses: your-org/stagegate@v0.1.0
        with:
          command: flags
      - id: cu12
        uses: your-org/stagegate@v0.1.0
        with:
          command: matrix cu12
"""


def repo(
    tmp_path: Path, jobs: str, *, workflows: str = "", producers: str = "", stages: int = 1
) -> Path:
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "stages").mkdir()
    for n in range(1, stages + 1):
        (root / "stages" / f"{n:02d}-on.yaml").write_text(
            f"stage: {n}\ntitle: On\nset:\n  cu12: true\n"
        )
    (root / "migration.yaml").write_text(MODEL.format(workflows=workflows, producers=producers))
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\njobs:\n" + jobs)
    return root


def drift(sg: Sg, root: Path, *args: str) -> tuple[int, dict[str, object]]:
    result = sg("drift", "--format", "json", *args, cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)


def names(data: dict[str, object]) -> set[str]:
    return {u["name"] for u in data["uploads"]}  # type: ignore[union-attr,index]


BUILD = """\
  build:
    needs: gate
    if: contains(fromJSON(needs.gate.outputs.active).producers, 'cu12')
    strategy:
      matrix: ${{ fromJSON(needs.gate.outputs.matrix) }}
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: cu12-python${{ matrix.py }}-${{ matrix.platform }}-${{ github.sha }}
"""


def test_the_reference_form_of_reading_flags(sg: Sg, tmp_path: Path) -> None:
    """The gate's `active` and `matrix P` outputs make the build job exact at every stage."""
    root = repo(tmp_path, GATE + BUILD)
    code, data = drift(sg, root, "--stage", "0")
    assert code == 0 and names(data) == set()
    code, data = drift(sg, root, "--stage", "1")
    assert code == 0, data["findings"]
    assert names(data) == {
        f"cu12-python{py}-{platform}-{{sha}}"
        for py in ("312", "313")
        for platform in ("linux-64", "win-64")
    }
    assert data["unresolved"] == []


MATRIX_BUILD = """\
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["312", "313"]
        platform: [linux-64, win-64]
    steps:
"""
"""A job over the model's py x platform rows; its steps follow."""


def test_a_flag_env_is_set_after_the_flags_step(sg: Sg, tmp_path: Path) -> None:
    jobs = (
        MATRIX_BUILD
        + """\
      - run: stagegate flags --format github
      - if: env.BUILD_CU12 == 'true'
        uses: actions/upload-artifact@v4
        with:
          name: cu12-python${{ matrix.py }}-${{ matrix.platform }}-${{ github.sha }}
"""
    )
    root = repo(tmp_path, jobs)
    assert drift(sg, root, "--stage", "0")[0] == 0
    code, data = drift(sg, root, "--stage", "1")
    assert code == 0 and len(names(data)) == 4


def test_a_step_that_reads_the_flag_before_the_flags_step_is_undecided(
    sg: Sg, tmp_path: Path
) -> None:
    jobs = """\
  build:
    runs-on: ubuntu-latest
    steps:
      - if: env.BUILD_CU12 == 'true'
        uses: actions/upload-artifact@v4
        with:
          name: other
"""
    code, data = drift(sg, repo(tmp_path, jobs), "--stage", "0")
    assert code == 1
    assert "other" in names(data)  # may run: the flag is not in its environment yet


UPLOAD_NAME = (
    MATRIX_BUILD
    + """\
      - run: |
          echo "NAME=cu12-python${{ matrix.py }}-${{ matrix.platform }}-$(git rev-parse HEAD)" >> "$GITHUB_ENV"
      - uses: actions/upload-artifact@v4
        with:
          name: ${{ env.NAME }}
"""
)


def test_a_bind_holding_expressions_is_evaluated_in_each_row(sg: Sg, tmp_path: Path) -> None:
    bind = 'workflows:\n  bind:\n    env.NAME: "cu12-python${{ matrix.py }}-${{ matrix.platform }}-{sha}"\n'
    root = repo(tmp_path, UPLOAD_NAME, workflows=bind)
    code, data = drift(sg, root, "--stage", "1")
    assert code == 0, data["findings"]
    assert len(names(data)) == 4 and data["unresolved"] == []
    # a free {py} instead would make every py in every row: the same names here, but
    # the expression keeps each row's own
    assert "cu12-python312-win-64-{sha}" in names(data)


def test_a_bind_for_a_job_wins_over_a_bare_one(sg: Sg, tmp_path: Path) -> None:
    bind = (
        "workflows:\n  bind:\n"
        '    env.NAME: "wrong-{sha}"\n'
        '    ".github/workflows/ci.yml#build env.NAME": "cu12-python${{ matrix.py }}-${{ matrix.platform }}-{sha}"\n'
    )
    root = repo(tmp_path, UPLOAD_NAME, workflows=bind)
    code, data = drift(sg, root, "--stage", "1")
    assert code == 0, data["findings"]
    assert "wrong-{sha}" not in names(data)
    bind_file = bind.replace("ci.yml#build env.NAME", "ci.yml env.NAME")
    (root / "migration.yaml").write_text(MODEL.format(workflows=bind_file, producers=""))
    code, data = drift(sg, root, "--stage", "1")
    assert code == 0, data["findings"]


CALLERS = """\
  linux:
    uses: ./.github/workflows/build.yml
    with:
      platform: linux-64
  windows:
    uses: ./.github/workflows/build.yml
    with:
      platform: win-64
"""

CALLED = """\
on:
  workflow_call:
    inputs:
      platform: {type: string}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: cu12-python${{ env.PY }}-${{ inputs.platform }}-${{ github.sha }}
"""


def test_a_bind_for_a_calling_job_holds_in_the_workflow_it_calls(sg: Sg, tmp_path: Path) -> None:
    """Per-caller values: 313 is built on linux only; the job's own bind is the fallback."""
    bind = (
        "workflows:\n  bind:\n"
        '    ".github/workflows/build.yml#build env.PY": "312"\n'
        '    ".github/workflows/ci.yml#linux env.PY": "{py}"\n'
    )
    root = repo(tmp_path, CALLERS, workflows=bind)
    (root / ".github" / "workflows" / "build.yml").write_text(CALLED)
    _code, data = drift(sg, root, "--stage", "1")
    assert names(data) == {"cu12-python{py}-linux-64-{sha}", "cu12-python312-win-64-{sha}"}
    assert missing_rows(data) == ["cu12-python313-win-64-{sha}"]
    # control: without the caller's bind, every caller has the job's
    (root / "migration.yaml").write_text(
        MODEL.format(workflows=bind.split('    ".github/workflows/ci.yml')[0], producers="")
    )
    _code, data = drift(sg, root, "--stage", "1")
    assert names(data) == {"cu12-python312-linux-64-{sha}", "cu12-python312-win-64-{sha}"}
    assert missing_rows(data) == ["cu12-python313-linux-64-{sha}, cu12-python313-win-64-{sha}"]


def missing_rows(data: dict[str, object]) -> list[str]:
    """The rows each missing-upload finding names."""
    return [
        f["message"].rpartition("rows ")[2].partition(". Upload")[0]  # type: ignore[index]
        for f in data["findings"]  # type: ignore[attr-defined]
        if f["kind"] == "missing-upload"  # type: ignore[index]
    ]


def test_a_bind_that_refers_to_itself_is_unresolved(sg: Sg, tmp_path: Path) -> None:
    bind = 'workflows:\n  bind:\n    env.NAME: "x-${{ env.NAME }}"\n'
    root = repo(tmp_path, UPLOAD_NAME, workflows=bind)
    _code, data = drift(sg, root, "--stage", "0")
    assert any("refers to itself" in u["reason"] for u in data["unresolved"])  # type: ignore[union-attr,index]


def test_a_bad_expression_in_a_bind_is_a_located_error(sg: Sg, tmp_path: Path) -> None:
    bind = 'workflows:\n  bind:\n    env.NAME: "x-${{ matrix.py == }}"\n'
    root = repo(tmp_path, UPLOAD_NAME, workflows=bind)
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert "migration.yaml:14:35:" in result.err and "invalid expression" in result.err


def test_a_scripts_own_known_value_wins_over_a_bare_bind(sg: Sg, tmp_path: Path) -> None:
    jobs = """\
  build:
    runs-on: ubuntu-latest
    steps:
      - run: |
          NAME=local-name
          gh run download -n "$NAME"
          OTHER=$(compute)
          gh run download -n "$OTHER"
"""
    bind = 'workflows:\n  bind:\n    env.NAME: "bound"\n    env.OTHER: "bound-other"\n'
    _code, data = drift(sg, repo(tmp_path, jobs, workflows=bind), "--stage", "0")
    selects = {d["select"] for d in data["downloads"]}  # type: ignore[union-attr,index]
    assert selects == {"local-name", "bound-other"}


def test_an_input_default_that_is_an_expression(sg: Sg, tmp_path: Path) -> None:
    """`run-id: default: ${{ github.run_id }}` read as this run, not another."""
    root = repo(tmp_path, "  call:\n    uses: ./.github/workflows/docs.yml\n")
    (root / ".github" / "workflows" / "docs.yml").write_text(
        "on:\n  workflow_call:\n    inputs:\n      run-id:\n        type: string\n"
        "        default: ${{ github.run_id }}\n"
        "jobs:\n  docs:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: gh run download \"${{ inputs.run-id }}\" -p 'cu12-*'\n"
    )
    _code, data = drift(sg, root, "--stage", "0")
    assert [d["run"] for d in data["downloads"]] == ["this"]  # type: ignore[union-attr,index]


def test_only_this_runs_producers_declare_an_upload(sg: Sg, tmp_path: Path) -> None:
    """A producer of another run has its uploads in another branch's tree."""
    jobs = """\
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: branch-wheel
"""
    other = "  branch:\n    run: release-1.x\n    artifacts: [branch-wheel]\n"
    code, data = drift(sg, repo(tmp_path, jobs, producers=other), "--stage", "0")
    assert code == 1
    assert [f["kind"] for f in data["findings"]] == ["undeclared-upload"]  # type: ignore[union-attr,index]
    listed = other + '    jobs: [".github/workflows/ci.yml#build"]\n'
    code, data = drift(sg, repo(tmp_path / "2", jobs, producers=listed), "--stage", "0")
    assert code == 0, data["findings"]


@pytest.mark.parametrize("stage", ["0", "1"])
def test_check_workflows_at_every_stage(sg: Sg, tmp_path: Path, stage: str) -> None:
    root = repo(tmp_path, GATE + BUILD)
    text = (
        root / "migration.yaml"
    ).read_text() + "invariants:\n  - check: workflows\n    strict: true\n"
    (root / "migration.yaml").write_text(text)
    assert sg("check", "--stage", stage, cwd=root).code == 0


def test_matrix_include_as_github_documents_it(sg: Sg, tmp_path: Path) -> None:
    """The example of GitHub's docs ("Expanding or adding matrix configurations"), plus an exclude."""
    jobs = """\
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        fruit: [apple, pear]
        animal: [cat, dog, cow]
        exclude:
          - animal: cow
        include:
          - color: green
          - color: pink
            animal: cat
          - fruit: apple
            shape: circle
          - fruit: banana
          - fruit: banana
            animal: cat
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: ${{ matrix.fruit }}-${{ matrix.animal }}-${{ matrix.color }}-${{ matrix.shape }}
"""
    _code, data = drift(sg, repo(tmp_path, jobs), "--stage", "0")
    assert names(data) == {
        "apple-cat-pink-circle",
        "apple-dog-green-circle",
        "pear-cat-pink-",
        "pear-dog-green-",
        "banana---",
        "banana-cat--",
    }


def test_inputs_of_a_workflow_that_starts_a_run(sg: Sg, tmp_path: Path) -> None:
    """A push run has an empty inputs context; a dispatch's inputs are chosen at dispatch."""
    jobs = (
        "  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/upload-artifact@v4\n        with:\n"
        "          name: ${{ inputs.name || 'pushed' }}\n"
    )
    root = repo(tmp_path, jobs)
    _code, data = drift(sg, root, "--stage", "0")
    assert names(data) == {"pushed"}
    workflow = root / ".github" / "workflows" / "ci.yml"
    workflow.write_text(
        workflow.read_text().replace(
            "on: push\n",
            "on:\n  push:\n  workflow_dispatch:\n    inputs:\n      name:\n        type: string\n",
        )
    )
    _code, data = drift(sg, root, "--stage", "0")
    assert [u["reason"] for u in data["unresolved"]] == [  # type: ignore[union-attr,index]
        ".github/workflows/ci.yml is started by workflow_dispatch, whose inputs are chosen then; bind them"
    ]


@pytest.mark.parametrize(
    "script",
    [
        'echo "NAME=cu12-python312-linux-64" | tee -a "$GITHUB_ENV"',
        '{\n            echo "OTHER=1"\n            echo "NAME=cu12-python312-linux-64"\n          } >> "$GITHUB_ENV"',
        '{ echo "NAME=cu12-python312-linux-64"; } >> $GITHUB_ENV',
        'echo "NAME=cu12-python312-linux-64" >> "${GITHUB_ENV}"',
        'PY=312\n          cat >> "$GITHUB_ENV" <<EOF\n          OTHER=x\n          NAME=cu12-python${PY}-linux-64\n          EOF',
        "tee -a $GITHUB_ENV <<'EOF'\n          NAME=cu12-python312-linux-64\n          EOF",
    ],
)
def test_github_env_write_shapes(sg: Sg, tmp_path: Path, script: str) -> None:
    jobs = (
        "  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: |\n          {script}\n"
        "      - uses: actions/upload-artifact@v4\n        with:\n"
        "          name: ${{ env.NAME }}-${{ github.sha }}\n"
    )
    _code, data = drift(sg, repo(tmp_path, jobs), "--stage", "0")
    assert names(data) == {"cu12-python312-linux-64-{sha}"}, data


@pytest.mark.parametrize(
    ("script", "name"),
    [
        ('V="3.12"\n          PY=${V//./}', "cu12-python312-linux-64"),
        ('V="3.12.1"\n          PY=${V/./}', "cu12-python312.1-linux-64"),
        ('V="py312"\n          PY=${V#py}', "cu12-python312-linux-64"),
        ('V="312t"\n          PY=${V%t}', "cu12-python312-linux-64"),
        ("PY=${UNSET_VAR:-312}", "cu12-python312-linux-64"),
        ('PY="313"\n          PY=${PY:-312}', "cu12-python313-linux-64"),
        ('V="abc"\n          PY=${#V}12', "cu12-python312-linux-64"),
    ],
)
def test_parameter_expansions(sg: Sg, tmp_path: Path, script: str, name: str) -> None:
    jobs = (
        "  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: |\n          {script}\n"
        '          echo "NAME=cu12-python${PY}-linux-64" >> "$GITHUB_ENV"\n'
        "      - uses: actions/upload-artifact@v4\n        with:\n"
        "          name: ${{ env.NAME }}\n"
    )
    _code, data = drift(sg, repo(tmp_path, jobs), "--stage", "0")
    assert names(data) == {name}, data


def test_a_wildcard_pattern_expansion_is_computed(sg: Sg, tmp_path: Path) -> None:
    """``${V//[.]/}`` replaces what the pattern matches, as bash does (it was unresolved
    before the reader matched shell patterns itself); a pattern it does not read, an
    extended glob, stays unresolved (the control)."""
    jobs = (
        "  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: |\n          V="3.12"\n          gh run download -n "x-${V//[.]/}"\n'
    )
    _code, data = drift(sg, repo(tmp_path, jobs), "--stage", "0")
    assert [d["select"] for d in data["downloads"]] == ["x-312"]  # type: ignore[index]
    assert data["unresolved"] == []  # type: ignore[index]
    extended = jobs.replace("${V//[.]/}", "${V//+([.])/}")
    _code, data = drift(sg, repo(tmp_path / "control", extended), "--stage", "0")
    assert [u["expression"] for u in data["unresolved"]] == ["${V//+([.])/}"]  # type: ignore[union-attr,index]
