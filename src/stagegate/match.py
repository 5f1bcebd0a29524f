"""Which artifact rows a glob selects, decided exactly by ``globs``.

Consumers' selects may hold ``{axis}`` placeholders: they are evaluated once per
row of their finite axes. Release selects are plain globs with optional excludes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

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
from .resolve import Plan, Row, glob_pieces, item_axes
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
    axes = item_axes(migration, item)
    for assignment in assignments(item.select.parts, axes):
        pieces = glob_pieces(item.select.parts, dict(assignment), axes)
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


def row_prefix(row: Row) -> str:
    return literal_prefix(row.pieces)


class RowIndex:
    """Rows sorted by the fixed text their names start with.

    A glob can match a name only if the literal prefix of one is a prefix of the
    other's, so a selector meets just the rows in one range of the sorted prefixes
    (those that start with its prefix) plus the rows whose prefix is a prefix of its
    own: a few dictionary look-ups. Each row's prefix and language are computed once."""

    __slots__ = ("_by_prefix", "_languages", "_order", "_prefixes", "rows")

    def __init__(self, rows: Iterable[Row]) -> None:
        self.rows = tuple(rows)
        prefixes = [row_prefix(row) for row in self.rows]
        keyed = sorted(range(len(self.rows)), key=prefixes.__getitem__)
        self._order = keyed
        self._prefixes = [prefixes[i] for i in keyed]
        self._languages = [language(row.pieces) for row in self.rows]
        self._by_prefix: dict[str, list[int]] = {}
        for i, prefix in enumerate(prefixes):
            self._by_prefix.setdefault(prefix, []).append(i)

    def candidates(self, prefix: str) -> list[int]:
        """Positions (in the original order) of the rows a glob with ``prefix`` may match."""
        lo = bisect.bisect_left(self._prefixes, prefix)
        hi = bisect.bisect_left(self._prefixes, prefix + "\U0010ffff", lo)
        found = self._order[lo:hi]
        for end in range(len(prefix)):
            found += self._by_prefix.get(prefix[:end], ())
        return sorted(found)

    def language(self, position: int) -> Language:
        return self._languages[position]


@lru_cache(maxsize=1024)
def index(plan: Plan, runs: frozenset[str] | None = None) -> RowIndex:
    """The rows of the plan's active producers in ``runs`` (all runs: None), indexed once."""
    return RowIndex(
        row for p in plan.producers if runs is None or p.run in runs for row in plan.rows(p)
    )


def selected(
    selector: Selector, rows: RowIndex | Iterable[Row], exclude: Sequence[Language] = ()
) -> list[Row]:
    """The rows some name of which the selector matches (and no exclude glob matches)."""
    pool = rows if isinstance(rows, RowIndex) else RowIndex(rows)
    out = []
    for position in pool.candidates(selector.prefix):
        row = pool.rows[position]
        try:
            hit = intersects(selector.language, pool.language(position), excluding=exclude)
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


def release_selection(release: Release, rows: RowIndex | Iterable[Row]) -> list[Row]:
    """The rows the release's tooling downloads: any select glob, minus excludes."""
    excludes = [plain_selector(t.text).language for t in release.exclude]
    chosen: dict[tuple[str, str], Row] = {}
    pool = rows if isinstance(rows, RowIndex) else RowIndex(rows)
    for template in release.select:
        for row in selected(plain_selector(template.text, template.loc), pool, excludes):
            chosen.setdefault((row.producer, row.name), row)
    return list(chosen.values())


def tag_claimed(release: Release, tag: str) -> bool:
    """Whether a concrete tag matches one of the release's tag globs."""
    return any(matches(plain_selector(t).language, tag) for t in release.tags)
