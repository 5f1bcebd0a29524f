"""stagegate log: the stage flips, read from the git history of migration.yaml.

Each version of the file in ``git log --follow`` order (renames followed, merges
that only bring a branch's change in left out) is read from git objects and its
``stage:`` taken with the located YAML reader; a flip is a version whose stage
differs from that of the file in its commit's first parent (where that cannot be
read: from the last readable version). Versions that cannot be read (not YAML, no
whole-number stage) are listed as skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from stagegate.errors import GitError, InvalidInput
from stagegate.git.objects import GitSource
from stagegate.git.repo import FileVersion, Repository, open_migration
from stagegate.load.sources import STAGE_FILE
from stagegate.load.yamlsrc import read as read_yaml
from stagegate.records import record


@record
class Flip:
    """A version of the file whose stage differs from its parent's (fields in the
    order of ``FileVersion``'s, which they come from, then the stage change)."""

    commit: str
    author: str
    email: str
    date: str
    subject: str
    path: str  # the migration file's path at that commit
    old: int
    new: int
    title: str  # the title of stage ``new`` in that commit's stage files

    @property
    def direction(self) -> str:
        if self.new == self.old + 1:
            return "advance"
        if self.new == self.old - 1:
            return "rollback"
        return "jump"


@record
class Start:
    commit: str
    date: str
    author: str
    email: str
    stage: int
    boundary: bool = False  # the oldest commit of a shallow clone: the file may be older


@record(kw_only=True)
class History:
    file: str
    start: Start | None = None
    flips: tuple[Flip, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (commit, why)
    shallow: bool = False  # a shallow clone: the history starts at its boundary


def _stage_and_dir(data: Any) -> tuple[int, str]:
    if not isinstance(data, dict):
        raise ValueError("not a mapping")
    stage = data.get("stage")
    if not isinstance(stage, int) or isinstance(stage, bool):
        raise ValueError("no whole-number `stage:`")
    stages_dir = data.get("stages_dir", "stages")
    return stage, stages_dir if isinstance(stages_dir, str) and stages_dir else "stages"


def _title(source: GitSource, stages_dir: str, number: int) -> str:
    if number == 0:
        return "before the migration"
    try:
        entries = source.listdir(stages_dir)
    except (FileNotFoundError, NotADirectoryError):
        return "(no stage file)"
    for name, is_dir in entries:
        match = STAGE_FILE.fullmatch(name)
        if is_dir or not match or int(match["number"]) != number:
            continue
        try:
            data = read_yaml(source.read(f"{stages_dir}/{name}"), name).data
        except (InvalidInput, OSError):
            return "(unreadable stage file)"
        title = data.get("title") if isinstance(data, dict) else None
        return " ".join(str(title).split()) if title else "(untitled)"
    return "(no stage file)"


class _Unreadable(Exception):
    """A version of the file whose stage cannot be read; the message says why."""


def _version(repo: Repository, commit: str, path: PurePosixPath) -> tuple[int, str, GitSource]:
    """The stage and stages folder of the file at ``path`` in ``commit``, and that commit's files."""
    source = repo.source(commit, path.parent)
    try:
        raw = source.read(path.name)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise _Unreadable(f"{path} is not in this commit (deleted)") from None
    try:
        stage, stages_dir = _stage_and_dir(read_yaml(raw, str(path)).data)
    except InvalidInput as error:
        first = error.problems[0] if error.problems else None
        raise _Unreadable(str(first) if first else "not valid YAML") from None
    except ValueError as error:
        raise _Unreadable(f"{path}: {error}") from None
    return stage, stages_dir, source


def _parent_stage(
    repo: Repository, commit: str, paths: Sequence[PurePosixPath | None]
) -> int | None:
    """The stage of the file in ``commit``'s first parent (under the first of ``paths``
    there), or None when it cannot be read there.

    A flip is judged against the commit it was made on, not against the version
    listed before it: in a history with merges that one can be on another branch."""
    parent = repo.first_parent(commit)
    if parent is None:
        return None
    for path in dict.fromkeys(p for p in paths if p is not None):
        try:
            return _version(repo, parent, path)[0]
        except (_Unreadable, GitError):
            continue
    return None


def read(repo: Repository, rel: PurePosixPath) -> History:
    """The flips of the migration file at ``rel`` (repository-relative), oldest first."""
    versions: list[FileVersion] = list(reversed(repo.file_history(rel)))
    if not versions:
        raise GitError(
            f"{rel} has no history in this repository (never committed, or not tracked); "
            "commit it first."
        )
    shallow = repo.is_shallow()
    start: Start | None = None
    flips: list[Flip] = []
    skipped: list[tuple[str, str]] = []
    last: int | None = None  # the stage of the last readable version
    older: PurePosixPath | None = None  # the file's path in the version listed before
    for version in versions:
        path = PurePosixPath(version.path)
        try:
            stage, stages_dir, source = _version(repo, version.commit, path)
        except _Unreadable as why:
            skipped.append((version.commit, str(why)))
            older = path
            continue
        if last is None:
            boundary = version.commit in repo.shallow_boundary()
            start = Start(
                version.commit, version.date, version.author, version.email, stage, boundary
            )
        else:
            before = _parent_stage(repo, version.commit, (path, older))
            old = last if before is None else before
            if stage != old:
                title = _title(source, stages_dir, stage)
                flips.append(Flip(*_about(version), str(path), old, stage, title))
        last, older = stage, path
    return History(
        file=str(rel),
        start=start,
        flips=tuple(flips),
        skipped=tuple(skipped),
        shallow=shallow,
    )


def _about(version: FileVersion) -> tuple[str, str, str, str, str]:
    """Who made the version, when and why: the first fields of a ``Flip``."""
    return version.commit, version.author, version.email, version.date, version.subject


def log(file: str) -> History:
    return read(*open_migration(file))
