"""Readings of a script remembered across the contexts it runs in.

A step's script is read once per matrix row and per caller, and most of those readings
ask the same questions and get the same answers. What a reading asks of its context is
few things: a bind (``Host.bound``), the step's environment (``Scope.env_value``), what
an earlier step wrote to ``$GITHUB_ENV`` (``Host.env_writers``); ``Inputs`` records
each question and its answer, in order. The walk is a function of those answers (and
of the rendered text, the site's ``runs`` and the repository's files, which are part
of the key or fixed for a reading), so a later reading that gets the same answers, in
the same order, to the same questions would walk alike: its ``Outcome`` is replayed,
its transfers made again for the new site (job, callers, whether it runs). Answers
are compared strictly (a matrix value tagged for ``init`` is not the same text
untagged)."""

from __future__ import annotations

import weakref
from typing import Any

from stagegate.ci.scopes import Host, Scope
from stagegate.ci.transfers import Site, Transfer
from stagegate.model.ghexpr import Value
from stagegate.records import replace

MAX_KEYS = 512
MAX_OUTCOMES = 16
"""Readings remembered per script and place (one per set of answers, e.g. per row)."""

Question = tuple[Any, ...]


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same kind: a tagged matrix value is not its untagged text."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if a is NotImplemented or b is NotImplemented:
        return a is b
    return bool(a == b) and getattr(a, "axis", None) == getattr(b, "axis", None)


class Inputs:
    """The reading's questions to its context, answered and recorded in order."""

    def __init__(self, host: Host, scope: Scope) -> None:
        self.host = host
        self.scope = scope
        self.asked: list[tuple[Question, Any]] = []
        self.written: list[tuple[str, str]] = []
        """What the reading told ``Host.env_writers``, in order."""

    def answer(self, question: Question) -> Any:
        kind = question[0]
        if kind == "bound":
            _kind, path, scoped, bare = question
            return self.host.bound(path, self.scope, scoped=scoped, bare=bare)
        if kind == "env":
            return self.scope.env_value(question[1])
        return self.host.env_writers.get(question[1])

    def ask(self, question: Question) -> Any:
        found = self.answer(question)
        self.asked.append((question, found))
        return found

    def bound(self, path: str, *, scoped: bool = True, bare: bool = True) -> Value:
        return self.ask(("bound", path, scoped, bare))

    def env(self, name: str) -> Value:
        return self.ask(("env", name))

    def writer(self, name: str) -> str | None:
        found: str | None = self.ask(("writer", name))
        return found

    def write(self, name: str, reason: str) -> None:
        self.host.env_writers[name] = reason
        self.written.append((name, reason))

    def still(self, asked: list[tuple[Question, Any]]) -> bool:
        """Whether each recorded question gets the same answer here, in order."""
        return all(same(self.answer(question), found) for question, found in asked)


class Outcome:
    """What one reading did, to be replayed: its effects, pending downloads, writes and
    outputs, and what it told ``Host.env_writers``."""

    __slots__ = ("asked", "effects", "outputs", "pending", "writes", "written")

    def __init__(
        self,
        asked: list[tuple[Question, Any]],
        effects: list[tuple[Any, ...]],
        pending: list[Transfer],
        writes: dict[str, Value],
        outputs: dict[str, Value],
        written: list[tuple[str, str]],
    ) -> None:
        self.asked = asked
        self.effects = effects
        self.pending = pending
        self.writes = writes
        self.outputs = outputs
        self.written = written


_MEMOS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], list[Outcome]]] = (
    weakref.WeakKeyDictionary()
)
"""Per reading's files (``Host.files``): a script's key -> its remembered outcomes."""


def recall(host: Host, key: tuple[Any, ...], inputs: Inputs) -> Outcome | None:
    """A remembered outcome of ``key`` whose questions get the same answers here."""
    for outcome in reversed(_MEMOS.get(host.files, {}).get(key, ())):
        if inputs.still(outcome.asked):
            return outcome
    return None


def remember(host: Host, key: tuple[Any, ...], outcome: Outcome) -> None:
    memos = _MEMOS.setdefault(host.files, {})
    found = memos.get(key)
    if found is None:
        if len(memos) >= MAX_KEYS:
            memos.pop(next(iter(memos)))
        found = memos[key] = []
    if len(found) >= MAX_OUTCOMES:
        found.pop(0)
    found.append(outcome)


def moved(transfer: Transfer, site: Site) -> Transfer:
    """A transfer a reading at another site made, as ``site`` makes it."""
    return replace(transfer, job=site.job, callers=site.callers, active=site.runs, off=site.why)


def replay(host: Host, site: Site, outcome: Outcome, *, notes: bool = True) -> None:
    """Tell the reading what a remembered reading did, as this site does it."""
    for name, reason in outcome.written:
        host.env_writers[name] = reason
    for effect in outcome.effects:
        deliver(host, site, effect, notes=notes, again=True)
    for transfer in outcome.pending:
        host.add(moved(transfer, site))


def deliver(
    host: Host, site: Site, effect: tuple[Any, ...], *, notes: bool = True, again: bool = False
) -> None:
    """Tell the reading one effect of a reading at ``site`` (``again``: of a remembered
    reading, its transfers made as this site makes them); ``notes``: the unknown values
    it noted too."""
    kind = effect[0]
    if kind == "add":
        host.add(moved(effect[1], site) if again else effect[1])
    elif kind == "files":
        fetch = effect[3]
        if again and fetch is not None:
            fetch = moved(fetch, site)
        host.on_files(site, effect[1], list(effect[2]), fetch, effect[4])
    elif kind == "command":
        host.on_command(site, effect[1:])
    elif kind == "stopped":
        host.stopped(site, effect[1], effect[2])
    elif notes:
        host.note_unresolved(effect[1], effect[2])


# --------------------------------------------------------------------------- called scripts


class Call:
    """What reading a repository script as a child process did to the caller's state:
    the questions it asked, the effects, pending downloads, env and output writes it
    added, what it told ``Host.env_writers``, whether it used the downloads."""

    __slots__ = ("asked", "effects", "outputs", "pending", "used", "writes", "written")

    def __init__(
        self,
        asked: list[tuple[Question, Any]],
        effects: list[tuple[Any, ...]],
        pending: list[tuple[Transfer, str | None]],
        writes: dict[str, Value],
        outputs: dict[str, Value],
        written: list[tuple[str, str]],
        used: bool,
    ) -> None:
        self.asked = asked
        self.effects = effects
        self.pending = pending
        self.writes = writes
        self.outputs = outputs
        self.written = written
        self.used = used


_CALLS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], list[Call]]] = (
    weakref.WeakKeyDictionary()
)


def strict(values: Any) -> tuple[Any, ...]:
    """Values as a key that tells a tagged matrix value from its untagged text."""
    return tuple((type(v).__name__, v, getattr(v, "axis", None)) for v in values)


def recall_call(host: Host, key: tuple[Any, ...], inputs: Inputs) -> Call | None:
    for call in reversed(_CALLS.get(host.files, {}).get(key, ())):
        if inputs.still(call.asked):
            return call
    return None


def remember_call(host: Host, key: tuple[Any, ...], call: Call) -> None:
    calls = _CALLS.setdefault(host.files, {})
    found = calls.get(key)
    if found is None:
        if len(calls) >= MAX_KEYS:
            calls.pop(next(iter(calls)))
        found = calls[key] = []
    if len(found) >= MAX_OUTCOMES:
        found.pop(0)
    found.append(call)


def changed(before: dict[str, Value], after: dict[str, Value]) -> dict[str, Value] | None:
    """What ``after`` sets that ``before`` did not have alike; None where it lost a name."""
    if any(name not in after for name in before):
        return None
    return {k: v for k, v in after.items() if k not in before or not same(before[k], v)}
