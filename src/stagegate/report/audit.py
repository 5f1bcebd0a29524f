"""The audit report as text, JSON, Markdown and GitHub workflow commands."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stagegate.audit import Leftover, Place, Report, flag_references
from stagegate.git.search import BlameLine
from stagegate.model import Item
from stagegate.model.references import label
from stagegate.report import Output, Renderers, echo_json, echo_text, github, lines, single_lines
from stagegate.words import counted, quoted


def _iso(timestamp: int) -> str:
    """A commit time as ISO 8601 in UTC (``datetime`` is imported only with --blame)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def _item(item: Item) -> str:
    return f"{item.kind} {item.id}"


def age(seconds: float) -> str:
    """'3 days', '2 months', '1 year': how long ago, roughly."""
    seconds = max(0.0, seconds)
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("day", 86400),
        ("hour", 3600),
    ):
        if seconds >= size:
            return counted(int(seconds // size), unit)
    return "less than an hour"


def blame_text(blame: BlameLine, now: float) -> str:
    if blame.commit is None:
        return "not committed yet"
    return f"{blame.commit[:10]} {blame.author} <{blame.email}>, {age(now - blame.time)} ago"


def blame_json(blame: BlameLine, now: float) -> dict[str, Any]:
    if blame.commit is None:
        return {"commit": None, "author": None, "email": None, "date": None, "age_days": None}
    return {
        "commit": blame.commit,
        "author": blame.author,
        "email": blame.email,
        "date": _iso(blame.time),
        "age_days": int(max(0.0, now - blame.time) // 86400),
    }


def _grouped(leftovers: Sequence[Leftover]) -> list[tuple[Place, list[Leftover]]]:
    """Leftovers of one item, one entry per line (or file) with every string found there."""
    groups: dict[tuple[str, int | None], tuple[Place, list[Leftover]]] = {}
    for leftover in leftovers:
        key = (leftover.place.file, leftover.place.line)
        groups.setdefault(key, (leftover.place, []))[1].append(leftover)
    return list(groups.values())


def _folder(top: Path) -> str:
    """The work tree as a path from the current folder (``./``, ``../``): what a reader
    can type, never an absolute path (in CI, the runner's)."""
    try:
        relative = os.path.relpath(top)
    except ValueError:  # another drive (Windows)
        return str(top)
    return "./" if relative == "." else relative.replace(os.sep, "/") + "/"


def _searched(report: Report) -> str:
    ignore = report.migration.audit_ignore
    where = _folder(report.top)
    return f"searched the files git tracks in {where}, except the migration's own files" + (
        f" and {counted(len(ignore), 'audit.ignore glob')}" if ignore else ""
    )


# --------------------------------------------------------------------------- text


def text(report: Report, *, now: float | None = None) -> str:
    now = time.time() if now is None else now
    m, stage = report.migration, report.stage
    lines = [f"{m.id}: audit at stage {stage} of {m.last}: {m.title(stage)}", _searched(report)]

    lines += ["", f"retired at or before stage {stage}: {counted(len(report.retired), 'item')}"]
    if not report.retired:
        lines.append("  (no item with legacy entries is retired yet)")
    for retired in report.retired:
        item, found = retired.item, retired.leftovers
        where = f"{item.loc.at}"
        state = counted(len(found), "leftover") if found else "clean"
        lines.append(f"  {_item(item)}  (retired at stage {retired.retired_at}; {where}): {state}")
        for place, group in _grouped(found):
            refs = ", ".join(x.reference for x in group)
            if group[0].kind == "path":
                noun = "legacy paths" if len(group) > 1 else "legacy path"
                lines.append(f"    {place.file}  (file; {noun} {refs})")
            else:
                shown = place.excerpt(group[0].reference)
                lines.append(f"    {place.file}:{place.line}: {shown}  [{refs}]")
            if group[0].blame is not None:
                lines.append(f"      last changed: {blame_text(group[0].blame, now)}")

    lines += ["", f"stale flags at stage {stage}: {counted(len(report.stale_flags), 'flag')}"]
    if not report.stale_flags:
        lines.append("  (every flag still changes at a later stage)")
    for stale in report.stale_flags:
        value = "true" if stale.value else "false"
        refs = ", ".join(label(r) for r in flag_references(stale.flag)) or "no references declared"
        left = counted(len(stale.places), "place") + " left" if stale.places else "none left"
        lines.append(f"  {stale.flag.id} = {value} from stage {stale.since} on ({refs}): {left}")
        for string, place in stale.places:
            lines.append(f"    {place.file}:{place.line}: {place.excerpt(string)}  [{string}]")

    lines += ["", f"burndown: {counted(len(report.burndown), 'item')} retired by later stages"]
    if not report.burndown:
        lines.append("  (nothing left to retire after this stage)")
    for burn in report.burndown:
        files = burn.files()
        shown = ", ".join(f"{file} ({count})" for file, count in files[:8])
        more = f", and {len(files) - 8} more files" if len(files) > 8 else ""
        left = (
            f"{len(burn.leftovers)} left in {counted(len(files), 'file')}: {shown}{more}"
            if files
            else "nothing left"
        )
        lines.append(f"  stage {burn.retired_at}  {_item(burn.item)}: {left}")

    lines.append("")
    if report.ok:
        lines.append(f"ok: nothing retired at or before stage {stage} is left.")
    else:
        lines.append(
            f"FAIL: {counted(len(report.findings), 'leftover')} of retired items. Remove them, or "
            "list files that mention them on purpose in audit.ignore."
        )
    return single_lines(lines)


# --------------------------------------------------------------------------- JSON


def _place_json(place: Place) -> dict[str, Any]:
    return {"file": place.file, "line": place.line, "col": place.col, "text": place.text}


def as_json(report: Report, *, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    m = report.migration

    def finding(x: Leftover) -> dict[str, Any]:
        out: dict[str, Any] = {
            "item": x.item.id,
            "item_kind": x.item.kind,
            "retired_at": x.retired_at,
            "kind": x.kind,
            "reference": x.reference,
            **_place_json(x.place),
        }
        if x.blame is not None:
            out["blame"] = blame_json(x.blame, now)
        return out

    return {
        "migration": m.id,
        "stage": report.stage,
        "last": m.last,
        "ok": report.ok,
        "findings": [finding(x) for x in report.findings],
        "stale_flags": [
            {
                "flag": s.flag.id,
                "value": s.value,
                "since": s.since,
                "searched": [label(r) for r in flag_references(s.flag)],
                "references": [{"reference": r, **_place_json(p)} for r, p in s.places],
            }
            for s in report.stale_flags
        ],
        "burndown": [
            {
                "item": b.item.id,
                "item_kind": b.item.kind,
                "retired_at": b.retired_at,
                "remaining": len(b.leftovers),
                "files": [{"file": f, "count": n} for f, n in b.files()],
            }
            for b in report.burndown
        ],
        "retired": [
            {
                "item": r.item.id,
                "item_kind": r.item.kind,
                "retired_at": r.retired_at,
                "leftovers": len(r.leftovers),
            }
            for r in report.retired
        ],
        "excluded": list(report.excluded),
        "ignore": list(m.audit_ignore),
    }


# --------------------------------------------------------------------------- Markdown and GitHub


def markdown(report: Report, *, now: float | None = None) -> str:
    now = time.time() if now is None else now
    m, stage = report.migration, report.stage
    verdict = (
        f"nothing retired at or before stage {stage} is left"
        if report.ok
        else f"**{counted(len(report.findings), 'leftover')} of retired items**"
    )
    parts = [
        f"### stagegate audit (stage {stage} of {m.last}: {github.md_text(m.title(stage))})",
        "",
        f"{github.md_code(m.id)}: {verdict}.",
    ]
    if report.findings:
        blamed = any(x.blame for x in report.findings)
        header = ["item", "retired at", "where", "reference", "line"]
        header += ["last changed"] if blamed else []
        rows = []
        for x in report.findings:
            where = x.place.file if x.kind == "path" else f"{x.place.file}:{x.place.line}"
            row = [
                _item(x.item),
                str(x.retired_at),
                github.md_code(where),
                github.md_code(x.reference)
                if x.kind == "reference"
                else f"file (legacy path {github.md_code(x.reference)})",
                github.md_code(x.place.excerpt(x.reference, 100)),
            ]
            if blamed:
                row.append(github.md_text(blame_text(x.blame, now)) if x.blame else "")
            rows.append(row)
        parts += ["", github.table(header, rows)]
    if report.stale_flags:
        rows = [
            [
                s.flag.id,
                "true" if s.value else "false",
                str(s.since),
                ", ".join(github.md_code(label(r)) for r in flag_references(s.flag))
                or "(none declared)",
                "<br>".join(github.md_code(f"{p.file}:{p.line}") for _, p in s.places)
                or "none left",
            ]
            for s in report.stale_flags
        ]
        parts += [
            "",
            f"**Stale flags** ({len(report.stale_flags)}): their value no longer changes, so "
            "the conditionals that read them can go.",
            "",
            github.table(
                ["flag", "value", "fixed from stage", "references", "still read at"], rows
            ),
        ]
    if report.burndown:
        rows = [
            [
                _item(b.item),
                str(b.retired_at),
                str(len(b.leftovers)),
                ", ".join(f"{github.md_code(f)} ({n})" for f, n in b.files()[:8]) or "none",
            ]
            for b in report.burndown
        ]
        parts += [
            "",
            "**Burndown**: items later stages retire, and what of them is left.",
            "",
            github.table(["item", "retired at stage", "left", "files"], rows),
        ]
    return "\n".join(parts)


def workflow_commands(report: Report) -> str:
    """``::error`` per finding at its line; ``::notice`` per line that reads a stale flag."""
    out = []
    for x in report.findings:
        title = f"stagegate audit: {_item(x.item)} (retired at stage {x.retired_at})"
        if x.kind == "path":
            message = f"{x.place.file} must be gone: legacy path {quoted(x.reference)} of {_item(x.item)}."
        else:
            message = f"{quoted(x.reference)} is left from {_item(x.item)}, retired at stage {x.retired_at}."
        out.append(github.annotation("error", message, x.place.loc, title))
    for s in report.stale_flags:
        value = "true" if s.value else "false"
        for string, place in s.places:
            message = (
                f"flag {s.flag.id} is {value} from stage {s.since} on: the conditional reading "
                f"{string!r} can go."
            )
            notice = github.annotation("notice", message, place.loc, "stagegate audit: stale flag")
            out.append(notice)
    return "\n".join(out)


# --------------------------------------------------------------------------- renderer table


def _github(report: Report) -> Output:
    annotations = workflow_commands(report)
    return Output(lines(annotations or None, text(report)), summary=markdown(report))


AUDIT: Renderers[Report] = {
    "text": echo_text(text),
    "json": echo_json(as_json),
    "github": _github,
    "markdown": echo_text(markdown),
}
