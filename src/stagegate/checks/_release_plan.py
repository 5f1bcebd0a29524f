"""What release-continuity plans and shares: a release's plan as producer rows, the
stages' release_changes applied to it, and the work kept per load of a migration.

A plan maps each producer row the release is expected to select, ``(producer, name)``,
to the stage it entered the plan. ``release_changes`` move it stage by stage (drops
first, then adds; see ``step``). ``Memo`` keeps, once per load and keyed by records
(never ``id()``), the plan at `since` per ``Start``, the plan stage by stage per check
(``Track``), and the stages at which a release selects other rows than its plan."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from stagegate.checks.base import Context, Finding, where
from stagegate.engine.match import RowIndex, evaluation, plain_selector, selected
from stagegate.engine.resolve import Plan, Row, tag_claimed
from stagegate.model import Check, Migration, Release, ReleaseChange, Stage, Template
from stagegate.records import record


def claimants(plan: Plan, tag: str) -> list[Release]:
    """The active releases claiming ``tag``: a tag, or a claim (``claim``) that names
    dispatch values too, which a release saying other values for them does not claim."""
    bare, _, rest = tag.partition(" ")
    found = evaluation(plan.migration).claimants(bare, plan.stage)
    if not rest:
        return found
    want = dict(pair.split("=", 1) for pair in rest.split())
    return [r for r in found if all(r.dispatch.get(k, v) == v for k, v in want.items())]


def claim(tag: str, dispatch: Mapping[str, Any] | None) -> str:
    """What a check claims: ``tag``, then each dispatch value as ``input=value`` (a git tag
    holds no space); a boolean input's value is ``true``/``false``."""
    pairs = [
        f"{k}={('true' if v else 'false') if isinstance(v, bool) else v}"
        for k, v in (dispatch or {}).items()
    ]
    return " ".join([tag, *pairs])


def apart(a: Release, b: Release) -> bool:
    """Whether two releases claiming one tag are started by different dispatch values (they
    name an input with different values), so that no dispatch starts both."""
    return any(a.dispatch[k] != b.dispatch[k] for k in a.dispatch.keys() & b.dispatch.keys())


def selecting_nothing(
    migration: Migration, checks: Sequence[Check], failed: Mapping[str, str]
) -> dict[str, str]:
    """The release-continuity checks (by label, those not in ``failed``) whose release
    selects no artifact at stage 0, with why: they would pass saying nothing (``init``
    leaves them out)."""
    from stagegate.engine.resolve import resolve

    plan = resolve(migration, 0)
    out: dict[str, str] = {}
    for check in checks:
        label = check.describe()
        if check.kind != "release-continuity" or label in failed:
            continue
        found = claimants(plan, claim(check.args["tag"], check.args.get("dispatch")))
        if len(found) == 1 and not evaluation(migration).release_rows(found[0], 0).rows:
            out[label] = (
                f"release {found[0].id} selects no artifact a producer here makes at stage 0 "
                "(its downloads find no upload of this model: see the notes below); declare "
                "the uploads it takes, then the check"
            )
    return out


@record
class Planned:
    """A producer row the release is expected to select, and the stage it entered the plan."""

    row: Row
    stage: int


Key = tuple[str, str]
"""A producer row as a release takes it: (producer, artifact name). A release that keeps a
name but takes it from another producer takes other files under it."""

Expected = dict[Key, Planned]


def key(row: Row) -> Key:
    return (row.producer, row.name)


# --------------------------------------------------------------------------- planned changes


def _applies(plan: Plan, change: ReleaseChange, tag: str) -> bool:
    """A change names the release by a tag: it applies to the check of ``tag`` when the
    release claiming the change's tag at that stage is the one claiming ``tag``."""
    if change.tag == tag:
        return True
    claiming = claimants(plan, tag)
    return len(claiming) == 1 and tag_claimed(claiming[0], change.tag)


def _definition(ctx: Context, stage: int) -> Stage | None:
    """The definition of ``stage`` whose release_changes count: verify-pr's base's, where
    the base defines it (a pull request cannot plan its own way through a check)."""
    definition = ctx.reference.stage_def(stage)
    return definition if definition is not None else ctx.migration.stage_def(stage)


def changes_at(ctx: Context, stage: int, tag: str) -> list[ReleaseChange]:
    """The release_changes of ``stage`` that apply to the release claiming ``tag``."""
    definition = _definition(ctx, stage)
    if definition is None or not definition.release_changes:
        return []
    plan = ctx.plan_at(stage)
    return [c for c in definition.release_changes if _applies(plan, c, tag)]


def _matching(glob: Template, rows: Iterable[Row]) -> list[Row]:
    return selected(plain_selector(glob.text, glob.loc), RowIndex(rows))


Idle = tuple[ReleaseChange, str, Template | None]
"""A planned change that changes nothing: the entry, how (``drop``, ``add``: the glob
matches nothing to change; ``cancel``: the stage leaves the rows of the names the glob
touches as they were; ``cancel-entry``: so does every glob of the entry), and the glob."""


def step(
    expected: Expected,
    changes: Sequence[ReleaseChange],
    selection: list[Row],
    stage: int,
    dropped: dict[str, int],
) -> tuple[Expected, list[Idle]]:
    """The plan after ``stage``'s changes: without the rows of its drops, with the rows
    selected at that stage matching its adds. Also each glob that changed nothing; the
    names dropped are recorded in ``dropped`` (name -> stage)."""
    out = dict(expected)
    idle: list[Idle] = []
    touched: list[tuple[ReleaseChange, str, Template, set[str]]] = []
    for change in changes:
        for glob in change.drop:
            gone = _matching(glob, [p.row for p in out.values()])
            if not gone:
                idle.append((change, "drop", glob))
            else:
                touched.append((change, "drop", glob, {row.name for row in gone}))
            for row in gone:
                out.pop(key(row), None)
                dropped[row.name] = stage
    for change in changes:
        for glob in change.add:
            fresh = [row for row in _matching(glob, selection) if key(row) not in out]
            if not fresh:
                idle.append((change, "add", glob))
            else:
                touched.append((change, "add", glob, {row.name for row in fresh}))
            for row in fresh:
                out[key(row)] = Planned(row, stage)
                dropped.pop(row.name, None)
    return out, idle + _cancelled(expected, out, changes, touched)


def _cancelled(
    before: Expected,
    after: Expected,
    changes: Sequence[ReleaseChange],
    touched: list[tuple[ReleaseChange, str, Template, set[str]]],
) -> list[Idle]:
    """The globs whose names the stage leaves taken from the same producers as before it
    (a drop and an add of the same rows cancel out; of the same names from other
    producers, they declare a move), once per entry where every glob of it cancels out."""

    def rows_of(plan: Expected, names: set[str]) -> set[Key]:
        return {k for k in plan if k[1] in names}

    void = [
        (change, kind, glob)
        for change, kind, glob, names in touched
        if rows_of(before, names) == rows_of(after, names)
    ]
    out: list[Idle] = []
    for change in changes:
        own = [(c, k, g) for c, k, g in void if c is change]
        if own and len(own) == len(change.drop) + len(change.add):
            out.append((change, "cancel-entry", None))
        else:
            out += [(c, "cancel", g) for c, _k, g in own]
    return out


def idle_finding(
    ctx: Context,
    release: Release,
    stage: int,
    kind: str,
    glob: Template | None,
    change: ReleaseChange,
) -> Finding:
    definition = _definition(ctx, stage)
    file = definition.file if definition else "?"
    fix = (
        "a planned change must change the selection: fix the glob (or the release's select), "
        "or remove the entry."
    )
    if glob is None:  # every glob of the entry cancels out
        shown = " and ".join(
            f"{verb} {', '.join(repr(g.text) for g in globs)}"
            for verb, globs in (("drop", change.drop), ("add", change.add))
            if globs
        )
        return Finding(
            f"stage {stage} ({file}:{change.loc.line}) release_changes for {change.tag}: "
            f"{shown} cancel out: release {release.id} {where(release)} takes the names they "
            "match from the same producers after this stage as before it (a drop and an add "
            "of one name declare a move only when the name then comes from another "
            f"producer); {fix}",
            change.loc,
        )
    if kind == "drop":
        what = (
            f"drops nothing: at stage {stage - 1} release {release.id} {where(release)} was not "
            "planned to select any name it matches"
        )
    elif kind == "cancel":
        what = (
            f"cancels out: this stage takes the names it matches from the same producers "
            f"as before, so release {release.id} {where(release)} selects what it selected "
            "before (a drop and an add of one name declare a move only when the name then "
            "comes from another producer)"
        )
        kind = "drop" if glob in change.drop else "add"
    else:
        what = (
            f"adds nothing: at stage {stage} release {release.id} {where(release)} selects no "
            "name it matches that it did not select already"
        )
    return Finding(
        f"stage {stage} ({file}) release_changes for {change.tag}: {kind} {glob.text!r} {what}; "
        f"{fix}",
        glob.loc,
    )


# --------------------------------------------------------------------------- shared work


@record
class Start:
    """Where a check's plan starts: the release ``release`` claiming its tag in the plan of
    ``migration`` at stage ``stage`` (verify-pr: the base's, where it has reached it)."""

    migration: Migration
    release: str
    stage: int


class _Scan:
    """How far ``Memo.differing`` has looked for one (release, start), and what it found."""

    def __init__(self, stage: int) -> None:
        self.next = stage
        self.differ: list[int] = []


class Memo:
    """What release-continuity works out once per load of a migration and shares with every
    stage and check that asks, keyed by records (never by ``id()``): the plan at `since` (one
    object per ``Start``), the stages at which a release selects other names than that plan
    (``tooling: control`` looks back at every stage: each is compared once per release and
    start, however many later stages ask), and the stages that declare release_changes."""

    def __init__(self, migration: Migration) -> None:
        self.migration = migration
        self.changing = tuple(
            k for k, definition in enumerate(migration.stages, 1) if definition.release_changes
        )
        self._first: dict[Start, Expected] = {}
        self._scans: dict[tuple[str, Start], _Scan] = {}
        self._tracks: dict[tuple[Start, str, str, Migration], Track] = {}

    def unchanged(self, baseline: int, stage: int) -> bool:
        """Whether no stage in ``baseline + 1..stage`` declares release_changes."""
        return not any(baseline < k <= stage for k in self.changing)

    def first(self, start: Start) -> Expected:
        """The plan at `since`: the names the release selects there."""
        found = self._first.get(start)
        if found is None:
            release = start.migration.releases[start.release]
            rows = evaluation(start.migration).release_rows(release, start.stage).rows
            found = {key(r): Planned(r, start.stage) for r in rows}
            self._first[start] = found
        return found

    def track(
        self, start: Start, tag: str, release: str, reference: Migration, first: Expected
    ) -> Track:
        """The plan stage by stage of the check of ``tag`` from ``start``, for the release
        ``release`` claiming it now, with the release_changes of ``reference``'s stages."""
        key = (start, tag, release, reference)
        found = self._tracks.get(key)
        if found is None:
            found = self._tracks[key] = Track(first)
        return found

    def differing(
        self,
        release: Release,
        start: Start,
        stage: int,
        track: Track | None,
        plan_at: Callable[[int], Expected],
    ) -> list[int]:
        """The stages ``start.stage..stage - 1`` at which ``release`` (of this migration)
        selects other producer rows than ``plan_at`` plans there: each stage is compared
        once per release and plan (the plan at ``start``, or ``track``'s)."""
        scans = self._scans if track is None else track.scans
        scan = scans.get((release.id, start))
        if scan is None:
            scan = scans[(release.id, start)] = _Scan(start.stage)
        ev = evaluation(self.migration)
        for k in range(scan.next, stage):
            scan.next = k + 1
            if {key(r) for r in ev.release_rows(release, k).rows} != plan_at(k).keys():
                scan.differ.append(k)
        return [k for k in scan.differ if k < stage]


def memo(migration: Migration) -> Memo:
    """The one ``Memo`` of ``migration`` (kept with its ``match.Evaluation``)."""
    return evaluation(migration).remember(("release-continuity",), lambda: Memo(migration))


class Track:
    """The plan of one release through the stages from its start, made stage by stage as
    far as a check has asked, and shared by the checks of later stages (each stage's
    release_changes are applied once, not once per later stage)."""

    def __init__(self, first: Expected) -> None:
        self.plans: list[Expected] = [first]
        self.dropped: list[dict[str, int]] = [{}]
        self.changed: list[bool] = [False]
        self.idle: list[list[Finding]] = [[]]
        self.scans: dict[tuple[str, Start], _Scan] = {}
        """``Memo.differing``'s scans against these plans."""
