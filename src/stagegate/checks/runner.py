"""Which checks apply at a stage, and running them: the checks runner."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from stagegate.checks import PURE_KINDS, kinds
from stagegate.checks._base import Context, Result
from stagegate.checks._pytest_session import pending, shared_session
from stagegate.engine import globs
from stagegate.engine.budget import work_limit
from stagegate.errors import TooComplex
from stagegate.model import Check, Migration

Ahead = dict[int, tuple[list[Result] | BaseException, float]]
"""A stage's checks computed before their turn: check index -> results (or what the
check raised) and seconds."""







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
        chosen = checks if checks is not None else migration.checks_at(stage)
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
        for index, check in enumerate(migration.checks_at(stage)):
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
