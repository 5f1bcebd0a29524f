"""The headline check: the release claiming a tag selects exactly what it selected before.

Names are compared as template rows with open axes kept symbolic
(``cuda-bindings-python312-cuda13.4.1-win-64-{sha}``), each selection decided
exactly by the glob engine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ..errors import Problem
from ..match import RowIndex, index, plain_selector, release_selection, selected, tag_claimed
from ..model import Check, Migration, Release
from ..resolve import Plan, Row
from ..words import counted
from ._base import Context, Finding, Result, result, where

KIND = "release-continuity"
SUMMARY = (
    "The release claiming `tag` selects exactly the artifact names the release claiming it "
    "at stage `since` selected (and, with tooling: control, from runs of every stage between)."
)
ARGS = {
    "tag": {"type": "string", "minLength": 1, "description": "A concrete tag, e.g. v13.4.2."},
    "since": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "The stage to compare with.",
    },
}
REQUIRED = ["tag"]


def validate(migration: Migration, check: Check) -> list[Problem]:
    since_stage = check.args.get("since", 0)
    if since_stage > migration.last:
        return [
            Problem(
                check.loc,
                f"release-continuity since: {since_stage} is beyond the last stage ({migration.last}); "
                f"use 0..{migration.last}.",
            )
        ]
    return []


def claimants(plan: Plan, tag: str) -> list[Release]:
    return [r for r in plan.releases if tag_claimed(r, tag)]


def pool(plan: Plan, release: Release) -> RowIndex:
    """The rows in the run a release downloads from."""
    return index(plan, frozenset({release.run}))


def _glob_for(release: Release, row: Row) -> str:
    for template in release.select:
        if selected(plain_selector(template.text), [row]):
            return template.text
    return "?"


def _group(rows: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row.producer, row.template.text)].append(row)
    return groups


def _rows_phrase(rows: list[Row], total: int) -> str:
    if len(rows) == 1:
        return rows[0].name
    sample = rows[0].name
    if len(rows) == total:
        return f"all {total} rows of {rows[0].template.text} (e.g. {sample})"
    listed = "; ".join(" ".join(f"{k}={v}" for k, v in r.assignment) for r in rows[:6])
    more = f"; and {len(rows) - 6} more" if len(rows) > 6 else ""
    return f"{len(rows)} rows of {rows[0].template.text} ({listed}{more}), e.g. {sample}"


def _extra(
    ctx: Context, release: Release, rows: list[Row], stage: int, baseline: int
) -> Iterable[Finding]:
    m = ctx.migration
    for (pid, _template), group in _group(rows).items():
        producer = m.producers[pid]
        total = sum(
            1
            for r in ctx.plan_at(stage).rows(producer)
            if r.template.text == group[0].template.text
        )
        yield Finding(
            f"release {release.id} {where(release)} now also selects {_rows_phrase(group, total)} "
            f"from producer {pid} {where(producer)}, active {ctx.cause(producer, stage)}; "
            f"glob {_glob_for(release, group[0])!r}; it did not select this name at stage {baseline}: "
            "narrow the glob, add an exclude, or give the new artifacts a name it does not match.",
            producer.loc,
        )


def _missing(
    ctx: Context,
    release: Release,
    names: set[str],
    base_rows: dict[str, Row],
    stage: int,
    baseline: int,
) -> Iterable[Finding]:
    m = ctx.migration
    plan = ctx.plan_at(stage)
    then = ctx.baseline_plan(baseline)
    active = {p.id for p in plan.producers}
    rows = [base_rows[n] for n in sorted(names)]
    for (pid, _template), group in _group(rows).items():
        producer = then.migration.producers[pid]
        total = sum(1 for r in then.rows(producer) if r.template.text == group[0].template.text)
        if pid not in m.producers:
            why = f"producer {pid} {where(producer)} is no longer declared"
        elif pid not in active:
            producer = m.producers[pid]
            why = f"producer {pid} {where(producer)} is off {ctx.cause(producer, stage)}"
        else:
            why = (
                f"its globs {', '.join(repr(t.text) for t in release.select)}"
                + (
                    f" minus excludes {', '.join(repr(t.text) for t in release.exclude)}"
                    if release.exclude
                    else ""
                )
                + " do not select it"
            )
        yield Finding(
            f"release {release.id} {where(release)} no longer selects {_rows_phrase(group, total)}, "
            f"which it selected at stage {baseline} from producer {pid}; {why}: the release would ship "
            "without it.",
            release.loc,
        )


def _compare(
    ctx: Context, release: Release, rows: list[Row], base: dict[str, Row], stage: int, baseline: int
) -> list[Finding]:
    names = {row.name: row for row in rows}
    extra = [row for row in rows if row.name not in base]
    missing = set(base) - set(names)
    return [
        *_extra(ctx, release, extra, stage, baseline),
        *_missing(ctx, release, missing, base, stage, baseline),
    ]


def run(ctx: Context, check: Check) -> list[Result]:
    tag: str = check.args["tag"]
    baseline: int = check.args.get("since", 0)
    if baseline > ctx.stage:
        return [result(ctx, check, [], f"applies from stage {baseline} on")]
    now = claimants(ctx.plan, tag)
    then = claimants(ctx.baseline_plan(baseline), tag)  # verify-pr: the base's, where reached
    findings: list[Finding] = []
    for stage, found in ((ctx.stage, now), (baseline, then)):
        if len(found) != 1:
            listed = ", ".join(f"{r.id} {where(r)}" for r in found) or "none"
            findings.append(
                Finding(
                    f"{len(found)} active releases claim {tag} at stage {stage} ({listed}); "
                    "exactly one must: fix the releases' tags or their `when`.",
                    found[0].loc if found else check.loc,
                )
            )
    if findings:
        return [result(ctx, check, findings, "")]
    release, before = now[0], then[0]
    base_rows = {
        row.name: row
        for row in release_selection(before, pool(ctx.baseline_plan(baseline), before))
    }
    current = release_selection(release, pool(ctx.plan, release))
    findings += _compare(ctx, release, current, base_rows, ctx.stage, baseline)
    if release.expect is not None:
        findings += _expectations(ctx, release, current)
    if release.tooling == "control":
        for stage in range(baseline, ctx.stage):
            older = release_selection(release, pool(ctx.plan_at(stage), release))
            for finding in _compare(ctx, release, older, base_rows, stage, baseline):
                findings.append(
                    Finding(
                        f"with tooling: control, today's tooling run on a run built at stage {stage}: "
                        + finding.message,
                        finding.loc,
                    )
                )
    count = len(base_rows)
    return [
        result(
            ctx,
            check,
            findings,
            f"release {release.id} selects the same {counted(count, 'artifact name')} "
            f"as at stage {baseline}",
        )
    ]


def _expectations(ctx: Context, release: Release, rows: list[Row]) -> list[Finding]:
    expected = set(release.expect or ())
    found = {row.producer for row in rows}
    m = ctx.migration
    out = []
    for pid in sorted(found - expected):
        producer = m.producers[pid]
        sample = next(r for r in rows if r.producer == pid)
        out.append(
            Finding(
                f"release {release.id} {where(release)} selects from producer {pid} {where(producer)}, "
                f"which is not in its expect ({', '.join(sorted(expected)) or 'nothing'}), e.g. {sample.name} "
                f"via {_glob_for(release, sample)!r}; active {ctx.cause(producer)}.",
                producer.loc,
            )
        )
    for pid in sorted(expected - found):
        producer = m.producers[pid]
        state = "active" if producer in ctx.plan.producers else "off"
        out.append(
            Finding(
                f"release {release.id} {where(release)} selects nothing from expected producer {pid} "
                f"{where(producer)} ({state} {ctx.cause(producer)}).",
                release.loc,
            )
        )
    return out
