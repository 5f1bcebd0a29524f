"""`drift`: the comparison of the model with the workflows, as text, JSON and GitHub."""

from __future__ import annotations

from typing import Any

from stagegate.ci.drift import Drift, workflow_side
from stagegate.ci.transfers import downloads_json, uploads_json
from stagegate.report import (
    Output,
    Renderers,
    annotated,
    echo_json,
    echo_text,
    github,
    single_lines,
)
from stagegate.words import counted


def as_json(result: Drift) -> dict[str, Any]:
    reading = result.reading
    return {
        "stage": result.stage,
        "ok": result.ok,
        "uploads": uploads_json(reading),
        "downloads": downloads_json(reading),
        "findings": [
            {
                "kind": f.kind,
                "item": f.item,
                "file": f.loc.file,
                "line": f.loc.line,
                "message": f.message,
                "other": {"file": f.other.file, "line": f.other.line} if f.other else None,
                "consequences": [
                    {"item": c.item, "kind": c.kind, "lost": list(c.lost), "gained": list(c.gained)}
                    for c in f.consequences
                ],
            }
            for f in result.findings
        ],
        "unresolved": [
            {"file": u.loc.file, "line": u.loc.line, "expression": u.expression, "reason": u.reason}
            for u in reading.unresolved
        ],
        "unread": [
            {"file": u.loc.file, "line": u.loc.line, "expression": u.expression, "reason": u.reason}
            for u in result.unread
        ],
    }


def text(result: Drift) -> str:
    reading = result.reading
    out = [f"{f.loc.at}: {f.kind}: {f.message}" for f in result.findings]
    if reading.unresolved:
        out.append(
            f"{counted(len(reading.unresolved), 'value')} cannot be evaluated (bind them under "
            "workflows.bind; --strict fails on them)"
        )
        out += [f"  {u.loc.at}: unresolved {u.expression}: {u.reason}" for u in reading.unresolved]
    if result.unread:
        out.append(
            f"{counted(len(result.unread), 'step')} where artifacts flow "
            + ("is" if len(result.unread) == 1 else "are")
            + " not read (declare remote actions under workflows.actions, bind what an if: "
            "reads; --strict fails on them)"
        )
        out += [f"  {u.loc.at}: unread {u.expression}: {u.reason}" for u in result.unread]
    verdict = "no drift" if not result.findings else counted(len(result.findings), "finding")
    blind = [
        f"{counted(len(reading.unresolved), 'value')} not evaluated" if reading.unresolved else "",
        f"{counted(len(result.unread), 'step')} not read" if result.unread else "",
    ]
    if result.strict and any(blind):
        verdict += f"; --strict fails on the {' and the '.join(b for b in blind if b)}"
    out.append(
        f"drift at stage {result.stage}: {counted(len(reading.files), 'workflow file')}, "
        f"{counted(len(uploads_json(reading)), 'upload')}, "
        f"{counted(len(downloads_json(reading)), 'download')}: {verdict}"
    )
    return single_lines(out)


def workflow_commands(result: Drift) -> str:
    """``::error`` per finding; per unresolved value ``::warning`` (``::error`` when strict).

    In a pull request's job a finding lands on a line the pull request changed, where it
    or the workflow side it names has one (the upload step of a job, not the unchanged
    producer that the job no longer makes): ``github.on_changed_line``."""
    changed = github.changes_since_base(result.root) if result.findings else None
    found = [
        github.annotation(
            "error",
            f.message,
            github.placed(
                github.on_changed_line(f.loc, f.message, changed, workflow_side(f, result.reading))
            ),
            f"stagegate drift: {f.kind}",
        )
        for f in result.findings
    ]
    found += [
        github.annotation(
            "error" if result.strict else "warning",
            f"{what} {u.expression}: {u.reason}",
            github.placed(u.loc),
            f"stagegate drift: {what}",
        )
        for what, values in (("unresolved", result.reading.unresolved), ("unread", result.unread))
        for u in values
    ]
    return "\n".join(found)


def _github(result: Drift) -> Output:
    title = f"stagegate drift (stage {result.stage})"
    return annotated(workflow_commands(result), text(result), title)


DRIFT: Renderers[Drift] = {"text": echo_text(text), "json": echo_json(as_json), "github": _github}
