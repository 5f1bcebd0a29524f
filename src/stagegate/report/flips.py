"""Renderings of advance/rollback, verify-pr and log: text, JSON and GitHub."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stagegate.records import record
from stagegate.report import (
    Output,
    Renderers,
    echo_json,
    echo_text,
    fenced,
    github,
    lines,
    nothing,
    shallow_note,
    single_lines,
)
from stagegate.report import results as checks
from stagegate.words import counted, one_line

if TYPE_CHECKING:
    from stagegate.commands.flip import Flip
    from stagegate.commands.gate import Verdict
    from stagegate.commands.log import History


# --------------------------------------------------------------------------- advance / rollback


def flip_text(flip: Flip, command: str, *, streamed: bool = False) -> str:
    """``streamed``: the check lines were shown as they ran (``report.live``)."""
    m = flip.migration
    lines: list[str] = []
    if flip.results:
        if not streamed:
            lines.append(checks.text(m, list(flip.results)))
        lines.append("")
    target = f"stage {flip.new}: {one_line(m.title(flip.new))}"
    path = one_line(flip.path)
    if not flip.ok:
        lines.append(
            f"{command}: refused: the checks of stage {flip.failed_stage} failed; "
            f"{path} is unchanged (still stage {flip.old})."
        )
        return "\n".join(lines)
    if flip.dry_run:
        lines.append(flip.diff)
        lines.append("")
        lines.append(
            f"{command} --dry-run: the checks pass; {path} would go from stage {flip.old} "
            f"to {target}. Nothing was written."
        )
    else:
        lines.append(
            f"{path}: stage {flip.old} -> {target}. Commit this one-line change and open a "
            "pull request; `stagegate verify-pr` checks it."
        )
    return "\n".join(lines)


def flip_json(flip: Flip, command: str) -> dict[str, Any]:
    report = checks.as_json(flip.migration, list(flip.results), stage=flip.new, every=False)
    return {
        "command": command,
        "file": flip.path,
        "from": flip.old,
        "to": flip.new,
        "title": flip.migration.title(flip.new),
        "ok": flip.ok,
        "dry_run": flip.dry_run,
        "written": flip.written,
        "checked_stages": list(flip.checked),
        "failed_stage": flip.failed_stage,
        "diff": flip.diff,
        "results": report["results"],
    }


# --------------------------------------------------------------------------- verify-pr


def _side(verdict: Verdict, which: str) -> str:
    side = verdict.base if which == "base" else verdict.head
    stage = f"stage {side.migration.stage}" if side.migration else "no migration file"
    return f"{which} {side.ref} ({side.commit[:12]}, {stage})"


def gate_header(stage: int) -> str:
    """The line above the checks verify-pr runs."""
    return f"checks of stage {stage}, taken from the base and evaluated on the head:"


def verdict_text(verdict: Verdict, *, streamed: bool = False) -> str:
    """``streamed``: the checks were shown as they ran, under ``gate_header``."""
    lines = [""] if streamed else []
    lines += [
        one_line(f"verify-pr {verdict.file}: {_side(verdict, 'base')} -> {_side(verdict, 'head')}")
    ]
    for rule in verdict.rules:
        lines.append(one_line(f"  {'ok  ' if rule.ok else 'FAIL'}  {rule.rule}: {rule.message}"))
        lines += [one_line(f"        - {d}") for d in rule.details]
    head = verdict.head.migration
    if verdict.checked_stage is not None and head is not None and not streamed:
        lines.append("")
        lines.append(gate_header(verdict.checked_stage))
        lines.append(checks.text(head, verdict.results))
    for note in verdict.notes:
        lines.append(one_line(f"note: {note}"))
    failed_rules = [r.rule for r in verdict.rules if not r.ok]
    failed_checks = sum(1 for r in verdict.results if not r.ok)
    if verdict.ok:
        lines.append("verify-pr: accepted.")
    else:
        why = []
        if failed_rules:
            why.append(("rules " if len(failed_rules) > 1 else "rule ") + ", ".join(failed_rules))
        if failed_checks:
            why.append(f"{counted(failed_checks, 'check')} failed")
        lines.append(f"verify-pr: refused ({'; '.join(why)}).")
    return "\n".join(lines)


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    def side(which: str) -> dict[str, Any]:
        s = verdict.base if which == "base" else verdict.head
        return {
            "ref": s.ref,
            "commit": s.commit,
            "stage": s.migration.stage if s.migration else None,
        }

    head = verdict.head.migration or verdict.base.migration
    results = (
        checks.as_json(head, verdict.results, stage=verdict.checked_stage or 0, every=False)[
            "results"
        ]
        if head is not None
        else []
    )
    return {
        "ok": verdict.ok,
        "file": verdict.file,
        "base": side("base"),
        "head": side("head"),
        "compared": verdict.compared,
        "move": verdict.move,
        "checked_stage": verdict.checked_stage,
        "rules": [
            {
                "rule": r.rule,
                "ok": r.ok,
                "message": r.message,
                "details": list(r.details),
                "locations": [{"file": loc.file, "line": loc.line} for loc in r.locations],
            }
            for r in verdict.rules
        ],
        "results": results,
        "notes": list(verdict.notes),
    }


def verdict_annotations(verdict: Verdict, changed: Mapping[str, set[int]] | None = None) -> str:
    out = []
    for rule in verdict.rules:
        if rule.ok or rule.rule == "checks-pass":  # the failed checks are annotated below
            continue
        title = f"stagegate verify-pr: {rule.rule}"
        if rule.locations and len(rule.details) == len(rule.locations):
            out += [
                github.annotation("error", detail, loc, title)
                for detail, loc in zip(rule.details, rule.locations, strict=True)
            ]
        else:
            body = rule.message + "".join(f"\n- {d}" for d in rule.details)
            out.append(
                github.annotation(
                    "error", body, rule.locations[0] if rule.locations else None, title
                )
            )
    found = checks.workflow_commands(verdict.results, changed)
    if found:
        out.append(found)
    return "\n".join(out)


def verdict_summary(verdict: Verdict) -> str:
    from stagegate.report.flipdoc import markdown

    base, head = verdict.base.migration, verdict.head.migration
    status = "accepted" if verdict.ok else "**refused**"
    lines = [
        f"### stagegate verify-pr: {status}",
        "",
        f"{github.md_code(verdict.file)}: {_side(verdict, 'base')} → {_side(verdict, 'head')}",
        "",
        github.table(
            ("rule", "result", "details"),
            [
                (
                    r.rule,
                    "pass" if r.ok else "**fail**",
                    github.md_message("; ".join((r.message, *r.details))),
                )
                for r in verdict.rules
            ],
        ),
        "",
    ]
    if base is not None and head is not None:
        lines.append(
            markdown(
                head,
                base.stage,
                head.stage,
                verdict.results if verdict.checked_stage is not None else None,
                checks_from="taken from the base, evaluated on the head",
                notes=verdict.notes,
            )
        )
    elif verdict.notes:
        lines += [f"- {github.md_message(n)}" for n in verdict.notes]
    return "\n".join(lines)


# --------------------------------------------------------------------------- log


def history_text(history: History) -> str:
    lines = []
    if history.start is not None:
        s = history.start
        what = (
            "at stage {stage} in {commit} ({when}), where this shallow clone's history starts"
            if s.boundary
            else "created at stage {stage} in {commit} ({when})"
        )
        when = f"{s.date}, {s.author} <{s.email}>"
        lines.append(
            f"{history.file}: " + what.format(stage=s.stage, commit=s.commit[:12], when=when)
        )
    count = len(history.flips)
    lines.append(f"{counted(count, 'stage flip')}, oldest first:")
    for f in history.flips:
        mark = "" if f.direction != "jump" else "  (jumped stages)"
        lines.append(
            f"  {f.commit[:12]}  {f.date}  {f.author} <{f.email}>  {f.old} -> {f.new}  "
            f"{f.title}{mark}"
        )
    for commit, why in history.skipped:
        lines.append(f"  skipped {commit[:12]}: {why}")
    lines += shallow_note(history.shallow, "the history starts at its boundary", "it")
    return single_lines(lines)


def history_json(history: History) -> dict[str, Any]:
    start = history.start
    return {
        "file": history.file,
        "shallow": history.shallow,
        "start": None
        if start is None
        else {
            "commit": start.commit,
            "date": start.date,
            "author": start.author,
            "email": start.email,
            "stage": start.stage,
        },
        "flips": [
            {
                "commit": f.commit,
                "date": f.date,
                "author": f.author,
                "email": f.email,
                "subject": f.subject,
                "file": f.path,
                "from": f.old,
                "to": f.new,
                "direction": f.direction,
                "title": f.title,
            }
            for f in history.flips
        ],
        "skipped": [{"commit": c, "reason": r} for c, r in history.skipped],
    }


# --------------------------------------------------------------------------- renderer tables


@record
class Flipped:
    """`advance`'s or `rollback`'s result: the flip, and which of the two made it."""

    flip: Flip
    command: str
    streamed: bool = False
    """The check lines were shown as they ran (the text leaves them out)."""


def _flip_github(result: Flipped) -> Output:
    from stagegate.report.flipdoc import markdown

    flip = result.flip
    annotations = checks.workflow_commands(list(flip.results))
    return Output(
        lines(annotations or None, flip_text(flip, result.command)),
        summary=markdown(flip.migration, flip.old, flip.new, flip.results),
    )


def _verdict_github(verdict: Verdict) -> Output:
    annotations = verdict_annotations(verdict, github.verdict_changes(verdict))
    return Output(
        lines(annotations or None, verdict_text(verdict)), summary=verdict_summary(verdict)
    )


def _gate_failed_github(error: Exception) -> Output:
    return Output(
        lines(github.annotation("error", str(error), None, "stagegate verify-pr")),
        summary=f"### stagegate verify-pr: **failed**\n\n{fenced(str(error))}",
    )


FLIP: Renderers[Flipped] = {
    "text": echo_text(lambda f: flip_text(f.flip, f.command, streamed=f.streamed)),
    "json": echo_json(lambda f: flip_json(f.flip, f.command)),
    "github": _flip_github,
}
VERIFY: Renderers[Verdict] = {
    "text": echo_text(verdict_text),
    "json": echo_json(verdict_json),
    "github": _verdict_github,
}
VERIFY_STREAMED: Renderers[Verdict] = {
    **VERIFY,
    "text": echo_text(lambda verdict: verdict_text(verdict, streamed=True)),
}
"""verify-pr whose checks were shown as they ran (the text format)."""
VERIFY_FAILED: Renderers[Exception] = {
    "text": nothing,
    "json": nothing,
    "github": _gate_failed_github,
}
"""verify-pr that could not judge: what goes with the error's message (printed by stagegate.cli)."""
LOG: Renderers[History] = {"text": echo_text(history_text), "json": echo_json(history_json)}
