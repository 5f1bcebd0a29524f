"""The repository's GitHub Actions workflows: what they upload and download, at a stage.

Reads workflow files and local composite actions with the project's located-YAML
reader (its limits on size, depth and aliases apply), then evaluates, for each job in
each context it runs in (a reusable-workflow call, a matrix row), the names of the
artifacts its steps upload (``actions/upload-artifact``) and download
(``actions/download-artifact``, ``gh run download`` in ``run:`` scripts). Expressions
are evaluated as far as the YAML and the model's ``workflows.bind`` allow: ``matrix``,
``env`` (step, job, workflow; nearest wins), ``inputs`` through reusable-workflow calls
and composite actions, shell variables, ``$GITHUB_ENV`` writes and the outputs of
``stagegate flags``. What cannot be evaluated is kept as ``Unknown`` with its file, line
and expression and reported as unresolved: never guessed. Nothing here prints or exits.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping, Sequence
from typing import Any, cast

from stagegate.ci import dispatch, handlers
from stagegate.ci.budget import MAX_READING, Budget
from stagegate.ci.files import (
    Files,
    as_mapping,
    discover,
    files_for,
    nothing_found,
    root_inputs,
)
from stagegate.ci.matrix import expand
from stagegate.ci.model import Action, Job, Step, Workflow, invalid, is_action
from stagegate.ci.pwsh import PowerShell
from stagegate.ci.runkinds import READ_KINDS
from stagegate.ci.scopes import Command, Env, Host, Lazy, Scope
from stagegate.ci.selfsteps import outputs_at, stagegate_command
from stagegate.ci.shell import Shell
from stagegate.ci.transfers import (
    MAX_CALL_DEPTH,
    MAX_EVALUATIONS,
    Halted,
    Reading,
    Site,
    Transfer,
    Unresolved,
    shown,
    text_value,
)
from stagegate.ci.transfers import Job as JobSeen
from stagegate.engine.resolve import flag_table
from stagegate.errors import Loc, LocatedError
from stagegate.load.yamlsrc import Document
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import Migration, ghexpr
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value, concat, truth, unknowns
from stagegate.records import replace

# --------------------------------------------------------------------------- the reader


class Reader:
    def __init__(
        self, migration: Migration, stage: int, files: Files, *, tag_matrix: bool = False
    ) -> None:
        self.tag_matrix = tag_matrix
        self.kind: str | None = None
        """The run kind read for (``Host.kind``); None: any run."""
        self.generated: set[str] = set()
        self.migration = migration
        self.stage = stage
        self.files = files
        self.flags = flag_table(migration)[stage]
        self.transfers: dict[tuple[Any, ...], Transfer] = {}
        self.unresolved: dict[tuple[Loc, str], Unresolved] = {}
        self.jobs: dict[str, JobSeen] = {}
        self.env_writers: dict[str, str] = {}
        self.work = Budget(
            MAX_READING, f"more than {MAX_READING:,} units of work for all the scripts"
        )
        self.evaluations = 0
        self.parsed: dict[str, ghexpr.Node] = {}
        self.used_actions: set[str] = set()
        self.action_files: dict[str, str | None] = {}
        """``uses: ./path`` -> its action file (None: a workflow), looked up once."""
        self.current_job = ""
        self.current_callers: tuple[str, ...] = ()
        self.caller_rows: tuple[Value, ...] = ()
        """The matrix rows of the jobs that call the workflow being read, outermost first."""
        """The jobs that call the workflow being read, outermost first."""
        self.current_dispatch: dispatch.Context = ()
        """The dispatch inputs' values of the context being read (ci.dispatch)."""
        self.dispatch: dict[str, dict[str, tuple[str, ...]]] = {}
        self.binding: set[str] = set()
        self.scoped_binds = any(" " in key for key in migration.workflows.bind)
        self.bind_paths = frozenset(key.rpartition(" ")[2] for key in migration.workflows.bind)
        """The paths some bind names (a key ends with its path): any other has none."""
        self.stage_reads: dict[tuple[Any, ...], Any] = {}
        """What the reading took from the stage, with the answer (``same_at``)."""
        self.stops: dict[tuple[str, tuple[str, ...]], dict[Loc, str]] = {}
        """(PATH#JOB, callers) -> the commands of its scripts that stop with an error."""
        self.halted: dict[tuple[str, tuple[str, ...]], Halted] = {}
        self.step_now: tuple[Site, Step, Scope] | None = None
        """The step whose script is being read, where, with what it sees."""

    # -- binds

    def bound(
        self, path: str, scope: Scope | None = None, *, scoped: bool = True, bare: bool = True
    ) -> Value:
        """The bound value of ``path`` where ``scope`` is: a bind for a job that calls
        its workflow (``PATH#JOB path`` of the caller, the nearest caller first: a value
        per caller), then for its job, then for its file (``PATH path``), then a bare one
        (NotImplemented if none). ``scoped``/``bare`` choose which kinds are looked at."""
        if path not in self.bind_paths and " " not in path:
            return NotImplemented
        binds = self.migration.workflows.bind
        bind = None
        if scoped and scope is not None and self.scoped_binds:
            wheres = (*reversed(scope.callers), scope.job, self.files.rel(scope.doc.file))
            for where in (*wheres, scope.job.partition("#")[0]):
                if where:
                    bind = binds.get(f"{where} {path}")
                    if bind is not None:
                        break
        if bind is None and bare:
            bind = binds.get(path)
        if bind is None:
            return NotImplemented
        if bind.when is not None:
            on = self.stage_reads.setdefault(("when", bind.when), bind.when.evaluate(self.flags))
            return bind.then if on else bind.otherwise
        assert bind.text is not None
        if bind.expressions:
            return self.expression_bind(bind.key, bind.text.text, scope)
        pieces: list[Value] = [
            part if isinstance(part, str) else Ph(part.axis) for part in bind.text.parts
        ]
        return concat(pieces)

    def expression_bind(self, key: str, text: str, scope: Scope | None) -> Value:
        """A bind's text with its ``${{ }}`` evaluated where it is used."""
        from stagegate.model.templates import split

        if scope is None or key in self.binding:
            return Unknown(key, f"the bind {key!r} refers to itself or is used outside a step")
        self.binding.add(key)
        try:
            pieces: list[Value] = []
            for piece, _offset in ghexpr.split_text(text):
                if piece.startswith("${{"):
                    node = self.parsed.get(piece[3:-2])
                    if node is None:
                        node = self.parsed[piece[3:-2]] = ghexpr.parse(piece[3:-2])
                    value = ghexpr.Evaluator(scope.lookup)(node)
                    pieces.append(
                        Unknown(piece, value.reason) if isinstance(value, Unknown) else value
                    )
                else:
                    pieces += [p if isinstance(p, str) else Ph(p.axis) for p in split(piece)]
            return concat(pieces)
        except LocatedError as exc:  # checked by load; kept for safety
            return Unknown(key, exc.message)
        finally:
            self.binding.discard(key)

    # -- expressions

    def interpolate(
        self, text: str, scope: Scope, doc: Document, path: DocPath, *, condition: bool
    ) -> Value:
        if not condition and "${{" not in text:
            return text  # plain text: itself (most `with:` values and env entries)
        at = 0
        try:
            pieces = _pieces(text, condition)
            values: list[Value] = []
            evaluate = ghexpr.Evaluator(scope.lookup)
            for piece, offset in pieces:
                at = offset + 3
                if not piece.startswith("${{"):
                    values.append(piece)
                    continue
                inner = piece[3:-2]
                node = self.parsed.get(inner)
                if node is None:
                    node = ghexpr.parse(inner)
                    self.parsed[inner] = node
                value = evaluate(node)
                if isinstance(value, Unknown):
                    value = Unknown(piece.strip(), value.reason, truth=value.truth)
                elif isinstance(value, Sym):
                    value = Sym(
                        tuple(
                            Unknown(piece.strip(), p.reason) if isinstance(p, Unknown) else p
                            for p in value.parts
                        )
                    )
                if len(pieces) == 1:
                    return value
                values.append(value)
        except LocatedError as exc:
            where = doc.loc(path) if "\n" in text else doc.text_loc(path, at + exc.column)
            raise invalid(where, f"invalid expression: {exc.message}") from None
        return concat(values)

    def note_value(self, loc: Loc, value: Unknown) -> None:
        """An input of an artifact step that cannot be evaluated (``ci.ships`` lists
        them where artifacts flow)."""

    def unread(self, site: Site, loc: Loc, what: str, reason: str) -> None:
        """A step whose effect on the artifacts is not read (``ci.ships`` lists it)."""

    def note_run(self, loc: Loc, value: Value) -> None:
        """The id of the other run a download reads, unknown: unresolved (``ci.ships``
        keeps which items these are)."""
        self.note_unresolved(loc, value)

    def note_unresolved(self, loc: Loc, value: Value) -> None:
        for part in unknowns(value):
            key = (loc, part.expression)
            if key not in self.unresolved:
                self.unresolved[key] = Unresolved(loc, part.expression, part.reason)

    def add(self, transfer: Transfer) -> None:
        key = (
            transfer.direction,
            transfer.loc,
            transfer.job,
            transfer.callers,
            transfer.value,
            transfer.kind,
            transfer.run,
            transfer.active,
            transfer.exclude,
        )
        if transfer.active:
            self.note_unresolved(transfer.loc, transfer.value)
        if self.current_dispatch:
            known = self.transfers.get(key)
            seen = known.dispatch if known is not None else ()
            if self.current_dispatch not in seen:
                transfer = replace(transfer, dispatch=(*seen, self.current_dispatch))
                self.transfers[key] = transfer
            return
        self.transfers.setdefault(key, transfer)

    def charge(self, doc: Document, path: DocPath) -> None:
        self.evaluations += 1
        if self.evaluations > MAX_EVALUATIONS:
            raise invalid(
                doc.loc(path),
                f"evaluating the workflows takes more than {MAX_EVALUATIONS:,} step evaluations "
                "(steps x matrix rows x calls); narrow workflows.paths or the matrices.",
            )

    # -- workflows

    def run(self, rels: Sequence[str]) -> None:
        called: set[str] = set()
        actions: set[str] = set()
        workflows: list[Workflow] = []
        for rel in rels:
            if is_action(self.files.get(rel).data):
                actions.add(rel)
                continue
            workflow = self.files.workflow(rel)
            workflows.append(workflow)
            called.update(
                job.uses.local for job in workflow.jobs.values() if job.uses and job.uses.local
            )
        for workflow in workflows:
            for job in workflow.jobs.values():
                self.jobs[job.key] = JobSeen(
                    id=job.key,
                    loc=job.loc,
                    waits=frozenset(f"{workflow.file}#{j}" for j in workflow.waits(job.id)),
                )
            if workflow.file not in called or workflow.triggers - {"workflow_call"}:
                self.dispatched(workflow)
        for rel in sorted(actions):
            if rel not in self.used_actions:
                action = self.files.action(rel)
                scope = Scope(
                    self,
                    action.doc,
                    inputs=Unknown(
                        "inputs", f"inputs: no workflow read here uses {rel}; bind them"
                    ),
                    in_action=True,
                )
                site = Site(rel=rel, doc=action.doc, job=rel, callers=(), depth=0)
                self.action_steps(site, action, scope)

    def dispatched(self, workflow: Workflow) -> None:
        """A workflow that starts a run, once per context of its finite dispatch inputs."""
        rel, data = workflow.file, workflow.data
        bound = set()
        for key in self.migration.workflows.bind:
            where, _, path = key.rpartition(" ")
            if path.lower().startswith("inputs.") and where.partition("#")[0] in ("", rel):
                bound.add(path[len("inputs.") :].lower())
        expanded = list(dispatch.contexts(rel, data, bound))
        if not expanded:
            self.workflow(rel, root_inputs(workflow), (), 0)
            return
        self.dispatch[rel] = dispatch.finite_inputs(data, bound)
        try:
            for context, inputs in expanded:
                self.current_dispatch = context
                self.workflow(rel, inputs, (), 0)
        finally:
            self.current_dispatch = ()

    def workflow(
        self,
        rel: str,
        inputs: Mapping[str, Value] | Unknown | None,
        callers: tuple[str, ...],
        depth: int,
        where: Loc | None = None,
        parent: tuple[bool, str] = (True, ""),
        kinds: frozenset[str] | None = None,
    ) -> None:
        workflow = self.files.workflow(rel, where)
        doc = workflow.doc
        if depth > MAX_CALL_DEPTH or rel in (c.partition("#")[0] for c in callers):
            raise invalid(
                where or doc.loc(()),
                f"reusable workflows call each other more than {MAX_CALL_DEPTH} deep, or in a "
                f"cycle ({' -> '.join((*callers, rel))}); break the chain.",
            )
        wf_env = self.env_layer(doc, ("env",), workflow.env, Scope(self, doc, inputs=inputs))
        saved, saved_callers = self.current_job, self.current_callers
        self.current_callers = callers
        try:
            for job in workflow.jobs.values():
                self.current_job = job.key
                site = Site(rel, doc, job.key, callers, depth, *parent, kinds=kinds)
                self.job(site, workflow, job, inputs, wf_env)
        finally:
            self.current_job, self.current_callers = saved, saved_callers

    def job(
        self,
        site: Site,
        workflow: Workflow,
        job: Job,
        inputs: Mapping[str, Value] | Unknown | None,
        wf_env: dict[str, Any],
    ) -> None:
        """One job of a workflow, in each row of its matrix."""
        doc = site.doc
        self.jobs.setdefault(site.job, JobSeen(id=site.job, loc=job.loc))
        needs = self.needs_of(workflow, job, inputs, wf_env)
        base = Scope(self, doc, inputs=inputs, env=Env([wf_env]), needs=needs)
        active, off, kinds = site.runs, site.why, site.kinds
        if active:
            active, off = self.condition(base, job.condition, job.at("if"))
            kinds = self.run_kinds(base, job.condition, job.at("if"), kinds)
        rows = self.matrix_rows(doc, job, base)
        self.note_halted(site, workflow, job, rows)
        known = all(isinstance(row, dict) for row in rows) or rows == [None]
        for index, row in enumerate(rows):
            scope = Scope(
                self,
                doc,
                matrix=row,
                inputs=inputs,
                env=Env([wf_env]),
                needs=needs,
                strategy=(index, len(rows)) if known else None,  # GitHub's order of the rows
            )
            job_env = self.env_layer(doc, job.at("env"), job.env, scope)
            written: dict[str, Any] = {}
            scope = scope.with_env(Env([wf_env, job_env, written]))
            here = replace(
                site, runs=active, why=off, outputs={}, written=written, row=row, kinds=kinds
            )
            if job.uses is not None:
                self.call(here, job, scope)
                continue
            self.job_steps(here, workflow, job, scope)

    def stopped(self, site: Site, loc: Loc, message: str) -> None:
        self.stops.setdefault((site.job, site.callers), {}).setdefault(loc, message)

    def note_halted(self, site: Site, workflow: Workflow, job: Job, rows: list[Value]) -> None:
        """A generated matrix with no row: none computed, or the job it comes from (one
        this one needs) stops with an error (``stopped``, when its outputs were read)."""
        strategy = job.strategy
        if isinstance(strategy, dict) and isinstance(strategy.get("matrix"), str):
            matrix = site.doc.loc(job.at("strategy", "matrix"))
        elif isinstance(strategy, str):
            matrix = site.doc.loc(job.at("strategy"))
        else:
            return  # written out: its rows are what it says
        key = (site.job, site.callers)
        if rows == []:
            self.halted[key] = Halted(
                job=site.job, callers=site.callers, matrix=matrix, generator=None, message=""
            )
            return
        if not (len(rows) == 1 and isinstance(rows[0], Unknown)):
            return
        rel = site.job.partition("#")[0]
        for name in job.needs:
            for loc, message in self.stops.get((f"{rel}#{name}", site.callers), {}).items():
                self.halted[key] = Halted(
                    job=site.job,
                    callers=site.callers,
                    matrix=matrix,
                    generator=loc,
                    message=message,
                )
                return

    def needs_of(
        self,
        workflow: Workflow,
        job: Job,
        inputs: Mapping[str, Value] | Unknown | None,
        wf_env: Mapping[str, Any],
    ) -> dict[str, Any]:
        """``needs.J.outputs.K`` for the jobs this one needs: their `outputs:` evaluated."""
        out: dict[str, Any] = {}
        for name in job.needs:
            other = workflow.jobs.get(name)
            if other is None:
                continue

            def outputs(
                key: str,
                other: Job = other,
                name: str = name,
                known: dict[str, dict[str, Value]] = {},  # noqa: B006 - one per needed job
            ) -> Value:
                if key not in other.outputs:
                    return Unknown(
                        f"needs.{name}.outputs.{key}", f"job {name} declares no output {key}"
                    )
                if other.strategy is not None or other.uses is not None:
                    return Unknown(
                        f"needs.{name}.outputs.{key}",
                        f"job {name} runs a matrix or a reusable workflow; bind needs.{name}.outputs.{key}",
                    )
                scope = Scope(self, workflow.doc, inputs=inputs, env=Env([wf_env]), steps=known)
                scope.job = other.key
                if not known:
                    scope = self.step_outputs(workflow, other, scope)
                return scope.evaluate(other.outputs[key], other.at("outputs", key))

            out[name] = outputs
        return out

    def step_outputs(self, workflow: Workflow, job: Job, scope: Scope) -> Scope:
        """``scope`` with the job's env and ``steps.ID.outputs`` filled (in ``scope.steps``)
        for the steps whose outputs stagegate knows: a `stagegate flags`/`matrix` step (at
        the stage), and a bash `run:` whose ``$GITHUB_OUTPUT`` writes the shell reader
        evaluates (``$(yq ...)``, ``$(echo "$X" | jq ...)``). A step with an `if:`, or of
        another shell, writes none known. Read again for the job that needs them: what
        they transfer or leave unresolved was found where the job itself was read."""
        found = scope.steps
        assert isinstance(found, dict)
        doc = scope.doc
        job_env = self.env_layer(doc, job.at("env"), job.env, scope)
        site = Site(workflow.file, doc, scope.job, scope.callers, 0)
        scope = scope.with_env(Env([*scope.env.layers, job_env, site.written]))
        shell = self.default_shell(workflow, job, scope)
        saved = self.step_now
        try:
            self.read_outputs(workflow, job, scope, site, shell)
        finally:
            self.step_now = saved
        return scope

    def read_outputs(
        self, workflow: Workflow, job: Job, scope: Scope, site: Site, shell: str
    ) -> None:
        """``step_outputs``' reading of the job's steps, in order."""
        found = scope.steps
        assert isinstance(found, dict)
        doc = scope.doc
        for step in job.steps:
            command = stagegate_command(step.raw)
            if command and step.id is not None:
                found[step.id] = self.command_outputs(command)
            used = step.shell or shell
            if command or step.run is None or "if" in step.raw or used.split()[:1] != ["bash"]:
                continue
            here = scope.with_env(
                scope.env.child(self.env_layer(doc, step.at("env"), step.env, scope))
            )
            reading = Shell(
                cast(Host, _Quiet(self)), site, step.at("run"), step.run, here, for_outputs=True
            )
            self.step_now = (site, step, here)
            reading.run()
            if step.id is not None:
                found[step.id] = reading.outputs

    def command_outputs(self, command: list[str]) -> dict[str, Value]:
        """The step outputs a `stagegate flags` or `stagegate matrix P` step writes, at the stage."""
        key = ("command", tuple(command))
        found = self.stage_reads.get(key)
        if found is None:
            found = self.stage_reads[key] = outputs_at(self.migration, self.stage, command)
        return dict(found)

    def env_layer(self, doc: Document, path: DocPath, raw: Any, scope: Scope) -> dict[str, Any]:
        if isinstance(raw, str):
            return {}  # env: ${{ fromJSON(...) }}: nothing known by name
        env = as_mapping(doc, path, raw, "env")
        return {
            str(key): Lazy(
                lambda key=key, value=value: text_value(scope.evaluate(value, (*path, key)))
            )
            for key, value in env.items()
        }

    def condition(self, scope: Scope, raw: Any, path: DocPath) -> tuple[bool, str]:
        """Whether a job or step may run: False only when its `if:` is decidedly false."""
        if raw is None:
            return True, ""
        if isinstance(raw, bool):
            return raw, "" if raw else "if: false"
        value = scope.evaluate(str(raw), path, condition=True)
        if truth(value) is False:
            loc = scope.doc.loc(path)
            return (
                False,
                f"its if: {str(raw).strip()!r} ({loc.file}:{loc.line}) is false at stage {self.stage}",
            )
        return True, ""

    def run_kinds(
        self, scope: Scope, raw: Any, path: DocPath, kinds: frozenset[str] | None
    ) -> frozenset[str] | None:
        """Of ``kinds`` (None: ``runkinds.READ_KINDS``), those on which a job or
        step whose `if:` is ``raw`` may run: the `if:` evaluated again with what
        ``github.*`` is on each (``runkinds.github_value``), where it reads ``github.*`` and
        the reading is for any run. `if: github.event_name == 'pull_request'` runs on no
        tag: a publish step under it publishes nothing a release ships."""
        if self.kind is not None or not isinstance(raw, str) or "github." not in raw.lower():
            return kinds
        found: set[str] = set()
        try:
            for kind in sorted(kinds if kinds is not None else READ_KINDS):
                self.kind = kind
                if truth(scope.evaluate(raw, path, condition=True)) is not False:
                    found.add(kind)
        finally:
            self.kind = None
        return frozenset(found)

    def matrix_rows(self, doc: Document, job: Job, scope: Scope) -> list[Value]:
        strategy = job.strategy
        if strategy is None:
            return [None]
        spath = job.at("strategy")
        if isinstance(strategy, str):
            value = scope.evaluate(strategy, spath)
            strategy = value if isinstance(value, dict) else {"matrix": strategy}
        strategy = as_mapping(doc, spath, strategy, "strategy")
        raw = strategy.get("matrix")
        mpath: DocPath = (*spath, "matrix")
        if raw is None:
            return [None]
        if isinstance(raw, str):
            value = scope.evaluate(raw, mpath)
            if not isinstance(value, dict):
                loc = doc.loc(mpath)
                why = [f": {u.reason}" for u in unknowns(value)][:1]
                return [
                    Unknown(
                        raw.strip(),
                        f"the matrix is generated ({raw.strip()} at {loc.file}:{loc.line})"
                        f"{''.join(why)}; bind each matrix.KEY a name uses",
                    )
                ]
            if not any(k not in ("include", "exclude") for k in value) and not value.get("include"):
                return []  # `{include: []}`: GitHub runs no row of it (note_halted)
            raw = value
        matrix = as_mapping(doc, mpath, raw, "strategy.matrix")
        rows = expand(doc, mpath, matrix, scope)
        if isinstance(rows, Unknown):
            return [rows]
        return list(rows)

    def call(self, site: Site, job: Job, scope: Scope) -> None:
        """A job that calls a reusable workflow: its `with:` become the callee's inputs."""
        assert job.uses is not None
        target = job.uses.local
        if target is None:
            return
        where = job.uses.loc
        self.charge(site.doc, job.at("uses"))
        callee = self.files.workflow(target, where)
        inputs: dict[str, Value] = {}
        for name, spec in callee.call_inputs.items():
            if isinstance(spec, dict) and "default" in spec:
                inputs[name] = Scope(self, callee.doc).evaluate(
                    spec["default"], ("on", "workflow_call", "inputs", name, "default")
                )
            else:
                inputs[name] = None
        for name, raw in job.given.items():
            inputs[str(name)] = scope.evaluate(raw, job.at("with", name))
        saved = self.caller_rows
        self.caller_rows = (*saved, scope.matrix)
        try:
            self.workflow(
                target,
                inputs,
                (*site.callers, site.job),
                site.depth + 1,
                where,
                (site.runs, site.why),
                site.kinds,
            )
        finally:
            self.caller_rows = saved

    def job_steps(self, site: Site, workflow: Workflow, job: Job, scope: Scope) -> None:
        scope = Scope(
            self,
            site.doc,
            matrix=scope.matrix,
            inputs=scope.inputs,
            env=scope.env,
            steps=site.outputs,
            needs=scope.needs,
            strategy=scope.strategy,
            runner=self.runner_label(job, scope),
        )
        folder = job.defaults.working_directory or workflow.defaults.working_directory
        if folder is not None:
            where = job.at("defaults") if job.defaults.working_directory else ("defaults",)
            site = replace(site, folder=shown(text_value(scope.evaluate(folder, where))))
        self.steps(site, job.steps, scope, self.default_shell(workflow, job, scope))

    def runner_label(self, job: Job, scope: Scope) -> str | None:
        """The one label of the job's ``runs-on`` in this row, where it is one known text
        (``runner.os`` and ``runner.arch`` follow from it); None otherwise."""
        if job.runs_on is None or isinstance(job.runs_on, dict):
            return None
        value = scope.evaluate(job.runs_on, job.at("runs-on"))
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        return str(value) if isinstance(value, str) else None

    def default_shell(self, workflow: Workflow, job: Job, scope: Scope) -> str:
        """The shell of a ``run:`` without ``shell:``: the job's ``defaults.run.shell``,
        else the workflow's, else the runner's (pwsh on a ``windows-*`` runner; bash
        where the runner is not known)."""
        for defaults in (job.defaults, workflow.defaults):
            if defaults.shell is not None:
                return defaults.shell
        if isinstance(job.runs_on, str):
            value = scope.evaluate(job.runs_on, job.at("runs-on"))
            if isinstance(value, str) and value.lower().startswith("windows"):
                return "pwsh"
        return "bash"

    def steps(self, site: Site, steps: Sequence[Step], scope: Scope, shell: str = "bash") -> None:
        doc = site.doc
        for step in steps:
            self.charge(doc, step.path)
            step_env = self.env_layer(doc, step.at("env"), step.env, scope)
            here = scope.with_env(scope.env.child(step_env))
            runs, why, kinds = site.runs, site.why, site.kinds
            if runs:
                runs, why = self.condition(here, step.condition, step.at("if"))
                kinds = self.run_kinds(here, step.condition, step.at("if"), kinds)
            at = (
                site
                if runs == site.runs and kinds == site.kinds
                else replace(site, runs=runs, why=why, kinds=kinds)
            )
            if step.uses is not None:
                self.uses(at, step, here)
            if step.run is not None:
                command = stagegate_command(step.raw)
                if command:
                    self.stagegate_step(at, step, command)
                used = step.shell or shell
                read = False
                if used.split()[:1] in (["pwsh"], ["powershell"]):
                    PowerShell(self, at, step.at("run"), step.run, here).run()
                else:
                    reading = Shell(
                        self, at, step.at("run"), step.run, here, folder=step.working_directory
                    )
                    self.step_now = (at, step, here)
                    reading.run()
                    read = reading.complete
                self.on_run(at, step, here, read=read)

    def on_run(self, site: Site, step: Step, scope: Scope, *, read: bool) -> None:
        """A ``run:`` step was read (``continuity`` reads its publish commands); ``read``:
        the shell reader read its script to the end (it told ``on_command`` its commands)."""

    def on_files(
        self, site: Site, loc: Loc, words: list[Value], fetch: Transfer | None, cwd: Value = "."
    ) -> None:
        """A script moved or downloaded files, where it is (``continuity`` follows them)."""

    def on_command(self, site: Site, command: Command) -> None:
        """A script ran a command that builds wheels, or copies or moves files (``ci.builds``)."""

    def wants_script(self, site: Site, text: str) -> bool:
        """Whether a script no transfer makes worth reading is read for ``on_command``."""
        return False

    def identifiers(self, command: Command) -> Value:
        """What ``cibuildwheel --print-build-identifiers`` prints: not computed by the
        model's reading (``continuity``'s reading computes it from the job's pin)."""
        return ghexpr.Unknown(
            "cibuildwheel --print-build-identifiers", "the output of cibuildwheel, not run here"
        )

    def on_uses(self, use: handlers.Use) -> None:
        """A ``uses:`` step was read (``continuity`` reads what the action does)."""

    def stagegate_step(self, site: Site, step: Step, command: list[str]) -> None:
        """A step that runs `stagegate flags` or `stagegate matrix P`: its outputs, and for
        `flags` the env it writes, when it runs at the stage."""
        if not site.runs:
            return
        if step.id is not None:
            site.outputs[step.id] = self.command_outputs(command)
        if command[0] == "flags":
            self.flags_env(site.written)

    def flags_env(self, written: dict[str, Any]) -> None:
        """`stagegate flags --format github` writes ENV=true|false for each flag with an env."""
        from stagegate.ci import ciflags
        from stagegate.engine.resolve import resolve

        pairs = ciflags.env_pairs(resolve(self.migration, self.stage))
        written.update(self.stage_reads.setdefault(("env",), pairs))

    def uses(self, site: Site, step: Step, scope: Scope) -> None:
        ref = step.uses
        assert ref is not None
        use = handlers.Use(self, site, step, scope)
        self.on_uses(use)
        handler = handlers.handler(ref)
        if handler is not None:
            for found in handler.transfers(use):
                self.add(found)
            return
        command = stagegate_command(step.raw)
        if command is not None:
            self.stagegate_step(site, step, command)
            return
        if ref.local is None:
            return
        action_file = self.action_file(ref.local, ref.loc)
        if action_file is None:
            return
        self.used_actions.add(action_file)
        action = self.files.action(action_file, ref.loc)
        inputs: dict[str, Value] = {}
        defaults = Scope(self, action.doc, env=scope.env, in_action=True, runner=scope.runner)
        for key, spec in action.inputs.items():
            inputs[str(key)] = (
                defaults.evaluate(spec.get("default"), ("inputs", key, "default"))
                if isinstance(spec, dict)
                else None
            )
        for key, raw in step.given.items():
            inputs[str(key)] = scope.evaluate(raw, step.at("with", key))
        if site.depth + 1 > MAX_CALL_DEPTH:
            raise invalid(
                ref.loc, f"composite actions nest more than {MAX_CALL_DEPTH} deep; break the chain."
            )
        inner = Scope(
            self, action.doc, inputs=inputs, env=scope.env, in_action=True, runner=scope.runner
        )
        here = replace(site, rel=action_file, doc=action.doc, depth=site.depth + 1, outputs={})
        self.action_steps(here, action, inner)

    def action_file(self, target: str, loc: Loc) -> str | None:
        if target not in self.action_files:
            self.action_files[target] = self._action_file(target, loc)
        return self.action_files[target]

    def _action_file(self, target: str, loc: Loc) -> str | None:
        for name in ("action.yml", "action.yaml"):
            candidate = f"{target.rstrip('/')}/{name}"
            if self.files.is_file(candidate):
                return candidate
        if target.endswith((".yml", ".yaml")) and self.files.is_file(target):
            return None  # a reusable workflow used as a step: GitHub refuses it
        raise invalid(loc, f"no action.yml in {target}; fix the uses: path.")

    def action_steps(self, site: Site, action: Action, scope: Scope) -> None:
        """The steps of the composite action ``action``, where ``site`` says it is used."""
        if not action.composite:
            return
        written = site.written
        env = scope.env if written in scope.env.layers else scope.env.child(written)
        inner = Scope(
            self,
            action.doc,
            inputs=scope.inputs,
            env=env,
            steps=site.outputs,
            in_action=True,
            runner=scope.runner,
        )
        self.steps(site, action.steps, inner)


@functools.lru_cache(maxsize=16_384)
def _pieces(text: str, condition: bool) -> tuple[tuple[str, int], ...]:
    """``text`` as literal and ``${{ }}`` pieces (``ghexpr.split_text``); an `if:` without
    ``${{`` is one expression. Once per text: a step is read in every row and caller."""
    pieces = ghexpr.split_text(text)
    if condition and not any(p.startswith("${{") for p, _ in pieces):
        return (("${{ " + text + " }}", 0),)
    return tuple(pieces)


class _Quiet:
    """The reader, for steps read again for their outputs (``Reader.step_outputs``):
    what they transfer or leave unresolved is not noted a second time."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def add(self, transfer: Transfer) -> None:
        """Found where the job itself was read."""

    def note_unresolved(self, loc: Loc, value: Value) -> None:
        """Reported where the value is used."""

    def note_run(self, loc: Loc, value: Value) -> None:
        """Reported where the download is read."""

    def on_files(
        self, site: Site, loc: Loc, words: list[Value], fetch: Transfer | None, cwd: Value = "."
    ) -> None:
        """Followed where the job itself was read."""

    def on_command(self, site: Site, command: Command) -> None:
        """Told where the job itself was read."""


# --------------------------------------------------------------------------- entry points


def same_at(migration: Migration, stage: int, stage_reads: Mapping[tuple[Any, ...], Any]) -> bool:
    """Whether a reading that took ``stage_reads`` from its stage reads alike at ``stage``:
    each bind's ``when``, each `stagegate flags`/`matrix` step's outputs and the env
    `stagegate flags` writes have the same value there. (The stage's number also appears
    in the ``off`` of a transfer whose `if:` is false: ``Reading.at`` rewrites it.)"""
    from stagegate.ci import ciflags
    from stagegate.engine.resolve import resolve

    flags = flag_table(migration)[stage]
    for key, value in stage_reads.items():
        if key[0] == "when":
            now: Any = key[1].evaluate(flags)
        elif key[0] == "command":
            now = outputs_at(migration, stage, list(key[1]))
        else:
            now = ciflags.env_pairs(resolve(migration, stage))
        if now != value:
            return False
    return True


def read(
    migration: Migration,
    stage: int,
    files: Files | None = None,
    *,
    tag_matrix: bool = False,
    stage_reads: dict[tuple[Any, ...], Any] | None = None,
) -> Reading:
    """What the workflows upload and download at ``stage``; InvalidInput for a bad file.

    ``tag_matrix`` (for ``init``): matrix values become ``Ph(key, value)`` pieces.
    ``stage_reads``: filled with what the reading took from the stage (``same_at``)."""
    files = files or files_for(migration)
    settings = migration.workflows
    rels = discover(files.root, settings.paths)
    if not rels:
        raise nothing_found(files, settings.paths, settings.paths_loc, migration.file)
    reader = Reader(migration, stage, files, tag_matrix=tag_matrix)
    reader.run(rels)
    if stage_reads is not None:
        stage_reads.update(reader.stage_reads)
    return reading_of(reader)


def reading_of(reader: Reader) -> Reading:
    """What a reader that has run found (``ci.ships`` reads with a subclass)."""
    stage, files = reader.stage, reader.files
    transfers = sorted(
        reader.transfers.values(),
        key=lambda t: (t.loc, t.direction, t.job, t.callers, shown(t.value)),
    )
    return Reading(
        stage=stage,
        transfers=tuple(transfers),
        unresolved=tuple(sorted(reader.unresolved.values(), key=lambda u: (u.loc, u.expression))),
        jobs=dict(reader.jobs),
        files=tuple(sorted(files.docs)),
        generated=frozenset(reader.generated),
        dispatch=dict(reader.dispatch),
        halted=tuple(reader.halted.values()),
    )


def matches_job(ref: str, transfer: Transfer) -> bool:
    """Whether a `jobs` entry names the job of a transfer (or a job that calls into it)."""
    return any(
        fnmatch.fnmatchcase(job, ref) if "*" in ref else job == ref for job in transfer.jobs()
    )
