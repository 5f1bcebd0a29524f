"""An artifact template's `exclude` and `rows`: the rows it has, and what `matrix` gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from stagegate.model.templates import Axis, assignments, row_count, split

Sg = Callable[..., Result]

AXES = {
    "os": Axis("os", values=("ubuntu", "macos", "windows")),
    "py": Axis("py", values=("3.10", "3.11")),
    "sha": Axis("sha", pattern="[0-9a-f]{40}"),
}


@pytest.mark.parametrize(
    ("exclude", "rows", "expected"),
    [
        ((), None, 6),
        (((("os", "windows"), ("py", "3.10")),), None, 5),
        (((("os", "windows"),),), None, 4),  # a partial entry drops every row it agrees with
        (((("os", "windows"),), (("py", "3.10"),)), None, 2),
        ((), ((("os", "macos"), ("py", "3.11")),), 1),
        (
            ((("py", "3.11"),),),
            ((("os", "macos"), ("py", "3.11")), (("py", "3.10"), ("os", "ubuntu"))),
            1,
        ),
    ],
)
def test_rows_are_the_product_or_the_list_minus_the_exclude(
    exclude: tuple[tuple[tuple[str, str], ...], ...],
    rows: tuple[tuple[tuple[str, str], ...], ...] | None,
    expected: int,
) -> None:
    parts = split("wheel-{os}-{py}-{sha}")
    found = list(assignments(parts, AXES, exclude=exclude, rows=rows))
    assert len(found) == expected == row_count(parts, AXES, exclude=exclude, rows=rows)
    assert all([k for k, _ in a] == ["os", "py"] for a in found)  # the template's order


MIGRATION = """\
version: 1
migration: rows
stage: 0
axes:
  os: [ubuntu, macos, windows]
  py: ["3.10", "3.11"]
  sha: {pattern: "[0-9a-f]{40}"}
producers:
  test:
    artifacts:
      - name: "dist-{os}-{py}"
        exclude: [{os: windows, py: "3.10"}]
  build:
    artifacts:
      - "wheels-{os}-{sha}"
      - name: "wheels-{os}-riscv64-{sha}"
        rows: [{os: ubuntu}]
  irregular:
    artifacts:
      - name: "pkg-{os}-all"
        rows: [{os: ubuntu}, {os: macos}]
      - name: "pkg-{os}-{py}"
        rows: [{os: windows, py: "3.11"}]
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "migration.yaml").write_text(MIGRATION, encoding="utf-8")
    return tmp_path


def matrix(sg: Sg, root: Path, producer: str) -> list[dict[str, str]]:
    result = sg("matrix", producer, cwd=root)
    assert result.code == 0, result.output
    rows: list[dict[str, str]] = json.loads(result.out)["include"]
    return rows


def test_plan_lists_only_the_rows_left(root: Path, sg: Sg) -> None:
    result = sg("plan", "--rows", cwd=root)
    assert result.code == 0, result.output
    assert "dist-windows-3.11 (os=windows py=3.11)" in result.out
    assert "dist-windows-3.10" not in result.out
    assert "wheels-ubuntu-riscv64-{sha} (os=ubuntu)" in result.out
    assert "wheels-macos-riscv64" not in result.out
    short = sg("plan", cwd=root).out
    assert (
        "dist-{os}-{py}  [5 rows: os=ubuntu,macos,windows x py=3.10,3.11 minus 1 exclude]" in short
    )
    assert "wheels-{os}-riscv64-{sha}  [1 row: listed]" in short


def test_matrix_gives_one_object_per_row_of_the_job(root: Path, sg: Sg) -> None:
    assert matrix(sg, root, "test") == [
        {"os": o, "py": p}
        for o in ("ubuntu", "macos", "windows")
        for p in ("3.10", "3.11")
        if (o, p) != ("windows", "3.10")
    ]
    # the riscv row's assignment is one of the other template's: the same job row
    assert matrix(sg, root, "build") == [{"os": "ubuntu"}, {"os": "macos"}, {"os": "windows"}]
    # templates over different axes: each row once, none made up
    assert matrix(sg, root, "irregular") == [
        {"os": "ubuntu"},
        {"os": "macos"},
        {"os": "windows", "py": "3.11"},
    ]


def test_drift_and_checks_see_the_rows_left(root: Path, sg: Sg) -> None:
    """unique-artifacts counts the rows left; a release selecting them counts them too."""
    (root / "migration.yaml").write_text(
        MIGRATION
        + 'releases:\n  r:\n    tags: ["v*"]\n    select: ["dist-*"]\n'
        + "invariants:\n  - check: unique-artifacts\n  - check: release-continuity\n    tag: v1\n",
        encoding="utf-8",
    )
    result = sg("check", cwd=root)
    assert result.code == 0, result.output
    assert (
        "unique-artifacts: 12 artifact rows of active producers have distinct names" in result.out
    )
    assert "release r selects the same 5 artifact names as at stage 0" in result.out
