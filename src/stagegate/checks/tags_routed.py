"""Each listed tag is claimed by exactly one active release."""

from __future__ import annotations

from stagegate.checks._release_plan import apart
from stagegate.checks.base import Context, Finding, Result, result, where
from stagegate.engine.match import evaluation
from stagegate.engine.resolve import tag_claimed
from stagegate.errors import Problem
from stagegate.model import Check, Migration
from stagegate.words import counted

KIND = "tags-routed"
SUMMARY = "Each of `tags` (concrete tags) is claimed by exactly one active release."
ARGS = {
    "tags": {
        "type": "array",
        "minItems": 1,
        "items": {"type": "string", "minLength": 1},
        "description": "Concrete tags, e.g. [v13.4.2, v12.9.8].",
    }
}
REQUIRED = ["tags"]
READS = "model"


def validate(migration: Migration, check: Check) -> list[Problem]:
    return [
        Problem(
            check.loc,
            f"tags-routed tags: {tag!r} holds a space, which no git tag does; "
            "name concrete tags, such as v13.4.2.",
        )
        for tag in check.args["tags"]
        if any(c.isspace() for c in tag)
    ]


def run(ctx: Context, check: Check) -> list[Result]:
    findings = []
    for tag in check.args["tags"]:
        claim = evaluation(ctx.migration).claimants(tag, ctx.stage)
        if len(claim) == 1 or (
            claim and all(apart(a, b) for i, a in enumerate(claim) for b in claim[i + 1 :])
        ):
            continue  # one release, or one per set of dispatch values
        if claim:
            listed = ", ".join(f"{r.id} {where(r)} (tags {', '.join(r.tags)})" for r in claim)
            apart_hint = " (or their `dispatch` values)" if all(r.dispatch for r in claim) else ""
            message = (
                f"tag {tag} is claimed by {len(claim)} active releases: {listed}; narrow "
                f"their tags{apart_hint}."
            )
        else:
            dormant = [r for r in ctx.migration.releases.values() if tag_claimed(r, tag)]
            hint = (
                f"; {', '.join(f'{r.id} {where(r)}' for r in dormant)} would claim it but is off "
                f"{ctx.cause(dormant[0])}"
                if dormant
                else "; add a release whose tags match it"
            )
            message = f"tag {tag} is claimed by no active release{hint}."
        findings.append(Finding(message, claim[0].loc if claim else check.loc))
    count = len(check.args["tags"])
    return [
        result(
            ctx,
            check,
            findings,
            f"{counted(count, 'tag')} each routed to one release",
        )
    ]
