"""The headline check: the release claiming a tag selects exactly what it selected before.

Names are compared as template rows with open axes kept symbolic
(``cuda-bindings-python312-cuda13.4.1-win-64-{sha}``), each selection decided
exactly by the glob engine, and each with the producer it is taken from (the same name
from another producer is other files). One function per rule below; the plan through
the stages' release_changes and the work shared across stages are in ``_release_plan``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from stagegate.checks._release_plan import (
    Expected,
    Key,
    Start,
    Track,
    changes_at,
    claim,
    idle_finding,
    key,
    memo,
    step,
)
from stagegate.checks._release_plan import claimants as claimants  # also stagegate.testing's
from stagegate.checks.base import Context, Finding, Result, result, where
from stagegate.engine.match import (
    RowIndex,
    evaluation,
    index,
    plain_selector,
    selected,
)
from stagegate.engine.resolve import Plan, Row
from stagegate.errors import Problem
from stagegate.model import Check, Migration, Release, ReleaseChange
from stagegate.records import record
from stagegate.words import counted

KIND = "release-continuity"
SUMMARY = (
    "The release claiming `tag` selects exactly the artifact names the release claiming it "
    "at stage `since` selected, each from the same producers, changed only by the stages' "
    "release_changes (and, with "
    "tooling: control or both, from runs of every stage between); with `kinds`, only "
    "artifacts of those kinds."
)
ARGS = {
    "tag": {"type": "string", "minLength": 1, "description": "A concrete tag, e.g. v13.4.2."},
    "dispatch": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": ["string", "boolean"], "minLength": 1},
        "description": "The workflow_dispatch values of the release run, e.g. {component: "
        "cuda-core}: among releases claiming the tag, those saying other values are not meant.",
    },
    "since": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "The stage to compare with.",
    },
}
REQUIRED = ["tag"]
READS = "model"


def validate(migration: Migration, check: Check) -> list[Problem]:
    tag = check.args["tag"]
    if any(c.isspace() for c in tag):
        return [
            Problem(
                check.loc,
                f"release-continuity tag: {tag!r} holds a space, which no git tag does; "
                "name a concrete tag, such as v13.4.2.",
            )
        ]
    since_stage = check.args.get("since", 0)
    if since_stage > migration.last:
        return [
            Problem(
                check.loc,
                f"release-continuity since: {since_stage} is beyond the last stage ({migration.last}); "
                f"use 0..{migration.last}.",
            )
        ]
    problems = []
    for name, value in check.args.get("dispatch", {}).items():
        text = claim("", {name: value}).strip()
        offered = {r.dispatch[name] for r in migration.releases.values() if name in r.dispatch}
        if text.partition("=")[2] not in offered:
            problems.append(
                Problem(
                    check.loc,
                    f"release-continuity dispatch: {text!r}: no release says dispatch "
                    f"{name}: {text.partition('=')[2]}"
                    + (f" (they say {', '.join(sorted(offered))})" if offered else "")
                    + "; name the values of the release the check is about.",
                )
            )
    return problems


def _selection(plan: Plan, release: Release) -> list[Row]:
    """``release_selection(release, pool(plan, release))``, made once per state of what the
    release's globs can see and shared by the stages and checks in it (``match.Evaluation``)."""
    return evaluation(plan.migration).release_rows(release, plan.stage).rows


def pool(plan: Plan, release: Release) -> RowIndex:
    """The rows in the run a release downloads from."""
    return index(plan, frozenset({release.run}))


def _glob_for(release: Release, row: Row) -> str:
    for template in release.select:
        if selected(plain_selector(template.text), [row]):
            return template.text
    return "?"


def _group(rows: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row.producer, row.template.text)].append(row)
    return groups


def _rows_phrase(rows: list[Row], total: int) -> str:
    if len(rows) == 1:
        return rows[0].name
    sample = rows[0].name
    if len(rows) == total:
        return f"all {total} rows of {rows[0].template.text} (e.g. {sample})"
    listed = "; ".join(" ".join(f"{k}={v}" for k, v in r.assignment) for r in rows[:6])
    more = f"; and {len(rows) - 6} more" if len(rows) > 6 else ""
    return f"{len(rows)} rows of {rows[0].template.text} ({listed}{more}), e.g. {sample}"


def _stages(a: int, b: int) -> str:
    return f"stage {a}" if a == b else f"stages {a}..{b}"


def _extra(
    ctx: Context,
    release: Release,
    rows: list[Row],
    stage: int,
    baseline: int,
    changed: bool = False,
    dropped: dict[str, int] | None = None,
) -> Iterable[Finding]:
    m = ctx.migration
    gone = dropped or {}
    for (pid, _template), group in _group(rows).items():
        producer = m.producers[pid]
        total = sum(
            1
            for r in ctx.plan_at(stage).rows(producer)
            if r.template.text == group[0].template.text
        )
        at = gone.get(group[0].name)
        if at is not None:
            why = f"the release_changes of stage {at} dropped this name from the release"
        else:
            why = f"it did not select this name at stage {baseline}" + (
                f" and no release_changes of {_stages(baseline + 1, ctx.stage)} adds it"
                if changed
                else ""
            )
        yield Finding(
            f"release {release.id} {where(release)} now also selects {_rows_phrase(group, total)} "
            f"from producer {pid} {where(producer)}, active {ctx.cause(producer, stage)}; "
            f"glob {_glob_for(release, group[0])!r}; {why}: narrow the glob, add an exclude, or "
            "give the new artifacts a name it does not match (or, if the release is meant to "
            "take them, declare it in the stage file's release_changes).",
            producer.loc,
        )


def _missing(
    ctx: Context,
    release: Release,
    keys: set[Key],
    expected: Expected,
    stage: int,
    baseline: int,
    older: bool = False,
) -> Iterable[Finding]:
    m = ctx.migration
    plan = ctx.plan_at(stage)
    then = ctx.baseline_plan(baseline)
    active = {p.id for p in plan.producers}
    planned = [expected[k] for k in sorted(keys, key=lambda k: (k[1], k[0]))]
    groups: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
    for entry in planned:
        groups[(entry.row.producer, entry.row.template.text, entry.stage)].append(entry.row)
    for (pid, template, origin), group in groups.items():
        source_plan = then if origin == baseline else ctx.plan_at(origin)
        producer = source_plan.migration.producers[pid]
        total = sum(1 for r in source_plan.rows(producer) if r.template.text == template)
        if pid not in m.producers:
            why = f"producer {pid} {where(producer)} is no longer declared"
        elif pid not in active:
            producer = m.producers[pid]
            why = f"producer {pid} {where(producer)} is off {ctx.cause(producer, stage)}"
        else:
            why = (
                f"its globs {', '.join(repr(t.text) for t in release.select)}"
                + (
                    f" minus excludes {', '.join(repr(t.text) for t in release.exclude)}"
                    if release.exclude
                    else ""
                )
                + " do not select it"
            )
        source = _origin(ctx.migration, origin, baseline)
        fix = (
            f"a tag cut at stage {stage} was planned to ship it: select it from such runs too"
            if older
            else "if that is meant, declare it as a `drop` in the stage file's release_changes"
        )
        yield Finding(
            f"release {release.id} {where(release)} no longer selects {_rows_phrase(group, total)}, "
            f"which it {source} from producer {pid}; {why}: the release would ship without it "
            f"({fix}).",
            release.loc,
        )


def _origin(migration: Migration, origin: int, baseline: int) -> str:
    definition = migration.stage_def(origin)
    if origin == baseline or definition is None:
        return f"selected at stage {origin}"
    return f"was planned to select from stage {origin} on (release_changes of {definition.file})"


def _compare(
    ctx: Context,
    release: Release,
    rows: list[Row],
    expected: Expected,
    stage: int,
    baseline: int,
    changed: bool = False,
    dropped: dict[str, int] | None = None,
    older: bool = False,
) -> list[Finding]:
    """``older``: the rows are what a release selects from a run built at an earlier stage."""
    taken = {key(row): row for row in rows}
    if taken.keys() == expected.keys():
        return []
    now_names = {row.name for row in rows}
    planned_names = {name for _, name in expected}
    extra = [row for row in rows if key(row) not in expected and row.name not in planned_names]
    missing = {k for k in expected if k not in taken and k[1] not in now_names}
    moved = [row for row in rows if key(row) not in expected and row.name in planned_names]
    moved += [e.row for k, e in expected.items() if k not in taken and k[1] in now_names]
    return [
        *_extra(ctx, release, extra, stage, baseline, changed, dropped),
        *_missing(ctx, release, missing, expected, stage, baseline, older),
        *_moved(ctx, release, rows, expected, {r.name for r in moved}, stage, baseline, older),
    ]


def _producers(ctx: Context, ids: Iterable[str], stage: int) -> str:
    """``producer a (file:line)`` or ``producers a (file:line) and b (file:line)``."""
    shown = []
    for pid in ids:
        producer = ctx.migration.producers.get(pid)
        if producer is None:
            producer = ctx.baseline_plan(stage).migration.producers.get(pid)
        shown.append(f"{pid} {where(producer)}" if producer is not None else pid)
    return ("producers " if len(shown) > 1 else "producer ") + " and ".join(shown)


def _changed_at(
    ctx: Context, release: Release, name: str, now: tuple[str, ...], since: int, stage: int
) -> int:
    """The stage from which the release takes ``name`` from exactly the producers ``now``
    without a break up to ``stage`` (no earlier than ``since + 1``)."""
    at = stage
    while at - 1 > since:
        rows = _selection(ctx.plan_at(at - 1), release)
        if tuple(sorted({r.producer for r in rows if r.name == name})) != now:
            break
        at -= 1
    return at


def _how_moved(
    ctx: Context, it: str, was: tuple[str, ...], now: tuple[str, ...], when: str, stage: int
) -> str:
    """How the producers of a kept name changed: instead of, no longer, also."""
    gained = [pid for pid in now if pid not in was]
    lost = [pid for pid in was if pid not in now]
    took = f"{it} from {_producers(ctx, was, stage)} {when}"
    if gained and lost == list(was):
        return (
            f"now takes {it} from {_producers(ctx, gained, stage)} instead of "
            f"{_producers(ctx, lost, stage)}, from which it took {it} {when}"
        )
    if gained and lost:
        return f"now takes {it} from {_producers(ctx, now, stage)}, where it took {took}"
    if lost:
        return (
            f"no longer takes {it} from {_producers(ctx, lost, stage)}, only from "
            f"{_producers(ctx, now, stage)}, where it took {took}"
        )
    return f"now also takes {it} from {_producers(ctx, gained, stage)}, where it took only {took}"


def _moved(
    ctx: Context,
    release: Release,
    rows: list[Row],
    expected: Expected,
    names: set[str],
    stage: int,
    baseline: int,
    older: bool,
) -> Iterable[Finding]:
    """Names the release still selects, but from other producers than planned: the same
    name, other files (other jobs build them)."""
    Group = tuple[tuple[str, ...], tuple[str, ...], int, int, str]  # was, now, origin, at, template
    groups: dict[Group, list[Row]] = defaultdict(list)
    for name in sorted(names):
        now = tuple(sorted({r.producer for r in rows if r.name == name}))
        entries = [e for (_, n), e in expected.items() if n == name]
        was = tuple(sorted({e.row.producer for e in entries}))
        origin = max(e.stage for e in entries)
        at = _changed_at(ctx, release, name, now, origin, stage)
        row = next(r for r in rows if r.name == name and r.producer == now[0])
        groups[(was, now, origin, at, row.template.text)].append(row)
    for (was, now, origin, at, template), group in groups.items():
        total = sum(1 for r in ctx.plan_at(stage).rows(now[0]) if r.template.text == template)
        definition = ctx.migration.stage_def(at)
        changed = f"stage {at}" + (f" ({definition.file})" if definition is not None else "")
        planned = ctx.migration.stage_def(origin)
        when = (
            f"at stage {origin}"
            if origin == baseline or planned is None
            else f"from stage {origin} on (release_changes of {planned.file})"
        )
        gained = [pid for pid in now if pid not in was]
        loc = ctx.migration.producers[gained[0]].loc if gained else release.loc
        it = "it" if len(group) == 1 else "them"
        how = _how_moved(ctx, it, was, now, when, stage)
        fix = (
            f"a tag cut at stage {stage} was planned to ship the files of "
            f"{_producers(ctx, was, stage)}: select {it} from such runs too"
            if older
            else "if that is meant, declare the move in that stage file's release_changes (a "
            f"`drop` and an `add` of the {'name' if len(group) == 1 else 'names'}); else take "
            f"{it} from {_producers(ctx, was, stage)} again"
        )
        under = "that name" if len(group) == 1 else "those names"
        yield Finding(
            f"release {release.id} {where(release)} still selects {_rows_phrase(group, total)} "
            f"but {how}; changed at {changed}: what ships under {under} has changed. "
            f"{fix[0].upper()}{fix[1:]}.",
            loc,
        )


# --------------------------------------------------------------------------- kinds


def effective_tooling(ctx: Context, release: Release) -> str:
    """The tooling whose checks apply: under verify-pr, those of the base's tooling for
    the release as well as the head's (``tag`` and ``control`` together are ``both``)."""
    based = ctx.reference.releases.get(release.id)
    if based is None or based.tooling == release.tooling:
        return release.tooling
    return "both"  # they differ: the checks of each apply


def effective_expect(ctx: Context, release: Release) -> tuple[str, ...] | None:
    """The producers a release must select from: verify-pr's base's, where the base gives
    the release an ``expect`` (a pull request cannot rewrite the expectation that judges
    it), else its own."""
    based = ctx.reference.releases.get(release.id)
    if based is not None and based.expect is not None:
        return based.expect
    return release.expect


def allowed_kinds(ctx: Context, release: Release) -> tuple[str, ...] | None:
    """The kinds a release may take: verify-pr's base's, where the base gives the release
    kinds (a pull request cannot lift the rule that judges it), else its own."""
    based = ctx.reference.releases.get(release.id)
    if based is not None and based.kinds is not None:
        return based.kinds
    return release.kinds


def _kinds(
    ctx: Context,
    release: Release,
    rows: list[Row],
    stage: int,
    plan: Plan | None = None,
) -> list[tuple[tuple[str, str, str], Finding]]:
    """Rows of a kind the release may not take (``kinds: [wheel]``), per (release, producer,
    template). ``plan``: the plan the rows come from (verify-pr's baseline is the base's),
    default the stage's."""
    kinds = allowed_kinds(ctx, release)
    if kinds is None:
        return []
    allowed = set(kinds)
    wrong = [row for row in rows if row.template.kind not in allowed]
    out = []
    for (pid, template), group in _group(wrong).items():
        source = plan or ctx.plan_at(stage)
        producer = source.migration.producers[pid]
        total = sum(1 for r in source.rows(producer) if r.template.text == template)
        tpl = group[0].template
        finding = Finding(
            f"release {release.id} {where(release)} takes only kinds "
            f"{', '.join(kinds)}, but at stage {stage} selects "
            f"{_rows_phrase(group, total)} of kind {tpl.kind!r} (template {template} at "
            f"{tpl.loc.at}) from producer {pid} {where(producer)}, "
            f"via glob {_glob_for(release, group[0])!r}: add an exclude or narrow the glob "
            "so the release takes only those kinds.",
            tpl.loc,
        )
        out.append(((release.id, pid, template), finding))
    return out


# --------------------------------------------------------------------------- the check


@record(eq=False)
class Subject:
    """What one check compares: the release claiming ``tag`` now and what it selects, and
    the release claiming it at `since` (verify-pr: in the base's plan) and what that selected."""

    tag: str
    baseline: int
    release: Release
    current: list[Row]
    before: Release
    base_rows: list[Row]
    start: Start


@record(eq=False)
class Course:
    """The plan at each stage ``baseline..stage``: the selection at `since`, then each
    stage's release_changes; the names each drop removed (name -> stage), whether any
    stage changed the plan, and each glob of a change that changed nothing."""

    first: Expected
    baseline: int
    track: Track | None
    """Where the plans come from (None: no stage changes the plan)."""
    plans: Sequence[Expected]
    """The plan at stage ``baseline + i`` (at least up to the checked stage)."""
    dropped: dict[str, int]
    changed: bool
    unchanged: bool
    """No stage in ``baseline + 1..stage`` declares release_changes: every plan is ``first``."""
    idle: list[Finding]

    def at(self, stage: int) -> Expected:
        return self.first if self.unchanged else self.plans[stage - self.baseline]


class _Findings:
    """A check's findings in order; a template of a kind the release may not take is
    reported once per (release, producer, template), however many rules meet it."""

    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._kinds: set[tuple[str, str, str]] = set()

    def add(self, found: Iterable[Finding], prefix: str = "") -> None:
        self.items += [Finding(prefix + f.message, f.loc) if prefix else f for f in found]

    def kinds(
        self, found: Iterable[tuple[tuple[str, str, str], Finding]], prefix: str = ""
    ) -> None:
        for seen, finding in found:
            if seen not in self._kinds:
                self._kinds.add(seen)
                self.add([finding], prefix)


def run(ctx: Context, check: Check) -> list[Result]:
    tag = claim(check.args["tag"], check.args.get("dispatch"))
    baseline: int = check.args.get("since", 0)
    if baseline > ctx.stage:
        return [result(ctx, check, [], f"applies from stage {baseline} on")]
    subject = _subject(ctx, check, tag, baseline)
    if not isinstance(subject, Subject):
        return [result(ctx, check, subject, "")]
    found = _Findings()
    found.kinds(_kinds(ctx, subject.release, subject.current, ctx.stage))
    found.kinds(
        _kinds(ctx, subject.before, subject.base_rows, baseline, ctx.baseline_plan(baseline))
    )
    course = _course(ctx, subject)
    found.add(course.idle)
    found.add(_against_plan(ctx, subject, course))
    found.add(_expected_producers(ctx, subject))
    found.add(_wheels(ctx, subject))
    _older_runs(ctx, subject, course, found)
    _tagged_trees(ctx, check, subject, course, found)
    return [result(ctx, check, found.items, _ok(subject.release, course, baseline, ctx.stage))]


def _subject(ctx: Context, check: Check, tag: str, baseline: int) -> Subject | list[Finding]:
    """Exactly one active release must claim the tag now and at `since`."""
    now = claimants(ctx.plan, tag)
    then = claimants(ctx.baseline_plan(baseline), tag)  # verify-pr: the base's, where reached
    findings: list[Finding] = []
    for stage, found in ((ctx.stage, now), (baseline, then)):
        if len(found) != 1:
            listed = ", ".join(f"{r.id} {where(r)}" for r in found) or "none"
            findings.append(
                Finding(
                    f"{len(found)} active releases claim {tag} at stage {stage} ({listed}); "
                    "exactly one must: fix the releases' tags or their `when`"
                    + (
                        ", or name the check's dispatch values (they differ in `dispatch`)."
                        if len(found) > 1 and all(r.dispatch for r in found)
                        else "."
                    ),
                    found[0].loc if found else check.loc,
                )
            )
    if findings:
        return findings
    then_plan = ctx.baseline_plan(baseline)
    return Subject(
        tag=tag,
        baseline=baseline,
        release=now[0],
        current=_selection(ctx.plan, now[0]),
        before=then[0],
        base_rows=_selection(then_plan, then[0]),
        start=Start(then_plan.migration, then[0].id, baseline),
    )


def _tag_tooling(ctx: Context, tag: str, stage: int) -> tuple[Release, list[Row]] | None:
    """The release claiming the tag at ``stage``, and what it selects from that run."""
    found = claimants(ctx.plan_at(stage), tag)
    if len(found) != 1:
        return None
    return found[0], _selection(ctx.plan_at(stage), found[0])


def _course(ctx: Context, s: Subject) -> Course:
    """The plan at each stage (without release_changes in ``since + 1..stage``, the plan at
    every stage is the selection at `since`)."""
    shared = memo(ctx.migration)
    first = shared.first(s.start)
    unchanged = shared.unchanged(s.baseline, ctx.stage) and (
        ctx.reference is ctx.migration or memo(ctx.reference).unchanged(s.baseline, ctx.stage)
    )
    if unchanged:
        return Course(first, s.baseline, None, [first], {}, False, True, [])
    track = shared.track(s.start, s.tag, s.release.id, ctx.reference, first)
    for stage in range(s.baseline + len(track.plans), ctx.stage + 1):
        # the release claiming the tag at that stage selects there (at the checked stage,
        # that is ``s.current``); the same whichever later stage asks
        steps = changes_at(ctx, stage, s.tag)
        own = _tag_tooling(ctx, s.tag, stage) if steps else None
        selection = own[1] if own else _selection(ctx.plan_at(stage), s.release) if steps else []
        dropped = dict(track.dropped[-1])
        plan, globs = step(track.plans[-1], steps, selection, stage, dropped)
        track.plans.append(plan)
        track.dropped.append(dropped)
        track.changed.append(track.changed[-1] or bool(steps))
        track.idle.append([idle_finding(ctx, s.release, stage, k, g, c) for c, k, g in globs])
    at = ctx.stage - s.baseline
    return Course(
        first,
        s.baseline,
        track,
        track.plans,
        track.dropped[at],
        track.changed[at],
        False,
        [finding for found in track.idle[: at + 1] for finding in found],
    )


def _against_plan(ctx: Context, s: Subject, course: Course) -> list[Finding]:
    """The release selects exactly the plan of this stage."""
    return _compare(
        ctx,
        s.release,
        s.current,
        course.at(ctx.stage),
        ctx.stage,
        s.baseline,
        course.changed,
        course.dropped,
    )


def _expected_producers(ctx: Context, s: Subject) -> list[Finding]:
    """With ``expect``, the release selects from exactly those producers."""
    expect = effective_expect(ctx, s.release)
    if expect is None or {r.producer for r in s.current} == set(expect):
        return []
    return _expectations(ctx, s.release, s.current, expect)


def _older_runs(ctx: Context, s: Subject, course: Course, found: _Findings) -> None:
    """With tooling: control or both, today's tooling run on a run built at an earlier
    stage ships what was planned for a tag cut then. Without kinds, only stages that select
    other producer rows than their plan can fail, and those are found once per release
    and plan (``Memo.differing``)."""
    tooling = effective_tooling(ctx, s.release)
    if tooling not in ("control", "both"):
        return
    built = (
        memo(ctx.migration).differing(s.release, s.start, ctx.stage, course.track, course.at)
        if allowed_kinds(ctx, s.release) is None
        else range(s.baseline, ctx.stage)
    )
    for stage in built:
        taken = _selection(ctx.plan_at(stage), s.release)
        gone = {name: at for name, at in course.dropped.items() if at <= stage}
        prefix = f"with tooling: {tooling}, today's tooling run on a run built at stage {stage}: "
        found.add(
            _compare(
                ctx,
                s.release,
                taken,
                course.at(stage),
                stage,
                s.baseline,
                course.changed,
                gone,
                older=True,
            ),
            prefix,
        )
        found.kinds(_kinds(ctx, s.release, taken, stage), prefix)


def _tagged_trees(ctx: Context, check: Check, s: Subject, course: Course, found: _Findings) -> None:
    """With tooling: both, the tagged tree's own tooling of a tag cut at an earlier stage
    ships what was planned for it too."""
    if effective_tooling(ctx, s.release) != "both":
        return
    for stage in range(s.baseline + 1, ctx.stage):
        own = _tag_tooling(ctx, s.tag, stage)
        prefix = (
            f"with tooling: both, the tagged tree's own tooling of a tag cut at stage {stage}: "
        )
        if own is None:
            count = len(claimants(ctx.plan_at(stage), s.tag))
            found.add(
                [
                    Finding(
                        f"{prefix}{count} active releases claim {s.tag} at stage {stage}; "
                        "exactly one must: fix the releases' tags or their `when`.",
                        check.loc,
                    )
                ]
            )
            continue
        tagged, rows = own
        so_far = {name: at for name, at in course.dropped.items() if at <= stage}
        found.add(
            _compare(
                ctx,
                tagged,
                rows,
                course.at(stage),
                stage,
                s.baseline,
                course.changed,
                so_far,
                older=True,
            ),
            prefix,
        )
        found.kinds(_kinds(ctx, tagged, rows, stage), prefix)


def _carried(migration: Migration, rows: Iterable[Row]) -> dict[str, list[str]]:
    """Identifier -> the producers of ``rows`` that declare they carry it (``wheels``)."""
    out: dict[str, list[str]] = defaultdict(list)
    for pid in sorted({row.producer for row in rows}):
        for identifier in migration.producers[pid].wheels or ():
            out[identifier].append(pid)
    return out


def _wheels(ctx: Context, s: Subject) -> list[Finding]:
    """The wheels the release ships (the declared ``wheels`` of the producers it selects
    from) are those of `since`, changed only by the stages' release_changes ``wheels``."""
    before = _carried(ctx.baseline_plan(s.baseline).migration, s.base_rows)
    now = _carried(ctx.plan.migration, s.current)
    expected, findings = set(before), list[Finding]()
    for stage in range(s.baseline + 1, ctx.stage + 1):
        for change in changes_at(ctx, stage, s.tag):
            findings += _wheel_change(ctx, s, stage, change, expected)
    if not (before or now or findings):
        return []
    lost, gained = sorted(expected - now.keys(), key=_wheel_order), sorted(now.keys() - expected, key=_wheel_order)
    label = f"release {s.release.id} {where(s.release)}"
    if lost:
        findings.append(Finding(
            f"{label} no longer ships {counted(len(lost), 'wheel')} {', '.join(lost)}, which it "
            f"shipped at stage {s.baseline}{_from(ctx, before, lost)}: declare it in the "
            "release_changes (wheels: drop) of the stage that changes it, or build them again.",
            s.release.loc,
        ))
    if gained:
        findings.append(Finding(
            f"{label} now ships {counted(len(gained), 'wheel')} {', '.join(gained)}"
            f"{_from(ctx, now, gained)}, which it did not ship at stage {s.baseline} and no "
            f"release_changes (wheels: add) of stages {s.baseline + 1}..{ctx.stage} adds: "
            "declare them, or stop building them.",
            s.release.loc,
        ))
    return findings


def _wheel_change(ctx: Context, s: Subject, stage: int, change: ReleaseChange, expected: set[str]) -> list[Finding]:
    """One entry's ``wheels`` applied to ``expected`` (in place); a glob that changes
    nothing is a finding."""
    from fnmatch import fnmatchcase

    idle: list[tuple[str, str]] = []
    for glob in change.wheels_drop:
        gone = {i for i in expected if fnmatchcase(i, glob)}
        expected -= gone
        if not gone:
            idle.append(("drop", glob))
    own = _tag_tooling(ctx, s.tag, stage)
    there = _carried(ctx.plan_at(stage).migration, own[1]) if own else {}
    for glob in change.wheels_add:
        fresh = {i for i in there if fnmatchcase(i, glob)} - expected
        expected |= fresh
        if not fresh:
            idle.append(("add", glob))
    definition = ctx.reference.stage_def(stage) or ctx.migration.stage_def(stage)
    file = definition.file if definition else "?"
    return [
        Finding(
            f"stage {stage} ({file}:{change.loc.line}) release_changes for {change.tag}: wheels "
            f"{verb} {glob!r} {verb}s nothing: "
            + ("no wheel planned at the stage before matches it" if verb == "drop"
               else "no producer the release selects at that stage declares a new wheel it matches")
            + "; a planned change must change what ships: fix the glob, or remove it.",
            change.loc,
        )
        for verb, glob in idle
    ]


def _from(ctx: Context, carried: dict[str, list[str]], ids: list[str]) -> str:
    producers = sorted({p for i in ids for p in carried.get(i, ())})
    if not producers:
        return ""
    shown = ", ".join(f"{p} {where(ctx.migration.producers[p])}" if p in ctx.migration.producers else p for p in producers)
    return f" from producer{'s' if len(producers) > 1 else ''} {shown}"


def _wheel_order(identifier: str) -> tuple[object, ...]:
    """cp38 before cp310, then the platform."""
    python, _, rest = identifier.partition("-")
    digits = "".join(c for c in python[2:].split("_")[0] if c.isdigit())
    return (python[:2], int(digits or 0), python, rest)


def _ok(release: Release, course: Course, baseline: int, stage: int) -> str:
    final, first = course.at(stage), course.at(baseline)
    if set(final) == set(first) and all(p.stage == baseline for p in final.values()):
        return (
            f"release {release.id} selects the same "
            f"{counted(len({name for _, name in first}), 'artifact name')} "
            f"as at stage {baseline}"
        )
    names = {name: {k for k in final if k[1] == name} for _, name in final}
    before = {name: {k for k in first if k[1] == name} for _, name in first}
    kept = sum(1 for name in before if name in names)
    moved = sum(1 for name in before if name in names and names[name] != before[name])
    added = len(names) - kept
    dropped = len(before) - kept
    how = f" ({moved} now from other producers)" if moved else ""
    return (
        f"release {release.id} selects the {counted(len(names), 'artifact name')} planned: "
        f"{kept} of the {len(before)} of stage {baseline} kept{how}, {added} added and {dropped} "
        f"dropped by the release_changes of {_stages(baseline + 1, stage)}"
    )


def _expectations(
    ctx: Context, release: Release, rows: list[Row], expect: tuple[str, ...]
) -> list[Finding]:
    expected = set(expect)
    found = {row.producer for row in rows}
    m = ctx.migration
    out = []
    if set(expect) != set(release.expect or ()):
        based = ctx.reference.releases[release.id]
        out.append(
            Finding(
                f"release {release.id} {where(release)} is judged by the base's expect "
                f"({', '.join(expect) or 'nothing'}; base {based.loc.at}), not "
                f"this one's "
                f"({', '.join(release.expect or ()) or 'nothing'}): change expect in a pull "
                "request of its own, before the producers.",
                release.loc,
            )
        )
    for pid in sorted(found - expected):
        producer = m.producers[pid]
        sample = next(r for r in rows if r.producer == pid)
        out.append(
            Finding(
                f"release {release.id} {where(release)} selects from producer {pid} {where(producer)}, "
                f"which is not in its expect ({', '.join(sorted(expected)) or 'nothing'}), e.g. {sample.name} "
                f"via {_glob_for(release, sample)!r}; active {ctx.cause(producer)}.",
                producer.loc,
            )
        )
    for pid in sorted(expected - found):
        if pid not in m.producers:
            out.append(
                Finding(
                    f"release {release.id} {where(release)} selects nothing from expected "
                    f"producer {pid}, which this migration no longer defines.",
                    release.loc,
                )
            )
            continue
        producer = m.producers[pid]
        state = "active" if producer in ctx.plan.producers else "off"
        out.append(
            Finding(
                f"release {release.id} {where(release)} selects nothing from expected producer {pid} "
                f"{where(producer)} ({state} {ctx.cause(producer)}).",
                release.loc,
            )
        )
    return out
