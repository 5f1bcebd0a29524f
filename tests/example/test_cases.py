"""The tree of example files: every invalid one exits 2 naming file, line and problem."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import CASES, Result

INVALID = sorted(p for p in (CASES / "invalid").iterdir() if p.is_dir())
VALID = sorted(p for p in (CASES / "valid").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", INVALID, ids=[p.name for p in INVALID])
def test_invalid_case_exits_2_and_names_the_place(
    case: Path, sg: Callable[..., Result], snapshot: Any
) -> None:
    """Its ``expected.txt`` is the whole of standard error, exactly (``--snapshot-update``
    writes it anew): every problem at its file, line and column, and the count."""
    result = sg("validate", cwd=case)
    assert result.code == 2, result.output
    assert result.out == ""
    snapshot.snapshot_dir = case
    snapshot.assert_match(result.err, "expected.txt")


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_valid_case_validates(case: Path, sg: Callable[..., Result], snapshot: Any) -> None:
    result = sg("validate", cwd=case)
    assert result.code == 0, result.output
    assert result.err == ""
    snapshot.snapshot_dir = case
    snapshot.assert_match(result.out, "expected.txt")


def test_invalid_case_as_json_lists_every_problem(sg: Callable[..., Result]) -> None:
    import json

    result = sg("validate", "--format", "json", cwd=CASES / "invalid" / "axis-value-not-string")
    assert result.code == 2
    report = json.loads(result.out)
    assert report["ok"] is False
    assert [(p["line"], p["col"]) for p in report["problems"]] == [(6, 8), (6, 13)]


def test_invalid_case_as_github_annotations(sg: Callable[..., Result]) -> None:
    result = sg("validate", "--format", "github", cwd=CASES / "invalid" / "unknown-flag-in-when")
    assert result.code == 2
    assert result.out.startswith(
        "::error file=migration.yaml,line=14,col=15,title=stagegate validate::"
    )


def test_the_cache_stays_small_as_files_are_edited(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every edit leaves a cache entry; storing past the bound removes the older half."""
    import shutil

    from stagegate.load import cache as disk_cache

    monkeypatch.setattr(disk_cache, "MAX_CACHE_ENTRIES", 4)
    cache = tmp_path / "cache"
    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(cache))
    shutil.copytree(CASES / "valid" / "valid-minimal", tmp_path / "m")
    migration = tmp_path / "m" / "migration.yaml"
    original = migration.read_text()
    for edit in range(8):
        migration.write_text(original.replace("A small migration", f"Edit {edit} of a migration"))
        assert sg("validate", cwd=tmp_path / "m").code == 0
    assert 1 <= len(list((cache / "valid").iterdir())) <= 4
    assert 1 <= len(list((cache / "documents").iterdir())) <= 5
    assert sg("validate", cwd=tmp_path / "m").code == 0  # the newest entries still serve


def test_a_process_counts_a_cache_folder_once_and_then_its_own_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entries a folder holds (another process's too) are counted at this process's
    first store there; its later stores are added to that count without reading the
    folder, until the count reaches the bound: then it is counted again, and pruned."""
    import os

    from stagegate.load import cache as disk_cache

    monkeypatch.setattr(disk_cache, "MAX_CACHE_ENTRIES", 10)
    folder = tmp_path / "documents"
    folder.mkdir()
    for n in range(12):  # left by another process long ago: over the bound already
        (folder / f"old-{n:02d}.json").write_text("{}")
        os.utime(folder / f"old-{n:02d}.json", (1_000_000 + n, 1_000_000 + n))
    scans: list[str] = []
    real = os.scandir

    def counted(path: Any) -> Any:
        scans.append(str(path))
        return real(path)

    monkeypatch.setattr(disk_cache.os, "scandir", counted)
    disk_cache.store_json(folder, folder / "new-00.json", {})  # 13 entries, counted: pruned to 7
    assert len(list(folder.iterdir())) == 7 and (folder / "new-00.json").exists()
    assert not (folder / "old-00.json").exists()  # the older half went
    scans.clear()
    for n in range(1, 4):  # 8, 9, 10 entries: this process's own count
        disk_cache.store_json(folder, folder / f"new-{n:02d}.json", {})
    assert scans == [] and len(list(folder.iterdir())) == 10
    (folder / "behind-its-back.json").write_text("{}")  # another process: 11
    disk_cache.store_json(folder, folder / "new-04.json", {})  # its count reaches 11: counted again
    assert scans and sorted(p.name[:3] for p in folder.iterdir()) == ["beh"] + ["new"] * 5


def test_the_cache_serves_the_same_files_shown_from_anywhere(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validated once by `validate` in its folder, the migration is not validated again
    when named by its absolute path (as the stage tests' process names it); a changed
    stage file is (the control)."""
    import shutil

    from stagegate.load import loader

    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(CASES / "valid" / "valid-minimal", tmp_path / "m")
    validated: list[str] = []
    real = loader.schema_problems

    def counted(kind: str, doc: Any, rules: Any) -> Any:
        validated.append(Path(doc.file).name)
        return real(kind, doc, rules)

    monkeypatch.setattr(loader, "schema_problems", counted)
    assert sg("validate", cwd=tmp_path / "m").code == 0
    first = list(validated)
    assert "migration.yaml" in first and len(first) >= 2  # the migration and its stages
    absolute = str(tmp_path / "m" / "migration.yaml")
    assert sg("-f", absolute, "validate", cwd=tmp_path).code == 0
    assert validated == first  # served by the cache
    stage = sorted((tmp_path / "m" / "stages").glob("*.yaml"))[0]
    stage.write_text(stage.read_text() + "# edited\n")
    assert sg("-f", absolute, "validate", cwd=tmp_path).code == 0
    assert validated[len(first) :] == first  # every file validated again
