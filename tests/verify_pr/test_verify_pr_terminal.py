"""Issue #24, item 9: text from the files cannot act on the reader's terminal.

Summaries, titles, tags, file names, file lines, commit authors and a command check's
output carry escape sequences (an OSC 52 clipboard write, a screen clear, an 8-bit CSI)
and a bare carriage return that would overwrite a ``FAIL`` line. Every command in
every format prints them shown (``\\x1b``), never raw: no control character but line
feed and tab reaches standard output or error. The control: a tab and non-ASCII text
are printed as they are.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import SMALL, Repo, init, pin_git, write_small

Sg = Callable[..., Result]

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"
CLEAR = "\x1b[2J\x1b[H"
CSI = "\x9b31m"
OVERWRITE = "\rok    "
PAYLOAD = CLIPBOARD + CLEAR + CSI + OVERWRITE + "\x7f"
SHOWN = r"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[2J\x1b[H\x9b31m\x0dok    \x7f"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _q(text: str) -> str:
    return json.dumps(text)


def _repo(root: Path) -> Repo:
    repo = init(root)
    write_small(repo.root)
    text = SMALL.replace(
        "summary: Extra wheels beside the main ones, without changing the release.",
        f"summary: {_q('Extra' + PAYLOAD)}",
    )
    text = text.replace("    summary: Build the extra wheels.", f"    summary: {_q('x' + PAYLOAD)}")
    text = text.replace(
        '    tags: ["v1.*"]\n    select: ["pkg-*"]',
        f'    tags: ["v1.*", {_q("v2" + PAYLOAD)}]\n    select: ["pkg-*"]\n'
        f"    legacy: {{references: [{_q('OLD-REF')}]}}",
    )
    fail = f"import sys; print({PAYLOAD!r}); sys.exit(3)"
    text += f"  - check: command\n    run: [{_q(sys.executable)}, -c, {_q(fail)}]\n"
    repo.write("migration.yaml", text)
    repo.edit(
        "stages/01-narrow.yaml",
        "title: Narrow the release glob",
        f"title: {_q('Narrow' + PAYLOAD)}",
    )
    repo.edit("stages/02-extra.yaml", "title: Extra wheels", "title: " + _q("Extra\tcafé 漢"))
    repo.write(f"ci/name{CLEAR}.yml", f"uses OLD-REF {PAYLOAD}\n")
    repo.commit("Stage 0")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.clock += 60
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", f"Flip{PAYLOAD}", f"--author=Eve{CLEAR} <e@example.com>")
    return repo


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """``_repo``, built once for the tests that only read it (each checks it stays clean)."""
    return _repo(tmp_path_factory.mktemp("terminal") / "repo")


COMMANDS = [
    ("validate",),
    ("status",),
    ("plan",),
    ("plan", "--stage", "2"),
    ("diff", "2"),
    ("check",),
    ("check", "--all"),
    ("audit", "--stage", "3"),
    ("advance", "--dry-run"),
    ("rollback", "--dry-run"),
    ("log",),
    ("verify-pr", "--base", "HEAD~1"),
]


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_no_control_character_reaches_the_terminal(
    fmt: str, tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch, shared_repo: Repo
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    repo = shared_repo
    seen = ""
    for argv in COMMANDS:
        if fmt == "github" and argv[0] == "log":
            continue  # log has text and json only
        result = sg(*argv, "--format", fmt, cwd=repo.root)
        assert result.code in (0, 1), (argv, result.output)
        assert RAW.findall(result.out + result.err) == [], argv
        if fmt == "json":
            json.loads(result.out)  # still JSON, the controls escaped in it
        seen += result.out + result.err
    if fmt == "json":
        assert "\\u001b]52;c;" in seen and "\\u009b31m" in seen and "\\rok    " in seen
    else:
        assert SHOWN in seen  # the payload was printed, shown
        assert r"ci/name\x1b[2J\x1b[H.yml" in seen  # a file name
        assert "Extra\tcafé 漢" in seen  # the control: tab and non-ASCII as they are
    assert repo.status() == ""  # nothing written: the next test reads the same repository


def test_the_log_shows_the_author_shown(sg: Sg, shared_repo: Repo) -> None:
    repo = shared_repo
    result = sg("log", cwd=repo.root)
    assert result.code == 0, result.output
    assert r"Eve\x1b[2J\x1b[H <e@example.com>  0 -> 1  Narrow\x1b]52;c;" in result.out
    assert RAW.findall(result.out) == []


def test_an_error_message_quoting_the_input_is_shown(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit("migration.yaml", "stage: 0\n", f"stage: {_q('0' + CLEAR)}\n")
    for fmt in ("text", "github"):
        result = sg("validate", "--format", fmt, cwd=repo.root)
        assert result.code == 2, result.output
        assert RAW.findall(result.out + result.err) == []
        assert r"0\x1b[2J\x1b[H" in result.err


def test_printable_keeps_text_and_shows_controls() -> None:
    from stagegate.report import dumps, printable

    assert printable("plain\ttext\nnext line, café 漢") == "plain\ttext\nnext line, café 漢"
    assert printable(PAYLOAD) == SHOWN
    assert json.loads(dumps({"k": PAYLOAD})) == {"k": PAYLOAD}
    assert RAW.findall(dumps({"k": PAYLOAD})) == []
