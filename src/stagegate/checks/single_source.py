"""Each input row comes from exactly one producer (at most one when optional), within `from`."""

from __future__ import annotations

from collections import defaultdict

from stagegate.checks import _consumers
from stagegate.checks.base import (
    Context,
    Finding,
    Result,
    consumer_cause,
    consumers_for,
    producers_of,
    result,
    row_list,
    where,
)
from stagegate.engine.match import Selector, evaluation, selections
from stagegate.engine.resolve import Row
from stagegate.model import Check, Consumer, Input
from stagegate.model.templates import format_assignment
from stagegate.words import counted

KIND = "single-source"
SUMMARY = (
    "Every row of a required input is selected from exactly one active producer (optional: at "
    "most one), and never from a producer outside its `from`."
)
ARGS = _consumers.ARGS
REQUIRED: list[str] = []
READS = "model"
validate = _consumers.validate


def run(ctx: Context, check: Check) -> list[Result]:
    chosen = consumers_for(ctx, check)
    if isinstance(chosen, Finding):
        return [result(ctx, check, [chosen], "")]
    findings: list[Finding] = []
    clean = evaluation(ctx.migration).clean
    for consumer in chosen:
        for item in consumer.inputs:
            found = selections(ctx.plan, item)
            if (KIND, id(found)) in clean:  # the same answer passed at an earlier stage
                continue
            culprits = _input_findings(ctx, consumer, item, found)
            if not culprits:
                clean.add((KIND, id(found)))
            findings += culprits
    return [
        result(
            ctx,
            check,
            findings,
            f"every input of {counted(len(chosen), 'consumer')} has a single source",
        )
    ]


def _input_findings(
    ctx: Context, consumer: Consumer, item: Input, found: list[tuple[Selector, list[Row]]]
) -> list[Finding]:
    """One finding per culprit, listing the rows it affects (not one per row)."""
    m = ctx.migration
    # The glob sees every artifact of the runs it downloads from; `from` states which
    # producers it means to take, so a match outside `from` is a second source.
    outside: dict[str, list[tuple[str, str]]] = defaultdict(list)  # producer -> (row, name)
    several: dict[tuple[str, ...], list[str]] = defaultdict(list)  # producers -> rows
    nothing: list[str] = []
    for selector, rows in found:
        label = format_assignment(selector.assignment)
        producers = producers_of(rows, m)
        inside = []
        for producer in producers:
            if item.from_ is not None and producer.id not in item.from_:
                sample = next(r.name for r in rows if r.producer == producer.id)
                outside[producer.id].append((label, sample))
            else:
                inside.append(producer)
        if len(inside) > 1:
            several[tuple(p.id for p in inside)].append(label)
        elif item.required and not inside:
            nothing.append(label)
    head = f"consumer {consumer.id} {where(consumer)}: "
    glob = f"{item.select.text!r} {where(item)}"
    out = []
    for pid, hits in outside.items():
        producer = m.producers[pid]
        out.append(
            Finding(
                f"{head}input {glob} for {row_list([r for r, _ in hits])} also selects "
                f"{'' if len(hits) == 1 else 'e.g. '}{hits[0][1]} "
                f"from producer {pid} {where(producer)}, outside its from ({', '.join(item.from_ or ())}); "
                f"active {ctx.cause(producer)}{consumer_cause(ctx, consumer, producer)}: "
                "narrow the select so only the intended producer matches.",
                item.loc,
            )
        )
    for pids, labels in several.items():
        feeding = [m.producers[p] for p in pids]
        names = ", ".join(f"{p.id} {where(p)} (active {ctx.cause(p)})" for p in feeding)
        out.append(
            Finding(
                f"{head}input {glob} for {row_list(labels)} is selected from {len(pids)} producers: "
                f"{names}{consumer_cause(ctx, consumer, *feeding)}; "
                "a consumer must not be fed the same input by two sources: restrict it with from, "
                "or turn one producer off.",
                item.loc,
            )
        )
    if nothing:
        out.append(
            Finding(
                f"{head}required input {glob} for {row_list(nothing)} is selected from no active producer.",
                item.loc,
            )
        )
    return out
