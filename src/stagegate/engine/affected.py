"""Selective planning: from the paths a change touched to the jobs a stage must run.

Pure: the command core (``commands/affected.py``) reads git and the baseline file and
hands this module plain data. The answer is conservative wherever the model is silent:

- a producer rebuilds when a changed path is one of its `paths` (directly or through a
  symbolic link inside the repository), when it is ``always: true``, or when a job that
  ``feeds`` it must run (a producer without `paths` is built from nothing in the
  repository, such as a wheel built from PyPI's sdist; every changed file must be
  covered by some glob, so an undeclared source still forces the full rebuild);
- a consumer reruns when a changed path is one of its own `paths`, when it is
  ``always: true``, when it takes rows from a producer that rebuilds, or when it feeds
  a producer that rebuilds (it is part of that build);
- a consumer that runs needs the rows of every producer its required inputs take from:
  from this run (so the producer rebuilds too), or, for an input with ``run: baseline``,
  from the baseline run (the producer is *reused*); consumers with ``planned: false``
  (release and nightly jobs) run outside the planned runs and are left out;
- a changed path outside every declared path rebuilds everything, naming the file, and
  so does any doubt about the reuse: no usable baseline run, a reused producer whose
  sources changed since the baseline's commit, a row a consumer requires missing from
  the baseline run, or a release that would ship what was built against a reused row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from stagegate.engine.match import (
    RowIndex,
    evaluation,
    input_excludes,
    release_selection,
    selected,
    selections,
)
from stagegate.engine.paths import Index, Links, never_matches, refused
from stagegate.engine.resolve import Plan, Row, item_axes, resolve
from stagegate.errors import Loc
from stagegate.model import Consumer, Input, Migration, Producer, Release, Template
from stagegate.model.templates import (
    Assignment,
    Axis,
    Part,
    Placeholder,
)
from stagegate.records import record


@record
class Baseline:
    """The baseline run as the planning job found it: its commit and the names of the
    artifacts it still holds. ``since``: the paths changed between its commit and the
    head (None when its commit is the merge base, whose diff is the change itself);
    ``problem``: why it cannot be used at all (its commit is not in the clone)."""

    source: str  # where it was read from, for messages
    sha: str | None
    artifacts: frozenset[str]
    since: tuple[str, ...] | None = None
    problem: str | None = None


@record
class Compared:
    """The commits a change lies between: the commit of the ref given as base, the head,
    and their merge base, where the change starts."""

    base: str
    head: str
    merge_base: str


@record
class Change:
    """What a change touched, from git (``git.changes``): the commits compared; the paths
    (a renamed file under both names), the symbolic links of the head (link, resolved
    target) and the baseline run as found."""

    commits: Compared
    changed: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    baseline: Baseline | None
    through: tuple[tuple[str, str, str], ...] = ()
    """(name, link, how): the files a symbolic link the change deletes, adds or retargets
    stopped or started leading to, under the link's name (``engine.affected``)."""


@record
class Reason:
    item: str
    because: str


@record
class PathWarning:
    loc: Loc
    message: str


@record
class Affected:
    """`affected`'s answer: the commits compared, the changed paths (sorted), and each item
    to rebuild, retest, reuse or release, in the model's order, with why. ``full``: why
    everything rebuilds (None: a selective plan)."""

    migration: Migration
    stage: int
    commits: Compared
    changed: tuple[str, ...]
    rebuild: Mapping[str, str]
    retest: Mapping[str, str]
    reuse: Mapping[str, str]
    releases: Mapping[str, str]
    full: str | None
    warnings: tuple[PathWarning, ...] = ()

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """Why, for each item of each list in turn (an id may stand in more than one)."""
        return tuple(
            Reason(item, because)
            for section in (self.rebuild, self.retest, self.reuse, self.releases)
            for item, because in section.items()
        )


class _Full(Exception):
    def __init__(self, why: str) -> None:
        self.why = why


def path_warnings(migration: Migration) -> list[PathWarning]:
    """A warning, located, for each `paths` glob that can never match a changed file."""
    out = []
    items: list[Producer | Consumer] = [
        *migration.producers.values(),
        *migration.consumers.values(),
    ]
    for item in items:
        for text, loc, why in refused(item.paths, item.paths_locs, never_matches):
            out.append(
                PathWarning(
                    loc,
                    f"{item.kind} {item.id}: paths glob {text!r} can never match: {why}; "
                    "write it relative to the repository root, such as 'src/pkg/**'",
                )
            )
    return out


_GLOB_CHAR = re.compile(r"[*?\[]")


@lru_cache(maxsize=8)
def _paths_index(plan: Plan) -> Index[tuple[str, str]]:
    """The `paths` of the stage's producers of this run and planned consumers, indexed
    (once per plan: ``prepare`` makes it while git compares the commits)."""
    return Index(
        [(("producer", p.id), g) for p in plan.producers if p.run == "this" for g in p.paths]
        + [(("consumer", c.id), g) for c in plan.consumers if c.planned for g in c.paths]
    )


@lru_cache(maxsize=8)
def _warnings(migration: Migration) -> tuple[PathWarning, ...]:
    return tuple(path_warnings(migration))


def prepare(migration: Migration, stage: int) -> None:
    """The work of a plan that does not depend on the change (the stage's items, the
    index of their `paths`, the warnings about globs that never match), done ahead:
    ``commands.affected`` has it done while git compares the commits, and ``affected``
    finds it done."""
    _paths_index(resolve(migration, stage))
    _warnings(migration)


class _Planner:
    def __init__(self, plan: Plan, links: Sequence[tuple[str, str]]) -> None:
        self.plan = plan
        self.links = Links(links)
        self.producers = {p.id: p for p in plan.producers if p.run == "this"}
        self.consumers = {c.id: c for c in plan.consumers if c.planned}
        self.position = {cid: at for at, cid in enumerate(self.consumers)}
        self.index = _paths_index(plan)
        self.fed_by: dict[str, list[str]] = {}
        for c in self.consumers.values():
            for pid in c.feeds:
                if pid in self.producers:
                    self.fed_by.setdefault(pid, []).append(c.id)
        self._rows: dict[int, list[Row]] = {}
        self._whole_memo: dict[int, tuple[str, ...] | None] = {}
        self._shipped: dict[tuple[str, frozenset[str]], list[str]] = {}
        self.active = {p.id for p in plan.producers}

    def _whole(self, item: Input) -> tuple[str, ...] | None:
        """The producers the input takes every row of, when that is plain from the model
        without evaluating a glob: the input names its producers (`from`), drops nothing
        (no `exclude`), and its select is each one's only template, word for word (no
        glob character in its text), over axes that cover the producer's own. Then each
        of the producer's rows is matched by the selector of its own assignment. None
        when any of that does not hold (the rows are then matched glob by glob)."""
        if item.from_ is None or item.exclude:
            return None
        found = self._whole_memo.get(id(item), False)
        if found is not False:
            return found  # type: ignore[return-value]
        answer: tuple[str, ...] | None = None
        parts = item.select.parts
        if not _GLOB_CHAR.search(item.select.text):  # only literal text holds them
            mine = item_axes(self.plan.migration, item)
            taken: list[str] = []
            for pid in item.from_:
                if pid not in self.active:
                    continue
                producer = self.plan.migration.producers[pid]
                if not self._same_rows(producer, parts, mine):
                    break
                if pid in self.producers:
                    taken.append(pid)
            else:
                answer = tuple(dict.fromkeys(taken))
        self._whole_memo[id(item)] = answer
        return answer

    def _same_rows(
        self, producer: Producer, parts: Sequence[Part], mine: Mapping[str, Axis]
    ) -> bool:
        """Whether the glob of ``parts`` over axes ``mine`` matches every row of the
        producer, which has one template with those very parts (and at least one row)."""
        if len(producer.artifacts) != 1:
            return False
        template = producer.artifacts[0].parts
        if len(template) != len(parts):
            return False
        theirs = item_axes(self.plan.migration, producer)
        for a, b in zip(parts, template, strict=True):
            if isinstance(a, str) or isinstance(b, str):
                if a != b:
                    return False
                continue
            if not isinstance(b, Placeholder) or a.axis != b.axis:
                return False
            ours, own = mine[a.axis], theirs[a.axis]
            if ours is own:  # the migration's axis on both sides
                if not (own.is_open or own.values):
                    return False
            elif own.is_open or ours.is_open:
                if not (own.is_open and ours.is_open and own.pattern == ours.pattern):
                    return False
            elif not own.values or not set(own.values) <= set(ours.values or ()):
                return False
        return True

    def _selected(self, item: Input) -> list[Row]:
        """The rows of this run's active producers the input takes (only from its `from`,
        where given), each once. With `from`, only those producers' rows are tried: the
        same answer as ``match.selections(..., only_from=True)`` without indexing every
        row of the migration (a planner asks this of every input)."""
        found = self._rows.get(id(item))
        if found is not None:
            return found
        rows: dict[tuple[str, str], Row] = {}
        if item.from_ is None:
            for _selector, picked in selections(self.plan, item, only_from=True):
                for row in picked:
                    rows.setdefault((row.producer, row.name), row)
        else:
            pool = [r for p in item.from_ if p in self.active for r in self.plan.rows(p)]
            if pool:
                index = RowIndex(pool)
                excludes = input_excludes(item)
                for selector in evaluation(self.plan.migration).selectors(item):
                    for row in selected(selector, index, excludes):
                        rows.setdefault((row.producer, row.name), row)
        found = [r for r in rows.values() if r.producer in self.producers]
        self._rows[id(item)] = found
        return found

    def sources(self, item: Input) -> tuple[str, ...]:
        """The producers of this run whose rows the input selects at the stage."""
        whole = self._whole(item)
        if whole is not None:
            return whole
        return tuple(dict.fromkeys(r.producer for r in self._selected(item)))

    def rows_from(self, item: Input, producer: str) -> list[Row]:
        whole = self._whole(item)
        if whole is not None:
            return list(self.plan.rows(producer)) if producer in whole else []
        return [r for r in self._selected(item) if r.producer == producer]

    def shipped(self, release: Release, rebuild: Iterable[str]) -> list[str]:
        """The producers among ``rebuild`` (this run's) whose rows the release ships, in
        declared order: its selection decided on their rows only (a selection is a filter
        row by row), not on every row of the migration."""
        ids = frozenset(rebuild)
        key = (release.id, ids)
        found = self._shipped.get(key)
        if found is None:
            picked: set[str] = set()
            undecided = []
            for p in self.producers:
                if p in ids:
                    ships = _ships_whole(
                        self.plan.migration, release, self.plan.migration.producers[p]
                    )
                    if ships is None:
                        undecided.append(p)
                    elif ships:
                        picked.add(p)
            pool = [r for p in undecided for r in self.plan.rows(p)]
            if pool:
                picked.update(r.producer for r in release_selection(release, pool))
            found = self._shipped[key] = [p for p in self.producers if p in picked]
        return found

    def missing(self, item: Input, producer: str, names: _Names) -> Row | None:
        """The first row of ``producer`` that ``item`` takes and the baseline run lacks.
        Where the input takes the whole producer (``_whole``), its rows are asked of the
        names template by template, without making them (``_Names.lacks``)."""
        whole = self._whole(item)
        if whole is None:
            return next((r for r in self.rows_from(item, producer) if not names.has(r)), None)
        if producer not in whole:
            return None
        item_ = self.plan.migration.producers[producer]
        axes = item_axes(self.plan.migration, item_)
        for template in item_.artifacts:
            lacking = names.lacks(template, axes)
            if lacking is not None:
                return next(
                    r
                    for r in self.plan.rows(item_)
                    if r.template is template and r.assignment == lacking
                )
        return None

    # -- which items a set of changed paths touches

    def touched(
        self, changed: Iterable[str], through: Iterable[tuple[str, str, str]] = ()
    ) -> tuple[dict[str, str], dict[str, str], list[str]]:
        """(producer -> reason, consumer -> reason, the paths no glob covers)."""
        producers: dict[str, str] = {}
        consumers: dict[str, str] = {}
        outside: list[str] = []
        for path in changed:
            found = False
            names = [(path, None), *self.links.aliases(path)]
            for name, link in names:
                for (kind, ident), glob in self.index.matches(name):
                    found = True
                    table = producers if kind == "producer" else consumers
                    if ident not in table:
                        via = f" (as {name}, through the symbolic link {link})" if link else ""
                        table[ident] = f"{path}{via} matches its paths glob {glob!r}"
            if not found:
                outside.append(path)
        for name, link, how in through:
            for (kind, ident), glob in self.index.matches(name):
                table = producers if kind == "producer" else consumers
                if ident not in table:
                    table[ident] = (
                        f"{name} (through the symbolic link {link}, which the change {how}) "
                        f"matches its paths glob {glob!r}"
                    )
        return producers, consumers, outside

    def stale(
        self, changed: Sequence[str], through: Sequence[tuple[str, str, str]] = ()
    ) -> tuple[dict[str, str], dict[str, str]]:
        """What a change makes out of date: producers to rebuild and consumers to rerun,
        each with its first reason. _Full when a path is outside every declared one."""
        rebuild, rerun, outside = self.touched(changed, through)
        if outside:
            more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
            raise _Full(
                f"{outside[0]}{more} is outside every declared path: no producer's or "
                "consumer's `paths` cover it, so nothing can be proven unaffected"
            )
        if changed:
            for p in self.producers.values():
                if p.always:
                    rebuild.setdefault(p.id, "always: true")
            for c in self.consumers.values():
                if c.always:
                    rerun.setdefault(c.id, "always: true")
        self._spread(rebuild, rerun)
        return rebuild, rerun

    def _spread(self, rebuild: dict[str, str], rerun: dict[str, str]) -> None:
        """Out of date travels along inputs and `feeds` until nothing changes."""
        moved = True
        while moved:
            moved = False
            for c in self.consumers.values():
                if c.id in rerun:
                    continue
                why = self._takes_rebuilt(c, rebuild) or self._builds_rebuilt(c, rebuild)
                if why:
                    rerun[c.id] = why
                    moved = True
            for c in self.consumers.values():
                if c.id not in rerun:
                    continue
                for pid in c.feeds:
                    if pid in self.producers and pid not in rebuild:
                        rebuild[pid] = f"it is built by {c.id}, which must run"
                        moved = True

    def _takes_rebuilt(self, c: Consumer, rebuild: Mapping[str, str]) -> str | None:
        for item in c.inputs:
            if item.from_ is not None and not any(p in rebuild for p in item.from_):
                continue
            for pid in self.sources(item):
                if pid in rebuild:
                    return f"it takes {item.select.text} from {pid}, which rebuilds"
        return None

    def _builds_rebuilt(self, c: Consumer, rebuild: Mapping[str, str]) -> str | None:
        for pid in c.feeds:
            if pid in rebuild:
                return f"it is part of the build of {pid}, which rebuilds"
        return None

    # -- what the jobs that run need

    def needs(
        self, rebuild: dict[str, str], rerun: dict[str, str]
    ) -> dict[str, list[tuple[Consumer, Input]]]:
        """Producers the running jobs take from the baseline run, with who takes them;
        producers they take from this run are added to ``rebuild``."""
        reuse: dict[str, list[tuple[Consumer, Input]]] = {}
        moved = True
        while moved:
            moved = False
            reuse.clear()
            for cid in list(rerun):
                c = self.consumers[cid]
                for item in c.inputs:
                    if not item.required:
                        continue  # the job does without it: nothing to build or reuse
                    for pid in self.sources(item):
                        if pid in rebuild:
                            continue
                        if item.run == "baseline":
                            reuse.setdefault(pid, []).append((c, item))
                        else:
                            rebuild[pid] = (
                                f"{c.id} runs and takes {item.select.text} from this run "
                                "(the input has no `run: baseline`)"
                            )
                            moved = True
            for pid in list(rebuild):
                for cid in self.fed_by.get(pid, ()):
                    if cid not in rerun:
                        rerun[cid] = f"it is part of the build of {pid}, which rebuilds"
                        moved = True
        return reuse


class _Names:
    """The baseline run's artifact names, asked whether a row is among them: an exact name
    by look-up, a row with open axes by its regex over the names sharing its literal start."""

    def __init__(self, names: Iterable[str]) -> None:
        self.exact = frozenset(names)
        self.ordered = sorted(self.exact)
        self._compiled: dict[str, re.Pattern[str]] = {}  # what follows the literal start

    def has(self, row: Row) -> bool:
        from stagegate.engine.globs import Lit, Rx

        parts: list[str] = []
        prefix: list[str] = []
        open_axis = False
        for piece in row.pieces:
            if isinstance(piece, Lit):
                parts.append(re.escape(piece.text))
                if not open_axis:
                    prefix.append(piece.text)
            elif isinstance(piece, Rx):
                parts.append(f"(?:{piece.pattern})")
                open_axis = True
            else:  # pragma: no cover - artifact rows hold literals and open-axis regexes only
                raise TypeError(f"unexpected piece {piece!r}")
        start = "".join(prefix)
        return self._has(start, "".join(parts[len(prefix) :]) if open_axis else None)

    def lacks(self, template: Template, axes: Mapping[str, Axis]) -> Assignment | None:
        """The first row of ``template`` over ``axes`` (in ``assignments`` order)
        whose name is not among the names, as ``has`` would find it on the row's pieces,
        without making the rows: the template is read once into the fixed text before its
        first open axis (literals and finite values) and the regex after it."""
        parts = template.parts
        head: list[str | Placeholder] = []
        tail: list[str | Placeholder] = []  # regex text, and finite values to escape
        for part in parts:
            if isinstance(part, Placeholder) and axes[part.axis].is_open:
                tail.append(f"(?:{axes[part.axis].pattern or ''})")
            elif not tail:
                head.append(part)
            else:
                tail.append(re.escape(part) if isinstance(part, str) else part)
        regex = [x for x in tail if isinstance(x, str)]
        fixed = "".join(regex) if len(regex) == len(tail) else None
        for assignment in template.assignments(axes):
            values = dict(assignment)
            start = "".join(x if isinstance(x, str) else values[x.axis] for x in head)
            if not tail:
                found = start in self.exact
            else:
                rest = fixed
                if rest is None:
                    rest = "".join(
                        x if isinstance(x, str) else re.escape(values[x.axis]) for x in tail
                    )
                found = self._has(start, rest)
            if not found:
                return assignment
        return None

    def _has(self, start: str, rest: str | None) -> bool:
        """Whether a name is ``start`` (``rest`` None) or ``start`` followed by a full
        match of the regex ``rest``."""
        import bisect

        if rest is None:
            return start in self.exact
        rx = self._compiled.get(rest)
        if rx is None:
            rx = self._compiled[rest] = re.compile(rest)
        at = bisect.bisect_left(self.ordered, start)
        while at < len(self.ordered) and self.ordered[at].startswith(start):
            if rx.fullmatch(self.ordered[at], len(start)):
                return True
            at += 1
        return False


def _ships_whole(migration: Migration, release: Release, producer: Producer) -> bool | None:
    """Whether ``release_selection`` picks some row of ``producer``, decided on its
    templates where that is plain: the release has no `exclude` and each select is
    literal text followed by one ``*`` (``pkg*``). A template whose fixed start begins
    with that text has every name of its rows begin with it (a row is picked when it has
    a name at all: some row, open axes whose regexes match something); one whose fixed
    start differs from the text within both has no such name. None where any of that
    does not hold (a placeholder within the text's length, another glob): the rows
    decide."""
    if release.exclude:
        return None
    starts: list[str] = []
    for glob in release.select:
        text = glob.text
        if not text.endswith("*") or any(c in text[:-1] for c in "*?["):
            return None
        starts.append(text[:-1])
    axes = item_axes(migration, producer)
    for template in producer.artifacts:
        fixed = ""
        for part in template.parts:
            if not isinstance(part, str):
                break
            fixed += part
        for start in starts:
            if fixed.startswith(start):
                named = _has_names(template, axes)
                if named is None or named:
                    return named
            elif len(fixed) < len(start) and start.startswith(fixed):
                return None
    return False


_NONEMPTY: dict[str, bool | None] = {}


def _has_names(template: Template, axes: Mapping[str, Axis]) -> bool | None:
    """Whether the rows of template ``parts`` have a name at all: some row (each finite
    axis has a value) and, for each open axis, a string its regex matches. None when the
    regex defeats the exact engine (the rows decide, and say so)."""
    from stagegate.engine.globs import PatternError, Rx, intersects, language

    if template.row_count(axes) == 0:
        return False
    for part in template.parts:
        if isinstance(part, str) or not axes[part.axis].is_open:
            continue
        pattern = axes[part.axis].pattern or ""
        if pattern not in _NONEMPTY:
            try:
                _NONEMPTY[pattern] = intersects(language((Rx(pattern),)))
            except PatternError:
                _NONEMPTY[pattern] = None
        if not _NONEMPTY[pattern]:
            return _NONEMPTY[pattern]
    return True


def _check_reuse(
    planner: _Planner,
    reuse: Mapping[str, list[tuple[Consumer, Input]]],
    rebuild: Mapping[str, str],
    baseline: Baseline | None,
) -> None:
    """_Full unless every reused producer's rows can be taken from the baseline safely."""
    reuse = {p: reuse[p] for p in planner.producers if p in reuse}  # declared order
    first = next(iter(reuse))
    if baseline is None:
        raise _Full(f"no baseline run was given (--baseline), so {first} cannot be reused")
    if baseline.problem:
        raise _Full(f"the baseline run cannot be used: {baseline.problem}")
    if baseline.sha is None:
        raise _Full(f"{baseline.source} names no baseline run, so {first} cannot be reused")
    if baseline.since is not None:
        try:
            stale, _ = planner.stale(baseline.since)
        except _Full as full:
            raise _Full(
                f"between the baseline run's commit {baseline.sha[:12]} and the head, {full.why}"
            ) from None
        for pid in reuse:
            if pid in stale:
                raise _Full(
                    f"{pid} cannot be reused: its sources changed between the baseline run's "
                    f"commit {baseline.sha[:12]} and the head ({stale[pid]})"
                )
    names = _Names(baseline.artifacts)
    for pid, takers in reuse.items():
        for consumer, item in sorted(takers, key=lambda t: planner.position[t[0].id]):
            if not item.required:
                continue
            row = planner.missing(item, pid, names)
            if row is not None:
                raise _Full(
                    f"the baseline run holds no {row.describe()} of {pid}, which "
                    f"{consumer.id} requires ({item.loc.file}:{item.loc.line})"
                )
    for release in planner.plan.releases:
        if release.ships_reused or release.run != "this":
            continue
        for pid in planner.shipped(release, rebuild):
            for cid in planner.fed_by.get(pid, ()):
                for item in planner.consumers[cid].inputs:
                    if item.run != "baseline":
                        continue
                    taken = [q for q in planner.sources(item) if q in reuse]
                    if taken:
                        raise _Full(
                            f"release {release.id} would ship {pid}, built by {cid} against "
                            f"{taken[0]} from the baseline run; a release ships reused "
                            "artifacts only where it says `ships_reused: true`"
                        )


def affected(
    migration: Migration, stage: int, change: Change, *, model: Sequence[str] = ()
) -> Affected:
    """The plan of ``stage`` for ``change`` (paths from the top of the repository).
    ``model``: the migration's own files (the migration file, the stages folder ending
    in ``/``), whose change rebuilds everything."""
    plan = resolve(migration, stage)
    planner = _Planner(plan, change.links)
    changed, through, baseline = change.changed, change.through, change.baseline
    full: str | None = None
    reuse: dict[str, list[tuple[Consumer, Input]]] = {}
    try:
        _model_unchanged(changed, model)
        rebuild, rerun = planner.stale(changed, through)
        reuse = planner.needs(rebuild, rerun)
        if reuse:
            _check_reuse(planner, reuse, rebuild, baseline)
    except _Full as exc:
        full = exc.why
        rebuild = {p: f"full rebuild: {full}" for p in planner.producers}
        rerun = {c: f"full rebuild: {full}" for c in planner.consumers}
        reuse = {}
    releases: dict[str, str] = {}
    for release in plan.releases:
        if release.run != "this":
            continue
        shipped = planner.shipped(release, rebuild)
        if shipped:
            releases[release.id] = f"it ships rows of {', '.join(shipped)}, which rebuild"
    reused: dict[str, str] = {}
    for p in planner.producers:
        if p in reuse:
            takers = sorted({c.id for c, _ in reuse[p]}, key=planner.position.__getitem__)
            reused[p] = f"not rebuilt; {', '.join(takers)} take its rows from the baseline run"
    return Affected(
        migration=migration,
        stage=stage,
        commits=change.commits,
        changed=tuple(sorted(dict.fromkeys(changed))),
        rebuild={p: rebuild[p] for p in planner.producers if p in rebuild},
        retest={c: rerun[c] for c in planner.consumers if c in rerun},
        reuse=reused,
        releases=releases,
        full=full,
        warnings=_warnings(migration),
    )


def _model_unchanged(changed: Sequence[str], model: Sequence[str]) -> None:
    """_Full when the change edits the migration itself: a pull request must not be
    planned by a model it rewrote (it could declare its own files covered by a job that
    runs nothing), whatever globs the edited model gives."""
    for path in changed:
        for own in model:
            if path == own or (own.endswith("/") and path.startswith(own)):
                raise _Full(
                    f"{path} is part of the migration itself: a change to the model that "
                    "plans it is never planned by that model"
                )


def reuse_problem(
    migration: Migration, stage: int, change: Change, *, model: Sequence[str] = ()
) -> str | None:
    """Why the reuse ``change`` calls for is unsafe (which ``affected`` answers with a full
    rebuild); None when it reuses nothing or reuses safely."""
    planner = _Planner(resolve(migration, stage), change.links)
    try:
        _model_unchanged(change.changed, model)
        rebuild, rerun = planner.stale(change.changed, change.through)
    except _Full:
        return None  # a full rebuild reuses nothing
    reuse = planner.needs(rebuild, rerun)
    if not reuse:
        return None
    try:
        _check_reuse(planner, reuse, rebuild, change.baseline)
    except _Full as exc:
        return exc.why
    return None


def reuse_hazards(migration: Migration, stage: int) -> list[tuple[Loc, str]]:
    """What the model lets reuse do wrong at ``stage``, whatever the change: a `run:
    baseline` input that takes from another run's producer, and a release (without
    ``ships_reused: true``) that ships a producer built by a job that may take rows from
    the baseline run."""
    plan = resolve(migration, stage)
    planner = _Planner(plan, ())
    found: list[tuple[Loc, str]] = []
    every = {p.id: p for p in plan.producers}
    for c in plan.consumers:
        for item in c.inputs:
            if item.run != "baseline":
                continue
            others = [
                pid
                for _s, rows in selections(plan, item, only_from=True)
                for pid in dict.fromkeys(r.producer for r in rows)
                if every[pid].run != "this"
            ]
            for pid in dict.fromkeys(others):
                found.append(
                    (
                        item.loc,
                        f"consumer {c.id}: input {item.select.text} has `run: baseline` but takes "
                        f"rows of {pid}, which run {every[pid].run} makes, not this repository's "
                        "runs; the baseline run holds only this run's producers",
                    )
                )
    ev = evaluation(migration)
    for release in plan.releases:
        if release.ships_reused or release.run != "this":
            continue
        for pid in sorted(ev.release_rows(release, stage).producers):
            for cid in planner.fed_by.get(pid, ()):
                consumer = planner.consumers[cid]
                taking = [i for i in consumer.inputs if i.run == "baseline"]
                if taking:
                    found.append(
                        (
                            release.loc,
                            f"release {release.id} ships {pid}, which {cid} builds against "
                            f"{taking[0].select.text} taken from the baseline run when it is "
                            f"not rebuilt ({taking[0].loc.file}:{taking[0].loc.line}); build it "
                            "from this run's rows (drop `run: baseline`) or say "
                            "`ships_reused: true` on the release",
                        )
                    )
    return found
