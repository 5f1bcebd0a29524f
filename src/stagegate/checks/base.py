"""What every check kind shares: its result type and the context it runs in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from stagegate.engine.resolve import Plan, Row, cause, resolve, since
from stagegate.errors import Loc
from stagegate.model import Check, Consumer, Input, Item, Migration, Producer
from stagegate.records import field, record
from stagegate.words import counted


@record
class Finding:
    """One concrete thing that broke, at the line that declares the culprit."""

    message: str
    loc: Loc | None = None
    related: tuple[Loc, ...] = ()
    """Other places the finding is about (a drift finding's workflow steps): in a pull
    request, its annotation goes to the first of them the pull request changed."""


@record(kw_only=True)
class Result:
    """The outcome of one check at one stage."""

    check: str  # the kind
    label: str  # kind plus its arguments, e.g. "release-continuity tag=v13.4.2"
    stage: int
    ok: bool
    message: str
    loc: Loc | None = None  # where the check is declared
    origin: str = "acceptance"
    findings: tuple[Finding, ...] = ()
    detail: str = ""  # e.g. the tail of a command's output
    readiness: bool = False
    """A check that reads today's repository, run at a stage ahead of the current one by
    ``check --all``: it shows what still blocks the flip to that stage and fails nothing."""

    @property
    def fails(self) -> bool:
        """It counts as a failure: not ok, and not a readiness result."""
        return not self.ok and not self.readiness


@record
class Context:
    """Everything a check may look at: the migration, the stage, the work tree."""

    migration: Migration
    stage: int
    root: Path = field(default_factory=Path)
    timeout: float = 600.0
    baseline: Migration | None = None
    """verify-pr: the base's migration, which supplies what the checks measure against
    (continuity baselines, audit settings, legacy entries, test folders); None: the
    migration itself."""
    tests: Path | None = None
    """verify-pr: the top of the base's test copy (``overlay``), from which ``pytest``
    checks run; None: they run the files in ``root``."""

    @property
    def plan(self) -> Plan:
        return resolve(self.migration, self.stage)

    @property
    def reference(self) -> Migration:
        """The migration whose data the checks measure against."""
        return self.migration if self.baseline is None else self.baseline

    def baseline_plan(self, stage: int) -> Plan:
        """The plan at ``stage`` to compare with: the baseline's where it has reached
        ``stage`` (a pull request cannot rewrite what was rolled out), else this one's."""
        if self.baseline is not None and stage <= self.baseline.stage:
            return resolve(self.baseline, stage)
        return resolve(self.migration, stage)

    def plan_at(self, stage: int) -> Plan:
        return resolve(self.migration, stage)

    def cause(self, item: Item, stage: int | None = None) -> str:
        return cause(self.migration, item, self.stage if stage is None else stage)


def result(
    ctx: Context,
    check: Check,
    findings: Iterable[Finding],
    ok_message: str,
    *,
    fail_message: str | None = None,
) -> Result:
    found = tuple(findings)
    if found:
        head = fail_message or f"{counted(len(found), 'problem')}"
        message = f"{check.describe()} at stage {ctx.stage}: {head}"
    else:
        message = f"{check.describe()} at stage {ctx.stage}: {ok_message}"
    return Result(
        check=check.kind,
        label=check.describe(),
        stage=ctx.stage,
        ok=not found,
        message=message,
        loc=check.loc,
        origin=check.origin,
        findings=found,
    )


def where(item: Item | Input) -> str:
    return f"({item.loc.at})"


def row_list(labels: Sequence[str], limit: int = 6) -> str:
    """Rows as ``py=311 platform=win-64; py=312 platform=win-64; and 3 more``."""
    shown = "; ".join(label or "its only row" for label in labels[:limit])
    return shown + (f"; and {len(labels) - limit} more" if len(labels) > limit else "")


def consumer_cause(ctx: Context, consumer: Consumer, *others: Item) -> str:
    """``; the consumer is active since stage 2 (flag)`` when it turned on after ``others``.

    A consumer that starts to read what was already there is the change to point at."""
    start = since(ctx.migration, consumer.when, ctx.stage)
    if start == 0 or any(since(ctx.migration, o.when, ctx.stage) >= start for o in others):
        return ""
    return f"; the consumer is active {ctx.cause(consumer)}"


def producers_of(rows: Iterable[Row], migration: Migration) -> list[Producer]:
    seen: dict[str, Producer] = {}
    for row in rows:
        seen.setdefault(row.producer, migration.producers[row.producer])
    return list(seen.values())


def consumers_for(ctx: Context, check: Check) -> list[Consumer] | Finding:
    """The active consumers a check applies to: all, or the one its `consumer` names."""
    name = check.args.get("consumer")
    if name is None:
        return list(ctx.plan.consumers)
    consumer = ctx.migration.consumers.get(name)
    if consumer is None:
        return Finding(f"no consumer {name!r} is declared; fix the check's `consumer`.", check.loc)
    if consumer not in ctx.plan.consumers:
        return []
    return [consumer]


@record
class Readiness:
    """What blocks the flip to ``stage`` in the repository as it is today: the results of
    its checks that read the repository, each marked readiness; ``error``: why they could
    not run (not a git repository, a workflow file that cannot be read, ...)."""

    stage: int
    results: tuple[Result, ...] = ()
    error: str | None = None

    @property
    def ready(self) -> bool:
        return self.error is None and all(r.ok for r in self.results)
