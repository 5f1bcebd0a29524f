"""The shell reader on the constructs of cuda-python's release scripts (issue 23): `if`
branches the condition decides, clean-up after the files were used, and run ids that
cannot be known. Each reading has its control beside it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import Result

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: shell
stage: 0
axes:
  sha: {pattern: "[0-9a-f]{40}"}
producers:
  wheel:
    artifacts: ["wheel-{sha}"]
"""


def read(
    sg: Sg, tmp_path: Path, steps: str, matrix: str = "", scripts: dict[str, str] | None = None
) -> dict[str, list[dict[str, object]]]:
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    for rel, text in (scripts or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "migration.yaml").write_text(MODEL)
    strategy = f"    strategy:\n      matrix:\n{matrix}" if matrix else ""
    (root / ".github" / "workflows" / "w.yml").write_text(
        f"on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n{strategy}    steps:\n{steps}"
    )
    result = sg("drift", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    data: dict[str, list[dict[str, object]]] = json.loads(result.out)
    return data


def run(script: str) -> str:
    return "      - run: |\n" + "".join(f"          {line}\n" for line in script.splitlines())


def downloads(data: dict[str, list[dict[str, object]]]) -> list[tuple[object, ...]]:
    return [(d["line"], d["select"], d["resolved"], d["exclude"]) for d in data["downloads"]]


def unresolved(data: dict[str, list[dict[str, object]]]) -> list[tuple[object, ...]]:
    return [(u["line"], u["expression"], u["reason"]) for u in data["unresolved"]]


RELEASE_MODE = """\
if [[ ${{ matrix.release }} == "true" ]]; then
  FILE_HASH="*"
else
  FILE_HASH="${{ github.sha }}"
fi
gh run download -p "wheel-${FILE_HASH}"
"""


def test_an_if_takes_the_branch_its_condition_decides(sg: Sg, tmp_path: Path) -> None:
    """build-docs.yml's release mode: `*` on a release, the commit otherwise; the last
    branch used to win in every row."""
    data = read(sg, tmp_path, run(RELEASE_MODE), matrix='        release: ["true", "false"]\n')
    assert downloads(data) == [
        (15, "wheel-*", True, []),
        (15, "wheel-{sha}", True, []),
    ]


def test_an_undecidable_if_makes_what_its_branches_set_apart_unresolved(
    sg: Sg, tmp_path: Path
) -> None:
    script = """\
if [[ -f ci/versions.yml ]]; then
  VER="13.3.0"; SAME="x"
elif [[ -f ci/versions.json ]]; then
  VER="13.2.0"; SAME="x"
else
  echo "no versions file"
  exit 1
fi
gh run download -n "wheel-$VER" -n "wheel-$SAME"
"""
    data = read(sg, tmp_path, run(script))
    assert downloads(data) == [(15, "wheel-$VER", False, []), (15, "wheel-x", True, [])]
    assert unresolved(data) == [
        (
            15,
            "$VER",
            "$VER is set differently by the branches of the if at .github/workflows/w.yml:7, "
            "whose condition stagegate cannot decide; bind env.VER",
        )
    ]


def test_a_guard_that_fails_the_run_is_not_a_branch(sg: Sg, tmp_path: Path) -> None:
    """download-wheels' `if [[ -z "${GH_TOKEN:-}" ]]; then ...; exit 1; fi`: a run that
    succeeds did not take it, so what it would set does not count."""
    script = """\
NAME="wheel-a"
if [[ -z "${GH_TOKEN:-}" ]]; then
  NAME="never"
  exit 1
fi
gh run download -n "$NAME"
"""
    data = read(sg, tmp_path, run(script))
    assert downloads(data) == [(12, "wheel-a", True, [])]
    assert unresolved(data) == []


PUBLISH = """\
mkdir -p dist
gh run download -p "wheel-*"
{before}for artifact_dir in wheel-*; do
  [[ ! -d "${{artifact_dir}}" ]] && continue
  mv "${{artifact_dir}}"/*.whl dist/
done
{after}ls -la dist
"""


def test_removing_the_folders_after_moving_the_files_is_clean_up(sg: Sg, tmp_path: Path) -> None:
    """release-cuda-pathfinder.yml's publish jobs end with `rm -rf cuda-*` after the
    wheels went to dist/: read as an exclusion, the release selected nothing."""
    data = read(sg, tmp_path, run(PUBLISH.format(before="", after="rm -rf wheel-*\n")))
    assert downloads(data) == [(8, "wheel-*", True, [])]


def test_removing_a_folder_before_the_files_are_used_excludes_it(sg: Sg, tmp_path: Path) -> None:
    """The control (build-wheel.yml's prior-branch step): `rm -rf X-tests` before the move."""
    data = read(sg, tmp_path, run(PUBLISH.format(before="rm -rf wheel-*-tests\n", after="")))
    assert downloads(data) == [(8, "wheel-*", True, ["wheel-*-tests"])]


def test_a_run_id_that_cannot_be_known_is_unresolved(sg: Sg, tmp_path: Path) -> None:
    """A run from a command's output or a job's step output is another run or this one:
    not known, so listed (it decides what the download can select)."""
    steps = (
        run('RUN=$(./ci/tools/lookup-run-id "$TAG")\ngh run download "$RUN" -n "wheel-a"')
        + "      - uses: actions/download-artifact@v4\n"
        "        with:\n"
        "          name: wheel-b\n"
        "          run-id: ${{ steps.find.outputs.run-id }}\n"
    )
    data = read(sg, tmp_path, steps)
    assert [(d["select"], d["run"]) for d in data["downloads"]] == [
        ("wheel-a", "$RUN"),
        ("wheel-b", "${{ steps.find.outputs.run-id }}"),
    ]
    assert [(u["line"], u["expression"]) for u in data["unresolved"]] == [
        (8, '$(./ci/tools/lookup-run-id "$TAG")'),
        (12, "${{ steps.find.outputs.run-id }}"),
    ]


def test_a_run_id_of_this_run_is_resolved(sg: Sg, tmp_path: Path) -> None:
    """The control: github.run_id, in either form, is this run."""
    steps = run('gh run download "$GITHUB_RUN_ID" -n "wheel-a"') + (
        "      - uses: actions/download-artifact@v4\n"
        "        with:\n"
        "          name: wheel-b\n"
        "          run-id: ${{ github.run_id }}\n"
    )
    data = read(sg, tmp_path, steps)
    assert [(d["select"], d["run"]) for d in data["downloads"]] == [
        ("wheel-a", "this"),
        ("wheel-b", "this"),
    ]
    assert data["unresolved"] == []


DOWNLOAD_WHEELS = """\
#!/usr/bin/env bash
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: download-wheels RUN COMPONENT REPO [DIR]" >&2
  exit 1
fi
RUN_ID="$1"
COMPONENT="$2"
OUTPUT_DIR="${4:-./dist}"
if [[ "$COMPONENT" == "all" ]]; then
  gh run download "$RUN_ID" -p "wheel-*" -R "$3"
else
  gh run download "$RUN_ID" -p "${COMPONENT}*" -R "$3"
fi
mkdir -p "$OUTPUT_DIR"
for p in wheel-*; do
  if [[ "$p" == *-tests ]]; then
    continue
  fi
  find "$p" -name "*.whl" -exec mv {} "$OUTPUT_DIR/" \\;
done
rm -rf wheel-*
"""

ENV_VARS = """\
#!/bin/bash
PYTHON_VERSION_FORMATTED="${PY_VER//./}"
NAME="wheel-python${PYTHON_VERSION_FORMATTED}-$1"
echo "WHEEL_NAME=${NAME}" >> $GITHUB_ENV
"""


def test_a_script_the_run_calls_is_read_with_its_arguments(sg: Sg, tmp_path: Path) -> None:
    """release.yml's `./ci/tools/download-wheels RUN COMPONENT REPO dist`: the script's
    download, with $1... from the call, its `continue` filters as exclusions and its
    trailing `rm -rf` as clean-up, count for the calling job, at the script's lines."""
    steps = run('./ci/tools/download-wheels "${{ github.run_id }}" wheel-core owner/repo dist')
    data = read(sg, tmp_path, steps, scripts={"ci/tools/download-wheels": DOWNLOAD_WHEELS})
    assert [
        (d["file"], d["line"], d["job"], d["select"], d["run"], d["exclude"])
        for d in data["downloads"]
    ] == [
        (
            "ci/tools/download-wheels",
            13,
            ".github/workflows/w.yml#a",
            "wheel-core*",
            "this",
            ["*-tests"],
        )
    ]
    assert data["unresolved"] == []


def test_a_script_writing_github_env_feeds_later_steps(sg: Sg, tmp_path: Path) -> None:
    """ci/tools/env-vars: names assembled in the script reach `${{ env.X }}` later on."""
    steps = (
        "      - env:\n          PY_VER: ${{ matrix.py }}\n"
        + run("bash ci/tools/env-vars linux-64").replace("      - run", "        run")
        + "      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{ env.WHEEL_NAME }}\n"
    )
    data = read(
        sg,
        tmp_path,
        steps,
        matrix='        py: ["3.12", "3.14t"]\n',
        scripts={"ci/tools/env-vars": ENV_VARS},
    )
    assert sorted((u["name"], u["resolved"]) for u in data["uploads"]) == [
        ("wheel-python312-linux-64", True),
        ("wheel-python314t-linux-64", True),
    ]


def test_only_shell_scripts_inside_the_repository_are_read(sg: Sg, tmp_path: Path) -> None:
    """The control: a Python script, a script that is not there and a link leading out
    of the repository are not read (the env they might write stays unknown)."""
    outside = tmp_path / "outside.sh"
    outside.write_text(ENV_VARS)
    steps = (
        run(
            "./ci/tools/env_vars.py linux-64\n./ci/tools/missing linux-64\n./ci/tools/link linux-64"
        )
        + "      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{ env.WHEEL_NAME }}\n"
    )
    root = tmp_path / "repo"
    (root / "ci" / "tools").mkdir(parents=True)
    (root / "ci" / "tools" / "link").symlink_to(outside)
    data = read(sg, tmp_path, steps, scripts={"ci/tools/env_vars.py": ENV_VARS})
    assert [(u["name"], u["resolved"]) for u in data["uploads"]] == [
        ("${{ env.WHEEL_NAME }}", False)
    ]


UPLOAD_A = "      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{ env.A }}\n"


def test_powershell_writes_to_github_env_are_read(sg: Sg, tmp_path: Path) -> None:
    """`shell: pwsh`: simple assignments and `"K=V" >> $env:GITHUB_ENV` are read."""
    steps = (
        "      - shell: pwsh\n"
        "        run: |\n"
        "          $py = '312'\n"
        '          "A=wheel-python$py-win-64" >> $env:GITHUB_ENV\n' + UPLOAD_A
    )
    data = read(sg, tmp_path, steps)
    assert [(u["name"], u["resolved"]) for u in data["uploads"]] == [
        ("wheel-python312-win-64", True)
    ]


def test_a_windows_runner_runs_powershell_not_bash(sg: Sg, tmp_path: Path) -> None:
    """No `shell:` on a windows-* runner is PowerShell: a bash-style write there is not
    read as one, but listed as a write stagegate cannot read."""
    data = read(sg, tmp_path, run('echo "A=wheel-a" >> "$GITHUB_ENV"') + UPLOAD_A)
    assert [(u["name"], u["resolved"]) for u in data["uploads"]] == [("wheel-a", True)]
    workflow = tmp_path / "repo" / ".github" / "workflows" / "w.yml"
    workflow.write_text(workflow.read_text().replace("ubuntu-latest", "windows-2022"))
    result = sg("drift", "--format", "json", cwd=tmp_path / "repo")
    data = json.loads(result.out)
    assert [(u["name"], u["resolved"]) for u in data["uploads"]] == [("${{ env.A }}", False)]
    assert (7, 'echo "A=wheel-a" >> "$GITHUB_ENV"') in [
        (u["line"], u["expression"]) for u in data["unresolved"]
    ]


def test_a_powershell_write_in_a_step_its_if_rules_out_is_not_unresolved(
    sg: Sg, tmp_path: Path
) -> None:
    """aio-libs/aiohttp d9a4714: `echo "PYTHON_GIL=0" >> $GITHUB_ENV` under `if:
    endsWith(matrix.pyver, 't')` in a matrix with Windows rows: it runs on no Windows
    row (the free-threaded row is on Linux), so the PowerShell there writes nothing. The
    control: the same step with a Windows free-threaded row is listed."""
    steps = (
        "      - if: ${{ endsWith(matrix.pyver, 't') }}\n"
        '        run: echo "PYTHON_GIL=0" >> $GITHUB_ENV\n'
    )
    workflow = tmp_path / "repo" / ".github" / "workflows" / "w.yml"
    matrix = "        os: [ubuntu, windows]\n        pyver: ['3.13', '3.14']\n"
    ft_linux = "        include:\n          - {os: ubuntu, pyver: 3.14t}\n"
    read(sg, tmp_path, steps, matrix=matrix + ft_linux)
    workflow.write_text(workflow.read_text().replace("ubuntu-latest", "${{ matrix.os }}-latest"))
    data = json.loads(sg("drift", "--format", "json", cwd=tmp_path / "repo").out)
    assert unresolved(data) == []
    workflow.write_text(workflow.read_text().replace("{os: ubuntu, pyver", "{os: windows, pyver"))
    data = json.loads(sg("drift", "--format", "json", cwd=tmp_path / "repo").out)
    assert unresolved(data) == [
        (13, 'echo "PYTHON_GIL=0" >> $GITHUB_ENV', "a write of $GITHUB_ENV in PowerShell "
         "stagegate cannot read")
    ]  # fmt: skip


def test_upload_pages_artifact_is_an_upload(sg: Sg, tmp_path: Path) -> None:
    """build-docs.yml's `actions/upload-pages-artifact`: named `github-pages` unless
    `name:` says otherwise."""
    steps = (
        "      - uses: actions/upload-pages-artifact@v3\n        with:\n          path: artifacts/\n"
        "      - uses: actions/upload-pages-artifact@v3\n        with:\n          name: docs-preview\n"
    )
    data = read(sg, tmp_path, steps)
    assert [(u["line"], u["name"]) for u in data["uploads"]] == [
        (6, "github-pages"),
        (11, "docs-preview"),
    ]


def test_a_script_is_split_again_where_an_expression_renders_otherwise(
    sg: Sg, tmp_path: Path
) -> None:
    """GitHub substitutes ``${{ }}`` into the text before bash reads it, and so does the
    reader (one parse per rendered text): the row where matrix.name is two words is
    two words, the rows that render alike share a parse (each with its own n), and the
    unknown value, kept out of the text, is the same mark in every row."""
    data = read(
        sg,
        tmp_path,
        run(
            'gh run download -p wheel-${{ matrix.name }}-${{ matrix.n }} -p "w-${{ github.event.x }}"'
        ),
        matrix='        name: ["a", "b c", "a"]\n        n: [1, 2]\n',
    )
    unknown = ("w-${{ github.event.x }}", False, [])
    assert downloads(data) == [
        (11, *unknown),
        (11, *unknown),
        (11, *unknown),
        (11, "wheel-a-1", True, []),
        (11, "wheel-a-2", True, []),
        (11, "wheel-b", True, []),  # "b c" is two words: -p wheel-b c-1
        (11, "wheel-b", True, []),
    ]
    assert unresolved(data) == [
        (
            11,
            "${{ github.event.x }}",
            "github.event.x depends on the event; bind it if a name uses it",
        )
    ]
