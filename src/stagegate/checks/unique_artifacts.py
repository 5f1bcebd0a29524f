"""No two distinct template rows of active producers can yield the same artifact name."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator

from ..globs import language, literal_prefix, witness
from ..model import Check
from ..resolve import Row
from ..templates import format_assignment
from ._base import Context, Finding, Result, result, row_list, where

KIND = "unique-artifacts"
SUMMARY = "No two distinct template rows of active producers (in one run) can yield the same name."
ARGS: dict[str, object] = {}
REQUIRED: list[str] = []


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


def run(ctx: Context, check: Check) -> list[Result]:
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
