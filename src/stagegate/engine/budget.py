"""The work budget of a command: how many questions the glob engine may answer.

``globs.budget`` enforces a limit; this module sizes it from the migration, so that
every command may do work in proportion to what it reads, and no input can make one
run for days."""

from __future__ import annotations

from functools import lru_cache

from stagegate.engine import globs
from stagegate.model import Migration
from stagegate.model.templates import row_count

WORK_PER_ROW = 1_000
"""Work allowed per artifact or select row per stage evaluated, on top of ``globs.MAX_WORK``.

Checks ask questions in proportion to the rows (the prefix index keeps each row's
candidates few, and answers are cached across stages): a migration of 100 copies of a
small one uses about 10 per row and stage (rows of one shape share their automata). Work that grows with the square of the rows
(templates with no fixed text in front, where every pair must be asked) outruns this
allowance quickly and is refused as too large, at the check that asked."""


MAX_WORK_CEILING = 100_000_000
"""The most work one command may do however large the input: a few minutes at worst.

Without it the allowance would grow with rows times stages, which the file limits
allow to reach days of work; the worked example needs about 37,500, a migration
of 100 copies of a small one about 330,000 (bench/run.py)."""


def work_limit(migration: Migration, stages: int = 1) -> int:
    """The work budget of checking ``stages`` stages of ``migration``: base plus a share per row."""
    return min(MAX_WORK_CEILING, globs.MAX_WORK + WORK_PER_ROW * _rows(migration) * stages)


@lru_cache(maxsize=8)
def _rows(migration: Migration) -> int:
    """Artifact and select rows of ``migration`` (once per load: each stage asks)."""
    from stagegate.engine.resolve import item_axes

    rows = sum(
        t.row_count(item_axes(migration, p))
        for p in migration.producers.values()
        for t in p.artifacts
    )
    rows += sum(
        row_count(i.select.parts, item_axes(migration, i))
        for c in migration.consumers.values()
        for i in c.inputs
    )
    return rows
