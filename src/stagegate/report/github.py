"""GitHub Actions workflow commands and the job step summary, in one place."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from ..errors import Loc


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_EMITTED: set[str] = set()
"""Every workflow command this process made: the only lines let through as commands."""


def annotation(level: str, message: str, loc: Loc | None = None, title: str | None = None) -> str:
    """``::error file=F,line=L,col=C,title=T::message`` (level: error, warning or notice)."""
    props = []
    if loc is not None:
        props += [f"file={_escape_property(loc.file)}", f"line={loc.line}", f"col={loc.col}"]
    if title:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    line = f"{head}::{_escape_data(message)}"
    _EMITTED.add(line)
    return line


def defuse(line: str) -> str:
    """``line``, unable to act as a workflow command unless stagegate made it one.

    The Actions runner runs any output line that starts with ``::`` (after white
    space) as a command: a stage title or file name holding a line break followed
    by ``::warning::`` or ``::stop-commands::`` would otherwise speak for stagegate.
    A zero-width space between the colons keeps the text as it reads."""
    body = line.lstrip(" \t")
    if not body.startswith("::") or line.rstrip("\r") in _EMITTED:
        return line
    cut = len(line) - len(body)
    return line[:cut] + ":\u200b:" + body[2:]


class GuardedStream:
    """A text stream that defuses, line by line, the workflow commands it did not make."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._partial = ""

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        if lines:
            self._stream.write("\n".join(defuse(line) for line in lines) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self._stream.write(defuse(self._partial))
            self._partial = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """Standard output and error guarded by ``GuardedStream`` inside the block."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = GuardedStream(out), GuardedStream(err)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = out, err


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
