"""Each input row comes from exactly one producer (at most one when optional), within `from`."""

from __future__ import annotations

from ..model import Check
from ..templates import format_assignment
from . import _consumers
from ._base import Context, Finding, Result, consumers_for, producers_of, result, selections, where

KIND = "single-source"
SUMMARY = (
    "Every row of a required input is selected from exactly one active producer (optional: at "
    "most one), and never from a producer outside its `from`."
)
ARGS = _consumers.ARGS
REQUIRED: list[str] = []
validate = _consumers.validate


def run(ctx: Context, check: Check) -> list[Result]:
    chosen = consumers_for(ctx, check)
    if isinstance(chosen, Finding):
        return [result(ctx, check, [chosen], "")]
    m = ctx.migration
    findings: list[Finding] = []
    for consumer in chosen:
        for item in consumer.inputs:
            # The glob sees every artifact of the runs it downloads from; `from` states which
            # producers it means to take, so a match outside `from` is a second source.
            for selector, rows in selections(ctx.plan, item):
                producers = producers_of(rows, m)
                row = format_assignment(selector.assignment) or "its only row"
                outside = [
                    p for p in producers if item.from_ is not None and p.id not in item.from_
                ]
                for producer in outside:
                    sample = next(r.name for r in rows if r.producer == producer.id)
                    findings.append(
                        Finding(
                            f"consumer {consumer.id} {where(consumer)}: input {item.select.text!r} {where(item)} "
                            f"for {row} also selects {sample} from producer {producer.id} {where(producer)}, "
                            f"outside its from ({', '.join(item.from_ or ())}); active {ctx.cause(producer)}: "
                            "narrow the select so only the intended producer matches.",
                            item.loc,
                        )
                    )
                inside = [p for p in producers if p not in outside]
                limit_ok = len(inside) == 1 if item.required else len(inside) <= 1
                if not limit_ok and not (item.required and not inside):
                    names = ", ".join(f"{p.id} {where(p)} (active {ctx.cause(p)})" for p in inside)
                    findings.append(
                        Finding(
                            f"consumer {consumer.id} {where(consumer)}: input {item.select.text!r} {where(item)} "
                            f"for {row} is selected from {len(inside)} producers: {names}; "
                            "a consumer must not be fed the same input by two sources: restrict it with from, "
                            "or turn one producer off.",
                            item.loc,
                        )
                    )
                if item.required and not inside:
                    findings.append(
                        Finding(
                            f"consumer {consumer.id} {where(consumer)}: required input {item.select.text!r} "
                            f"{where(item)} for {row} is selected from no active producer.",
                            item.loc,
                        )
                    )
    return [
        result(ctx, check, findings, f"every input of {len(chosen)} consumers has a single source")
    ]
