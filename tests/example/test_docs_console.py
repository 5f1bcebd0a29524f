"""The console blocks of README.md and docs/: run against the example and compared with what they show.

Each ```console block runs as one session in a fresh copy of the worked example (a git
repository on `main`, its author Ada Flipper). A `$ stagegate ...` line's output is
compared with the lines below it, up to the next `$`: a line that is only `...` stands
for any number of cut lines, `...` inside a line for any text; commit ids, dates and
durations may differ. `git` commands run for their effect, and `echo $?` shows the
exit code before it; a command of another program (`gh`, `dot`, the benchmarks) is
left out. An HTML comment right above a block may say, one per comment:

    <!-- console: setup: SHELL -->     run SHELL in the copy first (output not compared)
    <!-- console: in: FOLDER -->       run in a copy of FOLDER (from the repository
                                       root) instead of the example
    <!-- console: skip: WHY -->        not run, for the reason given
    <!-- console: continue -->         run on in the copy the block before it on the page
                                       left (its setup, then its commands): a walk
                                       through one repository, step by step (docs/adopt.md)

A setup line sees `$FIXTURES`, the folder of the suite's fixtures (tests/fixtures), from
which a walk copies the files each step changes.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"((?:<!-- console: [^\n]*-->\n)*)```console\n(.*?)```", re.DOTALL)
DIRECTIVE = re.compile(r"<!-- console: (setup|in|skip): (.*?) -->|<!-- console: (continue) -->")
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Flipper",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "2026-11-29T14:59:49+00:00",
    "GIT_COMMITTER_NAME": "Ada Flipper",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_COMMITTER_DATE": "2026-11-29T14:59:49+00:00",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass
class Command:
    line: str  # without the `$ `
    expected: list[str] = field(default_factory=list)
    setup: bool = False  # a continued block's setup line: run, output not compared


@dataclass
class Block:
    doc: Path
    line: int
    commands: list[Command]
    setup: list[str]
    folder: str | None
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.doc.name}:{self.line}"


def blocks() -> list[Block]:
    found: list[Block] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            directives = [
                ("continue", "") if d[2] else (d[0], d[1])
                for d in DIRECTIVE.findall(match.group(1))
            ]
            commands: list[Command] = []
            for raw in match.group(2).splitlines():
                if raw.startswith("$ "):
                    commands.append(Command(raw[2:]))
                elif commands:
                    commands[-1].expected.append(raw)
            if any(k == "continue" for k, _ in directives):
                assert found and found[-1].doc == doc, (
                    f"{doc.name}: `continue` with no block before"
                )
                found[-1].commands += [
                    Command(v, setup=True) for k, v in directives if k == "setup"
                ]
                found[-1].commands += commands
                continue
            found.append(
                Block(
                    doc=doc,
                    line=text[: match.start(2)].count("\n"),
                    commands=commands,
                    setup=[v for k, v in directives if k == "setup"],
                    folder=next((v for k, v in directives if k == "in"), None),
                    skip=next((v for k, v in directives if k == "skip"), None),
                )
            )
    return found


_NORMAL = [
    (re.compile(r"\b[0-9a-f]{40}\b|\b[0-9a-f]{12}\b"), "<commit>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)"), "<date>"),
    (re.compile(r"\(\d+(?:\.\d+)? s\)"), "(<seconds>)"),
    (re.compile(r"\b\d+\.\d+s\b"), "<seconds>s"),
]


def normal(line: str) -> str:
    for pattern, replacement in _NORMAL:
        line = pattern.sub(replacement, line)
    return line.rstrip()


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what ``expected`` shows, `...` standing for what was cut."""
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    while actual and not actual[-1].strip():
        actual = actual[:-1]
    pattern = ""
    for line in expected:
        line = normal(line)
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += ".*".join(re.escape(part) for part in line.split("...")) + r"\n"
    text = "".join(normal(line) + "\n" for line in actual)
    return re.fullmatch(pattern, text) is not None


RUN = ("stagegate", "git")
"""The programs a block's commands may run; a command with another (`gh`, `dot`, the
benchmarks) is left out: its effect is not stagegate's to show."""


def runnable(command: str, path: str) -> bool:
    """Whether every program of a command line (each part of a pipeline) is one of ``RUN``
    and found on ``path``."""
    for part in command.split("|"):
        words = shlex.split(part, comments=True)
        if words and (words[0] not in RUN or shutil.which(words[0], path=path) is None):
            return False
    return True


def workspace(tmp_path: Path, block: Block, env: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    if block.folder is not None:
        shutil.copytree(REPO / block.folder, root)
        return root
    root.mkdir()
    shutil.copy2(REPO / "migration.yaml", root / "migration.yaml")
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "Example"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)
    return root


_WORD = (
    r"(?:[^\s|<>;&$`'\"\\*?#{~]"  # a character the shell takes as it is
    r"|(?<=[^\s=:])~"  # a tilde inside a word (HEAD~1), not where bash expands it
    r"|\"[^\"$`\\!]*\")+"  # double quotes around text without expansion or escape
)
PLAIN = re.compile(rf"stagegate(?: +{_WORD})*(?: +#.*)? *")
"""A `stagegate ARGS` line that the shell would only split into words (``shlex`` splits
it alike): no pipe, redirection, expansion or escape; double quotes around plain text, a
tilde inside a word and a comment at the end are as the shell reads them."""


def in_process(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, str] | None:
    """A plain `stagegate ...` line run in this process, as the console script runs it
    (``cli.run``), in ``cwd`` with ``env`` as its whole environment and standard error
    written into standard output, as the shell's ``2>&1`` gives them; None for any other
    line. A process of its own would cost a Python start and stagegate's import per line;
    the console script itself runs as a process in test_console.py and test_fuzz.py."""
    if PLAIN.fullmatch(command.rstrip()) is None:
        return None
    from stagegate.cli import run

    merged = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(merged), contextlib.redirect_stderr(merged):
            code = run(shlex.split(command, comments=True)[1:])
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    buffer = merged.buffer
    assert isinstance(buffer, io.BytesIO)
    return code, buffer.getvalue().decode("utf-8", "replace")


def shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    ran = in_process(command, cwd, env)
    if ran is not None:
        return subprocess.CompletedProcess(command, ran[0], ran[1])
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        timeout=300,
    )


ALL = blocks()


def test_the_docs_have_console_blocks_to_run() -> None:
    assert len([b for b in ALL if b.skip is None]) >= 8


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_console_block(block: Block, tmp_path: Path) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    env = {
        **os.environ,
        **IDENTITY,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
        "FIXTURES": str(REPO / "tests" / "fixtures"),
    }
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "STAGEGATE_FILE", "GITHUB_BASE_REF"):
        env.pop(name, None)
    if not any(runnable(c.line, env["PATH"]) for c in block.commands):
        pytest.skip("none of its commands is stagegate's or git's (the benchmarks, gh)")
    root = workspace(tmp_path, block, env)
    for setup in block.setup:
        done = shell(setup, root, env)
        assert done.returncode == 0, f"{block.id}: setup {setup!r} failed:\n{done.stdout}"
    last, ran = 0, 0
    for command in block.commands:
        if command.setup:
            done = shell(command.line, root, env)
            assert done.returncode == 0, (
                f"{block.id}: setup {command.line!r} failed:\n{done.stdout}"
            )
            continue
        if command.line.split("#", 1)[0].strip() == "echo $?":
            assert command.expected[:1] == [str(last)], f"{block.id}: `{command.line}`"
            continue
        if not runnable(command.line, env["PATH"]):
            continue
        done = shell(command.line, root, env)
        last, ran = done.returncode, ran + 1
        if not command.line.startswith("stagegate "):
            assert done.returncode == 0, f"{block.id}: `{command.line}` failed:\n{done.stdout}"
            continue
        actual = done.stdout.splitlines()
        assert matches(command.expected, actual), (
            f"{block.id}: `$ {command.line}` printed (exit {done.returncode}):\n"
            + "\n".join(actual)
            + "\n\nwhere the doc shows:\n"
            + "\n".join(command.expected)
        )
    assert ran, f"{block.id}: no command of it ran"


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["a", "...", "z"], ["a", "b", "c", "z"], True),
        (["a", "...", "z"], ["a", "z"], True),
        (["a", "z"], ["a", "b", "z"], False),
        (["a ... z"], ["a and then z"], True),
        (["head ..."], ["head and a long tail"], True),
        (
            ["in e3016a2d9dc2 (2026-11-29T14:59:49+00:00)"],
            ["in 0123456789ab (2027-01-01T00:00:00Z)"],
            True,
        ),
        (["ok (0.02 s)"], ["ok (12.5 s)"], True),
        (["exactly this"], ["exactly that"], False),
        (["a", ""], ["a"], True),
    ],
)
def test_the_comparison_is_strict_except_where_the_doc_cuts(
    expected: list[str], actual: list[str], ok: bool
) -> None:
    assert matches(expected, actual) is ok


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("stagegate continuity --base HEAD~1", ["continuity", "--base", "HEAD~1"]),
        ('stagegate new-stage "Build the sdist"', ["new-stage", "Build the sdist"]),
        ("stagegate drift   # after the edit", ["drift"]),
        ("stagegate", []),
        ("stagegate x ~/a", None),  # the shell expands a leading tilde
        ("stagegate x --a=~/b", None),  # and one after `=` (bash)
        ("stagegate x a:~b", None),
        ('stagegate x "a$b"', None),
        ('stagegate x "a\\"b"', None),
        ("stagegate x 'a b'", None),
        ("stagegate x *", None),
        ("stagegate graph > graph.mmd", None),
        ("stagegate graph | dot", None),
    ],
)
def test_only_lines_the_shell_would_just_split_run_in_process(
    line: str, words: list[str] | None
) -> None:
    """A line runs in this process only where ``shlex`` splits it as bash would."""
    plain = PLAIN.fullmatch(line) is not None
    assert plain is (words is not None)
    if words is not None:
        assert shlex.split(line, comments=True)[1:] == words
