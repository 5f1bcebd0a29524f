"""Every required input of every active consumer finds an active producer, row by row."""

from __future__ import annotations

from stagegate.checks import _consumers
from stagegate.checks.base import (
    Context,
    Finding,
    Result,
    consumer_cause,
    consumers_for,
    result,
    row_list,
    where,
)
from stagegate.engine.match import evaluation, selections
from stagegate.engine.resolve import since
from stagegate.model import Check, Consumer, Input
from stagegate.model.templates import format_assignment
from stagegate.words import counted

KIND = "inputs-satisfied"
SUMMARY = "Every required input of every active consumer is selected from an active producer."
ARGS = _consumers.ARGS
REQUIRED: list[str] = []
READS = "model"
validate = _consumers.validate


def _who_used_to(ctx: Context, consumer: Consumer, item: Input) -> str:
    """Which producers fed this input at the previous stage, and why they are gone."""
    if ctx.stage == 0:
        return ""
    previous = ctx.plan_at(ctx.stage - 1)
    fed = {
        row.producer for _sel, rows in selections(previous, item, only_from=True) for row in rows
    }
    gone = [
        ctx.migration.producers[p]
        for p in sorted(fed)
        if ctx.migration.producers[p] not in ctx.plan.producers
    ]
    if not gone:
        return ""
    parts = [
        f"{p.id} {where(p)} turned off at stage {since(ctx.migration, p.when, ctx.stage)}"
        for p in gone
    ]
    return "; it was fed by " + ", ".join(parts)


def _why_empty(ctx: Context, consumer: Consumer, item: Input) -> str:
    """Why the producers it may take from select nothing: off, or no name for these rows."""
    if item.from_ is None:
        return consumer_cause(ctx, consumer)
    parts = []
    for pid in item.from_:
        producer = ctx.migration.producers[pid]
        if producer in ctx.plan.producers:
            parts.append(
                f"{pid} {where(producer)} is active but makes no name it selects for these rows"
            )
        elif ctx.stage == 0 or since(ctx.migration, producer.when, ctx.stage) < ctx.stage:
            parts.append(f"{pid} {where(producer)} is off {ctx.cause(producer)}")
    offs = [ctx.migration.producers[p] for p in item.from_]
    return ("; " + "; ".join(parts) if parts else "") + consumer_cause(ctx, consumer, *offs)


def run(ctx: Context, check: Check) -> list[Result]:
    chosen = consumers_for(ctx, check)
    if isinstance(chosen, Finding):
        return [result(ctx, check, [chosen], "")]
    findings: list[Finding] = []
    checked = 0
    clean = evaluation(ctx.migration).clean
    for consumer in chosen:
        for item in consumer.inputs:
            if not item.required:
                continue
            checked += 1
            found = selections(ctx.plan, item, only_from=True)
            if (KIND, id(found)) in clean:  # the same answer passed at an earlier stage
                continue
            empty = [sel for sel, rows in found if not rows]
            if not empty:
                clean.add((KIND, id(found)))
                continue
            rows = row_list([format_assignment(sel.assignment) for sel in empty])
            scope = (
                f"producers of its from ({', '.join(item.from_)})"
                if item.from_
                else "producers of this run"
            )
            findings.append(
                Finding(
                    f"consumer {consumer.id} {where(consumer)}: required input {item.select.text!r} "
                    f"{where(item)} selects nothing from the active {scope} for {rows}"
                    f"{_who_used_to(ctx, consumer, item)}{_why_empty(ctx, consumer, item)}: "
                    "keep a producer of these names active, "
                    "or change the input's select.",
                    item.loc,
                )
            )
    return [
        result(
            ctx,
            check,
            findings,
            f"{counted(checked, 'required input')} of {counted(len(chosen), 'consumer')}: all satisfied",
        )
    ]
