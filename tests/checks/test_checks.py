"""Every check kind passing and failing on small literal migrations, and the check formats."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO, Result
from stagegate.checks import kinds
from stagegate.testing import StageUnderTest

Sg = Callable[..., Result]

HEAD = """\
version: 1
migration: demo
summary: Checks under test.
stage: 0
axes:
  py: ["311", "312"]
  platform: [linux-64, win-64]
  sha: {pattern: "[0-9a-f]{40}"}
flags:
  local:
    summary: Build the CUDA 12 wheels in this run.
"""

STAGE_1 = """\
stage: 1
title: Local CUDA 12 wheels
set:
  local: true
"""


def repo(tmp_path: Path, body: str, *stages: str) -> Path:
    """A migration folder: HEAD + ``body``, and one stage file per ``stages`` entry."""
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(HEAD + textwrap.dedent(body))
    for number, text in enumerate(stages or (STAGE_1,), start=1):
        (root / "stages" / f"{number:02d}-step.yaml").write_text(textwrap.dedent(text))
    return root


def line_of(root: Path, needle: str, file: str = "migration.yaml") -> int:
    """The first line that starts (after indentation) with ``needle``."""
    lines = (root / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.strip().startswith(needle))


def stage_1(acceptance: str, set_local: bool = True) -> str:
    flip = "set:\n  local: true\n" if set_local else ""
    return f"stage: 1\ntitle: Step\n{flip}acceptance:\n{textwrap.dedent(acceptance)}"


def report(sg: Sg, root: Path, *args: str) -> dict[str, object]:
    result = sg("check", *args, "--format", "json", cwd=root)
    data = json.loads(result.out)
    assert isinstance(data, dict)
    return data


PRODUCERS = """\
producers:
  cu13:
    artifacts:
      - "pkg-python{py}-cuda13-{platform}-{sha}"
      - "pkg-python{py}-cuda13-{platform}-{sha}-tests"
  cu12:
    when: local
    artifacts:
      - "pkg-python{py}-cuda12-{platform}-{sha}"
"""


def release_repo(tmp_path: Path, select: str, extra: str = "") -> Path:
    return repo(
        tmp_path,
        PRODUCERS
        + f"""\
releases:
  rel13:
    tags: ["v13.*"]
    select: ["{select}"]
    exclude: ["*-tests"]
{extra}invariants:
  - check: release-continuity
    tag: v13.0.0
""",
    )


# --------------------------------------------------------------------- release-continuity


def test_release_continuity_passes_when_the_selection_is_unchanged(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-python*-cuda13-*")
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output
    assert "release rel13 selects the same 4 artifact names as at stage 0" in result.out


def test_release_continuity_names_the_extra_rows_producer_glob_and_stage(
    tmp_path: Path, sg: Sg
) -> None:
    root = release_repo(tmp_path, "pkg-*")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        f"release rel13 (migration.yaml:{line_of(root, 'rel13:')}) now also selects all 4 rows of "
        "pkg-python{py}-cuda12-{platform}-{sha} (e.g. pkg-python311-cuda12-linux-64-{sha}) from "
        f"producer cu12 (migration.yaml:{line_of(root, 'cu12:')}), active since stage 1 (local); "
        "glob 'pkg-*'"
    ) in result.out
    assert f"(check declared at migration.yaml:{line_of(root, '- check:')})" in result.out


def test_release_continuity_names_what_is_no_longer_selected(tmp_path: Path, sg: Sg) -> None:
    root = repo(
        tmp_path,
        """\
        producers:
          old:
            when: not local
            artifacts: ["pkg-python{py}-{platform}-{sha}"]
        releases:
          rel:
            tags: ["v1.*"]
            select: ["pkg-*"]
        invariants:
          - check: release-continuity
            tag: v1.0
        """,
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        "no longer selects all 4 rows of pkg-python{py}-{platform}-{sha} "
        "(e.g. pkg-python311-linux-64-{sha}), which it selected at stage 0 from producer old; "
        f"producer old (migration.yaml:{line_of(root, 'old:')}) is off since stage 1 (local)"
    ) in result.out


def test_release_continuity_requires_exactly_one_claimant(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(
        tmp_path,
        "pkg-python*-cuda13-*",
        extra="""\
  rel13-too:
    when: local
    tags: ["v13.0.*"]
    select: ["pkg-python*-cuda13-*"]
""",
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        f"2 active releases claim v13.0.0 at stage 1 (rel13 (migration.yaml:{line_of(root, 'rel13:')}), "
        f"rel13-too (migration.yaml:{line_of(root, 'rel13-too:')})); exactly one must"
    ) in result.out


def test_release_continuity_expect_names_the_unexpected_producer(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-*", extra="    expect: [cu13]\n")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        "selects from producer cu12 (migration.yaml:"
        f"{line_of(root, 'cu12:')}), which is not in its expect (cu13), "
        "e.g. pkg-python311-cuda12-linux-64-{sha} via 'pkg-*'"
    ) in result.out


CONTROL = """\
producers:
  old:
    when: not local
    artifacts: [pkg-a, pkg-legacy]
  new:
    when: local
    artifacts: [pkg-a]
releases:
  rel-old:
    when: not local
    tags: ["v1.*"]
    select: [pkg-a]
  rel-new:
    when: local
    tags: ["v1.*"]
    select: ["pkg-*"]
    tooling: {tooling}
invariants:
  - check: release-continuity
    tag: v1.0
"""


def test_tooling_control_also_selects_from_runs_of_earlier_stages(tmp_path: Path, sg: Sg) -> None:
    """Today's `pkg-*` would also fetch pkg-legacy from a tag built at stage 0."""
    moved = (  # pkg-a now comes from producer new: the stage declares the move
        "stage: 1\ntitle: Step\nset:\n  local: true\nrelease_changes:\n"
        "  - tag: v1.0\n    drop: [pkg-a]\n    add: [pkg-a]\n"
    )
    passing = repo(tmp_path / "tag", CONTROL.format(tooling="tag"), moved)
    assert sg("check", "--all", cwd=passing).code == 0
    root = repo(tmp_path / "control", CONTROL.format(tooling="control"), moved)
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    assert (
        "with tooling: control, today's tooling run on a run built at stage 0: release rel-new "
        f"(migration.yaml:{line_of(root, 'rel-new:')}) now also selects pkg-legacy from producer "
        f"old (migration.yaml:{line_of(root, 'old:')}), active since stage 0; glob 'pkg-*'"
    ) in result.out


def test_release_continuity_since_compares_with_a_later_stage(tmp_path: Path, sg: Sg) -> None:
    root = repo(
        tmp_path,
        """\
        producers:
          old:
            when: not local
            artifacts: [pkg-old]
          new:
            when: local
            artifacts: [pkg-new]
        releases:
          rel:
            tags: ["v1.*"]
            select: ["pkg-*"]
        """,
        stage_1("  - check: release-continuity\n    tag: v1.0\n    since: 1\n"),
        "stage: 2\ntitle: Nothing changes\nacceptance:\n"
        "  - check: release-continuity\n    tag: v1.0\n    since: 1\n",
    )
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output
    assert "release rel selects the same 1 artifact name as at stage 1" in result.out


def test_release_continuity_since_beyond_the_last_stage_is_invalid(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-*")
    text = (root / "migration.yaml").read_text() + "    since: 4\n"
    (root / "migration.yaml").write_text(text)
    result = sg("check", cwd=root)
    assert result.code == 2
    assert "since: 4 is beyond the last stage (1); use 0..1." in result.err


# --------------------------------------------------------------------- consumers

CONSUMERS = """\
producers:
  branch12:
    when: not local
    run: branch
    artifacts: ["pkg-python{py}-cuda12-{platform}-{sha}"]
  local12:
    when: local
    artifacts: ["pkg-python{py}-cuda12-{linux}-{sha}"]
  cu13:
    artifacts: ["pkg-python{py}-cuda13-{platform}-{sha}"]
consumers:
  build12:
    inputs:
      - select: "pkg-python{py}-cuda12-{platform}-{sha}"
        from: [FROM]
invariants:
  - check: inputs-satisfied
  - check: single-source
"""


def consumers_repo(tmp_path: Path, source: str, linux: str = "[linux-64]") -> Path:
    body = CONSUMERS.replace("FROM", source)
    root = repo(tmp_path, body)
    text = (root / "migration.yaml").read_text()
    (root / "migration.yaml").write_text(text.replace("axes:\n", f"axes:\n  linux: {linux}\n", 1))
    return root


def test_inputs_satisfied_names_the_rows_left_without_a_producer(tmp_path: Path, sg: Sg) -> None:
    root = consumers_repo(tmp_path, "local12")
    result = sg("check", "--stage", "0", cwd=root)
    assert result.code == 1
    assert (
        f"consumer build12 (migration.yaml:{line_of(root, 'build12:')}): required input "
        f"'pkg-python{{py}}-cuda12-{{platform}}-{{sha}}' (migration.yaml:{line_of(root, '- select')}) "
        "selects nothing from the active producers of its from (local12) for py=311 platform=linux-64; "
        "py=311 platform=win-64; py=312 platform=linux-64; py=312 platform=win-64; "
        f"local12 (migration.yaml:{line_of(root, 'local12:')}) is off since stage 0"
    ) in result.out


def test_inputs_satisfied_fails_where_the_new_producer_misses_a_row(tmp_path: Path, sg: Sg) -> None:
    root = consumers_repo(tmp_path, "branch12, local12")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        "for py=311 platform=win-64; py=312 platform=win-64; it was fed by branch12" in result.out
    )
    assert "turned off at stage 1" in result.out
    covered = consumers_repo(tmp_path / "covered", "branch12, local12", "[linux-64, win-64]")
    assert sg("check", "--stage", "1", cwd=covered).code == 0


def test_inputs_satisfied_ignores_optional_inputs_and_inactive_consumers(
    tmp_path: Path, sg: Sg
) -> None:
    root = consumers_repo(tmp_path, "local12")
    text = (root / "migration.yaml").read_text()
    text = text.replace(
        "        from: [local12]", "        required: false\n        from: [local12]"
    )
    (root / "migration.yaml").write_text(text)
    result = sg("check", "--stage", "0", cwd=root)
    assert result.code == 0, result.output
    assert "0 required inputs of 1 consumer: all satisfied" in result.out
    text = text.replace("  build12:\n", "  build12:\n    when: local\n")
    (root / "migration.yaml").write_text(text)
    result = sg("check", "--stage", "0", cwd=root)
    assert "0 required inputs of 0 consumers: all satisfied" in result.out


def test_consumer_argument_limits_the_check_and_must_exist(tmp_path: Path, sg: Sg) -> None:
    root = consumers_repo(tmp_path, "local12")
    stage = root / "stages" / "01-step.yaml"
    stage.write_text(stage_1("  - check: inputs-satisfied\n    consumer: build12\n"))
    assert sg("check", "--stage", "1", cwd=root).code == 1
    stage.write_text(stage_1("  - check: inputs-satisfied\n    consumer: build13\n"))
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 2
    assert "inputs-satisfied: unknown consumer 'build13'; did you mean 'build12'?" in result.err
    assert f"stages/01-step.yaml:{line_of(root, '- check', 'stages/01-step.yaml')}:3:" in result.err


def test_single_source_passes_with_one_producer_per_row(tmp_path: Path, sg: Sg) -> None:
    root = consumers_repo(tmp_path, "branch12, local12", "[linux-64, win-64]")
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output
    assert "every input of 1 consumer has a single source" in result.out


def test_single_source_names_a_producer_outside_from(tmp_path: Path, sg: Sg) -> None:
    root = consumers_repo(tmp_path, "local12", "[linux-64, win-64]")
    text = (root / "migration.yaml").read_text()
    text = text.replace(
        '"pkg-python{py}-cuda12-{platform}-{sha}"]', '"pkg-python{py}-cuda1*-{platform}-{sha}"]'
    )
    text = text.replace(
        'pkg-python{py}-cuda12-{platform}-{sha}"\n        from',
        'pkg-python{py}-cuda1*-{platform}-{sha}"\n        from',
    )
    (root / "migration.yaml").write_text(text)
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        "input 'pkg-python{py}-cuda1*-{platform}-{sha}' "
        f"(migration.yaml:{line_of(root, '- select')}) for py=311 platform=linux-64; "
        "py=311 platform=win-64; py=312 platform=linux-64; py=312 platform=win-64 also selects "
        "e.g. pkg-python311-cuda13-linux-64-{sha} from producer cu13 "
        f"(migration.yaml:{line_of(root, 'cu13:')}), outside its from (local12); active since stage 0: "
        "narrow the select so only the intended producer matches."
    ) in result.out


def test_single_source_names_two_producers_without_from(tmp_path: Path, sg: Sg) -> None:
    root = repo(
        tmp_path,
        """\
        producers:
          a:
            artifacts: ["pkg-{py}"]
          b:
            when: local
            artifacts: ["pkg-{py}"]
            run: this
          c:
            run: other
            artifacts: ["pkg-{py}"]
        consumers:
          job:
            inputs:
              - select: "pkg-{py}"
                required: false
        """,
        stage_1("  - check: single-source\n"),
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        "input 'pkg-{py}' (migration.yaml:"
        f"{line_of(root, '- select')}) for py=311; py=312 is selected from 2 producers: "
        f"a (migration.yaml:{line_of(root, 'a:')}) (active since stage 0), "
        f"b (migration.yaml:{line_of(root, 'b:')}) (active since stage 1 (local))"
    ) in result.out
    # c makes the same names in another run, which this input does not download from.
    assert "producer c" not in result.out


# --------------------------------------------------------------------- unique-artifacts


def test_unique_artifacts_passes_for_the_same_names_in_different_runs(
    tmp_path: Path, sg: Sg
) -> None:
    root = repo(
        tmp_path,
        """\
        producers:
          here:
            artifacts: ["pkg-{py}-{sha}", "pkg-{py}-{sha}-tests"]
          there:
            run: branch
            artifacts: ["pkg-{py}-{sha}"]
        """,
        stage_1("  - check: unique-artifacts\n"),
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 0, result.output
    assert "6 artifact rows of active producers have distinct names" in result.out


def test_unique_artifacts_decides_collisions_exactly(tmp_path: Path, sg: Sg) -> None:
    """`pkg-{ver}` (any dotted version) can be the literal `pkg-1.0`; `{sha}` can't be `x`."""
    root = repo(
        tmp_path,
        """\
        producers:
          versioned:
            artifacts: ["pkg-{ver}", "pkg-x{sha}"]
          pinned:
            when: local
            artifacts: ["pkg-1.0", "pkg-xx"]
        """,
        stage_1("  - check: unique-artifacts\n"),
    )
    text = (root / "migration.yaml").read_text()
    (root / "migration.yaml").write_text(
        text.replace("axes:\n", 'axes:\n  ver: {pattern: "[0-9]+(\\\\.[0-9]+)*"}\n', 1)
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1, result.output
    assert (
        f"artifact names collide: pkg-{{ver}} of producer versioned (migration.yaml:{line_of(root, 'versioned:')}) "
        f"(active since stage 0) and pkg-1.0 of producer pinned (migration.yaml:{line_of(root, 'pinned:')}) "
        "(template 'pkg-1.0', active since stage 1 (local)) can both be 'pkg-1.0'"
    ) in result.out
    assert "1 problem" in result.out


# --------------------------------------------------------------------- tags-routed

TAGS = """\
producers:
  p:
    artifacts: [pkg]
releases:
  rel13:
    tags: ["v13.*"]
    select: [pkg]
  rel12-branch:
    when: not local
    tags: ["v12.9.*"]
    select: [pkg]
  rel12:
    when: local
    tags: ["{tags12}"]
    select: [pkg]
"""


def test_tags_routed_passes_when_each_tag_has_one_release(tmp_path: Path, sg: Sg) -> None:
    root = repo(
        tmp_path,
        TAGS.format(tags12="v12.9.*"),
        stage_1("  - check: tags-routed\n    tags: [v13.4.2, v12.9.8]\n"),
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 0, result.output
    assert "2 tags each routed to one release" in result.out


def test_tags_routed_names_unclaimed_and_doubly_claimed_tags(tmp_path: Path, sg: Sg) -> None:
    root = repo(
        tmp_path,
        TAGS.format(tags12="v13.4.*"),
        stage_1("  - check: tags-routed\n    tags: [v13.4.2, v12.9.8]\n"),
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        f"tag v13.4.2 is claimed by 2 active releases: rel13 (migration.yaml:{line_of(root, 'rel13:')}) "
        f"(tags v13.*), rel12 (migration.yaml:{line_of(root, 'rel12:')}) (tags v13.4.*); narrow their tags."
    ) in result.out
    assert (
        f"tag v12.9.8 is claimed by no active release; rel12-branch (migration.yaml:"
        f"{line_of(root, 'rel12-branch:')}) would claim it but is off since stage 1 (local)."
    ) in result.out


# --------------------------------------------------------------------- command


def command_repo(tmp_path: Path, *argv: str, timeout: float | None = None) -> Path:
    args = json.dumps(list(argv))
    extra = f"\n    timeout: {timeout}" if timeout is not None else ""
    return repo(tmp_path, "", stage_1(f"  - check: command\n    run: {args}{extra}\n", False))


def test_command_passes_on_exit_0(tmp_path: Path, sg: Sg) -> None:
    root = command_repo(tmp_path, sys.executable, "-c", "print('fine')")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 0, result.output
    assert "exited 0" in result.out


def test_command_failure_shows_the_tail_of_its_output(tmp_path: Path, sg: Sg) -> None:
    script = "import sys\nfor i in range(1, 31): print(f'line {i}')\nsys.exit(3)"
    root = command_repo(tmp_path, sys.executable, "-c", script)
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "exited 3:" in result.out
    assert "line 11\n" in result.out and "line 30\n" in result.out
    assert "line 10\n" not in result.out


def test_command_runs_without_a_shell_in_the_migration_folder(tmp_path: Path, sg: Sg) -> None:
    script = "import os, sys\nprint(sys.argv[1:], os.getcwd())\nsys.exit(1)"
    root = command_repo(tmp_path, sys.executable, "-c", script, "$HOME;", "a b", "*")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert f"['$HOME;', 'a b', '*'] {root.resolve()}" in result.out


def _gone(pid: int) -> bool:
    """No such process, or only a zombie waiting for a reaper (PID 1 in a container)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def test_command_is_stopped_at_its_timeout_with_its_children(tmp_path: Path, sg: Sg) -> None:
    script = (
        "import subprocess, sys\nprint('started', flush=True)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\nchild.wait()"
    )
    root = command_repo(tmp_path, sys.executable, "-c", script, timeout=1)
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "did not finish within 1 s; it was stopped; its last output:" in result.out
    assert "started" in result.out
    child = int((root / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the command's child outlived the timeout"


def test_command_not_found_says_so(tmp_path: Path, sg: Sg) -> None:
    root = command_repo(tmp_path, "stagegate-no-such-command")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "command 'stagegate-no-such-command' not found; install it or fix `run`." in result.out


# --------------------------------------------------------------------- pytest


def pytest_repo(tmp_path: Path, test: str | None, check: str = "  - check: pytest\n") -> Path:
    root = repo(tmp_path, PRODUCERS, stage_1(check))
    if test is not None:
        (root / "stages" / "01-step").mkdir()
        (root / "stages" / "01-step" / "test_step.py").write_text(textwrap.dedent(test))
    return root


def test_pytest_check_passes_with_the_stage_under_test(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as installed: every plugin of the environment loads by its entry point, stagegate's
    # too, beside `-p stagegate` (tests/conftest.py turns autoload off for the others)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    monkeypatch.delenv("PYTEST_PLUGINS")
    root = pytest_repo(
        tmp_path,
        """\
        def test_stage(stagegate):
            assert stagegate.stage == 1
            assert stagegate.producers == ["cu13", "cu12"]
        """,
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 0, result.output
    assert "pytest: pytest stages/01-step: 1 passed" in result.out


def test_pytest_check_failure_shows_the_failing_test(tmp_path: Path, sg: Sg) -> None:
    root = pytest_repo(
        tmp_path,
        """\
        def test_stage(stagegate):
            assert stagegate.select("pkg-*cuda12*") == []
        """,
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "pytest stages/01-step failed (1 failed in " in result.out
    assert "FAILED stages/01-step/test_step.py::test_stage" in result.out
    assert f"at stages/01-step.yaml:{line_of(root, '- check: pytest', 'stages/01-step.yaml')}" in (
        result.out
    )


def test_pytest_check_with_no_tests_fails(tmp_path: Path, sg: Sg) -> None:
    root = pytest_repo(tmp_path, "def helper():\n    pass\n")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "pytest stages/01-step failed (no tests were collected)" in result.out


def test_pytest_check_without_its_folder_says_what_to_create(tmp_path: Path, sg: Sg) -> None:
    root = pytest_repo(tmp_path, None)
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "stages/01-step/ does not exist; create it with the stage's tests" in result.out


@pytest.mark.parametrize("path", ["../outside", "/tmp", "link"])
def test_pytest_check_refuses_a_path_outside_the_repository(
    tmp_path: Path, sg: Sg, path: str
) -> None:
    (tmp_path / "outside").mkdir()
    root = pytest_repo(tmp_path, None, f"  - check: pytest\n    path: {path}\n")
    (root / "link").symlink_to(tmp_path / "outside")
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 2
    assert (
        f"stages/01-step.yaml:{line_of(root, '- check: pytest', 'stages/01-step.yaml')}:3:"
        in result.err
    )
    assert f"pytest path '{path}' leads outside the repository; use a path inside it." in result.err


@pytest.fixture(scope="module")
def _given_path_runs() -> dict[str, Result]:
    return {}


@pytest.fixture
def given_path(
    _given_path_runs: dict[str, Result],
    tmp_path_factory: pytest.TempPathFactory,
    sg: Sg,
    monkeypatch: pytest.MonkeyPatch,
) -> Result:
    """check --stage 1 of a pytest check given `path: checks/-odd` (a name like an option),
    whose test asks the `stagegate` fixture for the stage, with plugin autoload off. Made
    once (a pytest process, ~0.6 CPU-s) for the two tests that read it."""
    if "run" not in _given_path_runs:
        root = pytest_repo(
            tmp_path_factory.mktemp("given-path"),
            None,
            "  - check: pytest\n    path: checks/-odd\n",
        )
        (root / "checks" / "-odd").mkdir(parents=True)
        (root / "checks" / "-odd" / "test_it.py").write_text(
            "def test_it(stagegate):\n    assert stagegate.stage == 1\n"
        )
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        _given_path_runs["run"] = sg("check", "--stage", "1", cwd=root)
    return _given_path_runs["run"]


def test_pytest_check_loads_the_plugin_without_autoload(given_path: Result) -> None:
    assert given_path.code == 0, given_path.output


def test_pytest_check_runs_the_given_path(given_path: Result) -> None:
    assert given_path.code == 0, given_path.output
    assert "pytest checks/-odd: 1 passed" in given_path.out


# --------------------------------------------------------------------- formats and exit codes


def test_json_holds_stage_ok_and_results(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-*")
    data = report(sg, root, "--all")
    assert data["stage"] == 0 and data["ok"] is False
    results = data["results"]
    assert isinstance(results, list)
    assert [(r["check"], r["stage"], r["ok"]) for r in results] == [
        ("release-continuity", 0, True),
        ("release-continuity", 1, False),
    ]
    for r in results:
        assert {"check", "stage", "ok", "message"} <= set(r)
        assert r["message"].startswith(f"release-continuity tag=v13.0.0 at stage {r['stage']}: ")
    failed = results[1]
    assert (failed["file"], failed["line"]) == ("migration.yaml", line_of(root, "- check:"))
    assert failed["findings"][0]["line"] == line_of(root, "cu12:")
    assert "glob 'pkg-*'" in failed["findings"][0]["message"]
    single = report(sg, root, "--stage", "1")
    assert single["stage"] == 1 and len(single["results"]) == 1  # type: ignore[arg-type]


def test_github_format_annotates_the_declaring_line_and_writes_the_summary(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = release_repo(tmp_path, "pkg-*", extra="    expect: [cu13]\n")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = sg("check", "--all", "--format", "github", cwd=root)
    assert result.code == 1
    annotations = [line for line in result.out.splitlines() if line.startswith("::")]
    assert len(annotations) == 2  # one per finding, each on its culprit's line
    assert annotations[0].startswith(
        f"::error file=migration.yaml,line={line_of(root, 'cu12:')},col=3,"
        "title=stagegate release-continuity (stage 1)::release rel13 (migration.yaml:"
    )
    written = summary.read_text()
    assert written.startswith("earlier step\n### stagegate check --all\n")
    assert "| stage | check | result | details |" in written
    assert "| 0 | release-continuity tag=v13.0.0 | pass | " in written
    assert "| 1 | release-continuity tag=v13.0.0 | **fail** | release rel13" in written
    assert "glob 'pkg-\\*'; it did not select" in written  # Markdown-escaped: shows as typed
    assert ".<br>release rel13 (migration.yaml:" in written  # findings one per line
    assert written.endswith("</details>\n\n")  # the passing rows, folded


def test_github_format_without_a_summary_file_still_annotates(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-python*-cuda13-*")
    result = sg("check", "--format", "github", cwd=root)
    assert result.code == 0
    assert "::error" not in result.out


def test_check_usage_errors_exit_2(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-*")
    both = sg("check", "--all", "--stage", "1", cwd=root)
    assert both.code == 2 and "give either --stage N or --all, not both." in both.err
    beyond = sg("check", "--stage", "5", cwd=root)
    assert (
        beyond.code == 2 and "stage 5 does not exist; migration.yaml has stages 0..1." in beyond.err
    )


def test_check_defaults_to_the_current_stage(tmp_path: Path, sg: Sg) -> None:
    root = release_repo(tmp_path, "pkg-*")
    assert sg("check", cwd=root).code == 0
    text = (root / "migration.yaml").read_text().replace("stage: 0", "stage: 1", 1)
    (root / "migration.yaml").write_text(text)
    assert sg("check", cwd=root).code == 1


# --------------------------------------------------------------------- docs/checks.md


def test_docs_describe_every_check_kind_argument_option_and_helper() -> None:
    doc = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    sections = {part.split("\n", 1)[0].strip(): part for part in doc.split("\n### ")[1:]}
    for name, module in kinds().items():
        assert name in sections, f"docs/checks.md has no section for the {name} check"
        for argument in module.ARGS:
            assert f"`{argument}`" in sections[name], f"{name}: argument {argument} undocumented"
    for option in ("--stage N", "--all", "--format", "-f FILE"):
        assert f"`{option}`" in doc, f"check option {option} undocumented"
    for helper in (n for n in dir(StageUnderTest) if not n.startswith("_")):
        assert f"`{helper}" in doc, f"fixture helper {helper} undocumented"


def test_pytest_check_says_what_to_install_when_pytest_is_missing(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pre-commit hook's environment has no pytest: the check says so and what to do."""
    from stagegate.checks import pytest_check

    root = pytest_repo(tmp_path, "def test_ok():\n    assert True\n")
    real = pytest_check.find_spec
    monkeypatch.setattr(
        pytest_check, "find_spec", lambda name: None if name == "pytest_snapshot" else real(name)
    )
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "pytest_snapshot not installed beside stagegate" in result.out
    assert "pip install stagegate-ci brings both" in result.out
    assert "stagegate[" not in result.out  # `stagegate` on PyPI is another project
