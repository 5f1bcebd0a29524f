"""`flags` and `matrix`: flag values and build rows as text, JSON, GitHub outputs and env lines.

The ``github`` renderers append to the files the runner names (``$GITHUB_OUTPUT``,
``$GITHUB_ENV``, ``$GITHUB_STEP_SUMMARY``) through ``ciflags.append``, all or nothing,
and print what they appended to ``$GITHUB_OUTPUT``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stagegate.ci import ciflags
from stagegate.records import record
from stagegate.report import Output, Renderers, echo_json, echo_text, github, lines, single_lines

if TYPE_CHECKING:
    from stagegate.engine.resolve import Plan


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _title(plan: Plan) -> str:
    """The stage's title on one line (a title may be a folded or literal YAML block)."""
    return " ".join(plan.migration.title(plan.stage).split())


def as_json(plan: Plan) -> dict[str, Any]:
    """``{migration, stage, flags: {name: bool}, active: {producers, consumers, releases}}``."""
    return {
        "migration": plan.migration.id,
        "stage": plan.stage,
        "flags": dict(plan.flags),
        "active": ciflags.active(plan),
    }


def text(plan: Plan) -> str:
    """The flag values for people: one line each, with the variable CI reads."""
    migration = plan.migration
    out = [f"{migration.id}: stage {plan.stage} of {migration.last}: {_title(plan)}"]
    width = max((len(name) for name in migration.flags), default=0)
    for name, value in plan.flags.items():
        env = migration.flags[name].env
        line = f"  {name:<{width}}  {_bool(value):<5}"
        out.append((line + f"  env {env}") if env else line.rstrip())
    if not migration.flags:
        out.append("  (no flags)")
    return single_lines(out)


def summary(plan: Plan) -> str:
    """The Markdown step summary of `flags --format github`."""
    migration = plan.migration
    rows = [
        (
            f"`{name}`",
            _bool(value),
            f"`{migration.flags[name].env}`" if migration.flags[name].env else "",
        )
        for name, value in plan.flags.items()
    ]
    head = f"### stagegate flags: stage {plan.stage} of {migration.last}: {github.md_text(_title(plan))}"
    return head + "\n\n" + github.table(("flag", "value", "env"), rows)


def publish_flags(plan: Plan, environ: Mapping[str, str]) -> str:
    """`flags --format github`: append the outputs to $GITHUB_OUTPUT, the ``env`` values to
    $GITHUB_ENV and a table to $GITHUB_STEP_SUMMARY (each where set), all or nothing;
    return the output lines, which are always printed."""
    outputs = ciflags.lines(ciflags.github_outputs(plan))
    ciflags.append(
        ciflags.targets(
            environ,
            [
                ("GITHUB_OUTPUT", outputs),
                ("GITHUB_ENV", ciflags.lines(ciflags.env_pairs(plan))),
                ("GITHUB_STEP_SUMMARY", summary(plan) + "\n\n"),
            ],
        )
    )
    return outputs


def publish_matrix(found: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """`matrix --format github`: append ``matrix=<JSON>`` to $GITHUB_OUTPUT (where set) and
    return it, to be printed."""
    written = ciflags.lines([("matrix", ciflags.compact(found))])
    ciflags.append(ciflags.targets(environ, [("GITHUB_OUTPUT", written)]))
    return written


FLAGS: Renderers[Plan] = {
    "text": echo_text(text),
    "json": echo_json(as_json),
    "github": lambda plan: Output(publish_flags(plan, os.environ)),
    "env": lambda plan: Output(ciflags.lines(ciflags.env_pairs(plan))),
}


@record
class Matrix:
    """`matrix`'s result: a producer's build rows, ``{"include": [...]}``."""

    producer: str
    found: dict[str, list[dict[str, str]]]

    @property
    def warning(self) -> str | None:
        return ciflags.matrix_warning(self.found, self.producer)


def _matrix_json(result: Matrix) -> Output:
    warning = result.warning
    return Output(
        lines(ciflags.compact(result.found)),
        lines(f"stagegate: warning: {warning}") if warning else "",
    )


def _matrix_github(result: Matrix) -> Output:
    warning = result.warning
    shown = github.annotation("warning", warning, None, "stagegate matrix") if warning else None
    return Output(lines(shown) + publish_matrix(result.found, os.environ))


MATRIX: Renderers[Matrix] = {"json": _matrix_json, "github": _matrix_github}
