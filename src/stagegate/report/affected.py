"""`affected`: the plan of a change as text, JSON and GitHub outputs.

``--format github`` appends to ``$GITHUB_OUTPUT`` (through ``ciflags.append``, all or
nothing) the keys a workflow puts in ``if:`` and ``strategy.matrix``, prints them, and
appends the plan to ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stagegate.report import Output, Renderers, echo_json, github, lines, single_lines
from stagegate.words import one_line

if TYPE_CHECKING:
    from stagegate.engine.affected import Affected


def as_json(result: Affected) -> dict[str, Any]:
    """``{stage, changed, rebuild, retest, reuse, releases, reasons: [{item, because}]}``."""
    return {
        "stage": result.stage,
        "changed": list(result.changed),
        "rebuild": list(result.rebuild),
        "retest": list(result.retest),
        "reuse": list(result.reuse),
        "releases": list(result.releases),
        "reasons": [{"item": r.item, "because": r.because} for r in result.reasons],
    }


def _warnings(result: Affected) -> str:
    return lines(*(one_line(f"{w.loc}: warning: {w.message}") for w in result.warnings))


_SECTIONS = (
    ("rebuild", "rebuild"),
    ("retest", "retest"),
    ("reuse", "reuse from the baseline run"),
    ("releases", "releases that would ship from the rebuilt producers"),
)


def text(result: Affected) -> str:
    migration = result.migration
    title = " ".join(migration.title(result.stage).split())
    out = [f"{migration.id}: stage {result.stage}: {title}"]
    out.append(
        f"change: {result.commits.merge_base[:12]} (merge base) .. {result.commits.head[:12]}, "
        f"{len(result.changed)} path{'' if len(result.changed) == 1 else 's'}"
    )
    out += [f"  {path}" for path in result.changed]
    if result.full:
        out.append(f"FULL REBUILD: {result.full}")
    for key, heading in _SECTIONS:
        why: Mapping[str, str] = getattr(result, key)
        out.append(f"{heading} ({len(why)}):" if why else f"{heading}: none")
        shown = result.full and key != "releases"
        out += [f"  {item}" if shown else f"  {item}: {because}" for item, because in why.items()]
    return single_lines(out)


def _plain(result: Affected) -> Output:
    return Output(lines(text(result)), _warnings(result))


def _json(result: Affected) -> Output:
    return Output(echo_json(as_json)(result).out, _warnings(result))


def outputs(result: Affected) -> list[tuple[str, str]]:
    """The ``$GITHUB_OUTPUT`` pairs: the lists as JSON, ``full``, the build ``matrix``
    (one ``{"producer": id}`` row per producer to rebuild) and one ``build-ID``,
    ``test-ID`` and ``reuse-ID`` true/false per active item of this run."""
    from stagegate.ci import ciflags
    from stagegate.engine.resolve import resolve

    plan = resolve(result.migration, result.stage)
    pairs = [
        ("stage", str(result.stage)),
        ("full", "true" if result.full else "false"),
        ("rebuild", ciflags.compact(list(result.rebuild))),
        ("retest", ciflags.compact(list(result.retest))),
        ("reuse", ciflags.compact(list(result.reuse))),
        ("releases", ciflags.compact(list(result.releases))),
        ("matrix", ciflags.compact({"include": [{"producer": p} for p in result.rebuild]})),
    ]
    for producer in plan.producers:
        if producer.run == "this":
            name = ciflags.output_name(producer.id)
            pairs.append((f"build-{name}", "true" if producer.id in result.rebuild else "false"))
            pairs.append((f"reuse-{name}", "true" if producer.id in result.reuse else "false"))
    for consumer in plan.consumers:
        name = ciflags.output_name(consumer.id)
        pairs.append((f"test-{name}", "true" if consumer.id in result.retest else "false"))
    return pairs


def summary(result: Affected) -> str:
    head = f"### stagegate affected: stage {result.stage}"
    if result.full:
        head += f"\n\n**Full rebuild**: {github.md_text(result.full)}"
    rows = [(f"`{r.item}`", github.md_text(r.because)) for r in result.reasons]
    return head + "\n\n" + github.table(("item", "because"), rows)


def publish(result: Affected, environ: Mapping[str, str]) -> Output:
    from stagegate.ci import ciflags  # the github format's alone: not loaded for the others

    written = ciflags.lines(outputs(result))
    ciflags.append(
        ciflags.targets(
            environ,
            [("GITHUB_OUTPUT", written), ("GITHUB_STEP_SUMMARY", summary(result) + "\n\n")],
        )
    )
    notes = [
        github.annotation("warning", w.message, w.loc, "stagegate affected")
        for w in result.warnings
    ]
    if result.full:
        notes.append(
            github.annotation("notice", f"full rebuild: {result.full}", None, "stagegate affected")
        )
    return Output(lines(*notes) + written)


AFFECTED: Renderers[Affected] = {
    "text": _plain,
    "json": _json,
    "github": lambda result: publish(result, os.environ),
}
