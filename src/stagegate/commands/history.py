"""stagegate history: every stage of the migration, done, current or ahead.

Like ``alembic history --indicate-current``: each stage with its title, the commit and
date of the flip that reached it (from ``log``, the git history of migration.yaml),
and for each stage ahead its readiness, the checks of that stage that read the
repository as it is today, run now (what still blocks that flip).
"""

from __future__ import annotations

from stagegate.checks.base import Readiness
from stagegate.checks.runner import readiness
from stagegate.commands.log import Flip, Start
from stagegate.commands.log import log as read_log
from stagegate.model import Migration
from stagegate.records import record


@record(kw_only=True)
class Entry:
    """One stage: where it stands, how it was reached, and (ahead) its readiness."""

    stage: int
    state: str  # "done", "current" or "ahead"
    title: str
    file: str | None  # its stage file; None for stage 0
    flip: Flip | None = None  # the last flip that reached it (done or current)
    start: Start | None = None  # stage 0: the commit the migration file was added in
    readiness: Readiness | None = None  # ahead only


@record(kw_only=True)
class Timeline:
    migration: Migration
    entries: tuple[Entry, ...]
    shallow: bool = False  # a shallow clone: flips before its boundary are not known


def state(stage: int, current: int) -> str:
    return "done" if stage < current else "current" if stage == current else "ahead"


def history(migration: Migration) -> Timeline:
    """Every stage 0..last of ``migration``; raises ``GitError`` outside a repository or
    when the file was never committed (as ``log`` does)."""
    found = read_log(migration.file)
    reached: dict[int, Flip] = {}
    for flip in found.flips:  # oldest first: the last flip into a stage wins
        reached[flip.new] = flip
    entries = []
    for stage in range(migration.last + 1):
        where = state(stage, migration.stage)
        definition = migration.stage_def(stage)
        entries.append(
            Entry(
                stage=stage,
                state=where,
                title=migration.title(stage),
                file=definition.file if definition else None,
                flip=reached.get(stage) if where != "ahead" and stage else None,
                start=found.start if stage == 0 else None,
                readiness=readiness(migration, stage) if where == "ahead" else None,
            )
        )
    return Timeline(migration=migration, entries=tuple(entries), shallow=found.shallow)
