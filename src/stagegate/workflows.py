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
and expression and reported as unresolved: never guessed. Scripts are parsed with
``shlex``, never run. Nothing here prints or exits.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from . import ghexpr
from .errors import InvalidInput, Loc, LocatedError, Problem
from .ghexpr import Ph, Sym, Unknown, Value, concat, truth, unknowns
from .model import Migration
from .records import field, record, replace
from .resolve import flag_table
from .yamlsrc import Document, decode
from .yamlsrc import Path as DocPath
from .yamlsrc import read as read_yaml

MAX_FILES = 2_000
"""Most workflow and action files read."""
MAX_MATRIX = 256
"""Most jobs one matrix may make (GitHub's own limit)."""
MAX_MATRIX_PRODUCT = 10_000
"""Most combinations a matrix may have before its excludes are applied."""
MAX_CALL_DEPTH = 10
"""Deepest chain of reusable-workflow calls and composite actions followed."""
MAX_EVALUATIONS = 200_000
"""Most step evaluations (steps x matrix rows x calls) of one reading."""
MAX_LOOP = 1_000
MAX_SCRIPT = 100_000
"""Longest ``run:`` script read (characters)."""
"""Most values a shell ``for`` loop is expanded over."""

UPLOAD = "actions/upload-artifact"
DOWNLOAD = "actions/download-artifact"
MERGE = "actions/upload-artifact/merge"
THIS_RUN = "\ue002github.run_id\ue003"
"""The value of ``github.run_id``: downloads from it read the run's own artifacts."""
_ENV_FILE = "\ue002GITHUB_ENV\ue003"
_OUT_FILE = "\ue002GITHUB_OUTPUT\ue003"


def output_name(flag: str) -> str:
    """The output ``stagegate flags --format github`` writes for a flag."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", flag)


# --------------------------------------------------------------------------- results


@record(kw_only=True)
class Transfer:
    """One upload or download of one step, as evaluated in one context."""

    direction: str  # "upload" or "download"
    loc: Loc
    job: str  # PATH#JOB of the job the step runs in
    callers: tuple[str, ...] = ()  # the jobs that call into it (reusable workflows)
    value: Value  # the evaluated name or glob: str, or ghexpr.Sym
    kind: str = "name"  # "name" (exact) or "pattern" (a glob; "*" for every artifact)
    run: str = "this"  # "this", or the expression of the other run it reads
    active: bool = True
    off: str = ""  # why it does not run at this stage (the `if:` that is false)
    exclude: tuple[Value, ...] = ()
    """Globs of what the script removes after a pattern download (``rm -rf NAME``)."""

    @property
    def resolved(self) -> bool:
        return not unknowns(self.value)

    def jobs(self) -> tuple[str, ...]:
        return (self.job, *self.callers)

    def text(self) -> str:
        return shown(self.value)


@record
class Unresolved:
    loc: Loc
    expression: str
    reason: str


@record(kw_only=True)
class Job:
    id: str  # PATH#JOB
    loc: Loc


@record(kw_only=True, eq=False)
class Reading:
    stage: int
    transfers: tuple[Transfer, ...]
    unresolved: tuple[Unresolved, ...]
    jobs: Mapping[str, Job]
    files: tuple[str, ...]
    generated: frozenset[str] = frozenset()
    """The keys read from matrices that are generated (``matrix: ${{ fromJSON(...) }}``)."""

    @property
    def uploads(self) -> list[Transfer]:
        return [t for t in self.transfers if t.direction == "upload"]

    @property
    def downloads(self) -> list[Transfer]:
        return [t for t in self.transfers if t.direction == "download"]


@record(eq=False)
class _Site:
    """Where a list of steps runs, as the reader walks into jobs, calls and actions."""

    rel: str  # the workflow or action file the steps are in
    doc: Document
    job: str  # PATH#JOB of the job they run in
    callers: tuple[str, ...]  # the jobs that call into it (reusable workflows)
    depth: int  # how many calls and composite actions deep
    runs: bool = True
    why: str = ""  # why they do not run at the stage (the `if:` that is false)
    outputs: dict[str, dict[str, Value]] = field(default_factory=dict)
    """``steps.ID.outputs`` known so far (of ``stagegate flags``/``matrix`` steps)."""
    written: dict[str, Any] = field(default_factory=dict)
    """What the job's steps have written to ``$GITHUB_ENV`` so far."""

    def transfer(
        self, direction: str, loc: Loc, value: Value, kind: str = "name", run: str = "this"
    ) -> Transfer:
        """An upload or download of a step here, of the name or glob ``value``."""
        return Transfer(
            direction=direction,
            loc=loc,
            job=self.job,
            callers=self.callers,
            value=_text_value(value),
            kind=kind,
            run=run,
            active=self.runs,
            off=self.why,
        )


def shown(value: Value) -> str:
    """A name as text: placeholders as ``{axis}``, unknown pieces as their expression."""
    if isinstance(value, Sym):
        return "".join(
            p if isinstance(p, str) else "{" + p.axis + "}" if isinstance(p, Ph) else p.expression
            for p in value.parts
        )
    if isinstance(value, Unknown):
        return value.expression
    if isinstance(value, Ph):
        return "{" + value.axis + "}"
    return ghexpr.to_text(value)


# --------------------------------------------------------------------------- files


def _problem(loc: Loc, message: str) -> InvalidInput:
    return InvalidInput([Problem(loc, message)])


def discover(root: Path, patterns: Sequence[str]) -> list[str]:
    """The files (POSIX, relative to ``root``) that the ``workflows.paths`` globs match."""
    found: set[str] = set()
    resolved_root = root.resolve()
    for pattern in patterns:
        posix = PurePosixPath(pattern)
        if posix.is_absolute() or ".." in posix.parts:
            continue  # refused by load with its location
        try:
            matches = list(root.glob(pattern))
        except (ValueError, OSError):
            continue
        for path in matches:
            if len(found) > MAX_FILES:
                raise _problem(
                    Loc(str(path.relative_to(root).as_posix()), 1, 1),
                    f"workflows.paths match more than {MAX_FILES:,} files; "
                    "narrow the globs under workflows.paths.",
                )
            try:
                if not path.is_file():
                    continue
                target = path.resolve()
            except OSError:
                continue
            if target != resolved_root and resolved_root not in target.parents:
                continue  # a symbolic link out of the repository is not read
            found.add(path.relative_to(root).as_posix())
    return sorted(found)


class Files:
    """Parsed workflow and action files, each read once."""

    def __init__(self, root: Path) -> None:
        from .cache import ValidCache

        self.root = root
        self.cache = ValidCache()
        self.docs: dict[str, Document] = {}
        self.texts: dict[str, list[str]] = {}

    def get(self, rel: str, where: Loc | None = None) -> Document:
        """``rel``'s document; InvalidInput (at ``where``, what refers to it) where it
        cannot be read or parsed."""
        try:
            return self.document(rel, where)
        except FileNotFoundError:
            raise _problem(
                where or Loc(rel, 1, 1),
                f"{rel}: no such file; fix the reference or add the file.",
            ) from None
        except IsADirectoryError:
            raise _problem(where or Loc(rel, 1, 1), f"{rel} is a folder, not a file.") from None
        except OSError as exc:
            raise _problem(
                where or Loc(rel, 1, 1), f"{rel}: cannot read: {exc.strerror or exc}"
            ) from None

    def document(self, rel: str, where: Loc | None = None, *, name: str | None = None) -> Document:
        """``rel`` read (within the read limit) and parsed once, through the document cache;
        ``name`` is the file its locations name (``rel``: a path git gives may not be text).
        OSError where it cannot be read; InvalidInput where it leads outside the
        repository or is not a workflow's YAML."""
        if rel in self.docs:
            return self.docs[rel]
        from .load import read_limited

        shown = name or rel
        path = self.root / rel
        resolved = path.resolve()
        root = self.root.resolve()
        if resolved != root and root not in resolved.parents:
            raise _problem(
                where or Loc(shown, 1, 1),
                f"{shown} leads outside the repository (a symbolic link); "
                "stagegate reads nothing from outside it.",
            )
        raw = read_limited(path)
        doc = self.cache.document(raw, shown)
        if doc is None:
            doc = read_yaml(raw, shown)
            self.cache.store_document(raw, doc)
        self.docs[rel] = doc
        self.texts[shown] = decode(raw, shown).splitlines()
        return doc

    def block_offset(self, doc: Document, path: DocPath) -> int:
        """1 when the value at ``path`` is a block scalar (its text starts on the next line)."""
        loc = doc.loc(path)
        lines = self.texts.get(doc.file, [])
        if 0 < loc.line <= len(lines):
            char = lines[loc.line - 1][loc.col - 1 : loc.col]
            return 1 if char in ("|", ">") else 0
        return 0


# --------------------------------------------------------------------------- structure


def _mapping(doc: Document, path: DocPath, value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _problem(doc.loc(path), f"{what} must be a mapping (key: value); fix the workflow.")
    return value


def _list(doc: Document, path: DocPath, value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _problem(doc.loc(path), f"{what} must be a list; fix the workflow.")
    return value


def _root_inputs(
    rel: str, data: dict[str, Any], triggers: set[str]
) -> Mapping[str, Value] | Unknown:
    """The inputs of a workflow that starts a run: chosen by whoever dispatches it, else none.

    A `workflow_call` workflow that nobody read here calls gets them from an unknown
    caller; a push or schedule run has an empty inputs context (each input is null)."""
    if triggers == {"workflow_call"}:
        return Unknown("inputs", f"no workflow read here calls {rel}; bind its inputs")
    on = data.get("on")
    dispatch = on.get("workflow_dispatch") if isinstance(on, dict) else None
    if isinstance(dispatch, dict) and dispatch.get("inputs"):
        return Unknown(
            "inputs",
            f"{rel} is started by workflow_dispatch, whose inputs are chosen then; bind them",
        )
    return {}


def _triggers(data: dict[str, Any]) -> set[str]:
    on = data.get("on")
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return {str(t) for t in on}
    if isinstance(on, dict):
        return {str(t) for t in on}
    return set()


def _call_inputs(data: dict[str, Any]) -> dict[str, Any]:
    on = data.get("on")
    if isinstance(on, dict) and isinstance(on.get("workflow_call"), dict):
        inputs = on["workflow_call"].get("inputs")
        if isinstance(inputs, dict):
            return inputs
    return {}


def _local(uses: str, base: str) -> str | None:
    """The repository path of a local ``uses: ./...`` reference (None: not local)."""
    if not uses.startswith("./"):
        return None
    rel = PurePosixPath(uses[2:].split("@", 1)[0])
    if ".." in rel.parts or rel.is_absolute():
        return None
    return rel.as_posix()


def _action_name(uses: str) -> str:
    return uses.split("@", 1)[0].strip().lower()


# --------------------------------------------------------------------------- scopes


class _Env:
    """Environment layers: workflow, job, `$GITHUB_ENV` writes, step; nearest wins."""

    def __init__(self, layers: Sequence[Mapping[str, Any]]) -> None:
        self.layers = list(layers)

    def get(self, name: str) -> Any:
        for layer in reversed(self.layers):
            if name in layer:
                return layer[name]
        return NotImplemented

    def child(self, layer: Mapping[str, Any]) -> _Env:
        return _Env([*self.layers, layer])


class _Lazy:
    """An env entry evaluated on first use, in the scope that declares it."""

    __slots__ = ("done", "evaluate", "value")

    def __init__(self, evaluate: Any) -> None:
        self.evaluate = evaluate
        self.done = False
        self.value: Value = None

    def get(self) -> Value:
        if not self.done:
            self.done = True
            self.value = Unknown("env", "an env value that refers to itself")
            self.value = self.evaluate()
        return self.value


class _Scope:
    """What a value's expressions can see, where it is written."""

    def __init__(
        self,
        reader: _Reader,
        doc: Document,
        *,
        matrix: Value = None,
        inputs: Mapping[str, Value] | Unknown | None = None,
        env: _Env | None = None,
        steps: Mapping[str, Mapping[str, Value]] | None = None,
        needs: Mapping[str, Any] | None = None,
        in_action: bool = False,
    ) -> None:
        self.reader = reader
        self.doc = doc
        self.matrix = matrix
        self.inputs = inputs
        self.env = env or _Env([])
        self.steps = steps if steps is not None else {}
        self.needs = needs if needs is not None else {}
        self.in_action = in_action
        self.job = reader.current_job

    def with_env(self, env: _Env) -> _Scope:
        return _Scope(
            self.reader,
            self.doc,
            matrix=self.matrix,
            inputs=self.inputs,
            env=env,
            steps=self.steps,
            needs=self.needs,
            in_action=self.in_action,
        )

    # -- look-ups

    def lookup(self, path: str) -> Value:
        bound = self.reader.bound(path, self)
        if bound is not NotImplemented:
            return bound
        head, _, rest = path.partition(".")
        head = head.lower()
        if head == "matrix":
            return self._matrix(path, rest)
        if head == "env":
            if not rest:
                return NotImplemented
            found = self.env_value(rest)
            return (
                found
                if found is not NotImplemented
                else Unknown(
                    path,
                    f"{path} is set in no env: of the step, job or workflow (a script stagegate "
                    f"does not read may write it to $GITHUB_ENV); bind {path}",
                )
                if not self.reader.env_writers.get(rest)
                else Unknown(path, self.reader.env_writers[rest])
            )
        if head == "inputs":
            if not rest:
                return NotImplemented
            if isinstance(self.inputs, Unknown):
                return Unknown(path, self.inputs.reason)
            if self.inputs is None:
                return Unknown(path, f"{path}: no workflow read here calls this one; bind it")
            for name, value in self.inputs.items():
                if name.lower() == rest.split(".")[0].lower():
                    return value if "." not in rest else NotImplemented
            return None if "." not in rest else NotImplemented
        if head == "github":
            name = rest.lower()
            if name == "run_id":
                return THIS_RUN
            if name == "workspace":
                return "."
            return Unknown(path, f"{path} depends on the event; bind it if a name uses it")
        if head == "steps":
            return self._steps(path, rest)
        if head == "needs":
            return self._needs(path, rest)
        if head in ("secrets", "vars", "runner", "job", "strategy", "jobs", "hashfiles"):
            return Unknown(path, f"{path} is not known from the YAML; bind it if a name uses it")
        return NotImplemented

    def env_value(self, name: str) -> Value:
        found = self.env.get(name)
        if isinstance(found, _Lazy):
            return found.get()
        return found

    def _matrix(self, path: str, rest: str) -> Value:
        if self.in_action:
            return Unknown(
                path, "matrix is not available in a composite action; pass it as an input"
            )
        if isinstance(self.matrix, Unknown):
            if rest:
                self.reader.generated.add(rest)
            return Unknown(path, self.matrix.reason)
        if self.matrix is None:
            return Unknown(path, f"{path}: the job has no strategy.matrix")
        if not rest:
            return self.matrix
        value: Any = self.matrix
        for key in rest.split("."):
            if not isinstance(value, dict):
                return None
            value = next((v for k, v in value.items() if k.lower() == key.lower()), None)
        if self.reader.tag_matrix and value is not None and not isinstance(value, dict | list):
            return ghexpr.Tagged(ghexpr.to_text(value), rest)
        return value

    def _steps(self, path: str, rest: str) -> Value:
        step, _, tail = rest.partition(".")
        outputs = self.steps.get(step)
        if outputs is not None and tail.lower().startswith("outputs."):
            name = tail[len("outputs.") :]
            if name in outputs:
                return outputs[name]
        return Unknown(path, f"{path}: a step's output is not known from the YAML; bind it")

    def _needs(self, path: str, rest: str) -> Value:
        job, _, tail = rest.partition(".")
        if not tail.lower().startswith("outputs."):
            return Unknown(path, f"{path} is not known from the YAML")
        name = tail[len("outputs.") :]
        outputs = self.needs.get(job)
        if outputs is None:
            return Unknown(path, f"{path}: job {job} is not in this job's needs, or not known")
        value = outputs(name)
        return value

    # -- evaluation

    def evaluate(self, text: Any, path: DocPath, *, condition: bool = False) -> Value:
        """The value of ``text`` (a YAML value) with its ``${{ }}`` expressions evaluated."""
        if not isinstance(text, str):
            return text
        return self.reader.interpolate(text, self, self.doc, path, condition=condition)


# --------------------------------------------------------------------------- the reader


class _Reader:
    def __init__(
        self, migration: Migration, stage: int, files: Files, *, tag_matrix: bool = False
    ) -> None:
        self.tag_matrix = tag_matrix
        self.generated: set[str] = set()
        self.migration = migration
        self.stage = stage
        self.files = files
        self.flags = flag_table(migration)[stage]
        self.transfers: dict[tuple[Any, ...], Transfer] = {}
        self.unresolved: dict[tuple[Loc, str], Unresolved] = {}
        self.jobs: dict[str, Job] = {}
        self.env_writers: dict[str, str] = {}
        self.evaluations = 0
        self.parsed: dict[str, ghexpr.Node] = {}
        self.used_actions: set[str] = set()
        self.current_job = ""
        self.binding: set[str] = set()
        self.scoped_binds = any(" " in key for key in migration.workflows.bind)

    # -- binds

    def bound(
        self, path: str, scope: _Scope | None = None, *, scoped: bool = True, bare: bool = True
    ) -> Value:
        """The bound value of ``path`` where ``scope`` is: a bind for its job (``PATH#JOB
        path``) before one for its file (``PATH path``) before a bare one (NotImplemented
        if none). ``scoped``/``bare`` choose which kinds are looked at."""
        binds = self.migration.workflows.bind
        bind = None
        if scoped and scope is not None and self.scoped_binds:
            for where in (scope.job, scope.doc.file, scope.job.partition("#")[0]):
                if where:
                    bind = binds.get(f"{where} {path}")
                    if bind is not None:
                        break
        if bind is None and bare:
            bind = binds.get(path)
        if bind is None:
            return NotImplemented
        if bind.when is not None:
            return bind.then if bind.when.evaluate(self.flags) else bind.otherwise
        assert bind.text is not None
        if bind.expressions:
            return self.expression_bind(bind.key, bind.text.text, scope)
        pieces: list[Value] = [
            part if isinstance(part, str) else Ph(part.axis) for part in bind.text.parts
        ]
        return concat(pieces)

    def expression_bind(self, key: str, text: str, scope: _Scope | None) -> Value:
        """A bind's text with its ``${{ }}`` evaluated where it is used."""
        from .templates import split

        if scope is None or key in self.binding:
            return Unknown(key, f"the bind {key!r} refers to itself or is used outside a step")
        self.binding.add(key)
        try:
            pieces: list[Value] = []
            for piece, _offset in ghexpr.split_text(text):
                if piece.startswith("${{"):
                    value = ghexpr.Evaluator(scope.lookup)(ghexpr.parse(piece[3:-2]))
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
        self, text: str, scope: _Scope, doc: Document, path: DocPath, *, condition: bool
    ) -> Value:
        at = 0
        try:
            pieces = ghexpr.split_text(text)
            if condition and not any(p.startswith("${{") for p, _ in pieces):
                pieces = [("${{ " + text + " }}", 0)]
            values: list[Value] = []
            at = 0
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
                value = ghexpr.Evaluator(scope.lookup)(node)
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
            raise _problem(where, f"invalid expression: {exc.message}") from None
        return concat(values)

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
        self.transfers.setdefault(key, transfer)

    def charge(self, doc: Document, path: DocPath) -> None:
        self.evaluations += 1
        if self.evaluations > MAX_EVALUATIONS:
            raise _problem(
                doc.loc(path),
                f"evaluating the workflows takes more than {MAX_EVALUATIONS:,} step evaluations "
                "(steps x matrix rows x calls); narrow workflows.paths or the matrices.",
            )

    # -- workflows

    def run(self, rels: Sequence[str]) -> None:
        called: set[str] = set()
        actions: set[str] = set()
        for rel in rels:
            doc = self.files.get(rel)
            if _is_action(doc.data):
                actions.add(rel)
                continue
            jobs = _mapping(doc, ("jobs",), doc.data.get("jobs"), "jobs")
            for job in jobs.values():
                if isinstance(job, dict) and isinstance(job.get("uses"), str):
                    target = _local(job["uses"], rel)
                    if target is not None:
                        called.add(target)
        for rel in rels:
            if rel in actions:
                continue
            doc = self.files.get(rel)
            for job_id in _mapping(doc, ("jobs",), doc.data.get("jobs"), "jobs"):
                self.jobs[f"{rel}#{job_id}"] = Job(
                    id=f"{rel}#{job_id}", loc=doc.key_loc(("jobs", job_id))
                )
            triggers = _triggers(doc.data)
            if rel not in called or triggers - {"workflow_call"}:
                self.workflow(rel, _root_inputs(rel, doc.data, triggers), (), 0)
        for rel in sorted(actions):
            if rel not in self.used_actions:
                doc = self.files.get(rel)
                scope = _Scope(
                    self,
                    doc,
                    inputs=Unknown(
                        "inputs", f"inputs: no workflow read here uses {rel}; bind them"
                    ),
                    in_action=True,
                )
                self.action_steps(_Site(rel=rel, doc=doc, job=rel, callers=(), depth=0), scope)

    def workflow(
        self,
        rel: str,
        inputs: Mapping[str, Value] | Unknown | None,
        callers: tuple[str, ...],
        depth: int,
        where: Loc | None = None,
        parent: tuple[bool, str] = (True, ""),
    ) -> None:
        doc = self.files.get(rel, where)
        if depth > MAX_CALL_DEPTH or rel in (c.partition("#")[0] for c in callers):
            raise _problem(
                where or doc.loc(()),
                f"reusable workflows call each other more than {MAX_CALL_DEPTH} deep, or in a "
                f"cycle ({' -> '.join((*callers, rel))}); break the chain.",
            )
        data = doc.data
        wf_env = self.env_layer(doc, ("env",), data.get("env"), _Scope(self, doc, inputs=inputs))
        jobs = _mapping(doc, ("jobs",), data.get("jobs"), "jobs")
        saved = self.current_job
        try:
            for job_id, spec in jobs.items():
                self.current_job = f"{rel}#{job_id}"
                site = _Site(rel, doc, self.current_job, callers, depth, *parent)
                self.job(site, job_id, spec, jobs, inputs, wf_env)
        finally:
            self.current_job = saved

    def job(
        self,
        site: _Site,
        job_id: str,
        spec: Any,
        jobs: Mapping[str, Any],
        inputs: Mapping[str, Value] | Unknown | None,
        wf_env: dict[str, Any],
    ) -> None:
        """One job of a workflow, in each row of its matrix."""
        doc = site.doc
        jpath: DocPath = ("jobs", job_id)
        job = _mapping(doc, jpath, spec, f"job {job_id}")
        self.jobs.setdefault(site.job, Job(id=site.job, loc=doc.key_loc(jpath)))
        needs = self.needs_of(site.rel, doc, jobs, job, inputs, wf_env)
        base = _Scope(self, doc, inputs=inputs, env=_Env([wf_env]), needs=needs)
        active, off = site.runs, site.why
        if active:
            active, off = self.condition(base, job.get("if"), (*jpath, "if"))
        for row in self.matrix_rows(doc, jpath, job, base):
            scope = _Scope(self, doc, matrix=row, inputs=inputs, env=_Env([wf_env]), needs=needs)
            job_env = self.env_layer(doc, (*jpath, "env"), job.get("env"), scope)
            written: dict[str, Any] = {}
            scope = scope.with_env(_Env([wf_env, job_env, written]))
            here = replace(site, runs=active, why=off, outputs={}, written=written)
            if isinstance(job.get("uses"), str):
                self.call(here, jpath, job, scope)
                continue
            self.job_steps(here, jpath, job, scope)

    def needs_of(
        self,
        rel: str,
        doc: Document,
        jobs: Mapping[str, Any],
        job: Mapping[str, Any],
        inputs: Mapping[str, Value] | Unknown | None,
        wf_env: Mapping[str, Any],
    ) -> dict[str, Any]:
        """``needs.J.outputs.K`` for the jobs this one needs: their `outputs:` evaluated."""
        raw = job.get("needs")
        names = (
            [raw]
            if isinstance(raw, str)
            else [n for n in raw if isinstance(n, str)]
            if isinstance(raw, list)
            else []
        )
        out: dict[str, Any] = {}
        for name in names:
            other = jobs.get(name)
            if not isinstance(other, dict):
                continue

            def outputs(key: str, other: dict[str, Any] = other, name: str = name) -> Value:
                declared = other.get("outputs")
                if not isinstance(declared, dict) or key not in declared:
                    return Unknown(
                        f"needs.{name}.outputs.{key}", f"job {name} declares no output {key}"
                    )
                if other.get("strategy") is not None or isinstance(other.get("uses"), str):
                    return Unknown(
                        f"needs.{name}.outputs.{key}",
                        f"job {name} runs a matrix or a reusable workflow; bind needs.{name}.outputs.{key}",
                    )
                scope = _Scope(
                    self,
                    doc,
                    inputs=inputs,
                    env=_Env([wf_env]),
                    steps=self.flag_steps(doc, ("jobs", name), other),
                )
                scope.job = f"{rel}#{name}"
                return scope.evaluate(declared[key], ("jobs", name, "outputs", key))

            out[name] = outputs
        return out

    def flag_steps(
        self, doc: Document, jpath: DocPath, job: Mapping[str, Any]
    ) -> dict[str, dict[str, Value]]:
        """The outputs of the job's `stagegate flags` steps, at the stage."""
        found: dict[str, dict[str, Value]] = {}
        steps = job.get("steps")
        if not isinstance(steps, list):
            return found
        for step in steps:
            if isinstance(step, dict) and isinstance(step.get("id"), str):
                command = _stagegate_command(step)
                if command:
                    found[step["id"]] = self.command_outputs(command)
        return found

    def command_outputs(self, command: list[str]) -> dict[str, Value]:
        """The step outputs a `stagegate flags` or `stagegate matrix P` step writes, at the stage."""
        from . import ciflags
        from .errors import StagegateError
        from .resolve import resolve

        plan = resolve(self.migration, self.stage)
        if command[0] == "flags":
            try:
                return dict(ciflags.github_outputs(plan))
            except StagegateError:
                return {}
        if command[0] == "matrix" and len(command) > 1:
            try:
                found = ciflags.matrix(self.migration, command[1], self.stage)
            except StagegateError:
                return {
                    "matrix": Unknown(
                        f"stagegate matrix {command[1]}",
                        f"{command[1]} is not a producer of the model; fix the step's command",
                    )
                }
            return {"matrix": ciflags.compact(found)}
        return {}

    def env_layer(self, doc: Document, path: DocPath, raw: Any, scope: _Scope) -> dict[str, Any]:
        if isinstance(raw, str):
            return {}  # env: ${{ fromJSON(...) }}: nothing known by name
        env = _mapping(doc, path, raw, "env")
        return {
            str(key): _Lazy(
                lambda key=key, value=value: _text_value(scope.evaluate(value, (*path, key)))
            )
            for key, value in env.items()
        }

    def condition(self, scope: _Scope, raw: Any, path: DocPath) -> tuple[bool, str]:
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

    def matrix_rows(
        self, doc: Document, jpath: DocPath, job: Mapping[str, Any], scope: _Scope
    ) -> list[Value]:
        strategy = job.get("strategy")
        if strategy is None:
            return [None]
        spath: DocPath = (*jpath, "strategy")
        if isinstance(strategy, str):
            value = scope.evaluate(strategy, spath)
            strategy = value if isinstance(value, dict) else {"matrix": strategy}
        strategy = _mapping(doc, spath, strategy, "strategy")
        raw = strategy.get("matrix")
        mpath: DocPath = (*spath, "matrix")
        if raw is None:
            return [None]
        if isinstance(raw, str):
            value = scope.evaluate(raw, mpath)
            if not isinstance(value, dict):
                loc = doc.loc(mpath)
                return [
                    Unknown(
                        raw.strip(),
                        f"the matrix is generated ({raw.strip()} at {loc.file}:{loc.line}); bind each matrix.KEY a name uses",
                    )
                ]
            raw = value
        matrix = _mapping(doc, mpath, raw, "strategy.matrix")
        rows = self.expand(doc, mpath, matrix, scope)
        if isinstance(rows, Unknown):
            return [rows]
        return list(rows)

    def expand(
        self, doc: Document, path: DocPath, matrix: Mapping[str, Any], scope: _Scope
    ) -> list[dict[str, Any]] | Unknown:
        """GitHub's matrix: the product of the lists, minus `exclude`, with `include` merged."""

        def evaluated(key: str, what: str, bind: str) -> Value:
            """``matrix[key]`` evaluated; an Unknown saying where, if it is generated."""
            raw = matrix.get(key)
            value = scope.evaluate(raw, (*path, key)) if isinstance(raw, str) else raw
            if isinstance(value, Unknown | Sym):
                loc = doc.loc((*path, key))
                return Unknown(
                    str(raw).strip(), f"{what} is generated ({loc.file}:{loc.line}); bind {bind}"
                )
            return value

        axes: list[tuple[str, list[Any]]] = []
        product = 1
        for key in matrix:
            if key in ("include", "exclude"):
                continue
            value = evaluated(key, f"matrix.{key}", f"matrix.{key}")
            if isinstance(value, Unknown):
                return value
            values = value if isinstance(value, list) else [value]
            product *= max(len(values), 1)
            if product > MAX_MATRIX_PRODUCT:
                raise _problem(
                    doc.loc((*path, key)),
                    f"this matrix has more than {MAX_MATRIX_PRODUCT:,} combinations; GitHub runs "
                    f"at most {MAX_MATRIX} jobs per matrix: use fewer values.",
                )
            axes.append((key, values))
        rows: list[dict[str, Any]] = [{}]
        for key, values in axes:
            rows = [{**row, key: v} for row in rows for v in values]
        if not axes:
            rows = []
        extras: list[Any] = []
        for key in ("exclude", "include"):
            value = evaluated(key, f"matrix {key}", "the matrix.KEY a name uses")
            if isinstance(value, Unknown):
                return value
            entries = _list(doc, (*path, key), value, f"matrix {key}")
            if key == "exclude":
                for entry in entries:
                    if isinstance(entry, dict):
                        rows = [r for r in rows if not _partial_match(r, entry)]
            else:
                extras = entries
        originals = {k for k, _ in axes}
        product_rows = list(rows)  # includes merge into these only, never into added rows
        for entry in extras:
            if not isinstance(entry, dict):
                raise _problem(
                    doc.loc((*path, "include")), "each matrix include must be a mapping."
                )
            merged = False
            for row in product_rows:
                if all(_same(row.get(k), v) for k, v in entry.items() if k in originals):
                    row.update(
                        {k: v for k, v in entry.items() if k not in originals or k not in row}
                    )
                    merged = True
            if not merged:
                rows.append(dict(entry))
        if len(rows) > MAX_MATRIX:
            raise _problem(
                doc.loc(path),
                f"this matrix makes {len(rows):,} jobs; GitHub runs at most {MAX_MATRIX} per matrix: "
                "use fewer values.",
            )
        return rows or [{}]

    def call(self, site: _Site, jpath: DocPath, job: Mapping[str, Any], scope: _Scope) -> None:
        """A job that calls a reusable workflow: its `with:` become the callee's inputs."""
        doc = site.doc
        uses = job["uses"]
        target = _local(uses, site.rel)
        if target is None:
            return
        self.charge(doc, (*jpath, "uses"))
        callee = self.files.get(target, doc.loc((*jpath, "uses")))
        declared = _call_inputs(callee.data)
        given = _mapping(doc, (*jpath, "with"), job.get("with"), "with")
        inputs: dict[str, Value] = {}
        for name, spec in declared.items():
            if isinstance(spec, dict) and "default" in spec:
                inputs[name] = _Scope(self, callee).evaluate(
                    spec["default"], ("on", "workflow_call", "inputs", name, "default")
                )
            else:
                inputs[name] = None
        for name, raw in given.items():
            inputs[str(name)] = scope.evaluate(raw, (*jpath, "with", name))
        self.workflow(
            target,
            inputs,
            (*site.callers, site.job),
            site.depth + 1,
            doc.loc((*jpath, "uses")),
            (site.runs, site.why),
        )

    def job_steps(self, site: _Site, jpath: DocPath, job: Mapping[str, Any], scope: _Scope) -> None:
        steps = _list(site.doc, (*jpath, "steps"), job.get("steps"), "steps")
        scope = _Scope(
            self,
            site.doc,
            matrix=scope.matrix,
            inputs=scope.inputs,
            env=scope.env,
            steps=site.outputs,
            needs=scope.needs,
        )
        self.steps(site, (*jpath, "steps"), steps, scope)

    def steps(self, site: _Site, spath: DocPath, steps: list[Any], scope: _Scope) -> None:
        doc = site.doc
        for i, raw in enumerate(steps):
            path: DocPath = (*spath, i)
            step = _mapping(doc, path, raw, "a step")
            self.charge(doc, path)
            step_env = self.env_layer(doc, (*path, "env"), step.get("env"), scope)
            here = scope.with_env(scope.env.child(step_env))
            runs, why = site.runs, site.why
            if runs:
                runs, why = self.condition(here, step.get("if"), (*path, "if"))
            at = site if runs == site.runs else replace(site, runs=runs, why=why)
            uses = step.get("uses")
            if isinstance(uses, str):
                self.uses(at, path, step, uses, here)
            run = step.get("run")
            if isinstance(run, str):
                command = _stagegate_command(step)
                if command:
                    self.stagegate_step(at, step, command)
                _Shell(self, at, (*path, "run"), run, here).run()

    def stagegate_step(self, site: _Site, step: Mapping[str, Any], command: list[str]) -> None:
        """A step that runs `stagegate flags` or `stagegate matrix P`: its outputs, and for
        `flags` the env it writes, when it runs at the stage."""
        if not site.runs:
            return
        if isinstance(step.get("id"), str):
            site.outputs[step["id"]] = self.command_outputs(command)
        if command[0] == "flags":
            self.flags_env(site.written)

    def flags_env(self, written: dict[str, Any]) -> None:
        """`stagegate flags --format github` writes ENV=true|false for each flag with an env."""
        from . import ciflags
        from .resolve import resolve

        written.update(ciflags.env_pairs(resolve(self.migration, self.stage)))

    def uses(
        self, site: _Site, path: DocPath, step: Mapping[str, Any], uses: str, scope: _Scope
    ) -> None:
        doc = site.doc
        name = _action_name(uses)
        given = _mapping(doc, (*path, "with"), step.get("with"), "with")
        loc = doc.loc((*path, "uses"))

        def transfer(
            direction: str, key: str, default: str, kind: str = "name", run: str = "this"
        ) -> None:
            """The artifact step's ``with.<key>`` (or ``default``), at its own line."""
            at = (*path, "with", key)
            if key in given:
                self.add(
                    site.transfer(direction, doc.loc(at), scope.evaluate(given[key], at), kind, run)
                )
            else:
                self.add(site.transfer(direction, loc, default, kind, run))

        if name == UPLOAD:
            transfer("upload", "name", "artifact")
            return
        if name == MERGE:
            # reads the run's artifacts that `pattern` matches (all, without one) and
            # uploads them as one artifact, `name` (default merged-artifacts)
            transfer("download", "pattern", "*", kind="pattern")
            transfer("upload", "name", "merged-artifacts")
            return
        if name == DOWNLOAD:
            run = "this"
            if "run-id" in given:
                run_value = scope.evaluate(given["run-id"], (*path, "with", "run-id"))
                if run_value != THIS_RUN:
                    run = ghexpr.to_text(given["run-id"]).strip()
            if "name" in given:
                transfer("download", "name", "", run=run)
            else:  # a pattern, or without one every artifact of the run
                transfer("download", "pattern", "*", kind="pattern", run=run)
            return
        command = _stagegate_command(step)
        if command is not None:
            self.stagegate_step(site, step, command)
            return
        target = _local(uses, site.rel)
        if target is None:
            return
        action_file = self.action_file(target, loc)
        if action_file is None:
            return
        self.used_actions.add(action_file)
        action = self.files.get(action_file, loc)
        declared = action.data.get("inputs")
        inputs: dict[str, Value] = {}
        if isinstance(declared, dict):
            for key, spec in declared.items():
                inputs[str(key)] = (
                    _Scope(self, action, env=scope.env, in_action=True).evaluate(
                        spec.get("default"), ("inputs", key, "default")
                    )
                    if isinstance(spec, dict)
                    else None
                )
        for key, raw in given.items():
            inputs[str(key)] = scope.evaluate(raw, (*path, "with", key))
        if site.depth + 1 > MAX_CALL_DEPTH:
            raise _problem(
                loc, f"composite actions nest more than {MAX_CALL_DEPTH} deep; break the chain."
            )
        inner = _Scope(self, action, inputs=inputs, env=scope.env, in_action=True)
        self.action_steps(
            replace(site, rel=action_file, doc=action, depth=site.depth + 1, outputs={}), inner
        )

    def action_file(self, target: str, loc: Loc) -> str | None:
        for name in ("action.yml", "action.yaml"):
            candidate = f"{target.rstrip('/')}/{name}"
            if (self.files.root / candidate).is_file():
                return candidate
        if target.endswith((".yml", ".yaml")) and (self.files.root / target).is_file():
            return None  # a reusable workflow used as a step: GitHub refuses it
        raise _problem(loc, f"no action.yml in {target}; fix the uses: path.")

    def action_steps(self, site: _Site, scope: _Scope) -> None:
        """The steps of the composite action ``site.doc``, where ``site`` says it is used."""
        rel, action = site.rel, site.doc
        if not _is_action(action.data):
            raise _problem(
                action.loc(()), f"{rel} is not an action (no runs: mapping); fix the uses: path."
            )
        spec = _mapping(action, ("runs",), action.data.get("runs"), "runs")
        if str(spec.get("using", "")).lower() != "composite":
            return
        steps = _list(action, ("runs", "steps"), spec.get("steps"), "runs.steps")
        written = site.written
        env = scope.env if written in scope.env.layers else scope.env.child(written)
        inner = _Scope(
            self, action, inputs=scope.inputs, env=env, steps=site.outputs, in_action=True
        )
        self.steps(site, ("runs", "steps"), steps, inner)


def _text_value(value: Value) -> Value:
    if isinstance(value, str | Sym):
        return value
    if isinstance(value, Unknown):
        return Sym((value,))
    return ghexpr.to_text(value)


def _is_action(data: dict[str, Any]) -> bool:
    return isinstance(data.get("runs"), dict) and "jobs" not in data


_OPTIONS_WITH_VALUES = frozenset({"-f", "--file", "--format", "--stage"})


def _command_words(words: list[str]) -> list[str] | None:
    """``flags`` / ``matrix P`` from the words after ``stagegate`` (its options skipped)."""
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _OPTIONS_WITH_VALUES:
            i += 2
            continue
        if word.startswith("-") or word in (">>", ">", "|", "&&", ";"):
            if word in (">>", ">", "|", "&&", ";"):
                break
            i += 1
            continue
        out.append(word.strip("\"'"))
        i += 1
    return out if out and out[0] in ("flags", "matrix") else None


def _stagegate_command(step: Mapping[str, Any]) -> list[str] | None:
    """The command of a step that runs `stagegate flags` or `stagegate matrix P` (else None)."""
    run = step.get("run")
    if isinstance(run, str):
        for line in run.splitlines():
            words = line.split()
            for i, word in enumerate(words):
                if word in ("stagegate", "stagegate-ci") or word.endswith("/stagegate"):
                    found = _command_words(words[i + 1 :])
                    if found:
                        return found
    uses = step.get("uses")
    if isinstance(uses, str) and "stagegate" in uses.lower():
        given = step.get("with")
        command = given.get("command") if isinstance(given, dict) else None
        if isinstance(command, str):
            return _command_words(command.split())
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return bool(a == b)
    return ghexpr.to_text(a) == ghexpr.to_text(b) if a is not None else b is None


def _partial_match(row: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    for key, value in entry.items():
        if key not in row:
            return False
        have = row[key]
        if isinstance(value, dict) and isinstance(have, dict):
            if not _partial_match(have, value):
                return False
        elif not _same(have, value):
            return False
    return True


# --------------------------------------------------------------------------- shell

_SENTINEL = re.compile("\ue000([0-9]+)\ue001")
_EXPANSION = re.compile(r"(#)?([A-Za-z_][A-Za-z0-9_]*)(?:(//|/|##|#|%%|%|:-|-)(.*))?", re.S)
"""The parameter expansions the shell reader evaluates: ${#X}, ${X//a/b}, ${X#a}, ${X:-d}."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
_KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "do",
        "while",
        "until",
        "!",
        "time",
        "{",
        "}",
        "fi",
        "exec",
        "command",
    }
)
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "((", "))"})


class _Shell:
    """A ``run:`` script read as POSIX shell: assignments, loops, downloads, env writes.

    Nothing is executed: ``$(...)`` and backquotes are unknown values; ``for`` loops
    over literal words are expanded; ``echo "K=V" >> "$GITHUB_ENV"`` sets K for the
    later steps of the job."""

    def __init__(
        self, reader: _Reader, site: _Site, path: DocPath, text: str, scope: _Scope
    ) -> None:
        self.reader = reader
        self.site = site
        self.text = text
        self.scope = scope
        self.table: list[Value] = []
        self.vars: dict[str, Value] = {}
        self.pending: list[tuple[Transfer, str | None]] = []
        self.groups: list[list[tuple[int, list[str]]]] = []
        self.heredocs: dict[int, list[tuple[int, str]]] = {}
        """Line of a command -> its here-document's lines (as one shell word each)."""
        """This script's pattern downloads (with their -D folder), held until its end so
        that a later ``rm -rf`` of a downloaded artifact's folder counts as an exclusion."""
        base = site.doc.loc(path)
        block = reader.files.block_offset(site.doc, path)
        self.first_line = base.line + block
        self.col = 1 if block else base.col

    def loc(self, offset_line: int) -> Loc:
        return Loc(
            self.site.doc.file, self.first_line + offset_line, self.col if offset_line == 0 else 1
        )

    def run(self) -> None:
        if "gh" not in self.text and "GITHUB_ENV" not in self.text:
            return
        if len(self.text) > MAX_SCRIPT:
            if "gh run download" in self.text or "GITHUB_ENV" in self.text:
                self.reader.note_unresolved(
                    self.loc(0),
                    Unknown(
                        "run:",
                        f"a script of {len(self.text):,} characters; stagegate reads "
                        f"at most {MAX_SCRIPT:,}: move it to a file and bind what it computes",
                    ),
                )
            return
        self.execute(list(self.commands()))
        for transfer, _folder in self.pending:
            self.reader.add(transfer)

    def execute(self, commands: list[tuple[int, list[str]]]) -> None:
        """Run the commands' effects stagegate follows; a ``for`` loop's body once per value."""
        i = 0
        while i < len(commands):
            line_no, words = commands[i]
            stripped = _strip(words)
            if stripped and stripped[0] in ("for", "while", "until"):
                end = _loop_end(commands, i)
                body = commands[i + 1 : end]
                if stripped[0] == "for" and len(stripped) >= 2 and _NAME.fullmatch(stripped[1]):
                    self.loop(line_no, stripped, body)
                else:
                    self.execute(body)
                i = end + 1
                continue
            if words and words[0] == "{":
                self.groups.append([])
            elif words and words[0] == "}" and self.groups:
                self.close_group(line_no, words)
                i += 1
                continue
            if self.groups and _strip(words)[:1] == ["echo"] and _redirect_target(words) is None:
                self.groups[-1].append((line_no, _strip(words)))
            self.command(line_no, words)
            i += 1

    def close_group(self, line_no: int, words: list[str]) -> None:
        """``{ echo "A=1"; echo "B=2"; } >> "$GITHUB_ENV"``: the group's echos write the file."""
        echos = self.groups.pop()
        target = _redirect_target(words)
        if target is not None and self.value(target) == _ENV_FILE:
            for at, echo in echos:
                self.env_write(at, echo[1:])

    def loop(self, line_no: int, words: list[str], body: list[tuple[int, list[str]]]) -> None:
        name = words[1]
        items = words[3:] if len(words) > 3 and words[2] == "in" else None
        values: list[Value] = []
        if items is None:
            values = [
                Unknown(
                    f"${name}", f"the loop at {self.loc(line_no)} runs over the script's arguments"
                )
            ]
        for item in items or ():
            value = self.value(item)
            if isinstance(value, str) and _SENTINEL.search(item) is not None:
                values += value.split()
            else:
                values.append(value)
        if len(values) > MAX_LOOP:
            raise _problem(
                self.loc(line_no),
                f"a for loop over {len(values):,} values; stagegate expands at most {MAX_LOOP:,}.",
            )
        for value in values:
            self.vars[name] = (
                Unknown(f"${name}", f"${name} runs over {value.expression} ({self.loc(line_no)})")
                if isinstance(value, Unknown)
                else value
            )
            self.execute(body)

    # -- parsing

    def sentinel(self, value: Value) -> str:
        self.table.append(value)
        return f"\ue000{len(self.table) - 1}\ue001"

    def substitute(self, line: str, line_no: int) -> str:
        """GitHub's ``${{ }}`` first (as GitHub does), then ``$VAR`` marked outside single quotes."""
        if "${{" in line:
            pieces: list[str] = []
            try:
                parts = ghexpr.split_text(line)
            except LocatedError as exc:
                raise _problem(self.loc(line_no), f"invalid expression: {exc.message}") from None
            for piece, _offset in parts:
                if not piece.startswith("${{"):
                    pieces.append(piece)
                    continue
                try:
                    node = ghexpr.parse(piece[3:-2])
                except LocatedError as exc:
                    raise _problem(
                        self.loc(line_no), f"invalid expression: {exc.message}"
                    ) from None
                value = ghexpr.Evaluator(self.scope.lookup)(node)
                if isinstance(value, Unknown):
                    value = Unknown(piece.strip(), value.reason)
                pieces.append(
                    value
                    if isinstance(value, str) and not isinstance(value, ghexpr.Tagged)
                    else self.sentinel(value)
                    if isinstance(value, Sym | Unknown | ghexpr.Tagged)
                    else ghexpr.to_text(value)
                )
            line = "".join(pieces)
        out: list[str] = []
        i, quote = 0, ""
        while i < len(line):
            char = line[i]
            if quote == "'":
                out.append(char)
                if char == "'":
                    quote = ""
                i += 1
                continue
            if char == "\\" and i + 1 < len(line):
                out.append(line[i : i + 2])
                i += 2
                continue
            if char == "'" and not quote:
                quote = "'"
                out.append(char)
                i += 1
                continue
            if char == '"':
                quote = "" if quote == '"' else '"'
                out.append(char)
                i += 1
                continue
            if char == "`":
                end = line.find("`", i + 1)
                end = len(line) - 1 if end < 0 else end
                out.append(
                    self.sentinel(Unknown(line[i : end + 1], f"{line[i : end + 1]} runs a command"))
                )
                i = end + 1
                continue
            if char == "$" and i + 1 < len(line):
                nxt = line[i + 1]
                if nxt == "(":
                    end = _closing(line, i + 1)
                    piece = line[i:end]
                    out.append(self.sentinel(Unknown(piece, f"{piece} runs a command")))
                    i = end
                    continue
                if nxt == "{":
                    end = line.find("}", i)
                    end = len(line) - 1 if end < 0 else end
                    inner = line[i + 2 : end]
                    expansion = _EXPANSION.fullmatch(inner)
                    if _NAME.fullmatch(inner):
                        out.append(self.sentinel(("var", inner)))
                    elif expansion:
                        out.append(self.sentinel(("expand", inner, line[i : end + 1])))
                    else:
                        out.append(
                            self.sentinel(
                                Unknown(
                                    line[i : end + 1],
                                    f"{line[i : end + 1]} is a shell expansion stagegate does not compute",
                                )
                            )
                        )
                    i = end + 1
                    continue
                match = _NAME.match(line, i + 1)
                if match:
                    out.append(self.sentinel(("var", match.group())))
                    i = match.end()
                    continue
                if nxt in "0123456789@*#?$!-":
                    out.append(
                        self.sentinel(
                            Unknown(line[i : i + 2], f"{line[i : i + 2]} is a shell parameter")
                        )
                    )
                    i += 2
                    continue
            out.append(char)
            i += 1
        return "".join(out)

    def commands(self) -> Iterator[tuple[int, list[str]]]:
        lines = self.text.split("\n")
        i = 0
        while i < len(lines):
            start = i
            line = lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i]
            heredoc = re.search(r"(?<!<)<<(?!<)-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)", line)
            marked = self.substitute(line, start)
            words: list[str] | None = None
            for extra in range(20):
                try:
                    lexer = shlex.shlex(marked, posix=True, punctuation_chars=True)
                    lexer.whitespace_split = True
                    words = list(lexer)
                    break
                except ValueError:  # an unclosed quote: the string goes on on the next line
                    if i + 1 >= len(lines) or extra == 19:
                        break
                    i += 1
                    marked += "\n" + self.substitute(lines[i], i)
            i += 1
            if heredoc:
                end = heredoc.group(2)
                body: list[tuple[int, str]] = []
                while i < len(lines) and lines[i].strip() != end:
                    # a quoted delimiter ('EOF') keeps the body literal; else $VAR expands
                    text = lines[i].strip()
                    body.append(
                        (
                            i,
                            "'" + text.replace("'", "'\\''") + "'"
                            if heredoc.group(1)
                            else self.substitute('"' + text.replace('"', '\\"') + '"', i),
                        )
                    )
                    i += 1
                i += 1
                self.heredocs[start] = body
            if words is None:
                if "gh run download" in line:
                    self.reader.note_unresolved(
                        self.loc(start),
                        Unknown(line.strip()[:200], "a gh run download stagegate cannot parse"),
                    )
                continue
            words = _tee_as_append(words)
            command: list[str] = []
            for word in words:
                if word in _SEPARATORS or (set(word) <= set(";&|()") and word):
                    if command:
                        yield start, command
                    command = []
                else:
                    command.append(word)
            if command:
                yield start, command

    # -- values

    def value(self, word: str) -> Value:
        pieces: list[Value] = []
        pos = 0
        for match in _SENTINEL.finditer(word):
            pieces.append(word[pos : match.start()])
            entry = self.table[int(match.group(1))]
            if isinstance(entry, tuple) and entry[0] == "expand":
                pieces.append(self.expand(entry[1], entry[2]))
            elif isinstance(entry, tuple):
                pieces.append(self.variable(entry[1]))
            else:
                pieces.append(entry)
            pos = match.end()
        pieces.append(word[pos:])
        return concat(pieces)

    def expand(self, inner: str, written: str) -> Value:
        """``${X//a/b}``, ``${X/a/b}``, ``${X#a}``, ``${X%a}`` (and ``##``, ``%%``),
        ``${X:-d}``, ``${#X}``: string operations on a known value, with literal patterns
        (a pattern with shell wildcards, or a value stagegate does not know, is unknown)."""
        match = _EXPANSION.fullmatch(inner)
        assert match is not None
        length, name, op, arg = match.group(1), match.group(2), match.group(3), match.group(4)
        value = self.variable(name)
        if length:
            return (
                str(len(value))
                if isinstance(value, str)
                else Unknown(written, f"{written}: the length of a value stagegate does not know")
            )
        if op in (":-", "-"):
            unset = (
                name not in self.vars
                and self.scope.env_value(name) is NotImplemented
                and self.reader.bound(f"env.{name}", self.scope) is NotImplemented
                and name not in self.reader.env_writers
                and not name.startswith("GITHUB_")
            )
            if unset or (op == ":-" and value == ""):
                if "$" in (arg or "") or "`" in (arg or ""):
                    return Unknown(written, f"{written}: a default stagegate does not compute")
                return arg or ""
            return value
        if not isinstance(value, str):
            return Unknown(
                written, f"{written}: a string operation on a value stagegate does not know"
            )
        if set(arg or "") & set("*?[]\\$`"):
            return Unknown(written, f"{written}: a pattern with shell wildcards")
        if op in ("//", "/"):
            old, _, new = (arg or "").partition("/")
            if not old:
                return value
            return value.replace(old, new) if op == "//" else value.replace(old, new, 1)
        if op in ("#", "##"):
            return value.removeprefix(arg or "")
        return value.removesuffix(arg or "")

    def variable(self, name: str) -> Value:
        """A shell variable: a bind for this job or file, then the script's own known
        value, then a bare bind, then the script's unknown value, then the environment."""
        key = f"env.{name}"
        bound = self.reader.bound(key, self.scope, bare=False)
        if bound is not NotImplemented:
            return bound
        local = self.vars.get(name)
        if name in self.vars and not unknowns(local):
            return local
        bound = self.reader.bound(key, self.scope, scoped=False)
        if bound is not NotImplemented:
            return bound
        if name in self.vars:
            return local
        if name == "GITHUB_ENV":
            return _ENV_FILE
        if name == "GITHUB_OUTPUT":
            return _OUT_FILE
        if name == "GITHUB_RUN_ID":
            return THIS_RUN
        if name == "GITHUB_SHA":
            found = self.reader.bound("github.sha", self.scope)
            if found is not NotImplemented:
                return found
        found = self.scope.env_value(name)
        if found is not NotImplemented:
            return found
        reason = (
            self.reader.env_writers.get(name)
            or f"${name} is set in no env: of the step, job or workflow, nor earlier in the script; bind env.{name}"
        )
        return Unknown(f"${name}", reason)

    # -- commands

    def command(self, line_no: int, words: list[str]) -> None:
        words = _strip(words)
        if not words:
            return
        head = words[0]
        if all(_ASSIGN.fullmatch(w) for w in words) or (
            head in ("export", "local", "declare", "readonly") and len(words) > 1
        ):
            for word in words[1:] if head in ("export", "local", "declare", "readonly") else words:
                match = _ASSIGN.fullmatch(word)
                if match:
                    value = self.value(match.group(2))
                    self.vars[match.group(1)] = _annotate(value, self.loc(line_no), match.group(1))
            return
        redirect = _redirect_target(words)
        if head == "tee" and redirect is None:
            redirect = next((w for w in words[1:] if not w.startswith("-") and w != "<<"), None)
        if (
            head in ("cat", "tee")
            and line_no in self.heredocs
            and redirect is not None
            and self.value(redirect) == _ENV_FILE
        ):
            for at, word in self.heredocs[line_no]:
                self.env_write(at, _shell_words(word))
            return
        if head == "echo" and redirect is not None and self.value(redirect) == _ENV_FILE:
            self.env_write(line_no, words[1 : words.index(">>") if ">>" in words else len(words)])
            return
        if head == "rm" and self.pending:
            self.remove(line_no, words[1:])
            return
        if len(words) >= 3 and words[0] == "gh" and words[1] == "run" and words[2] == "download":
            self.download(line_no, words[3:])
            return
        for i in range(len(words) - 2):
            if words[i] == "gh" and words[i + 1] == "run" and words[i + 2] == "download":
                self.download(line_no, words[i + 3 :])
                return

    def env_write(self, line_no: int, words: list[str]) -> None:
        words = [w for w in words if not w.startswith("-")]
        if not words:
            return
        text = self.value(" ".join(words))
        head = (
            text
            if isinstance(text, str)
            else text.parts[0]
            if isinstance(text, Sym) and isinstance(text.parts[0], str)
            else ""
        )
        name, sep, _rest = head.partition("=") if isinstance(head, str) else ("", "", "")
        if not sep or not _NAME.fullmatch(name):
            return
        value = _after_equals(text)
        loc = self.loc(line_no)
        if unknowns(value):
            self.reader.env_writers[name] = (
                f"{name} is written to $GITHUB_ENV by the script at {loc.file}:{loc.line} from a value "
                f"stagegate cannot compute ({unknowns(value)[0].expression}); bind env.{name}"
            )
            value = Unknown(f"env.{name}", self.reader.env_writers[name])
        if self.site.runs:
            self.site.written[name] = value

    def download(self, line_no: int, args: list[str]) -> None:
        names: list[str] = []
        patterns: list[str] = []
        run: str | None = None
        folder: str | None = None
        i = 0
        while i < len(args):
            arg = args[i]
            if arg in (">", ">>", "<", "2>", "2>&1", "&>"):
                i += 2
                continue
            for short, long, into in (("-n", "--name", names), ("-p", "--pattern", patterns)):
                if arg in (short, long):
                    if i + 1 < len(args):
                        into.append(args[i + 1])
                    i += 1
                    break
                if arg.startswith(long + "="):
                    into.append(arg[len(long) + 1 :])
                    break
                if arg.startswith(short) and len(arg) > 2 and not arg.startswith("--"):
                    into.append(arg[2:].lstrip("="))
                    break
            else:
                if arg in ("-D", "--dir") and i + 1 < len(args):
                    folder = args[i + 1]
                if arg.startswith("--dir="):
                    folder = arg[len("--dir=") :]
                if arg in ("-D", "--dir", "-R", "--repo"):
                    i += 1
                elif not arg.startswith("-") and run is None:
                    run = arg
            i += 1
        loc = self.loc(line_no)
        run_id = "this"
        if run is not None:
            value = self.value(run)
            if value != THIS_RUN:
                run_id = _unmark(run, self)
        selections = [(n, "name") for n in names] + [(p, "pattern") for p in patterns]
        if not selections:
            selections = [("*", "pattern")]
        where = self.value(folder) if folder is not None else None
        for word, kind in selections:
            transfer = self.site.transfer("download", loc, self.value(word), kind, run_id)
            if kind == "pattern":
                self.pending.append((transfer, where if isinstance(where, str) else None))
            else:
                self.reader.add(transfer)

    def remove(self, line_no: int, args: list[str]) -> None:
        """``rm -rf DIR/NAME`` after ``gh run download -p GLOB -D DIR``: NAME (a glob, as the
        shell expands it) is taken out of what the download keeps. A path stagegate cannot
        compute makes the downloads' selection unresolved."""
        for arg in args:
            if arg.startswith("-"):
                continue
            value = self.value(arg)
            if unknowns(value):
                self.reader.note_unresolved(
                    self.loc(line_no),
                    Unknown(
                        f"rm {_unmark(arg, self)}",
                        "a script removes a path stagegate cannot compute after a download, so "
                        "what the download keeps is unknown; bind what it removes",
                    ),
                )
                continue
            for i, (transfer, folder) in enumerate(self.pending):
                text = value if isinstance(value, str) else None
                name: Value = value
                if folder is not None:
                    prefix = folder.rstrip("/") + "/"
                    if text is not None and text.startswith(prefix):
                        name = text[len(prefix) :]
                    elif (
                        isinstance(value, Sym)
                        and isinstance(value.parts[0], str)
                        and value.parts[0].startswith(prefix)
                    ):
                        name = concat([value.parts[0][len(prefix) :], *value.parts[1:]])
                    else:
                        continue
                if "/" in shown(name).rstrip("/"):
                    continue
                if isinstance(name, str):
                    name = name.rstrip("/")
                excluded = replace(transfer, exclude=(*transfer.exclude, _text_value(name)))
                self.pending[i] = (excluded, folder)


def _shell_words(text: str) -> list[str]:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return []


def _tee_as_append(words: list[str]) -> list[str]:
    """``A | tee -a FILE`` as ``A >> FILE`` (what reaches FILE is what A prints)."""
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "|" and i + 1 < len(words) and words[i + 1] == "tee":
            j = i + 2
            target = None
            while j < len(words) and words[j] not in _SEPARATORS:
                if not words[j].startswith("-") and target is None:
                    target = words[j]
                j += 1
            if target is not None:
                out += [">>", target]
                i = j
                continue
        out.append(words[i])
        i += 1
    return out


def _strip(words: list[str]) -> list[str]:
    start = 0
    while start < len(words) and words[start] in _KEYWORDS:
        start += 1
    return words[start:]


def _loop_end(commands: list[tuple[int, list[str]]], start: int) -> int:
    """The index of the ``done`` that closes the loop opened at ``start`` (or the end)."""
    depth = 0
    for i in range(start, len(commands)):
        words = _strip(commands[i][1])
        if words and words[0] in ("for", "while", "until"):
            depth += 1
        if (commands[i][1] and commands[i][1][0] == "done") or (words and words[0] == "done"):
            depth -= 1
            if depth == 0:
                return i
    return len(commands)


def _annotate(value: Value, loc: Loc, name: str) -> Value:
    """An unknown shell value says where it was assigned."""
    if isinstance(value, Unknown):
        return Unknown(
            value.expression,
            f"${name} is assigned at {loc.file}:{loc.line} from {value.expression}: {value.reason}",
        )
    return value


def _after_equals(value: Value) -> Value:
    if isinstance(value, str):
        return value.partition("=")[2]
    assert isinstance(value, Sym)
    first = value.parts[0]
    assert isinstance(first, str)
    return concat([first.partition("=")[2], *value.parts[1:]])


def _redirect_target(words: list[str]) -> str | None:
    for i, word in enumerate(words):
        if word == ">>" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(">>") and len(word) > 2:
            return word[2:]
    return None


def _unmark(word: str, shell: _Shell) -> str:
    """A word with its markers written back as the script wrote them (for messages)."""

    def back(match: re.Match[str]) -> str:
        entry = shell.table[int(match.group(1))]
        if isinstance(entry, tuple):
            return str(entry[2]) if entry[0] == "expand" else "$" + str(entry[1])
        return shown(entry)

    return _SENTINEL.sub(back, word)


def _closing(line: str, start: int) -> int:
    """The index after the ``)`` that closes the ``(`` at ``start``."""
    depth = 0
    for i in range(start, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(line)


# --------------------------------------------------------------------------- entry points


def files_for(migration: Migration) -> Files:
    return Files(migration.root if str(migration.root) else Path("."))


def read(
    migration: Migration, stage: int, files: Files | None = None, *, tag_matrix: bool = False
) -> Reading:
    """What the workflows upload and download at ``stage``; InvalidInput for a bad file.

    ``tag_matrix`` (for ``init``): matrix values become ``Ph(key, value)`` pieces."""
    files = files or files_for(migration)
    rels = discover(files.root, migration.workflows.paths)
    reader = _Reader(migration, stage, files, tag_matrix=tag_matrix)
    reader.run(rels)
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
    )


def matches_job(ref: str, transfer: Transfer) -> bool:
    """Whether a `jobs` entry names the job of a transfer (or a job that calls into it)."""
    return any(
        fnmatch.fnmatchcase(job, ref) if "*" in ref else job == ref for job in transfer.jobs()
    )
