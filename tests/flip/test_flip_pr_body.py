"""Issue #24, item 8: `--pr-body` never overwrites the migration it describes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import write_small

Sg = Callable[..., Result]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _link(root: Path, name: str, to: str) -> str:
    (root / name).symlink_to(to)
    return name


def _hard(root: Path, name: str, to: str) -> str:
    os.link(root / to, root / name)
    return name


OWN: dict[str, tuple[Callable[[Path], str], str]] = {
    "the migration file": (lambda r: "migration.yaml", "the migration file migration.yaml"),
    "the migration file by another path": (
        lambda r: "stages/../migration.yaml",
        "the migration file migration.yaml",
    ),
    "a stage file": (
        lambda r: "stages/02-extra.yaml",
        "the stage file stages/02-extra.yaml",
    ),
    "a symbolic link to the migration file": (
        lambda r: _link(r, "pr.md", "migration.yaml"),
        "the migration file migration.yaml",
    ),
    "a link to a link to a stage file": (
        lambda r: _link(r, "pr.md", _link(r, "hop.md", "stages/01-narrow.yaml")),
        "the stage file stages/01-narrow.yaml",
    ),
    "a hard link to a stage file": (
        lambda r: _hard(r, "pr.md", "stages/03-final.yaml"),
        "the stage file stages/03-final.yaml",
    ),
    "a new file in the stages folder": (
        lambda r: "stages/04-next.yaml",
        "in the stages folder stages/",
    ),
}


@pytest.mark.parametrize("command", ["advance", "advance --dry-run", "rollback"])
@pytest.mark.parametrize("target", OWN)
def test_a_pr_body_that_is_the_migrations_own_file_is_refused(
    target: str, command: str, tmp_path: Path, sg: Sg
) -> None:
    root = tmp_path / "m"
    write_small(root)
    if command == "rollback":
        (root / "migration.yaml").write_text(
            (root / "migration.yaml").read_text().replace("stage: 0\n", "stage: 1\n")
        )
    make, what = OWN[target]
    body = make(root)
    before = _snapshot(root)
    result = sg(*command.split(), "--pr-body", body, cwd=root)
    assert result.code == 2, result.output
    assert result.err == (
        f"--pr-body {body}: that is {what}; the description would overwrite the "
        "migration. Name a file outside it (e.g. pr.md at the top of the repository); nothing "
        "was written.\n"
    )
    assert _snapshot(root) == before


@pytest.mark.parametrize("command", ["advance", "advance --dry-run"])
def test_a_pr_body_beside_the_migration_is_written(command: str, tmp_path: Path, sg: Sg) -> None:
    """The control: a file of its own, also one named like a stage file outside the
    stages folder."""
    root = tmp_path / "m"
    write_small(root)
    for name in ("pr.md", "02-extra.yaml"):
        result = sg(*command.split(), "--pr-body", name, cwd=root)
        assert result.code == 0, result.output
        assert (root / name).read_text().startswith("## small: stage ")
        if command == "advance":
            sg("rollback", cwd=root)
