"""The model against the real workflows at the stage under test (the comparison of `drift`)."""

from __future__ import annotations

from typing import Any

from stagegate.checks._base import Context, Finding, Result, result
from stagegate.model import Check, Migration, WorkflowSettings
from stagegate.model.templates import Placeholder
from stagegate.records import field_names, replace
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


HEAD_SETTINGS = frozenset({"jobs"})
"""The fields of ``WorkflowSettings`` that describe the head's own items (each item's
``jobs``); every other field (``paths``, ``bind``, and any added later) is taken from
the base under verify-pr."""


def judged(ctx: Context) -> Migration:
    """The migration the check compares with the workflows: under verify-pr the head's
    items with the base's ``workflows`` settings, so that the pull request that adds an
    upload cannot also narrow ``workflows.paths`` or bind the value away.

    A base bind that names a flag or axis the head no longer declares is left out (what
    it bound is then unresolved); removing a flag is refused by the gate itself."""
    if ctx.baseline is None:
        return ctx.migration
    head, base = ctx.migration, ctx.baseline.workflows
    taken: dict[str, Any] = {
        name: getattr(base, name)
        for name in field_names(WorkflowSettings)
        if name not in HEAD_SETTINGS
    }
    taken["bind"] = {
        key: bind
        for key, bind in base.bind.items()
        if (bind.when is None or bind.when.names() <= head.flags.keys())
        and (
            bind.text is None
            or all(
                part.axis in head.axes for part in bind.text.parts if isinstance(part, Placeholder)
            )
        )
    }
    return replace(head, workflows=replace(head.workflows, **taken))


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


_READINGS: dict[int, tuple[object, object, list[tuple[dict[Any, Any], Any]]]] = {}
"""Readings of the workflows made for a migration, each with what it took from its stage."""


def _reading(subject: Migration, stage: int, files: object) -> Any:
    """The workflows read at ``stage``: a reading made at another stage for the same model
    and files where everything it took from its stage is the same at this one (flag
    values, `stagegate flags`/`matrix` outputs), else read afresh. `check --all` runs the
    check at the current stage and every stage ahead; they differ by a few flags."""
    from stagegate.ci.files import Files
    from stagegate.ci.workflows import read, same_at

    assert isinstance(files, Files)
    kept = _READINGS.get(id(subject))
    if kept is None or kept[0] is not subject or kept[1] is not files:
        _READINGS.clear()  # one migration at a time
        kept = _READINGS[id(subject)] = (subject, files, [])
    for took, made in kept[2]:
        if made.stage == stage or same_at(subject, stage, took):
            return _at(made, stage)
    stage_reads: dict[Any, Any] = {}
    reading = read(subject, stage, files, stage_reads=stage_reads)
    kept[2].append((stage_reads, reading))
    return reading


def _at(reading: Any, stage: int) -> Any:
    """``reading`` as made at ``stage``: the number in the ``off`` of a transfer whose `if:`
    is false (``Reader.condition``) is the only place a reading names its stage."""
    if reading.stage == stage:
        return reading
    old, new = f" is false at stage {reading.stage}", f" is false at stage {stage}"
    transfers = tuple(
        replace(t, off=t.off[: -len(old)] + new) if t.off.endswith(old) else t
        for t in reading.transfers
    )
    return replace(reading, stage=stage, transfers=transfers)


def run(ctx: Context, check: Check) -> list[Result]:
    from stagegate.ci.drift import drift

    subject = judged(ctx)
    reading = _reading(subject, ctx.stage, _files(ctx))
    found = drift(subject, ctx.stage, reading)
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
