"""No two distinct template rows of active producers can yield the same artifact name."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator
from functools import partial

from stagegate.checks.base import Context, Finding, Result, result, row_list, where
from stagegate.engine.globs import (
    PatternError,
    TooMuchWork,
    charge,
    language,
    literal_prefix,
    witness,
)
from stagegate.engine.match import Evaluation, evaluation
from stagegate.engine.resolve import Row
from stagegate.model import Check
from stagegate.model.templates import format_assignment

KIND = "unique-artifacts"
SUMMARY = "No two distinct template rows of active producers (in one run) can yield the same name."
ARGS: dict[str, object] = {}
REQUIRED: list[str] = []
READS = "model"


def candidate_pairs(rows: list[Row]) -> Iterator[tuple[Row, Row]]:
    """Pairs whose literal prefixes are compatible (one a prefix of the other).

    Two names can only be equal if neither literal prefix contradicts the other, so
    rows are sorted by prefix and each is paired only with the rows whose prefix
    starts with its own: a range in the sorted list, found by bisection."""
    keyed = sorted(((literal_prefix(r.pieces), i) for i, r in enumerate(rows)))
    prefixes = [k for k, _ in keyed]
    for position, (prefix, i) in enumerate(keyed):
        end = bisect.bisect_left(prefixes, prefix + "\U0010ffff", lo=position + 1)
        for other in range(position + 1, end):
            j = keyed[other][1]
            yield (rows[i], rows[j]) if i < j else (rows[j], rows[i])


class Pairs:
    """The candidate pairs among every row of one run's producers, active or not, grouped
    by the two producers they come from (the first in declared order first).

    Whether two rows can yield one name does not depend on the stage, so each group's
    clashes are decided once, when both of its producers are first active together: a
    stage whose active groups hold no clash passes exactly as a search of its own rows
    would, and one with a clash is searched in full for its findings."""

    __slots__ = ("clashes", "dense", "groups")

    def __init__(self, rows: list[Row]) -> None:
        groups: dict[tuple[str, str], list[tuple[Row, Row]]] = defaultdict(list)
        self.dense = pair_count(rows) > DENSE * len(rows) + 10_000
        if not self.dense:
            for a, b in candidate_pairs(rows):
                groups[(a.producer, b.producer)].append((a, b))
        self.groups = groups
        self.clashes: dict[tuple[str, str], bool] = {}

    def clean(self, active: frozenset[str]) -> bool:
        charge(len(self.groups) // 8 + 1)
        for key, pairs in self.groups.items():
            if key[0] not in active or key[1] not in active:
                continue
            clash = self.clashes.get(key)
            if clash is None:
                try:
                    clash = any(
                        witness(language(a.pieces), language(b.pieces)) is not None
                        for a, b in pairs
                    )
                except TooMuchWork:
                    raise
                except PatternError:
                    return False  # the full search reports it, at the pair it meets first
                self.clashes[key] = clash
            if clash:
                return False
        return True


def _pairs(ev: Evaluation, run_name: str) -> Pairs:
    producers = ev.migration.producers.values()
    return Pairs([row for p in producers if p.run == run_name for row in ev.rows(p.id)])


def _clean(ctx: Context) -> bool:
    """Whether no two active rows of a run can yield one name, from the per-group answers."""
    ev = evaluation(ctx.migration)
    active = ev.active(ctx.stage)
    runs = {p.run for p in ctx.plan.producers}
    for run_name in sorted(runs):
        pairs = ev.remember(("unique-pairs", run_name), partial(_pairs, ev, run_name))
        if pairs.dense or not pairs.clean(active):
            return False
    return True


def ev_clean(ctx: Context) -> bool:
    """``_clean`` once per stage (several unique-artifacts checks at one stage share it)."""
    return evaluation(ctx.migration).remember(("unique-clean", ctx.stage), partial(_clean, ctx))


DENSE = 8
"""Candidate pairs per row beyond which the rows are searched stage by stage as before
(templates with no fixed text in front pair every row with every other: holding those
pairs would cost memory in the square of the rows, and the work budget stops them)."""


def pair_count(rows: list[Row]) -> int:
    """How many pairs ``candidate_pairs`` yields, counted without making them."""
    prefixes = sorted(literal_prefix(r.pieces) for r in rows)
    return sum(
        bisect.bisect_left(prefixes, p + "\U0010ffff", lo=k + 1) - k - 1
        for k, p in enumerate(prefixes)
    )


def run(ctx: Context, check: Check) -> list[Result]:
    if ev_clean(ctx):
        ev = evaluation(ctx.migration)
        total = sum(len(ev.rows(p.id)) for p in ctx.plan.producers)
        return [
            result(ctx, check, [], f"{total} artifact rows of active producers have distinct names")
        ]
    by_run: dict[str, list[Row]] = defaultdict(list)
    for producer in ctx.plan.producers:
        by_run[producer.run].extend(ctx.plan.rows(producer))
    total = 0
    # One finding per pair of templates, listing the rows that collide.
    clashes: dict[tuple[int, int], list[tuple[Row, Row, str]]] = defaultdict(list)
    for run_rows in by_run.values():
        total += len(run_rows)
        for a, b in candidate_pairs(run_rows):
            example = witness(language(a.pieces), language(b.pieces))
            if example is not None:
                clashes[(id(a.template), id(b.template))].append((a, b, example))
    findings = [_finding(ctx, pairs) for pairs in clashes.values()]
    return [
        result(
            ctx, check, findings, f"{total} artifact rows of active producers have distinct names"
        )
    ]


def _finding(ctx: Context, pairs: list[tuple[Row, Row, str]]) -> Finding:
    m = ctx.migration
    a, b, example = pairs[0]
    pa, pb = m.producers[a.producer], m.producers[b.producer]
    same = "the same template" if a.template is b.template else f"template {b.template.text!r}"
    more = ""
    if len(pairs) > 1:
        rows = row_list([format_assignment(x.assignment) for x, _, _ in pairs[1:]])
        more = f"; so can {len(pairs) - 1} more row pair{'s' if len(pairs) > 2 else ''} ({rows})"
    return Finding(
        f"artifact names collide: {a.name} of producer {pa.id} {where(pa)} "
        f"(active {ctx.cause(pa)}) and {b.name} of producer {pb.id} {where(pb)} "
        f"({same}, active {ctx.cause(pb)}) can both be {example!r}{more}: give one of them "
        "a distinguishing part (e.g. the CUDA version) or turn one off.",
        b.template.loc,
    )
