"""What every check kind shares: its result type and the context it runs in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import Loc
from ..globs import Language
from ..match import RowIndex, Selector, evaluation, index, plain_selector
from ..model import Check, Consumer, Input, Item, Migration, Producer
from ..records import field, record
from ..resolve import Plan, Row, cause, resolve, since
from ..words import counted


@record
class Finding:
    """One concrete thing that broke, at the line that declares the culprit."""

    message: str
    loc: Loc | None = None


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
    return f"({item.loc.file}:{item.loc.line})"


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


def input_runs(plan: Plan, item: Input) -> frozenset[str]:
    """The runs an input downloads from: those of its active `from` producers, else this run.

    A `from` producer that is off does not make its run visible: the download of a
    retired source is gone too. With none of them active, their runs still count, so
    that the input is reported as finding nothing rather than looking elsewhere."""
    if item.from_ is None:
        return frozenset({"this"})
    on = evaluation(plan.migration).active(plan.stage)
    producers = plan.migration.producers
    active = [p for p in item.from_ if p in on] or item.from_
    return frozenset(producers[p].run for p in active)


def visible_rows(plan: Plan, item: Input) -> RowIndex:
    """Every active row in the runs the input downloads from (its glob sees all of them)."""
    return index(plan, input_runs(plan, item))


def input_excludes(item: Input) -> list[Language]:
    """The languages of the input's `exclude` globs: names its job deletes after downloading."""
    return [plain_selector(t.text, t.loc).language for t in item.exclude]


def selections(
    plan: Plan, item: Input, *, only_from: bool = False
) -> list[tuple[Selector, list[Row]]]:
    """Per evaluation of the input's glob: the rows it selects (``only_from``: from its `from`).

    Made once per distinct state of what the glob can see (the runs it downloads from and
    the active producers among those its selectors may select) and shared by every stage
    and check in that state: the same list, so that a check can remember its verdict."""
    ev = evaluation(plan.migration)
    runs = input_runs(plan, item)
    universe = ev.universe(runs)
    selectors = ev.selectors(item)
    active = ev.active(plan.stage)
    candidates: tuple[str, ...] = ev.remember(
        ("input-candidates", id(item), runs),
        lambda: tuple(
            dict.fromkeys(pid for s in selectors for pid, _ in universe.groups(s.prefix))
        ),
    )
    state = ev.state(candidates, active)
    excluded: tuple[Language, ...] = ev.remember(
        ("input-excludes", id(item)), lambda: tuple(input_excludes(item))
    )

    def make() -> list[tuple[Selector, list[Row]]]:
        allowed = set(item.from_) if only_from and item.from_ is not None else None
        out = []
        for selector in selectors:
            rows = ev.hits(selector, universe, active, excluded)
            out.append(
                (selector, rows if allowed is None else [r for r in rows if r.producer in allowed])
            )
        return out

    return ev.remember(("selections", id(item), runs, only_from, state), make)


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
