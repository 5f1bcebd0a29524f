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


Assignment = tuple[tuple[str, str], ...]


def row_count(
    parts: Sequence[Part],
    axes: Mapping[str, Axis],
    *,
    exclude: Sequence[Assignment] = (),
    rows: Sequence[Assignment] | None = None,
) -> int:
    """How many rows ``assignments`` gives (the product counted without making it, where
    nothing is excluded)."""
    if rows is None and not exclude:
        count = 1
        for name in finite_axes(parts, axes):
            count *= len(axes[name].values or ())
        return count
    return sum(1 for _ in assignments(parts, axes, exclude=exclude, rows=rows))


def excluded(assignment: Assignment, exclude: Sequence[Assignment]) -> bool:
    """Whether an entry of ``exclude`` (a partial assignment, as a GitHub matrix's
    ``exclude``) agrees with every pair it names."""
    if not exclude:
        return False
    values = dict(assignment)
    return any(all(values.get(k) == v for k, v in entry) for entry in exclude)


def assignments(
    parts: Sequence[Part],
    axes: Mapping[str, Axis],
    *,
    exclude: Sequence[Assignment] = (),
    rows: Sequence[Assignment] | None = None,
) -> Iterator[Assignment]:
    """Every combination of the finite axes of ``parts`` (one if there are none), or the
    ``rows`` given (each in the axes' order of first appearance), without those an
    ``exclude`` entry agrees with."""
    names = finite_axes(parts, axes)
    if rows is not None:
        for row in rows:
            values = dict(row)
            ordered = tuple((name, values[name]) for name in names if name in values)
            if not excluded(ordered, exclude):
                yield ordered
        return
    value_lists = [axes[name].values or () for name in names]
    for combo in itertools.product(*value_lists):
        assignment = tuple(zip(names, combo, strict=True))
        if not excluded(assignment, exclude):
            yield assignment


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
