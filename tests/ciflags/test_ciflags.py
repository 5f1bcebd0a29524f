"""`flags`, `flag` and `matrix`: every format, every bad input, and what reaches the runner."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FUZZ_LONG, REPO, Result
from stagegate.ci import ciflags

Sg = Callable[..., Result]

MIGRATION = """\
version: 1
migration: demo
summary: Flags for CI.
stage: 1
axes:
  py: ["311", "312"]
  platform: [linux-64, win-64]
  gpu: [a100]
  sha: {pattern: "[0-9a-f]{40}"}
flags:
  local-cu12:
    summary: Build the CUDA 12 wheels here.
    env: BUILD_CU12_LOCAL
  new.path:
    default: true
  quiet: {}
producers:
  cu13:
    artifacts:
      - "pkg-python{py}-cuda13-{platform}-{sha}"
  cu12:
    when: local-cu12
    artifacts:
      - "pkg-python{py}-cuda12-{platform}-{sha}"
      - "pkg-python{py}-cuda12-{sha}-docs"
  docs:
    artifacts: ["docs-{platform}-{py}"]
  single:
    when: new.path
    artifacts: ["single-wheel"]
consumers:
  tests:
    when: local-cu12
    inputs:
      - select: "pkg-python{py}-cuda12-*"
        required: false
releases:
  rel:
    tags: ["v1.*"]
    select: ["pkg-python*-cuda13-*"]
"""

STAGES = (
    "stage: 1\ntitle: Local CUDA 12\nset:\n  local-cu12: true\n",
    "stage: 2\ntitle: Quiet\nset:\n  quiet: true\n  new.path: false\n",
)


def make(tmp_path: Path, text: str = MIGRATION, stages: tuple[str, ...] = STAGES) -> Path:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(textwrap.dedent(text))
    for number, body in enumerate(stages, start=1):
        (root / "stages" / f"{number:02d}-step.yaml").write_text(body)
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make(tmp_path)


@pytest.fixture(autouse=True)
def _no_runner_files(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def runner_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    files = {}
    for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
        path = tmp_path / name.lower()
        path.write_text("before=1\n")
        monkeypatch.setenv(name, str(path))
        files[name] = path
    return files


def parse_outputs(text: str) -> dict[str, str]:
    """The runner's reading of a $GITHUB_OUTPUT file: key=value lines and heredocs."""
    out: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            out[line[:equals]] = line[equals + 1 :]
        else:
            name, delimiter = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            else:
                raise AssertionError(f"heredoc {delimiter} is not closed")
            out[name] = "\n".join(body)
    return out


# --------------------------------------------------------------------------- flags


def test_flags_text_shows_each_value_and_its_env(root: Path, sg: Sg) -> None:
    result = sg("flags", cwd=root)
    assert result.code == 0, result.output
    assert result.out.splitlines() == [
        "demo: stage 1 of 2: Local CUDA 12",
        "  local-cu12  true   env BUILD_CU12_LOCAL",
        "  new.path    true",
        "  quiet       false",
    ]


def test_flags_json_has_the_promised_shape(root: Path, sg: Sg) -> None:
    result = sg("flags", "--stage", "2", "--format", "json", cwd=root)
    assert result.code == 0, result.output
    assert json.loads(result.out) == {
        "migration": "demo",
        "stage": 2,
        "flags": {"local-cu12": True, "new.path": False, "quiet": True},
        "active": {
            "producers": ["cu13", "cu12", "docs"],
            "consumers": ["tests"],
            "releases": ["rel"],
        },
    }


def test_flags_github_prints_and_appends_the_outputs(
    root: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = runner_files(tmp_path, monkeypatch)
    result = sg("flags", "--format", "github", cwd=root)
    assert result.code == 0, result.output
    expected = (
        "stage=1\n"
        'flags={"local-cu12":true,"new.path":true,"quiet":false}\n'
        'active={"producers":["cu13","cu12","docs","single"],"consumers":["tests"],'
        '"releases":["rel"]}\n'
        "local-cu12=true\n"
        "new_path=true\n"
        "quiet=false\n"
    )
    assert result.out == expected
    assert files["GITHUB_OUTPUT"].read_text() == "before=1\n" + expected
    assert files["GITHUB_ENV"].read_text() == "before=1\nBUILD_CU12_LOCAL=true\n"
    summary = files["GITHUB_STEP_SUMMARY"].read_text()
    assert summary.startswith("before=1\n### stagegate flags: stage 1 of 2: Local CUDA 12")
    assert "| `local-cu12` | true | `BUILD_CU12_LOCAL` |" in summary
    outputs = parse_outputs(files["GITHUB_OUTPUT"].read_text())
    assert json.loads(outputs["flags"])["new.path"] is True  # fromJSON(...)['new.path']


def test_flags_github_without_runner_files_only_prints(root: Path, sg: Sg) -> None:
    result = sg("flags", "--format", "github", "--stage", "0", cwd=root)
    assert result.code == 0, result.output
    assert result.out.splitlines()[0] == "stage=0"
    assert "local-cu12=false" in result.out.splitlines()


def test_flags_env_prints_one_line_per_flag_with_an_env(root: Path, sg: Sg) -> None:
    result = sg("flags", "--format", "env", "--stage", "0", cwd=root)
    assert result.code == 0, result.output
    assert result.out == "BUILD_CU12_LOCAL=false\n"
    # ready for `set -a; . file`
    script = f"set -a; . {root / 'env'}; echo $BUILD_CU12_LOCAL"
    (root / "env").write_text(result.out)
    shell = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert shell.stdout == "false\n"


def test_flags_json_on_a_migration_without_flags(tmp_path: Path, sg: Sg) -> None:
    text = "version: 1\nmigration: bare\nstage: 0\nproducers:\n  p:\n    artifacts: [x]\n"
    root = make(tmp_path, text, ())
    assert json.loads(sg("flags", "--format", "json", cwd=root).out)["flags"] == {}
    assert sg("flags", cwd=root).out.splitlines()[1] == "  (no flags)"
    assert sg("flags", "--format", "env", cwd=root).out == ""


@pytest.mark.parametrize("command", [("flags",), ("flag", "quiet"), ("matrix", "cu13")])
@pytest.mark.parametrize("stage", ["3", "-1"])
def test_a_stage_out_of_range_is_exit_2(
    root: Path, sg: Sg, command: tuple[str, ...], stage: str
) -> None:
    result = sg(*command, "--stage", stage, cwd=root)
    assert result.code == 2
    assert f"stage {stage} does not exist; migration.yaml has stages 0..2." in result.err
    assert result.out == ""


def test_a_stage_that_is_not_a_number_is_exit_2(root: Path, sg: Sg) -> None:
    result = sg("flags", "--stage", "two", cwd=root)
    assert result.code == 2
    assert "'two' is not a valid integer" in result.err


def test_an_unknown_format_is_exit_2(root: Path, sg: Sg) -> None:
    assert sg("flags", "--format", "yaml", cwd=root).code == 2
    assert sg("matrix", "cu13", "--format", "text", cwd=root).code == 2


# --------------------------------------------------------------------------- flag


@pytest.mark.parametrize(
    ("stage", "name", "code", "out"),
    [
        ("0", "local-cu12", 1, "false\n"),
        ("1", "local-cu12", 0, "true\n"),
        ("1", "new.path", 0, "true\n"),
        ("2", "new.path", 1, "false\n"),
    ],
)
def test_flag_prints_the_value_and_exits_0_on_1_off(
    root: Path, sg: Sg, stage: str, name: str, code: int, out: str
) -> None:
    result = sg("flag", name, "--stage", stage, cwd=root)
    assert (result.code, result.out, result.err) == (code, out, "")


def test_flag_defaults_to_the_current_stage(root: Path, sg: Sg) -> None:
    assert sg("flag", "local-cu12", cwd=root).code == 0


def test_an_unknown_flag_is_exit_2_with_did_you_mean_at_the_declaration(root: Path, sg: Sg) -> None:
    result = sg("flag", "local-cu13", cwd=root)
    assert result.code == 2
    assert result.out == ""
    assert result.err.strip() == (
        "migration.yaml:11:3: no flag 'local-cu13' is declared; did you mean 'local-cu12' "
        "(declared here)?"
    )


def test_an_unknown_flag_without_a_close_name_lists_the_flags(root: Path, sg: Sg) -> None:
    result = sg("flag", "zzz", cwd=root)
    assert result.code == 2
    assert (
        "migration.yaml: no flag 'zzz' is declared; the flags are: local-cu12, new.path, quiet."
        in result.err
    )


def test_a_flag_name_is_matched_exactly_not_by_output_name(root: Path, sg: Sg) -> None:
    result = sg("flag", "new_path", cwd=root)
    assert result.code == 2
    assert "did you mean 'new.path'" in result.err


# --------------------------------------------------------------------------- matrix


def test_matrix_has_one_row_per_assignment_of_the_named_finite_axes(root: Path, sg: Sg) -> None:
    result = sg("matrix", "cu12", cwd=root)
    assert result.code == 0, result.output
    assert json.loads(result.out) == {
        "include": [
            {"py": "311", "platform": "linux-64"},
            {"py": "311", "platform": "win-64"},
            {"py": "312", "platform": "linux-64"},
            {"py": "312", "platform": "win-64"},
        ]
    }
    assert result.out.count("\n") == 1  # one line, ready for $GITHUB_OUTPUT


def test_matrix_axes_come_in_declared_order_not_template_order(root: Path, sg: Sg) -> None:
    rows = json.loads(sg("matrix", "docs", cwd=root).out)["include"]
    assert [list(row) for row in rows] == [["py", "platform"]] * 4
    assert rows[0] == {"py": "311", "platform": "linux-64"}


def test_matrix_of_an_inactive_producer_is_empty(root: Path, sg: Sg) -> None:
    result = sg("matrix", "cu12", "--stage", "0", cwd=root)
    assert (result.code, result.out) == (0, '{"include":[]}\n')


def test_matrix_of_a_producer_without_finite_axes_is_one_empty_row(root: Path, sg: Sg) -> None:
    assert json.loads(sg("matrix", "single", cwd=root).out) == {"include": [{}]}
    assert json.loads(sg("matrix", "single", "--stage", "2", cwd=root).out) == {"include": []}


def test_matrix_github_appends_and_prints(
    root: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = runner_files(tmp_path, monkeypatch)
    result = sg("matrix", "cu13", "--format", "github", cwd=root)
    assert result.code == 0, result.output
    assert result.out.startswith('matrix={"include":[{"py":"311","platform":"linux-64"}')
    assert files["GITHUB_OUTPUT"].read_text() == "before=1\n" + result.out
    assert files["GITHUB_ENV"].read_text() == "before=1\n"
    assert json.loads(parse_outputs(result.out)["matrix"])["include"][3] == {
        "py": "312",
        "platform": "win-64",
    }


def test_an_unknown_producer_is_exit_2_with_did_you_mean(root: Path, sg: Sg) -> None:
    result = sg("matrix", "cu14", cwd=root)
    assert result.code == 2
    assert "migration.yaml:18:3: no producer 'cu14' is declared; did you mean 'cu13'" in result.err
    hostile = sg("matrix", "x" * 5000, cwd=root)
    assert hostile.code == 2 and len(hostile.err) < 400


def test_matrix_beyond_githubs_job_limit_warns(tmp_path: Path, sg: Sg) -> None:
    values = ", ".join(f'"v{i}"' for i in range(300))
    text = f"version: 1\nmigration: big\nstage: 0\naxes:\n  v: [{values}]\nproducers:\n  p:\n    artifacts: ['x-{{v}}']\n"
    root = make(tmp_path, text, ())
    result = sg("matrix", "p", cwd=root)
    assert result.code == 0
    assert len(json.loads(result.out)["include"]) == 300
    assert "has 300 rows; GitHub Actions runs at most 256 jobs per matrix" in result.err
    github = sg("matrix", "p", "--format", "github", cwd=root)
    assert github.out.startswith("::warning title=stagegate matrix::the matrix of p has 300 rows")


def test_matrix_values_cannot_break_a_line_or_start_a_command(tmp_path: Path, sg: Sg) -> None:
    text = (
        "version: 1\nmigration: odd\nstage: 0\naxes:\n"
        '  v: ["a\\n::error::pwned", "b\\r\\nc=d", "\\u2028e"]\n'
        "producers:\n  p:\n    artifacts: ['x-{v}']\n"
    )
    root = make(tmp_path, text, ())
    result = sg("matrix", "p", "--format", "github", cwd=root)
    assert result.code == 0, result.output
    assert result.out.count("\n") == 1
    assert not any(line.lstrip().startswith("::") for line in result.out.splitlines())
    values = [row["v"] for row in json.loads(parse_outputs(result.out)["matrix"])["include"]]
    assert values == ["a\n::error::pwned", "b\r\nc=d", "\u2028e"]


# --------------------------------------------------------------------------- invalid input


def test_two_flags_whose_output_names_collide_are_invalid_at_the_second(
    tmp_path: Path, sg: Sg
) -> None:
    text = MIGRATION.replace("  quiet: {}\n", "  quiet: {}\n  new_path: {}\n")
    root = make(tmp_path, text)
    for args in (("validate",), ("flags", "--format", "github"), ("flag", "quiet")):
        result = sg(*args, cwd=root)
        assert result.code == 2, args
        assert (
            "migration.yaml:17:3: $.flags.new_path: flag 'new_path' has the step-output name "
            "'new_path', which collides with flag 'new.path' (migration.yaml:14:3)"
        ) in result.err


def test_output_names_collide_without_regard_to_case(tmp_path: Path, sg: Sg) -> None:
    root = make(tmp_path, MIGRATION.replace("  quiet: {}\n", "  quiet: {}\n  Quiet: {}\n"))
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert (
        "flag 'Quiet' has the step-output name 'Quiet', which collides with flag 'quiet'"
        in result.err
    )


@pytest.mark.parametrize("name", ["stage", "flags", "active", "Stage"])
def test_a_flag_named_like_a_fixed_output_is_invalid(tmp_path: Path, sg: Sg, name: str) -> None:
    root = make(tmp_path, MIGRATION.replace("  quiet: {}\n", f"  {name}: {{}}\n"))
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert f"collides with the output '{name.lower()}'" in result.err


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ("1BUILD", "'1BUILD' is not an environment variable name"),
        ("BUILD-X", "'BUILD-X' is not an environment variable name"),
        ('"BUILD\\nX=1"', "is not an environment variable name"),
        ("GITHUB_TOKEN", "'GITHUB_TOKEN' cannot be set through $GITHUB_ENV"),
        ("runner_temp", "'runner_temp' cannot be set through $GITHUB_ENV"),
        ("NODE_OPTIONS", "'NODE_OPTIONS' cannot be set through $GITHUB_ENV"),
        ('""', "must not be empty"),
        ("12", "must be a string, not 12"),
    ],
)
def test_a_bad_env_name_is_invalid_at_its_value(
    tmp_path: Path, sg: Sg, env: str, message: str
) -> None:
    root = make(tmp_path, MIGRATION.replace("env: BUILD_CU12_LOCAL", f"env: {env}"))
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert re.search(r"migration\.yaml:13:10: \$\.flags\.local-cu12\.env: ", result.err), result.err
    assert message in result.err


READ_BY = {
    "BASH_ENV": "the shell",
    "ENV": "the shell",
    "PATH": "the shell",
    "Path": "the shell",
    "SHELLOPTS": "the shell",
    "PS4": "the shell",
    "BASH_FUNC_x": "the shell",
    "LD_PRELOAD": "the dynamic loader",
    "LD_LIBRARY_PATH": "the dynamic loader",
    "DYLD_INSERT_LIBRARIES": "the dynamic loader",
    "PYTHONSTARTUP": "Python",
    "PYTHONPATH": "Python",
    "pythonwarnings": "Python",
    "PYTEST_ADDOPTS": "Python",
    "PIP_INDEX_URL": "Python",
    "GIT_DIR": "git",
    "GIT_SSH_COMMAND": "git",
    "NODE_PATH": "node",
    "NPM_CONFIG_REGISTRY": "node",
    "ACTIONS_ALLOW_UNSECURE_COMMANDS": "the runner",
    "CI": "the runner",
    "PERL5OPT": "Perl or Ruby",
}


@pytest.mark.parametrize("env", READ_BY)
def test_an_env_that_a_shell_loader_or_interpreter_reads_is_invalid(
    tmp_path: Path, sg: Sg, env: str
) -> None:
    """Issue #24, item 7: `flags --format github` writes a flag's env to $GITHUB_ENV, so
    BASH_ENV=true would make every later bash step source a file of the checkout."""
    root = make(tmp_path, MIGRATION.replace("env: BUILD_CU12_LOCAL", f"env: {env}"))
    result = sg("validate", cwd=root)
    assert result.code == 2, result.output
    assert (
        f"migration.yaml:13:10: $.flags.local-cu12.env: {env!r} is read by {READ_BY[env]}, "
        "and `flags --format github` writes a flag's env to $GITHUB_ENV for every later step "
        "of the job: a flag must not change how the shell, a program or the runner starts. "
        "Choose a name of your own (e.g. BUILD_CU12_LOCAL)."
    ) in result.err
    assert sg("flags", "--format", "env", cwd=root).code == 2


@pytest.mark.parametrize(
    "env", ["MY_PATH", "ENVIRONMENT", "CI_PLAN_PER_ROOT", "PY_LIMITED", "GITLAB_X", "NODES"]
)
def test_an_env_that_only_resembles_one_is_written(tmp_path: Path, sg: Sg, env: str) -> None:
    """The control: names that share a start or a word with a refused one are the
    workflows' own."""
    root = make(tmp_path, MIGRATION.replace("env: BUILD_CU12_LOCAL", f"env: {env}"))
    result = sg("flags", "--format", "env", cwd=root)
    assert result.code == 0, result.output
    assert f"{env}=true" in result.out.splitlines()


def test_two_flags_with_one_env_are_invalid(tmp_path: Path, sg: Sg) -> None:
    root = make(tmp_path, MIGRATION.replace("  quiet: {}\n", "  quiet: {env: build_cu12_local}\n"))
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert (
        "migration.yaml:16:16: $.flags.quiet.env: flag 'quiet' reads the environment variable "
        "'build_cu12_local', as flag 'local-cu12' (migration.yaml:11:3) does"
    ) in result.err


# --------------------------------------------------------------------------- writing safely


def test_an_unwritable_github_output_is_exit_2_naming_it_and_nothing_is_written(
    root: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = runner_files(tmp_path, monkeypatch)
    missing = tmp_path / "no-such-folder" / "output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(missing))
    result = sg("flags", "--format", "github", cwd=root)
    assert result.code == 2
    assert result.out == ""
    assert (
        f"$GITHUB_OUTPUT ({missing}): cannot append to it: No such file or directory; nothing was written."
        in result.err
    )
    assert files["GITHUB_ENV"].read_text() == "before=1\n"
    assert files["GITHUB_STEP_SUMMARY"].read_text() == "before=1\n"
    assert not missing.parent.exists()


def test_a_github_env_that_is_a_folder_leaves_github_output_untouched(
    root: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = runner_files(tmp_path, monkeypatch)
    monkeypatch.setenv("GITHUB_ENV", str(tmp_path))
    result = sg("flags", "--format", "github", cwd=root)
    assert result.code == 2
    assert f"$GITHUB_ENV ({tmp_path}): cannot append to it: Is a directory" in result.err
    assert files["GITHUB_OUTPUT"].read_text() == "before=1\n"


def test_a_write_that_fails_half_way_is_taken_back_from_every_file(
    root: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = runner_files(tmp_path, monkeypatch)
    fresh = tmp_path / "fresh-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(fresh))
    real_write = os.write
    calls = []

    def failing(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:5]))  # a short write
        if len(calls) == 3:  # GITHUB_ENV: the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(ciflags.os, "write", failing)
    result = sg("flags", "--format", "github", cwd=root)
    assert result.code == 2
    assert (
        "$GITHUB_ENV" in result.err and "No space left on device; nothing was written" in result.err
    )
    assert not fresh.exists()  # created by this call, so removed again
    assert files["GITHUB_ENV"].read_text() == "before=1\n"
    assert files["GITHUB_STEP_SUMMARY"].read_text() == "before=1\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_is_exit_2(root: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_OUTPUT", "/dev/full")
    result = sg("matrix", "cu13", "--format", "github", cwd=root)
    assert result.code == 2
    assert "$GITHUB_OUTPUT (/dev/full): cannot append to it: No space left on device" in result.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_without_a_reader_does_not_hang(
    root: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("GITHUB_OUTPUT", str(fifo))
    result = sg("flags", "--format", "github", cwd=root)
    assert result.code == 2
    assert f"$GITHUB_OUTPUT ({fifo}): cannot append to it" in result.err


def test_an_empty_variable_means_not_set(
    root: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_OUTPUT", "")
    assert sg("flags", "--format", "github", cwd=root).code == 0


def test_a_value_with_a_line_break_uses_the_heredoc_form() -> None:
    text = ciflags.lines([("plain", "a=b<<c"), ("multi", "one\n::error::two\nEOF")])
    assert text.startswith("plain=a=b<<c\nmulti<<ghadelimiter_")
    head, body = text.split("\n", 1)[1].split("\n", 1)
    delimiter = head.removeprefix("multi<<")
    assert re.fullmatch(r"ghadelimiter_[0-9a-f]{32}", delimiter)
    assert body == f"one\n::error::two\nEOF\n{delimiter}\n"
    assert parse_outputs(text) == {"plain": "a=b<<c", "multi": "one\n::error::two\nEOF"}
    other = ciflags.lines([("multi", "x\ny")]).split("\n")[0]
    assert other != head  # a fresh delimiter each time


def test_the_delimiter_never_occurs_in_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = iter(["0" * 32, "1" * 32])
    monkeypatch.setattr("secrets.token_hex", lambda _n: next(tokens))
    value = f"x\nghadelimiter_{'0' * 32}\ny"
    text = ciflags.lines([("v", value)])
    assert text == f"v<<ghadelimiter_{'1' * 32}\n{value}\nghadelimiter_{'1' * 32}\n"


@pytest.mark.parametrize("name", ["", "a=b", "a<<b", "a\nb", "a b"])
def test_an_unsafe_name_is_refused_by_the_writer(name: str) -> None:
    with pytest.raises(ValueError):
        ciflags.lines([(name, "x")])


# --------------------------------------------------------------------------- the example


def test_the_example_reads_the_same_through_every_format(sg: Sg) -> None:
    as_json = json.loads(sg("flags", "--stage", "3", "--format", "json", cwd=REPO).out)
    outputs = parse_outputs(sg("flags", "--stage", "3", "--format", "github", cwd=REPO).out)
    assert json.loads(outputs["flags"]) == as_json["flags"]
    assert json.loads(outputs["active"]) == as_json["active"]
    assert outputs["stage"] == "3"
    for name, value in as_json["flags"].items():
        assert outputs[ciflags.output_name(name)] == ("true" if value else "false")
        assert sg("flag", name, "--stage", "3", cwd=REPO).code == (0 if value else 1)


# --------------------------------------------------------------------------- the Python API


def test_a_script_imports_stagegate_flags_like_a_user(root: Path) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        import stagegate

        values: dict[str, bool] = stagegate.flags("migration.yaml")
        print(json.dumps(values))
        print(json.dumps(stagegate.flags(stage=0)))
        for bad in ({"stage": 7}, {"stage": True}, {"file": "missing.yaml"}):
            try:
                stagegate.flags(**bad)
            except stagegate.StagegateError as error:
                print(type(error).__name__, error.exit_code, error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert json.loads(lines[0]) == {"local-cu12": True, "new.path": True, "quiet": False}
    assert list(json.loads(lines[1]).items()) == [
        ("local-cu12", False),
        ("new.path", True),
        ("quiet", False),
    ]
    assert lines[2] == "UsageError 2 stage 7 does not exist; migration.yaml has stages 0..2."
    assert lines[3] == "UsageError 2 stage must be a whole number 0..2, not True."
    assert lines[4].startswith("UsageError 2 missing.yaml: no such file")


def test_the_api_reports_invalid_input_with_every_problem(tmp_path: Path) -> None:
    import stagegate
    from stagegate.errors import InvalidInput

    root = make(tmp_path, MIGRATION.replace("when: local-cu12\n", "when: lokal-cu12\n", 1))
    with pytest.raises(InvalidInput) as caught:
        stagegate.flags(root / "migration.yaml")
    assert "unknown flag 'lokal-cu12'; did you mean 'local-cu12'?" in str(caught.value)
    assert caught.value.problems[0].loc.line == 22


def test_importing_stagegate_loads_nothing_else() -> None:
    """The pytest plugin loads the package into every pytest run: it must stay bare."""
    script = (
        "import sys, stagegate\n"
        "print(sorted(m for m in sys.modules if m.startswith('stagegate') or m in ('yaml', 'click')))\n"
        "from stagegate import StagegateError\n"
        "from stagegate.errors import UsageError\n"
        "print(issubclass(UsageError, StagegateError), stagegate.StagegateError is StagegateError)\n"
        "try:\n"
        "    stagegate.nothing\n"
        "except AttributeError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        "['stagegate']",
        "True True",
        "module 'stagegate' has no attribute 'nothing'",
    ]


def test_a_hostile_stage_title_stays_on_its_line(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    title = 'title: "Local\\n::error::pwned\\n## heading"\n'
    root = make(tmp_path, stages=(STAGES[0].replace("title: Local CUDA 12\n", title), STAGES[1]))
    files = runner_files(tmp_path, monkeypatch)
    for fmt in ("text", "github"):
        result = sg("flags", "--format", fmt, cwd=root)
        assert result.code == 0, result.output
        assert not any(line.startswith("::") for line in result.out.splitlines())
    summary = files["GITHUB_STEP_SUMMARY"].read_text().splitlines()
    assert summary[1] == "### stagegate flags: stage 1 of 2: Local ::error::pwned \\#\\# heading"


# --------------------------------------------------------------------------- mutated inputs


@pytest.mark.parametrize(
    "chunk",
    [range(n, n + 25) for n in range(0, 100 if FUZZ_LONG else 25, 25)],  # more: --fuzz-long
    ids=lambda r: f"{r.start}-{r.stop - 1}",
)
def test_mutated_inputs_end_cleanly_in_flags_flag_and_matrix(
    chunk: range, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fuzz corpus of tests/fuzzkit.py, through the CI commands and their writes
    (after ``validate``: what it refuses, they refuse alike; fuzzkit.exercise)."""
    import fuzzkit

    ours = (
        ("validate",),
        ("flags", "--format", "github"),
        ("flags", "--format", "json"),
        ("flags", "--format", "env", "--stage", "1"),
        ("flag", "new-build"),
        ("flag", "local-cu12-bindings", "--stage", "3"),
        ("matrix", "bindings-cu13", "--stage", "2"),
        ("matrix", "new", "--format", "github"),
    )
    monkeypatch.setattr(fuzzkit, "commands", lambda: ours)
    for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    fuzzkit.run_cases(chunk, tmp_path)


def test_matrix_uses_the_axis_values_a_producer_narrows_or_replaces(tmp_path: Path, sg: Sg) -> None:
    text = MIGRATION.replace(
        "  cu12:\n    when: local-cu12\n",
        '  cu12:\n    when: local-cu12\n    axes: {py: ["39", "310", "311"]}\n',
    )
    root = make(tmp_path, text)
    result = sg("matrix", "cu12", cwd=root)
    assert result.code == 0, result.output
    rows = json.loads(result.out)["include"]
    assert [(row["py"], row["platform"]) for row in rows] == [
        (py, platform) for py in ("39", "310", "311") for platform in ("linux-64", "win-64")
    ]
    assert len(json.loads(sg("matrix", "cu13", cwd=root).out)["include"]) == 4
