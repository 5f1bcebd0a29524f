"""Check results as text, JSON and GitHub workflow commands, from one result type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

from stagegate.checks.base import Result
from stagegate.errors import Loc
from stagegate.model import Migration
from stagegate.records import record
from stagegate.report import Output, Renderers, echo_json, github, lines, nothing, single_lines
from stagegate.words import counted, one_line


def ok(results: Sequence[Result]) -> bool:
    """No result fails (a readiness result of a stage ahead fails nothing)."""
    return not any(r.fails for r in results)


def stage_header(migration: Migration, stage: int) -> str:
    return f"stage {stage}: {one_line(migration.title(stage))}"


def duration(seconds: float) -> str:
    """``0.02 s``, ``4.1 s``, ``2 min 05 s``: as long as a reader needs, no longer."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


def names_place(message: str, loc: Loc) -> bool:
    """Whether ``message`` names the place already (``file:line`` followed by a colon,
    a parenthesis or its end, as the retired and pytest findings do): then no ``at``
    line repeats it."""
    place = loc.at
    return any(
        message[i + len(place) : i + len(place) + 1] in ("", ":", ")", " ", ",", ";")
        for i in _occurrences(message, place)
    )


def _occurrences(text: str, part: str) -> list[int]:
    found, start = [], text.find(part)
    while start != -1:
        found.append(start)
        start = text.find(part, start + 1)
    return found


OUTPUT_KINDS = frozenset({"command", "pytest"})
"""The check kinds whose finding messages carry, after their first line, the output of the
program they ran: shown line by line, indented under the finding. Every other message,
and each value in any of them, is one line (a line break in a value is shown escaped)."""


def finding_lines(item: Result, message: str) -> list[str]:
    """A finding's message as the lines it is shown on."""
    if item.check in OUTPUT_KINDS:
        return message.splitlines() or [""]
    return [one_line(message)]


def result_lines(item: Result, seconds: float | None = None) -> list[str]:
    """The lines of one result: its mark, label and message, then its findings; each one
    line, whatever values it holds."""
    mark = "ok  " if item.ok else "todo" if item.readiness else "FAIL"
    head = item.message.split(": ", 1)[1] if ": " in item.message else item.message
    took = f" ({duration(seconds)})" if seconds is not None else ""
    lines = [f"  {mark}  {item.label}: {head}{took}"]
    for finding in item.findings:
        first, *rest = finding_lines(item, finding.message)
        lines.append(f"        - {first}")
        lines += [f"          {line}" for line in rest]
        if finding.loc is not None and not names_place(finding.message, finding.loc):
            lines.append(f"          at {finding.loc.at}")
    if item.fails and item.loc is not None:
        lines.append(f"        (check declared at {item.loc.at})")
    return [one_line(line) for line in lines]


def skipped_line(label: str, reason: str) -> str:
    """A check ``check --all`` does not run at a stage, and why."""
    return one_line(f"  --    {label}: {reason}")


def closing(results: Sequence[Result], *, stopped: int | None = None) -> str:
    """The last line: how many checks at how many stages, and how many failed.

    ``stopped``: the run stopped at its first failure with that many checks not run."""
    failed = sum(1 for r in results if r.fails)
    waiting = sorted({r.stage for r in results if r.readiness and not r.ok})
    stages = len({r.stage for r in results})
    where = (
        f"{stages} stages"
        if stages != 1
        else f"stage {results[0].stage}"
        if results
        else "no stage"
    )
    line = f"{counted(len(results), 'check')} at {where}: " + (
        "all passed" if not failed else f"{failed} failed"
    )
    if waiting:
        todo = sum(1 for r in results if r.readiness and not r.ok)
        at = ", ".join(map(str, waiting))
        line += (
            f"; {counted(todo, 'readiness check')} not met yet at "
            f"{'stage' if len(waiting) == 1 else 'stages'} {at} (to do before "
            f"{'that flip' if len(waiting) == 1 else 'those flips'}; --ahead=fail fails on them)"
        )
    if stopped:
        line += f"; stopped at the first failure (--fail-fast), {stopped} not run"
    return line


def text(
    migration: Migration,
    results: Sequence[Result],
    seconds: Sequence[float | None] | None = None,
) -> str:
    """All results, stage by stage; ``seconds``: each result's duration, in order."""
    lines: list[str] = []
    took = list(seconds) if seconds is not None else [None] * len(results)
    for stage, group in groupby(zip(results, took, strict=True), key=lambda r: r[0].stage):
        lines.append(stage_header(migration, stage))
        for item, spent in group:
            lines += result_lines(item, spent)
    lines.append(closing(results))
    return single_lines(lines)


def as_json(
    migration: Migration,
    results: Sequence[Result],
    *,
    stage: int,
    every: bool,
    skipped: Sequence[tuple[int, str, str]] = (),
) -> dict[str, Any]:
    """``skipped``: (stage, label, reason) of each check not run."""
    return {
        "migration": migration.id,
        "stage": stage,
        "all": every,
        "ok": ok(results),
        "skipped": [{"stage": s, "label": label, "reason": why} for s, label, why in skipped],
        "results": [
            {
                "check": r.check,
                "label": r.label,
                "stage": r.stage,
                "ok": r.ok,
                "readiness": r.readiness,
                "message": r.message,
                "origin": r.origin,
                "file": r.loc.file if r.loc else None,
                "line": r.loc.line if r.loc else None,
                "findings": [
                    {
                        "message": f.message,
                        "file": f.loc.file if f.loc else None,
                        "line": f.loc.line if f.loc else None,
                    }
                    for f in r.findings
                ],
            }
            for r in results
        ],
    }


def workflow_commands(
    results: Sequence[Result], changed: Mapping[str, set[int]] | None = None
) -> str:
    """One ``::error`` per finding, on the line that declares the culprit, or on the line
    of it (or of an item the finding names) that the pull request changed (``changed``:
    lines per file from the top of the repository), where the diff shows it."""
    lines = []
    for r in results:
        if r.ok:
            continue
        # a stage ahead that is not ready yet is a warning: it blocks that flip, not this run
        level = "warning" if r.readiness else "error"
        title = f"stagegate {r.check} (stage {r.stage}{', readiness' if r.readiness else ''})"
        for finding in r.findings or ():
            where = github.on_changed_line(
                finding.loc or r.loc, finding.message, changed, finding.related
            )
            lines.append(github.annotation(level, finding.message, github.placed(where), title))
        if not r.findings:
            where = github.on_changed_line(r.loc, r.message, changed)
            lines.append(github.annotation(level, r.message, github.placed(where), title))
    return "\n".join(lines)


def table(results: Sequence[Result], *, brief: bool = False) -> str:
    """A Markdown table of results; ``brief``: only the first line of each finding.

    Repository text is escaped (a backtick in a glob stays a backtick) and locations
    link to the file at the commit when running in GitHub Actions."""

    def details(r: Result) -> str:
        if r.ok:
            return github.md_message(r.message.split(": ", 1)[-1])
        lines = []
        for f in r.findings:
            shown = finding_lines(r, f.message)
            text = "\n".join(github.md_message(line) for line in shown[: 1 if brief else None])
            if f.loc is not None and not names_place(f.message, f.loc):
                text += f" (at {github.md_location(f.loc.file, f.loc.line)})"
            lines.append(text)
        text = ("; " if brief else "\n").join(lines) or github.md_message(r.message)
        if r.loc is not None and not brief:
            text += f"\n(check declared at {github.md_location(r.loc.file, r.loc.line)})"
        return text

    rows = [
        (
            str(r.stage),
            github.md_text(r.label),
            "pass" if r.ok else "not ready" if r.readiness else "**fail**",
            details(r),
        )
        for r in results
    ]
    return github.table(("stage", "check", "result", "details"), rows)


def summary(migration: Migration, results: Sequence[Result], heading: str) -> str:
    """The step summary: the verdict, the failures first, the passing rows folded away."""
    failed = [r for r in results if r.fails]
    waiting = [r for r in results if r.readiness and not r.ok]
    passed = [r for r in results if r.ok]
    verdict = "all passed" if not failed else f"{len(failed)} of {len(results)} failed"
    if waiting:
        verdict += f", {len(waiting)} not ready yet at a stage ahead"
    parts = [
        f"### {heading}",
        f"{github.md_text(migration.id)}: {counted(len(results), 'check')}, {verdict}.",
    ]
    if failed:
        parts.append(table(failed))
    if waiting:
        parts.append(
            f"Stages ahead, not ready yet ({counted(len(waiting), 'readiness check')}; "
            "to do before their flips):"
        )
        parts.append(table(waiting))
    if passed:
        parts.append(
            f"<details><summary>{counted(len(passed), 'check')} passed</summary>\n\n"
            f"{table(passed)}\n\n</details>"
        )
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- renderer table


@record
class Checked:
    """`check`'s result: what ran, at one stage or (``every``) at each stage at itself.
    Its text was shown as the checks ran (``report.live``)."""

    migration: Migration
    results: tuple[Result, ...]
    stage: int
    every: bool = False
    skipped: tuple[tuple[int, str, str], ...] = ()
    """(stage, label, reason) of each check not run (``--all``: repository checks at past
    stages)."""

    @property
    def ok(self) -> bool:
        return ok(self.results)


def _check_github(result: Checked) -> Output:
    annotations = workflow_commands(result.results, github.pull_request_changes(result.migration))
    heading = "stagegate check --all" if result.every else f"stagegate check (stage {result.stage})"
    return Output(
        lines(annotations or None), summary=summary(result.migration, result.results, heading)
    )


CHECK: Renderers[Checked] = {
    "text": nothing,
    "json": echo_json(
        lambda c: as_json(c.migration, c.results, stage=c.stage, every=c.every, skipped=c.skipped)
    ),
    "github": _check_github,
}
