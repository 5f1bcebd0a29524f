"""The Python API: ``stagegate.flags``, ``plan`` and ``matrix``, a clean namespace, and
errors worded for a caller of Python (no command-line options in them)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import stagegate
from conftest import REPO, Result

Sg = Callable[..., Result]
EXAMPLE = REPO / "migration.yaml"


def test_the_namespace_is_what_the_package_offers() -> None:
    assert stagegate.__all__ == ["StagegateError", "__version__", "flags", "matrix", "plan"]
    assert dir(stagegate) == sorted(stagegate.__all__)
    for hidden in ("Any", "os", "annotations", "TYPE_CHECKING"):
        assert hidden not in dir(stagegate)


def test_importing_stagegate_loads_nothing_else() -> None:
    code = (
        "import sys, stagegate; print(sorted(m for m in sys.modules if m.startswith('stagegate')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['stagegate']"


def test_plan_and_matrix_are_what_the_commands_print(sg: Sg) -> None:
    assert stagegate.plan(EXAMPLE, 3) == json.loads(
        sg("plan", "--stage", "3", "--format", "json", cwd=REPO).out
    )
    assert stagegate.matrix("bindings-cu12", EXAMPLE, stage=3) == json.loads(
        sg("matrix", "bindings-cu12", "--stage", "3", "--format", "json", cwd=REPO).out
    )
    # inactive at stage 0: no rows
    assert stagegate.matrix("bindings-cu12", EXAMPLE, stage=0) == {"include": []}
    assert stagegate.plan(EXAMPLE)["stage"] == stagegate.plan(EXAMPLE, None)["stage"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: stagegate.plan("nowhere/migration.yaml"),
            "nowhere/migration.yaml: no such file; give the path of the migration file, "
            "e.g. stagegate.flags('ci/migration.yaml').",
        ),
        (
            lambda: stagegate.flags(REPO / "stages"),
            f"{REPO / 'stages'}: is a folder; give the path of the migration file, e.g. "
            f"stagegate.flags({str(REPO / 'stages' / 'migration.yaml')!r}).",
        ),
        (
            lambda: stagegate.matrix("bindings-cu12", EXAMPLE, stage=99),
            f"stage 99 does not exist; {EXAMPLE} has stages 0..7.",
        ),
        (
            lambda: stagegate.plan(EXAMPLE, stage="3"),  # type: ignore[arg-type]
            "stage must be a whole number 0..7, not '3'.",
        ),
    ],
    ids=["missing", "folder", "no-such-stage", "not-a-number"],
)
def test_errors_read_well_in_python(call: Callable[[], object], message: str) -> None:
    with pytest.raises(stagegate.StagegateError) as raised:
        call()
    assert str(raised.value) == message
    assert "-f PATH" not in str(raised.value) and "--" not in str(raised.value)


def test_an_unknown_producer_names_the_closest_one() -> None:
    with pytest.raises(stagegate.StagegateError) as raised:
        stagegate.matrix("bindings-cu21", EXAMPLE)
    assert "no producer 'bindings-cu21' is declared; did you mean" in str(raised.value)
    # the control: a declared producer is no error
    assert "include" in stagegate.matrix("bindings-cu13", EXAMPLE)


def test_a_path_object_is_a_file_too(tmp_path: Path) -> None:
    assert stagegate.flags(EXAMPLE) == stagegate.flags(str(EXAMPLE))
