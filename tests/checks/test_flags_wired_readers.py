"""flags-wired: a flag that declares no `env` or `references` is wired when a workflow
reads it as docs/ci.md shows (issue 25)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import CASES, Result
from scratch import init, pin_git

Sg = Callable[..., Result]
CI = ".github/workflows/ci.yml"
READ = "if: fromJSON(needs.gate.outputs.flags)['py314']"


@pytest.mark.parametrize(
    ("reader", "wired"),
    [
        (READ, True),
        ("if: needs.gate.outputs.py314 == 'true'", True),
        ("if: always()\n    # run: stagegate flag py314 && make wheel-314", True),
        ("if: fromJSON(needs.gate.outputs.flags)['py3145']", False),  # another name
        ("if: needs.gate.outputs.py314-release == 'true'", False),
        ("if: always()", False),  # the control: nothing reads it
    ],
    ids=[
        "json-index",
        "output",
        "flag-command",
        "longer-name",
        "other-output",
        "none",
    ],
)
def test_documented_readers_wire_a_flag_without_references(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch, reader: str, wired: bool
) -> None:
    pin_git(monkeypatch)
    repo = init(tmp_path / "project")
    shutil.copytree(CASES / "lifecycle" / "python-versions", repo.root, dirs_exist_ok=True)
    repo.edit("migration.yaml", "    references: [\"['py314']\"]\n", "")
    repo.edit(CI, READ, reader)
    repo.commit("a flag without references")
    result = sg("check", "--all", "--format", "json", cwd=repo.root)
    (wiring,) = [
        r
        for r in json.loads(result.out)["results"]
        if r["check"] == "flags-wired" and r["stage"] == 1
    ]
    assert wiring["ok"] is wired, wiring
    if not wired:
        assert wiring["findings"][0]["message"].startswith(
            "flag py314 turns on at stage 1, but declares neither `env` nor `references`, and "
            "no workflow reads it as docs/ci.md shows (fromJSON(needs.JOB.outputs.flags)"
            "['py314'], needs.JOB.outputs.py314, `stagegate flag py314`)"
        )
