"""The console script: the CLI is imported with the cyclic collector off, the command
runs with it on."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from stagegate import _console, cli


def test_the_command_runs_with_the_collector_on_and_the_import_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[bool, int]] = []

    def command() -> None:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        raise SystemExit(0)

    monkeypatch.setattr(cli, "main", command)
    try:
        with pytest.raises(SystemExit):
            _console.main()
    finally:
        gc.unfreeze()
    assert seen and seen[0][0] is True
    assert seen[0][1] > 0
    assert gc.isenabled()


def test_a_failing_import_leaves_the_collector_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "stagegate.cli", None)  # `from .cli import` fails
    try:
        with pytest.raises(ImportError):
            _console.main()
    finally:
        gc.unfreeze()
    assert gc.isenabled()


def test_importing_stagegate_leaves_the_collector_alone() -> None:
    code = (
        "import gc, stagegate, stagegate.cli, stagegate.pytest_plugin; "
        "print(gc.isenabled(), gc.get_freeze_count())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "0"], done.stderr


def test_the_installed_script_is_the_console_entry() -> None:
    script = Path(sys.executable).parent / "stagegate"
    if not script.exists():
        pytest.skip("no console script next to this interpreter")
    assert "from stagegate._console import main" in script.read_text(encoding="utf-8")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert done.returncode == 0
    assert "0.1.0" in done.stdout
