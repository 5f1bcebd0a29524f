"""Everyday use (#16): installs where users run it, finds its file, streams, reads right."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, Result

Sg = Callable[..., Result]


def _pyproject() -> Any:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_has_a_name_of_its_own_and_runs_every_check_kind() -> None:
    project = _pyproject()["project"]
    # `stagegate` on PyPI is someone else's scheduler; the command stays `stagegate`
    assert project["name"] == "stagegate-ci"
    assert project["scripts"] == {"stagegate": "stagegate._console:main"}
    runtime = {re.split(r"[<>=!~ \[]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    assert {"pytest", "pytest-snapshot"} <= runtime


def test_no_hint_or_doc_installs_the_other_projects_name() -> None:
    files = [REPO / "README.md", REPO / "action.yml", REPO / ".pre-commit-hooks.yaml"]
    files += sorted((REPO / "docs").rglob("*.md")) + sorted((REPO / "src").rglob("*.py"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"pip install[^\n]*['\" ]stagegate(\[|['\" \n]|$)", text), path
        assert "stagegate[" not in text, path


def test_the_hooks_need_no_extra_dependencies() -> None:
    for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")):
        assert "additional_dependencies" not in hook, hook["id"]


def test_readme_first_commands_and_ci_run_the_same_suite() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert "stagegate status" in block[0] and "stagegate check" in block[0]
    assert block[0].startswith("python3 -m venv .venv && .venv/bin/pip install -q -e . ")
    assert block[1].endswith(".venv/bin/python -m pytest -q")
    assert block[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- which file

SMALL = """\
version: 1
migration: demo
summary: Small.
stage: 0
flags:
  on:
    summary: A flag.
producers:
  p:
    summary: Makes x.
    artifacts: [x]
"""
STAGE = "stage: 1\ntitle: Turn it on\nset:\n  on: true\n"


def small(root: Path, where: str = "") -> Path:
    folder = root / where if where else root
    (folder / "stages").mkdir(parents=True)
    (folder / "migration.yaml").write_text(SMALL)
    (folder / "stages" / "01-on.yaml").write_text(STAGE)
    return folder / "migration.yaml"


VALID = "valid: 1 stage file, 1 flag, 1 producer, 0 consumers, 0 releases"


@pytest.mark.parametrize(
    "args",
    [
        ("-f", "ci/migration.yaml", "validate"),
        ("validate", "-f", "ci/migration.yaml"),
        ("validate", "--file", "ci/migration.yaml", "--format", "text"),
        ("validate", "--file=ci/migration.yaml"),
        ("status", "-f", "ci/migration.yaml"),
    ],
    ids=["before", "after", "after-long", "equals", "status"],
)
def test_file_option_before_or_after_the_command(
    tmp_path: Path, sg: Sg, args: tuple[str, ...]
) -> None:
    small(tmp_path, "ci")
    result = sg(*args, cwd=tmp_path)
    assert result.code == 0, result.output
    assert "ci/migration.yaml" in result.out or "demo: stage 0 of 1" in result.out


def test_pre_commit_args_name_the_file(tmp_path: Path, sg: Sg) -> None:
    """`args: [-f, ci/migration.yaml]` is appended to each hook's entry, after the command."""
    small(tmp_path, "ci")
    for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")):
        _program, *command = hook["entry"].split()
        result = sg(*command, "-f", "ci/migration.yaml", cwd=tmp_path)
        assert result.code == 0, (hook["id"], result.output)


def test_stagegate_file_names_the_file_and_f_wins(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    small(tmp_path, "ci")
    monkeypatch.setenv("STAGEGATE_FILE", "ci/migration.yaml")
    assert f"ci/migration.yaml: {VALID}" in sg("validate", cwd=tmp_path).out
    result = sg("validate", "-f", "nowhere.yaml", cwd=tmp_path)
    assert result.code == 2 and "nowhere.yaml: no such file" in result.err


def test_the_file_is_found_above_the_current_folder_up_to_the_repository_root(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    small(tmp_path, "repo")
    (tmp_path / "repo" / ".git").mkdir()
    deep = tmp_path / "repo" / "stages" / "deeper"
    deep.mkdir()
    result = sg("validate", cwd=deep)
    assert result.code == 0, result.output
    assert result.out.startswith(f"../../migration.yaml: {VALID}")
    assert "demo: stage 0 of 1" in sg("status", cwd=tmp_path / "repo" / "stages").out


def test_the_search_stops_at_the_repository_root(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration.yaml above the repository is another project's: never picked up."""
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    small(tmp_path)
    inner = tmp_path / "other-repo" / "src"
    inner.mkdir(parents=True)
    (tmp_path / "other-repo" / ".git").mkdir()
    result = sg("status", cwd=inner)
    assert result.code == 2
    assert result.err.startswith("migration.yaml: no such file; run stagegate in the folder")
    assert f"or set $STAGEGATE_FILE); looked in {inner} and the folders above it" in result.err


def test_outside_a_repository_only_the_current_folder_counts(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    small(tmp_path)
    assert sg("status", cwd=tmp_path).code == 0
    if not any((p / ".git").exists() for p in tmp_path.parents):
        assert sg("status", cwd=tmp_path / "stages").code == 2


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(sg: Sg, flag: str) -> None:
    from stagegate import __version__

    result = sg(flag)
    assert result.code == 0 and result.out == f"stagegate, version {__version__}\n"


def _complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    script = Path(sys.executable).with_name("stagegate")
    proc = subprocess.run(
        [str(script)],
        env={
            **os.environ,
            "_STAGEGATE_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
            **(env or {}),
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines()]


def _complete_here(
    words: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """What ``_complete`` asks the console script, asked of the CLI in this process
    (``cli.run``, with the environment the shell gives the script): the script's own
    process is asked below, each further one cost ~0.1 CPU-s."""
    from stagegate.cli import run

    with monkeypatch.context() as env:
        env.setenv("_STAGEGATE_COMPLETE", "bash_complete")
        env.setenv("COMP_WORDS", words)
        env.setenv("COMP_CWORD", str(len(words.split()) - (0 if words.endswith(" ") else 1)))
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:  # click ends a completion with sys.exit
            run([])
    out, err = capsys.readouterr()
    assert done.value.code == 0, err
    return [line.split(",", 1)[1] for line in out.splitlines()]


def test_shell_completion_works_as_documented(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "validate" in _complete_here("stagegate val", monkeypatch, capsys)
    assert {"--stage", "--all", "--format"} <= set(
        _complete_here("stagegate check --", monkeypatch, capsys)
    )
    assert "--file" in _complete_here("stagegate --", monkeypatch, capsys)
    assert _complete("stagegate check --format ") == ["text", "json", "github"]
    doc = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    assert 'eval "$(_STAGEGATE_COMPLETE=bash_source stagegate)"' in doc
    source = subprocess.run(
        [str(Path(sys.executable).with_name("stagegate"))],
        env={**os.environ, "_STAGEGATE_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert "_stagegate_completion" in source.stdout


# --------------------------------------------------------------------------- streaming


def staged(root: Path, *acceptance: str) -> Path:
    """SMALL with one stage per ``acceptance`` (YAML list items under acceptance:)."""
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(
        SMALL + "invariants:\n  - check: unique-artifacts\n", encoding="utf-8"
    )
    for number, checks in enumerate(acceptance, start=1):
        (root / "stages" / f"{number:02d}-s{number}.yaml").write_text(
            f"stage: {number}\ntitle: Stage {number}\nacceptance:\n{checks}", encoding="utf-8"
        )
    return root


def command(code: str, timeout: int = 60) -> str:
    return f"  - check: command\n    run: [{json.dumps(sys.executable)}, -c, {json.dumps(code)}]\n    timeout: {timeout}\n"


PASS = command("pass")
FAIL = command("raise SystemExit(3)")
DURATION = re.compile(r" \(\d+\.\d\d s\)$")


def test_check_all_prints_its_first_stage_before_the_first_pytest_run_finishes(
    tmp_path: Path,
) -> None:
    """The stage-1 pytest run waits for a file that the test writes only once it has read
    stage 0's lines: were the output held back to the end, this would time out."""
    staged(tmp_path, "  - check: pytest\n")
    tests = tmp_path / "stages" / "01-s1"
    tests.mkdir()
    (tests / "test_wait.py").write_text(
        "import pathlib, time\n\n"
        "def test_waits_for_the_reader():\n"
        "    go = pathlib.Path(__file__).parents[2] / 'go'\n"
        "    deadline = time.monotonic() + 60\n"
        "    while not go.exists():\n"
        "        assert time.monotonic() < deadline, 'nobody read stage 0 in time'\n"
        "        time.sleep(0.02)\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("stagegate")), "check", "--all"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "STAGEGATE_NO_CACHE": "1"},
    )
    assert proc.stdout is not None
    seen = [proc.stdout.readline(), proc.stdout.readline(), proc.stdout.readline()]
    (tmp_path / "go").touch()
    rest, err = proc.communicate(timeout=120)
    assert seen[0] == "stage 0: before the migration\n"
    assert seen[1].startswith("  ok    unique-artifacts: ") and DURATION.search(seen[1].rstrip())
    assert seen[2] == "stage 1: Stage 1\n"
    assert proc.returncode == 0, rest + err
    assert rest.splitlines()[-1] == "3 checks at 2 stages: all passed"


def test_each_check_line_shows_its_duration(tmp_path: Path, sg: Sg) -> None:
    staged(tmp_path, command("import time; time.sleep(0.3)"))
    result = sg("check", "--stage", "1", cwd=tmp_path)
    assert result.code == 0, result.output
    line = next(x for x in result.out.splitlines() if "command" in x)
    seconds = float(re.search(r"\((\d+\.\d\d) s\)$", line).group(1))  # type: ignore[union-attr]
    assert 0.3 <= seconds < 30


def test_a_long_check_says_it_is_still_running_in_a_log(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stagegate.report import live

    monkeypatch.setattr(live, "HEARTBEAT_SECONDS", 0.2)
    staged(tmp_path, command("import time; time.sleep(0.9)"))
    result = sg("check", "--stage", "1", cwd=tmp_path)
    assert result.code == 0, result.output
    lines = result.out.splitlines()
    beats = [x for x in lines if "still running" in x]
    assert beats[0].startswith("  ..    stage 1: command timeout=60: ") and beats[0].endswith(
        "still running after 0.20 s"
    )
    assert 2 <= len(beats) <= 5
    assert lines.index(beats[-1]) < next(
        i for i, x in enumerate(lines) if x.startswith("  ok    command")
    )
    assert "\r" not in result.out  # a log gets whole lines, never a redrawn one


def test_a_long_check_shows_a_live_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from stagegate.errors import Loc
    from stagegate.model import Check
    from stagegate.report import live
    from stagegate.validation import load

    monkeypatch.setattr(live, "LIVE_AFTER_SECONDS", 0.1)
    migration = load(REPO / "tests" / "cases" / "valid" / "valid-minimal" / "migration.yaml")
    written: list[str] = []
    probe = Check(kind="pytest", loc=Loc("migration.yaml", 1, 1))
    stream = live.Live(migration, written.append, tty=True)
    stream.stage_started(0)
    stream.check_started(0, probe)
    time.sleep(0.8)
    stream.check_finished(0, probe, [], 0.8)
    stream.close()
    text = "".join(written)
    assert f"{live.CLEAR}  " in text and ": running, 0." in text
    drawn = text.rfind(": running, ")
    assert text.rfind(live.CLEAR) > drawn  # erased before the next line is written
    assert text.endswith(f"{live.CLEAR}0 checks at 0 stages: all passed\n")


def test_fail_fast_stops_at_the_first_failure(tmp_path: Path, sg: Sg) -> None:
    staged(tmp_path, FAIL + PASS, PASS)
    result = sg("check", "--all", "--fail-fast", cwd=tmp_path)
    assert result.code == 1
    assert "stage 2:" not in result.out
    assert result.out.count("  ok    command") == 0
    assert result.out.splitlines()[-1] == (
        "3 checks at 2 stages: 1 failed; stopped at the first failure (--fail-fast), 3 not run"
    )
    without = sg("check", "--all", cwd=tmp_path)
    assert without.out.splitlines()[-1] == "6 checks at 3 stages: 1 failed"


def test_quiet_shows_failures_and_the_closing_line_only(tmp_path: Path, sg: Sg) -> None:
    staged(tmp_path, PASS, PASS + FAIL)
    passing = sg("check", "--stage", "1", "--quiet", cwd=tmp_path)
    assert passing.code == 0 and passing.out == "2 checks at stage 1: all passed\n"
    failing = sg("check", "--all", "-q", cwd=tmp_path).out.splitlines()
    assert failing[0] == "stage 2: Stage 2"
    assert failing[1].startswith("  FAIL  command")
    assert not any(line.startswith("  ok") for line in failing)
    assert failing[-1] == "6 checks at 3 stages: 1 failed"


def test_json_is_still_one_object_at_the_end(tmp_path: Path, sg: Sg) -> None:
    staged(tmp_path, PASS + FAIL)
    result = sg("check", "--all", "--format", "json", cwd=tmp_path)
    assert result.code == 1
    report = json.loads(result.out)  # the whole of standard output, nothing streamed into it
    assert [r["ok"] for r in report["results"]] == [True, True, True, False]
    assert result.err == ""


# --------------------------------------------------------------------------- validate: all at once

NEWCOMER = """\
version: 1
migration: newcomer
summary: A first migration.
stage: 1
flags:
  new-build:
    summary: Build the new way.
  old-build:
    summary: Build the old way.
    default: true
axes:
  py: ["311", "312"]
producers:
  old:
    summary: The old wheels.
    when: old-build
    artifacts: ["pkg-old-{py}"]
    colour: blue
  new:
    summary: The new wheels.
    when: new-build && not old-build
    artifacts: ["pkg-new-{py}"]
consumers:
  tests:
    summary: Tests the wheels.
    inputs:
      - select: "pkg-*-{py}"
        from: [olde]
releases:
  pkg:
    summary: Publishes.
    tags: ["v*"]
    select: ["pkg-*"]
"""
NEWCOMER_STAGE = """\
stage: 1
title: New build
set:
  new-build: yes
acceptance:
  - check: release-continuity
    tag: v1.0
    since: 9
"""


def _producer_keys() -> list[str]:
    from stagegate.validation import schema

    return list(
        schema("migration")["properties"]["producers"]["additionalProperties"]["properties"]
    )


def newcomer(root: Path, text: str = NEWCOMER, stage: str = NEWCOMER_STAGE) -> Path:
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(text, encoding="utf-8")
    (root / "stages" / "01-new.yaml").write_text(stage, encoding="utf-8")
    return root


def test_one_validate_run_lists_every_problem_of_a_newcomers_files(tmp_path: Path, sg: Sg) -> None:
    result = sg("validate", cwd=newcomer(tmp_path))
    assert result.code == 2
    assert result.err.splitlines() == [
        "migration.yaml:18:5: $.producers.old.colour: unknown key 'colour'; expected one of: "
        + ", ".join(sorted(_producer_keys())),
        "migration.yaml:21:21: $.producers.new.when: unexpected character '&'; expressions use "
        "flag names, not, and, or, true, false and parentheses.",
        "migration.yaml:28:16: $.consumers.tests.inputs[0].from[0]: unknown producer 'olde'; "
        "did you mean 'old'?",
        "stages/01-new.yaml:4:14: $.set.new-build: must be true or false, not 'yes'; stagegate "
        "reads YAML 1.2, where only true and false are booleans: write true",
        "stages/01-new.yaml:6:5: release-continuity since: 9 is beyond the last stage (1); use 0..1.",
        "5 problems found; fix them and run `stagegate validate`.",
    ]
    report = json.loads(sg("validate", "--format", "json", cwd=tmp_path).out)
    assert len(report["problems"]) == 5


def test_a_file_that_does_not_parse_still_has_its_stage_files_checked(
    tmp_path: Path, sg: Sg
) -> None:
    newcomer(tmp_path, NEWCOMER.replace('["pkg-old-{py}"]', "[pkg-old-{py}]"))
    lines = sg("validate", cwd=tmp_path).err.splitlines()
    assert lines[0].startswith("migration.yaml:17:") and "invalid YAML" in lines[0]
    assert lines[1].startswith("stages/01-new.yaml:4:14: $.set.new-build: must be true or false")
    assert lines[-1] == "2 problems found; fix them and run `stagegate validate`."


def test_what_a_refused_part_names_is_not_reported_twice(tmp_path: Path, sg: Sg) -> None:
    """A producer without artifacts is refused; a `from` naming it is not also 'unknown'.
    A flag with a bad key is refused; the `when` reading it does not become 'unknown flag'."""
    text = (
        NEWCOMER.replace('    artifacts: ["pkg-old-{py}"]\n', "")
        .replace("    colour: blue\n", "")
        .replace("from: [olde]", "from: [old]")
        .replace("new-build && not old-build", "new-build and not old-build")
        .replace("    default: true\n", "    default: maybe\n")
    )
    stage = NEWCOMER_STAGE.replace("yes", "true").replace("    since: 9\n", "")
    lines = sg("validate", cwd=newcomer(tmp_path, text, stage)).err.splitlines()
    assert len(lines) == 3, lines
    assert "$.flags.old-build.default: must be true or false, not 'maybe'" in lines[0]
    assert "$.producers.old: missing required key 'artifacts'; add it." in lines[1]


def test_a_stage_file_that_does_not_parse_keeps_the_numbering(tmp_path: Path, sg: Sg) -> None:
    newcomer(tmp_path, NEWCOMER.replace("stage: 1\n", "stage: 2\n", 1))
    (tmp_path / "stages" / "02-next.yaml").write_text(
        NEWCOMER_STAGE.replace("stage: 1", "stage: 2")
    )
    (tmp_path / "stages" / "01-new.yaml").write_text("stage: 1\ntitle: [unclosed\n")
    lines = sg("validate", cwd=tmp_path).err.splitlines()
    assert not any("beyond the last stage (1)" in line for line in lines), lines
    assert any("since: 9 is beyond the last stage (2)" in line for line in lines), lines


# --------------------------------------------------------------------------- GitHub output

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

RELEASING = """\
version: 1
migration: releasing
summary: Two producers, one release.
stage: 0
axes:
  py: ["311", "312"]
flags:
  local:
    summary: Build the 12 wheels here.
producers:
  p13:
    summary: The 13 wheels.
    artifacts: ["pkg-13-{py}"]
  p12:
    summary: The 12 wheels.
    when: local
    artifacts:
      - "pkg-12-{py}"
releases:
  rel13:
    summary: Publishes 13.
    tags: ["v13.*"]
    select:
      - "pkg-13-*"
invariants:
  - check: release-continuity
    tag: v13.0.0
"""
RELEASING_STAGE = "stage: 1\ntitle: Local 12 wheels\nset:\n  local: true\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def pull_request(root: Path, old: str, new: str) -> None:
    """A repository on `main` with RELEASING, and a checked-out branch that changes it."""
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(RELEASING, encoding="utf-8")
    (root / "stages" / "01-local.yaml").write_text(RELEASING_STAGE, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "pr")
    (root / "migration.yaml").write_text(RELEASING.replace(old, new), encoding="utf-8")
    git(root, "commit", "-q", "-am", "the change")


def annotations(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::error")]


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ('      - "pkg-13-*"', '      - "pkg-*"', '      - "pkg-*"'),  # the widened glob
        ('      - "pkg-12-{py}"', '      - "pkg-13-{py}-x"', '      - "pkg-13-{py}-x"'),
    ],
    ids=["widened-glob", "renamed-template"],
)
def test_annotations_land_on_the_line_the_pull_request_changed(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch, old: str, new: str, where: str
) -> None:
    pull_request(tmp_path, old, new)
    changed = (tmp_path / "migration.yaml").read_text().splitlines().index(where) + 1
    untouched = sg("check", "--stage", "1", "--format", "github", cwd=tmp_path)
    assert untouched.code == 1
    lines_without = {a.split("line=")[1].split(",")[0] for a in annotations(untouched.out)}
    assert str(changed) not in lines_without  # without the base: the culprit's key line
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    result = sg("check", "--stage", "1", "--format", "github", cwd=tmp_path)
    assert result.code == 1
    found = annotations(result.out)
    assert found and all(f"file=migration.yaml,line={changed},col=7," in a for a in found), found


def test_verify_pr_annotates_the_changed_line_too(tmp_path: Path, sg: Sg) -> None:
    pull_request(tmp_path, '      - "pkg-13-*"', '      - "pkg-*"')
    (tmp_path / "migration.yaml").write_text(
        (tmp_path / "migration.yaml").read_text().replace("stage: 0", "stage: 1")
    )
    git(tmp_path, "commit", "-q", "-am", "flip")
    result = sg("verify-pr", "--base", "main", "--format", "github", cwd=tmp_path)
    assert result.code == 1
    glob_line = (tmp_path / "migration.yaml").read_text().splitlines().index('      - "pkg-*"') + 1
    found = [a for a in annotations(result.out) if "release-continuity" in a]
    assert found and all(f"line={glob_line}," in a for a in found), result.out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("check", "--stagee", "1"),
            "::error title=stagegate check::No such option '--stagee'. Did you mean '--stage'?",
        ),
        (("check", "--stage", "9"), "::error title=stagegate check::stage 9 does not exist;"),
        (("status", "-f", "nowhere.yaml"), "::error title=stagegate status::nowhere.yaml: no such"),
    ],
)
def test_usage_errors_are_annotated_in_github_format(
    tmp_path: Path, sg: Sg, args: tuple[str, ...], expected: str
) -> None:
    small(tmp_path)
    result = sg(*args, "--format", "github", cwd=tmp_path)
    assert result.code == 2
    assert result.out == ""  # standard output may be data: the annotation is beside the message
    assert result.err.startswith(expected), result.err
    plain = sg(*args, cwd=tmp_path)
    assert "::error" not in plain.output


def test_invalid_input_is_annotated_at_each_problem_in_github_format(
    tmp_path: Path, sg: Sg
) -> None:
    newcomer(tmp_path)
    result = sg("check", "--format", "github", cwd=tmp_path)
    assert result.code == 2
    found = annotations(result.err)
    assert len(found) == 5
    assert found[0].startswith("::error file=migration.yaml,line=18,col=5,title=stagegate check::")
    assert found[-1].startswith("::error file=stages/01-new.yaml,line=6,col=5,")


def test_step_summary_puts_failures_first_folds_passes_links_and_escapes(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    pull_request(tmp_path, '      - "pkg-13-*"', '      - "pkg-*"')
    text = (tmp_path / "migration.yaml").read_text()
    (tmp_path / "migration.yaml").write_text(text.replace('"pkg-12-{py}"', '"pkg-12-`{py}`"'))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.example")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    monkeypatch.setenv("GITHUB_SHA", "0123abcd")
    assert sg("check", "--all", "--format", "github", cwd=tmp_path).code == 1
    written = summary.read_text()
    failing, folded = written.split("<details>", 1)
    assert "**fail**" in failing and "| pass |" not in failing
    assert folded.startswith("<summary>1 check passed</summary>")
    assert "| pass |" in folded and "**fail**" not in folded
    p12 = RELEASING.splitlines().index("  p12:") + 1
    assert (
        f"[migration.yaml:{p12}](https://github.example/org/repo/blob/0123abcd/migration.yaml#L{p12})"
        in failing
    )
    assert "pkg-12-\\`{py}\\` (e.g. pkg-12-\\`311\\`)" in failing  # no code span
    assert "glob 'pkg-\\*'" in failing


# --------------------------------------------------------------------------- wording


def test_counts_agree_with_their_nouns(tmp_path: Path, sg: Sg) -> None:
    small(tmp_path)
    (tmp_path / "migration.yaml").write_text(
        SMALL.replace("    artifacts: [x]\n", '    artifacts: ["x-{py}"]\n')
        + 'axes:\n  py: ["311"]\nreleases:\n  r:\n    summary: R.\n    tags: ["v*"]\n    select: ["x-*"]\n'
    )
    assert "  active: 1 producer, 0 consumers, 1 release" in sg("status", cwd=tmp_path).out
    assert "x-{py}  [1 row: py=311]" in sg("plan", cwd=tmp_path).out


def test_one_problem_is_it(tmp_path: Path, sg: Sg) -> None:
    small(tmp_path)
    (tmp_path / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 5"))
    assert sg("validate", cwd=tmp_path).err.endswith(
        "\n1 problem found; fix it and run `stagegate validate`.\n"
    )


def test_a_timed_out_command_is_shown_so_that_it_can_be_pasted_back(tmp_path: Path, sg: Sg) -> None:
    staged(
        tmp_path,
        command("import time; time.sleep(30)", timeout=1).replace("timeout: 1", "timeout: 0.5"),
    )
    result = sg("check", "--stage", "1", cwd=tmp_path)
    assert result.code == 1
    shown = re.search(r"- `(.*)` did not finish within 0.5 s", result.out)
    assert shown is not None, result.out
    assert shlex.split(shown[1]) == [sys.executable, "-c", "import time; time.sleep(30)"]


def test_a_findings_location_is_not_repeated(tmp_path: Path, sg: Sg) -> None:
    pull_request(tmp_path, '      - "pkg-13-*"', '      - "pkg-*"')
    result = sg("check", "--stage", "1", cwd=tmp_path)
    assert result.code == 1
    p12 = RELEASING.splitlines().index("  p12:") + 1
    assert f"from producer p12 (migration.yaml:{p12})" in result.out
    assert f"at migration.yaml:{p12}" not in result.out


def test_log_in_a_shallow_clone_does_not_claim_the_file_was_created_there(
    tmp_path: Path, sg: Sg
) -> None:
    origin = tmp_path / "origin"
    small(origin)
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "create")
    (origin / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 1"))
    git(origin, "commit", "-q", "-am", "flip to 1")
    git(origin, "commit", "-q", "--allow-empty", "-m", "later")
    assert "migration.yaml: created at stage 0 in " in sg("log", cwd=origin).out
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", "shallow")
    out = sg("log", cwd=tmp_path / "shallow").out
    assert "created" not in out
    assert out.startswith("migration.yaml: at stage 1 in ")
    assert "where this shallow clone's history starts" in out.splitlines()[0]


# --------------------------------------------------------------------------- graph


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The worked example alone in a throwaway git repository."""
    import shutil

    root = tmp_path_factory.mktemp("example")
    shutil.copy2(REPO / "migration.yaml", root / "migration.yaml")
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "example")
    return root


GRAPHED = """\
version: 1
migration: graphed
summary: Two runs, three consumers, a release.
stage: 0
axes:
  py: ["311", "312"]
producers:
  a:
    summary: This run's wheels and tests.
    artifacts: ["a-{py}", "a-{py}-tests"]
  b:
    summary: Another run's wheels.
    run: other
    artifacts: ["b-{py}"]
consumers:
  all-of-a:
    summary: Takes every template of a.
    inputs:
      - select: "a-*"
  one:
    summary: Takes a's tests if there.
    inputs:
      - select: "a-{py}-tests"
        required: false
  from-b:
    summary: Takes b's wheels from its run.
    inputs:
      - select: "b-*"
        from: [b]
releases:
  rel:
    summary: Publishes a's wheels.
    tags: ["v*"]
    select: ["a-*[0-9]"]
"""


@pytest.fixture
def graphed(tmp_path: Path) -> Path:
    (tmp_path / "stages").mkdir()
    (tmp_path / "migration.yaml").write_text(GRAPHED, encoding="utf-8")
    return tmp_path


def test_graph_draws_producers_and_runs_as_boxes_with_row_counts_and_a_legend(
    graphed: Path, sg: Sg
) -> None:
    out = sg("graph", cwd=graphed).out.splitlines()
    assert '  subgraph p_a["a"]' in out
    assert '    a0[/"a-{py} · 2 rows"/]' in out and '    a1[/"a-{py}-tests · 2 rows"/]' in out
    assert '  subgraph run_other["run other"]' in out and '    subgraph p_b["b"]' in out
    assert "[run " not in "\n".join(out)  # no two nodes that differ only by a suffix
    assert "  p_a --> c_all_of_a" in out  # every template of a: one edge from its box
    assert "  a1 -.-> c_one" in out  # optional: dotted
    assert "  a0 ==> r_rel" in out  # released: thick
    assert "  a2 --> c_from_b" in out
    assert '  subgraph legend["legend"]' in out and "  releases ~~~ legend" in out
    assert "legend" not in sg("graph", "--no-legend", cwd=graphed).out


def test_graph_of_one_neighbourhood(graphed: Path, sg: Sg) -> None:
    one = sg("graph", "--consumer", "one", "--no-legend", cwd=graphed).out
    assert "c_one" in one and "c_all_of_a" not in one and "p_b" not in one
    assert '"a-{py}-tests · 2 rows"' in one and '"a-{py} · 2 rows"' not in one  # what it takes
    b = sg("graph", "--producer", "b", "--no-legend", cwd=graphed).out
    assert "p_b" in b and "c_from_b" in b and "p_a" not in b and "r_rel" not in b
    rel = sg("graph", "--release", "rel", "--format", "dot", cwd=graphed).out
    assert '"release:rel"' in rel and "consumer:" not in rel and '"artifact:a-{py}"' in rel
    both = sg("graph", "--release", "rel", "--consumer", "from-b", cwd=graphed).out
    assert "r_rel" in both and "c_from_b" in both and "c_one" not in both


def test_the_examples_graph_is_drawn_with_fewer_edges(example: Path, sg: Sg) -> None:
    out = sg("graph", "--stage", "4", "--no-legend", cwd=example).out
    assert '  subgraph run_12_9_x["run 12.9.x"]' in out and "[run " not in out
    assert re.search(
        r'\[/"cuda-bindings-python\{py\}-cuda[0-9.]+-\{platform\}-\{sha\} · \d+ rows"/\]', out
    )
    per_template = sg("graph", "--stage", "4", "--format", "dot", cwd=example).out.count(" -> ")
    drawn = len(re.findall(r"^  \S+ (?:-->|-\.->|==>) \S+$", out, re.MULTILINE))
    assert drawn < per_template  # arrows from producers' boxes stand for several


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--consumer", "doc"), "no consumer 'doc' in migration.yaml; did you mean 'docs'?"),
        (
            ("--producer", "bindings-cu12", "--stage", "0"),
            "producer bindings-cu12 is not active at stage 0",
        ),
    ],
)
def test_graph_refuses_an_item_it_cannot_draw(
    example: Path, sg: Sg, args: tuple[str, ...], message: str
) -> None:
    result = sg("graph", *args, cwd=example)
    assert result.code == 2 and message in result.err


def test_the_rendered_graph_is_in_the_docs() -> None:
    concepts = (REPO / "docs" / "concepts.md").read_text(encoding="utf-8")
    assert "![The artifact graph of the example at stage 4](images/graph-stage-4.png)" in concepts
    png = (REPO / "docs" / "images" / "graph-stage-4.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["validate", "-f", "a.yaml"], ["--file", "a.yaml", "validate"]),
        (["validate", "-fa.yaml"], ["--file", "a.yaml", "validate"]),
        (
            ["--traceback", "check", "--all", "--file=a.yaml"],
            ["--traceback", "--file=a.yaml", "check", "--all"],
        ),
        (["-f", "b.yaml", "check", "-f", "a.yaml"], ["-f", "b.yaml", "--file", "a.yaml", "check"]),
        (["check", "--", "-f", "a.yaml"], ["check", "--", "-f", "a.yaml"]),
        (["forceful", "-f"], ["forceful", "-f"]),  # its own -f (a --force) stays
        (["nosuch", "-f", "a.yaml"], ["nosuch", "-f", "a.yaml"]),  # click says what is wrong
    ],
)
def test_a_file_after_the_command_is_moved_before_it(args: list[str], expected: list[str]) -> None:
    import click

    from stagegate.cli import cli
    from stagegate.cli.options import hoist_file

    forceful = click.Command("forceful", params=[click.Option(["-f", "--force"], is_flag=True)])
    commands = {**cli.commands, "forceful": forceful}
    assert hoist_file(args, commands) == expected


def test_a_refused_check_does_not_hide_its_neighbours_problems(tmp_path: Path, sg: Sg) -> None:
    stage = NEWCOMER_STAGE.replace("yes", "true").replace(
        "acceptance:\n", "acceptance:\n  - check: release-continuity\n    tag: [v1.0]\n"
    )
    lines = sg("validate", cwd=newcomer(tmp_path, stage=stage)).err.splitlines()
    assert any(
        "stages/01-new.yaml:7:10: $.acceptance[0].tag: must be a string" in x for x in lines
    ), lines
    assert any(
        "stages/01-new.yaml:8:5: release-continuity since: 9 is beyond" in x for x in lines
    ), lines


def test_a_stage_title_in_the_pull_request_description_reads_as_written(
    tmp_path: Path, sg: Sg
) -> None:
    small(tmp_path)
    (tmp_path / "stages" / "01-on.yaml").write_text(
        STAGE.replace("Turn it on", "Use `new*` <b>wheels</b>")
    )
    body = tmp_path / "pr.md"
    assert sg("advance", "--dry-run", "--pr-body", str(body), cwd=tmp_path).code == 0
    text = body.read_text()
    assert text.startswith("## demo: stage 0 → 1: Use \\`new\\*\\` &lt;b&gt;wheels&lt;/b&gt;\n")
    assert "`new*`" not in text and "<b>" not in text


def test_verify_pr_and_advance_say_a_long_check_is_still_running(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stagegate.report import live

    monkeypatch.setattr(live, "HEARTBEAT_SECONDS", 0.2)
    staged(tmp_path, command("import time; time.sleep(0.9)"))
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    advanced = sg("advance", cwd=tmp_path)
    assert advanced.code == 0, advanced.output
    assert "  ..    stage 1: command timeout=60: still running after 0.20 s" in advanced.out
    git(tmp_path, "commit", "-q", "-am", "flip")
    verdict = sg("verify-pr", "--base", "HEAD~1", "--format", "json", cwd=tmp_path)
    assert verdict.code == 0, verdict.output
    json.loads(verdict.out)  # standard output is still the one object
    assert "still running after 0.20 s" in verdict.err


def test_annotations_land_on_the_changed_line_from_a_subfolder_too(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action's `working-directory`, or a checkout in a folder of the workspace."""
    pull_request(tmp_path / "repo" / "ci", '      - "pkg-13-*"', '      - "pkg-*"')
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    glob_line = RELEASING.replace('"pkg-13-*"', '"pkg-*"').splitlines().index('      - "pkg-*"') + 1
    result = sg(
        "check", "--stage", "1", "--format", "github", cwd=tmp_path / "repo" / "ci" / "stages"
    )
    found = annotations(result.out)
    assert found and all(
        f"file=repo/ci/migration.yaml,line={glob_line},col=7," in a for a in found
    ), found


def test_a_file_option_without_its_value_says_so(tmp_path: Path, sg: Sg) -> None:
    small(tmp_path)
    result = sg("validate", "-f", cwd=tmp_path)
    assert result.code == 2
    assert "option -f needs a value: the migration file, e.g. -f ci/migration.yaml." in result.err
