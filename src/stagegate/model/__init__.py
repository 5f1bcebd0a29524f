"""The migration as immutable records. Built only by ``load``; read by everything else."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from stagegate.errors import Loc
from stagegate.model.expr import Expr
from stagegate.model.templates import Assignment, Axis, Part, assignments, row_count
from stagegate.records import field, record

if TYPE_CHECKING:
    from stagegate.model.document import Document

ItemKind = Literal["producer", "consumer", "release"]


def _frozen(mapping: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@record(kw_only=True)
class Reference:
    """A ``{regex: PATTERN}`` reference: a line is a finding when the expression matches in it.

    Fixed-string references stay plain ``str``; code that reads references takes both."""

    regex: str

    def __str__(self) -> str:
        return f"regex {self.regex}"


Ref = str | Reference
"""One entry of ``legacy.references`` or a flag's ``references``."""


@record(kw_only=True)
class Legacy:
    references: tuple[Ref, ...] = ()
    paths: tuple[str, ...] = ()


@record(kw_only=True)
class Flag:
    id: str
    summary: str = ""
    default: bool = False
    references: tuple[Ref, ...] = ()
    loc: Loc
    env: str | None = None  # the environment variable CI reads; audited as a reference


@record(kw_only=True)
class Template:
    text: str
    parts: tuple[Part, ...]
    loc: Loc
    kind: str = "artifact"  # an artifact template's kind ({name: ..., kind: wheel}); else unused
    exclude: tuple[Assignment, ...] = ()
    """An artifact template's rows left out: partial assignments of its finite axes, each
    dropping the rows that agree with it (a GitHub matrix's ``exclude``)."""
    rows: tuple[Assignment, ...] | None = None
    """An artifact template's rows where they are listed (``rows:``): these assignments of
    its finite axes only, instead of every combination."""

    def assignments(self, axes: Mapping[str, Axis]) -> Iterator[Assignment]:
        """The assignments of the template's rows over ``axes`` (``templates.assignments``)."""
        return assignments(self.parts, axes, exclude=self.exclude, rows=self.rows)

    def row_count(self, axes: Mapping[str, Axis]) -> int:
        return row_count(self.parts, axes, exclude=self.exclude, rows=self.rows)


@record(kw_only=True)
class _Item:
    """The fields producers, consumers and releases share."""

    id: str
    summary: str = ""
    when: Expr
    legacy: Legacy = field(default_factory=Legacy)
    loc: Loc
    kind: ItemKind


@record(kw_only=True)
class Producer(_Item):
    artifacts: tuple[Template, ...]
    paths: tuple[str, ...] = ()
    paths_locs: tuple[Loc, ...] = ()  # where each `paths` entry is written
    always: bool = False  # `stagegate affected` rebuilds it on every change
    run: str = "this"
    kind: ItemKind = "producer"
    axes: tuple[Axis, ...] = ()
    """Finite axes this producer narrows or replaces for its own templates (``axes: {py: [...]}``)."""
    wheels: frozenset[str] | None = None
    """The build identifiers its rows carry (``wheels:``, braces expanded); None: not declared."""
    wheels_loc: Loc | None = None


@record(kw_only=True)
class Input:
    select: Template
    required: bool = True
    from_: tuple[str, ...] | None = None
    exclude: tuple[Template, ...] = ()  # plain globs the job drops after downloading
    loc: Loc
    axes: tuple[Axis, ...] = ()  # its consumer's own axes
    run: Literal["this", "baseline"] = "this"  # baseline: reused rows come from the baseline run


@record(kw_only=True)
class Consumer(_Item):
    inputs: tuple[Input, ...]
    paths: tuple[str, ...] = ()  # its own sources beyond its inputs (tests, shared helpers)
    paths_locs: tuple[Loc, ...] = ()
    always: bool = False  # `stagegate affected` reruns it on every change
    feeds: tuple[str, ...] = ()  # the producers whose build this job is part of
    planned: bool = True  # false: it runs outside the runs `stagegate affected` plans
    kind: ItemKind = "consumer"
    axes: tuple[Axis, ...] = ()
    """Finite axes this consumer's selects are evaluated over instead of the migration's."""


@record(kw_only=True)
class Release(_Item):
    tags: tuple[str, ...]
    select: tuple[Template, ...]
    exclude: tuple[Template, ...] = ()
    expect: tuple[str, ...] | None = None
    tooling: Literal["tag", "control", "both"] = "tag"
    kinds: tuple[str, ...] | None = None  # the artifact kinds it may select; None: any
    run: str = "this"
    ships_reused: bool = False  # may ship artifacts built against rows from a baseline run
    kind: ItemKind = "release"
    dispatch: Mapping[str, str] = field(default_factory=_frozen)
    """The workflow_dispatch input values that start it (booleans as "true"/"false")."""
    dispatch_locs: Mapping[str, Loc] = field(default_factory=_frozen)


Item = Producer | Consumer | Release


@record(kw_only=True)
class Check:
    """One acceptance check: its kind, its arguments, and where it is declared."""

    kind: str
    args: Mapping[str, Any] = field(default_factory=_frozen)
    loc: Loc
    origin: str = "acceptance"  # "invariant" or "acceptance"

    def describe(self) -> str:
        shown = [f"{k}={v}" for k, v in self.args.items() if not isinstance(v, list | dict)]
        shown += [  # a mapping of scalars (release-continuity's dispatch): each value
            f"{k}.{name}={str(value).lower() if isinstance(value, bool) else value}"
            for k, v in self.args.items()
            if isinstance(v, dict) and all(not isinstance(x, list | dict) for x in v.values())
            for name, value in v.items()
        ]
        return self.kind + (f" {' '.join(shown)}" if shown else "")


@record(kw_only=True)
class ReleaseChange:
    """A planned change of what the release claiming ``tag`` selects, made by one stage."""

    tag: str
    add: tuple[Template, ...] = ()  # plain globs: names the stage adds to the selection
    drop: tuple[Template, ...] = ()  # plain globs: names it removes from it
    loc: Loc
    wheels_add: tuple[str, ...] = ()  # globs over build identifiers the stage adds
    wheels_drop: tuple[str, ...] = ()  # and removes


@record(kw_only=True)
class JobChange:
    """A planned change of what the real release job ``job`` (``PATH#JOB``, a workflow
    file relative to the migration's folder, as in `jobs`) publishes, made by one stage:
    how a stage declares a release job that its flip adds. verify-pr holds a flip's
    workflows to it; the model's selections (release-continuity) do not read it."""

    job: JobRef
    add: tuple[Template, ...] = ()  # plain globs: names of the upload contexts it gains
    drop: tuple[Template, ...] = ()  # plain globs: names of those it loses
    loc: Loc


@record(kw_only=True)
class Stage:
    number: int
    slug: str
    title: str
    outcome: str = ""
    set: Mapping[str, bool] = field(default_factory=_frozen)
    set_locs: Mapping[str, Loc] = field(default_factory=_frozen)
    reversible: bool = True
    acceptance: tuple[Check, ...] = ()
    release_changes: tuple[ReleaseChange, ...] = ()
    job_changes: tuple[JobChange, ...] = ()  # the `release_changes` entries naming a `job`
    file: str
    loc: Loc
    reversible_loc: Loc | None = None  # where `reversible:` is written (its key)
    document: Document | None = field(default=None, compare=False)  # the file as read

    @property
    def dirname(self) -> str:
        """The folder of this stage's pytest files: ``stages/NN-slug/``'s name."""
        return Path(self.file).stem


@record(kw_only=True, eq=False)
class Migration:
    """The whole migration. Compared by identity, so resolution can be cached per load."""

    version: int
    id: str
    summary: str = ""
    stage: int
    stage_loc: Loc
    stages_dir: str
    axes: Mapping[str, Axis]
    flags: Mapping[str, Flag]
    producers: Mapping[str, Producer]
    consumers: Mapping[str, Consumer]
    releases: Mapping[str, Release]
    invariants: tuple[Check, ...] = ()
    audit_ignore: tuple[str, ...] = ()
    audit_ignore_locs: tuple[Loc, ...] = ()  # where each audit.ignore entry is written
    stages: tuple[Stage, ...] = ()
    file: str  # the migration file as given (for messages)
    root: Path  # the directory holding migration.yaml; relative paths start here
    workflows: WorkflowSettings = field(default_factory=lambda: WorkflowSettings())
    stage_span: tuple[int, int] | None = None  # bytes of a plain `stage:` value in the file
    document: Document | None = field(default=None, compare=False)  # the file as read

    @property
    def last(self) -> int:
        return len(self.stages)

    def stage_def(self, number: int) -> Stage | None:
        """The definition of stage ``number`` (1..last); None for stage 0."""
        return self.stages[number - 1] if 1 <= number <= len(self.stages) else None

    def checks_at(self, number: int) -> tuple[Check, ...]:
        """The checks of stage ``number``: the invariants plus its own acceptance (stage 0
        has only invariants), each once: a check listed again with the same arguments (an
        invariant a stage also lists) runs where it is first listed."""
        definition = self.stage_def(number)
        listed = (*self.invariants, *(definition.acceptance if definition else ()))
        if len(listed) < 2:
            return listed
        seen: list[tuple[str, dict[str, Any]]] = []
        once = []
        for check in listed:
            key = (check.kind, dict(check.args))
            if key not in seen:
                seen.append(key)
                once.append(check)
        return tuple(once)

    def title(self, number: int) -> str:
        stage = self.stage_def(number)
        return stage.title if stage else "before the migration"

    def own_files(self) -> list[str]:
        """The migration file and its stage files, relative to its folder (what names the
        references on purpose, and what a change of the stages is)."""
        stages_dir = Path(self.stages_dir).as_posix()
        return [Path(self.file).name] + [
            f"{stages_dir}/{Path(stage.file).name}" for stage in self.stages
        ]

    def pytest_folder(self, stage: int, check: Check) -> str | None:
        """The path a ``pytest`` check of ``stage`` runs, relative to the migration's
        folder: its ``path``, else the stage's own folder; None at stage 0."""
        rel = check.args.get("path")
        if rel is not None:
            return str(rel)
        definition = self.stage_def(stage)
        if definition is None:
            return None
        return f"{self.stages_dir}/{definition.dirname}"

    def items(self) -> list[Item]:
        return [*self.producers.values(), *self.consumers.values(), *self.releases.values()]


DEFAULT_WORKFLOW_PATHS = (
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    ".github/actions/*/action.yml",
)


@record(kw_only=True)
class JobRef:
    """One `jobs` entry: ``path#job``, a real job the item stands for."""

    text: str
    loc: Loc

    @property
    def path(self) -> str:
        return self.text.partition("#")[0]

    @property
    def job(self) -> str:
        return self.text.partition("#")[2]


@record(kw_only=True)
class Bind:
    """A `workflows.bind` entry: an expression's value given by the model.

    Either text (a template with ``{axis}`` placeholders) or a flag expression, whose
    value at the stage is ``then`` (default ``"true"``) or ``else`` (``"false"``)."""

    key: str
    text: Template | None = None
    expressions: bool = False  # the text holds ${{ }} expressions, evaluated where it is used
    when: Expr | None = None
    then: str = "true"
    otherwise: str = "false"
    loc: Loc


@record(kw_only=True)
class ActionSpec:
    """A `workflows.actions` entry: what a remote action moves, which stagegate cannot read
    (its code is not in the repository). Texts hold ``${{ inputs.K }}``: the step's
    ``with.K``."""

    uses: str  # owner/name@ref, as the workflows' `uses:` say
    uploads: tuple[str, ...] = ()
    downloads: tuple[str, ...] = ()
    loc: Loc


@record(kw_only=True)
class PublisherSpec:
    """A `workflows.publishers` entry: a publish step stagegate does not read, and the
    files it publishes (path globs from where the step runs)."""

    key: str
    """A command prefix, as a ``run:`` script writes it, or ``owner/name@ref``."""
    files: tuple[str, ...]
    loc: Loc

    @property
    def is_action(self) -> bool:
        return "@" in self.key and " " not in self.key.strip()


@record(kw_only=True)
class WorkflowSettings:
    """The `workflows` section, and the `jobs` of every producer, consumer and release."""

    paths: tuple[str, ...] = DEFAULT_WORKFLOW_PATHS
    paths_loc: Loc | None = None
    bind: Mapping[str, Bind] = field(default_factory=_frozen)
    jobs: Mapping[tuple[str, str], tuple[JobRef, ...]] = field(default_factory=_frozen)
    """(kind, id) -> the item's `jobs` entries."""
    actions: Mapping[str, ActionSpec] = field(default_factory=_frozen)
    """``owner/name@ref`` (lower case) -> what that remote action uploads and downloads."""
    events: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=_frozen)
    """(kind, id) -> the item's `events`: the run kinds drift compares it on, each apart."""
    publishers: Mapping[str, PublisherSpec] = field(default_factory=_frozen)
    """A command prefix or ``owner/name@ref`` (lower case) -> the files it publishes."""
    runs: Mapping[str, str] = field(default_factory=_frozen)
    """``FILE#JOB`` of a release job -> the workflow file whose run it publishes."""
    runs_loc: Mapping[str, Loc] = field(default_factory=_frozen)

    def events_of(self, item: Item) -> tuple[str, ...]:
        return tuple(self.events.get((item.kind, item.id), ()))

    def jobs_of(self, item: Item) -> tuple[JobRef, ...]:
        return tuple(self.jobs.get((item.kind, item.id), ()))
