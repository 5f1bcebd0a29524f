"""Nothing retired at or before the stage has left a reference or a file behind."""

from __future__ import annotations

from stagegate.checks.base import Context, Finding, Result, result
from stagegate.model import Check
from stagegate.words import counted, quoted

KIND = "retired"
SUMMARY = (
    "Nothing retired at or before this stage has a legacy reference left in the files git "
    "tracks (outside audit.ignore) or a file matching its legacy paths."
)
ARGS: dict[str, object] = {}
REQUIRED: list[str] = []
READS = "repository"


def run(ctx: Context, check: Check) -> list[Result]:
    from stagegate.audit import search

    # verify-pr: the base's legacy entries and audit.ignore, searched in the head's tree
    # (the head's own migration files, wherever it moved them, name references on purpose).
    also = () if ctx.baseline is None else ctx.migration.own_files()
    report = search(ctx.reference, ctx.stage, root=ctx.root, exclude=also)
    findings = []
    for leftover in report.findings:
        item, place = leftover.item, leftover.place
        head = f"{item.kind} {item.id} (retired at stage {leftover.retired_at})"
        if leftover.kind == "path":
            message = f"{head}: {place.file} still exists (legacy path {quoted(leftover.reference)}); delete it."
        else:
            message = (
                f"{head}: {quoted(leftover.reference)} is still in {place.file}:{place.line}: "
                f"{place.excerpt(leftover.reference, 200)}"
            )
        findings.append(Finding(message, place.loc))
    searched = counted(len(report.retired), "retired item")
    ok = f"nothing retired at or before stage {ctx.stage} is left ({searched} with legacy entries searched)"
    failed = (
        f"{counted(len(findings), 'leftover')} of retired items; "
        "remove them, or list files that mention them on purpose in audit.ignore"
    )
    return [result(ctx, check, findings, ok, fail_message=failed)]
