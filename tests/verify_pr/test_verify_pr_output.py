"""No command's output carries a live GitHub workflow command, by the runner's rules.

``live_commands`` emulates how the Actions runner (actions/runner, ActionCommand.cs)
finds commands in a step's output, erring on the side of finding more: lines end at
``\\n``, ``\\r`` or ``\\r\\n``; a line is a command when, with its leading white space
(any Unicode white space) trimmed, it starts with ``::`` and has a second ``::``, or when
it holds the legacy ``##[`` with a ``]`` after it anywhere. The runner compares with
.NET's culture-sensitive rules, which may pass over characters without weight (zero-width
spaces, joiners, controls, combining marks), so the emulator passes over them everywhere.

Payloads sit in every free text of a migration (summaries, titles, outcomes, tags,
globs, legacy references), in tracked file names, in a command check's output and in
invalid input that error messages quote; every command runs in every format, and the
only live commands allowed are the annotations stagegate itself made.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import SMALL, Repo, init, pin_git, write_small

Sg = Callable[..., Result]

_SOFT = {"Cc", "Cf", "Cn", "Co", "Cs", "Mn", "Me", "Zs", "Zl", "Zp"}


def _soft(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) in _SOFT


def live_commands(text: str) -> list[str]:
    """The lines of ``text`` the runner could act on as workflow commands."""
    found = []
    for line in re.split(r"\r\n|\r|\n", text):
        seen = "".join(c for c in line if not _soft(c))
        v2 = seen.startswith("::") and seen.find("::", 2) > 2
        legacy = "##[" in seen and "]" in seen[seen.index("##[") :]
        if v2 or legacy:
            found.append(line)
    return found


PAYLOADS = [
    "\n::warning::n1",
    "\r::add-mask::n2",
    "\r\n::stop-commands::n3",
    "\n\u3000::warning::n4",
    "\n\u00a0\u2003::error::n5",
    "\n\u200b::warning::n6",
    "\n:\u200b:warning::n7",
    "\n\x0b\x1c::notice::n8",
    " ##[warning]n9",
    " #\u200b#[add-mask]n10",
    " ###[set-env name=A;]n11",
    "\n\t::group::n12",
]
MARKS = [re.search(r"n[0-9]+", p).group() for p in PAYLOADS]  # type: ignore[union-attr]


def _text(prefix: str) -> str:
    """A YAML double-quoted string: ``prefix`` followed by every payload."""
    return json.dumps(prefix + "".join(PAYLOADS))


def _hostile_repo(root: Path) -> Repo:
    """The small migration with payloads everywhere, at stage 1 (committed twice: stage 0,
    then the flip), and tracked files whose names carry payloads."""
    repo = init(root)
    write_small(repo.root)
    text = SMALL.replace(
        "summary: Extra wheels beside the main ones, without changing the release.",
        f"summary: {_text('Extra wheels')}",
    )
    text = text.replace("    summary: Build the extra wheels.", f"    summary: {_text('extras')}")
    text = text.replace(
        '    tags: ["v1.*"]\n    select: ["pkg-*"]',
        f'    tags: ["v1.*", {_text("v2")}]\n    select: ["pkg-*", {_text("zz")}]\n'
        f"    legacy: {{references: [{json.dumps('OLD ##[warning]r1')}]}}",
    )
    fail = "import sys; print('out\\r::add-mask::c1\\n##[warning]c2\\n  ::error::c3'); sys.exit(3)"
    text += f"  - check: command\n    run: [{json.dumps(sys.executable)}, -c, {json.dumps(fail)}]\n"
    repo.write("migration.yaml", text)
    for name in ("01-narrow.yaml", "02-extra.yaml"):
        stage = repo.read(f"stages/{name}")
        title = next(line for line in stage.splitlines() if line.startswith("title: "))
        stage = stage.replace(title, f"title: {_text(title[7:])}")
        outcome = next(line for line in stage.splitlines() if line.startswith("outcome: "))
        repo.write(f"stages/{name}", stage.replace(outcome, f"outcome: {_text('outcome')}"))
    for name in ("x\r::add-mask::f1", "y ##[warning]f2", "z\n::warning::f3", "w\u2028::error::f4"):
        repo.write(f"ci/{name}", "uses OLD ##[warning]r1\n")
    repo.commit("Stage 0, hostile")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("Flip to stage 1")
    return repo


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """``_hostile_repo``, built once for the tests that only read it (it stays clean)."""
    return _hostile_repo(tmp_path_factory.mktemp("hostile") / "repo")


COMMANDS = [
    ("validate",),
    ("status",),
    ("plan",),
    ("plan", "--stage", "2"),
    ("diff", "2"),
    ("check",),
    ("check", "--all"),
    ("audit",),
    ("audit", "--stage", "3"),
    ("advance", "--dry-run"),
    ("rollback", "--dry-run"),
    ("graph",),
    ("log",),
    ("verify-pr", "--base", "HEAD~1"),
    ("flags",),
    ("flag", "extra"),
    ("flag", "nosuchflag"),
    ("matrix", "wheels"),
    ("matrix", "nosuchproducer"),
]
FORMATS = {
    "validate": ("text", "json", "github"),
    "graph": (),
    "log": ("text", "json"),
    "flags": ("text", "json", "github", "env"),
    "flag": (),
    "matrix": ("json", "github"),
}


def _runs() -> list[tuple[str, ...]]:
    out = []
    for command in COMMANDS:
        for fmt in FORMATS.get(command[0], ("text", "json", "github")):
            out.append((*command, "--format", fmt))
        if not FORMATS.get(command[0], ("x",)):
            out.append(command)
    return out


def _assert_no_live_command(result: Result, what: object) -> None:
    from stagegate.report.github import _EMITTED

    for stream in (result.out, result.err):
        for line in live_commands(stream):
            assert line in _EMITTED, (what, line)
            assert re.match(r"::(error|warning|notice)[ :]", line), (what, line)


def test_every_command_in_every_format(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch, hostile: Repo
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    repo = hostile
    seen = ""
    for argv in _runs():
        result = sg(*argv, cwd=repo.root)
        wrong = any("nosuch" in a for a in argv)
        assert result.code in ((2,) if wrong else (0, 1)), (argv, result.output)
        _assert_no_live_command(result, argv)
        seen += result.output
    # the payloads did reach the output (as text), so the test looked at them
    for mark in ("n1", "n2", "n6", "n9", "n10", "r1", "c1", "c2", "c3", "f1", "f2", "f3", "f4"):
        assert mark in seen, mark
    assert repo.status() == ""


def test_error_messages_quoting_invalid_input(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit(
        "migration.yaml",
        "flags:\n",
        f"flags:\n  {_text('bad flag')}:\n    summary: x\n",
    )
    repo.commit("An invalid flag name")
    for argv in (("validate",), ("check",), ("status",), ("audit",)):
        for fmt in ("text", "github"):
            result = sg(*argv, "--format", fmt, cwd=repo.root)
            assert result.code == 2, (argv, result.output)
            _assert_no_live_command(result, argv)


def test_the_real_process_output_on_the_wire(hostile: Repo) -> None:
    """The console script, its bytes as the runner reads them (stdout and stderr)."""
    from scratch import git_env

    repo = hostile
    exe = Path(sys.executable).parent / "stagegate"
    env = git_env()
    env.pop("GITHUB_STEP_SUMMARY", None)
    for argv in (("check", "--format", "github"), ("audit",), ("status",)):
        proc = subprocess.run(
            [str(exe), *argv], cwd=repo.root, env=env, capture_output=True, check=False
        )
        assert proc.returncode in (0, 1), proc
        for stream in (proc.stdout, proc.stderr):
            text = stream.decode("utf-8")
            live = live_commands(text)
            assert all(re.match(r"::(error|warning|notice) ", line) for line in live), live
        assert b"n1" in proc.stdout + proc.stderr or argv[0] == "audit"
    assert repo.status() == ""


def test_the_emulator_finds_what_the_runner_runs() -> None:
    """The emulator is not blind: each payload alone is a live command to it."""
    for payload in PAYLOADS:
        assert live_commands("text" + payload), repr(payload)
    assert not live_commands("a ::warning::x\nplain # [x]\n:\u2236warning::x\n#\u266f[x]")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_defuse_breaks_each_payload_and_keeps_the_text(payload: str) -> None:
    from stagegate.report.github import defuse

    text = "text" + payload
    out = defuse(text)
    assert live_commands(out) == []
    assert out.replace("\u2236", ":").replace("\u266f", "#") == text  # it reads the same


def test_the_ascii_shortcut_of_soft_agrees_with_unicode_categories() -> None:
    """``soft`` answers ASCII without loading unicodedata; over every code point it must
    say what the categories say."""
    import operator
    import unicodedata
    from itertools import compress

    from stagegate.report.github import _SOFT, soft

    chars = list(map(chr, range(0x110000)))
    said = map(soft, chars)
    # the categories' answer, in C loops (each step in Python was half the test's time)
    categories = map(_SOFT.__contains__, map(unicodedata.category, chars))
    expected = map(operator.or_, map(str.isspace, chars), categories)
    wrong = [hex(point) for point in compress(range(len(chars)), map(operator.ne, said, expected))]
    assert wrong == []
