"""`affected`: what a change makes a stage build, test, reuse and release.

Reads the change from git (``git.changes.gather``: the paths that differ between the
merge base and the head, the symbolic links of both trees, the baseline file) and hands
it to ``engine.affected``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stagegate.engine.affected import Affected
    from stagegate.model import Migration


def plan_change(
    migration: Migration,
    stage: int,
    *,
    base: str,
    head: str | None = None,
    baseline: str | None = None,
) -> Affected:
    """`affected`'s core: the plan of ``stage`` for the change from the merge base of
    ``base`` and ``head`` (default HEAD) to ``head``, with ``baseline`` (a file) read."""
    from stagegate.engine.affected import affected, prepare
    from stagegate.git.changes import model_paths, open_change

    repo, change = open_change(
        migration.root, base, head or "HEAD", baseline, meanwhile=lambda: prepare(migration, stage)
    )
    return affected(migration, stage, change, model=model_paths(repo, migration))
