"""Reuse from a baseline run is safe: nothing reused can reach a release unnoticed and,
given a change and the baseline run, every reused producer is unchanged and complete."""

from __future__ import annotations

from stagegate.checks.base import Context, Finding, Result, result
from stagegate.model import Check

KIND = "reuse-safe"
SUMMARY = (
    "No release ships what was built against rows taken from a baseline run (unless it says "
    "`ships_reused: true`), `run: baseline` inputs take only this repository's producers, "
    "and, given `base` and `baseline`, the reuse `stagegate affected` plans is safe."
)
ARGS = {
    "base": {
        "type": "string",
        "minLength": 1,
        "description": "The change's base ref (with `baseline`): the change is HEAD since "
        "their merge base.",
    },
    "baseline": {
        "type": "string",
        "minLength": 1,
        "description": "The baseline file the planning job wrote (relative to the "
        "migration's folder), as `stagegate affected --baseline` reads it.",
    },
}
REQUIRED: list[str] = []
READS = "repository"
"""Given ``base`` and ``baseline`` it reads git and the planning job's baseline file, so
``check --all`` holds it at the current stage and shows it as readiness ahead."""


def run(ctx: Context, check: Check) -> list[Result]:
    from stagegate.engine.affected import reuse_hazards, reuse_problem

    findings = [Finding(message, loc) for loc, message in reuse_hazards(ctx.migration, ctx.stage)]
    base, baseline = check.args.get("base"), check.args.get("baseline")
    if (base is None) != (baseline is None):
        findings.append(
            Finding("give both `base` and `baseline`, or neither (the model alone)", check.loc)
        )
    elif base is not None and baseline is not None:
        from stagegate.git.changes import gather, model_paths
        from stagegate.git.repo import open_repository

        repo = open_repository(ctx.root)
        change = gather(repo, base, "HEAD", str(ctx.root / baseline))
        why = reuse_problem(
            ctx.migration, ctx.stage, change, model=model_paths(repo, ctx.migration)
        )
        if why:
            findings.append(Finding(f"the planned reuse is unsafe: {why}", check.loc))
    ok = "reuse cannot reach a release" + (
        f"; the change since {base} reuses safely" if base is not None else ""
    )
    return [result(ctx, check, findings, ok)]
