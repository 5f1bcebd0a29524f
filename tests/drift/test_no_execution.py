"""Nothing from the files is executed, and nothing is read from outside the repository.

The payloads here would create a marker file if anything ran them; every test
asserts the marker is absent, besides the exit code and the located message.
"""

from __future__ import annotations

import builtins
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import CASES, Result

MINIMAL = CASES / "valid" / "valid-minimal"
COMMANDS = (("validate",), ("plan",), ("check", "--all"), ("audit",))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the minimal valid migration, in a folder of its own (a git work tree)."""
    from fuzzkit import git

    root = tmp_path / "repo"
    shutil.copytree(MINIMAL, root, ignore=shutil.ignore_patterns("expected.txt"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    return root


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "PWNED"
    yield path
    assert not path.exists(), "something from the input files was executed"


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def every_command_refuses(sg: Callable[..., Result], root: Path, pattern: str) -> None:
    for command in COMMANDS:
        result = sg(*command, cwd=root)
        assert result.code == 2, (command, result.output)
        assert re.search(pattern, result.err), f"{command}: {pattern!r} not in\n{result.err}"


# --------------------------------------------------------------------------- YAML


PAYLOADS = [
    ('!!python/object/apply:os.system ["touch {m}"]', "!!python/object/apply:os.system"),
    ('!!python/object/apply:builtins.open ["{m}", "w"]', "!!python/object/apply:builtins.open"),
    ('!!python/object/new:builtins.open ["{m}", "w"]', "!!python/object/new:builtins.open"),
    ("!!python/name:os.system", "!!python/name:os.system"),
    ("!!python/module:os", "!!python/module:os"),
    (
        '!<tag:yaml.org,2002:python/object/apply:os.system> ["touch {m}"]',
        "!!python/object/apply:os.system",
    ),
    ('!<!python/object/apply:os.system> ["touch {m}"]', "!python/object/apply:os.system"),
    ("!!binary dG91Y2g=", "!!binary"),
    ("!!set {{a, b}}", "!!set"),
]


@pytest.mark.parametrize(("payload", "shown"), PAYLOADS, ids=[p[1] for p in PAYLOADS])
def test_python_tags_are_refused_unconstructed(
    payload: str, shown: str, repo: Path, marker: Path, sg: Callable[..., Result]
) -> None:
    migration = repo / "migration.yaml"
    replace(migration, "summary: A small", "summary: " + payload.format(m=marker) + "\nx: A small")
    line = line_of(migration, "summary: ")
    every_command_refuses(
        sg,
        repo,
        rf"^migration\.yaml:{line}:10: YAML tag {re.escape(shown)} is not allowed here; "
        r"stagegate reads plain YAML only \(no Python objects, binary or custom types\)",
    )


def test_tag_directive_cannot_smuggle_a_python_tag(
    repo: Path, marker: Path, sg: Callable[..., Result]
) -> None:
    """``%TAG !py! tag:yaml.org,2002:python/`` makes ``!py!object/apply`` a python tag."""
    migration = repo / "migration.yaml"
    text = migration.read_text().replace("summary: A small", "summary: A small", 1)
    text = text.replace(
        "summary: A small migration used by the loader tests.",
        f'summary: !py!object/apply:os.system ["touch {marker}"]',
    )
    migration.write_text("%TAG !py! tag:yaml.org,2002:python/\n---\n" + text)
    line = line_of(migration, "summary: ")
    every_command_refuses(
        sg, repo, rf"^migration\.yaml:{line}:10: YAML tag !!python/object/apply:os\.system is not"
    )


def test_python_tag_on_a_key_or_in_a_stage_file(
    repo: Path, marker: Path, sg: Callable[..., Result]
) -> None:
    stage = repo / "stages" / "01-switch.yaml"
    stage.write_text(stage.read_text() + "? !!python/name:os.system\n: x\n")
    line = line_of(stage, "? !!python")
    every_command_refuses(
        sg, repo, rf"^stages/01-switch\.yaml:{line}:3: YAML tag !!python/name:os\.system is not"
    )


def test_no_yaml_constructor_is_ever_used(
    monkeypatch: pytest.MonkeyPatch, sg: Callable[..., Result], tmp_path: Path
) -> None:
    """stagegate reads YAML events only: with every PyYAML loader broken, it still works."""
    from fuzzkit import seeds, write_project

    def refuse(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("a YAML constructor was used")

    for name in ("load", "unsafe_load", "full_load", "safe_load", "load_all"):
        monkeypatch.setattr(yaml, name, refuse)
    for cls in (yaml.constructor.BaseConstructor, yaml.constructor.FullConstructor):
        monkeypatch.setattr(cls, "construct_document", refuse)
        monkeypatch.setattr(cls, "construct_object", refuse)
    write_project(tmp_path / "example", seeds()["example"])
    for command in COMMANDS:
        result = sg(*command, cwd=tmp_path / "example")
        assert result.code in (0, 1), (command, result.output)


# --------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ("when", "column", "message"),
    [
        ("__import__('os').system('touch {m}')", 11, 'unexpected character "\'"'),
        ("eval('1')", 5, 'unexpected character "\'"'),
        ("__import__ (os)", 11, "unexpected '('; expected 'and', 'or' or the end"),
        ("new-path; touch {m}", 8, "unexpected character ';'"),
        ("new-path or 1 + 1", 14, "unexpected character '+'"),
        ("$(touch {m})", 0, "unexpected character '$'"),
    ],
)
def test_expressions_are_parsed_never_evaluated(
    when: str,
    column: int,
    message: str,
    repo: Path,
    marker: Path,
    sg: Callable[..., Result],
) -> None:
    migration = repo / "migration.yaml"
    quoted = "'" + when.format(m=marker).replace("'", "''") + "'"
    replace(migration, "when: not new-path", f"when: {quoted}")
    line = line_of(migration, "when: '")
    start = (migration.read_text().splitlines()[line - 1]).index("'") + 2
    every_command_refuses(
        sg,
        repo,
        rf"^migration\.yaml:{line}:{start + column}: \$\.producers\.old\.when: "
        + re.escape(message),
    )


def test_nothing_is_evaluated_as_python(
    monkeypatch: pytest.MonkeyPatch, sg: Callable[..., Result], tmp_path: Path
) -> None:
    """With eval, exec and compile broken, the example still loads, plans and checks. The
    one code compiled is records.py's ``__init__`` for a busy record type, written of the
    type's own field names (under its own file name): no text of any input."""
    from fuzzkit import seeds, write_project
    from stagegate.records import GENERATED

    root = tmp_path / "example"
    write_project(root, seeds()["example"])
    for command in COMMANDS:  # import everything the commands import, first
        sg(*command, cwd=root)

    def refusing(real: Callable[..., Any]) -> Callable[..., Any]:
        def refuse(code: object, *args: Any, **kwargs: Any) -> Any:
            named = args[0] if args else kwargs.get("filename")
            if GENERATED in (named, getattr(code, "co_filename", None)):
                return real(code, *args, **kwargs)
            raise AssertionError("Python code was evaluated")

        return refuse

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, refusing(getattr(builtins, name)))
    for command in COMMANDS:
        result = sg(*command, cwd=root)
        assert result.code in (0, 1), (command, result.output)


# --------------------------------------------------------------------------- command checks


def add_check(repo: Path, check: str) -> None:
    stage = repo / "stages" / "01-switch.yaml"
    stage.write_text(stage.read_text() + "acceptance:\n" + check)


def test_command_arguments_are_literal_no_shell(
    repo: Path, marker: Path, sg: Callable[..., Result]
) -> None:
    hostile = [f"a; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", f"| touch {marker}"]
    argv = [sys.executable, "-c", "import sys; print(sys.argv[1:]); sys.exit(3)", *hostile]
    add_check(repo, "  - check: command\n    run: " + repr(argv).replace("'", '"') + "\n")
    result = sg("check", "--stage", "1", cwd=repo)
    assert result.code == 1, result.output
    assert repr(hostile) in result.out
    assert "exited 3" in result.out


def test_a_command_line_is_one_program_name_not_a_shell_line(
    repo: Path, marker: Path, sg: Callable[..., Result]
) -> None:
    add_check(repo, f'  - check: command\n    run: ["touch {marker}; echo"]\n')
    result = sg("check", "--stage", "1", cwd=repo)
    assert result.code == 1, result.output
    assert f"command 'touch {marker}; echo' not found" in result.out


def test_a_command_is_stopped_at_its_timeout(repo: Path, sg: Callable[..., Result]) -> None:
    argv = [sys.executable, "-c", "import time; time.sleep(120)"]
    add_check(
        repo,
        "  - check: command\n    run: " + repr(argv).replace("'", '"') + "\n    timeout: 1\n",
    )
    start = time.monotonic()
    result = sg("check", "--stage", "1", cwd=repo)
    assert time.monotonic() - start < 60
    assert result.code == 1, result.output
    assert "did not finish within 1 s; it was stopped" in result.out


# --------------------------------------------------------------------------- paths


@pytest.fixture
def outside(tmp_path: Path, marker: Path) -> Path:
    """A folder outside the repository holding a valid stage file and a test that would
    leave the marker if pytest ran it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "01-switch.yaml").write_text((MINIMAL / "stages" / "01-switch.yaml").read_text())
    (folder / "test_evil.py").write_text(
        f"from pathlib import Path\n\ndef test_evil():\n    Path({str(marker)!r}).touch()\n"
    )
    return folder


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink"])
def test_stages_dir_outside_the_repository_is_refused(
    kind: str, repo: Path, outside: Path, sg: Callable[..., Result]
) -> None:
    value = {"dotdot": "../outside", "absolute": str(outside), "symlink": "linked"}[kind]
    if kind == "symlink":
        os.symlink(outside, repo / "linked")
    migration = repo / "migration.yaml"
    replace(migration, "stage: 0\n", f"stage: 0\nstages_dir: {value}\n")
    line = line_of(migration, "stages_dir:")
    every_command_refuses(
        sg,
        repo,
        rf"^migration\.yaml:{line}:13: \$\.stages_dir: stages_dir '{re.escape(value)}' leads "
        r"outside the folder of the migration file; use a relative path inside it",
    )


def test_a_stage_file_linked_from_outside_is_refused(
    repo: Path, outside: Path, sg: Callable[..., Result]
) -> None:
    stage = repo / "stages" / "01-switch.yaml"
    stage.unlink()
    os.symlink(outside / "01-switch.yaml", stage)
    every_command_refuses(
        sg,
        repo,
        r"^stages/01-switch\.yaml:1:1: this stage file is a symbolic link that leads outside "
        r"the folder of the migration file",
    )


def test_a_stage_file_linked_inside_is_read(repo: Path, sg: Callable[..., Result]) -> None:
    stage = repo / "stages" / "01-switch.yaml"
    (repo / "real.yaml").write_text(stage.read_text())
    stage.unlink()
    os.symlink("../real.yaml", stage)
    assert sg("validate", cwd=repo).code == 0


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "symlinked-parent"])
def test_pytest_path_outside_the_repository_is_refused(
    kind: str, repo: Path, outside: Path, sg: Callable[..., Result]
) -> None:
    if kind == "symlink":
        os.symlink(outside, repo / "tests-link")
    if kind == "symlinked-parent":
        os.symlink(outside.parent, repo / "up")
    value = {
        "dotdot": "../outside",
        "absolute": str(outside),
        "symlink": "tests-link",
        "symlinked-parent": "up/outside/test_evil.py",
    }[kind]
    add_check(repo, f"  - check: pytest\n    path: {value}\n")
    line = line_of(repo / "stages" / "01-switch.yaml", "- check: pytest")
    every_command_refuses(
        sg,
        repo,
        rf"^stages/01-switch\.yaml:{line}:5: pytest path '{re.escape(value)}' leads outside "
        r"the repository; use a path inside it",
    )


@pytest.mark.parametrize(
    ("entry", "why"),
    [("../outside/secret", "leads outside the repository"), ("/etc/passwd", "is absolute")],
)
def test_audit_paths_outside_the_repository_are_refused(
    entry: str, why: str, repo: Path, sg: Callable[..., Result]
) -> None:
    migration = repo / "migration.yaml"
    replace(
        migration,
        "    when: not new-path\n",
        f"    when: not new-path\n    legacy: {{paths: [{entry!r}]}}\n",
    )
    line = line_of(migration, "  old:")
    result = sg("audit", cwd=repo)
    assert result.code == 2, result.output
    assert re.search(
        rf"^migration\.yaml:{line}:3: producer old: legacy path '{re.escape(entry)}' "
        + re.escape(why),
        result.err,
    ), result.err


def test_audit_does_not_read_through_a_link_to_outside(
    repo: Path, outside: Path, sg: Callable[..., Result]
) -> None:
    """A tracked symbolic link to a secret outside is not followed by the search."""
    from fuzzkit import git

    (outside / "secret.env").write_text("TOKEN=OLD_SECRET_VALUE\n")
    os.symlink(outside / "secret.env", repo / "leak")
    migration = repo / "migration.yaml"
    replace(
        migration,
        "    when: not new-path\n",
        "    when: not new-path\n    legacy: {references: [OLD_SECRET]}\n",
    )
    git(repo, "add", "-A")
    result = sg("audit", "--stage", "1", cwd=repo)
    assert result.code == 0, result.output
    assert "OLD_SECRET_VALUE" not in result.output


# --------------------------------------------------------------------------- workflow commands


def command_lines(text: str) -> list[str]:
    """The lines the GitHub Actions runner would take as workflow commands."""
    return [line for line in text.splitlines() if line.lstrip(" \t").startswith("::")]


def test_text_from_the_files_cannot_pose_as_a_workflow_command(
    repo: Path, sg: Callable[..., Result]
) -> None:
    """A stage title holding a line break and ``::warning``/``::stop-commands``: shown as
    text on its own line (the line break escaped), never run; stagegate's own annotations
    still are commands."""
    stage = repo / "stages" / "01-switch.yaml"
    replace(
        stage,
        "title: Switch to the new path",
        'title: "Switch\\n::warning file=x::injected\\n::stop-commands::token"',
    )
    migration = repo / "migration.yaml"
    replace(migration, 'select: ["old-*", "new-*"]', 'select: ["old-*"]')
    with migration.open("a") as f:
        f.write("invariants:\n  - check: release-continuity\n    tag: v1.0\n")
    for command in (
        ("status",),
        ("plan", "--stage", "1"),
        ("check", "--all", "--format", "github"),
    ):
        result = sg(*command, cwd=repo)
        assert result.code in (0, 1), (command, result.output)
        assert "injected" in result.output
        lines = command_lines(result.output)
        assert all(line.startswith("::error file=migration.yaml,") for line in lines), lines
        if command[0] == "check":
            assert lines, "the failing check's own annotation must stay a command"
            assert "Switch\\n::warning file=x::injected\\n::stop-commands::token" in result.out


def test_a_file_name_from_the_repository_cannot_pose_as_a_workflow_command(
    repo: Path, sg: Callable[..., Result]
) -> None:
    from fuzzkit import git

    migration = repo / "migration.yaml"
    replace(
        migration,
        "    when: not new-path\n",
        "    when: not new-path\n    legacy: {references: [OLD_WHEELS]}\n",
    )
    replace(migration, "stage: 0", "stage: 1")
    (repo / "x\n::error::pwned").write_text("uses OLD_WHEELS\n")
    git(repo, "add", "-A")
    for fmt in ("text", "github"):
        result = sg("audit", "--format", fmt, cwd=repo)
        assert result.code == 1, result.output
        assert "pwned" in result.output
        lines = command_lines(result.output)
        assert not [line for line in lines if line.lstrip().startswith("::error::pwned")], lines
        assert all(
            line.startswith(("::error file=", "::warning file=", "::notice")) for line in lines
        )
        if fmt == "text":
            assert lines == []


def test_a_command_split_across_writes_is_defused() -> None:
    import io

    from stagegate.report.github import GuardedStream, annotation

    sink = io.StringIO()
    stream = GuardedStream(sink)
    ours = annotation("error", "stagegate's own", None, "t")
    for piece in ("ab", "c\n  ::warn", "ing::x\n", ours + "\n", "::notice::tail"):
        stream.write(piece)
    stream.flush()
    assert sink.getvalue() == ("abc\n  :\u2236warning::x\n" + ours + "\n" + ":\u2236notice::tail")
