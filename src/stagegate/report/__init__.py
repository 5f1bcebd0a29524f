"""Renderers: what a command prints is an ``Output``, made by the renderer its
``--format`` picks. (Here, in the package, because every command imports it: the
package is loaded at start-up for ``report.github`` anyway.)

Each command has one result type (what its core call returns, or a small record of
that and the options that shape the output) and one renderer table in ``report/``:
``{format name: renderer}``, where a renderer is a function from that result to an
``Output`` (check-jsonschema's reporter table, one per command). ``stagegate.cli`` looks the
renderer up by the option's value, prints the ``Output`` (and appends its step
summary) and returns the exit code; it holds no ``if fmt == ...``.
Nothing in a renderer acts, but for ``flags``/``matrix --format github``, whose
renderers append to ``$GITHUB_OUTPUT`` (all or nothing, before anything is printed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from stagegate.records import record
from stagegate.words import CONTROLS
from stagegate.words import printable as printable

R = TypeVar("R")


@record
class Output:
    """The exact text for standard output and for standard error (line ends included),
    and the Markdown for ``$GITHUB_STEP_SUMMARY`` (appended after both are printed, where
    the variable is set; None: nothing)."""

    out: str = ""
    err: str = ""
    summary: str | None = None


Renderers = Mapping[str, Callable[[R], Output]]
"""A command's table: format name -> renderer."""


def lines(*texts: str | None) -> str:
    """Each text on its own: followed by a line break; a None is left out (a part that is
    printed only when there is any: ``lines(annotations or None, report)``)."""
    return "".join(f"{text}\n" for text in texts if text is not None)


"""The C0 controls but line feed and tab, DEL, and the C1 controls."""


def single_lines(texts: Iterable[str]) -> str:
    """The lines of a text report, joined: each on one line whatever values it holds
    (``words.one_line``), so that a value with a line break cannot add a line (a forged
    ``continuity ...: ok``)."""
    from stagegate.words import one_line

    return "\n".join(one_line(text) for text in texts)


_BACKTICKS = re.compile("`+")


def fenced(text: str, info: str = "") -> str:
    """``text`` as a Markdown fenced code block that nothing in it can close: its fence is
    longer than any run of backticks in it (CommonMark closes a block only with a fence at
    least as long), so no heading, image, link or HTML of the text is rendered."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def annotated(commands: str, report: str, title: str) -> Output:
    """The github format of a report: its workflow commands (annotations), then the report
    itself, which is also the step summary under ``title``."""
    return Output(lines(commands or None, report), summary=f"### {title}\n\n{fenced(report)}")


def shallow_note(shallow: bool, lost: str, everything: str) -> list[str]:
    """The note of a command that reads the history, in a shallow clone (none in a full
    one): what it misses, and how to see all of it."""
    if not shallow:
        return []
    return [
        f"note: this clone is shallow, so {lost}; `git fetch --unshallow` (in GitHub "
        f"Actions: fetch-depth: 0) shows all of {everything}."
    ]


def dumps(data: Any) -> str:
    """The JSON style of every command: indented, UTF-8 as is, but control characters
    escaped (``json`` escapes C0 itself; DEL and C1 as ``\\u00NN`` here)."""
    import json

    text = json.dumps(data, indent=2, ensure_ascii=False)
    return CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo_text(render: Callable[[R], str]) -> Callable[[R], Output]:
    """The renderer that prints ``render(result)`` on standard output."""
    return lambda result: Output(lines(render(result)))


def echo_json(build: Callable[[R], Any]) -> Callable[[R], Output]:
    """The renderer that prints ``build(result)`` as JSON (``dumps``) on standard output."""
    return lambda result: Output(lines(dumps(build(result))))


def nothing(_result: object) -> Output:
    """The renderer of a format that prints nothing more (what it shows was shown already)."""
    return Output()


SCHEMA: Renderers[Any] = {"json": echo_json(lambda schema: schema)}
"""`schema`: the JSON Schema as it is."""
