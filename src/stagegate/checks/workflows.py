"""The model against the real workflows at the stage under test (the comparison of `drift`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stagegate.checks._elsewhere import REQUIRES, elsewhere, not_run
from stagegate.checks._elsewhere import validate as validate
from stagegate.checks.base import Context, Finding, Result, result
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
    },
    "requires": REQUIRES,
}
REQUIRED: list[str] = []
READS = "repository"


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


_FILES: dict[int, tuple[object, Path, object]] = {}
"""The parsed workflow files of a migration, kept while it is checked stage by stage."""


def _files(ctx: Context) -> object:
    """The workflows of the tree the check runs in (``ctx.root``: a temporary worktree
    under verify-pr; read from its top, named as the migration's files are named),
    parsed once for all the stages it is run at."""
    from stagegate.ci.files import workflow_root

    key = id(ctx.migration)
    kept = _FILES.get(key)
    if kept is None or kept[0] is not ctx.migration or kept[1] != ctx.root:
        _FILES.clear()  # one migration at a time: no growth across loads
        kept = _FILES[key] = (ctx.migration, ctx.root, workflow_root(ctx.root, ctx.migration.root))
    return kept[2]


_READINGS: dict[int, tuple[object, object, list[tuple[dict[Any, Any], Any]]]] = {}
"""Readings of the workflows made for a migration, each with what it took from its stage."""


def _reading(subject: Migration, stage: int, files: object) -> tuple[Any, Any]:
    """The workflows read at ``stage`` (with what the artifact actions do: ``read_model``): a reading made at another stage for the same model
    and files where everything it took from its stage is the same at this one (flag
    values, `stagegate flags`/`matrix` outputs), else read afresh. `check --all` runs the
    check at the current stage and every stage ahead; they differ by a few flags."""
    from stagegate.ci.files import Files
    from stagegate.ci.ships import read_model
    from stagegate.ci.workflows import same_at

    assert isinstance(files, Files)
    kept = _READINGS.get(id(subject))
    if kept is None or kept[0] is not subject or kept[1] is not files:
        _READINGS.clear()  # one migration at a time
        kept = _READINGS[id(subject)] = (subject, files, [])
    for took, made in kept[2]:
        if made[0].stage == stage or same_at(subject, stage, took):
            return _at(made[0], stage), made[1]
    stage_reads: dict[Any, Any] = {}
    made = read_model(subject, stage, files, stage_reads=stage_reads)
    kept[2].append((stage_reads, made))
    return made


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
    from stagegate.ci.drift import drift, workflow_side

    skip = elsewhere(ctx, check)
    if skip is not None:
        return [not_run(ctx, check, skip)]
    subject = judged(ctx)
    reading, side = _reading(subject, ctx.stage, _files(ctx))
    found = drift(subject, ctx.stage, reading, side=side)
    findings = [
        Finding(
            f"{f.kind}: {f.message}"
            + (
                f" (workflow side: {f.other.file}:{f.other.line})"
                if f.other and f.other.file != f.loc.file
                else ""
            ),
            f.loc,
            related=workflow_side(f, reading),
        )
        for f in found.findings
    ]
    if check.args.get("strict"):
        findings += [
            Finding(f"unresolved {u.expression}: {u.reason}; bind it under workflows.bind", u.loc)
            for u in (*reading.unresolved, *found.unread)
        ]
    from stagegate.ci.transfers import downloads_json, uploads_json

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
