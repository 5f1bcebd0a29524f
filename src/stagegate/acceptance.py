"""Which checks apply at a stage, and running them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from . import globs
from .checks import kinds
from .checks._base import Context, Result
from .errors import TooComplex
from .model import Check, Migration


def checks_at(migration: Migration, stage: int) -> tuple[Check, ...]:
    """The invariants plus the stage's own acceptance (stage 0 has only invariants)."""
    definition = migration.stage_def(stage)
    return (*migration.invariants, *(definition.acceptance if definition else ()))


def run_checks(
    migration: Migration,
    stage: int,
    checks: Sequence[Check] | None = None,
    *,
    root: Path | None = None,
    evaluated_at: Migration | None = None,
) -> list[Result]:
    """Run ``checks`` (default: those of ``stage``) evaluated at ``stage``.

    ``evaluated_at`` is the migration whose producers, consumers and releases the
    checks look at; by default the one the checks come from. ``verify-pr`` uses it
    to run the base's checks against the head's items."""
    subject = evaluated_at or migration
    registry = kinds()
    ctx = Context(subject, stage, root if root is not None else subject.root)
    results: list[Result] = []
    with globs.budget():
        for check in checks if checks is not None else checks_at(migration, stage):
            results.extend(_run_one(registry[check.kind].run, ctx, check))
    return results


def _run_one(
    run: Callable[[Context, Check], list[Result]], ctx: Context, check: Check
) -> list[Result]:
    """One check; a question the glob engine refuses is the input's fault, not a bug.

    It becomes a located error (exit 2) at the check: a pattern too complex to decide
    (where ``match`` did not already name its glob), or the run's work budget spent."""
    try:
        return run(ctx, check)
    except globs.PatternError as exc:
        raise TooComplex(
            check.loc, f"{check.describe()} at stage {ctx.stage}: {exc.message}"
        ) from None


def run_all(migration: Migration, *, root: Path | None = None) -> list[Result]:
    """Every stage 0..last, each evaluated at itself."""
    results: list[Result] = []
    with globs.budget():  # one budget for the whole run: hostile input cannot multiply it
        for stage in range(migration.last + 1):
            results.extend(run_checks(migration, stage, root=root))
    return results
