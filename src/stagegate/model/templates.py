"""Artifact-name templates and globs with ``{axis}`` placeholders.

A template such as ``cuda-bindings-python{py}-cuda13.4.1-{platform}-{sha}`` has one
row per combination of its finite axes (``py``, ``platform``); open axes (``sha``)
stay symbolic and stand for every string their regex fully matches. ``{{`` and
``}}`` write literal braces.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence

from stagegate.errors import LocatedError
from stagegate.records import record

MAX_ROWS = 10_000
MAX_TOTAL_ROWS = 100_000
"""Most rows all artifact templates (and, apart, all consumer selects) may expand to."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@record
class Placeholder:
    axis: str
    column: int


Part = str | Placeholder


@record
class Axis:
    name: str
    values: tuple[str, ...] | None = None  # finite axis
    pattern: str | None = None  # open axis: a regex that names fully match

    @property
    def is_open(self) -> bool:
        return self.values is None


_PIECE = re.compile(r"\{\{|\}\}|\{[^}]*\}|[{}]|[^{}]+")
"""A brace written twice, a placeholder, a lone brace (an error) or literal text."""


def split(text: str) -> tuple[Part, ...]:
    """Split ``text`` into literal strings and placeholders; ``{{``/``}}`` are braces."""
    parts: list[Part] = []
    literal = ""
    for match in _PIECE.finditer(text):
        piece, at = match.group(), match.start()
        if piece in ("{{", "}}"):
            literal += piece[0]
        elif piece == "{":
            raise LocatedError("'{' is not closed; write {axis}, or {{ for a literal brace.", at)
        elif piece == "}":
            raise LocatedError("'}' without '{'; write }} for a literal brace.", at)
        elif piece[0] == "{":
            name = piece[1:-1]
            if not _NAME.fullmatch(name):
                raise LocatedError(
                    f"{{{name}}} is not an axis placeholder; write {{axis}} with an axis name, "
                    "or {{ for a literal brace.",
                    at,
                )
            if literal:
                parts.append(literal)
                literal = ""
            parts.append(Placeholder(name, at))
        else:
            literal += piece
    if literal:
        parts.append(literal)
    return tuple(parts)


def placeholders(parts: Sequence[Part]) -> list[Placeholder]:
    return [p for p in parts if isinstance(p, Placeholder)]


def finite_axes(parts: Sequence[Part], axes: Mapping[str, Axis]) -> list[str]:
    """The finite axes of ``parts`` in order of first appearance."""
    seen: list[str] = []
    for part in placeholders(parts):
        if not axes[part.axis].is_open and part.axis not in seen:
            seen.append(part.axis)
    return seen


def row_count(parts: Sequence[Part], axes: Mapping[str, Axis]) -> int:
    count = 1
    for name in finite_axes(parts, axes):
        count *= len(axes[name].values or ())
    return count


Assignment = tuple[tuple[str, str], ...]


def assignments(parts: Sequence[Part], axes: Mapping[str, Axis]) -> Iterator[Assignment]:
    """Every combination of the finite axes of ``parts`` (one if there are none)."""
    names = finite_axes(parts, axes)
    value_lists = [axes[name].values or () for name in names]
    for combo in itertools.product(*value_lists):
        yield tuple(zip(names, combo, strict=True))


def render(parts: Sequence[Part], assignment: Mapping[str, str]) -> str:
    """The name with finite placeholders filled in and open ones kept as ``{axis}``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, Placeholder):
            out.append(assignment.get(part.axis, "{" + part.axis + "}"))
        else:
            out.append(part.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def format_assignment(assignment: Assignment) -> str:
    return " ".join(f"{axis}={value}" for axis, value in assignment)
