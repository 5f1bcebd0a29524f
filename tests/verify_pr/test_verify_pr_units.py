"""The smaller items of issue #11 (item 10), each as the failure a user saw."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import SMALL, write_small

Sg = Callable[..., Result]


def test_the_cache_revalidates_a_pytest_path_link_pointed_outside(tmp_path: Path, sg: Sg) -> None:
    root = tmp_path / "m"
    write_small(root)
    (root / "checks").mkdir()
    (root / "checks" / "test_x.py").write_text("def test_x():\n    pass\n")
    (root / "tests_link").symlink_to("checks")
    migration = root / "migration.yaml"
    migration.write_text(SMALL + "  - check: pytest\n    path: tests_link\n")
    assert sg("validate", cwd=root).code == 0
    assert sg("validate", cwd=root).code == 0  # now from the cache
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "tests_link").unlink()
    (root / "tests_link").symlink_to(outside)
    result = sg("validate", cwd=root)
    assert result.code == 2, result.output
    assert "pytest path 'tests_link' leads outside the repository" in result.err


@pytest.mark.parametrize("how", ["a file", "a missing folder"])
def test_stages_dir_naming_a_file_or_nothing_is_a_located_error(
    how: str, tmp_path: Path, sg: Sg
) -> None:
    write_small(tmp_path)
    (tmp_path / "migration.yaml").write_text(
        SMALL.replace("stage: 0\n", "stage: 0\nstages_dir: elsewhere\n")
    )
    if how == "a file":
        (tmp_path / "elsewhere").write_text("not a folder\n")
    result = sg("validate", cwd=tmp_path)
    assert result.code == 2, result.output
    expected = " is a file, not a folder" if how == "a file" else ": no such folder"
    assert f"migration.yaml:7:13: $.stages_dir: stages_dir 'elsewhere'{expected}" in result.err


def test_a_nul_byte_is_reported_where_it_is(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path)
    text = SMALL.replace("migration: small", "migration: sm\x00all")
    (tmp_path / "migration.yaml").write_text(text)
    result = sg("validate", cwd=tmp_path)
    assert result.code == 2, result.output
    assert "migration.yaml:4:14: invalid YAML: the character U+0000" in result.err


def test_many_plain_flags_are_not_called_an_alias_bomb(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path)
    flags = "".join(f"  f{n}: {{}}\n" for n in range(100_000))
    (tmp_path / "migration.yaml").write_text(SMALL.replace("flags:\n", "flags:\n" + flags))
    result = sg("validate", cwd=tmp_path)
    assert result.code == 2, result.output[:300]
    assert "alias" not in result.err
    assert "more than 200,000 values, the limit for one file" in result.err


def test_an_alias_bomb_is_still_called_one(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path)
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    for i in range(1, 7):
        bomb += f"{chr(97 + i)}: &{chr(97 + i)} [*{chr(96 + i)}" + f",*{chr(96 + i)}" * 9 + "]\n"
    (tmp_path / "migration.yaml").write_text(SMALL + bomb)
    result = sg("validate", cwd=tmp_path)
    assert result.code == 2
    assert "this looks like an alias bomb" in result.err


@pytest.mark.parametrize("key", ["null", "~", "Null", "NULL"])
def test_a_null_key_is_invalid_input_not_a_flag(key: str, tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path)
    (tmp_path / "migration.yaml").write_text(
        SMALL.replace("flags:\n", f"flags:\n  {key}:\n    summary: Nothing.\n")
    )
    result = sg("plan", "--format", "json", cwd=tmp_path)
    assert result.code == 2, result.output
    assert f"migration.yaml:10:3: the key {key!r} is YAML's null, not a name" in result.err


def test_a_quoted_null_is_a_name(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path)
    (tmp_path / "migration.yaml").write_text(
        SMALL.replace("flags:\n", "flags:\n  'null':\n    summary: Nothing.\n")
    )
    result = sg("plan", "--format", "json", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "null" in json.loads(result.out)["flags"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_stagegate_stops_its_command_check(sig: int, tmp_path: Path) -> None:
    """The command's own session (its process group) would otherwise keep running."""
    write_small(tmp_path)
    pid_file = tmp_path / "child.pid"
    script = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(120)\n"
    )
    (tmp_path / "migration.yaml").write_text(
        SMALL + f"  - check: command\n    run: [{json.dumps(sys.executable)}, -c, "
        f"{json.dumps(script)}]\n"
    )
    exe = Path(sys.executable).parent / "stagegate"
    proc = subprocess.Popen(
        [str(exe), "check"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # as a shell's foreground job: a background job (CI runners, `cmd &`) inherits
        # SIGINT ignored, and then Ctrl-C is rightly not delivered at all
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"stagegate: aborted." in err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(grandchild, signal.SIGKILL)
        pytest.fail("the command's child kept running after stagegate stopped")


def test_a_name_ending_in_a_line_break_is_not_an_id(tmp_path: Path, sg: Sg) -> None:
    """JSON Schema's ``$`` is the end of the text; Python's also matched before a final
    line break, so ``"extras\\n"`` passed as a producer id and ``"narrow\\n"`` as a flag."""
    write_small(tmp_path)
    text = SMALL.replace("  extras:\n", '  "extras\\n":\n').replace("  final:\n", '  "final\\n":\n')
    (tmp_path / "migration.yaml").write_text(text)
    result = sg("validate", cwd=tmp_path)
    assert result.code == 2, result.output
    assert "$.producers['extras\\n']: 'extras\\n' is not a valid id" in result.err
    assert "$.flags['final\\n']: 'final\\n' is not a valid flag name" in result.err
