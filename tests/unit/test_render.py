"""The renderer tables and the commands that show through them (stagegate.cli)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import REPO
from stagegate.cli import cli
from stagegate.report import SCHEMA, Output, lines
from stagegate.report.affected import AFFECTED
from stagegate.report.audit import AUDIT
from stagegate.report.ciflags import FLAGS, MATRIX
from stagegate.report.continuity import CONTINUITY
from stagegate.report.drift import DRIFT
from stagegate.report.flips import FLIP, LOG, VERIFY, VERIFY_FAILED
from stagegate.report.graph import PICTURE
from stagegate.report.history import HISTORY
from stagegate.report.plans import DIFF, PLAN, STATUS
from stagegate.report.results import CHECK
from stagegate.report.scaffold import INIT, NEW_STAGE
from stagegate.report.validate import VALIDATE

TABLES = {
    "validate": VALIDATE,
    "status": STATUS,
    "plan": PLAN,
    "diff": DIFF,
    "graph": PICTURE,
    "check": CHECK,
    "audit": AUDIT,
    "advance": FLIP,
    "rollback": FLIP,
    "verify-pr": VERIFY,
    "affected": AFFECTED,
    "log": LOG,
    "history": HISTORY,
    "drift": DRIFT,
    "continuity": CONTINUITY,
    "flags": FLAGS,
    "matrix": MATRIX,
    "schema": SCHEMA,
    "init": INIT,
    "new-stage": NEW_STAGE,
}


def _formats(name: str) -> tuple[str, ...]:
    for param in cli.commands[name].params:
        if isinstance(param, click.Option) and "--format" in param.opts:
            assert isinstance(param.type, click.Choice)
            return tuple(str(c) for c in param.type.choices)
    return ()


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_format_a_command_offers_has_its_renderer(name: str) -> None:
    """A command with no --format has a table of one renderer (stagegate.cli shows with it)."""
    formats = _formats(name)
    if name == "flag":  # prints true or false itself, importing no renderer (start-up)
        assert not formats and name not in TABLES
        return
    assert set(formats or TABLES[name]) == set(TABLES[name]), name
    assert formats or len(TABLES[name]) == 1
    if name == "verify-pr":
        assert set(formats) == set(VERIFY_FAILED)


def test_lines_ends_each_part_and_leaves_out_none() -> None:
    assert lines("a", None, "", "b\nc") == "a\n\nb\nc\n"
    assert lines() == ""
    assert Output() == Output("", "")


def test_one_command_imports_only_its_own_modules(tmp_path: Path) -> None:
    """`stagegate status` imports no other command's core or renderer modules: only the
    plans' and, for the readiness of the next stage (the example's stage 1 runs
    `workflows` and `flags-wired`), the finding lines of the check results."""
    shutil.copy(REPO / "migration.yaml", tmp_path)
    shutil.copytree(REPO / "stages", tmp_path / "stages")
    script = (
        "import sys\n"
        "from stagegate.cli import run\n"
        "code = run(['status'])\n"
        "print(code)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('stagegate.report.', "
        "'stagegate.commands.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    *_, built, reports = done.stdout.splitlines()
    assert built == "0"
    assert reports == str(
        sorted(["stagegate.report.github", "stagegate.report.plans", "stagegate.report.results"])
    )


def test_the_listing_builds_every_command_once() -> None:
    names = list(cli.commands)
    assert len(set(names)) == len(names) == len(cli.commands)
    assert all(cli.commands[n] is cli.commands[n] for n in names)
    help_text = cli.get_help(click.Context(cli, info_name="stagegate"))
    for name in names:
        assert f"\n  {name} " in help_text
