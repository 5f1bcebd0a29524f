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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stagegate.ci import actions, handlers, publish
from stagegate.ci.builds import Builds
from stagegate.ci.files import Files, discover, nothing_found
from stagegate.ci.follow import Flows, follow
from stagegate.ci.model import Job, Step, Workflow
from stagegate.ci.scopes import Command, Scope
from stagegate.ci.selfsteps import stagegate_command
from stagegate.ci.shipped import (
    Context,
    Fetch,
    Fetched,
    Merge,
    Moving,
    Publisher,
    Side,
)
from stagegate.ci.transfers import Reading, Site, Transfer, Unresolved, shown
from stagegate.ci.workflows import Reader, reading_of
from stagegate.errors import Loc
from stagegate.model import DEFAULT_WORKFLOW_PATHS, ActionSpec, Migration, WorkflowSettings
from stagegate.model.ghexpr import Unknown, Value, to_text, unknowns
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


_SCRIPT_WORDS = re.compile(
    r"\b(gh|twine|maturin|mv|cp|rm|find|uv|poetry|hatch|pdm|flit|cargo|curl|wget|pip3?|aws"
    r"|gsutil|scp|rsync|git)\b"
)
_WRITES = re.compile(r">\s*[\w./'\"]|\btee\b")
"""A line that writes a file itself (``> PATH``, ``tee PATH``; not ``> $GITHUB_OUTPUT``)."""
_MOVING = re.compile(r"(?:^|[\s;&|(])(?:cp|mv|find)\s")
"""A command that moves or copies files (``find ... -exec mv``)."""
_CHDIR = re.compile(r"(?:^|[\s;&|(])(?:cd|pushd|popd)\b")
"""A script that changes folder: read whole (``publish.read_script`` follows it)."""
_OTHER_PUBLISHERS = re.compile(r"\b(npm)\s+publish\b")
_NAMED_PUBLISHING = re.compile(r"publish|release|upload|deploy", re.IGNORECASE)
_NAMED_NOT_PUBLISHING = frozenset({"lsb_release"})
"""Programs named for publishing that publish nothing: ``lsb_release`` prints the Linux
distribution's release."""
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
"""A word that assigns a variable (``X=1``, ``FLAGS+=(--prerelease)``, ``A[k]=v``): no command."""
_CHECKS = frozenset(
    {"validate", "verify", "check", "lint", "test", "print", "show", "list", "inspect", "dump"}
)
"""The verbs a program is named with that reads files and publishes none
(``validate-release-wheels``, ``check_upload.py``, ``print-release-notes``)."""
_ACTS = frozenset({"publish", "upload", "deploy", "push", "and", "then"})
"""Words after that verb that make the name one of two actions (``check-and-upload``)."""
_PATH_WORD = re.compile(r"(?<![\w/.$-])(?:\./)?[A-Za-z0-9_.][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)+")
"""Publish commands whose files are not read: listed as unread where they run."""
"""A script without one of these words publishes and moves nothing ``read_script`` reads."""


class ShipReader(Reader):
    """The reader, keeping what the artifact and publish steps do in each context."""

    def __init__(self, migration: Migration, files: Files, stage: int = 0) -> None:
        super().__init__(migration, stage, files)
        self.contexts: list[Context] = []
        self.dispatched_contexts: set[Context] = set()
        self.fetches: list[Fetch] = []
        self._fetched: set[tuple[str, str]] = set()
        """(PATH#JOB, caller) of the fetches listed so far (``fetched``)."""
        self._listed = 0
        self.merges: list[Merge] = []
        self.publishers: list[Publisher] = []
        self.moves: list[Moving] = []
        self.unread_list: list[Unresolved] = []
        self.unread_in: dict[tuple[Loc, str], set[str]] = {}
        """Where each unread step runs: the jobs of the run (``PATH#JOB``) it is in."""
        self.values: dict[tuple[Loc, str], Unresolved] = {}
        """The action inputs (``path``, ``overwrite``, ...) that cannot be evaluated."""
        self.counts: dict[tuple[Any, ...], int] = {}
        self.order = 0
        self.flow_jobs: set[str] = set()
        """Jobs where artifacts flow that no artifact step shows (an unread publisher)."""
        self.lookups: dict[str, set[str]] = {}
        """``PATH#JOB`` -> the workflows whose runs its scripts look up (a name or file)."""
        self.outside: list[Fetched] = []
        """Files scripts fetch from outside the run (a URL)."""
        self._now: tuple[Any, ...] | None = None
        """The context of the job whose steps are being read (``_where``)."""
        self.builds = Builds(files)
        """The steps that build wheels, per context (what each upload carries)."""
        self.unresolved_in: dict[tuple[Loc, str], set[str]] = {}
        """Each unresolved item -> the jobs of the run (``PATH#JOB``) it is noted in."""
        self.run_ids: set[tuple[Loc, str]] = set()
        """The unresolved items that are the id of another run a download reads."""
        self.script_files: list[tuple[int, Loc, list[Value], Transfer | None, Value]] = []
        """What the scripts of the step being read download and move (``on_files``), in
        order, and where the script was (``cd``): made ``Fetch``/``Moving`` once the
        step's working directory is known."""

    def job_steps(self, site: Site, workflow: Workflow, job: Job, scope: Scope) -> None:
        saved = self._now
        self._now = self._where(site)
        self.builds.job(self._now, site, job, scope)
        try:
            super().job_steps(site, workflow, job, scope)
        finally:
            self._now = saved

    def flows(self) -> Flows:
        """What the reading found, as data for ``ci.follow``."""
        return Flows(
            workflows=dict(self.files.workflows),
            contexts=self.contexts,
            fetches=self.fetches,
            merges=self.merges,
            publishers=self.publishers,
            moves=self.moves,
            outside=self.outside,
            lookups=self.lookups,
            unread=self.unread_list,
            unread_in=self.unread_in,
            unresolved=[*self.unresolved.values(), *self.values.values()],
            unresolved_in=self.unresolved_in,
            flow_jobs=self.flow_jobs,
            runs=self.migration.workflows.runs,
            run_ids=frozenset(self.run_ids),
        )

    def _here(self, loc: Loc, expression: str) -> None:
        top = self.current_callers[0] if self.current_callers else self.current_job
        self.unresolved_in.setdefault((loc, expression), set()).add(top)

    def note_unresolved(self, loc: Loc, value: Value) -> None:
        super().note_unresolved(loc, value)
        for part in unknowns(value):
            self._here(loc, part.expression)

    def note_run(self, loc: Loc, value: Value) -> None:
        super().note_run(loc, value)
        self.run_ids.update((loc, part.expression) for part in unknowns(value))

    def note_value(self, loc: Loc, value: Unknown) -> None:
        self.values.setdefault(
            (loc, value.expression), Unresolved(loc, value.expression, value.reason)
        )
        self._here(loc, value.expression)

    def unread(self, site: Site, loc: Loc, what: str, reason: str) -> None:
        """A step whose effect on the artifacts is not read, where it runs."""
        key = (loc, what)
        if key not in self.unread_in:
            self.unread_list.append(Unresolved(loc, what, reason))
        self.unread_in.setdefault(key, set()).add(site.callers[0] if site.callers else site.job)

    def _declared(self, use: handlers.Use, spec: ActionSpec) -> None:
        """A remote action ``workflows.actions`` declares: its uploads and downloads, each
        text evaluated with the step's ``with:`` as ``inputs``. Where its files come from
        and land is not known: its downloads count as reaching the publish steps."""
        site, scope, loc = use.site, use.scope, use.ref.loc
        inputs = {str(k): use.value(str(k)) for k in use.given}
        inner = Scope(
            self, site.doc, inputs=inputs, env=scope.env, in_action=True, runner=scope.runner
        )
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
                taken = handlers.Taken(
                    select=shown(value), kind=kind, path=".", merge=True, version=None, loc=loc,
                    lands=False,
                )  # fmt: skip
                self.fetches.append(replace(self._fetch(site, taken), via="declared"))

    def _where(self, site: Site) -> tuple[Any, ...]:
        """The context a step runs in: its job, the callers and their rows, its row (made
        once per job context: its steps, those of its composite actions included, share it)."""
        if self._now is not None and self._now[0] == site.job and self._now[1] == site.callers:
            return self._now
        return (site.job, site.callers, tuple(map(_row, self.caller_rows)), _row(site.row))

    def _context(self, site: Site, scope: Scope, **fields: Any) -> None:
        """An upload context of the step at ``site``, in the matrix row of ``scope``."""
        caller = site.callers[0] if site.callers else ""
        row = _row(site.row)
        caller_row = _row(self.caller_rows[0]) if self.caller_rows and caller else ()
        count_key = (site.job, caller, caller_row, row, self.current_dispatch)
        step_no = self.counts.get(count_key, 0)
        self.counts[count_key] = step_no + 1
        file, _, job = site.job.partition("#")
        context = Context(
            file=file, job=job, caller=caller, caller_row=caller_row, matrix=row, step=step_no,
            kinds=site.kinds, order=self.order, **fields,
        )  # fmt: skip
        if self.current_dispatch:  # each dispatch context is a run: one upload is one context
            if context in self.dispatched_contexts:
                return
            self.dispatched_contexts.add(context)
        self.contexts.append(context)

    def _fetch(self, site: Site, taken: handlers.Taken) -> Fetch:
        return Fetch(
            job=site.job,
            caller=site.callers[0] if site.callers else "",
            loc=taken.loc,
            select=taken.select,
            kind=taken.kind,
            path=taken.path,
            merge=taken.merge,
            version=taken.version,
            order=self.order,
            lands=taken.lands,
            run=taken.run,
            workflow=taken.workflow,
            via="gh" if taken.workflow is not None else "action",
            kinds=site.kinds,
        )

    def on_uses(self, use: handlers.Use) -> None:
        site, ref = use.site, use.ref
        self.builds.uses(self._where(site), use, self.files.workflows.get(site.rel))
        declared = self.migration.workflows.actions.get(ref.uses.lower())
        if declared is not None:
            self._declared(use, declared)
            return
        if not site.runs or stagegate_command(use.step.raw) is not None:
            return  # stagegate's own step moves no artifact
        self.order += 1
        publisher = self.migration.workflows.publishers.get(ref.uses.lower())
        if publisher is not None:
            reads = tuple(publish.norm(f) for f in publisher.files)
            self._publisher(site, ref.loc, publisher.key, reads)
            return
        handler = handlers.handler(ref)
        if handler is None:
            if ref.name and not actions.inert(ref.name):
                self.unread(
                    site,
                    ref.loc,
                    ref.uses,
                    "a remote action stagegate does not know: what it uploads, downloads or "
                    "publishes is not read",
                )
            return
        for effect in handler.effects(use, self.migration.axes):
            self._effect(use, effect)

    def _effect(self, use: handlers.Use, effect: handlers.Effect) -> None:
        site = use.site
        caller = site.callers[0] if site.callers else ""
        if isinstance(effect, handlers.Made):
            self._context(
                site,
                use.scope,
                name=effect.name,
                path=effect.path,
                wheels=self.builds.carried(self._where(site), effect.path),
                loc=effect.loc,
                version=effect.version,
                overwrite=effect.overwrite,
                step_loc=use.ref.loc,
                maybe=effect.maybe,
                per_row=effect.per_row,
                path_loc=effect.path_loc,
                path_unknown=effect.path_unknown,
            )
        elif isinstance(effect, handlers.Taken):
            self.fetches.append(self._fetch(site, effect))
        elif isinstance(effect, handlers.Merged):
            self.merges.append(
                Merge(
                    job=site.job,
                    caller=caller,
                    loc=effect.loc,
                    name=effect.name,
                    pattern=effect.pattern,
                    separate=effect.separate,
                    order=self.order,
                )
            )
        else:
            self._publisher(site, effect.loc, effect.tool, effect.reads)

    def _publisher(self, site: Site, loc: Loc, tool: str, reads: tuple[str, ...]) -> None:
        caller = site.callers[0] if site.callers else ""
        caller_row = _row(self.caller_rows[0]) if self.caller_rows and caller else ()
        self.publishers.append(
            Publisher(
                job=site.job,
                caller=caller,
                loc=loc,
                tool=tool,
                reads=reads,
                order=self.order,
                kinds=site.kinds,
                row=(caller_row, _row(site.row)),
            )
        )

    def on_files(
        self, site: Site, loc: Loc, words: list[Value], fetch: Transfer | None, cwd: Value = "."
    ) -> None:
        if site.runs:
            self.order += 1
            self.script_files.append((self.order, loc, words, fetch, cwd))

    def add(self, transfer: Transfer) -> None:
        """As the reader's; a script's pattern download comes here at the script's end
        with what it skips or removes (``exclude``), which its ``Fetch`` takes."""
        super().add(transfer)
        if transfer.direction == "download" and transfer.exclude:
            bare = replace(transfer, exclude=())
            for i, (order, loc, words, fetch, cwd) in enumerate(self.script_files):
                if fetch == bare:
                    self.script_files[i] = (order, loc, words, transfer, cwd)

    def _script_files(self, site: Site, base: str) -> bool:
        """The downloads and moves the step's scripts make (whether there were any)."""
        found, self.script_files = self.script_files, []
        caller = site.callers[0] if site.callers else ""
        for order, loc, words, fetch, cwd in found:
            texts = [shown(w) for w in words]
            lost = [u for w in (*words, cwd) for u in unknowns(w)]
            here = publish.norm(cwd, base) if isinstance(cwd, str) else base
            fetched = self.fetched(site.job, caller)
            for u in lost if fetch is not None or fetched else ():  # a move of fetched files
                self.note_value(loc, u)
            if fetch is None:
                move = publish.move_of(texts, here)
                if move is not None and lost:
                    move = publish.Move(copy=move.copy, sources=(), dest=".", unknown=True)
                if move is not None:
                    self.moves.append(
                        Moving(
                            job=site.job,
                            caller=caller,
                            move=move,
                            order=order,
                            loc=loc,
                            kinds=site.kinds,
                        )
                    )
                continue
            if lost or not fetch.resolved:
                continue  # a folder or a selection not known: unresolved
            self.fetches.append(
                Fetch(
                    job=site.job,
                    caller=caller,
                    loc=loc,
                    select=fetch.text(),
                    kind="pattern" if texts[1] else "name",
                    path=publish.norm(texts[0], here),
                    merge=False,
                    version=None,
                    order=order,
                    exclude=tuple(shown(x) for x in fetch.exclude),
                    run=fetch.run,
                    via="gh",
                    kinds=site.kinds,
                )
            )
        return bool(found)

    def on_command(self, site: Site, command: Command) -> None:
        self.builds.command(site, command)

    def identifiers(self, command: Command) -> Value:
        if self.step_now is None:
            return super().identifiers(command)
        site, step, scope = self.step_now
        workflow = self.files.workflows.get(site.rel)
        return self.builds.identifiers(self._where(site), site, (step, scope, workflow), command)

    def wants_script(self, site: Site, text: str) -> bool:
        """A script is read for its commands where it builds wheels, or where it moves
        files with words only the shell can work out (``mv "$D"/* out/``, ``$(echo ... |
        tr ...)``) after a download of its job: where the downloaded files go."""
        if not site.runs:
            return False
        if self.builds.wants(self._where(site), text):
            return True
        if "$" not in text or _MOVING.search(text) is None:
            return False
        caller = site.callers[0] if site.callers else ""
        return self.fetched(site.job, caller)

    def fetched(self, job: str, caller: str) -> bool:
        """Whether a download of the job ``job`` (called by ``caller``) was read so far
        (``fetches`` only grows: the pairs of those added since the last question are
        taken in)."""
        if self._listed != len(self.fetches):
            self._fetched.update((f.job, f.caller) for f in self.fetches[self._listed :])
            self._listed = len(self.fetches)
        return (job, caller) in self._fetched

    def on_run(self, site: Site, step: Step, scope: Scope, *, read: bool) -> None:
        assert step.run is not None
        workflow = self.files.workflows.get(site.rel)
        self.builds.run(self._where(site), site, step, scope, workflow, read=read)
        base = publish.norm(step.working_directory or site.folder)
        shell_read = self._script_files(site, base)
        others, script = _script_of(step.run)
        top = site.callers[0] if site.callers else site.job
        if site.runs:
            for other in others:
                self.unread(
                    site,
                    site.doc.loc(step.at("run")),
                    f"{other} publish",
                    "a publish command stagegate does not read: which files it publishes is "
                    "not known; declare it under workflows.publishers",
                )
                self.flow_jobs.add(top)
        if not site.runs:
            return
        self.order += 1
        loc = site.doc.loc(step.at("run"))
        text = shown(scope.evaluate(step.run, step.at("run")))
        if not self._declared_commands(site, loc, text, base):
            self._publishing_scripts(site, loc, text)
        for rel in self._called(step.run):
            called = self.files.script(rel)
            if called is not None and ("gh" in called or "rm" in called):
                self._script(site, loc, called, base, True, lookups_only=True)
        if script is not None:  # the lines of the evaluated text: an expression may span lines
            self._script(site, loc, _script_of(text)[1] or "", base, shell_read)

    def _script(
        self,
        site: Site,
        loc: Loc,
        text: str,
        base: str,
        shell_read: bool,
        *,
        lookups_only: bool = False,
    ) -> None:
        """What ``publish.read_script`` finds in a script: publish commands, moves (where
        the shell reader did not follow them, and every removal), files fetched from
        outside, and the workflows whose runs it looks up."""
        top = site.callers[0] if site.callers else site.job
        caller = site.callers[0] if site.callers else ""
        for found in publish.read_script(text, base):
            if isinstance(found, publish.Lookup):
                self.lookups.setdefault(top, set()).add(found.workflow)
            elif lookups_only and not (isinstance(found, publish.Move) and found.remove):
                continue  # the shell reader followed the called script's moves
            elif isinstance(found, publish.Command) and found.lost and found.reads:
                self.unread(
                    site,
                    loc,
                    f"{found.tool} after cd",
                    "a publish command run after a `cd` stagegate does not follow (a variable, "
                    "`cd` alone, `cd -`, a `pushd`/`popd` stack rotation): which files it publishes is not known; use "
                    "working-directory, or cd to a folder written out",
                )
                self.flow_jobs.add(top)
            elif isinstance(found, publish.Command):
                self._publisher(site, loc, found.tool, found.reads)
            elif isinstance(found, publish.Outside):
                self.outside.append(
                    Fetched(job=site.job, caller=caller, loc=loc, what=found.what,
                            path=found.path, order=self.order, kinds=site.kinds)
                )  # fmt: skip
            elif not shell_read or found.remove:  # else the shell reader saw its moves
                self.moves.append(
                    Moving(
                        job=site.job,
                        caller=caller,
                        move=found,
                        order=self.order,
                        loc=loc if found.unknown else None,
                        kinds=site.kinds,
                    )
                )

    def _called(self, run: str) -> list[str]:
        """The repository scripts a ``run:`` names (read for the runs they look up)."""
        out = []
        for word in _path_words(run):
            rel = self.files.repo_path(word.removeprefix("./"))
            if rel is not None and rel not in out:
                out.append(rel)
        return out[:20]

    def _declared_commands(self, site: Site, loc: Loc, text: str, base: str) -> bool:
        """The commands ``workflows.publishers`` declares, where the script runs them
        (whether there was one)."""
        declared = [p for p in self.migration.workflows.publishers.values() if not p.is_action]
        found = False
        for words in publish.commands(text) if declared else ():
            line = " ".join(words).lower()
            for spec in declared:
                prefix = spec.key.lower()
                if line == prefix or line.startswith(prefix + " "):
                    if spec.files:  # `files: []`: a command that publishes nothing
                        reads = tuple(publish.norm(f, base) for f in spec.files)
                        self._publisher(site, loc, spec.key, reads)
                    found = True
        return found

    def _publishing_scripts(self, site: Site, loc: Loc, text: str) -> None:
        """A command named for publishing that stagegate does not read (``./publish.sh``,
        ``make release``): unread, so that a job it may publish from is blind, not quiet."""
        for head in _unread_publishing(text):
            self.unread(
                site,
                loc,
                head,
                "a publish step stagegate does not read: which files it publishes is not "
                "known; declare it under workflows.publishers",
            )


@functools.lru_cache(maxsize=4096)
def _unread_publishing(text: str) -> tuple[str, ...]:
    """The commands of a script named for publishing that stagegate does not read, in
    order (``ShipReader._publishing_scripts``); once per text, which a step has in each
    context it runs in."""
    heads: list[str] = []
    for found in publish.commands(text) if _NAMED_PUBLISHING.search(text) else ():
        words = list(found)
        while words and _ASSIGNMENT.match(words[0]):
            if "$(" in words[0] or "`" in words[0]:
                words = []  # `X=$(gh release view ...)`: the words are the substitution's
            words = words[1:]  # `notes=.../release/...`: a variable, not a command
        head = " ".join(words[:2]) if words[:1] == ["make"] else words[0] if words else ""
        program = head.rstrip(");&|").rsplit("/", 1)[-1]  # the name, not its folder
        if (
            _NAMED_PUBLISHING.search(program)
            and program not in _NAMED_NOT_PUBLISHING
            and not _checks_only(program)
            and publish.read_script(" ".join(words), ".") == []
        ):
            heads.append(head)
    return tuple(heads)


@functools.lru_cache(maxsize=4096)
def _path_words(run: str) -> tuple[str, ...]:
    """The words of a ``run:`` that look like repository paths, sorted, once per text."""
    return tuple(sorted(set(_PATH_WORD.findall(run))))


def _checks_only(program: str) -> bool:
    """Whether a program's name says it only checks or prints: its first word is one of
    ``_CHECKS`` and none after it is one of ``_ACTS`` (``validate-release-wheels``; not
    ``check-and-upload``, not ``upload-checked``)."""
    words = [w for w in re.split(r"[-_.\s]+", program.lower()) if w]
    return bool(words) and words[0] in _CHECKS and not _ACTS & set(words[1:])


@functools.lru_cache(maxsize=4096)
def _script_of(run: str) -> tuple[tuple[str, ...], str | None]:
    """The publish commands of a ``run:`` script that are not read (sorted), and its lines
    that ``read_script`` may read (None: none; all of them where it changes folder, so that
    a subshell's end is seen); once per script text, which a step has in each context it
    runs in."""
    others = tuple(sorted(set(_OTHER_PUBLISHERS.findall(run))))
    if not _SCRIPT_WORDS.search(run) and not _WRITES.search(run):
        return others, None
    if _CHDIR.search(run):
        return others, run
    lines = re.sub(r"\\\n", " ", run).splitlines()
    return others, "\n".join(
        line for line in lines if _SCRIPT_WORDS.search(line) or _WRITES.search(line)
    )


def bare_migration(
    root: Path,
    settings: WorkflowSettings | None = None,
    chosen: Sequence[tuple[str, str]] = (),
) -> Migration:
    """No model: no flags, no items; the workflows as they are, with the run's commit
    (``github.sha``) an open value ``{sha}`` (so a name holding it is the same name at both
    commits), each input ``chosen`` (workflow, name: a free `workflow_dispatch` input) an
    open value ``{inputs-NAME}`` too (the same dispatch at both commits), and the remote
    actions, publishers and runs ``settings`` declares, where a migration file has them."""
    from stagegate.model import Bind, Template
    from stagegate.model.templates import Axis, split

    loc = Loc("migration.yaml", 1, 1)

    def bind(key: str, axis: str) -> Bind:
        text = "{" + axis + "}"
        return Bind(key=key, text=Template(text=text, parts=split(text), loc=loc), loc=loc)

    binds = {"github.sha": bind("github.sha", "sha")}
    axes = {"sha": Axis("sha", pattern="[0-9a-f]{40}")}
    for rel, name in chosen:
        axis = f"inputs-{name}"
        binds[f"{rel} inputs.{name}"] = bind(f"{rel} inputs.{name}", axis)
        axes[axis] = Axis(axis, pattern=".*")
    workflows = WorkflowSettings(bind=binds)
    if settings is not None:
        workflows = WorkflowSettings(
            bind=binds,
            actions=settings.actions,
            publishers=settings.publishers,
            runs=settings.runs,
        )
    return Migration(
        version=1,
        id="continuity",
        stage=0,
        stage_loc=loc,
        stages_dir="stages",
        axes=axes,
        flags={},
        producers={},
        consumers={},
        releases={},
        file="migration.yaml",
        root=root,
        workflows=workflows,
    )


def ships(
    files: Files,
    settings: WorkflowSettings | None = None,
    *,
    migration: Migration | None = None,
    stage: int = 0,
    kind: str | None = None,
    only: Sequence[str] | None = None,
) -> Side:
    """Each release job of the workflows ``files`` holds (found by the default
    ``workflows.paths``; ``only``: these of them) and what reaches its publish steps: read
    with ``migration`` at ``stage`` (its binds, and the flags its `stagegate flags` steps
    output), else as they are with ``settings`` (the remote actions, publishers and runs a
    migration declares); ``kind``: for a run of that kind (``github.event_name`` and
    ``github.ref`` known)."""
    rels = discover(files.source, DEFAULT_WORKFLOW_PATHS) if only is None else only
    if migration is None:
        migration = bare_migration(files.root, settings, free_inputs(files, rels))
    reader = ShipReader(migration, files, stage)
    reader.kind = kind
    reader.run(rels)
    return follow(reader.flows())


_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
"""What an axis may be named (model.templates): an input named otherwise stays unknown."""


def free_inputs(files: Files, rels: Sequence[str]) -> list[tuple[str, str]]:
    """(workflow, input) for each `workflow_dispatch` input of ``rels`` that is chosen
    freely (not a choice or a boolean, which are read once per value). A workflow that
    cannot be read has none here: the reading says why."""
    from stagegate.ci.dispatch import input_values
    from stagegate.errors import StagegateError

    chosen: list[tuple[str, str]] = []
    for rel in rels:
        try:
            inputs = files.workflow(rel).dispatch_inputs
        except StagegateError:
            continue
        chosen += [
            (rel, str(name))
            for name, spec in inputs.items()
            if input_values(spec) is None and _AXIS_NAME.fullmatch(str(name))
        ]
    return chosen


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
    return reading_of(reader), follow(reader.flows(), every_job=True)
