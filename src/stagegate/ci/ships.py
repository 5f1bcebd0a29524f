"""What ships: the upload contexts whose files reach each release job's publish step.

``ShipReader`` is the workflow reader with the artifact and publish actions' semantics
(``ci.actions``): for every upload it keeps the **context** (file, job, caller, matrix row,
step) with the name, ``path``, major version and ``overwrite``; for every download its
selection, destination and ``merge-multiple``; for every publish step the files it reads.
``ships`` then follows the files of one run: which uploads a release job can see (its
``needs``), which its downloads select (exact ``name:``, ``pattern:``, the backend), where
they land, what ``mv``/``cp`` do, and which of them its publish steps read.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stagegate.ci import actions, publish
from stagegate.ci.files import Files, as_mapping, discover, nothing_found
from stagegate.ci.runkinds import RELEASE_EVENTS, job_events, workflow_events
from stagegate.ci.scopes import Scope
from stagegate.ci.shipped import (
    Context,
    Fetch,
    Finding,
    Merge,
    Moving,
    Publisher,
    Release,
    Side,
    Stranded,
)
from stagegate.ci.transfers import PAGES, Reading, Site, Transfer, Unresolved, shown, waited_for
from stagegate.ci.workflows import Reader, reading_of
from stagegate.errors import Loc
from stagegate.load.yamlsrc import Document
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import DEFAULT_WORKFLOW_PATHS, ActionSpec, Migration, WorkflowSettings
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value, to_text, truth, unknowns
from stagegate.records import replace

# --------------------------------------------------------------------------- reading


def _row(matrix: Value) -> tuple[tuple[str, str], ...]:
    if isinstance(matrix, dict):
        return tuple(
            (
                str(k),
                to_text(v) if not isinstance(v, dict | list) else json.dumps(v, sort_keys=True),
            )
            for k, v in matrix.items()
        )
    if isinstance(matrix, Unknown):
        return (("?", matrix.expression),)
    return ()


_SCRIPT_WORDS = re.compile(r"\b(gh|twine|maturin|mv|cp)\b")
_OTHER_PUBLISHERS = re.compile(r"\b(uv|poetry|hatch|flit|pdm|npm|cargo)\s+publish\b")
"""Publish commands whose files are not read: listed as unread where they run."""
"""A script without one of these words publishes and moves nothing ``read_script`` reads."""


class ShipReader(Reader):
    """The reader, keeping what the artifact and publish steps do in each context."""

    def __init__(self, migration: Migration, files: Files, stage: int = 0) -> None:
        super().__init__(migration, stage, files)
        self.contexts: list[Context] = []
        self.dispatched_contexts: set[Context] = set()
        self.fetches: list[Fetch] = []
        self.merges: list[Merge] = []
        self.publishers: list[Publisher] = []
        self.moves: list[Moving] = []
        self.unread: list[Unresolved] = []
        self.unread_in: dict[tuple[Loc, str], set[str]] = {}
        """Where each unread step runs: the jobs of the run (``PATH#JOB``) it is in."""
        self.values: dict[tuple[Loc, str], Unresolved] = {}
        """The action inputs (``path``, ``overwrite``, ...) that cannot be evaluated."""
        self.counts: dict[tuple[Any, ...], int] = {}
        self.order = 0
        self._memo_scope: Scope | None = None
        self.flow_jobs: set[str] = set()
        """Jobs where artifacts flow that no artifact step shows (an unread publisher)."""
        self._memo: dict[tuple[Any, ...], Value] = {}
        self.elsewhere: dict[str, set[Loc]] = {}
        """``PATH#JOB`` -> its downloads from another run (by run id), not followed."""
        self.script_files: list[tuple[int, Loc, list[Value], Transfer | None]] = []
        """What the scripts of the step being read download and move (``on_files``), in
        order: made ``Fetch``/``Moving`` once the step's working directory is known."""

    def interpolate(
        self, text: str, scope: Scope, doc: Document, path: DocPath, *, condition: bool
    ) -> Value:
        """As the reader's, remembered for the step ``on_uses`` reads: the reader evaluates
        the artifact step's ``with:`` values again after it (a value at one place, in one
        scope, is the same each time)."""
        if scope is not self._memo_scope:
            return super().interpolate(text, scope, doc, path, condition=condition)
        key = (doc.file, path, text, condition)
        found = self._memo.get(key, self)
        if found is self:
            found = self._memo[key] = super().interpolate(
                text, scope, doc, path, condition=condition
            )
        return found

    def _text(self, scope: Scope, given: Mapping[str, Any], path: DocPath, key: str) -> str:
        if key not in given:
            return ""
        at = (*path, "with", key)
        value = scope.evaluate(given[key], at)
        for part in unknowns(value):
            where = (scope.doc.loc(at), part.expression)
            self.values.setdefault(where, Unresolved(where[0], part.expression, part.reason))
        return shown(value) if not isinstance(value, bool | int | float) else to_text(value)

    def _version(self, site: Site, path: DocPath, uses: str) -> int | None:
        loc = site.doc.loc((*path, "uses"))
        lines = self.files.texts.get(site.doc.file, [])
        line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
        found = actions.major(uses, line)
        if found is None:
            self._unread(
                site,
                loc,
                uses,
                "the major version of this action is not in its ref (pin a tag, or keep "
                "the tag in a `# vN` comment after a commit pin)",
            )
        return found

    def _declared(
        self, site: Site, path: DocPath, step: Mapping[str, Any], spec: ActionSpec, scope: Scope
    ) -> None:
        """A remote action ``workflows.actions`` declares: its uploads and downloads, each
        text evaluated with the step's ``with:`` as ``inputs``. Where its files come from
        and land is not known: its downloads count as reaching the publish steps."""
        doc = site.doc
        given = as_mapping(doc, (*path, "with"), step.get("with"), "with")
        inputs = {str(k): scope.evaluate(v, (*path, "with", k)) for k, v in given.items()}
        inner = Scope(self, doc, inputs=inputs, env=scope.env, in_action=True)
        loc = doc.loc((*path, "uses"))
        caller = site.callers[0] if site.callers else ""
        for i, text in enumerate(spec.uploads):
            value = self.expression_bind(f"{spec.uses} uploads {i}", text, inner)
            self.add(site.transfer("upload", loc, value))
            if site.runs:
                self._context(
                    site, scope, name=shown(value), path="", loc=loc, version=None, step_loc=loc
                )
        for i, text in enumerate(spec.downloads):
            value = self.expression_bind(f"{spec.uses} downloads {i}", text, inner)
            kind = "pattern" if publish.GLOB_CHARS & set(shown(value)) else "name"
            self.add(site.transfer("download", loc, value, kind))
            if site.runs:
                self.order += 1
                self.fetches.append(
                    Fetch(
                        job=site.job,
                        caller=caller,
                        loc=loc,
                        select=shown(value),
                        kind=kind,
                        path=".",
                        merge=True,
                        version=None,
                        order=self.order,
                        lands=False,
                    )
                )

    def _context(self, site: Site, scope: Scope, **fields: Any) -> None:
        """An upload context of the step at ``site``, in the matrix row of ``scope``."""
        caller = site.callers[0] if site.callers else ""
        row = _row(scope.matrix)
        count_key = (site.job, caller, row, self.current_dispatch)
        step_no = self.counts.get(count_key, 0)
        self.counts[count_key] = step_no + 1
        file, _, job = site.job.partition("#")
        context = Context(file=file, job=job, caller=caller, matrix=row, step=step_no, **fields)
        if self.current_dispatch:  # each dispatch context is a run: one upload is one context
            if context in self.dispatched_contexts:
                return
            self.dispatched_contexts.add(context)
        self.contexts.append(context)

    def _per_row(self, scope: Scope, given: Mapping[str, Any], path: DocPath) -> bool:
        """Whether the upload's name holds a placeholder of a finite axis, or a value that
        cannot be evaluated (which may differ from row to row too)."""
        if "name" not in given:
            return False
        value = scope.evaluate(given["name"], (*path, "with", "name"))
        parts = value.parts if isinstance(value, Sym) else (value,)
        axes = self.migration.axes
        return any(
            isinstance(p, Unknown)
            or (isinstance(p, Ph) and p.axis in axes and not axes[p.axis].is_open)
            for p in parts
        )

    def _maybe(self, scope: Scope, step: Mapping[str, Any], path: DocPath) -> Loc | None:
        """The step's ``if:`` where it cannot be evaluated (None: none, or decided)."""
        raw = step.get("if")
        if raw is None or isinstance(raw, bool):
            return None
        value = scope.evaluate(str(raw), (*path, "if"), condition=True)
        return scope.doc.loc((*path, "if")) if truth(value) is None else None

    def _unread(self, site: Site, loc: Loc, uses: str, reason: str) -> None:
        """A step whose effect on the artifacts is not read, where it runs."""
        key = (loc, uses)
        if key not in self.unread_in:
            self.unread.append(Unresolved(loc, uses, reason))
        self.unread_in.setdefault(key, set()).add(site.callers[0] if site.callers else site.job)

    def on_uses(
        self, site: Site, path: DocPath, step: Mapping[str, Any], uses: str, scope: Scope
    ) -> None:
        self._memo_scope, self._memo = scope, {}
        declared = self.migration.workflows.actions.get(uses.strip().lower())
        if declared is not None:
            self._declared(site, path, step, declared, scope)
            return
        if not site.runs:
            return
        doc = site.doc
        given = as_mapping(doc, (*path, "with"), step.get("with"), "with")
        name = actions.action_of(uses)
        loc = doc.loc((*path, "uses"))
        caller = site.callers[0] if site.callers else ""
        self.order += 1
        if name == actions.UPLOAD:
            version = self._version(site, path, uses)
            upload_path = self._text(scope, given, path, "path")
            artifact = self._text(scope, given, path, "name") or "artifact"
            archive = self._text(scope, given, path, "archive").lower()
            if (
                version is not None
                and version >= actions.ARCHIVE_OPTION_SINCE
                and archive == "false"
            ):
                files = publish.artifact_files(upload_path)
                artifact = files[0].rsplit("/", 1)[-1] if len(files) == 1 else artifact
            self._context(
                site,
                scope,
                name=artifact,
                path=upload_path,
                loc=doc.loc((*path, "with", "name")) if "name" in given else loc,
                version=version,
                overwrite=self._text(scope, given, path, "overwrite").lower() == "true",
                step_loc=loc,
                maybe=self._maybe(scope, step, path),
                per_row=self._per_row(scope, given, path),
            )
        elif name == actions.MERGE:
            self.merges.append(
                Merge(
                    job=site.job,
                    caller=caller,
                    loc=loc,
                    name=self._text(scope, given, path, "name") or "merged-artifacts",
                    pattern=self._text(scope, given, path, "pattern") or "*",
                    separate=self._text(scope, given, path, "separate-directories").lower()
                    == "true",
                    order=self.order,
                )
            )
        elif name == actions.DOWNLOAD:
            version = self._version(site, path, uses)
            if "run-id" in given:
                self.elsewhere.setdefault(caller or site.job, set()).add(loc)
            if "run-id" in given or "artifact-ids" in given:
                return  # another run's artifacts, or by id: not this run's files by name
            selected = self._text(scope, given, path, "name")
            kind = "name" if "name" in given else "pattern"
            if kind == "pattern":
                selected = self._text(scope, given, path, "pattern") or "*"
            self.fetches.append(
                Fetch(
                    job=site.job,
                    caller=caller,
                    loc=doc.loc((*path, "with", kind)) if kind in given or kind == "name" else loc,
                    select=selected,
                    kind=kind,
                    path=publish.norm(self._text(scope, given, path, "path") or "."),
                    merge=self._text(scope, given, path, "merge-multiple").lower() == "true",
                    version=version,
                    order=self.order,
                )
            )
        elif name == actions.PYPI:
            folder = self._text(scope, given, path, "packages-dir") or self._text(
                scope, given, path, "packages_dir"
            )
            self._publisher(
                site, loc, "pypa/gh-action-pypi-publish", (publish.norm(f"{folder or 'dist'}/*"),)
            )
        elif name == actions.GH_RELEASE:
            base = self._text(scope, given, path, "working_directory") or "."
            globs = publish.split_files(self._text(scope, given, path, "files"))
            self._publisher(
                site,
                loc,
                "softprops/action-gh-release",
                tuple(publish.norm(f, base) for f in globs),
            )
        elif name == actions.MATURIN:
            if self._text(scope, given, path, "command") == "upload":
                found = publish.read_script(
                    "maturin upload " + self._text(scope, given, path, "args"), "."
                )
                for command in found:
                    if isinstance(command, publish.Command):
                        self._publisher(site, loc, "maturin upload", command.reads)
        elif name == PAGES:
            pages = self._version(site, path, uses)  # v3 on upload-artifact v4, v1-v2 on v3
            self._context(
                site,
                scope,
                name=self._text(scope, given, path, "name") or "github-pages",
                path=self._text(scope, given, path, "path") or "_site/",
                loc=doc.loc((*path, "with", "name")) if "name" in given else loc,
                version=None if pages is None else actions.NEW_BACKEND if pages >= 3 else 3,
                overwrite=False,
                step_loc=loc,
                maybe=self._maybe(scope, step, path),
                per_row=self._per_row(scope, given, path),
            )
        elif not uses.startswith(("./", "docker://")) and not actions.inert(name):
            self._unread(
                site,
                loc,
                uses,
                "a remote action stagegate does not know: what it uploads, downloads or "
                "publishes is not read",
            )

    def _publisher(self, site: Site, loc: Loc, tool: str, reads: tuple[str, ...]) -> None:
        self.publishers.append(
            Publisher(
                job=site.job,
                caller=site.callers[0] if site.callers else "",
                loc=loc,
                tool=tool,
                reads=reads,
                order=self.order,
            )
        )

    def on_files(self, site: Site, loc: Loc, words: list[Value], fetch: Transfer | None) -> None:
        if site.runs:
            self.order += 1
            self.script_files.append((self.order, loc, words, fetch))

    def add(self, transfer: Transfer) -> None:
        """As the reader's; a script's pattern download comes here at the script's end
        with what it skips or removes (``exclude``), which its ``Fetch`` takes."""
        super().add(transfer)
        if transfer.direction == "download" and transfer.exclude:
            bare = replace(transfer, exclude=())
            for i, (order, loc, words, fetch) in enumerate(self.script_files):
                if fetch == bare:
                    self.script_files[i] = (order, loc, words, transfer)

    def _script_files(self, site: Site, base: str) -> bool:
        """The downloads and moves the step's scripts make (whether there were any)."""
        found, self.script_files = self.script_files, []
        caller = site.callers[0] if site.callers else ""
        for order, loc, words, fetch in found:
            texts = [shown(w) for w in words]
            lost = [u for w in words for u in unknowns(w)]
            fetched = any(f.job == site.job and f.caller == caller for f in self.fetches)
            for u in lost if fetch is not None or fetched else ():  # a move of fetched files
                self.values.setdefault((loc, u.expression), Unresolved(loc, u.expression, u.reason))
            if fetch is None:
                move = None if lost else publish.move_of(texts, base)
                if move is not None:
                    self.moves.append(Moving(job=site.job, caller=caller, move=move, order=order))
                continue
            if fetch.run != "this":
                self.elsewhere.setdefault(caller or site.job, set()).add(loc)
            if fetch.run != "this" or lost or not fetch.resolved:
                continue  # another run's artifacts, or a folder not known: unresolved
            self.fetches.append(
                Fetch(
                    job=site.job,
                    caller=caller,
                    loc=loc,
                    select=fetch.text(),
                    kind="pattern" if texts[1] else "name",
                    path=publish.norm(texts[0], base),
                    merge=False,
                    version=None,
                    order=order,
                    exclude=tuple(shown(x) for x in fetch.exclude),
                )
            )
        return bool(found)

    def on_run(self, site: Site, path: DocPath, step: Mapping[str, Any], scope: Scope) -> None:
        base = step.get("working-directory")
        base = publish.norm(base) if isinstance(base, str) else "."
        shell_read = self._script_files(site, base)
        others, script = _script_of(step["run"])
        if site.runs:
            for other in others:
                self._unread(
                    site,
                    site.doc.loc((*path, "run")),
                    f"{other} publish",
                    "a publish command stagegate does not read: which files it publishes is "
                    "not known",
                )
                self.flow_jobs.add(site.callers[0] if site.callers else site.job)
        if not site.runs or script is None:
            return
        self.order += 1
        value = scope.evaluate(script, (*path, "run"))
        caller = site.callers[0] if site.callers else ""
        loc = site.doc.loc((*path, "run"))
        for found in publish.read_script(shown(value), base):
            if isinstance(found, publish.Command):
                self._publisher(site, loc, found.tool, found.reads)
            elif not shell_read:  # else the shell reader saw its moves, values and all
                self.moves.append(Moving(job=site.job, caller=caller, move=found, order=self.order))


@functools.lru_cache(maxsize=4096)
def _script_of(run: str) -> tuple[tuple[str, ...], str | None]:
    """The publish commands of a ``run:`` script that are not read (sorted), and its lines
    that ``read_script`` may read (None: none); once per script text, which a step has
    in each context it runs in."""
    others = tuple(sorted(set(_OTHER_PUBLISHERS.findall(run))))
    if not _SCRIPT_WORDS.search(run):
        return others, None
    lines = re.sub(r"\\\n", " ", run).splitlines()
    return others, "\n".join(line for line in lines if _SCRIPT_WORDS.search(line))


# --------------------------------------------------------------------------- following the files


def _needs(jobs: Mapping[str, Any], job: str) -> set[str]:
    """The jobs ``job`` waits for, directly or not."""
    return waited_for(jobs, job)


def _glob_name(name: str) -> bool:
    return bool(publish.GLOB_CHARS & set(name))


def _pattern_matches(pattern: str, name: str) -> bool:
    import fnmatch

    return any(
        fnmatch.fnmatchcase(name, p.replace("**", "*")) for p in publish.expand_braces(pattern)
    )


def _same_backend(a: int | None, b: int | None) -> bool:
    ba, bb = actions.backend(a), actions.backend(b)
    return ba is None or bb is None or ba == bb


def _where(loc: Loc) -> str:
    return f"{loc.file}:{loc.line}"


class _Steps:
    """The download, publish and file-moving steps of one job, in the order they run."""

    def __init__(self) -> None:
        self.fetches: list[Fetch] = []
        self.publishers: list[Publisher] = []
        self.moves: list[Moving] = []

    def add(self, item: Fetch | Publisher | Moving) -> None:
        if isinstance(item, Fetch):
            self.fetches.append(item)
        elif isinstance(item, Publisher):
            self.publishers.append(item)
        else:
            self.moves.append(item)


class _Run:
    """The artifacts of one run of one workflow, and what its jobs do with them."""

    def __init__(
        self, reader: ShipReader, root: str, jobs: Mapping[str, Any], contexts: list[Context]
    ) -> None:
        self.reader = reader
        self.root = root
        self.jobs = jobs
        self.contexts = contexts

    def visible(self, top: str) -> list[Context]:
        """The upload contexts a job of this run can rely on: its own and its needs'."""
        job = top.partition("#")[2]
        waits = {f"{self.root}#{n}" for n in _needs(self.jobs, job)} | {top}
        return [c for c in self.contexts if c.top in waits]

    def artifacts(self, top: str) -> dict[str, list[tuple[Context, str]]]:
        """Name -> (context, folder inside the artifact) of what ``top`` can download;
        merges add their artifact (their sources, flat or one folder each)."""
        found: dict[str, list[tuple[Context, str]]] = {}
        visible = self.visible(top)
        for ctx in visible:
            found.setdefault(ctx.name, []).append((ctx, ""))
        job = top.partition("#")[2]
        waits = {f"{self.root}#{n}" for n in _needs(self.jobs, job)}
        for merge in self.reader.merges:
            if (merge.caller or merge.job) not in waits:
                continue
            merged = [
                (ctx, ctx.name if merge.separate else "")
                for ctx in self.visible(merge.caller or merge.job)
                if _pattern_matches(merge.pattern, ctx.name)
            ]
            found.setdefault(merge.name, []).extend(merged)
        return found


def _select(
    fetch: Fetch, artifacts: Mapping[str, list[tuple[Context, str]]]
) -> tuple[dict[str, list[tuple[Context, str]]], list[Context]]:
    """The artifacts a download takes (same backend), and the contexts it names but
    cannot see (the other backend)."""
    if fetch.kind == "name":
        names = [fetch.select] if fetch.select in artifacts else []
    else:
        names = [n for n in artifacts if _pattern_matches(fetch.select, n)]
    names = [n for n in names if not any(_pattern_matches(x, n) for x in fetch.exclude)]
    taken: dict[str, list[tuple[Context, str]]] = {}
    hidden: list[Context] = []
    for name in names:
        for ctx, inner in artifacts[name]:
            if _same_backend(ctx.version, fetch.version):
                taken.setdefault(name, []).append((ctx, inner))
            else:
                hidden.append(ctx)
    return taken, hidden


def _landed(
    fetch: Fetch, taken: Mapping[str, list[tuple[Context, str]]]
) -> list[tuple[Context, str]]:
    """Where each taken context's files land: path globs from the workspace."""
    version = fetch.version or 0
    flat = (
        fetch.kind == "name"
        or (fetch.merge and version >= actions.NEW_BACKEND)
        or (version >= actions.SINGLE_FLAT_SINCE and len(taken) == 1)
    )
    out: list[tuple[Context, str]] = []
    for name, items in taken.items():
        for ctx, inner in items:
            for file in publish.artifact_files(ctx.path) or ("*",):
                parts = [fetch.path, *([] if flat else [name]), *([inner] if inner else []), file]
                out.append((ctx, publish.norm("/".join(parts))))
    return out


def bare_migration(root: Path, settings: WorkflowSettings | None = None) -> Migration:
    """No model: no flags, no axes, no binds; the workflows as they are (and the remote
    actions ``settings`` declares, where a migration file has them)."""
    loc = Loc("migration.yaml", 1, 1)
    return Migration(
        version=1,
        id="continuity",
        stage=0,
        stage_loc=loc,
        stages_dir="stages",
        axes={},
        flags={},
        producers={},
        consumers={},
        releases={},
        file="migration.yaml",
        root=root,
        workflows=WorkflowSettings(actions=settings.actions) if settings else WorkflowSettings(),
    )


def ships(
    root: Path,
    paths: Sequence[str] = DEFAULT_WORKFLOW_PATHS,
    settings: WorkflowSettings | None = None,
) -> Side:
    """Each release job of the workflows under ``root`` and what reaches its publish steps."""
    files = Files(root)
    reader = ShipReader(bare_migration(root, settings), files)
    reader.run(discover(root, paths))
    return _follow(reader)


def read_model(
    migration: Migration,
    stage: int,
    files: Files,
    *,
    stage_reads: dict[tuple[Any, ...], Any] | None = None,
) -> tuple[Reading, Side]:
    """One reading of the workflows at ``stage`` for ``drift``: the transfers it compares
    with the model, and what the artifact actions do with them, for every job.
    ``stage_reads``: filled with what the reading took from the stage (``same_at``)."""
    settings = migration.workflows
    rels = discover(files.root, settings.paths)
    if not rels:
        raise nothing_found(files, settings.paths, settings.paths_loc, migration.file)
    reader = ShipReader(migration, files, stage)
    reader.run(rels)
    if stage_reads is not None:
        stage_reads.update(reader.stage_reads)
    return reading_of(reader), _follow(reader, every_job=True)


def _follow(reader: ShipReader, *, every_job: bool = False) -> Side:
    """What reaches each release job's publish steps; ``every_job``: the download findings
    of every other job too."""
    findings: dict[str, Finding] = {}
    runs_on: dict[str, tuple[str, ...]] = {}
    releases: list[Release] = []
    by_root: dict[str, list[Context]] = {}
    for ctx in reader.contexts:
        by_root.setdefault(ctx.top.partition("#")[0], []).append(ctx)
    steps: dict[str, _Steps] = {}
    items: list[Fetch | Publisher | Moving] = [*reader.fetches, *reader.publishers, *reader.moves]
    for item in items:
        if not item.caller:
            steps.setdefault(item.job, _Steps()).add(item)
    for rel in sorted(reader.files.docs):
        doc = reader.files.docs[rel]
        jobs = doc.data.get("jobs")
        if not isinstance(jobs, dict):
            continue
        events = workflow_events(doc.data)
        if events <= {"workflow_call"}:
            continue  # a reusable workflow: its jobs run in the callers' runs
        run = _Run(reader, rel, jobs, by_root.get(rel, []))
        _collisions(run, findings)
        for job_id, spec in jobs.items():
            if not isinstance(spec, dict):
                continue
            top = f"{rel}#{job_id}"
            kinds = job_events(events, spec.get("if"))
            runs_on[top] = tuple(sorted(kinds))
            release = _release(
                run, top, steps.get(top, _Steps()), kinds, doc.key_loc(("jobs", job_id)), findings
            )
            if release is not None:
                releases.append(release)
            elif every_job and top in steps:
                job_findings(run, top, steps[top], findings)
    return Side(
        releases=tuple(releases),
        findings=tuple(findings.values()),
        unresolved=tuple(
            sorted(
                {
                    (u.loc, u.expression): u
                    for u in [*reader.unresolved.values(), *reader.values.values(), *reader.unread]
                }.values(),
                key=lambda u: (u.loc, u.expression),
            )
        ),
        files=tuple(sorted(reader.files.docs)),
        contexts=tuple(sorted(reader.contexts)),
        runs_on=runs_on,
        flow=frozenset(
            [c.top for c in reader.contexts]
            + [f.caller or f.job for f in reader.fetches]
            + [m.caller or m.job for m in reader.merges]
            + [p.caller or p.job for p in reader.publishers]
            + list(reader.flow_jobs)
        ),
        unread_in={k: frozenset(v) for k, v in reader.unread_in.items()},
    )


def _collisions(run: _Run, findings: dict[str, Finding]) -> None:
    """Two upload contexts of one run making one name on the v4 backend."""
    by_name: dict[str, list[Context]] = {}
    for ctx in run.contexts:
        if ctx.version is not None and ctx.version >= actions.NEW_BACKEND and not ctx.per_row:
            by_name.setdefault(ctx.name, []).append(ctx)
    for name, contexts in sorted(by_name.items()):
        if len(contexts) < 2 or sum(c.maybe is None for c in contexts) < 2:
            _maybe_collision(run, name, contexts, findings)
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


def _fetch_findings(
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


def job_findings(run: _Run, top: str, here: _Steps, findings: dict[str, Finding]) -> None:
    """The download findings of a job that is not a release job (``drift`` reads every job)."""
    artifacts = run.artifacts(top)
    for fetch in here.fetches:
        _fetch_findings(fetch, top, _select(fetch, artifacts)[1], findings, "job")


def _maybe_collision(
    run: _Run, name: str, contexts: list[Context], findings: dict[str, Finding]
) -> None:
    """Uploads of one name whose ``if:`` cannot be evaluated: whether two of them run is
    not known, so it is reported as unresolved (never guessed), at each such ``if:``."""
    if len(contexts) < 2:
        return
    for at in sorted({c.maybe for c in contexts if c.maybe is not None}):
        key = (at, f"the if: of an upload of {name!r}")
        if key not in run.reader.unread_in:
            run.reader.unread.append(
                Unresolved(
                    at,
                    key[1],
                    f"whether this upload of {name!r} runs in more than one of its "
                    f"{len(contexts)} contexts depends on an if: stagegate cannot evaluate "
                    "(upload-artifact v4+ refuses a second upload of a name); bind what it reads",
                )
            )
        run.reader.unread_in.setdefault(key, set()).update(c.top for c in contexts)


def _release(
    run: _Run,
    top: str,
    here: _Steps,
    kinds: set[str],
    loc: Loc,
    findings: dict[str, Finding],
) -> Release | None:
    """The release job ``top`` (None: not one): the contexts that reach its publish steps."""
    if not kinds & RELEASE_EVENTS:
        return None
    fetches, publishers, moves = here.fetches, here.publishers, here.moves
    if not publishers and (not fetches or kinds - RELEASE_EVENTS):
        return None  # publishes nothing: a release only where it runs for releases alone
    artifacts = run.artifacts(top)
    landed: list[tuple[Context, str, Fetch]] = []
    selected: list[Context] = []
    reached: dict[tuple[Any, ...], Context] = {}
    for fetch in fetches:
        taken, hidden = _select(fetch, artifacts)
        _fetch_findings(fetch, top, hidden, findings, "release job")
        selected += [ctx for items in taken.values() for ctx, _ in items]
        if not fetch.lands:  # a declared action: its files count as reaching the publish step
            reached.update((ctx.key, ctx) for items in taken.values() for ctx, _ in items)
            continue
        landed += [(ctx, where, fetch) for ctx, where in _landed(fetch, taken)]
    aside: list[Stranded] = []
    if publishers:
        for ctx, where, fetch in landed:
            meant: Publisher | None = None
            for publisher in publishers:
                places = [where]
                for move in moves:
                    if fetch.order < move.order < publisher.order:
                        places = [p for place in places for p in publish.moved(place, move.move)]
                if any(publish.glob_meets(r, p) for r in publisher.reads for p in places):
                    reached[ctx.key] = ctx
                elif fetch.order < publisher.order and any(
                    publish.glob_meets(r, publish.norm(f"{fetch.path}/**")) for r in publisher.reads
                ):
                    meant = meant or publisher
            if meant is not None:
                aside.append(Stranded(context=ctx, fetch=fetch, lands=where, publisher=meant))
    else:
        reached = {ctx.key: ctx for ctx in selected}
    file, _, job_id = top.partition("#")
    return Release(
        file=file,
        job=job_id,
        caller="",
        loc=loc,
        events=tuple(sorted(kinds)),
        contexts=tuple(sorted(reached.values())),
        publishes=bool(publishers),
        stranded=tuple(s for s in aside if s.context.key not in reached),
        elsewhere=tuple(sorted(run.reader.elsewhere.get(top, ()))),
    )
