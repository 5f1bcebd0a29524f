"""The records of what ships (``ci.ships``): an upload context, a download (``Fetch``),
a merge, a publish step, a move, a finding, files that land where the publish step does
not read (``Stranded``), a release job with what reaches it, and one side of a comparison."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stagegate.ci import publish
from stagegate.ci.transfers import Unresolved
from stagegate.errors import Loc, Problem
from stagegate.records import field, record


@record(kw_only=True, order=True)
class Context:
    """One upload step's execution in one run: the upload context."""

    file: str
    job: str  # the job's id in its file
    caller: str  # PATH#JOB of the job that calls the reusable workflow ("" if none)
    matrix: tuple[tuple[str, str], ...]
    step: int  # which upload of that job and row (0, 1, ...)
    name: str
    path: str
    loc: Loc
    version: int | None
    overwrite: bool = False
    step_loc: Loc | None = field(default=None, compare=False)
    """The step's ``uses:`` (where a version bump shows in a diff)."""
    per_row: bool = field(default=False, compare=False)
    """The name holds a placeholder of a finite axis (a ``bind``) or a value that cannot
    be evaluated: it may differ from row to row, so its text says nothing about two
    contexts making one name."""
    maybe: Loc | None = field(default=None, compare=False)
    """The step's ``if:``, where it cannot be evaluated: whether it runs in this row is
    not known (``strategy.job-index == 0``), so it takes part in no collision."""
    wheels: tuple[Any, ...] = field(default=(), compare=False)
    """The wheels of the build steps before it whose output its ``path`` takes
    (``ci.wheels.model.Wheels``, one per step)."""

    path_loc: Loc | None = field(default=None, compare=False)
    """Where its ``path:`` is written (``handlers.Made.path_loc``)."""
    path_unknown: bool = field(default=False, compare=False)
    """Its ``path:`` holds a value that cannot be evaluated (listed as unresolved): which
    files it takes is not known."""
    caller_row: tuple[tuple[str, str], ...] = ()
    """The matrix row of the job that calls its reusable workflow (() if none)."""
    kinds: frozenset[str] | None = field(default=None, compare=False)
    """The run kinds that can carry a tag on which the upload may run (``Site.kinds``)."""
    order: int = field(default=0, compare=False)
    """Where the step runs among its job's steps (``Publisher.order``)."""

    @property
    def key(self) -> tuple[Any, ...]:
        """What stays the same when the artifact is renamed: where the upload runs."""
        return (self.file, self.job, self.caller, self.caller_row, self.matrix, self.step)

    @property
    def top(self) -> str:
        """The job of the run's workflow this upload runs under (the caller, if any)."""
        return self.caller or f"{self.file}#{self.job}"

    def label(self) -> str:
        pairs = (*self.caller_row, *self.matrix)
        row = ", ".join(f"{k}={v}" for k, v in pairs)
        return f"{self.job}{{{row}}}" if row else self.job


@record(kw_only=True)
class Fetch:
    """A download step: what it selects, where its files land."""

    job: str  # PATH#JOB
    caller: str
    loc: Loc
    select: str
    kind: str  # "name" or "pattern"
    path: str
    merge: bool
    version: int | None
    order: int
    lands: bool = True
    """Whether where its files land is known (not for a declared remote action)."""
    exclude: tuple[str, ...] = ()
    """Artifact names a script skips or removes after a ``gh run download`` (globs)."""
    run: str = "this"
    """"this", or the expression of the other run whose artifacts it reads."""
    workflow: str | None = None
    """The workflow whose run it reads, where the step names it (a file or a name)."""
    via: str = "action"
    """"action" (an artifact action: its major version decides where files land and
    which backend it sees), "gh" (``gh run download``) or "declared" (a remote action
    ``workflows.actions`` declares)."""
    kinds: frozenset[str] | None = None
    """The run kinds that can carry a tag on which the step may run (``Site.kinds``)."""


@record(kw_only=True)
class Merge:
    """``actions/upload-artifact/merge``: one new artifact from those ``pattern`` matches."""

    job: str
    caller: str
    loc: Loc
    name: str
    pattern: str
    separate: bool
    order: int


@record(kw_only=True)
class Publisher:
    job: str
    caller: str
    loc: Loc
    tool: str
    reads: tuple[str, ...]
    order: int
    kinds: frozenset[str] | None = None
    """The run kinds that can carry a tag on which the step may run (``Site.kinds``)."""
    row: tuple[tuple[tuple[str, str], ...], ...] = ()
    """The matrix rows it runs in: its caller's (() if none), its job's (``Context``)."""


@record(kw_only=True)
class Moving:
    job: str
    caller: str
    move: publish.Move
    order: int
    loc: Loc | None = None
    """Where the script moves them (for a move whose words cannot be read)."""
    kinds: frozenset[str] | None = None
    """The run kinds that can carry a tag on which the step may run (``Site.kinds``)."""


@record(kw_only=True)
class Fetched:
    """Files a script fetches from outside the run (``curl``, ``wget``, ``gh release
    download``) into ``path`` (a glob from the workspace)."""

    job: str
    caller: str
    loc: Loc
    what: str
    path: str
    order: int
    kinds: frozenset[str] | None = None
    """The run kinds that can carry a tag on which the step may run (``Site.kinds``)."""


@record(kw_only=True, order=True)
class Blind:
    """Why a release cannot be compared: its publish step, the run its files come from or
    the version of an artifact action on its path cannot be read. ``key`` says which blind
    spot it is at both commits (not its line)."""

    key: str
    loc: Loc
    reason: str


@record(kw_only=True, order=True)
class Foreign:
    """Files that reach a release's publish step from outside the runs stagegate follows:
    a URL, another run it cannot follow. ``key``: the same source at both commits."""

    key: str
    loc: Loc
    what: str


@record(kw_only=True)
class Finding:
    kind: str
    loc: Loc
    key: str  # what makes it the same finding at both commits
    message: str
    contexts: tuple[Context, ...] = ()
    """The upload contexts it is about (their files do not all reach the releases)."""
    select: str = ""
    """The download's name or pattern, for a finding about a download."""


@record(kw_only=True)
class Stranded:
    """An upload context a release job downloads for its publish step, whose files land
    where that step does not read them (one folder per artifact, outside its folder)."""

    context: Context
    fetch: Fetch
    lands: str
    publisher: Publisher
    moved: tuple[str, ...] = ()
    """Where a script moved the files before the publish step runs (empty: not moved)."""


@record(kw_only=True)
class Release:
    """A release job and what reaches its publish steps at one commit."""

    file: str
    job: str
    caller: str
    loc: Loc
    events: tuple[str, ...]
    contexts: tuple[Context, ...]
    publishes: bool
    stranded: tuple[Stranded, ...] = ()
    """What it downloads for its publish step that lands where the step does not read."""
    elsewhere: tuple[Loc, ...] = ()
    """Its downloads that read another run: what they take is not followed."""
    tools: tuple[str, ...] = ()
    """The publishers it runs (``pypa/gh-action-pypi-publish``, ``uv publish``, ...)."""
    blind: tuple[Blind, ...] = ()
    """Why what it ships cannot be compared (empty: it can)."""
    foreign: tuple[Foreign, ...] = ()
    """Files reaching its publish steps from outside the runs followed."""
    sources: tuple[str, ...] = ()
    """The workflows whose runs its files come from (its own, another run's)."""
    flow: frozenset[str] = frozenset()
    """The jobs (``PATH#JOB``) whose uploads, downloads or steps decide what it ships."""
    reach: tuple[tuple[str, int], ...] = ()
    """Each publisher (its tool) and how many of the upload contexts reach it: a step that
    publishes nothing where another step of the job still publishes them."""
    paths: frozenset[Loc] = field(default=frozenset(), compare=False)
    """The ``path:`` of each upload whose files would reach its publish steps, whatever
    files they were (``Context.path_loc``): where an upload path not known matters."""
    races: tuple[Blind, ...] = field(default=(), compare=False)
    """Its downloads of what only jobs it does not wait for make, where nothing else
    reaches it (``follow.race``): blind where that holds at both commits (``continuity``)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.file, self.job, self.caller)


@record(kw_only=True)
class Unreadable:
    """A workflow file that cannot be read at a commit (GitHub would refuse it, or a local
    action or called workflow it needs): the problems, each naming the commit. Its jobs
    take no part in the reading; a release of its run, or of a run it starts or calls,
    is not known."""

    file: str
    problems: tuple[Problem, ...]


@record(kw_only=True, eq=False)
class Side:
    """One commit's workflows, as far as shipping goes."""

    releases: tuple[Release, ...]
    findings: tuple[Finding, ...]
    unresolved: tuple[Unresolved, ...]
    files: tuple[str, ...]
    contexts: tuple[Context, ...] = ()
    """Every upload context read, whether it reaches a release or not."""
    runs_on: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``PATH#JOB`` of each job of a run's workflow -> the run kinds it runs on."""
    flow: frozenset[str] = frozenset()
    """The jobs of a run's workflows (``PATH#JOB``) where artifacts are uploaded,
    downloaded or published."""
    unread_in: Mapping[tuple[Loc, str], frozenset[str]] = field(default_factory=dict)
    """Each unread step (its place and ``uses:``) -> the jobs it runs in."""
    unresolved_in: Mapping[tuple[Loc, str], frozenset[str]] = field(default_factory=dict)
    """Each unresolved item (its place and expression) -> the jobs of the run it is in."""
    unreadable: tuple[Unreadable, ...] = ()
    """The workflow files that cannot be read, left out of the reading."""
    run_ids: frozenset[tuple[Loc, str]] = frozenset()
    """The unresolved items that are the id of the other run a download reads: which
    workflow's run it is, not the id, decides what it can take (``ci.follow.source_of``),
    and a release whose source workflow is not known is blind."""
