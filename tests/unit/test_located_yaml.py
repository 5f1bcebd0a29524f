"""One located-YAML layer: yamlsrc reads every file, once per command, and the model
keeps what later commands need (the bytes of `stage:`, where `reversible:` is)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import REPO, Result
from scratch import SMALL, pin_git, small_repo, write_small
from stagegate.errors import InvalidInput, Loc
from stagegate.load import yamlsrc
from stagegate.validation import load

Sg = Callable[..., Result]


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[tuple[str, str]]]:
    """Every (file, text) yamlsrc parses while the test runs."""
    seen: Counter[tuple[str, str]] = Counter()
    real = yamlsrc.parse

    def counting(text: str, file: str, *, offset: int = 0) -> yamlsrc.Document:
        seen[(file, text)] += 1
        return real(text, file, offset=offset)

    monkeypatch.setattr(yamlsrc, "parse", counting)
    monkeypatch.setattr(yamlsrc, "_recent", {})  # nothing read by an earlier test
    monkeypatch.setenv("STAGEGATE_NO_CACHE", "1")  # every file is parsed, none read from the cache
    yield seen


_IMPORT_LINE_NAMING_YAML = re.compile(r"^[ \t]*(?:import|from)\b[^\n]*(?:\\\n[^\n]*)*\byaml\b", re.M)
"""A statement starting ``import`` or ``from`` whose line (or backslash-continued lines)
names ``yaml``: every import of the module is one; the AST decides which really are."""


def test_only_yamlsrc_imports_pyyaml() -> None:
    importers = []
    for path in sorted((REPO / "src" / "stagegate").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not _IMPORT_LINE_NAMING_YAML.search(text):
            continue  # no import of it can be in a module that never names it on an import line
        for node in ast.walk(ast.parse(text)):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            if any(name == "yaml" or name.startswith("yaml.") for name in names):
                importers.append(path.name)
    assert sorted(set(importers)) == ["yamlsrc.py"]


@pytest.mark.parametrize(
    "prefix", [b"", b"\xef\xbb\xbf", "# caf\u00e9 \u2192 na\u00efve\r\n".encode()]
)
def test_the_model_keeps_the_bytes_of_the_stage_value(tmp_path: Path, prefix: bytes) -> None:
    write_small(tmp_path)
    raw = prefix + SMALL.replace("stage: 0\n", "stage: &s !!int 0x0  # now\n").encode()
    (tmp_path / "migration.yaml").write_bytes(raw)
    migration = load(tmp_path / "migration.yaml")
    assert migration.stage_span is not None
    start, end = migration.stage_span
    assert raw[start:end] == b"0x0"
    assert raw[:start].endswith(b"stage: &s !!int ")


def test_a_stage_written_through_an_alias_or_quoted_has_no_span(tmp_path: Path) -> None:
    write_small(tmp_path)
    text = SMALL.replace("version: 1\n", "version: &one 1\n")
    for written in ("*one", '!!int "0"'):
        (tmp_path / "migration.yaml").write_text(text.replace("stage: 0\n", f"stage: {written}\n"))
        assert load(tmp_path / "migration.yaml").stage_span is None


def test_the_model_keeps_where_reversible_is_written(tmp_path: Path) -> None:
    write_small(tmp_path)
    migration = load(tmp_path / "migration.yaml")
    final = migration.stage_def(3)
    assert final is not None and not final.reversible
    assert final.reversible_loc is not None
    lines = (tmp_path / final.file).read_text().splitlines()
    assert lines[final.reversible_loc.line - 1].startswith("reversible: false")
    first = migration.stage_def(1)
    assert first is not None and first.reversible and first.reversible_loc is None


def test_advance_parses_each_file_once(
    small_dir: Path, sg: Sg, parsed: Counter[tuple[str, str]]
) -> None:
    result = sg("advance", cwd=small_dir)
    assert result.code == 0, result.output
    assert parsed and max(parsed.values()) == 1, parsed.most_common(3)
    files = Counter(file for file, _text in parsed)
    assert files["migration.yaml"] == 2  # the file as read, and the edit read back
    assert all(count == 1 for file, count in files.items() if file != "migration.yaml")


def test_rollback_names_the_line_without_reading_the_stage_again(
    small_dir: Path, sg: Sg, parsed: Counter[tuple[str, str]]
) -> None:
    (small_dir / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 3"))
    result = sg("rollback", "--dry-run", cwd=small_dir)
    assert result.code == 1
    assert "(stages/03-final.yaml:6: reversible: false)" in result.err
    assert max(parsed.values()) == 1, parsed.most_common(3)


def test_log_parses_each_version_once(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch, parsed: Counter[tuple[str, str]]
) -> None:
    pin_git(monkeypatch)
    repo = small_repo(tmp_path / "repo")
    for old, new in ((0, 1), (1, 2), (2, 1), (1, 2)):
        repo.edit("migration.yaml", f"\nstage: {old}\n", f"\nstage: {new}\n")
        repo.commit(f"{old} -> {new}")
    result = sg("log", cwd=repo.root)
    assert result.code == 0, result.output
    assert "4 stage flips" in result.out
    assert parsed and max(parsed.values()) == 1, parsed.most_common(3)


@pytest.fixture
def small_dir(tmp_path: Path) -> Path:
    write_small(tmp_path)
    return tmp_path


def test_verify_pr_parses_each_file_once(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch, parsed: Counter[tuple[str, str]]
) -> None:
    """The base and the head hold the same stage files: each is read once, not once a ref."""
    pin_git(monkeypatch)
    repo = small_repo(tmp_path / "repo")
    repo.edit("migration.yaml", "\nstage: 0\n", "\nstage: 1\n")
    repo.commit("Flip to stage 1")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert parsed and max(parsed.values()) == 1, parsed.most_common(3)


def test_the_reader_survives_pyyaml_imported_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester's in-process runs (a stage test author's own plugin tests) delete `yaml`
    from sys.modules and import it again; libyaml's extension keeps the classes of its
    first import, so its events and errors are not the new `yaml`'s classes."""
    import sys

    yamlsrc.parse("a: 1\n", "first.yaml")
    first = sys.modules["yaml"]
    for name in [n for n in sys.modules if n == "yaml" or n.startswith("yaml.")]:
        monkeypatch.delitem(sys.modules, name)
    import yaml  # a second copy of the module

    assert yaml is not first and yaml.ScalarEvent is not first.ScalarEvent
    doc = yamlsrc.parse("a: [1, 2]\nb: {c: d}\n", "again.yaml")
    assert doc.data == {"a": [1, 2], "b": {"c": "d"}}
    assert doc.loc(("b", "c")) == Loc("again.yaml", 2, 8)
    with pytest.raises(InvalidInput) as broken:
        yamlsrc.parse("a: [1,\n", "broken.yaml")
    assert str(broken.value.problems[0].loc).startswith("broken.yaml:")
    assert "invalid YAML" in broken.value.problems[0].message
