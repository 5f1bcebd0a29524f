"""Which checks apply at a stage, and running them: the checks runner."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from .. import globs
from ..errors import TooComplex
from ..model import Check, Migration
from ..templates import row_count
from . import PURE_KINDS, kinds
from ._base import Context, Result
from ._pytest_session import pending, shared_session

Ahead = dict[int, tuple[list[Result] | BaseException, float]]
"""A stage's checks computed before their turn: check index -> results (or what the
check raised) and seconds."""

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
    from ..resolve import item_axes

    rows = sum(
        row_count(t.parts, item_axes(migration, p))
        for p in migration.producers.values()
        for t in p.artifacts
    )
    rows += sum(
        row_count(i.select.parts, item_axes(migration, i))
        for c in migration.consumers.values()
        for i in c.inputs
    )
    return rows


class Observer(Protocol):
    """Told as checks run, so that a caller can show progress; ``check`` streams through it.

    The runner never prints: what is shown, and where, is the observer's business."""

    def stage_started(self, stage: int) -> None:
        """Stage ``stage``'s checks are about to run."""

    def check_started(self, stage: int, check: Check) -> None:
        """``check`` starts running at ``stage``."""

    def check_finished(
        self, stage: int, check: Check, results: Sequence[Result], seconds: float
    ) -> None:
        """``check`` gave ``results`` after ``seconds`` of wall-clock time."""


_WATCHING: ContextVar[Observer | None] = ContextVar("stagegate_observer", default=None)


@contextlib.contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """Inside the block, every ``run_checks`` not given an observer tells ``observer``: how
    a command that runs checks deep inside (``advance``, ``verify-pr``) shows that a long
    check is still running, without every layer passing the observer along."""
    token = _WATCHING.set(observer)
    try:
        yield
    finally:
        _WATCHING.reset(token)


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
    tests: Path | None = None,
    observer: Observer | None = None,
    fail_fast: bool = False,
    ahead: Ahead | None = None,
) -> list[Result]:
    """Run ``checks`` (default: those of ``stage``) evaluated at ``stage``.

    ``evaluated_at`` is the migration whose producers, consumers and releases the
    checks look at; by default the one the checks come from. ``verify-pr`` uses it
    to run the base's checks against the head's items, and then ``migration`` is also
    the checks' baseline (``Context.baseline``); ``tests``: the base's test copy.
    ``observer`` is told of each stage and check as it runs; ``fail_fast`` stops after
    the first failing check. ``ahead``: checks already computed (``run_all``), reported
    in their turn as if they ran then."""
    subject = evaluated_at or migration
    observer = observer if observer is not None else _WATCHING.get()
    registry = kinds()
    ctx = Context(
        subject,
        stage,
        root if root is not None else subject.root,
        baseline=migration if evaluated_at is not None else None,
        tests=tests,
    )
    results: list[Result] = []
    if observer is not None:
        observer.stage_started(stage)
    with globs.budget(work_limit(subject)):  # joins an enclosing run_all budget
        chosen = checks if checks is not None else checks_at(migration, stage)
        for index, check in enumerate(chosen):
            if observer is not None:
                observer.check_started(stage, check)
            if ahead is not None and index in ahead:
                done, seconds = ahead[index]
                if isinstance(done, BaseException):
                    raise done
                found = done
            else:
                began = time.perf_counter()
                found = _run_one(registry[check.kind].run, ctx, check)
                seconds = time.perf_counter() - began
            if observer is not None:
                observer.check_finished(stage, check, found, seconds)
            results.extend(found)
            if fail_fast and not all(r.ok for r in found):
                break
    return results


AHEAD_SECONDS = 2.0


def _ahead(migration: Migration, root: Path | None) -> dict[int, Ahead]:
    """Every stage's model-only checks, computed while the shared pytest session runs.

    The first stage with a ``pytest`` check waits there for the session, and the stages
    after it used to run their checks only once it had ended; these checks read nothing
    but the model, so computing them first changes no result and no order of what is
    shown (each is reported in its turn, with the seconds it took). What a check raises
    is kept and raised in its turn, so an error in stage 5 still comes after stage 4's
    report. Not with ``fail_fast`` (it may stop before a later stage runs at all). It
    stops when the session ends, or after ``AHEAD_SECONDS``: what is computed ahead is
    shown only in its turn, and the live line must not stand still for long."""
    registry = kinds()
    found: dict[int, Ahead] = {}
    start = time.perf_counter()
    for stage in range(migration.last + 1):
        ctx = Context(migration, stage, root if root is not None else migration.root)
        for index, check in enumerate(checks_at(migration, stage)):
            if check.kind not in PURE_KINDS:
                continue
            began = time.perf_counter()
            if not pending() or began - start > AHEAD_SECONDS:
                return found  # the rest run in their turn
            try:
                done: list[Result] | BaseException = _run_one(registry[check.kind].run, ctx, check)
            except Exception as error:
                done = error
            found.setdefault(stage, {})[index] = (done, time.perf_counter() - began)
    return found


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


def run_all(
    migration: Migration,
    *,
    root: Path | None = None,
    observer: Observer | None = None,
    fail_fast: bool = False,
) -> list[Result]:
    """Every stage 0..last, each evaluated at itself (``fail_fast``: up to the first failure)."""
    results: list[Result] = []
    # one budget for the whole run, so that running stage after stage cannot multiply it
    # and one pytest session for the stages' pytest checks, where they can share one
    shared = shared_session(migration, root if root is not None else migration.root)
    with globs.budget(work_limit(migration, migration.last + 1)), shared:
        ahead = {} if fail_fast or not pending() else _ahead(migration, root)
        for stage in range(migration.last + 1):
            found = run_checks(
                migration,
                stage,
                root=root,
                observer=observer,
                fail_fast=fail_fast,
                ahead=ahead.get(stage),
            )
            results.extend(found)
            if fail_fast and not all(r.ok for r in found):
                break
    return results
