"""A bug says so in one line, tells how to get the traceback, and exits 70.

The bug is real: a function stagegate calls raises an exception no user input
could cause. Only ``--traceback`` or ``STAGEGATE_TRACEBACK=1`` shows the traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CASES
from stagegate import cli
from stagegate.engine import resolve

VALID = CASES / "valid" / "valid-minimal"
ONE_LINE = (
    "stagegate: internal error (a bug): ZeroDivisionError: the resolver divided by zero; "
    "rerun with --traceback (or STAGEGATE_TRACEBACK=1) and report it.\n"
)


def _broken(*_args: object, **_kwargs: object) -> object:
    raise ZeroDivisionError("the resolver divided by zero")


@pytest.fixture
def bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """``plan`` calls ``resolve.resolve``; make it fail as a bug would."""
    monkeypatch.setattr(resolve, "resolve", _broken)
    # `--traceback` sets the variable for the rest of the process: let monkeypatch undo it.
    monkeypatch.setenv("STAGEGATE_TRACEBACK", "")


def _run(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.chdir(VALID)
    capsys.readouterr()
    code = cli.run(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_bug_is_one_line_and_exit_70(
    bug: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = _run(["plan"], capsys, monkeypatch)
    assert code == 70
    assert out == ""
    assert err == ONE_LINE
    assert "Traceback" not in err


def test_traceback_option_shows_it(
    bug: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _out, err = _run(["--traceback", "plan"], capsys, monkeypatch)
    assert code == 70
    assert err.startswith("Traceback (most recent call last):")
    assert "in _broken" in err
    assert err.rstrip().endswith("ZeroDivisionError: the resolver divided by zero")


def test_traceback_variable_shows_it(
    bug: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAGEGATE_TRACEBACK", "1")
    code, _out, err = _run(["plan"], capsys, monkeypatch)
    assert code == 70
    assert "Traceback (most recent call last):" in err
    assert "ZeroDivisionError: the resolver divided by zero" in err


def test_a_long_or_multiline_error_stays_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def noisy(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("first line\nsecond line\n" + "x" * 5000)

    monkeypatch.setattr(resolve, "resolve", noisy)
    code, _out, err = _run(["plan"], capsys, monkeypatch)
    assert code == 70
    assert err.count("\n") == 1
    assert "RuntimeError: first line second line xxx" in err
    assert len(err) < 400


def test_a_bug_in_a_real_process(tmp_path: Path) -> None:
    """The console entry point, with the bug planted before it starts: one line, exit 70."""
    program = (
        "import stagegate.engine.resolve as r\n"
        "def broken(*a, **k):\n"
        "    raise ZeroDivisionError('the resolver divided by zero')\n"
        "r.resolve = broken\n"
        "from stagegate.cli import main\n"
        "main()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "STAGEGATE_TRACEBACK"}
    done = subprocess.run(
        [sys.executable, "-c", program, "plan"],
        cwd=VALID,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 70
    assert done.stdout == ""
    assert done.stderr == ONE_LINE
    shown = subprocess.run(
        [sys.executable, "-c", program, "--traceback", "plan"],
        cwd=VALID,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 70
    assert "Traceback (most recent call last):" in shown.stderr
