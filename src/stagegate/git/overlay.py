"""The trees verify-pr runs file-reading checks in, built so the head cannot steer them.

Two folders are involved:

* the **head tree**: the head commit's files, where ``command``, ``retired`` and the
  like look (the user's work tree when it is the head commit with no tracked changes,
  else a temporary ``git worktree`` of the head, removed afterwards);
* the **base's test copy**: a fresh temporary folder, outside the head tree, holding
  the base's version of everything that decides what a ``pytest`` check runs: the
  stage's test folder (wherever the head moved or linked it), the other files of the
  base's stages folder (conftest.py, helper modules and packages), and every
  conftest.py and pytest configuration file from the top of the repository down to
  them. pytest runs the copy with its root there (``--rootdir``, ``--confcutdir``),
  its working directory the head tree, and Python's safe-path mode, so nothing of
  the head tree is importable by accident.

Files come from git objects, never from a work tree; symbolic links of the base are
not followed, so the copy holds only regular files written by stagegate.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from stagegate.git.objects import GitSource
from stagegate.git.repo import Repository
from stagegate.load.sources import STAGE_FILE
from stagegate.model import Check, Migration
from stagegate.records import record

# What decides how pytest runs the stage tests, besides the tests themselves: a
# conftest.py hook can turn any failure into a pass, an ini file's addopts can load a
# plugin. Looked for in every folder from the top of the repository down to the tests.
PYTEST_FILES = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
STAGE_DIR = re.compile(r"[0-9]{2,}-[a-z0-9][a-z0-9-]*")
SENTINEL_INI = "[pytest]\n"
"""Written above the copy, so that pytest's search for a configuration file ends
there (in a folder stagegate made) when the base has none."""


@record
class TestCopy:
    """The base's test files: ``files`` by path from the top of the repository."""

    files: Mapping[str, bytes]
    targets: tuple[str, ...]  # what the checks run, paths from the migration's folder
    missing: tuple[str, ...]  # targets the base does not have
    candidates: tuple[str, ...] = ()  # conftest and configuration paths looked for


def _blob(source: GitSource, path: PurePosixPath | str) -> bytes | None:
    try:
        return source.read(PurePosixPath(path).as_posix())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _tree_files(source: GitSource, rel: PurePosixPath) -> dict[PurePosixPath, bytes] | None:
    """The regular files at ``rel`` (a folder's, or the file itself); None if absent."""
    try:
        inside = source.files(rel.as_posix())
    except NotADirectoryError:
        data = _blob(source, rel)
        return None if data is None else {rel: data}
    except FileNotFoundError:
        return None
    return {rel / name: data for name, data in inside.items()}


def base_tests(
    repo: Repository,
    base: Migration,
    base_commit: str,
    prefix: PurePosixPath,
    stage: int,
    checks: Sequence[Check],
) -> TestCopy:
    """Every file of the base that decides what the pytest ``checks`` at ``stage`` run."""
    top = repo.source(base_commit)
    targets = tuple(
        t for c in checks if c.kind == "pytest" if (t := base.pytest_folder(stage, c)) is not None
    )
    files: dict[PurePosixPath, bytes] = {}
    missing: list[str] = []
    stages = prefix / base.stages_dir
    folders: set[PurePosixPath] = {stages}
    for target in targets:
        rel = prefix / target
        found = _tree_files(top, rel)
        if found is None:
            missing.append(target)
        else:
            files.update(found)
        folders.add(rel if found and rel not in found else rel.parent)
    try:
        entries = top.listdir(stages.as_posix())
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for name, _is_dir in entries:
        if STAGE_FILE.fullmatch(name) or STAGE_DIR.fullmatch(name):
            continue
        files.update(_tree_files(top, stages / name) or {})
    candidates = {
        directory / name
        for folder in folders
        for directory in (folder, *folder.parents)
        for name in PYTEST_FILES
    }
    for path in candidates:
        data = _blob(top, path)
        if data is not None:
            files[path] = data
    return TestCopy(
        files={p.as_posix(): d for p, d in sorted(files.items())},
        targets=targets,
        missing=tuple(missing),
        candidates=tuple(sorted(p.as_posix() for p in candidates)),
    )


def differing(copy: TestCopy, head: GitSource) -> list[str]:
    """The copied paths whose content at the head (``head``: from the top) differs, and
    the conftest and configuration files the head adds where pytest would look."""
    changed = {path for path, data in copy.files.items() if _blob(head, path) != data}
    changed |= {p for p in copy.candidates if p not in copy.files and _blob(head, p) is not None}
    return sorted(changed)


def _inside(top: Path, path: Path) -> bool:
    real = top.resolve()
    return real == path.resolve() or real in path.resolve().parents


def write_files(top: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (paths from ``top``) as new regular files; never outside ``top``."""
    for rel, data in files.items():
        posix = PurePosixPath(rel)
        if posix.is_absolute() or ".." in posix.parts:
            continue
        path = top / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(top, path.parent):
            continue
        path.write_bytes(data)


@contextmanager
def test_folder(copy: TestCopy) -> Iterator[Path]:
    """The copy written to a new private temporary folder (its top), removed afterwards."""
    parent = Path(tempfile.mkdtemp(prefix="stagegate-base-tests-"))
    top = parent / "tree"
    try:
        top.mkdir()
        (parent / "pytest.ini").write_text(SENTINEL_INI, encoding="utf-8")
        write_files(top, copy.files)
        yield top
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@contextmanager
def head_tree(
    repo: Repository, head_commit: str, prefix: PurePosixPath
) -> Iterator[tuple[Path, bool]]:
    """The migration's folder in a tree holding exactly the head commit's files, and
    whether that tree is a temporary checkout (the work tree is another commit, or has
    changes) rather than the work tree itself."""
    if repo.head() == head_commit and not repo.tracked_changes():
        yield repo.root / prefix, False
        return
    with repo.checkout_elsewhere(head_commit) as tree:
        yield tree / prefix, True
