"""The model against the real workflows at the stage under test (the comparison of `drift`)."""

from __future__ import annotations

from stagegate.checks._base import Context, Finding, Result, result
from stagegate.model import Check
from stagegate.words import counted

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
READS = "repository"
"""Reads the repository's files as they are today: `check --all` runs it at the current
stage, shows it as readiness at stages ahead and does not run it at past stages."""


_FILES: dict[int, tuple[object, object]] = {}
"""The parsed workflow files of a migration, kept while it is checked stage by stage."""


def _files(ctx: Context) -> object:
    """The workflows of the tree the check runs in (``ctx.root``: a temporary worktree
    under verify-pr), parsed once for all the stages it is run at."""
    from stagegate.ci.files import Files

    key = id(ctx.migration)
    kept = _FILES.get(key)
    if kept is None or kept[0] is not ctx.migration or getattr(kept[1], "root", None) != ctx.root:
        _FILES.clear()  # one migration at a time: no growth across loads
        kept = _FILES[key] = (ctx.migration, Files(ctx.root))
    return kept[1]


def run(ctx: Context, check: Check) -> list[Result]:
    from stagegate.ci.drift import drift
    from stagegate.ci.files import Files
    from stagegate.ci.workflows import read

    files = _files(ctx)
    assert isinstance(files, Files)
    reading = read(ctx.migration, ctx.stage, files)
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
    from stagegate.ci.drift import downloads_json, uploads_json

    ups, downs = len(uploads_json(reading)), len(downloads_json(reading))
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
