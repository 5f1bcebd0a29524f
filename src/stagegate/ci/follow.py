"""Following the files: from the uploads of a run to the publish steps of each release job.

``ci.ships`` reads what every step does (``Flows``); ``follow`` then takes, for each job of
a workflow that starts a run, the artifacts it can see (its own run's uploads that its
``needs`` wait for, or the whole run of another workflow it downloads from), what its
downloads select and where the files land, what its scripts move or remove, and which of
them its publish steps read, in order, from where they run. A job that can run for a
release and publishes is a **release job**; one whose publish step, source run or
artifact-action version cannot be read is **blind** (not compared, with the reason).
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stagegate.ci import actions, publish
from stagegate.ci.model import Workflow
from stagegate.ci.runkinds import PULL_REQUEST, RELEASE_EVENTS, job_events, workflow_events
from stagegate.ci.shipped import (
    Blind,
    Context,
    Fetch,
    Fetched,
    Finding,
    Foreign,
    Merge,
    Moving,
    Publisher,
    Release,
    Side,
    Stranded,
)
from stagegate.ci.transfers import Unresolved
from stagegate.errors import Loc
from stagegate.records import field, record


@record(kw_only=True, eq=False)
class Flows:
    """What a reading found every step do (``ci.ships.ShipReader``), as data."""

    workflows: Mapping[str, Workflow]
    contexts: Sequence[Context]
    fetches: Sequence[Fetch]
    merges: Sequence[Merge]
    publishers: Sequence[Publisher]
    moves: Sequence[Moving]
    outside: Sequence[Fetched]
    lookups: Mapping[str, set[str]]
    """``PATH#JOB`` -> the workflows whose runs its scripts look up."""
    unread: list[Unresolved]
    unread_in: dict[tuple[Loc, str], set[str]]
    unresolved: Sequence[Unresolved]
    unresolved_in: Mapping[tuple[Loc, str], set[str]]
    flow_jobs: set[str]
    runs: Mapping[str, str] = field(default_factory=dict)
    """``workflows.runs``: a release job -> the workflow file whose run it publishes."""
    run_ids: frozenset[tuple[Loc, str]] = frozenset()
    """The unresolved items that are the id of the other run a download reads."""


# --------------------------------------------------------------------------- helpers


def needs_closure(workflow: Workflow, job: str) -> set[str]:
    """The jobs ``job`` waits for, directly or not."""
    return workflow.waits(job)


def _glob_name(name: str) -> bool:
    return bool(publish.GLOB_CHARS & set(name))


def pattern_matches(pattern: str, name: str) -> bool:
    return any(
        fnmatch.fnmatchcase(name, p.replace("**", "*")) for p in publish.expand_braces(pattern)
    )


def _same_backend(a: int | None, b: int | None) -> bool:
    ba, bb = actions.backend(a), actions.backend(b)
    return ba is None or bb is None or ba == bb


def _where(loc: Loc) -> str:
    return f"{loc.file}:{loc.line}"


def runs_on(kinds: frozenset[str] | None, tag: frozenset[str] | set[str]) -> bool:
    """Whether a step (an upload) whose `if:` leaves it ``kinds`` (None: any) may run on
    one of the run kinds ``tag`` a release job runs on."""
    return kinds is None or bool(kinds & tag)


class Steps:
    """The download, publish and file-moving steps of one job, in the order they run."""

    def __init__(self) -> None:
        self.fetches: list[Fetch] = []
        self.publishers: list[Publisher] = []
        self.moves: list[Moving] = []
        self.outside: list[Fetched] = []

    def add(self, item: Fetch | Publisher | Moving | Fetched) -> None:
        if isinstance(item, Fetch):
            self.fetches.append(item)
        elif isinstance(item, Publisher):
            self.publishers.append(item)
        elif isinstance(item, Fetched):
            self.outside.append(item)
        else:
            self.moves.append(item)

    def on(self, tag: set[str]) -> Steps:
        """The steps that may run on a run of one of the kinds ``tag`` (their `if:`)."""
        out = Steps()
        out.fetches = [f for f in self.fetches if runs_on(f.kinds, tag)]
        out.publishers = [p for p in self.publishers if runs_on(p.kinds, tag)]
        out.moves = [m for m in self.moves if runs_on(m.kinds, tag)]
        out.outside = [f for f in self.outside if runs_on(f.kinds, tag)]
        return out


class Run:
    """The artifacts of one run of one workflow, and what its jobs do with them."""

    def __init__(self, flows: Flows, workflow: Workflow, contexts: list[Context]) -> None:
        self.flows = flows
        self.workflow = workflow
        self.root = workflow.file
        self.contexts = contexts

    def waits(self, top: str) -> set[str]:
        return {f"{self.root}#{n}" for n in needs_closure(self.workflow, top.partition("#")[2])}

    def visible(self, top: str | None, tag: set[str] | None = None) -> list[Context]:
        """The upload contexts a job of this run can rely on: its own and its needs'
        (``top`` None: a job of another run, which reads this run once it has ended);
        ``tag``: on a run of one of those kinds (the uploads whose `if:` may hold there)."""
        if top is None:
            return list(self.contexts)
        waits = self.waits(top) | {top}
        return [
            c for c in self.contexts if c.top in waits and (tag is None or runs_on(c.kinds, tag))
        ]

    def artifacts(
        self, top: str | None, tag: set[str] | None = None
    ) -> dict[str, list[tuple[Context, str]]]:
        """Name -> (context, folder inside the artifact) of what ``top`` can download (None:
        everything the run made; ``tag``: on a run of those kinds); merges add their
        artifact (their sources, flat or one folder each)."""
        found: dict[str, list[tuple[Context, str]]] = {}
        for ctx in self.visible(top, tag):
            found.setdefault(ctx.name, []).append((ctx, ""))
        waits = self.waits(top) if top is not None else None
        for merge in self.flows.merges:
            where = merge.caller or merge.job
            if where.partition("#")[0] != self.root or (waits is not None and where not in waits):
                continue
            merged = [
                (ctx, ctx.name if merge.separate else "")
                for ctx in self.visible(where, tag)
                if pattern_matches(merge.pattern, ctx.name)
            ]
            found.setdefault(merge.name, []).extend(merged)
        return found


def select(
    fetch: Fetch, artifacts: Mapping[str, list[tuple[Context, str]]]
) -> tuple[dict[str, list[tuple[Context, str]]], list[Context]]:
    """The artifacts a download takes (same backend), and the contexts it names but
    cannot see (the other backend). A name with a piece that cannot be evaluated is taken
    where every value of it is (``wheel-*`` takes ``wheel-${{ x }}``); where only some
    are, ``may_take`` says so."""
    names = [n for n in artifacts if meets(fetch, n) == "all"]
    taken: dict[str, list[tuple[Context, str]]] = {}
    hidden: list[Context] = []
    for name in names:
        for ctx, inner in artifacts[name]:
            if _same_backend(ctx.version, fetch.version):
                taken.setdefault(name, []).append((ctx, inner))
            else:
                hidden.append(ctx)
    return taken, hidden


def may_take(fetch: Fetch, artifacts: Mapping[str, list[tuple[Context, str]]]) -> list[Context]:
    """The contexts whose name holds a piece that cannot be evaluated and that the download
    takes for some values of it but not for others (``wheel-*`` and
    ``${{ steps.parse.outputs.name }}``): whether it takes them is not known."""
    return [
        ctx for name, items in artifacts.items() if meets(fetch, name) == "some" for ctx, _ in items
    ]


_UNKNOWN_PIECE = re.compile(r"\$\{\{.*?\}\}")
"""A piece of an upload's name that cannot be evaluated, as ``ci.transfers.shown`` writes it."""


def meets(fetch: Fetch, name: str) -> str:
    """Whether the download takes the artifact ``name`` for every value of its unknown
    pieces ("all"), for some ("some") or for none ("none"), its ``exclude`` included."""
    return _meets(fetch.kind, fetch.select, tuple(fetch.exclude), name)


@functools.lru_cache(maxsize=4096)
def _meets(kind: str, selected: str, exclude: tuple[str, ...], name: str) -> str:
    if not _UNKNOWN_PIECE.search(name):
        taken = name == selected if kind == "name" else pattern_matches(selected, name)
        return "all" if taken and not any(pattern_matches(x, name) for x in exclude) else "none"
    from stagegate.engine import globs

    pieces: list[globs.Piece] = []
    for i, text in enumerate(_UNKNOWN_PIECE.split(name)):
        if i:
            pieces.append(globs.Glob("*"))
        if text:
            pieces.append(globs.Lit(text))
    named = globs.language(pieces)

    def language(alternatives: Sequence[str], literal: bool) -> list[globs.Language]:
        return [
            globs.language([globs.Lit(a) if literal else globs.Glob(a.replace("**", "*"))])
            for a in alternatives
        ]

    wanted = language(
        [selected] if kind == "name" else publish.expand_braces(selected), kind == "name"
    )
    unwanted = language([a for x in exclude for a in publish.expand_braces(x)], False)
    if not any(globs.intersects(named, w, excluding=unwanted) for w in wanted):
        return "none"
    if not globs.intersects(named, excluding=[*wanted]) and not any(
        globs.intersects(named, u) for u in unwanted
    ):
        return "all"
    return "some"


def landed(
    fetch: Fetch, taken: Mapping[str, list[tuple[Context, str]]], *, anything: bool = False
) -> list[tuple[Context, str]]:
    """Where each taken context's files land: path globs from the workspace
    (``anything``: were its upload's ``path`` to take any files)."""
    version = fetch.version or 0
    flat = (
        fetch.kind == "name"
        or (fetch.merge and version >= actions.NEW_BACKEND)
        or (version >= actions.SINGLE_FLAT_SINCE and len(taken) == 1)
    )
    out: list[tuple[Context, str]] = []
    for name, items in taken.items():
        for ctx, inner in items:
            for file in ("**",) if anything else publish.artifact_files(ctx.path) or ("*",):
                parts = [fetch.path, *([] if flat else [name]), *([inner] if inner else []), file]
                out.append((ctx, publish.norm("/".join(parts))))
    return out


# --------------------------------------------------------------------------- another run


def workflow_named(workflows: Mapping[str, Workflow], name: str) -> str | None:
    """The workflow file ``name`` means: its path, its file name, or its ``name:`` (None:
    none, or more than one)."""
    text = name.strip().strip("'\"")
    if text in workflows:
        return text
    by_file = [rel for rel in workflows if posixpath.basename(rel) == posixpath.basename(text)]
    if len(by_file) == 1 and text.endswith((".yml", ".yaml")):
        return by_file[0]
    by_name = [rel for rel, wf in workflows.items() if _title(wf) == text]
    return by_name[0] if len(by_name) == 1 else None


def _title(workflow: Workflow) -> str | None:
    data = workflow.data
    title = data.get("name") if isinstance(data, dict) else None
    return str(title).strip() if isinstance(title, str | int | float) else None


def source_of(flows: Flows, run: Run, top: str, fetch: Fetch) -> tuple[str | None, str]:
    """The workflow whose run the other-run download ``fetch`` of ``top`` reads, and how
    it is known (or, with None, why it is not)."""
    declared = flows.runs.get(top)
    if declared is not None:
        return (declared if declared in flows.workflows else None), (
            f"workflows.runs names {declared}"
            if declared in flows.workflows
            else f"workflows.runs names {declared}, which is no workflow file read here"
        )
    if fetch.workflow:
        found = workflow_named(flows.workflows, fetch.workflow)
        return found, f"the step names workflow {fetch.workflow!r}"
    triggered = run.workflow.on.get("workflow_run")
    if "workflow_run" in fetch.run and isinstance(triggered, dict):
        listed = triggered.get("workflows")
        names = [listed] if isinstance(listed, str) else listed if isinstance(listed, list) else []
        found_all = {workflow_named(flows.workflows, str(n)) for n in names}
        if len(found_all) == 1 and None not in found_all:
            return found_all.pop(), "the workflow_run that starts it"
        return None, "the workflow_run that starts it names no one workflow read here"
    jobs = {top} | run.waits(top)
    looked = {name for job in sorted(jobs) for name in flows.lookups.get(job, ())}
    found_all = {workflow_named(flows.workflows, n) for n in looked}
    if len(found_all) == 1 and None not in found_all:
        return (
            found_all.pop(),
            f"its run id comes from `gh run list --workflow {sorted(looked)[0]}`",
        )
    why = (
        f"the run id is looked up for {', '.join(sorted(looked))}, not one workflow read here"
        if looked
        else "nothing read here says which workflow's run it is"
    )
    return None, why


# --------------------------------------------------------------------------- releases


def _blind_version(fetch: Fetch) -> Blind | None:
    if fetch.via != "action" or fetch.version is not None:
        return None
    return Blind(
        key=f"download-version {fetch.job} {fetch.select}",
        loc=fetch.loc,
        reason="the version of this download-artifact step cannot be read (pin a tag, or keep "
        "it in a `# vN` comment after a commit pin): where its files land is not known",
    )


def _blind_uploads(contexts: Iterable[Context]) -> list[Blind]:
    return [
        Blind(
            key=f"upload-version {c.file}#{c.job} {c.step}",
            loc=c.step_loc or c.loc,
            reason=f"the version of the upload-artifact step of job {c.job} cannot be read (pin "
            "a tag, or keep it in a `# vN` comment after a commit pin): which downloads see "
            "it is not known",
        )
        for c in contexts
        if c.version is None and c.path
    ]


class _Release:
    """One release job's files, followed: what reaches its publish steps."""

    def __init__(
        self, flows: Flows, run: Run, runs: Mapping[str, Run], top: str, tag: set[str]
    ) -> None:
        self.flows = flows
        self.run = run
        self.runs = runs
        self.top = top
        self.tag = tag
        """The run kinds that can carry a tag the job runs on."""
        self.blind: list[Blind] = []
        self.races: list[Blind] = []
        """Downloads of what jobs the release does not wait for make (``race``)."""
        self.foreign: list[Foreign] = []
        self.sources: set[str] = {run.root}
        self.selected: list[Context] = []
        self.unnamed: list[tuple[Fetch, Context]] = []
        """Uploads a download may take, whose names cannot be evaluated (``may_take``)."""
        self.reach: dict[str, set[tuple[Any, ...]]] = {}
        """Each publisher (its tool) -> the upload contexts that reach it."""
        self.anywhere: dict[int, list[tuple[Context, str]]] = {}
        """Each download (its order) -> where its contexts' files would land, were their
        uploads' ``path`` to take any files."""
        self.paths: set[Loc] = set()
        """The ``path:`` of the uploads whose files would reach a publish step whatever
        files they were."""

    @property
    def unnamed_contexts(self) -> list[Context]:
        return [ctx for _, ctx in self.unnamed]

    def taken(self, fetch: Fetch, findings: dict[str, Finding]) -> list[tuple[Context, str]]:
        """Where the files ``fetch`` takes land (of this run, or of the run it reads)."""
        if fetch.run == "this":
            artifacts = self.run.artifacts(self.top, self.tag)
        else:
            source, why = source_of(self.flows, self.run, self.top, fetch)
            if source is None or source not in self.runs:
                self.blind.append(
                    Blind(
                        key=f"run {fetch.loc.file} {fetch.job} {fetch.select} {fetch.run}",  # not its line
                        loc=fetch.loc,
                        reason=f"its files come from another run ({fetch.run}) and {why}; "
                        "declare it under workflows.runs",
                    )
                )
                return []
            self.sources.add(source)
            artifacts = self.runs[source].artifacts(None)
        took, hidden = select(fetch, artifacts)
        if fetch.run == "this":
            self.race(fetch, took)
        fetch_findings(fetch, self.top, hidden, findings, "release job")
        self.selected += [ctx for items in took.values() for ctx, _ in items]
        taken = {ctx.key for items in took.values() for ctx, _ in items}
        self.unnamed += [(fetch, ctx) for ctx in may_take(fetch, artifacts) if ctx.key not in taken]
        self.anywhere[fetch.order] = landed(fetch, took, anything=True)
        return landed(fetch, took)

    def race(self, fetch: Fetch, took: Mapping[str, list[tuple[Context, str]]]) -> None:
        """A blind spot where the download takes artifacts of this run that only jobs
        the release job does not wait for (``needs``) make: whether they exist when it
        runs is a race between jobs. Where nothing else reaches the release at both
        commits (MagicStack's release downloads the merge of its wheels, a job it does not
        need), what it publishes is not compared (``continuity``); else such an artifact
        is not relied on (lost where it was relied on)."""
        assert self.top is not None
        later, _ = select(fetch, self.run.artifacts(None, self.tag))
        makers = sorted(
            {
                ctx.top
                for name, items in later.items()
                if name not in took
                for ctx, _ in items
                if ctx.top not in self.run.waits(self.top) | {self.top}
            }
            | {
                merge.caller or merge.job
                for merge in self.flows.merges
                if merge.name in later and merge.name not in took
            }
        )
        if not makers:
            return
        jobs = ", ".join(m.partition("#")[2] for m in makers[:3]) + (
            " ..." if len(makers) > 3 else ""
        )
        self.races.append(
            Blind(
                key=f"race {fetch.loc.file} {fetch.job} {fetch.select}",  # not its line
                loc=fetch.loc,
                reason=f"the download {fetch.select!r} takes what job {jobs} makes, which "
                f"{self.top.partition('#')[2]} does not wait for (needs): whether it is there "
                "when the download runs is a race, so what it publishes is not compared",
            )
        )

    def reached(
        self, here: Steps, findings: dict[str, Finding]
    ) -> tuple[dict[tuple[Any, ...], Context], list[Stranded]]:
        reached: dict[tuple[Any, ...], Context] = {}
        aside: list[Stranded] = []
        for fetch in here.fetches:
            blind = _blind_version(fetch)
            if blind is not None:
                self.blind.append(blind)
            places = self.taken(fetch, findings)
            if not fetch.lands:  # a declared action: its files count as reaching publishing
                reached.update((ctx.key, ctx) for ctx, _ in places)
                for publisher in here.publishers:
                    self.reach.setdefault(publisher.tool, set()).update(c.key for c, _ in places)
                continue
            for ctx, where in places:
                meant: Publisher | None = None
                moved: tuple[str, ...] = ()  # where a script moved the files meant for it
                for publisher in here.publishers:
                    if publisher.order <= fetch.order:
                        continue  # it publishes before the files are there
                    unknown = _unknown_move(here.moves, fetch.order, publisher.order)
                    if unknown is not None:
                        self.blind.append(unknown)
                        continue
                    after = _moved(where, here.moves, fetch.order, publisher.order)
                    if any(publish.glob_meets(r, p) for r in publisher.reads for p in after):
                        reached[ctx.key] = ctx
                        self.reach.setdefault(publisher.tool, set()).add(ctx.key)
                    elif (
                        after
                        and meant is None
                        and any(
                            publish.glob_meets(r, publish.norm(f"{fetch.path}/**"))
                            for r in publisher.reads
                        )
                    ):  # still there (not removed), where the step does not read them
                        meant, moved = publisher, tuple(after) if after != [where] else ()
                if meant is not None:
                    aside.append(
                        Stranded(
                            context=ctx, fetch=fetch, lands=where, publisher=meant, moved=moved
                        )
                    )
            self._paths(fetch, here)
        self.own(here, reached)
        for fetched in here.outside:
            for publisher in here.publishers:
                after = _moved(fetched.path, here.moves, fetched.order, publisher.order)
                if fetched.order < publisher.order and any(
                    publish.glob_meets(r, p) for r in publisher.reads for p in after
                ):
                    self.foreign.append(
                        Foreign(
                            key=f"{fetched.what} {fetched.path}",
                            loc=fetched.loc,
                            what=f"{fetched.what} into {fetched.path}",
                        )
                    )
                    break
        self.blind += _blind_uploads(reached.values())
        return reached, aside

    def _paths(self, fetch: Fetch, here: Steps) -> None:
        """The uploads ``fetch`` takes whose files would reach a publish step of ``here``
        were their ``path`` to take any files: where not knowing that path matters."""
        for ctx, where in self.anywhere.get(fetch.order, ()):
            if ctx.path_loc is None or ctx.path_loc in self.paths:
                continue
            for publisher in here.publishers:
                if publisher.order <= fetch.order:
                    continue
                unknown = _unknown_move(here.moves, fetch.order, publisher.order)
                after = _moved(where, here.moves, fetch.order, publisher.order)
                if unknown is not None or any(
                    publish.glob_meets(r, p) for r in publisher.reads for p in after
                ):
                    self.paths.add(ctx.path_loc)
                    break

    def own(self, here: Steps, reached: dict[tuple[Any, ...], Context]) -> None:
        """The job's own uploads whose files a later publish step of the same matrix row
        reads where they are (a job that builds, uploads and publishes): they reach it as
        a download's would. An upload of files a download of the job brought is not one
        (those are the download's)."""
        for ctx in self.run.contexts:
            if ctx.top != self.top or not runs_on(ctx.kinds, self.tag):
                continue
            files = [publish.norm(line) for line in publish.artifact_paths(ctx.path)]
            if not files or any(
                fetch.order < ctx.order
                and any(publish.glob_meets(publish.norm(f"{fetch.path}/**"), f) for f in files)
                for fetch in here.fetches
            ):
                continue
            for publisher in here.publishers:
                if publisher.order <= ctx.order or publisher.row != (ctx.caller_row, ctx.matrix):
                    continue
                if ctx.path_loc is not None:  # a path not known: it may take what is published
                    self.paths.add(ctx.path_loc)
                after = [
                    p for f in files for p in _moved(f, here.moves, ctx.order, publisher.order)
                ]
                if any(publish.glob_meets(r, p) for r in publisher.reads for p in after):
                    reached[ctx.key] = ctx
                    self.reach.setdefault(publisher.tool, set()).add(ctx.key)


def _blind_unnamed(unnamed: Sequence[tuple[Fetch, Context]]) -> list[Blind]:
    """One blind spot per download that may take uploads whose names cannot be worked out."""
    by_fetch: dict[Loc, tuple[Fetch, list[Context]]] = {}
    for fetch, ctx in unnamed:
        by_fetch.setdefault(fetch.loc, (fetch, []))[1].append(ctx)
    out = []
    for fetch, contexts in by_fetch.values():
        steps = sorted({c.loc for c in contexts})
        jobs = sorted({c.top for c in contexts})
        more = f" and {len(jobs) - 1} more" if len(jobs) > 1 else ""
        out.append(
            Blind(
                key=f"unnamed {fetch.select}",
                loc=steps[0],
                reason=f"the download {fetch.select!r} ({_where(fetch.loc)}) may take "
                f"{len(steps)} upload step{'s' if len(steps) != 1 else ''} whose names cannot "
                f"be worked out (in {jobs[0]}{more}; the first named {contexts[0].name!r}): "
                "which files it publishes is not known",
            )
        )
    return out


def _unknown_move(moves: Sequence[Moving], after: int, before: int) -> Blind | None:
    """A move between a download and a publish step that cannot be read."""
    for move in moves:
        if move.move.unknown and after < move.order < before and move.loc is not None:
            return Blind(
                key=f"move {move.loc.file} {move.job} {move.move.sources} {move.move.dest}",  # not its line
                loc=move.loc,
                reason="a script moves the downloaded files with words stagegate cannot work "
                "out (an array, a command's output): whether they reach the publish step is "
                "not known",
            )
    return None


def _moved(place: str, moves: Sequence[Moving], after: int, before: int) -> list[str]:
    places = [place]
    for move in moves:
        if after < move.order < before:
            places = [p for here in places for p in publish.moved(here, move.move)]
    return places


def _unread_publish(flows: Flows, top: str) -> list[Blind]:
    """The steps of ``top`` stagegate does not read, any of which may publish."""
    return [
        Blind(
            key=f"publisher {what.partition('@')[0]}",  # a bump of its version: the same spot
            loc=loc,
            reason=f"its publish step is not read: {what}; declare what it publishes under "
            "workflows.publishers",
        )
        for (loc, what), jobs in sorted(flows.unread_in.items(), key=lambda kv: kv[0])
        if top in jobs and may_publish(what)
    ]


_PUBLISHING = re.compile(r"publish|release|upload|deploy|pypi|twine|artifact|push|ship", re.I)
"""What the name of a step stagegate does not read says, where it may publish: an action
or command named for publishing, releasing, uploading or deploying. Others (set-up,
caches, proxies, linters) are listed as unread only."""


def may_publish(what: str) -> bool:
    """Whether a step stagegate does not read may publish or move artifacts, by its name."""
    if what.startswith("the if: of") or known_action(what):
        return False
    return what.endswith(" publish") or bool(_PUBLISHING.search(what.partition("@")[0]))


def known_action(uses: str) -> bool:
    """An action stagegate reads (only its version was not read): not a publisher."""
    from stagegate.ci.handlers import HANDLERS

    return uses.partition("@")[0].strip().lower() in HANDLERS


def _pull_release(run: Run, kinds: set[str], here: Steps) -> set[str]:
    """``{"pull_request"}`` where the job's workflow starts on pull requests only and a
    publish step stagegate reads may run there: a pull request run is then the release
    run (the job merges and tags the release pull request, then publishes:
    ``edgedb/action-release``); else nothing. A workflow that also runs on pushes
    releases on those: a publish step only its pull request runs take is a preview."""
    if PULL_REQUEST not in kinds or workflow_events(run.workflow.data) != {PULL_REQUEST}:
        return set()
    return {PULL_REQUEST} if here.on({PULL_REQUEST}).publishers else set()


def release(
    flows: Flows,
    run: Run,
    runs: Mapping[str, Run],
    top: str,
    here: Steps,
    kinds: set[str],
    loc: Loc,
    findings: dict[str, Finding],
) -> Release | None:
    """The release job ``top`` (None: not one): what reaches its publish steps, on the runs
    that can carry a tag (its steps whose `if:` rules those out take no part)."""
    tag = kinds & RELEASE_EVENTS or _pull_release(run, kinds, here)
    if not tag:
        return None
    here = here.on(tag)
    if here.publishers and not here.fetches and not any(p.reads for p in here.publishers):
        return None  # it publishes what it builds itself (flit, pdm), or only a page
    follow = _Release(flows, run, runs, top, tag)
    declared = any(f.via == "declared" for f in here.fetches)  # it publishes what it takes
    if not here.publishers and not declared:
        unread = _unread_publish(flows, top)
        waited = any(c.top != top for c in run.visible(top, tag))
        if not unread or not (here.fetches or waited):
            return None  # it publishes nothing stagegate can see, and takes nothing
        follow.blind += unread  # a step it does not read may publish what the run made
    reached, aside = follow.reached(here, findings)
    if not reached:  # it may publish uploads whose names are not known, and nothing else
        follow.blind += _blind_unnamed(follow.unnamed)
    file, _, job_id = top.partition("#")
    flow = {top, *run.waits(top), *(c.top for c in (*follow.selected, *follow.unnamed_contexts))}
    paths = follow.paths | {c.path_loc for c in follow.unnamed_contexts if c.path_loc}
    if follow.blind or not here.publishers:  # what it ships is not followed: every path may
        paths |= {c.path_loc for c in follow.selected if c.path_loc}
    return Release(
        file=file,
        job=job_id,
        caller="",
        loc=loc,
        events=tuple(sorted(kinds)),
        contexts=tuple(sorted(reached.values())),
        publishes=bool(here.publishers),
        stranded=tuple(s for s in aside if s.context.key not in reached and not follow.blind),
        tools=tuple(sorted({p.tool for p in here.publishers})),
        blind=tuple(sorted({b.key: b for b in follow.blind}.values())),
        foreign=tuple(sorted({f.key: f for f in follow.foreign}.values())),
        sources=tuple(sorted(follow.sources)),
        flow=frozenset(flow),
        reach=tuple(
            sorted({p.tool: len(follow.reach.get(p.tool, ())) for p in here.publishers}.items())
        ),
        paths=frozenset(paths),
        races=tuple(sorted({b.key: b for b in follow.races}.values())) if not reached else (),
    )


# --------------------------------------------------------------------------- findings


def collisions(run: Run, findings: dict[str, Finding]) -> None:
    """Two upload contexts of one run making one name on the v4 backend."""
    by_name: dict[str, list[Context]] = {}
    for ctx in run.contexts:
        if ctx.version is not None and ctx.version >= actions.NEW_BACKEND and not ctx.per_row:
            by_name.setdefault(ctx.name, []).append(ctx)
    for name, contexts in sorted(by_name.items()):
        if len(contexts) < 2 or sum(c.maybe is None for c in contexts) < 2:
            _maybe_collision(run, name, contexts)
            continue
        overwrite = any(c.overwrite for c in contexts)
        kind = "upload-overwrite" if overwrite else "upload-collision"
        what = (
            "each upload deletes the one before (overwrite: true): the artifact keeps only the "
            "last one's files"
            if overwrite
            else "upload-artifact v4+ refuses the second upload of a name (409 Conflict): "
            "only one of them exists"
        )
        named = ", ".join(f"{c.label()} ({_where(c.loc)})" for c in contexts)
        findings[f"{kind} {run.root} {name}"] = Finding(
            kind=kind,
            loc=contexts[-1].loc,
            key=f"{kind} {run.root} {name}",
            message=f"{len(contexts)} upload contexts make the artifact {name!r}: {named}; {what}",
            contexts=tuple(contexts),
        )


def fetch_findings(
    fetch: Fetch, top: str, hidden: list[Context], findings: dict[str, Finding], who: str
) -> None:
    """A download's own findings: an exact name holding glob characters, a backend the
    uploads it names are not on. ``who``: "release job" or "job"."""
    job = top.partition("#")[2]

    def add(kind: str, message: str, contexts: tuple[Context, ...] = ()) -> None:
        key = f"{kind} {top} {fetch.select}"
        findings[key] = Finding(
            kind=kind, loc=fetch.loc, key=key, select=fetch.select, message=message,
            contexts=contexts,
        )  # fmt: skip

    if fetch.kind == "name" and _glob_name(fetch.select):
        add(
            "exact-name-glob",
            f"{who} {job}: download name: {fetch.select!r} is an exact name and "
            "artifact names cannot hold * or ?: it selects nothing; use pattern: (with "
            "merge-multiple: true to land the files in one folder)",
        )
    if hidden:
        named = ", ".join(sorted({f"{c.label()} ({_where(c.loc)}, v{c.version})" for c in hidden}))
        add(
            "backend-mismatch",
            f"{who} {job}: download-artifact v{fetch.version} cannot see "
            f"{fetch.select!r}, uploaded with the other artifact backend by {named} "
            "(v4+ and v1-v3 do not see each other's artifacts); it receives none of their files",
            tuple(hidden),
        )


def job_findings(run: Run, top: str, here: Steps, findings: dict[str, Finding]) -> None:
    """The download findings of a job that is not a release job (``drift`` reads every job)."""
    artifacts = run.artifacts(top)
    for fetch in here.fetches:
        if fetch.run == "this":
            fetch_findings(fetch, top, select(fetch, artifacts)[1], findings, "job")


def _maybe_collision(run: Run, name: str, contexts: list[Context]) -> None:
    """Uploads of one name whose ``if:`` cannot be evaluated: whether two of them run is
    not known, so it is reported as unresolved (never guessed), at each such ``if:``."""
    if len(contexts) < 2:
        return
    flows = run.flows
    for at in sorted({c.maybe for c in contexts if c.maybe is not None}):
        key = (at, f"the if: of an upload of {name!r}")
        if key not in flows.unread_in:
            flows.unread.append(
                Unresolved(
                    at,
                    key[1],
                    f"whether this upload of {name!r} runs in more than one of its "
                    f"{len(contexts)} contexts depends on an if: stagegate cannot evaluate "
                    "(upload-artifact v4+ refuses a second upload of a name); bind what it reads",
                )
            )
        flows.unread_in.setdefault(key, set()).update(c.top for c in contexts)


# --------------------------------------------------------------------------- the side


def follow(flows: Flows, *, every_job: bool = False) -> Side:
    """What reaches each release job's publish steps; ``every_job``: the download findings
    of every other job too."""
    findings: dict[str, Finding] = {}
    runs_on: dict[str, tuple[str, ...]] = {}
    releases: list[Release] = []
    by_root: dict[str, list[Context]] = {}
    for ctx in flows.contexts:
        by_root.setdefault(ctx.top.partition("#")[0], []).append(ctx)
    steps: dict[str, Steps] = {}
    items: list[Fetch | Publisher | Moving | Fetched] = [
        *flows.fetches, *flows.publishers, *flows.moves, *flows.outside
    ]  # fmt: skip
    for item in items:
        steps.setdefault(item.caller or item.job, Steps()).add(item)
    for group in steps.values():
        for seq in (group.fetches, group.publishers, group.moves, group.outside):
            seq.sort(key=lambda item: item.order)
    runs: dict[str, Run] = {}
    for rel in sorted(flows.workflows):
        workflow = flows.workflows[rel]
        if workflow_events(workflow.data) <= {"workflow_call"}:
            continue  # a reusable workflow: its jobs run in the callers' runs
        runs[rel] = Run(flows, workflow, by_root.get(rel, []))
    for run in runs.values():
        events = workflow_events(run.workflow.data)
        collisions(run, findings)
        for job in run.workflow.jobs.values():
            top = job.key
            kinds = job_events(events, job.condition)
            runs_on[top] = tuple(sorted(kinds))
            here = steps.get(top, Steps())
            found = release(flows, run, runs, top, here, kinds, job.loc, findings)
            if found is not None:
                releases.append(found)
            elif every_job and top in steps:
                job_findings(run, top, here, findings)
    return Side(
        releases=tuple(releases),
        findings=tuple(findings.values()),
        unresolved=tuple(
            sorted(
                {(u.loc, u.expression): u for u in [*flows.unresolved, *flows.unread]}.values(),
                key=lambda u: (u.loc, u.expression),
            )
        ),
        files=tuple(sorted(flows.workflows)),
        contexts=tuple(sorted(flows.contexts)),
        runs_on=runs_on,
        flow=frozenset(
            [c.top for c in flows.contexts]
            + [f.caller or f.job for f in flows.fetches]
            + [m.caller or m.job for m in flows.merges]
            + [p.caller or p.job for p in flows.publishers]
            + list(flows.flow_jobs)
        ),
        unread_in={k: frozenset(v) for k, v in flows.unread_in.items()},
        run_ids=flows.run_ids,
        unresolved_in={
            **{k: frozenset(v) for k, v in flows.unresolved_in.items()},
            **{k: frozenset(v) for k, v in flows.unread_in.items()},
        },
    )
