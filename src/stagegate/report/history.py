"""`history` as text, JSON and a GitHub step summary: every stage, done, current or ahead."""

from __future__ import annotations

from typing import Any

from stagegate.checks.base import Readiness
from stagegate.commands.history import Entry, Timeline
from stagegate.report import (
    Output,
    Renderers,
    echo_json,
    echo_text,
    github,
    lines,
    shallow_note,
    single_lines,
)
from stagegate.report.plans import readiness_json
from stagegate.words import counted, one_line

MARKS = {"done": "  done   ", "current": "> current", "ahead": "  ahead  "}


def reached(entry: Entry) -> str:
    """How the stage was reached: the flip's commit and date, or the migration's start."""
    if entry.flip is not None:
        how = "rolled back to it" if entry.flip.direction == "rollback" else "flipped"
        return f"{how} in {entry.flip.commit[:12]} ({entry.flip.date})"
    if entry.start is not None:
        return f"since {entry.start.commit[:12]} ({entry.start.date})"
    if entry.state == "ahead":
        return ""
    return "flip not found in the history (shallow clone, or the file was added past it)"


def ready(readiness: Readiness | None) -> str:
    if readiness is None:
        return ""
    if readiness.error is not None:
        return f"readiness not evaluated: {readiness.error}"
    if not readiness.results:
        return "nothing in the repository to check"
    waiting = [r for r in readiness.results if not r.ok]
    if not waiting:
        return f"ready ({counted(len(readiness.results), 'repository check')} met)"
    shown = "; ".join(
        f"{r.label}: {r.message.split(': ', 1)[-1].split('; ', 1)[0]}" for r in waiting
    )
    return f"not ready: {shown} (stagegate check --stage {readiness.stage} lists them)"


def as_json(timeline: Timeline) -> dict[str, Any]:
    migration = timeline.migration
    return {
        "migration": migration.id,
        "stage": migration.stage,
        "last": migration.last,
        "shallow": timeline.shallow,
        "stages": [
            {
                "stage": e.stage,
                "state": e.state,
                "title": e.title,
                "file": e.file,
                "flip": None
                if e.flip is None
                else {
                    "commit": e.flip.commit,
                    "date": e.flip.date,
                    "author": e.flip.author,
                    "subject": e.flip.subject,
                    "from": e.flip.old,
                },
                "since": None
                if e.start is None
                else {"commit": e.start.commit, "date": e.start.date},
                "readiness": readiness_json(e.readiness),
            }
            for e in timeline.entries
        ],
    }


def _row(entry: Entry, width: int) -> str:
    about = reached(entry) or ready(entry.readiness)
    return f"{MARKS[entry.state]}  {entry.stage:>2}  {one_line(entry.title):<{width}}  {about}".rstrip()


def text(timeline: Timeline) -> str:
    migration = timeline.migration
    width = max(len(one_line(e.title)) for e in timeline.entries)
    out = [
        f"{migration.id}: stage {migration.stage} of {migration.last}",
        *(_row(entry, width) for entry in timeline.entries),
    ]
    out += shallow_note(timeline.shallow, "flips before its boundary are not shown", "them")
    return single_lines(out)


def summary(timeline: Timeline) -> str:
    rows = [
        (
            str(e.stage),
            ("**current**" if e.state == "current" else e.state),
            github.md_text(e.title),
            github.md_text(reached(e) or ready(e.readiness)),
        )
        for e in timeline.entries
    ]
    head = f"### stagegate history\n\n{github.md_text(timeline.migration.id)}: stage {timeline.migration.stage} of {timeline.migration.last}."
    return f"{head}\n\n{github.table(('stage', 'state', 'title', 'flip or readiness'), rows)}"


HISTORY: Renderers[Timeline] = {
    "text": echo_text(text),
    "json": echo_json(as_json),
    "github": lambda t: Output(lines(text(t)), summary=summary(t)),
}
