"""What a stage's own pytest tests see through the ``stagegate`` fixture.

A ``StageUnderTest`` answers the questions a release engineer asks of one stage
(which producers run, what a glob or a release picks, which producer feeds a
consumer) with the same exact name engine the checks use, so a test and a check
never disagree about a selection. Names are template rows with open axes kept
symbolic (``cuda-bindings-python312-cuda13.4.1-win-64-{sha}``).

Mistakes in a test's own questions (an unknown producer, a stage that does not
exist, a glob that cannot be parsed) raise a ``pytest.UsageError``
whose message the plugin reports without a traceback. A
question whose answer is "no" (no release claims a tag) fails the test with an
``AssertionError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NoReturn

import pytest

from stagegate.checks.release_continuity import claimants, pool
from stagegate.engine.globs import PatternError
from stagegate.engine.match import plain_selector, release_selection, selected, selections
from stagegate.engine.resolve import Plan, Row, changed_flags, resolve
from stagegate.errors import TooComplex
from stagegate.model import Consumer, Item, Migration, Producer, Release
from stagegate.model.templates import format_assignment
from stagegate.records import record, replace
from stagegate.words import suggest


def _unknown(what: str, name: str, known: Iterable[str], migration: Migration) -> NoReturn:
    choices = list(known)
    hint = suggest(name, choices) or f"; known: {', '.join(choices) or 'none'}."
    raise usage_error(f"{migration.file} declares no {what} {name!r}{hint}")


@record
class StageUnderTest:
    """One stage of a loaded migration, resolved."""

    migration: Migration
    stage: int

    def __repr__(self) -> str:
        return f"<stage {self.stage} of {self.migration.file}: {self.title}>"

    # -- the stage

    @property
    def plan(self) -> Plan:
        """The full resolution (active producers, consumers, releases), as ``plan`` shows it."""
        return resolve(self.migration, self.stage)

    @property
    def title(self) -> str:
        return self.migration.title(self.stage)

    @property
    def last(self) -> int:
        """The last stage of the migration."""
        return self.migration.last

    def at(self, stage: int) -> StageUnderTest:
        """The same migration at another stage (0..last)."""
        if not isinstance(stage, int) or not 0 <= stage <= self.migration.last:
            raise usage_error(
                f"stage {stage!r} does not exist; {self.migration.file} has stages "
                f"0..{self.migration.last}."
            )
        return replace(self, stage=stage)

    # -- flags and items

    @property
    def flags(self) -> Mapping[str, bool]:
        """Every flag's value at this stage."""
        return dict(self.plan.flags)

    def flag(self, name: str) -> bool:
        if name not in self.migration.flags:
            _unknown("flag", name, self.migration.flags, self.migration)
        return self.plan.flags[name]

    @property
    def changed(self) -> list[str]:
        """The flags whose value changes on entering this stage."""
        return changed_flags(self.migration, self.stage)

    @property
    def producers(self) -> list[str]:
        """Ids of the active producers, in declaration order."""
        return [p.id for p in self.plan.producers]

    @property
    def consumers(self) -> list[str]:
        return [c.id for c in self.plan.consumers]

    @property
    def releases(self) -> list[str]:
        return [r.id for r in self.plan.releases]

    def active(self, item: str) -> bool:
        """Whether the producer, consumer or release ``item`` is active at this stage."""
        found = self._item(item)
        return found in self.plan.items()

    # -- names

    def rows(self, producer: str) -> list[str]:
        """Every artifact name (template row) of ``producer``, active or not, in order."""
        return [row.name for row in self.plan.rows(self._producer(producer))]

    def select(self, glob: str, *, exclude: Sequence[str] = (), run: str = "this") -> list[str]:
        """The names a plain glob (minus ``exclude`` globs) selects among the active rows of
        ``run`` (default: this run), sorted; a name twice means two rows can yield it."""
        pool_rows = [r for p in self.plan.producers if p.run == run for r in self.plan.rows(p)]
        if run != "this" and all(p.run != run for p in self.migration.producers.values()):
            _unknown(
                "run",
                run,
                sorted({"this", *(p.run for p in self.migration.producers.values())}),
                self.migration,
            )
        try:
            excluded = [plain_selector(text).language for text in exclude]
            chosen = selected(plain_selector(glob), pool_rows, excluded)
        except (PatternError, TooComplex) as error:
            raise usage_error(f"glob {glob!r}: {error}") from None
        return sorted(row.name for row in chosen)

    def claimants(self, tag: str) -> list[str]:
        """Ids of the active releases whose tags match ``tag``."""
        return [r.id for r in claimants(self.plan, tag)]

    def release(self, tag: str) -> str:
        """The id of the one active release claiming ``tag``; fails the test otherwise."""
        return self._release(tag).id

    def release_selects(self, tag: str, *, built_at: int | None = None) -> list[str]:
        """The names the release claiming ``tag`` at this stage downloads from its run, sorted.

        ``built_at``: apply this stage's release to a run built at that stage instead, as
        ``tooling: control`` does when an older tag is released with today's tooling."""
        return sorted(row.name for row in self._release_rows(tag, built_at))

    def release_sources(self, tag: str, *, built_at: int | None = None) -> dict[str, list[str]]:
        """The same selection grouped by producer: producer id -> sorted names."""
        out: dict[str, list[str]] = {}
        for row in self._release_rows(tag, built_at):
            out.setdefault(row.producer, []).append(row.name)
        return {pid: sorted(names) for pid, names in sorted(out.items())}

    def feeds(self, consumer: str, input: int | str = 0) -> dict[str, list[str]]:
        """Which active producers the input's glob selects from, per row of its finite axes.

        ``input`` is the input's index in the consumer or its ``select`` text. Keys are
        the row (``py=312 platform=win-64``; ``""`` for an input without axes); values are
        the sorted producer ids the glob selects in the runs it downloads from, ``from``
        or not, so a second source shows up."""
        found = self._consumer(consumer)
        if isinstance(input, str):
            texts = [i.select.text for i in found.inputs]
            if input not in texts:
                _unknown(f"input of consumer {found.id}", input, texts, self.migration)
            item = found.inputs[texts.index(input)]
        elif isinstance(input, int) and 0 <= input < len(found.inputs):
            item = found.inputs[input]
        else:
            raise usage_error(
                f"consumer {found.id} has inputs 0..{len(found.inputs) - 1}, not {input!r}."
            )
        return {
            format_assignment(selector.assignment): sorted({r.producer for r in rows})
            for selector, rows in selections(self.plan, item)
        }

    # -- lookups

    def _item(self, name: str) -> Item:
        m = self.migration
        found: list[Item] = [t[name] for t in (m.producers, m.consumers, m.releases) if name in t]
        if not found:
            _unknown("producer, consumer or release", name, (i.id for i in m.items()), m)
        if len(found) > 1:
            kinds = " and a ".join(i.kind for i in found)
            raise usage_error(
                f"{name!r} names a {kinds} in {m.file}; ask `{name!r} in stagegate.producers` "
                "(or .consumers, .releases) instead."
            )
        return found[0]

    def _producer(self, name: str) -> Producer:
        if name not in self.migration.producers:
            _unknown("producer", name, self.migration.producers, self.migration)
        return self.migration.producers[name]

    def _consumer(self, name: str) -> Consumer:
        if name not in self.migration.consumers:
            _unknown("consumer", name, self.migration.consumers, self.migration)
        return self.migration.consumers[name]

    def _release(self, tag: str) -> Release:
        found = claimants(self.plan, tag)
        if len(found) != 1:
            listed = ", ".join(r.id for r in found) or "none"
            raise AssertionError(
                f"{len(found)} active releases claim {tag} at stage {self.stage} ({listed}); "
                "exactly one must."
            )
        return found[0]

    def _release_rows(self, tag: str, built_at: int | None) -> list[Row]:
        release = self._release(tag)
        plan = self.plan if built_at is None else self.at(built_at).plan
        return release_selection(release, pool(plan, release))


PREFIX = "stagegate fixture: "


def usage_error(message: str) -> pytest.UsageError:
    """The migration cannot be read, or a test asked about something it does not have.

    (``pytest.UsageError`` is final, so the prefix is what marks these as ours.)"""
    return pytest.UsageError(PREFIX + message)
