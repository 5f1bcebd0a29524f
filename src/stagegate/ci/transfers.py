"""What reading the workflows finds: each upload and download (``Transfer``), what could not
be evaluated (``Unresolved``), the jobs, and the limits of a reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stagegate.errors import Loc
from stagegate.load.yamlsrc import Document
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value, unknowns
from stagegate.records import field, record

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
"""Most values a shell ``for`` loop is expanded over."""
MAX_SCRIPT = 100_000
"""Longest ``run:`` script read (characters)."""
MAX_VALUE = 1_000
"""Longest shell value computed (characters; the glob limit): longer ones are unresolved,
so that memory stays bounded by the size of the scripts read."""

UPLOAD = "actions/upload-artifact"
DOWNLOAD = "actions/download-artifact"
MERGE = "actions/upload-artifact/merge"
PAGES = "actions/upload-pages-artifact"
"""An upload named ``with.name``, by default ``github-pages``."""
THIS_RUN = "\ue002github.run_id\ue003"
"""The value of ``github.run_id``: downloads from it read the run's own artifacts."""
ENV_FILE = "\ue002GITHUB_ENV\ue003"
OUT_FILE = "\ue002GITHUB_OUTPUT\ue003"


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
    dispatch: tuple[tuple[tuple[str, str], ...], ...] = ()
    """The dispatch contexts (ci.dispatch) it is read in; (): read outside any (runs in all)."""

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


def waited_for(jobs: Mapping[str, Any], job: str) -> set[str]:
    """The jobs of a workflow (its ``jobs:``) that ``job`` waits for through ``needs:``,
    directly or not: a download sees what they uploaded; a job it does not wait for may
    not have finished."""
    out: set[str] = set()
    todo = [job]
    while todo:
        spec = jobs.get(todo.pop())
        raw = spec.get("needs") if isinstance(spec, dict) else None
        names = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
        for name in names:
            if isinstance(name, str) and name not in out:
                out.add(name)
                todo.append(name)
    return out


@record(kw_only=True)
class Job:
    id: str  # PATH#JOB
    loc: Loc
    waits: frozenset[str] = frozenset()
    """The jobs of its workflow it waits for (``needs:``, directly or not), as ``PATH#JOB``:
    a download of its run sees what they (and it) uploaded."""


@record(kw_only=True)
class Halted:
    """A job whose generated matrix has no row: the job that computes it stops with an
    error (``halt_error``, ``error``), or computes none. The job runs no row."""

    job: str  # PATH#JOB
    callers: tuple[str, ...]
    matrix: Loc  # its `strategy.matrix`
    generator: Loc | None  # the command that stops (None: it computes no row)
    message: str  # what the command stops with ("" for no row)

    def jobs(self) -> tuple[str, ...]:
        return (self.job, *self.callers)


@record(kw_only=True, eq=False)
class Reading:
    stage: int
    transfers: tuple[Transfer, ...]
    unresolved: tuple[Unresolved, ...]
    jobs: Mapping[str, Job]
    files: tuple[str, ...]
    generated: frozenset[str] = frozenset()
    """The keys read from matrices that are generated (``matrix: ${{ fromJSON(...) }}``)."""
    dispatch: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """Workflow file -> its dispatch inputs read as finite axes -> their values."""
    halted: tuple[Halted, ...] = ()
    """The jobs, in each context they are read in, whose generated matrix has no row."""

    @property
    def uploads(self) -> list[Transfer]:
        return [t for t in self.transfers if t.direction == "upload"]

    @property
    def downloads(self) -> list[Transfer]:
        return [t for t in self.transfers if t.direction == "download"]


@record(eq=False)
class Site:
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
    row: Value = None
    """The matrix row of the job the steps run in (kept inside composite actions and
    reusable workflows, where ``matrix`` is not the job's)."""
    folder: str = "."
    """Where a ``run:`` step without ``working-directory`` runs (``defaults.run``)."""
    kinds: frozenset[str] | None = None
    """The run kinds a release may run on (``runkinds.READ_KINDS``: those that can carry a
    tag, and ``pull_request``) on which the steps may run, where an ``if:`` on
    ``github.*`` rules some out (None: any of them)."""

    def transfer(
        self, direction: str, loc: Loc, value: Value, kind: str = "name", run: str = "this"
    ) -> Transfer:
        """An upload or download of a step here, of the name or glob ``value``."""
        return Transfer(
            direction=direction,
            loc=loc,
            job=self.job,
            callers=self.callers,
            value=text_value(value),
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


def text_value(value: Value) -> Value:
    if isinstance(value, str | Sym):
        return value
    if isinstance(value, Unknown):
        return Sym((value,))
    return ghexpr.to_text(value)


# --------------------------------------------------------------------------- as JSON (drift, check workflows)


def _unique(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each entry once: a step reached from several callers or rows reads alike in each."""
    seen: set[str] = set()
    out = []
    for entry in entries:
        key = repr(sorted(entry.items()))
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def _entries(
    transfers: Sequence[Transfer], fields: Callable[[Transfer], dict[str, Any]]
) -> list[dict[str, Any]]:
    """The active transfers as JSON objects: place, job, then ``fields``; each once."""
    return _unique(
        [
            {"file": t.loc.file, "line": t.loc.line, "job": t.job, **fields(t)}
            for t in transfers
            if t.active
        ]
    )


def uploads_json(reading: Reading) -> list[dict[str, Any]]:
    return _entries(reading.uploads, lambda t: {"name": shown(t.value), "resolved": t.resolved})


def downloads_json(reading: Reading) -> list[dict[str, Any]]:
    return _entries(
        reading.downloads,
        lambda t: {
            "select": shown(t.value),
            "kind": t.kind,
            "resolved": t.resolved,
            "run": t.run,
            "exclude": [shown(v) for v in t.exclude],
        },
    )
