"""The Markdown description of a stage flip, for the pull request and the job summary.

Written by ``advance --pr-body FILE`` (and ``rollback --pr-body``) and by the
``github`` format of ``verify-pr`` (to ``$GITHUB_STEP_SUMMARY``): the stage's title
and outcome, what turns on and off (flags, item ids, artifact names), the check
results and a Mermaid graph of the target stage with what the flip adds marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from stagegate.checks.base import Result
from stagegate.engine.resolve import Change, diff, resolve
from stagegate.model import Migration
from stagegate.report import fenced
from stagegate.report.github import md_message, md_text
from stagegate.report.graph import _node_id, build, mermaid
from stagegate.report.results import table as result_table
from stagegate.words import counted, one_line

if TYPE_CHECKING:
    from stagegate.commands.flip import Flip


def _code(text: str) -> str:
    """``text`` as inline code on one line (a line break would end the span's paragraph)."""
    return "`" + one_line(text).replace("`", "'") + "`"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def changes(change: Change) -> list[str]:
    """What turns on and off, as Markdown lines."""
    if change.empty and not (change.names_added or change.names_removed):
        return ["Nothing turns on or off: no producer, consumer or release changes state."]
    lines: list[str] = []
    if change.flags:
        lines.append("**Flags**")
        lines.append("")
        lines += [f"- {_code(n)}: {_bool(a)} → **{_bool(b)}**" for n, a, b in change.flags]
        lines.append("")
    for heading, items in (("**Turns on**", change.on), ("**Turns off**", change.off)):
        if items:
            lines += [heading, ""]
            lines += [
                f"- {i.kind} {_code(i.id)}" + (f": {md_text(i.summary)}" if i.summary else "")
                for i in items
            ]
            lines.append("")
    if change.names_added or change.names_removed:
        lines.append("**Artifact names**")
        lines.append("")
        lines += [f"- added {_code(n)}" for n in change.names_added]
        lines += [f"- removed {_code(n)}" for n in change.names_removed]
        lines.append("")
    if change.release_changes:
        lines += ["**Planned release changes** (held exactly by `release-continuity`)", ""]
        for planned in change.release_changes:
            releases = ", ".join(_code(r) for r in planned.releases) or "no active release"
            verb = "undoes" if planned.undone else "changes"
            add = [g.text for g in planned.change.add] + [f"wheels {g}" for g in planned.change.wheels_add]
            drop = [g.text for g in planned.change.drop] + [f"wheels {g}" for g in planned.change.wheels_drop]
            adds = [f"adds {_code(g)}" for g in add]
            drops = [f"drops {_code(g)}" for g in drop]
            if planned.undone:
                adds, drops = (
                    [f"puts back {_code(g)}" for g in drop],
                    [f"takes out {_code(g)}" for g in add],
                )
            lines.append(
                f"- stage {planned.stage} {verb} release {releases} "
                f"(tag {_code(planned.change.tag)}): {', '.join([*adds, *drops])}"
            )
        lines.append("")
    return lines


def change_graph(migration: Migration, b: int, change: Change) -> str:
    """Mermaid source of stage ``b``, with what ``change`` (the flip to ``b``) turned on
    highlighted."""
    plan = resolve(migration, b)
    source = mermaid(plan)
    graph = build(plan)
    prefixes = {"producer": "p", "consumer": "c", "release": "r"}
    fresh = [_node_id(prefixes[i.kind], i.id) for i in change.on]
    fresh += [f"a{graph.artifacts.index(t)}" for t in change.names_added if t in graph.artifacts]
    extra = ["  classDef flipped fill:#d9f2d9,stroke:#2e7d32,stroke-width:2px"]
    if fresh:
        extra.append(f"  class {','.join(fresh)} flipped")
    if change.off:
        gone = ", ".join(f"{i.kind} {i.id}" for i in change.off)
        extra.append(f"  %% turned off (not drawn): {gone}")
    return source + "\n" + "\n".join(extra)


def markdown(
    migration: Migration,
    a: int,
    b: int,
    results: Sequence[Result] | None,
    *,
    checks_from: str = "",
    notes: Sequence[str] = (),
) -> str:
    """The description of the flip from stage ``a`` to ``b`` of ``migration``.

    ``results``: None when the checks were not run (verify-pr refuses a flip to a stage
    the base does not define before running any), so as not to claim they passed."""
    verb = "advance" if b > a else "rollback"
    title = {s: md_text(migration.title(s)) for s in (a, b)}  # repository text, shown as written
    heading = (
        f"## {migration.id}: stage {a} → {b}: {title[b]}"
        if a != b
        else f"## {migration.id}: stays at stage {b}: {title[b]}"
    )
    lines = [heading, ""]
    target = migration.stage_def(b)
    if target is not None and target.outcome:
        lines += [f"> {md_text(' '.join(target.outcome.split()))}", ""]
    source = migration.stage_def(max(a, b))
    rows = [
        (
            "Flip",
            f"{verb}: `stage: {a}` → `stage: {b}` in {_code(migration.file)}"
            if a != b
            else f"none: `stage: {b}` stays in {_code(migration.file)}",
        ),
        ("From", f"stage {a}: {title[a]}"),
        ("To", f"stage {b}: {title[b]}"),
    ]
    if source is not None:
        rows.append(("Stage file", _code(source.file)))
        rows.append(("Reversible", "yes" if source.reversible else "**no**: rollback refuses"))
    lines += [f"- **{name}**: {value}" for name, value in rows]
    lines.append("")
    change = diff(migration, a, b)
    lines += ["### What turns on and off", ""]
    lines += changes(change)
    lines += ["### Checks", ""]
    if results is None:
        lines += [f"The checks of stage {b} were not run.", ""]
    else:
        failed = sum(1 for r in results if not r.ok)
        verdict = "all passed" if not failed else f"**{failed} of {len(results)} failed**"
        lines.append(
            f"{counted(len(results), 'check')}, {verdict}"
            + (f" ({checks_from})" if checks_from else "")
            + "."
        )
        lines.append("")
    if results:
        lines += [result_table(results, brief=True), ""]
    if notes:
        lines += ["### Notes", ""]
        lines += [f"- {md_message(n)}" for n in notes]
        lines.append("")
    lines += [f"### Graph at stage {b}", ""]
    if a != b:
        lines += ["What the flip turns on is highlighted.", ""]
    lines.append(fenced(change_graph(migration, b, change), "mermaid"))
    return "\n".join(lines) + "\n"


def write_description(flip: Flip, path: str) -> None:
    """Write the pull-request description of ``flip`` (`--pr-body FILE`) atomically."""
    from pathlib import Path

    from stagegate.fs import write_atomic

    body = markdown(flip.migration, flip.old, flip.new, flip.results)
    write_atomic(Path(path), body.encode("utf-8"))
