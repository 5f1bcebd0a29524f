"""Which artifact rows a glob selects, decided exactly by ``globs``.

Consumers' selects may hold ``{axis}`` placeholders: they are evaluated once per
row of their finite axes. Release selects are plain globs with optional excludes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import Loc, TooComplex
from .globs import (
    Glob,
    Language,
    PatternError,
    TooMuchWork,
    intersects,
    language,
    literal_prefix,
    matches,
)
from .model import Input, Migration, Release
from .resolve import Row, glob_pieces
from .templates import Assignment, assignments


@dataclass(frozen=True, slots=True)
class Selector:
    """One evaluation of a glob: the finite-axis values it was given and its language."""

    assignment: Assignment
    language: Language
    prefix: str
    text: str = ""
    loc: Loc | None = None  # where the glob is declared, for "too complex" errors


def input_selectors(migration: Migration, item: Input) -> tuple[Selector, ...]:
    """One selector per row of the input's finite axes (one if it has none)."""
    out = []
    for assignment in assignments(item.select.parts, migration.axes):
        pieces = glob_pieces(item.select.parts, dict(assignment), migration.axes)
        out.append(
            Selector(
                assignment,
                language(pieces),
                literal_prefix(pieces),
                item.select.text,
                item.select.loc,
            )
        )
    return tuple(out)


def plain_selector(text: str, loc: Loc | None = None) -> Selector:
    pieces = (Glob(text),)
    return Selector((), language(pieces), literal_prefix(pieces), text, loc)


def _prefix_compatible(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def row_prefix(row: Row) -> str:
    return literal_prefix(row.pieces)


def selected(
    selector: Selector, rows: Iterable[Row], exclude: Sequence[Language] = ()
) -> list[Row]:
    """The rows some name of which the selector matches (and no exclude glob matches)."""
    out = []
    for row in rows:
        if not _prefix_compatible(selector.prefix, row_prefix(row)):
            continue
        try:
            hit = intersects(selector.language, language(row.pieces), excluding=exclude)
        except TooMuchWork:
            raise
        except PatternError as exc:
            raise _undecidable(selector, row, bool(exclude), exc) from None
        if hit:
            out.append(row)
    return out


def _undecidable(selector: Selector, row: Row, excluding: bool, exc: PatternError) -> TooComplex:
    """The glob (or the row's open-axis regex) defeats the exact engine: a located user error."""
    template = row.template.loc
    also = " with its exclude globs" if excluding else ""
    return TooComplex(
        selector.loc or template,
        f"cannot decide whether glob {selector.text!r}{also} selects {row.name} "
        f"(template at {template.file}:{template.line}): {exc.message}",
    )


def release_selection(release: Release, rows: Iterable[Row]) -> list[Row]:
    """The rows the release's tooling downloads: any select glob, minus excludes."""
    excludes = [plain_selector(t.text).language for t in release.exclude]
    chosen: dict[tuple[str, str], Row] = {}
    row_list = list(rows)
    for template in release.select:
        for row in selected(plain_selector(template.text, template.loc), row_list, excludes):
            chosen.setdefault((row.producer, row.name), row)
    return list(chosen.values())


def tag_claimed(release: Release, tag: str) -> bool:
    """Whether a concrete tag matches one of the release's tag globs."""
    return any(matches(plain_selector(t).language, tag) for t in release.tags)
