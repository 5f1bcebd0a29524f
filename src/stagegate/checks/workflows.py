"""The model against the real workflows at the stage under test (the comparison of `drift`)."""

from __future__ import annotations

from ..model import Check
from ..words import counted
from ._base import Context, Finding, Result, result

KIND = "workflows"
SUMMARY = (
    "What the workflows upload and download matches the active producers, consumers and "
    "releases (stagegate drift); with strict, every value must be evaluated."
)
ARGS = {
    "strict": {
        "type": "boolean",
        "default": False,
        "description": "Fail on values stagegate cannot evaluate, too (drift --strict).",
    }
}
REQUIRED: list[str] = []


def run(ctx: Context, check: Check) -> list[Result]:
    from ..drift import drift
    from ..workflows import read

    reading = read(ctx.migration, ctx.stage)
    found = drift(ctx.migration, ctx.stage, reading)
    findings = [
        Finding(
            f"{f.kind}: {f.message}"
            + (
                f" (workflow side: {f.other.file}:{f.other.line})"
                if f.other and f.other.file != f.loc.file
                else ""
            ),
            f.loc,
        )
        for f in found.findings
    ]
    if check.args.get("strict"):
        findings += [
            Finding(f"unresolved {u.expression}: {u.reason}; bind it under workflows.bind", u.loc)
            for u in reading.unresolved
        ]
    ups = sum(1 for t in reading.uploads if t.active)
    downs = sum(1 for t in reading.downloads if t.active)
    note = f"; {counted(len(reading.unresolved), 'value')} unresolved" if reading.unresolved else ""
    return [
        result(
            ctx,
            check,
            findings,
            f"{counted(len(reading.files), 'workflow file')}, {counted(ups, 'upload')} and "
            f"{counted(downs, 'download')} agree with the model{note}",
        )
    ]
