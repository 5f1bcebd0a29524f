"""Issue 37's attack 12, the rest of it: the cache stores derived data only and can never
turn a check off. Declarations are not stored at all (tests/checks/test_reads.py); the
parses, the validated migrations and the links of a tree are sealed with a key kept beside
the cache folder, not in it. Before, an entry written into the folder (a cache restored
from a pull request's job) was read: a parse of the migration with its failing `command`
check replaced made `check` pass. Each forged entry beside its control (the entry
stagegate wrote itself serves)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import init, pin_git
from stagegate.load import cache as disk_cache
from stagegate.load import loader

Sg = Callable[..., Result]

FAILING = """\
version: 1
migration: sealed
stage: 0
producers:
  p:
    artifacts: ["x"]
invariants:
  - check: command
    run: ["false"]
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (its key beside it), and a migration whose
    `command` check fails. Every load reads the folder: none is served from the
    migrations this process loaded before (``loader.MEMO_LOADS``)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(cache))
    monkeypatch.setattr(loader, "MEMO_LOADS", 0)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "migration.yaml").write_text(FAILING)
    return cache


def _forge(entry: Path, *, keep_seal: bool) -> None:
    """The entry's parse with the failing command replaced, as someone without the key
    writes it: plain JSON, or behind the seal line that was there."""
    mark, _, body = entry.read_bytes().partition(b"\n")
    data = json.loads(body)
    data["data"]["invariants"][0]["run"] = ["true"]
    forged = json.dumps(data).encode()
    entry.write_bytes(mark + b"\n" + forged if keep_seal else forged)


@pytest.mark.parametrize("keep_seal", [True, False], ids=["seal line kept", "plain json"])
def test_a_forged_parse_cannot_turn_a_check_off(
    sg: Sg, folder: Path, tmp_path: Path, keep_seal: bool
) -> None:
    root = tmp_path / "m"
    assert sg("check", cwd=root).code == 1
    (entry,) = (folder / "documents").glob("*.json")
    _forge(entry, keep_seal=keep_seal)
    result = sg("check", cwd=root)
    assert result.code == 1, result.output
    assert "        - `false` exited 1\n" in result.out, result.out


def test_the_parse_stagegate_stored_serves(
    sg: Sg, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the entry written by stagegate is read back, the file not parsed."""
    root = tmp_path / "m"
    assert sg("check", cwd=root).code == 1

    parsed: list[str] = []
    real = loader.read

    def counted(raw: bytes, shown: str) -> object:
        parsed.append(shown)
        return real(raw, shown)

    monkeypatch.setattr(loader, "read", counted)
    assert sg("check", cwd=root).code == 1
    assert parsed == []
    key = folder.with_name("cache.key")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32


def test_a_validity_entry_no_one_sealed_is_not_trusted(
    sg: Sg, folder: Path, tmp_path: Path
) -> None:
    """An invalid migration remembered as valid under the plain key, as the folder named
    it before: `validate` still refuses it. Control: stagegate's own entry is known."""
    root = tmp_path / "m"
    (root / "migration.yaml").write_text(FAILING.replace("stage: 0", "stage: 7"))
    raw = (root / "migration.yaml").read_bytes()
    plain = disk_cache.ValidCache.key([("migration.yaml", raw)])
    (folder / "valid").mkdir(parents=True)
    (folder / "valid" / plain).touch()
    result = sg("validate", cwd=root)
    assert result.code == 2, result.output
    (root / "migration.yaml").write_text(FAILING)
    assert sg("validate", cwd=root).code == 0
    good = disk_cache.ValidCache.key([("migration.yaml", (root / "migration.yaml").read_bytes())])
    assert disk_cache.ValidCache().known(good)
    assert not disk_cache.ValidCache().known(plain)


@pytest.mark.parametrize("how", ["others may write it", "a link"])
def test_a_key_others_could_have_written_turns_the_cache_off(
    sg: Sg, folder: Path, tmp_path: Path, how: str
) -> None:
    key = folder.with_name("cache.key")
    if how == "a link":
        (tmp_path / "elsewhere.key").write_bytes(os.urandom(32))
        key.symlink_to(tmp_path / "elsewhere.key")
    else:
        key.write_bytes(os.urandom(32))
        key.chmod(0o666)
    disk_cache.secret.cache_clear()
    try:
        assert sg("check", cwd=tmp_path / "m").code == 1
        assert not (folder / "documents").exists()
    finally:
        disk_cache.secret.cache_clear()


def test_a_forged_links_entry_is_not_read(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The links of a tree (kept per tree: its id is public) said to be none: the tree is
    listed again and its link found. Control: stagegate's own entry serves."""
    from stagegate.git import changes
    from stagegate.git.repo import Repository

    pin_git(monkeypatch)
    repo = init(tmp_path / "r")
    repo.write("target.txt", "x\n")
    (repo.root / "link").symlink_to("target.txt")
    commit = repo.commit("a link")
    tree = repo.git("rev-parse", f"{commit}^{{tree}}").strip()
    found = changes.tree_links(Repository(repo.root), commit)
    assert found == [("link", "target.txt")]
    entry = folder / "links" / f"{tree}.json"
    assert entry.exists()
    assert changes.tree_links(Repository(repo.root), commit) == found  # read back
    entry.write_text("[]")
    assert changes.tree_links(Repository(repo.root), commit) == found
