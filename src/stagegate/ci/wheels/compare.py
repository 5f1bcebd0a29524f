"""Two commits' wheels for one upload context: what is lost and gained, and which setting
did it.

The identifiers of a context are those of the build steps whose wheels it uploads. A
change is put down to the deciders (``Wheels.deciders``) whose values differ between the
commits: each one's old value is put back alone, and what that restores is its doing
("CIBW_SKIP at .github/workflows/wheels.yml:31"). What no single setting restores is put
down to all of them together. A setting moved to another line with the same value, a
runner label or a cibuildwheel release that builds the same identifiers: no change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stagegate.ci.transfers import Unresolved
from stagegate.ci.wheels.model import CIBUILDWHEEL, Setting, Wheels
from stagegate.errors import Loc
from stagegate.records import record


@record(kw_only=True)
class Cause:
    """The settings whose new values account for some of a change."""

    settings: tuple[Setting, ...]
    lost: tuple[str, ...]
    gained: tuple[str, ...]
    steps: str = ""
    """Where no setting differs: what happened to the build steps themselves."""

    @property
    def label(self) -> str:
        return ", ".join(s.label for s in self.settings) if self.settings else self.steps


@record(kw_only=True)
class Change:
    """What an upload context's wheels lose and gain from base to head."""

    lost: tuple[str, ...]
    gained: tuple[str, ...]
    causes: tuple[Cause, ...]
    unresolved: tuple[Unresolved, ...] = ()
    """Where base or head cannot be computed (then nothing is compared)."""

    @property
    def changed(self) -> bool:
        return bool(self.lost or self.gained)


def identifiers(steps: Sequence[Wheels]) -> frozenset[str] | None:
    """What ``steps`` build (None: not known); a step the tool stops on builds nothing."""
    out: set[str] = set()
    for wheels in steps:
        if wheels.identifiers is None and not wheels.stopped:
            return None
        out |= wheels.identifiers or frozenset()
    return frozenset(out)


def _resolve(kind: str, found: Mapping[str, Setting], tool: bool) -> frozenset[str] | None:
    if kind == CIBUILDWHEEL:
        from stagegate.ci.wheels import cibw
        from stagegate.ci.wheels import tool as installed

        return cibw.resolve(found, ask=installed.select if tool else None).identifiers
    from stagegate.ci.wheels import maturin

    return maturin.resolve(found).identifiers


def _differs(a: Setting | None, b: Setting | None) -> bool:
    if a is None or b is None:
        return a is not b
    return (a.value, a.why) != (b.value, b.why)


def _causes(
    base: Wheels, head: Wheels, lost: set[str], gained: set[str], tool: bool
) -> list[Cause]:
    """Each changed decider's share of ``lost``/``gained`` (sets are narrowed in place)."""
    keys = sorted(
        k
        for k in base.deciders.keys() | head.deciders.keys()
        if _differs(base.deciders.get(k), head.deciders.get(k))
    )
    causes: list[Cause] = []
    before, after = base.identifiers or frozenset(), head.identifiers or frozenset()
    for key in keys:
        trial = dict(head.deciders)
        if key in base.deciders:
            trial[key] = base.deciders[key]
        else:
            del trial[key]
        ids = _resolve(head.tool, trial, tool)
        if ids is None:
            continue
        back = {i for i in lost if i in ids and i in before}
        undone = {i for i in gained if i not in ids and i in after}
        if back or undone:
            setting = head.deciders.get(key) or base.deciders[key]
            causes.append(
                Cause(
                    settings=(setting,),
                    lost=tuple(sorted(back, key=_order)),
                    gained=tuple(sorted(undone, key=_order)),
                )
            )
    for cause in causes:
        lost.difference_update(cause.lost)
        gained.difference_update(cause.gained)
    return causes


def compare(base: Sequence[Wheels], head: Sequence[Wheels], *, tool: bool = True) -> Change:
    """The change of one upload context's wheels; ``base``/``head``: its build steps at
    each commit, in order (empty where it has none)."""
    problems = tuple(
        w.unresolved for w in (*base, *head) if w.unresolved is not None and not w.stopped
    )
    before, after = identifiers(base), identifiers(head)
    if before is None or after is None:
        return Change(lost=(), gained=(), causes=(), unresolved=problems)
    lost, gained = set(before - after), set(after - before)
    all_lost, all_gained = tuple(sorted(lost, key=_order)), tuple(sorted(gained, key=_order))
    stops = _stops(base, head)
    if stops and (lost or gained):  # the tool stops on a setting: its step builds nothing
        cause = Cause(settings=(), lost=all_lost, gained=all_gained, steps=stops)
        return Change(lost=all_lost, gained=all_gained, causes=(cause,))
    causes: list[Cause] = []
    if (lost or gained) and len(base) == len(head):
        for b, h in zip(base, head, strict=True):
            if b.tool == h.tool:
                causes += _causes(b, h, lost, gained, tool)
    if lost or gained:
        together = (
            tuple(
                h.deciders.get(k) or b.deciders[k]
                for b, h in zip(base, head, strict=False)
                for k in sorted(b.deciders.keys() | h.deciders.keys())
                if _differs(b.deciders.get(k), h.deciders.get(k))
            )
            if len(base) == len(head)
            else ()
        )
        causes.append(
            Cause(
                settings=together,
                lost=tuple(sorted(lost, key=_order)),
                gained=tuple(sorted(gained, key=_order)),
                steps=_steps(base, head),
            )
        )
    return Change(lost=all_lost, gained=all_gained, causes=tuple(causes))


def _stops(base: Sequence[Wheels], head: Sequence[Wheels]) -> str:
    """Why the steps the tool stops on build nothing ("" where none does)."""
    return "; ".join(
        f"{'at the base, ' if side == 'base' else ''}{w.unresolved.reason} at {w.unresolved.loc.at}"
        for side, steps in (("base", base), ("head", head))
        for w in steps
        if w.stopped and w.unresolved is not None
    )


def _steps(base: Sequence[Wheels], head: Sequence[Wheels]) -> str:
    if not base:
        return "built by " + ", ".join(f"the step at {w.step.at}" for w in head)
    if not head:
        return "no step builds them (was " + ", ".join(f"{w.step.at}" for w in base) + ")"
    return f"{len(base)} build steps before, {len(head)} now ({', '.join(w.step.at for w in head)})"


def bound(steps: Sequence[Wheels]) -> frozenset[str] | None:
    """Every identifier ``steps`` may build: those computed, and for a cibuildwheel step
    whose runner is not known, what it selects on any machine (None: no bound)."""
    from stagegate.ci.wheels import cibw

    out: set[str] = set()
    for wheels in steps:
        if wheels.identifiers is not None or wheels.stopped:
            out |= wheels.identifiers or frozenset()
            continue
        found = cibw.possible(wheels.deciders) if wheels.tool == CIBUILDWHEEL else None
        if found is None:
            return None
        out |= found
    return frozenset(out)


def _sides(steps: Sequence[Wheels], known: set[str], most: set[str] | None) -> set[str] | None:
    """Adds what ``steps`` surely build to ``known`` and what they may build to ``most``
    (None from then on: anything)."""
    for wheels in steps:
        known |= wheels.identifiers or set()
    if most is None:
        return None
    may = bound(steps)
    return None if may is None else most | may


def release(
    pairs: Sequence[tuple[Sequence[Wheels], Sequence[Wheels]]], *, tool: bool = True
) -> Change:
    """The change of what a release ships: the identifiers of every upload context that
    reaches it, base against head (``pairs``: each context's build steps at both commits,
    paired as continuity pairs the contexts; a context at one commit only has ``[]`` at the
    other). A wheel built by another context than before is no change; each identifier
    lost or gained is put down to the causes the contexts that lost or gained it give.
    Where some steps cannot be computed, a wheel is lost only where it is surely built at
    the base and cannot be at the head (and gained the other way round), the steps not
    computed listed as unresolved."""
    before: set[str] = set()
    after: set[str] = set()
    before_most: set[str] | None = set()
    after_most: set[str] | None = set()
    problems: list[Unresolved] = []
    changes: list[Change] = []
    for base, head in pairs:
        change = compare(base, head, tool=tool)
        problems += change.unresolved
        before_most = _sides(base, before, before_most)
        after_most = _sides(head, after, after_most)
        changes.append(change)
    if problems and (before_most is None or after_most is None):
        return Change(lost=(), gained=(), causes=(), unresolved=tuple(problems))
    lost = before - (after_most if after_most is not None else after)
    gained = after - (before_most if before_most is not None else before)
    causes: dict[str, tuple[set[str], set[str], Cause]] = {}
    for change in changes:
        for cause in change.causes:
            mine = causes.setdefault(cause.label, (set(), set(), cause))
            mine[0].update(i for i in cause.lost if i in lost)
            mine[1].update(i for i in cause.gained if i in gained)
    told = {i for lo, ga, _ in causes.values() for i in (*lo, *ga)}
    if (lost | gained) - told:  # from contexts whose other side is not computed
        steps = "no step can build them at the other commit; the steps not computed cannot either"
        causes[steps] = (
            lost - told,
            gained - told,
            Cause(settings=(), lost=(), gained=(), steps=steps),
        )
    return Change(
        lost=tuple(sorted(lost, key=_order)),
        gained=tuple(sorted(gained, key=_order)),
        causes=tuple(
            Cause(
                settings=c.settings,
                lost=tuple(sorted(lo, key=_order)),
                gained=tuple(sorted(ga, key=_order)),
                steps=c.steps,
            )
            for lo, ga, c in causes.values()
            if lo or ga
        ),
        unresolved=tuple(problems),
    )


def _order(identifier: str) -> tuple[Any, ...]:
    """cp38 before cp310, then the platform tag."""
    python, _, platform = identifier.partition("-")
    digits = "".join(c for c in python[2:] if c.isdigit())
    return (python[:2], int(digits or 0), python, platform)


def describe(change: Change) -> list[str]:
    """``loses cp38-manylinux_x86_64, cp38-win_amd64 (CIBW_SKIP at wheels.yml:31)``."""
    lines: list[str] = []
    for cause in change.causes:
        for verb, ids in (("loses", cause.lost), ("gains", cause.gained)):
            if ids:
                lines.append(f"{verb} {', '.join(sorted(ids, key=_order))} ({cause.label})")
    return lines


def as_json(change: Change) -> dict[str, Any]:
    """``{lost, gained, causes: [{settings: [{name, file, line}], lost, gained}], unresolved}``."""

    def where(loc: Loc) -> dict[str, Any]:
        return {"file": loc.file, "line": loc.line}

    return {
        "lost": list(change.lost),
        "gained": list(change.gained),
        "causes": [
            {
                "settings": [{"name": s.name, **where(s.loc)} for s in cause.settings],
                "lost": list(cause.lost),
                "gained": list(cause.gained),
            }
            for cause in change.causes
        ],
        "unresolved": [
            {**where(u.loc), "expression": u.expression, "reason": u.reason}
            for u in change.unresolved
        ],
    }
