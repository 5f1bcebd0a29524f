"""Which checks apply at a stage, and running them: the checks runner."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from stagegate.checks import kinds, reading, repository_checks
from stagegate.checks._pytest_session import pending, shared_session
from stagegate.checks.base import Context, Readiness, Result
from stagegate.engine import globs
from stagegate.engine.budget import work_limit
from stagegate.errors import StagegateError, TooComplex
from stagegate.model import Check, Migration
from stagegate.records import replace

Ahead = dict[int, tuple[list[Result] | BaseException, float]]
"""A stage's checks computed before their turn: check index -> results (or what the
check raised) and seconds."""

PAST = "not run at a past stage: it reads today's files, and the stage was checked against those of its time when verify-pr let it in"
"""Why ``check --all`` does not run a repository check at a stage below the current one."""


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

    def check_skipped(self, stage: int, check: Check, reason: str) -> None:
        """``check`` is not run at ``stage``, for ``reason``."""


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


def role(migration: Migration, stage: int, check: Check, *, ahead_fail: bool = False) -> str:
    """How ``check --all`` holds ``check`` at ``stage`` (SPEC "Checking main"): ``"check"``
    (it must pass), ``"readiness"`` (shown, failing nothing) or ``"past"`` (not run).

    Model checks, and the pytest and command checks, must pass at every stage. A check that
    reads the repository's files as they are today must pass at the current stage; ahead of
    it, it says what still blocks that flip (``ahead_fail``: it must pass there too); below
    it, it is not run."""
    if check.kind not in reading("repository") or stage == migration.stage:
        return "check"
    if stage < migration.stage:
        return "past"
    return "check" if ahead_fail else "readiness"


def scheduled(migration: Migration, stage: int | None) -> int:
    """How many checks ``check`` runs at ``stage`` (None: ``check --all`` at every stage)."""
    if stage is not None:
        return len(migration.checks_at(stage))
    return sum(
        1
        for s in range(migration.last + 1)
        for c in migration.checks_at(s)
        if role(migration, s, c) != "past"
    )


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
    every: bool = False,
    ahead_fail: bool = False,
) -> list[Result]:
    """Run ``checks`` (default: those of ``stage``) evaluated at ``stage``.

    ``evaluated_at`` is the migration whose producers, consumers and releases the
    checks look at; by default the one the checks come from. ``verify-pr`` uses it
    to run the base's checks against the head's items, and then ``migration`` is also
    the checks' baseline (``Context.baseline``); ``tests``: the base's test copy.
    ``observer`` is told of each stage and check as it runs; ``fail_fast`` stops after
    the first failing check. ``ahead``: checks already computed (``run_all``), reported
    in their turn as if they ran then. ``every``: as a stage of ``check --all``, each
    check held as ``role`` says (``ahead_fail``: at stages ahead, too)."""
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
            held = role(migration, stage, check, ahead_fail=ahead_fail) if every else "check"
            if held == "past":
                if observer is not None:
                    observer.check_skipped(stage, check, PAST)
                continue
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
            if held == "readiness":
                found = [_readiness(r) for r in found]
            if observer is not None:
                observer.check_finished(stage, check, found, seconds)
            results.extend(found)
            if fail_fast and any(r.fails for r in found):
                break
    return results


def _readiness(result: Result) -> Result:
    """``result`` of a repository check at a stage ahead: what blocks the flip to it."""
    if result.ok:
        return replace(result, readiness=True)
    return replace(
        result,
        readiness=True,
        message=f"{result.message}; to do before the flip to stage {result.stage}",
    )


def readiness(migration: Migration, stage: int, *, root: Path | None = None) -> Readiness:
    """The readiness of ``stage``: its checks that read the repository's files, run now
    (``status``, ``history``). The model's checks are left to ``check --all``: they do not
    change with the files."""
    chosen = repository_checks(migration, stage)
    if not chosen:
        return Readiness(stage)
    try:
        found = run_checks(migration, stage, chosen, root=root, observer=_Quiet())
    except StagegateError as error:
        return Readiness(stage, error=str(error))
    return Readiness(stage, tuple(_readiness(r) for r in found))


class _Quiet:
    """No observer: ``readiness`` shows nothing as it runs, also inside ``observing``."""

    def stage_started(self, stage: int) -> None:
        pass

    def check_started(self, stage: int, check: Check) -> None:
        pass

    def check_finished(
        self, stage: int, check: Check, results: Sequence[Result], seconds: float
    ) -> None:
        pass

    def check_skipped(self, stage: int, check: Check, reason: str) -> None:
        pass


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
            if check.kind not in reading("model"):
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
    ahead_fail: bool = False,
) -> list[Result]:
    """Every stage 0..last, each evaluated at itself, each check held as ``role`` says
    (``fail_fast``: up to the first failure)."""
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
                every=True,
                ahead_fail=ahead_fail,
            )
            results.extend(found)
            if fail_fast and any(r.fails for r in found):
                break
    return results
