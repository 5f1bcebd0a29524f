"""The `flags-wired` check, and a flag's `env` in the audit, on small git repositories."""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import pin_git

Sg = Callable[..., Result]
DATE = "2025-03-04T05:06:07Z"

MIGRATION = """\
version: 1
migration: wired
stage: 0
flags:
  local:
    summary: Build locally.
    env: BUILD_LOCAL
    references: [USE_LOCAL]
  docs:
    env: BUILD_DOCS
  bare: {}
producers:
  main:
    artifacts: [main-wheel]
  local:
    when: local
    artifacts: [local-wheel]
audit:
  ignore: ["notes/**"]
"""

STAGE_1 = """\
stage: 1
title: Build locally
set:
  local: true
  docs: false
acceptance:
  - check: flags-wired
"""

STAGE_2 = """\
stage: 2
title: Bare
set:
  bare: true
acceptance:
  - check: flags-wired
"""

WORKFLOW = """\
name: build
on: [push]
jobs:
  gate:
    runs-on: ubuntu-latest
    outputs:
      flags: ${{ steps.flags.outputs.flags }}
    steps:
      - id: flags
        run: stagegate flags --format github
  build:
    needs: gate
    runs-on: ubuntu-latest
    env:
      BUILD_LOCAL: ${{ fromJSON(needs.gate.outputs.flags)['local'] }}
    steps:
      - run: ci/build.sh
"""


def git(top: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=top, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture(autouse=True)
def _pinned_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """scratch's isolated git (no user or system configuration, a fixed identity), at one date."""
    pin_git(monkeypatch)
    monkeypatch.setenv("GIT_AUTHOR_DATE", DATE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", DATE)


def make(
    tmp_path: Path,
    files: dict[str, str],
    *,
    migration: str = MIGRATION,
    stages: tuple[str, ...] = (STAGE_1,),
    commit: bool = True,
) -> Path:
    top = tmp_path / "repo"
    (top / "stages").mkdir(parents=True)
    (top / "migration.yaml").write_text(migration)
    for number, body in enumerate(stages, start=1):
        (top / "stages" / f"{number:02d}-step.yaml").write_text(body)
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(textwrap.dedent(text))
    if commit:
        git(top, "init", "-q", "-b", "main")
        git(top, "add", "-A")
        git(top, "commit", "-q", "-m", "fixture")
    return top


WIRED = {
    ".github/workflows/build.yml": WORKFLOW,
    "ci/build.sh": 'if [ "$USE_LOCAL" = 1 ]; then make local; fi\n',
}


def check(sg: Sg, top: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = sg("check", *args, "--format", "json", cwd=top)
    assert result.code in (0, 1), result.output
    data = json.loads(result.out)
    wired = [r for r in data["results"] if r["check"] == "flags-wired"]
    return result.code, [f for r in wired for f in r["findings"]]


def test_passes_when_every_reference_of_a_flipped_flag_is_read(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, WIRED)
    result = sg("check", "--stage", "1", cwd=top)
    assert result.code == 0, result.output
    assert (
        "flags-wired: 1 flipped flag read in CI; no env: in 1 workflow contradicts a flag"
        in result.out
    )


NO_ENV = WORKFLOW.replace(
    "    env:\n      BUILD_LOCAL: ${{ fromJSON(needs.gate.outputs.flags)['local'] }}\n", ""
)
"""The workflow without the job's `env:`: nothing in it reads the flag `local`."""


def test_nothing_reading_a_flipped_flag_fails_at_the_stage_line(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, {".github/workflows/build.yml": NO_ENV})
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert findings == [
        {
            "message": "flag local turns on at stage 1, but its reference 'USE_LOCAL' and env "
            "'BUILD_LOCAL' are in no file git tracks (outside the migration's own files and "
            "audit.ignore), and no workflow reads it as docs/ci.md shows (fromJSON(needs.JOB."
            "outputs.flags)['local'], needs.JOB.outputs.local, `stagegate flag local`), so "
            "nothing shows that CI reads it, and a flip nobody reads changes nothing: give it "
            "`env: NAME` and read that variable in the workflows (or gate jobs on "
            "fromJSON(needs.gate.outputs.flags)['local']).",
            "file": "stages/01-step.yaml",
            "line": 4,
        }
    ]


def test_a_reference_read_nowhere_is_a_note_where_the_env_is_read(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, {".github/workflows/build.yml": WORKFLOW})
    result = sg("check", "--stage", "1", cwd=top)
    assert result.code == 0, result.output
    assert (
        "flags-wired: 1 flipped flag read in CI; no env: in 1 workflow contradicts a flag; "
        "note: flag local's reference 'USE_LOCAL' is read nowhere: drop it from the flag "
        "(migration.yaml:5:3) or read it" in result.out
    )


def test_an_env_read_nowhere_is_a_note_where_a_reference_is_read(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, {"ci/build.sh": "echo $USE_LOCAL\n"})
    code, findings = check(sg, top, "--stage", "1")
    assert (code, findings) == (0, [])
    result = sg("check", "--stage", "1", cwd=top)
    assert "note: flag local's env 'BUILD_LOCAL' is read nowhere: drop it" in result.out


@pytest.mark.parametrize(
    "reader",
    [
        "if: fromJSON(needs.gate.outputs.flags)['local']",
        "if: needs.gate.outputs.local == 'true'",
        "if: contains(fromJSON(needs.gate.outputs.active).producers, 'local')",
        "if: fromJSON(steps.flags.outputs.flags)['local']",
    ],
    ids=["json-index", "output", "active-producer", "step-output"],
)
def test_an_env_read_nowhere_is_a_note_where_ci_reads_the_flag_as_documented(
    tmp_path: Path, sg: Sg, reader: str
) -> None:
    """The flag's `env` is declared and read nowhere, its reference neither; a job reads the
    flag through the gate's outputs (or, for `active`, the producer the flag turns on)."""
    workflow = NO_ENV.replace("    needs: gate\n", f"    needs: gate\n    {reader}\n")
    top = make(tmp_path, {".github/workflows/build.yml": workflow})
    result = sg("check", "--stage", "1", cwd=top)
    assert result.code == 0, result.output
    line = 1 + workflow.splitlines().index(f"    {reader}")
    assert (
        f"note: flag local's reference 'USE_LOCAL' is read nowhere (CI reads it at "
        f".github/workflows/build.yml:{line}: " in result.out
    )
    assert "note: flag local's env 'BUILD_LOCAL' is read nowhere (CI reads it at" in result.out


def test_a_flag_that_declares_no_reference_fails_when_flipped(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, WIRED, stages=(STAGE_1, STAGE_2))
    code, findings = check(sg, top, "--stage", "2")
    assert code == 1
    assert len(findings) == 1
    assert findings[0]["message"].startswith(
        "flag bare turns on at stage 2, but declares neither `env` nor `references`"
    )
    assert (findings[0]["file"], findings[0]["line"]) == ("stages/02-step.yaml", 4)


def test_a_set_that_changes_nothing_is_not_a_flip(tmp_path: Path, sg: Sg) -> None:
    stage = STAGE_1.replace("  docs: false\n", "  docs: false\n  bare: false\n")
    top = make(tmp_path, WIRED, stages=(stage,))
    assert check(sg, top, "--stage", "1") == (0, [])


def test_references_only_in_ignored_untracked_or_own_files_do_not_count(
    tmp_path: Path, sg: Sg
) -> None:
    files = {
        ".github/workflows/build.yml": NO_ENV,
        "notes/plan.md": "USE_LOCAL will be read by ci/build.sh\n",
        "stages/01-step/test_it.py": "USE_LOCAL = 1\n",
    }
    top = make(tmp_path, files)
    (top / "ci").mkdir()
    (top / "ci" / "build.sh").write_text("echo $USE_LOCAL\n")  # not committed, not added
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert "'USE_LOCAL' and env 'BUILD_LOCAL' are in no file git tracks" in findings[0]["message"]
    git(top, "add", "ci/build.sh")
    assert check(sg, top, "--stage", "1") == (0, [])


@pytest.mark.parametrize(
    ("where", "value", "fails"),
    [
        ("workflow", '"false"', True),
        ("job", "false", True),
        ("step", "0", True),
        ("step", "'0'", True),
        ("job", "FALSE", True),
        ("workflow", '"true"', False),
        ("job", "1", False),
        ("step", "${{ fromJSON(needs.gate.outputs.flags)['local'] }}", False),
        ("step", "maybe", False),
        ("job", "2", False),
    ],
)
def test_a_hard_coded_env_that_contradicts_the_flag_fails_with_file_and_line(
    tmp_path: Path, sg: Sg, where: str, value: str, fails: bool
) -> None:
    indent = {"workflow": "", "job": "    ", "step": "        "}[where]
    anchor = {"workflow": "jobs:\n", "job": "    steps:\n", "step": "      - run: ci/build.sh\n"}
    block = f"{indent}env:\n{indent}  OTHER: x\n{indent}  BUILD_LOCAL: {value}\n"
    workflow = WORKFLOW.replace(
        "    env:\n      BUILD_LOCAL: ${{ fromJSON(needs.gate.outputs.flags)['local'] }}\n", ""
    )
    if where == "step":
        workflow = workflow.replace(anchor[where], anchor[where] + block)
    else:
        workflow = workflow.replace(anchor[where], block + anchor[where], 1)
    top = make(tmp_path, {**WIRED, ".github/workflows/build.yml": workflow})
    code, findings = check(sg, top, "--stage", "1")
    if not fails:
        assert (code, findings) == (0, [])
        return
    line = next(i for i, text in enumerate(workflow.splitlines(), 1) if "BUILD_LOCAL:" in text)
    assert code == 1
    assert len(findings) == 1
    assert (findings[0]["file"], findings[0]["line"]) == (".github/workflows/build.yml", line)
    assert findings[0]["message"].startswith(
        ".github/workflows/build.yml: BUILD_LOCAL is hard-coded to "
    )
    shown = {"FALSE": "false", "0": "0", "false": "false"}.get(value, value.replace("'", '"'))
    assert f"hard-coded to {shown}, but flag local is true at stage 1;" in findings[0]["message"]
    assert (
        "but flag local is true at stage 1; read it from stagegate instead"
        in findings[0]["message"]
    )


def test_a_hard_coded_literal_fails_only_where_it_disagrees(tmp_path: Path, sg: Sg) -> None:
    workflow = WORKFLOW + "env:\n  BUILD_LOCAL: 'false'\n  BUILD_DOCS: true\n"
    invariant = MIGRATION + "invariants:\n  - check: flags-wired\n"
    top = make(
        tmp_path,
        {**WIRED, ".github/workflows/build.yml": workflow},
        migration=invariant,
        stages=(STAGE_1.replace("acceptance:\n  - check: flags-wired\n", ""),),
    )
    result = sg("check", "--all", "--format", "json", cwd=top)
    assert result.code == 1
    by_stage = {
        r["stage"]: [f["message"].split(" is hard-coded")[0] for f in r["findings"]]
        for r in json.loads(result.out)["results"]
    }
    assert by_stage == {
        0: [".github/workflows/build.yml: BUILD_DOCS"],
        1: [".github/workflows/build.yml: BUILD_LOCAL", ".github/workflows/build.yml: BUILD_DOCS"],
    }


def test_workflows_are_read_only_where_github_reads_them(tmp_path: Path, sg: Sg) -> None:
    hard = "env:\n  BUILD_LOCAL: 'false'\n"
    files = {
        **WIRED,
        ".github/workflows/other.yaml": WORKFLOW + hard,
        ".github/workflows/nested/deep.yml": WORKFLOW + hard,
        ".github/workflows/readme.txt": hard,
        "ci/workflow.yml": hard,
    }
    top = make(tmp_path, files)
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert [f["file"] for f in findings] == [".github/workflows/other.yaml"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("jobs: [\n", "invalid YAML"),
        ("env: {a: 1, a: 2}\n", "duplicate key 'a'"),
        ("a: !!python/object:os.system x\n", "YAML tag !!python/object:os.system is not allowed"),
        ("- just\n- a list\n", "it must hold a YAML mapping"),
        ("", "the file is empty"),
        ("\xff\xfe", None),
    ],
)
def test_a_workflow_that_cannot_be_read_is_a_located_finding(
    tmp_path: Path, sg: Sg, text: str, message: str | None
) -> None:
    top = make(tmp_path, WIRED, commit=False)
    path = top / ".github" / "workflows" / "broken.yml"
    if message is None:
        path.write_bytes(b"env:\n  X: \xff\n")
        message = "not valid UTF-8"
    else:
        path.write_text(text)
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert len(findings) == 1
    assert findings[0]["file"] == ".github/workflows/broken.yml"
    assert findings[0]["message"].startswith(
        ".github/workflows/broken.yml: cannot read this workflow ("
    )
    assert message in findings[0]["message"]


def test_a_workflow_of_odd_shape_is_no_crash(tmp_path: Path, sg: Sg) -> None:
    """A workflow GitHub would refuse (a job that is a number) is read as far as the
    workflow model reads it: a finding at the place it stops, as for broken YAML, never
    a crash; the same odd values in shapes GitHub takes hard-code nothing."""
    odd = "on: push\nenv: [BUILD_LOCAL]\njobs:\n  a: 1\n  b:\n    env: x\n    steps: {x: 1}\n  c:\n    steps: [1, {env: [1]}, {env: {BUILD_LOCAL: [false]}}]\n"
    top = make(tmp_path, {**WIRED, ".github/workflows/odd.yml": odd})
    code, findings = check(sg, top, "--stage", "1")
    assert (code, [(f["file"], f["line"], f["message"]) for f in findings]) == (
        1,
        [
            (
                ".github/workflows/odd.yml",
                4,
                ".github/workflows/odd.yml: cannot read this workflow (job a must be a mapping "
                "(key: value); fix the workflow.), so flags-wired cannot tell what its env: "
                "sets; fix it.",
            )
        ],
    )
    harmless = "on: push\nenv: [BUILD_LOCAL]\njobs:\n  c:\n    env: x\n    steps: [{env: [1]}, {env: {BUILD_LOCAL: [false]}}]\n"
    top = make(tmp_path / "harmless", {**WIRED, ".github/workflows/odd.yml": harmless})
    assert check(sg, top, "--stage", "1") == (0, [])


def test_a_workflow_that_is_a_symbolic_link_or_deleted_is_skipped(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, {**WIRED, "elsewhere.yml": "env:\n  BUILD_LOCAL: 'false'\n"}, commit=False)
    (top / ".github" / "workflows" / "link.yml").symlink_to(top / "elsewhere.yml")
    (top / ".github" / "workflows" / "gone.yml").write_text("env:\n  BUILD_LOCAL: 'false'\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    (top / ".github" / "workflows" / "gone.yml").unlink()
    assert check(sg, top, "--stage", "1") == (0, [])


def test_the_migration_in_a_subfolder_reads_the_workflows_at_the_top(
    tmp_path: Path, sg: Sg
) -> None:
    top = tmp_path / "mono"
    make(top, {}, commit=False)  # the migration in mono/repo
    (top / ".github" / "workflows").mkdir(parents=True)
    (top / ".github" / "workflows" / "b.yml").write_text("env:\n  BUILD_LOCAL: 'false'\n")
    (top / "ci.sh").write_text("echo $USE_LOCAL $BUILD_LOCAL\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    code, findings = check(sg, top / "repo", "--stage", "1")
    assert code == 1
    # named from the current folder, as every location is
    assert [(f["file"], f["line"]) for f in findings] == [("../.github/workflows/b.yml", 2)]
    code, findings = check(sg, top, "-f", "repo/migration.yaml", "--stage", "1")
    assert [(f["file"], f["line"]) for f in findings] == [(".github/workflows/b.yml", 2)]


def test_outside_a_git_repository_is_exit_3(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, WIRED, commit=False)
    result = sg("check", "--stage", "1", cwd=top)
    assert result.code == 3, result.output


def test_flags_wired_takes_no_arguments(tmp_path: Path, sg: Sg) -> None:
    stage = STAGE_1.replace("- check: flags-wired\n", "- check: flags-wired\n    flag: local\n")
    top = make(tmp_path, WIRED, stages=(stage,))
    result = sg("validate", cwd=top)
    assert result.code == 2
    assert "stages/01-step.yaml:8:5: $.acceptance[0].flag: unknown key 'flag'" in result.err


# --------------------------------------------------------------------------- the audit


def test_the_audit_lists_a_stale_flags_env_among_its_references(tmp_path: Path, sg: Sg) -> None:
    top = make(tmp_path, WIRED)
    result = sg("audit", "--stage", "1", "--format", "json", cwd=top)
    assert result.code == 0, result.output
    stale = {s["flag"]: s for s in json.loads(result.out)["stale_flags"]}
    places = [(r["file"], r["text"]) for r in stale["local"]["references"]]
    assert places == [
        (
            ".github/workflows/build.yml",
            "      BUILD_LOCAL: ${{ fromJSON(needs.gate.outputs.flags)['local'] }}",
        ),
        ("ci/build.sh", 'if [ "$USE_LOCAL" = 1 ]; then make local; fi'),
    ]
    text = sg("audit", "--stage", "1", cwd=top).out
    assert "USE_LOCAL, BUILD_LOCAL" in text


def test_a_flip_the_migration_is_past_may_lose_its_readers_once_the_flag_is_settled(
    tmp_path: Path, sg: Sg
) -> None:
    """The audit calls a stale flag's conditionals removable; removing them must not fail
    the stage that flipped it, whose definition can no longer change."""
    again = (
        "stage: 3\ntitle: Off again\nset:\n  local: false\nacceptance:\n  - check: flags-wired\n"
    )
    at_2 = MIGRATION.replace("stage: 0\n", "stage: 2\n", 1)
    top = make(tmp_path, {"ci/other.sh": "echo\n"}, migration=at_2, stages=(STAGE_1, STAGE_2))
    result = sg("check", "--stage", "1", cwd=top)
    assert result.code == 0, result.output
    assert "local settled (stage 2 is past this flip and the flag no longer changes" in result.out
    # while the stage is ahead or current, or the flag still changes later, it is required
    for migration, stages in (
        (MIGRATION, (STAGE_1, STAGE_2)),
        (MIGRATION.replace("stage: 0\n", "stage: 1\n", 1), (STAGE_1, STAGE_2)),
        (at_2, (STAGE_1, STAGE_2, again)),
    ):
        (top / "migration.yaml").write_text(migration)
        for number, body in enumerate(stages, start=1):
            (top / "stages" / f"{number:02d}-step.yaml").write_text(body)
        code, findings = check(sg, top, "--stage", "1")
        assert code == 1
        assert "'USE_LOCAL' and env 'BUILD_LOCAL' are in no file git tracks" in str(findings)


def test_a_regex_reference_counts_where_it_matches(tmp_path: Path, sg: Sg) -> None:
    migration = MIGRATION.replace(
        "references: [USE_LOCAL]", "references: [{regex: 'USE_LOCAL(?!_OLD)'}]"
    )
    files = {".github/workflows/build.yml": NO_ENV, "ci/build.sh": "echo $USE_LOCAL_OLD\n"}
    top = make(tmp_path, files, migration=migration)
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert (
        "its reference {regex: USE_LOCAL(?!_OLD)} and env 'BUILD_LOCAL' are in no file git tracks"
        in findings[0]["message"]
    )
    (top / "ci" / "build.sh").write_text("echo $USE_LOCAL\n")
    git(top, "add", "-A")
    assert check(sg, top, "--stage", "1") == (0, [])


def test_a_composite_action_that_hard_codes_a_flag_fails_too(tmp_path: Path, sg: Sg) -> None:
    action = (
        "name: build\nruns:\n  using: composite\n  steps:\n"
        "    - run: make\n      shell: bash\n      env:\n        BUILD_LOCAL: 'false'\n"
    )
    top = make(tmp_path, {**WIRED, ".github/actions/build/action.yml": action})
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert [(f["file"], f["line"]) for f in findings] == [(".github/actions/build/action.yml", 8)]


def test_workflows_paths_name_the_files_read(tmp_path: Path, sg: Sg) -> None:
    hard = "env:\n  BUILD_LOCAL: 'false'\n"
    migration = MIGRATION + 'workflows:\n  paths: ["ci/*.yml"]\n'
    files = {**WIRED, "ci/pipeline.yml": hard, ".github/workflows/other.yml": hard}
    top = make(tmp_path, files, migration=migration)
    code, findings = check(sg, top, "--stage", "1")
    assert code == 1
    assert [f["file"] for f in findings] == ["ci/pipeline.yml"]
