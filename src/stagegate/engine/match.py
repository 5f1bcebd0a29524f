"""Which artifact rows a glob selects, decided exactly by ``globs``.

Consumers' selects may hold ``{axis}`` placeholders: they are evaluated once per
row of their finite axes. Release selects are plain globs with optional excludes.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TypeVar

from stagegate.engine.globs import (
    Glob,
    Language,
    PatternError,
    TooMuchWork,
    charge,
    intersects,
    language,
    literal_prefix,
)
from stagegate.engine.resolve import (
    Plan,
    Row,
    glob_pieces,
    item_axes,
    resolve,
    rows,
    tag_claimed,
)
from stagegate.errors import Loc, TooComplex
from stagegate.model import Input, Migration, Release
from stagegate.model.templates import Assignment, assignments
from stagegate.records import record

T = TypeVar("T")
K = TypeVar("K")


def _once(table: dict[K, T], key: K, make: Callable[[], T]) -> T:
    """``table[key]``, made by ``make`` the first time it is asked for."""
    found = table.get(key)
    if found is None:
        found = table[key] = make()
    return found


@record
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
    return list(_decided(selector, pool, pool.candidates(selector.prefix), exclude))


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


# --------------------------------------------------------------------------- across stages
#
# A selection is a filter over rows: whether a glob selects a row does not depend on
# which other rows exist. So what a glob selects at a stage is what it selects among
# the rows of every producer of the runs it sees, active or not, restricted to the
# active producers. The rows a glob may select are grouped by producer once per
# migration (from the prefix index of all rows); each (glob, producer) question is
# decided once, when that producer is first active; and a stage's selection is looked
# up by the active producers among those groups. Consecutive stages differ by a few
# flags, so `check --all` decides each distinct question once, not once per stage.


class Universe:
    """Every row of every producer in some runs, active or not, indexed once.

    ``groups(prefix)`` lists the rows a glob with that literal prefix may select, by
    producer, in the order a stage's own index would list them: rows are kept producer
    by producer in declaration order, as a plan lists them, so filtering these groups by
    the active producers gives exactly the candidates of the stage's index."""

    __slots__ = ("_groups", "index", "owners")

    def __init__(self, ev: Evaluation, runs: frozenset[str] | None) -> None:
        producers = [p for p in ev.migration.producers.values() if runs is None or p.run in runs]
        self.index = RowIndex(row for p in producers for row in ev.rows(p.id))
        self._groups: dict[str, tuple[tuple[str, tuple[int, ...]], ...]] = {}

    def groups(self, prefix: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """Candidate positions for ``prefix``, grouped by producer, in position order."""
        return _once(self._groups, prefix, lambda: self._grouped(prefix))

    def _grouped(self, prefix: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
        grouped: dict[str, list[int]] = {}
        rows_ = self.index.rows
        for position in self.index.candidates(prefix):
            grouped.setdefault(rows_[position].producer, []).append(position)
        return tuple((pid, tuple(ps)) for pid, ps in grouped.items())


@record(eq=False)
class Selection:
    """What a release's tooling downloads at one state: rows, their names and producers."""

    rows: list[Row]
    by_name: dict[str, Row]
    producers: frozenset[str]


class Evaluation:
    """The answers of one migration's checks that do not depend on the stage, and those
    that depend only on the active producers a glob can see, computed once per distinct
    input and shared by every stage and every check that asks (see above).

    Exact: each stage's answer is the one its own index would give, in the same order;
    only the work of finding it again is saved."""

    def __init__(self, migration: Migration) -> None:
        self.migration = migration
        self._active: dict[int, frozenset[str]] = {}
        self._rows: dict[str, tuple[Row, ...]] = {}
        self._releases: dict[int, frozenset[str]] = {}
        self._universes: dict[frozenset[str] | None, Universe] = {}
        self._selectors: dict[int, tuple[Input, tuple[Selector, ...]]] = {}
        self._release_specs: dict[str, tuple[tuple[Selector, ...], tuple[Language, ...]]] = {}
        self._hits: dict[tuple[int, int, str], tuple[Row, ...]] = {}
        self._selections: dict[tuple[object, ...], object] = {}
        self._release_rows: dict[tuple[str, int], Selection] = {}
        self._claimants: dict[str, tuple[Release, ...]] = {}
        self.clean: set[tuple[str, int]] = set()
        """(check kind, id of an answer) pairs a check found nothing wrong with."""

    def plan(self, stage: int) -> Plan:
        return resolve(self.migration, stage)

    def active(self, stage: int) -> frozenset[str]:
        """Ids of the producers active at ``stage``."""
        return _once(
            self._active, stage, lambda: frozenset(p.id for p in self.plan(stage).producers)
        )

    def active_releases(self, stage: int) -> frozenset[str]:
        return _once(
            self._releases, stage, lambda: frozenset(r.id for r in self.plan(stage).releases)
        )

    def rows(self, producer: str) -> tuple[Row, ...]:
        """The producer's rows (``resolve.rows``), looked up by id instead of by record."""
        return _once(
            self._rows, producer, lambda: rows(self.migration, self.migration.producers[producer])
        )

    def universe(self, runs: frozenset[str] | None) -> Universe:
        return _once(self._universes, runs, lambda: Universe(self, runs))

    def selectors(self, item: Input) -> tuple[Selector, ...]:
        """The input's selectors, made once (``input_selectors``)."""
        found = self._selectors.get(id(item))
        if found is None or found[0] is not item:
            found = (item, input_selectors(self.migration, item))
            self._selectors[id(item)] = found
        return found[1]

    def hits(
        self,
        selector: Selector,
        universe: Universe,
        active: frozenset[str],
        exclude: tuple[Language, ...] = (),
    ) -> list[Row]:
        """``selected(selector, <the active rows of the universe>, exclude)``, from the
        answers per (selector, producer) decided so far and those still missing."""
        out: list[Row] = []
        pool = universe.index
        for pid, positions in universe.groups(selector.prefix):
            if pid not in active:
                continue
            key = (id(selector), id(exclude), pid)
            found = self._hits.get(key)
            if found is None:
                found = tuple(_decided(selector, pool, positions, exclude))
                self._hits[key] = found
            out.extend(found)
        return out

    def remember(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        """The value made once for ``key`` (ids in it must be of objects this keeps)."""
        return _once(self._selections, key, make)  # type: ignore[return-value]

    def state(self, candidates: tuple[str, ...], active: frozenset[str]) -> tuple[str, ...]:
        """The active producers among ``candidates``: what a selection at a stage depends on.

        The look-up is charged to the work budget (a unit per eight candidates), so that
        many stages of many rows stay bounded even when every answer is cached."""
        charge(len(candidates) // 8 + 1)
        return tuple(pid for pid in candidates if pid in active)

    def release_spec(self, release: Release) -> tuple[tuple[Selector, ...], tuple[Language, ...]]:
        """The release's select globs as selectors and its exclude globs as languages."""
        return _once(
            self._release_specs,
            release.id,
            lambda: (
                tuple(plain_selector(t.text, t.loc) for t in release.select),
                tuple(plain_selector(t.text).language for t in release.exclude),
            ),
        )

    def release_rows(self, release: Release, stage: int) -> Selection:
        """``release_selection(release, <its run's rows at stage>)``, shared by the stages
        whose active producers among the release's candidates are the same."""
        memo_key = (release.id, stage)
        found = self._release_rows.get(memo_key)
        if found is not None:
            return found
        universe = self.universe(frozenset({release.run}))
        selectors, excludes = self.release_spec(release)
        active = self.active(stage)
        candidates = self.remember(
            ("release-candidates", release.id),
            lambda: tuple(
                dict.fromkeys(pid for s in selectors for pid, _ in universe.groups(s.prefix))
            ),
        )
        state = self.state(candidates, active)

        def make() -> Selection:
            chosen: dict[tuple[str, str], Row] = {}
            for selector in selectors:
                for row in self.hits(selector, universe, active, excludes):
                    chosen.setdefault((row.producer, row.name), row)
            picked = list(chosen.values())
            return Selection(
                picked, {row.name: row for row in picked}, frozenset(r.producer for r in picked)
            )

        found = self.remember(("release", release.id, state), make)
        self._release_rows[memo_key] = found
        return found

    def claimants(self, tag: str, stage: int) -> list[Release]:
        """The active releases at ``stage`` whose tags match ``tag``, in declared order."""
        every = _once(
            self._claimants,
            tag,
            lambda: tuple(r for r in self.migration.releases.values() if tag_claimed(r, tag)),
        )
        active = self.active_releases(stage)
        return [r for r in every if r.id in active]


def _decided(
    selector: Selector, pool: RowIndex, positions: Iterable[int], exclude: Sequence[Language]
) -> Iterable[Row]:
    """The rows at ``positions`` that the selector matches (and no exclude glob matches)."""
    for position in positions:
        row = pool.rows[position]
        try:
            hit = intersects(selector.language, pool.language(position), excluding=exclude)
        except TooMuchWork:
            raise
        except PatternError as exc:
            raise _undecidable(selector, row, bool(exclude), exc) from None
        if hit:
            yield row


@lru_cache(maxsize=8)
def evaluation(migration: Migration) -> Evaluation:
    """The cross-stage answers of ``migration`` (compared by identity: one per load)."""
    return Evaluation(migration)


def input_runs(plan: Plan, item: Input) -> frozenset[str]:
    """The runs an input downloads from: those of its active `from` producers, else this run.

    A `from` producer that is off does not make its run visible: the download of a
    retired source is gone too. With none of them active, their runs still count, so
    that the input is reported as finding nothing rather than looking elsewhere."""
    if item.from_ is None:
        return frozenset({"this"})
    on = evaluation(plan.migration).active(plan.stage)
    producers = plan.migration.producers
    active = [p for p in item.from_ if p in on] or item.from_
    return frozenset(producers[p].run for p in active)


def input_excludes(item: Input) -> list[Language]:
    """The languages of the input's `exclude` globs: names its job deletes after downloading."""
    return [plain_selector(t.text, t.loc).language for t in item.exclude]


def selections(
    plan: Plan, item: Input, *, only_from: bool = False
) -> list[tuple[Selector, list[Row]]]:
    """Per evaluation of the input's glob: the rows it selects (``only_from``: from its `from`).

    Made once per distinct state of what the glob can see (the runs it downloads from and
    the active producers among those its selectors may select) and shared by every stage
    and check in that state: the same list, so that a check can remember its verdict."""
    ev = evaluation(plan.migration)
    runs = input_runs(plan, item)
    universe = ev.universe(runs)
    selectors = ev.selectors(item)
    active = ev.active(plan.stage)
    candidates: tuple[str, ...] = ev.remember(
        ("input-candidates", id(item), runs),
        lambda: tuple(
            dict.fromkeys(pid for s in selectors for pid, _ in universe.groups(s.prefix))
        ),
    )
    state = ev.state(candidates, active)
    excluded: tuple[Language, ...] = ev.remember(
        ("input-excludes", id(item)), lambda: tuple(input_excludes(item))
    )

    def make() -> list[tuple[Selector, list[Row]]]:
        allowed = set(item.from_) if only_from and item.from_ is not None else None
        out = []
        for selector in selectors:
            rows = ev.hits(selector, universe, active, excluded)
            out.append(
                (selector, rows if allowed is None else [r for r in rows if r.producer in allowed])
            )
        return out

    return ev.remember(("selections", id(item), runs, only_from, state), make)
