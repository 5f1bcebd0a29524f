"""`continuity`: the core of the command, with the base's `workflows` settings where a
migration file exists there (the remote actions it declares under `workflows.actions`)."""

from __future__ import annotations

from pathlib import Path

from stagegate.ci.continuity import Continuity
from stagegate.git.objects import GitSource
from stagegate.model import WorkflowSettings


def continuity(file: str, base_ref: str, head_ref: str | None) -> Continuity:
    """Compare what the release jobs ship at ``base_ref`` and ``head_ref``; the base's
    migration file, where it has one, says what its remote actions move."""
    from stagegate.ci.continuity import continuity as compare

    def settings(source: GitSource) -> WorkflowSettings | None:
        from stagegate.commands.gate import _load_at

        found = _load_at(file, source, "the base")
        return found.workflows if found is not None else None

    return compare(Path(file).parent, base_ref, head_ref, settings=settings, file=file)
