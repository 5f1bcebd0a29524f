"""GitHub Actions workflow commands and the job step summary, in one place."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..errors import Loc


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, loc: Loc | None = None, title: str | None = None) -> str:
    """``::error file=F,line=L,col=C,title=T::message`` (level: error, warning or notice)."""
    props = []
    if loc is not None:
        props += [f"file={_escape_property(loc.file)}", f"line={loc.line}", f"col={loc.col}"]
    if title:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{_escape_data(message)}"


def write_summary(markdown: str) -> bool:
    """Append to ``$GITHUB_STEP_SUMMARY`` when set; whether anything was written."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(markdown.rstrip("\n") + "\n\n")
    return True


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A Markdown table; pipes and newlines in cells are escaped."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", "<br>")

    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
