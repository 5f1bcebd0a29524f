"""Text and JSON renderings of plans, status and diffs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from stagegate.engine.resolve import (
    Change,
    Plan,
    PlannedChange,
    cause,
    diff,
    item_axes,
    planned_changes,
    rows,
    since,
)
from stagegate.model import Item, Migration, Producer
from stagegate.model.templates import finite_axes
from stagegate.records import record
from stagegate.report import Renderers, echo_json, echo_text, single_lines
from stagegate.words import counted

if TYPE_CHECKING:
    from stagegate.checks.base import Readiness

R = TypeVar("R")


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _stage_line(migration: Migration, stage: int) -> str:
    return f"stage {stage} of {migration.last}: {migration.title(stage)}"


def _axis_summary(migration: Migration, producer: Producer) -> list[str]:
    out = []
    axes = item_axes(migration, producer)
    for template in producer.artifacts:
        names = finite_axes(template.parts, axes)
        domains = [f"{name}={','.join(axes[name].values or ())}" for name in names]
        if template.rows is not None:
            domains = ["listed"]
        elif template.exclude:
            domains[-1] += f" minus {counted(len(template.exclude), 'exclude')}"
        count = template.row_count(axes)
        suffix = f"  [{counted(count, 'row')}: {' x '.join(domains)}]" if names else ""
        out.append(f"{template.text}{suffix}")
    return out


def plan_text(plan: Plan, *, show_rows: bool = False) -> str:
    m = plan.migration
    lines = [f"{m.id}: {_stage_line(m, plan.stage)}"]
    definition = m.stage_def(plan.stage)
    if definition and definition.outcome:
        lines.append(f"  {definition.outcome}")
    lines += ["", "flags"]
    width = max((len(n) for n in m.flags), default=0)
    for name, value in plan.flags.items():
        started = _flag_since(m, name, plan.stage)
        lines.append(f"  {name:<{width}}  {_bool(value):<5}  ({started})")
    lines += ["", f"producers ({len(plan.producers)} active)"]
    for producer in plan.producers:
        run = f"  run: {producer.run}" if producer.run != "this" else ""
        lines.append(f"  {producer.id}  [{cause(m, producer, plan.stage)}]{run}")
        if show_rows:
            lines += [f"    {row.describe()}" for row in rows(m, producer)]
        else:
            lines += [f"    {text}" for text in _axis_summary(m, producer)]
    lines += ["", f"consumers ({len(plan.consumers)} active)"]
    for consumer in plan.consumers:
        lines.append(f"  {consumer.id}  [{cause(m, consumer, plan.stage)}]")
        for item in consumer.inputs:
            notes = ["required" if item.required else "optional"]
            if item.from_:
                notes.append("from " + ", ".join(item.from_))
            if item.exclude:
                notes.append("minus " + ", ".join(t.text for t in item.exclude))
            lines.append(f"    {item.select.text}  ({'; '.join(notes)})")
    lines += ["", f"releases ({len(plan.releases)} active)"]
    for release in plan.releases:
        run = f"  run: {release.run}" if release.run != "this" else ""
        lines.append(
            f"  {release.id}  [{cause(m, release, plan.stage)}]  tooling: {release.tooling}{run}"
        )
        lines.append(f"    tags:    {', '.join(release.tags)}")
        lines.append(f"    select:  {', '.join(t.text for t in release.select)}")
        if release.exclude:
            lines.append(f"    exclude: {', '.join(t.text for t in release.exclude)}")
        if release.expect is not None:
            lines.append(f"    expect:  {', '.join(release.expect) or '(nothing)'}")
        if release.kinds is not None:
            lines.append(f"    kinds:   {', '.join(release.kinds)}")
        for planned in planned_changes(m, 0, plan.stage):
            if release.id in planned.releases:
                lines.append(f"    planned: {planned.describe()}")
    inactive = _inactive(plan)
    if inactive:
        lines += ["", "inactive"]
        lines += [f"  {item.kind} {item.id}  [{cause(m, item, plan.stage)}]" for item in inactive]
    return single_lines(lines)


def _flag_since(migration: Migration, name: str, stage: int) -> str:
    from stagegate.model.expr import Flag

    start = since(migration, Flag(name), stage)
    return "default" if start == 0 else f"set at stage {start}"


def _inactive(plan: Plan) -> list[Item]:
    active = {(i.kind, i.id) for i in plan.items()}
    return [i for i in plan.migration.items() if (i.kind, i.id) not in active]


def plan_json(plan: Plan) -> dict[str, Any]:
    m = plan.migration
    data: dict[str, Any] = {
        "migration": m.id,
        "stage": plan.stage,
        "title": m.title(plan.stage),
        "flags": dict(plan.flags),
        "producers": [p.id for p in plan.producers],
        "consumers": [c.id for c in plan.consumers],
        "releases": [r.id for r in plan.releases],
        "artifacts": {
            p.id: [
                {
                    "template": row.template.text,
                    "name": row.name,
                    "axes": dict(row.assignment),
                    "run": p.run,
                }
                for row in rows(m, p)
            ]
            for p in plan.producers
        },
        "inputs": {
            c.id: [
                {
                    "select": i.select.text,
                    "required": i.required,
                    "from": list(i.from_) if i.from_ else None,
                    "exclude": [t.text for t in i.exclude],
                }
                for i in c.inputs
            ]
            for c in plan.consumers
        },
        "release_paths": {
            r.id: {
                "tags": list(r.tags),
                "select": [t.text for t in r.select],
                "exclude": [t.text for t in r.exclude],
                "expect": list(r.expect) if r.expect is not None else None,
                "tooling": r.tooling,
                "run": r.run,
            }
            for r in plan.releases
        },
        "since": {f"{i.kind}:{i.id}": since(m, i.when, plan.stage) for i in plan.items()},
    }
    for release in plan.releases:
        path = data["release_paths"][release.id]
        path["kinds"] = list(release.kinds) if release.kinds is not None else None
        path["release_changes"] = [
            planned_json(p) for p in planned_changes(m, 0, plan.stage) if release.id in p.releases
        ]
    return data


def _items(items: Iterable[Item]) -> list[str]:
    return [f"{i.kind} {i.id}" for i in items]


def change_text(migration: Migration, change: Change) -> str:
    lines = [
        f"stage {change.a} -> stage {change.b}: "
        f"{migration.title(change.a)} -> {migration.title(change.b)}"
    ]
    if change.empty:
        lines.append("  nothing turns on or off")
        return single_lines(lines)
    for name, old, new in change.flags:
        lines.append(f"  flag {name}: {_bool(old)} -> {_bool(new)}")
    lines += [f"  + {text}" for text in _items(change.on)]
    lines += [f"  - {text}" for text in _items(change.off)]
    if change.names_added or change.names_removed:
        lines.append("  artifact names")
        lines += [f"    + {name}" for name in change.names_added]
        lines += [f"    - {name}" for name in change.names_removed]
    if change.release_changes:
        lines.append("  planned release changes")
        lines += [f"    {planned.describe()}" for planned in change.release_changes]
    return single_lines(lines)


def planned_json(planned: PlannedChange) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stage": planned.stage,
        "tag": planned.change.tag,
        "releases": list(planned.releases),
        "add": [g.text for g in planned.change.add],
        "drop": [g.text for g in planned.change.drop],
        "undone": planned.undone,
    }
    if planned.change.wheels_add or planned.change.wheels_drop:
        out["wheels"] = {"add": list(planned.change.wheels_add), "drop": list(planned.change.wheels_drop)}
    return out


def change_json(change: Change) -> dict[str, Any]:
    out = _change_json(change)
    out["release_changes"] = [planned_json(p) for p in change.release_changes]
    return out


def _change_json(change: Change) -> dict[str, Any]:
    return {
        "from": change.a,
        "to": change.b,
        "flags": [{"flag": n, "from": a, "to": b} for n, a, b in change.flags],
        "on": [{"kind": i.kind, "id": i.id} for i in change.on],
        "off": [{"kind": i.kind, "id": i.id} for i in change.off],
        "artifacts_added": list(change.names_added),
        "artifacts_removed": list(change.names_removed),
    }


def status_text(status: Status) -> str:
    migration = status.migration
    stage = migration.stage
    lines = [f"{migration.id}: {_stage_line(migration, stage)}"]
    if migration.summary:
        lines.append(f"  {migration.summary}")
    from stagegate.engine.resolve import resolve

    plan = resolve(migration, stage)
    on = [name for name, value in plan.flags.items() if value]
    lines.append(f"  flags on: {', '.join(on) if on else '(none)'}")
    lines.append(
        f"  active: {counted(len(plan.producers), 'producer')}, "
        f"{counted(len(plan.consumers), 'consumer')}, {counted(len(plan.releases), 'release')}"
    )
    if stage < migration.last:
        nxt = migration.stage_def(stage + 1)
        assert nxt is not None
        lines += ["", f"next: stage {stage + 1}: {nxt.title}  ({nxt.file})"]
        if nxt.outcome:
            lines.append(f"  {nxt.outcome}")
        body = change_text(migration, diff(migration, stage, stage + 1)).splitlines()[1:]
        lines += body
        lines += readiness_text(status.readiness, stage + 1)
        lines.append(
            f"  flip with: stagegate advance   (changes `stage: {stage}` in {migration.file})"
        )
    elif migration.last == 0:
        lines += [
            "",
            'no stages yet: add the first with `stagegate new-stage "TITLE"`, then check it '
            "with `stagegate check --all`.",
        ]
    else:
        lines += [
            "",
            "this is the last stage; run `stagegate audit` to find what retired items left behind.",
        ]
    return single_lines(lines)


def readiness_text(readiness: Readiness | None, stage: int) -> list[str]:
    """What blocks the flip to ``stage`` in today's repository, one line a check (then
    the first findings of one that is not met)."""
    if readiness is None:
        return []
    if readiness.error is not None:
        return [f"  readiness: not evaluated: {readiness.error}"]
    if not readiness.results:
        return [f"  readiness: stage {stage} has no check that reads the repository"]
    from stagegate.report.results import finding_lines

    waiting = [r for r in readiness.results if not r.ok]
    lines = [
        f"  readiness: {'ready' if not waiting else 'not ready'} "
        f"({counted(len(readiness.results), 'repository check')}, "
        f"{len(waiting)} not met)"
    ]
    for result in readiness.results:
        head = result.message.split(": ", 1)[-1]
        lines.append(f"    {'ok  ' if result.ok else 'todo'}  {result.label}: {head}")
        for finding in result.findings[:READINESS_FINDINGS]:
            lines.append(f"          - {finding_lines(result, finding.message)[0]}")
        if len(result.findings) > READINESS_FINDINGS:
            more = len(result.findings) - READINESS_FINDINGS
            lines.append(f"          and {more} more: stagegate check --stage {stage}")
    return lines


READINESS_FINDINGS = 3
"""``status``: the findings shown of a readiness check not met; ``check`` shows them all."""


def readiness_json(readiness: Readiness | None) -> dict[str, Any] | None:
    if readiness is None:
        return None
    return {
        "ready": readiness.ready,
        "error": readiness.error,
        "checks": [
            {
                "check": r.check,
                "label": r.label,
                "ok": r.ok,
                "message": r.message,
                "findings": [
                    {
                        "message": f.message,
                        "file": f.loc.file if f.loc else None,
                        "line": f.loc.line if f.loc else None,
                    }
                    for f in r.findings
                ],
            }
            for r in readiness.results
        ],
    }


def status_json(status: Status) -> dict[str, Any]:
    from stagegate.engine.resolve import resolve

    migration = status.migration
    stage = migration.stage
    plan = resolve(migration, stage)
    out: dict[str, Any] = {
        "migration": migration.id,
        "stage": stage,
        "last": migration.last,
        "title": migration.title(stage),
        "flags": dict(plan.flags),
        "next": None,
    }
    if stage < migration.last:
        out["next"] = {
            "stage": stage + 1,
            "title": migration.title(stage + 1),
            "changes": change_json(diff(migration, stage, stage + 1)),
            "readiness": readiness_json(status.readiness),
        }
    return out


# --------------------------------------------------------------------------- renderer tables


@record
class Status:
    """`status`'s result: the migration, and the next stage's readiness (None: there is
    no next stage)."""

    migration: Migration
    readiness: Readiness | None = None


def next_status(migration: Migration) -> Status:
    """``status``: the migration and the readiness of its next stage."""
    if migration.stage >= migration.last:
        return Status(migration)
    from stagegate.checks import repository_checks

    stage = migration.stage + 1
    if not repository_checks(migration, stage):  # the runner need not even be imported
        from stagegate.checks.base import Readiness

        return Status(migration, Readiness(stage))
    from stagegate.checks.runner import readiness

    return Status(migration, readiness(migration, stage))


@record
class Planned:
    """`plan`'s result: the resolved stage, and whether to list every artifact row."""

    plan: Plan
    rows: bool = False


@record
class Compared:
    """`diff`'s result: what changes between two stages of the migration."""

    migration: Migration
    change: Change


def _tables(text: Callable[[R], str], json: Callable[[R], Any]) -> Renderers[R]:
    """Text (also for ``--format github``: nothing of these is GitHub-specific) and JSON."""
    return {"text": echo_text(text), "json": echo_json(json), "github": echo_text(text)}


STATUS: Renderers[Status] = _tables(status_text, status_json)
PLAN: Renderers[Planned] = _tables(
    lambda p: plan_text(p.plan, show_rows=p.rows), lambda p: plan_json(p.plan)
)
DIFF: Renderers[Compared] = _tables(
    lambda c: change_text(c.migration, c.change), lambda c: change_json(c.change)
)
