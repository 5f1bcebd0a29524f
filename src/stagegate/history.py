"""stagegate log: the stage flips, read from the git history of migration.yaml.

Each version of the file in ``git log --follow`` order (renames followed, merges
that only bring a branch's change in left out) is read from git objects and its
``stage:`` taken with the located YAML reader; a flip is a version whose stage
differs from that of the version before it. Versions that cannot be read (not
YAML, no whole-number stage) are listed as skipped; the next readable one is
compared with the last readable one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .errors import GitError, InvalidInput
from .gitrepo import FileVersion, GitSource, Repository, open_migration
from .load import STAGE_FILE
from .yamlsrc import decode, parse


@dataclass(frozen=True, slots=True)
class Flip:
    commit: str
    date: str
    author: str
    email: str
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


@dataclass(frozen=True, slots=True)
class Start:
    commit: str
    date: str
    author: str
    email: str
    stage: int


@dataclass(slots=True)
class History:
    file: str
    start: Start | None = None
    flips: list[Flip] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (commit, why)
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
            data = parse(decode(source.read(f"{stages_dir}/{name}"), name), name).data
        except (InvalidInput, OSError):
            return "(unreadable stage file)"
        title = data.get("title") if isinstance(data, dict) else None
        return " ".join(str(title).split()) if title else "(untitled)"
    return "(no stage file)"


def read(repo: Repository, rel: PurePosixPath) -> History:
    """The flips of the migration file at ``rel`` (repository-relative), oldest first."""
    versions: list[FileVersion] = list(reversed(repo.file_history(rel)))
    if not versions:
        raise GitError(
            f"{rel} has no history in this repository (never committed, or not tracked); "
            "commit it first."
        )
    history = History(file=str(rel), shallow=repo.is_shallow())
    last: int | None = None
    for version in versions:
        path = PurePosixPath(version.path)
        source = repo.source(version.commit, path.parent)
        try:
            raw = source.read(path.name)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            history.skipped.append((version.commit, f"{path} is not in this commit (deleted)"))
            continue
        try:
            stage, stages_dir = _stage_and_dir(parse(decode(raw, str(path)), str(path)).data)
        except InvalidInput as error:
            first = error.problems[0] if error.problems else None
            history.skipped.append((version.commit, str(first) if first else "not valid YAML"))
            continue
        except ValueError as error:
            history.skipped.append((version.commit, f"{path}: {error}"))
            continue
        if last is None:
            history.start = Start(
                version.commit, version.date, version.author, version.email, stage
            )
        elif stage != last:
            history.flips.append(
                Flip(
                    commit=version.commit,
                    date=version.date,
                    author=version.author,
                    email=version.email,
                    subject=version.subject,
                    path=str(path),
                    old=last,
                    new=stage,
                    title=_title(source, stages_dir, stage),
                )
            )
        last = stage
    return history


def log(file: str) -> History:
    return read(*open_migration(file))
