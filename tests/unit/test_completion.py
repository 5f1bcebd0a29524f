"""Shell completion offers the migration's own values: flag names, producer, consumer
and release ids, stage numbers (with their titles), and files for -f."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import cast

import pytest

from conftest import REPO


def _complete(words: str, cwd: Path = REPO, shell: str = "bash") -> list[str]:
    """What the CLI offers for ``words`` (``type,value`` lines in bash; ``value\nhelp``
    pairs in zsh), asked as the shell asks the console script: its environment, in
    ``cwd``. In this process (``cli.run``); test_everyday.py asks the console script
    itself."""
    from stagegate.cli import run

    env = {
        **{k: v for k, v in os.environ.items() if k != "STAGEGATE_FILE"},
        "_STAGEGATE_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    out, err = (
        io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True) for _ in range(2)
    )
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = run([])
            except SystemExit as done:  # click ends a completion with sys.exit
                code = done.code if isinstance(done.code, int) else 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    said, shown = (cast(io.BytesIO, s.buffer).getvalue().decode() for s in (err, out))
    assert code == 0, said
    assert "Traceback" not in said
    return [line for line in shown.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        ("stagegate flag legacy", ["plain,legacy-branch-source"]),
        ("stagegate plan --stage ", [f"plain,{n}" for n in range(8)]),
        ("stagegate diff 6 ", [f"plain,{n}" for n in range(8)]),
        ("stagegate advance --to 7", ["plain,7"]),
        (
            "stagegate matrix bindings-cu1",
            ["plain,bindings-cu13", "plain,bindings-cu12-branch", "plain,bindings-cu12"],
        ),
        (
            "stagegate graph --consumer docs-rel",
            ["plain,docs-release", "plain,docs-release-versioned"],
        ),
        ("stagegate -f mig", ["file,mig"]),
    ],
)
def test_completion_offers_the_migrations_values(words: str, offered: list[str]) -> None:
    assert _complete(words) == offered


def test_a_stage_number_comes_with_its_title() -> None:
    assert _complete("stagegate plan --stage 3", shell="zsh") == [
        "plain",
        "3",
        "Local CUDA 12 builds and bindings tests",
    ]


def test_completion_reads_the_file_given_on_the_line(tmp_path: Path) -> None:
    """-f before the command names the migration the values come from; where nothing can
    be loaded, nothing is offered (no error in the shell)."""
    assert _complete("stagegate -f migration.yaml flag unv") == [
        "plain,unversioned-metapackage-name"
    ]
    assert _complete("stagegate flag unv", cwd=tmp_path) == []
    assert _complete("stagegate -f nowhere.yaml flag unv") == []
