"""Stage -> flag values -> active producers (with artifact rows), consumers, releases.

Pure functions of the model; nothing here reads files or prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from stagegate.model import (
    Consumer,
    Input,
    Item,
    Migration,
    Producer,
    Release,
    ReleaseChange,
    Template,
)
from stagegate.model.expr import Expr
from stagegate.model.templates import (
    Assignment,
    Axis,
    Part,
    Placeholder,
    format_assignment,
    render,
)
from stagegate.records import record


def flag_values(migration: Migration, stage: int) -> dict[str, bool]:
    """Each flag's ``default``, then the ``set`` of stages 1..stage in order."""
    values = {name: flag.default for name, flag in migration.flags.items()}
    for definition in migration.stages[:stage]:
        values.update(definition.set)
    return values


@lru_cache(maxsize=64)
def flag_table(migration: Migration) -> tuple[Mapping[str, bool], ...]:
    """Flag values at every stage 0..last."""
    return tuple(flag_values(migration, s) for s in range(migration.last + 1))


def since(migration: Migration, when: Expr, stage: int) -> int:
    """The first stage of the unbroken run of stages, ending at ``stage``, with the same value."""
    table = flag_table(migration)
    value = when.evaluate(table[stage])
    start = stage
    while start > 0 and when.evaluate(table[start - 1]) == value:
        start -= 1
    return start


def retired_at(migration: Migration, when: Expr) -> int | None:
    """The stage from which ``when`` is false at every later stage; None if never retired.

    An item false at every stage from 0 on was never part of the migration and is not
    counted as retired (None)."""
    table = flag_table(migration)
    start = migration.last + 1
    while start > 0 and not when.evaluate(table[start - 1]):
        start -= 1
    if start > migration.last or start == 0:
        return None
    return start


def changed_flags(migration: Migration, stage: int) -> list[str]:
    """Flags whose value changes when entering ``stage`` (from stage - 1)."""
    if stage <= 0:
        return []
    table = flag_table(migration)
    return [name for name in migration.flags if table[stage][name] != table[stage - 1][name]]


def cause(migration: Migration, item: Item, stage: int) -> str:
    """Why ``item`` is in its state at ``stage``: 'since stage 3 (flag-a)'."""
    start = since(migration, item.when, stage)
    if start == 0:
        return "since stage 0"
    relevant = [f for f in changed_flags(migration, start) if f in item.when.names()]
    return f"since stage {start}" + (f" ({', '.join(relevant)})" if relevant else "")


if TYPE_CHECKING:  # the glob engine is imported only where rows are built
    from stagegate.engine.globs import Piece


@record
class Row:
    """One concrete combination of a template's finite axes; open axes stay symbolic."""

    producer: str
    template: Template
    assignment: Assignment
    name: str
    pieces: tuple[Piece, ...]

    def describe(self) -> str:
        shown = format_assignment(self.assignment)
        return f"{self.name}" + (f" ({shown})" if shown else "")


def _pieces(
    parts: Sequence[Part], assignment: Mapping[str, str], axes: Mapping[str, Axis], *, glob: bool
) -> tuple[Piece, ...]:
    from stagegate.engine.globs import Glob, Lit, Rx

    out: list[Piece] = []
    for part in parts:
        if isinstance(part, Placeholder):
            axis = axes[part.axis]
            out.append(Rx(axis.pattern or "") if axis.is_open else Lit(assignment[part.axis]))
        else:
            out.append(Glob(part) if glob else Lit(part))
    return tuple(out)


def name_pieces(
    parts: Sequence[Part], assignment: Mapping[str, str], axes: Mapping[str, Axis]
) -> tuple[Piece, ...]:
    """The language of an artifact name: literals, finite values, open-axis regexes."""
    return _pieces(parts, assignment, axes, glob=False)


def glob_pieces(
    parts: Sequence[Part], assignment: Mapping[str, str], axes: Mapping[str, Axis]
) -> tuple[Piece, ...]:
    """The language of a glob: its text is glob syntax, inserted axis values are literal."""
    return _pieces(parts, assignment, axes, glob=True)


def item_axes(migration: Migration, item: Producer | Consumer | Input) -> Mapping[str, Axis]:
    """The axes an item's templates or selects expand over: the migration's, with the
    finite ones the item narrows or replaces (``axes: {py: [...]}``) taken from the item."""
    if not item.axes:
        return migration.axes
    return {**migration.axes, **{axis.name: axis for axis in item.axes}}


@lru_cache(maxsize=4096)
def _rows(migration: Migration, producer: Producer) -> tuple[Row, ...]:
    rows = []
    axes = item_axes(migration, producer)
    for template in producer.artifacts:
        for assignment in template.assignments(axes):
            values = dict(assignment)
            rows.append(
                Row(
                    producer=producer.id,
                    template=template,
                    assignment=assignment,
                    name=render(template.parts, values),
                    pieces=name_pieces(template.parts, values, axes),
                )
            )
    return tuple(rows)


def rows(migration: Migration, producer: Producer) -> tuple[Row, ...]:
    """Every artifact row of ``producer`` (independent of the stage)."""
    return _rows(migration, producer)


@record(eq=False)
class Plan:
    """What is active at one stage."""

    migration: Migration
    stage: int
    flags: Mapping[str, bool]
    producers: tuple[Producer, ...]
    consumers: tuple[Consumer, ...]
    releases: tuple[Release, ...]

    def rows(self, producer: Producer | str) -> tuple[Row, ...]:
        item = self.migration.producers[producer] if isinstance(producer, str) else producer
        return rows(self.migration, item)

    def items(self) -> list[Item]:
        """Every active producer, consumer and release."""
        return [*self.producers, *self.consumers, *self.releases]


@lru_cache(maxsize=256)
def resolve(migration: Migration, stage: int) -> Plan:
    """The plan of ``stage`` (0..last)."""
    flags = flag_table(migration)[stage]
    return Plan(
        migration=migration,
        stage=stage,
        flags=flags,
        producers=tuple(p for p in migration.producers.values() if p.when.evaluate(flags)),
        consumers=tuple(c for c in migration.consumers.values() if c.when.evaluate(flags)),
        releases=tuple(r for r in migration.releases.values() if r.when.evaluate(flags)),
    )


@record
class Change:
    """What turns on and off between two stages."""

    a: int
    b: int
    flags: tuple[tuple[str, bool, bool], ...]
    on: tuple[Item, ...]
    off: tuple[Item, ...]
    names_added: tuple[str, ...]
    names_removed: tuple[str, ...]
    release_changes: tuple[PlannedChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.flags or self.on or self.off or self.release_changes)


@record
class PlannedChange:
    """A stage's declared ``release_changes`` entry, as a move across it shows it.

    ``undone``: the move goes back across the stage (a rollback), so its adds leave the
    release's selection and its drops return."""

    stage: int
    change: ReleaseChange
    releases: tuple[str, ...]  # the active releases claiming its tag at that stage
    undone: bool = False

    def describe(self) -> str:
        claimed = ", ".join(self.releases) or "no active release"
        parts = [f"+ {g.text}" for g in self.change.add] + [f"- {g.text}" for g in self.change.drop]
        parts += [f"+ wheels {g}" for g in self.change.wheels_add]
        parts += [f"- wheels {g}" for g in self.change.wheels_drop]
        if self.undone:
            parts = [("- " if p.startswith("+") else "+ ") + p[2:] for p in parts]
        verb = "undoes" if self.undone else "changes"
        return (
            f"stage {self.stage} {verb} release {claimed} ({self.change.tag}): {', '.join(parts)}"
        )


def planned_changes(migration: Migration, a: int, b: int) -> tuple[PlannedChange, ...]:
    """The release_changes a move from stage ``a`` to ``b`` crosses, in the order crossed."""
    forward = b >= a
    crossed = range(a + 1, b + 1) if forward else range(a, b, -1)
    out = []
    for number in crossed:
        definition = migration.stage_def(number)
        if definition is None:
            continue
        plan = resolve(migration, number)
        for change in definition.release_changes:
            claiming = tuple(r.id for r in plan.releases if tag_claimed(r, change.tag))
            out.append(PlannedChange(number, change, claiming, undone=not forward))
    return tuple(out)


def _templates(plan: Plan) -> set[str]:
    return {t.text for p in plan.producers for t in p.artifacts}


def diff(migration: Migration, a: int, b: int) -> Change:
    before, after = resolve(migration, a), resolve(migration, b)
    flags = tuple(
        (name, before.flags[name], after.flags[name])
        for name in migration.flags
        if before.flags[name] != after.flags[name]
    )
    old = {(i.kind, i.id) for i in before.items()}
    new = {(i.kind, i.id) for i in after.items()}
    items = migration.items()
    on = tuple(i for i in items if (i.kind, i.id) in new - old)
    off = tuple(i for i in items if (i.kind, i.id) in old - new)
    t_before, t_after = _templates(before), _templates(after)
    return Change(
        a=a,
        b=b,
        flags=flags,
        on=on,
        off=off,
        names_added=tuple(sorted(t_after - t_before)),
        names_removed=tuple(sorted(t_before - t_after)),
        release_changes=planned_changes(migration, a, b),
    )


def tag_claimed(release: Release, tag: str) -> bool:
    """Whether a concrete tag matches one of the release's tag globs."""
    return _claims(release.tags, tag)


@lru_cache(maxsize=1 << 16)
def _claims(tags: tuple[str, ...], tag: str) -> bool:
    from stagegate.engine.globs import Glob, language, matches  # only where a tag is asked

    return any(matches(language((Glob(t),)), tag) for t in tags)
