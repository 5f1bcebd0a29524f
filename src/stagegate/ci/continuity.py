"""`continuity --base REF [--head REF]`: what each release ships, at two commits, compared.

The workflows of each commit are read from git objects (no checkout, nothing written)
and followed with ``ci.ships``/``ci.follow``. What a release ships is compared by what it
is, not where it is made: an upload context is the artifact's name and the files its
``path`` takes, so a runner label, a reordered matrix, a renamed job or workflow file, an
upload moved into a composite action change nothing. Release jobs are paired across the
commits by file and job id, else (a renamed file or job) by what they publish with,
where that pairing is unique. A context the head no longer ships is lost, a new one
gained; a lost and a gained one that are uniquely the same upload under another name are
renamed (information). A change a ``Release-Change:`` line (or the flip's
``release_changes``) declares is accepted. A release whose flow cannot be read is blind:
listed first, not compared; a pull request that makes a read flow blind fails.
"""

from __future__ import annotations

import contextlib
import fnmatch
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import Any

from stagegate.ci import publish
from stagegate.ci.files import Files, discover
from stagegate.ci.follow import known_action, may_publish
from stagegate.ci.shipped import Blind, Context, Finding, Foreign, Release, Side, Unreadable
from stagegate.ci.ships import ships
from stagegate.ci.transfers import Unresolved
from stagegate.errors import InvalidInput, Loc, Problem
from stagegate.git.objects import GitSource
from stagegate.model import DEFAULT_WORKFLOW_PATHS, Migration, WorkflowSettings
from stagegate.records import record, replace

FAILING = frozenset({"upload-collision", "upload-overwrite", "backend-mismatch", "exact-name-glob"})
"""Findings that fail when the head has them and the base did not."""


@record(kw_only=True)
class Renamed:
    context: Context
    before: str
    after: str


@record(kw_only=True)
class Moved:
    """An upload that appears at the head (``gained``) or goes (``lost``) whose wheels are
    all shipped at the other commit by other uploads (``by``, their artifact names): the
    builds were split among uploads or merged, the files are the same (information)."""

    context: Context
    direction: str
    by: tuple[str, ...]


@record(kw_only=True)
class Acceptance:
    """A change a pull request declares: ``direction`` ("gained" or "lost") of the
    artifact names ``glob`` matches, said at ``where``; ``releases``: the release jobs
    (``FILE#JOB``) it holds for (empty: any)."""

    direction: str
    glob: str
    where: str
    releases: frozenset[str] = frozenset()

    def covers(self, direction: str, release: Release, context: Context) -> bool:
        return self.covers_name(direction, release, context.name)

    def covers_name(self, direction: str, release: Release, name: str) -> bool:
        """Whether it declares ``direction`` of ``name`` (an artifact's name, or a wheel's
        build identifier) for ``release``."""
        return (
            direction == self.direction
            and (not self.releases or f"{release.file}#{release.job}" in self.releases)
            and fnmatch.fnmatchcase(name, self.glob)
        )


@record(kw_only=True)
class Duplicate:
    """Wheels of one project that two or more upload contexts reaching one publish step
    carry: one file name twice (downloaded into one folder, one overwrites the other, or
    both tear; uploaded twice, the index refuses the second)."""

    project: str
    identifiers: tuple[str, ...]
    contexts: tuple[Context, ...]

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.project, self.identifiers, tuple(c.key for c in self.contexts))


def _naming(key: str) -> bool:
    """A build setting that reaches a wheel's file name but not its build identifier:
    the manylinux/musllinux image or policy (``manylinux_2_28_x86_64`` vs ``2_17``)."""
    return any(word in key for word in ("image", "manylinux", "compatibility"))


def duplicates(contexts: Sequence[Context]) -> tuple[Duplicate, ...]:
    """The wheels more than one of ``contexts`` carries, grouped by the contexts that carry
    them: the same build identifier of the same project (its folder) built with the same
    container images and policies (``_naming``: another makes another file name)."""
    carriers: dict[tuple[Any, ...], list[Context]] = {}
    for ctx in dict.fromkeys(contexts):
        seen: set[tuple[Any, ...]] = set()
        for wheels in ctx.wheels:
            if wheels.identifiers is None or wheels.project is None:
                continue
            project = posixpath.normpath(wheels.project.strip() or ".")
            images = wheels.naming + tuple(
                sorted((k, v.value or "") for k, v in wheels.deciders.items() if _naming(k))
            )
            for identifier in wheels.identifiers:
                key = (project, identifier, images)
                if key not in seen:
                    seen.add(key)
                    carriers.setdefault(key, []).append(ctx)
    grouped: dict[tuple[Any, ...], list[str]] = {}
    for (project, identifier, _), found in carriers.items():
        if len(found) > 1:
            grouped.setdefault((project, tuple(found)), []).append(identifier)
    return tuple(
        Duplicate(project=project, identifiers=tuple(sorted(ids)), contexts=found)
        for (project, found), ids in sorted(grouped.items(), key=lambda kv: kv[1])
    )


@record(kw_only=True)
class ReleaseChange:
    """One release job at both commits: ``before`` at the base, ``after`` at the head (None
    at a commit without it), and the upload contexts reaching its publish step that it
    lost, gained, kept under another name, or changed as a pull request declared."""

    before: Release | None
    after: Release | None
    lost: tuple[Context, ...]
    gained: tuple[Context, ...]
    renamed: tuple[Renamed, ...]
    accepted: tuple[tuple[str, Context, str], ...] = ()
    moved: tuple[Moved, ...] = ()
    """Uploads that appear or go whose wheels ship from other uploads at the other commit."""
    """(direction, context, where it was declared) of each change declared."""
    wheels: Any = None
    """What the wheels it ships lose and gain (``ci.wheels.compare.Change``; None: no
    upload reaching it is made by a build tool stagegate reads)."""
    wheels_accepted: tuple[tuple[str, str, str], ...] = ()
    """(direction, identifier, where it was declared) of each wheel change declared."""
    wheels_blind: bool = False
    """The base's wheels could be computed and the head's cannot."""
    wheels_run: str = ""
    """The run kind the wheels were computed for (``ci.runkinds``: what ``github.ref``
    and ``github.event_name`` are then): where they depend on the event, the release's
    tag run; "": the same on every run."""

    @property
    def release(self) -> Release:
        """The job at the head, else at the base: its file, name, line and events."""
        either = self.after or self.before
        assert either is not None
        return either

    @property
    def in_base(self) -> bool:
        return self.before is not None

    @property
    def in_head(self) -> bool:
        return self.after is not None

    @property
    def base(self) -> tuple[Context, ...]:
        return self.before.contexts if self.before else ()

    @property
    def head(self) -> tuple[Context, ...]:
        return self.after.contexts if self.after else ()

    @property
    def stranded(self) -> tuple[Context, ...]:
        """At the head: what its downloads take for the publish step that lands where the
        step does not read (what a lost context now shares its download with)."""
        return tuple(dict.fromkeys(s.context for s in self.after.stranded)) if self.after else ()

    @property
    def blind(self) -> tuple[Blind, ...]:
        """Why the head's release cannot be compared (empty: it can)."""
        return self.after.blind if self.after else ()

    @property
    def base_blind(self) -> tuple[Blind, ...]:
        return self.before.blind if self.before else ()

    @property
    def compared(self) -> bool:
        """Both sides read (a side without the job counts as read)."""
        return not self.blind and not self.base_blind

    @property
    def newly_blind(self) -> tuple[Blind, ...]:
        """The head's blind spots the base did not have: a flow the pull request made
        unreadable."""
        had = {b.key for b in self.base_blind}
        return tuple(b for b in self.blind if b.key not in had)

    @property
    def new_foreign(self) -> tuple[Foreign, ...]:
        """Files reaching the publish step from outside the runs followed, new at the head."""
        had = {f.key for f in self.before.foreign} if self.before else set()
        return tuple(f for f in (self.after.foreign if self.after else ()) if f.key not in had)

    @property
    def empty(self) -> bool:
        """The head's release job exists and nothing of the run reaches its publish step."""
        return self.in_head and not self.head and not self.blind

    @property
    def wheels_lost(self) -> tuple[str, ...]:
        declared = {i for d, i, _ in self.wheels_accepted if d == "lost"}
        return tuple(i for i in (self.wheels.lost if self.wheels else ()) if i not in declared)

    @property
    def wheels_gained(self) -> tuple[str, ...]:
        declared = {i for d, i, _ in self.wheels_accepted if d == "gained"}
        return tuple(i for i in (self.wheels.gained if self.wheels else ()) if i not in declared)

    @property
    def new_duplicates(self) -> tuple[Duplicate, ...]:
        """Wheels two uploads reaching the head's publish step both carry, that the base
        did not carry twice (``duplicates``; whichever uploads carried them there)."""
        had = {(d.project, i) for d in duplicates(self.base) for i in d.identifiers}
        return tuple(
            d
            for d in duplicates(self.head)
            if any((d.project, i) not in had for i in d.identifiers)
        )

    @property
    def emptied(self) -> tuple[tuple[str, int], ...]:
        """The publish steps (their tool, and how many upload contexts reached them at the
        base) that publish nothing at the head, where another step of the job still
        publishes what the run made: files landing where that step does not read them
        (aio-libs/aiohttp d54b3e2, download-artifact v4 without merge-multiple: PyPI got
        nothing, the GitHub release everything)."""
        if not (self.before and self.after and self.compared and self.head):
            return ()
        was = dict(self.before.reach)
        return tuple((t, was[t]) for t, n in self.after.reach if n == 0 and was.get(t, 0) > 0)

    @property
    def failed(self) -> bool:
        """Lost or gained a context or a wheel no one declared; one wheel from two uploads;
        selecting nothing where the base selected something, or a publish step doing so;
        a flow made unreadable; files from outside new at the head."""
        return bool(
            self.lost
            or self.gained
            or self.wheels_lost
            or self.wheels_gained
            or self.wheels_blind
            or self.new_duplicates
            or (self.empty and self.base and self.compared)
            or self.emptied
            or self.newly_blind
            or self.new_foreign
        )


@record(kw_only=True)
class Commit:
    """A commit as the user named it (``ref``) and its id."""

    ref: str
    sha: str


@record(kw_only=True, eq=False)
class Continuity:
    base: Commit
    head: Commit
    releases: tuple[ReleaseChange, ...]
    findings: tuple[Finding, ...]
    """The head's findings that the base did not have, each with its consequence."""
    resolved: tuple[Finding, ...]
    """The base's findings that the head no longer has (information)."""
    unresolved: tuple[Unresolved, ...]
    """What cannot be evaluated where artifacts flow to a release, at the head."""
    changed: dict[str, set[int]]
    """The lines the head changed since the base, per file (for annotations; none where
    no annotation is made)."""
    head_contexts: tuple[Context, ...] = ()
    """Every upload context of the head (where a lost one went, for annotations)."""
    strict: bool = False
    """Whether a blind spot already at the base fails too (``--strict``)."""
    declared: tuple[Acceptance, ...] = ()
    """The changes the pull request declares (``Release-Change:``, a flip)."""
    unreadable: tuple[Unreadable, ...] = ()
    """The workflows left out of the reading at either commit, with why (each problem
    names its commit): the same file at both, or at the base alone."""

    @property
    def ok(self) -> bool:
        return (
            not any(r.failed for r in self.releases)
            and not any(f.kind in FAILING for f in self.findings)
            and not (self.strict and (any(r.blind for r in self.releases) or self.unreadable))
        )


@record(kw_only=True, eq=False)
class Reading:
    """How a commit's workflows are read: with a migration's binds and flags at a stage
    (where the base has a migration), else as they are, with the remote actions,
    publishers and runs ``settings`` declares."""

    migration: Migration | None = None
    stage: int = 0
    settings: WorkflowSettings | None = None
    kind: str | None = None
    """For a run of this kind (``ci.runkinds``); None: any run."""

    def key(self) -> tuple[Any, ...]:
        """What the reading depends on besides the files."""
        if self.migration is not None:
            return (self.migration, self.stage, self.kind)  # the record: equal by identity
        settings = self.settings
        if settings is None:
            return ("bare", self.kind)
        return (
            "bare",
            self.kind,
            tuple(sorted(settings.actions.items(), key=lambda kv: kv[0])),
            tuple(sorted((k, v.files) for k, v in settings.publishers.items())),
            tuple(sorted(settings.runs.items())),
        )


def read_commit(
    repo: Any, commit: str, shown: str, reading: Reading | WorkflowSettings | None = None
) -> Side:
    """The release jobs of ``commit``'s workflows, read from git objects (no checkout),
    as ``reading`` says (a migration at a stage; bare settings; None: as they are). A
    commit whose files that the reading read are, object for object, those of a commit
    read before the same way is not read again: the base and the head of a pull request
    that leaves the workflows (and the scripts and files they read) alone are read once."""
    if not isinstance(reading, Reading):
        reading = Reading(settings=reading)
    source = repo.source(commit)
    rels = discover(source, DEFAULT_WORKFLOW_PATHS)
    for files_read, key, side in _READ:
        if key == reading.key() and _same_files(source, rels, files_read):
            return side
    side, ids = _read(Files(repo.root, source=source), commit, shown, reading)
    _READ.insert(0, ((tuple(rels), ids), reading.key(), side))
    del _READ[READ_KEPT:]
    return side


def _read(files: Files, commit: str, shown: str, reading: Reading) -> tuple[Side, dict[str, str]]:
    """What ships at the commit ``files`` reads, and the id of every file read. A
    workflow that cannot be read (with what it needs: a local action, a called
    workflow) is left out and named in the side's ``unreadable``, where the others can
    be read without it; else its problems stop the comparison."""

    def at(problems: Sequence[Problem]) -> tuple[Problem, ...]:
        return tuple(
            Problem(p.loc, f"at {shown} ({commit[:12]}): {p.message}", p.path) for p in problems
        )

    def read(only: Sequence[str] | None = None) -> Side:
        return ships(
            files,
            reading.settings,
            migration=reading.migration,
            stage=reading.stage,
            kind=reading.kind,
            only=only,
        )

    try:
        side = read()
    except InvalidInput as exc:
        rels = discover(files.source, DEFAULT_WORKFLOW_PATHS)
        bad: dict[str, tuple[Problem, ...]] = {}
        for rel in rels:
            try:
                read([rel])
            except InvalidInput as alone:
                bad[rel] = at(alone.problems)
        rest: Side | None = None
        with contextlib.suppress(InvalidInput):  # else the others need it too
            rest = read([rel for rel in rels if rel not in bad]) if bad else None
        if rest is None:
            raise InvalidInput(list(at(exc.problems))) from None
        side = replace(
            rest, unreadable=tuple(Unreadable(file=f, problems=p) for f, p in sorted(bad.items()))
        )
    source = files.source
    assert isinstance(source, GitSource)
    return side, {rel: _object_id(source, rel) for rel in files.raw}


_READ: list[tuple[tuple[tuple[str, ...], dict[str, str]], tuple[Any, ...], Side]] = []
"""The last commits read: the workflow files found and the id of every file the reading
read (by the source), how they were read, and what was read."""
READ_KEPT = 4


def _object_id(source: GitSource, rel: str) -> str:
    """The id of the blob at ``rel`` ("": none; a reading that found no file there must
    find none again)."""
    try:
        return source.object_id(rel)
    except (OSError, ValueError):
        return ""


def _same_files(
    source: GitSource, rels: list[str], read: tuple[tuple[str, ...], dict[str, str]]
) -> bool:
    found, ids = read
    return tuple(rels) == found and all(_object_id(source, r) == i for r, i in ids.items())


def compare(
    base: Side, head: Side, accept: Sequence[Acceptance] = ()
) -> tuple[tuple[ReleaseChange, ...], tuple[Finding, ...], tuple[Finding, ...]]:
    """The releases of both sides paired and compared; the head's new findings with
    their consequences; the base's findings gone in the head."""
    changes = [
        _change(*_raced(old, new), accept)
        for old, new in pair_releases(base.releases, head.releases)
    ]
    base_keys = {f.key for f in base.findings}
    head_keys = {f.key for f in head.findings}
    fresh = tuple(
        _with_consequence(f, head.releases) for f in head.findings if f.key not in base_keys
    )
    gone = tuple(f for f in base.findings if f.key not in head_keys)
    return tuple(changes), fresh, gone


def _raced(old: Release | None, new: Release | None) -> tuple[Release | None, Release | None]:
    """A release that takes, at both commits, only what jobs it does not wait for make
    (``Release.races``): blind at both, not compared (a silent pass otherwise)."""
    if old is None or new is None or not (old.races and new.races):
        return old, new
    from stagegate.records import replace

    return (
        replace(old, blind=tuple(sorted({*old.blind, *old.races}))),
        replace(new, blind=tuple(sorted({*new.blind, *new.races}))),
    )


def pair_releases(
    before: Sequence[Release], after: Sequence[Release]
) -> list[tuple[Release | None, Release | None]]:
    """The release jobs of both commits paired: by file and job; then, among the rest, by
    job id (a renamed workflow file), by file and publishers (a renamed job), by
    publishers alone; each pairing only where it is unique. In the order of the head,
    then what the base alone has."""
    left = list(before)
    right = list(after)
    pairs: list[tuple[Release | None, Release | None]] = []
    for key in (
        lambda r: (r.file, r.job, r.caller),
        lambda r: (r.job, r.caller, r.tools),
        lambda r: (r.file, r.tools),
        lambda r: (r.tools, r.sources == (r.file,)),
    ):
        olds: dict[Any, list[Release]] = {}
        news: dict[Any, list[Release]] = {}
        for r in left:
            olds.setdefault(key(r), []).append(r)
        for r in right:
            news.setdefault(key(r), []).append(r)
        for k, group in olds.items():
            if len(group) == 1 and len(news.get(k, ())) == 1:
                old, new = group[0], news[k][0]
                pairs.append((old, new))
                left.remove(old)
                right.remove(new)
    pairs += [(None, r) for r in right] + [(r, None) for r in left]
    order = {id(r): i for i, r in enumerate(after)}
    pairs.sort(key=lambda p: (p[1] is None, order.get(id(p[1]), 0), p[0].key if p[0] else ()))
    return pairs


def identity(ctx: Context) -> tuple[Any, ...]:
    """What an upload context puts in a release: the wheels it carries, where a build tool
    stagegate reads makes them (their build identifiers: the artifact's name is
    bookkeeping then), else the artifact's name; and the files its ``path`` takes. Not
    where it is made."""
    files = publish.artifact_files(ctx.path)
    if ctx.wheels and all(w.identifiers for w in ctx.wheels):
        return ("wheels", frozenset(_files(ctx.wheels)), files)
    return (ctx.name, files)


def _files(steps: Iterable[Any]) -> set[tuple[str, str]]:
    """The wheels ``steps`` build, each as its build identifier and the policy of the image
    it is built in (``cp312-manylinux_x86_64`` in manylinux2014 and in manylinux_2_28 are
    two files)."""
    from stagegate.ci.wheels import cibw

    return {pair for w in steps for pair in cibw.images(w) or ()}


def _match(
    was: Sequence[Context], now: Sequence[Context]
) -> tuple[list[tuple[Context, Context]], list[Context], list[Context]]:
    """The base's and the head's contexts paired by identity (as multisets: two uploads of
    one name are two), and those of each side left over."""
    left: dict[tuple[Any, ...], list[Context]] = {}
    for ctx in now:
        left.setdefault(identity(ctx), []).append(ctx)
    pairs: list[tuple[Context, Context]] = []
    lost: list[Context] = []
    for ctx in was:
        same = left.get(identity(ctx))
        if same:
            pairs.append((ctx, same.pop(0)))
        else:
            lost.append(ctx)
    gained = [c for c in now if any(c is g for rest in left.values() for g in rest)]
    return pairs, lost, gained


def _step(ctx: Context) -> tuple[Any, ...]:
    """Where an upload runs (its step, in its row) and the files its ``path`` takes."""
    return (ctx.key, publish.artifact_files(ctx.path))


_CPYTHON = re.compile(r"3\.(\d+)(?:\.\d+)?(?:[-.]?(?:a|b|rc|alpha|beta|dev)[.-]?\d*)?")
"""A CPython version as a matrix gives it to setup-python: ``3.14``, ``3.14.2``,
``3.14.0-beta.1``, ``3.14.0b1``, ``3.14-dev`` (not ``3.14t``: free-threaded is other wheels)."""


def _minor(value: str) -> str:
    """A CPython version (``_CPYTHON``) as the minor release whose ``cpXY`` wheels it
    builds; any other value as it is."""
    found = _CPYTHON.fullmatch(value)
    return f"3.{found.group(1)}" if found else value


def _interpreter(ctx: Context) -> tuple[Any, ...]:
    """Where an upload runs, its row's CPython versions taken to their minor release (a
    prerelease or patch bump, ``3.14.0-alpha.7`` -> ``3.14.0-beta.1``, builds the same
    ``cp314`` wheels), and the files its ``path`` takes."""
    row = tuple((k, _minor(v)) for k, v in ctx.matrix)
    where = (ctx.file, ctx.job, ctx.caller, ctx.caller_row, row, ctx.step)
    return (*where, publish.artifact_files(ctx.path))


def _reaching(ctx: Context) -> tuple[Any, ...]:
    """What a renamed upload keeps: the matrix values its name holds, and its files."""
    values = tuple(sorted(v for _k, v in ctx.matrix if v and v in ctx.name))
    return (values, publish.artifact_files(ctx.path))


def _unknown_files(lost: list[Context], gained: list[Context]) -> None:
    """Takes out of ``lost`` and ``gained`` each pair of uploads of one name in one place
    (its only one on either side) whose files are not known at one commit at least."""

    def place(ctx: Context) -> tuple[Any, ...]:
        return (ctx.key, ctx.name)

    for old in list(lost):
        olds = [c for c in lost if place(c) == place(old)]
        news = [c for c in gained if place(c) == place(old)]
        if len(olds) == 1 and len(news) == 1 and (old.path_unknown or news[0].path_unknown):
            lost.remove(old)
            gained.remove(news[0])


def _renames(
    lost: list[Context], gained: list[Context]
) -> tuple[list[Context], list[Context], list[Renamed]]:
    """Lost and gained contexts that are uniquely one upload under another name: the same
    upload step in the same row taking the same files, else in a row whose CPython
    versions are the same minor release, else the same matrix values in the name and the
    same files. An upload whose ``path`` now takes other files ships other
    files, whatever its name: lost and gained. An upload whose ``path`` cannot be evaluated at
    one commit (listed as unresolved) is still the upload of its name in its place, where
    each side has one: which files it takes is not known, so no loss is claimed."""
    renamed: list[Renamed] = []
    _unknown_files(lost, gained)
    for key in (_step, _interpreter, _reaching):
        olds: dict[Any, list[Context]] = {}
        news: dict[Any, list[Context]] = {}
        for c in lost:
            olds.setdefault(key(c), []).append(c)
        for c in gained:
            news.setdefault(key(c), []).append(c)
        for k, group in olds.items():
            if len(group) == 1 and len(news.get(k, ())) == 1:
                old, new = group[0], news[k][0]
                if old.name != new.name:  # else the same upload, its wheels changed
                    renamed.append(Renamed(context=new, before=old.name, after=new.name))
                lost.remove(old)
                gained.remove(new)
    return lost, gained, renamed


def _change(
    old: Release | None, new: Release | None, accept: Sequence[Acceptance] = ()
) -> ReleaseChange:
    if (old is not None and old.blind) or (new is not None and new.blind):
        return ReleaseChange(before=old, after=new, lost=(), gained=(), renamed=())
    was = list(old.contexts) if old else []
    now = list(new.contexts) if new else []
    pairs, missing, extra = _match(was, now)
    lost, gained, renamed = _renames(missing, extra)
    moved = _moved(lost, "lost", now) + _moved(gained, "gained", was)
    lost, gained = _reshuffled(lost, was, now), _reshuffled(gained, now, was)
    renamed = [
        Renamed(context=new_ctx, before=old_ctx.name, after=new_ctx.name)
        for old_ctx, new_ctx in pairs
        if old_ctx.name != new_ctx.name  # the same wheels under another name
    ] + renamed
    release = new or old
    assert release is not None
    accepted: list[tuple[str, Context, str]] = []
    for direction, contexts in (("lost", lost), ("gained", gained)):
        for ctx in list(contexts):
            said = next((a for a in accept if a.covers(direction, release, ctx)), None)
            if said is not None:
                contexts.remove(ctx)
                accepted.append((direction, ctx, said.where))
    wheels = _wheels(was, now)
    wheels_accepted: list[tuple[str, str, str]] = []
    carried = {  # the wheels of an upload whose loss or gain is accepted are too
        (direction, i): where
        for direction, ctx, where in accepted
        for w in ctx.wheels
        for i in w.identifiers or ()
    }
    for direction, ids in (
        ("lost", wheels.lost if wheels else ()),
        ("gained", wheels.gained if wheels else ()),
    ):
        for identifier in ids:
            said = next((a for a in accept if a.covers_name(direction, release, identifier)), None)
            where = said.where if said is not None else carried.get((direction, identifier))
            if where is not None:
                wheels_accepted.append((direction, identifier, where))
    return ReleaseChange(
        before=old,
        after=new,
        lost=tuple(lost),
        gained=tuple(gained),
        renamed=tuple(renamed),
        accepted=tuple(accepted),
        wheels=wheels,
        wheels_accepted=tuple(wheels_accepted),
        wheels_blind=wheels is not None and _newly_uncomputed(was, now, pairs),
        moved=tuple(moved),
    )


def _computed(contexts: Sequence[Context]) -> bool:
    return all(w.identifiers is not None for c in contexts for w in c.wheels)


def _newly_uncomputed(
    was: Sequence[Context], now: Sequence[Context], pairs: Sequence[tuple[Context, Context]]
) -> bool:
    """The release's wheels were computed at the base and are not at the head, or an
    upload whose wheels were computed at the base is not computed at the head (paired by
    identity, or the same step and name: its wheels changed); the rest of the release may
    have been unknown at both, the upload still became unreadable."""
    if _computed(was) and not _computed(now):
        return True
    named: dict[str, list[Context]] = {}
    for ctx in now:
        named.setdefault(ctx.name, []).append(ctx)
    same = [*pairs, *((o, n) for o in was for n in named.get(o.name, ()) if o.key == n.key)]
    return any(o.wheels and _computed((o,)) and not _computed((n,)) for o, n in same)


def _identifiers(contexts: Iterable[Context]) -> set[tuple[str, str]]:
    return _files(w for c in contexts for w in c.wheels)


def _reshuffled(
    contexts: list[Context], side: Sequence[Context], other: Sequence[Context]
) -> list[Context]:
    """``contexts`` (lost or gained, of ``side``) but those that carry computed wheels all of
    which the ``other`` side ships too: which job builds a wheel is not what ships. An
    upload whose build selects no wheel at all is not one (cibuildwheel stops on an empty
    selection, failing the job the release needs)."""
    if not any(c.wheels for c in contexts):
        return contexts
    shipped = _identifiers(c for c in other if _computed((c,)))
    return [
        c
        for c in contexts
        if not (c.wheels and _computed((c,)) and set() < _identifiers((c,)) <= shipped)
    ]


def _moved(contexts: Sequence[Context], direction: str, other: Sequence[Context]) -> list[Moved]:
    """The ``contexts`` (lost or gained) that ``_reshuffled`` takes out, each with the
    uploads of the ``other`` commit that ship its wheels."""
    kept = _reshuffled(list(contexts), (), other)
    out: list[Moved] = []
    for ctx in contexts:
        if any(ctx is k for k in kept):
            continue
        mine = _identifiers((ctx,))
        by = sorted({c.name for c in other if _computed((c,)) and _identifiers((c,)) & mine})
        out.append(Moved(context=ctx, direction=direction, by=tuple(by)))
    return out


def _wheels(was: Sequence[Context], now: Sequence[Context]) -> Any:
    """What the wheels of a release's contexts lose and gain (None: no context carries a
    build tool's wheels): each base context paired with the head context of its identity
    or place; what ships the same wheels from another context is no change."""
    if not any(c.wheels for c in (*was, *now)):
        return None
    from stagegate.ci.wheels import compare as wheels_compare

    pairs, lost, gained = _match(was, now)
    by_place = {c.key: c for c in gained}
    found: list[tuple[Sequence[Any], Sequence[Any]]] = [
        (b.wheels, h.wheels)
        for b, h in pairs
        if _computed((b, h)) or b.wheels != h.wheels  # the same unknown wheels: no change
    ]
    for ctx in lost:
        other = by_place.pop(ctx.key, None)
        found.append((ctx.wheels, other.wheels if other is not None else ()))
    found += [((), ctx.wheels) for ctx in by_place.values()]
    return wheels_compare.release(found)


def _with_consequence(finding: Finding, releases: tuple[Release, ...]) -> Finding:
    """The finding, saying what it does to each release whose publish step it reaches."""
    if not finding.contexts:
        return finding
    keys = {c.key for c in finding.contexts}
    said: list[str] = []
    for release in releases:
        mine = [c for c in release.contexts if c.key in keys]
        total = len(release.contexts)
        if finding.kind in ("upload-collision", "upload-overwrite") and len(mine) > 1:
            said.append(
                f"release job {release.job} ({release.file}) would ship {total - len(mine) + 1} of "
                f"its {total} upload contexts (one of {', '.join(c.label() for c in mine)})"
            )
    if finding.kind == "backend-mismatch":
        return finding
    if not said:
        return finding
    from stagegate.records import replace

    return replace(finding, message=f"{finding.message}; {'; '.join(said)}")


def continuity(
    repo: Any,
    refs: tuple[str, str | None],
    readings: tuple[Reading, Reading] = (Reading(), Reading()),
    *,
    accept: Sequence[Acceptance] = (),
    strict: bool = False,
    annotate: bool = True,
) -> Continuity:
    """Compare what the release jobs ship at the base and the head (``refs``: as the user
    named them; the head None: HEAD), each commit read as its ``readings`` says; the
    changes ``accept`` declares are accepted; ``strict``: a blind spot the base already
    had fails too; ``annotate``: with the lines the head changed (``git diff``), which
    only annotations are placed on."""
    base_ref, head_ref = refs
    base = repo.resolve(base_ref)
    head = repo.resolve(head_ref or "HEAD")
    base_reading, head_reading = readings
    base_side = read_commit(repo, base, base_ref, base_reading)
    head_side = read_commit(repo, head, head_ref or "HEAD", head_reading)
    was = {u.file for u in base_side.unreadable}
    broken = [p for u in head_side.unreadable if u.file not in was for p in u.problems]
    if broken:  # the pull request makes a workflow unreadable: fix it first
        raise InvalidInput(broken)
    releases, new, gone = compare(base_side, head_side, accept)
    releases = _wheels_of_runs(repo, (base, head), refs, readings, releases, accept)
    changed = {
        file: lines
        for file, lines in (repo.changed_lines(base, head) if annotate else {}).items()
        if file.startswith(".github/")
    }
    return Continuity(
        base=Commit(ref=base_ref, sha=base),
        head=Commit(ref=head_ref or "HEAD", sha=head),
        releases=releases,
        findings=new,
        resolved=gone,
        unresolved=_flowing(head_side, releases),
        changed=changed,
        head_contexts=head_side.contexts,
        strict=strict,
        declared=tuple(accept),
        unreadable=(*base_side.unreadable, *head_side.unreadable),
    )


TAG_RUNS = ("push-tag", "release", "workflow_dispatch", "create", "workflow_run", "pull_request")
"""The run kinds a release's wheels are computed for, where they depend on the event:
the first the release runs on."""


def _wheels_of_runs(
    repo: Any,
    commits: tuple[str, str],
    refs: tuple[str, str | None],
    readings: tuple[Reading, Reading],
    releases: tuple[ReleaseChange, ...],
    accept: Sequence[Acceptance],
) -> tuple[ReleaseChange, ...]:
    """Each release whose wheels could not be computed on any run, compared as its tag
    run (``TAG_RUNS``) ships, where that run knows what the wheels depend on
    (``CIBW_SKIP: ${{ startsWith(github.ref, 'refs/tags/') && ... }}``): its uploads
    are then told apart by the wheels they carry. Both commits are read again for that
    run, once per kind."""
    wanted: dict[str, list[int]] = {}
    for i, change in enumerate(releases):
        kind = next((k for k in TAG_RUNS if k in change.release.events), None)
        if kind is None or change.wheels is None:
            continue
        if not (_computed(change.base) and _computed(change.head)):
            wanted.setdefault(kind, []).append(i)
    out = list(releases)
    for kind, indices in wanted.items():
        sides = [
            read_commit(repo, sha, shown, replace(reading, kind=kind))
            for sha, shown, reading in zip(
                commits, (refs[0], refs[1] or "HEAD"), readings, strict=True
            )
        ]
        again = {_pair_key(c): c for c in compare(sides[0], sides[1], accept)[0]}
        for i in indices:
            found = again.get(_pair_key(releases[i]))
            if found is None or _uncomputed(found) >= _uncomputed(releases[i]):
                continue  # that run leaves them as unknown
            out[i] = replace(found, wheels_run=kind)
    return tuple(out)


def _uncomputed(change: ReleaseChange) -> int:
    """How many of the release's upload contexts, at either commit, carry wheels whose
    identifiers are not known."""
    return sum(1 for c in (*change.base, *change.head) if not _computed((c,)))


def _pair_key(change: ReleaseChange) -> tuple[Any, ...]:
    return (
        change.before.key if change.before else None,
        change.after.key if change.after else None,
    )


def _flowing(side: Side, releases: Sequence[ReleaseChange]) -> tuple[Unresolved, ...]:
    """The side's unresolved items in the jobs whose files flow to a release of the head,
    but the ids of the other runs downloads read: what such a download takes is the
    artifacts of the workflow its run is of (``ci.follow.source_of``), or the release is
    blind and says so; and but an upload's ``path`` whose files would reach no release's
    publish step whatever files they were (a test artifact a release downloads and skips,
    or none downloads): not knowing it changes nothing that ships."""
    flow: set[str] = set()
    paths: set[Loc] = set()
    for change in releases:
        if change.after is not None:
            flow |= change.after.flow
            paths |= change.after.paths
    uploads = {c.path_loc for c in side.contexts if c.path_loc is not None}
    return tuple(
        u
        for u in side.unresolved
        if side.unresolved_in.get((u.loc, u.expression), frozenset()) & flow
        and (u.loc, u.expression) not in side.run_ids
        and (u.loc not in uploads or u.loc in paths)
        and (
            not _ACTION.fullmatch(u.expression)
            or known_action(u.expression)
            or may_publish(u.expression)
        )
    )


_ACTION = re.compile(r"[\w.-]+/[\w./-]+@\S+")
"""An unresolved item that is a remote action stagegate does not read: listed where its
name says it may move or publish files (``ci.follow.may_publish``); a cache, a set-up, a
linter in a build job is not what decides what ships."""


# --------------------------------------------------------------------------- declared changes

_LINE = re.compile(r"^\s*release-change\s*:(?P<rest>.*)$", re.IGNORECASE)


def acceptances(text: str, file: str, shown: str | None = None) -> list[Acceptance]:
    """The ``Release-Change: gained GLOB`` / ``lost GLOB`` lines of ``text`` (a file, or a
    pull request's description: ``shown`` names it in messages); InvalidInput at the line
    of one that says neither."""
    found: list[Acceptance] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LINE.match(line)
        if match is None:
            continue
        words = match.group("rest").replace(",", " ").split()
        where = f"{shown or file}, line {number}" if shown else f"{file}:{number}"
        if len(words) < 2 or words[0].lower() not in ("gained", "lost"):
            column = match.start("rest") + 2
            problems.append(
                Problem(
                    Loc(file, number, column),
                    f"{shown + ': ' if shown else ''}a Release-Change line says "
                    "'gained GLOB' or 'lost GLOB' (GLOB over artifact names or wheel build "
                    f"identifiers, e.g. 'Release-Change: gained wheels-*-cp314'); "
                    f"this one says {match.group('rest').strip()[:80]!r}",
                )
            )
            continue
        direction = words[0].lower()
        found += [Acceptance(direction=direction, glob=g, where=where) for g in words[1:]]
    if problems:
        raise InvalidInput(problems)
    return found
