"""What a command prints: an ``Output``, made by the renderer its ``--format`` picks.

Each command has one result type (what its core call returns, or a small record of
that and the options that shape the output) and one renderer table in ``report/``:
``{format name: renderer}``, where a renderer is a function from that result to an
``Output`` (check-jsonschema's reporter table, one per command). ``cli.py`` looks the
renderer up by the option's value, prints the ``Output`` (and appends its step
summary) and returns the exit code; it holds no ``if fmt == ...``.
Nothing in a renderer acts, but for ``flags``/``matrix --format github``, whose
renderers append to ``$GITHUB_OUTPUT`` (all or nothing, before anything is printed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..records import record

R = TypeVar("R")


@record
class Output:
    """The exact text for standard output and for standard error (line ends included),
    and the Markdown for ``$GITHUB_STEP_SUMMARY`` (appended after both are printed, where
    the variable is set; None: nothing)."""

    out: str = ""
    err: str = ""
    summary: str | None = None


Renderer = Callable[[R], Output]
Renderers = Mapping[str, Callable[[R], Output]]
"""A command's table: format name -> renderer."""


def lines(*texts: str | None) -> str:
    """Each text on its own: followed by a line break; a None is left out (a part that is
    printed only when there is any: ``lines(annotations or None, report)``)."""
    return "".join(f"{text}\n" for text in texts if text is not None)


def dumps(data: Any) -> str:
    """The JSON style of every command: indented, UTF-8 as is."""
    import json

    return json.dumps(data, indent=2, ensure_ascii=False)


def echo_text(render: Callable[[R], str]) -> Callable[[R], Output]:
    """The renderer that prints ``render(result)`` on standard output."""
    return lambda result: Output(lines(render(result)))


def echo_json(build: Callable[[R], Any]) -> Callable[[R], Output]:
    """The renderer that prints ``build(result)`` as JSON (``dumps``) on standard output."""
    return lambda result: Output(lines(dumps(build(result))))


def nothing(_result: object) -> Output:
    """The renderer of a format that prints nothing more (what it shows was shown already)."""
    return Output()
