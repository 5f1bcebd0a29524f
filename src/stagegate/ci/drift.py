"""The model against the real workflows at a stage: `stagegate drift` and check `workflows`.

Every comparison is a question about languages answered by the same glob engine as
the checks: an upload is declared when each name it can have is a name of one active
producer row (and that producer lists its job, where it lists jobs); a row is
uploaded when some upload's names all belong to it; a consumer's or release's real
selection is the set of active rows its jobs' downloads select, compared row for row
with what the model says it selects. Unresolved values take part only where they
cannot change an answer: an unresolved upload keeps a row from being called missing
when it might yield it, an unresolved download keeps a declared row from being
called unselected when it might select it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stagegate.ci import dispatch
from stagegate.ci.transfers import Reading, Transfer, Unresolved, shown
from stagegate.ci.workflows import matches_job
from stagegate.engine.globs import (
    Glob,
    Language,
    Lit,
    Piece,
    Rx,
    intersects,
    language,
    literal_prefix,
)
from stagegate.engine.match import RowIndex, index, release_selection, selected
from stagegate.engine.resolve import Plan, Row, resolve
from stagegate.errors import Loc, TooComplex
from stagegate.model import Consumer, Item, JobRef, Migration, Producer, Release
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value
from stagegate.model.templates import Axis, finite_axes
from stagegate.records import record
from stagegate.words import closest, counted

if TYPE_CHECKING:
    from stagegate.ci.files import Files
    from stagegate.ci.shipped import Finding as ShipFinding
    from stagegate.ci.shipped import Release as ShipRelease
    from stagegate.ci.shipped import Side, Stranded

FINDING_KINDS = (
    "undeclared-upload",
    "missing-upload",
    "select-differs",
    "empty-matrix",
    "unknown-job",
    "unknown-dispatch",
    "upload-collision",
    "upload-overwrite",
    "backend-mismatch",
    "exact-name-glob",
    "where-files-land",
)
SHIP_KINDS = frozenset(FINDING_KINDS[FINDING_KINDS.index("upload-collision") :])
"""What the artifact actions do with the files (``ci.ships``), read at the stage."""


@record(kw_only=True)
class Consequence:
    """What a finding does to one active release or consumer of the model: the artifact
    names (rows) it would no longer get, and those it would get besides."""

    item: str
    kind: str  # "release" or "consumer"
    lost: tuple[str, ...]
    gained: tuple[str, ...]
    total: int  # the rows the model says it selects (or the uploads of one name)
    unit: str = "artifacts"

    def sentence(self) -> str:
        verb = "ship" if self.kind == "release" else "take"
        out = f"{self.kind} {self.item} would "
        if self.lost:
            out += (
                f"{verb} {self.total - len(self.lost)} of its "
                + (
                    counted(self.total, "artifact")
                    if self.unit == "artifacts"
                    else f"{self.total} {self.unit}"
                )
                + ": "
                f"lost {_listed(self.lost)}"
            )
        if self.gained:
            out += ("; and " if self.lost else "") + f"also {verb} {_listed(self.gained)}"
        return out


@record(kw_only=True)
class DriftFinding:
    kind: str
    item: str  # the model item, or "" for an upload no producer declares
    loc: Loc  # the primary place: the workflow for uploads, migration.yaml otherwise
    other: Loc | None  # the other side
    message: str
    consequences: tuple[Consequence, ...] = ()


@record(kw_only=True, eq=False)
class Drift:
    stage: int
    reading: Reading
    findings: tuple[DriftFinding, ...]
    paths: tuple[str, ...] = ()
    strict: bool = False
    """Whether a value that cannot be evaluated fails too (`drift --strict`)."""
    unread: tuple[Unresolved, ...] = ()
    """Steps where artifacts flow whose effect is not read: remote actions neither known
    nor declared under ``workflows.actions``, versions not in a ref, inputs not evaluated."""
    root: Path | None = None
    """The migration's folder (where the pull request's changed lines are asked of git)."""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def failed(self) -> bool:
        return not self.ok or (self.strict and bool(self.reading.unresolved or self.unread))


def _where(loc: Loc | None) -> str:
    return f"{loc.file}:{loc.line}" if loc is not None else "nowhere"


# --------------------------------------------------------------------------- languages


def _pieces(
    value: Value, assignment: dict[str, str], axes: dict[str, Axis], *, glob: bool, unknown: bool
) -> tuple[Piece, ...] | None:
    """The language of a real name or glob; unknown pieces as ``*`` (``unknown``) or None."""
    parts = value.parts if isinstance(value, Sym) else (value,)
    out: list[Piece] = []
    for part in parts:
        if isinstance(part, Unknown):
            if not unknown:
                return None
            out.append(Glob("*"))
        elif isinstance(part, Ph) and part.value is not None:
            out.append(Glob(part.value) if glob else Lit(part.value))
        elif isinstance(part, Ph):
            axis = axes.get(part.axis)
            if axis is None:
                return None
            if axis.is_open:
                out.append(Rx(axis.pattern or ""))
            else:
                out.append(Lit(assignment[part.axis]))
        else:
            text = str(part)
            out.append(Glob(text) if glob else Lit(text))
    return tuple(out)


def _assignments(value: Value, axes: dict[str, Axis]) -> list[dict[str, str]]:
    """Every combination of the finite axes a bound name holds (one if none)."""
    from stagegate.model.templates import Placeholder, assignments

    parts = value.parts if isinstance(value, Sym) else ()
    placeholders = [
        Placeholder(p.axis, 0)
        for p in parts
        if isinstance(p, Ph) and p.value is None and p.axis in axes
    ]
    if not finite_axes(placeholders, axes):
        return [{}]
    return [dict(a) for a in assignments(placeholders, axes)]


def languages(
    transfer: Transfer, axes: dict[str, Axis], *, unknown: bool = False
) -> list[tuple[Language, str]]:
    """The languages of a transfer's names (one per finite-axis combination), with prefixes."""
    return [(lang, prefix) for lang, prefix, _ in selections_of(transfer, axes, unknown=unknown)]


def selections_of(
    transfer: Transfer, axes: dict[str, Axis], *, unknown: bool = False
) -> list[tuple[Language, str, list[Language]]]:
    """Per finite-axis combination: the language, its prefix and what the script removes."""
    out = []
    glob = transfer.kind == "pattern"
    for assignment in _assignments(transfer.value, axes):
        pieces = _pieces(transfer.value, assignment, axes, glob=glob, unknown=unknown)
        if pieces is None:
            continue
        removed = []
        for value in transfer.exclude:
            cut = _pieces(value, assignment, axes, glob=True, unknown=False)
            if cut is not None:
                removed.append(language(cut))
        out.append((language(pieces), literal_prefix(pieces), removed))
    return out


# --------------------------------------------------------------------------- comparison


class _Compare:
    def __init__(
        self, migration: Migration, stage: int, reading: Reading, side: Side | None = None
    ) -> None:
        self.side = side
        self.accounted: dict[int, list[Transfer]] = {}
        self.differences: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        """Finding number of a ``select-differs`` -> what the model selects alone, and what
        the item's jobs' downloads select alone."""
        self.upload_of: dict[tuple[Loc, str], Transfer] = {}
        self.about: dict[int, ShipFinding] = {}
        """Finding number -> the ``ci.ships`` finding it reports."""
        self.stranded: dict[int, list[Stranded]] = {}
        self.missing_rows: dict[int, list[Row]] = {}
        self.undeclared_of: dict[int, list[Transfer]] = {}
        self.undeclared_group: dict[tuple[Loc, str], list[Transfer]] = {}
        """An undeclared upload's step and job -> its transfers (one per name it makes)."""
        self.migration = migration
        self.stage = stage
        self.reading = reading
        self.plan: Plan = resolve(migration, stage)
        self.axes = dict(migration.axes)
        self.settings = migration.workflows
        self.findings: list[DriftFinding] = []
        self.all_rows = index(self.plan, None)
        self.uploads = [t for t in reading.uploads if t.active]
        self.resolved_uploads = [t for t in self.uploads if t.resolved]
        self.open_uploads = [t for t in self.uploads if not t.resolved]
        self.active_downloads = [t for t in reading.downloads if t.active]
        self._jobs: dict[tuple[str, str], tuple[str, ...]] = {}
        self._langs: dict[tuple[int, bool], list[tuple[Language, str]]] = {}
        self._selections: dict[int, list[tuple[Language, str, list[Language]]]] = {}
        self.own: dict[tuple[str, str], list[tuple[Language, list[Language]]]] = {}
        """An item without jobs -> its own selects that read this run (``_own_selects``)."""
        self._by_job: dict[int, dict[str, list[Transfer]]] = {}
        self._declared: dict[tuple[str, str], dict[tuple[str, str], Row]] = {}
        self.bad_dispatch: set[tuple[str, str]] = set()  # releases with unknown-dispatch
        self._every_row: RowIndex | None = None
        """Every producer's rows at any stage, indexed once (``holding``)."""
        self.takers = Takers(self)
        """Which items take the uploads findings name (``_takes``)."""
        self.halted = {(h.job, h.callers): h for h in reading.halted}

    def langs(self, transfer: Transfer, *, unknown: bool = False) -> list[tuple[Language, str]]:
        """A transfer's languages, built once per comparison."""
        key = (id(transfer), unknown)
        found = self._langs.get(key)
        if found is None:
            found = self._langs[key] = languages(transfer, self.axes, unknown=unknown)
        return found

    def selections(self, transfer: Transfer) -> list[tuple[Language, str, list[Language]]]:
        """A transfer's ``selections_of``, built once per comparison."""
        key = id(transfer)
        found = self._selections.get(key)
        if found is None:
            found = self._selections[key] = selections_of(transfer, self.axes)
        return found

    def jobs(self, item: Item) -> tuple[str, ...]:
        key = (item.kind, item.id)
        found = self._jobs.get(key)
        if found is None:
            found = self._jobs[key] = tuple(ref.text for ref in self.settings.jobs_of(item))
        return found

    def in_jobs(self, item: Item, transfer: Transfer) -> bool:
        refs = self.jobs(item)
        if not refs:
            return True
        if transfer.job in refs or any(c in refs for c in transfer.callers):
            return True
        return any("*" in ref and matches_job(ref, transfer) for ref in refs)

    def declares(self, producer: Producer, upload: Transfer) -> bool:
        """Whether the producer can stand for an upload of these workflows: it is this run's
        (another run's uploads are in another branch's tree) and lists the job, where it
        lists jobs; a producer of another run only where it names the job itself."""
        if producer.run != "this":
            return bool(self.jobs(producer)) and self.in_jobs(producer, upload)
        return self.in_jobs(producer, upload)

    def transfers_of(self, item: Item, transfers: list[Transfer]) -> list[Transfer]:
        """The transfers in the item's jobs (or jobs calling into them), without a scan per item."""
        refs = self.jobs(item)
        if any("*" in ref for ref in refs):
            return [t for t in transfers if self.in_jobs(item, t)]
        by_job = self._by_job.get(id(transfers))
        if by_job is None:
            by_job = {}
            for t in transfers:
                for job in t.jobs():
                    by_job.setdefault(job, []).append(t)
            self._by_job[id(transfers)] = by_job
        seen: dict[int, Transfer] = {}
        for ref in refs:
            for t in by_job.get(ref, ()):
                seen.setdefault(id(t), t)
        return list(seen.values())

    def found(self, kind: str, item: str, loc: Loc, other: Loc | None, message: str) -> None:
        """A finding about ``item`` (the model's id; "" for an upload no producer declares)
        at ``loc``, the other side at ``other``."""
        self.findings.append(
            DriftFinding(kind=kind, item=item, loc=loc, other=other, message=message)
        )

    def run(self) -> list[DriftFinding]:
        self.unknown_jobs()
        accounted = self.accounted = self.undeclared()
        self.missing(accounted)
        items: list[Consumer | Release] = [*self.plan.consumers, *self.plan.releases]
        for item in items:
            if self.jobs(item) and (item.kind, item.id) not in self.bad_dispatch:
                for on in self.settings.events_of(item) or ("",):
                    self.differs(item, on)
                self.empty_matrices(item)
        if self.side is not None:
            _ship_findings(self, self.side)
        return _with_consequences(self)

    # -- unknown-job

    def unknown_jobs(self) -> None:
        """Each ``jobs`` entry of an item active at this stage names a job. An inactive
        item's job may be gone (retiring it removes it) or not there yet (the pull request
        that flips to the stage turning it on adds it: a stage is defined in one pull
        request and flipped in the next); at a stage ahead of the current one, a missing
        job is what that flip must add, and is worded so."""
        active = {(item.kind, item.id) for item in self.plan.items()}
        known = self.reading.jobs
        for item in self.migration.items():
            if (item.kind, item.id) not in active:
                continue
            for ref in self.settings.jobs_of(item):
                if "*" in ref.text:
                    import fnmatch

                    if any(fnmatch.fnmatchcase(job, ref.text) for job in known):
                        continue
                elif ref.text in known:
                    continue
                close = closest(ref.text, known)
                self.found(
                    "unknown-job",
                    item.id,
                    ref.loc,
                    known[close].loc if close else None,
                    self.unknown_job(item, ref, close),
                )
            if isinstance(item, Release) and item.dispatch and self.settings.jobs_of(item):
                self.unknown_dispatch(item)

    def unknown_job(self, item: Item, ref: JobRef, close: str | None) -> str:
        """What an ``unknown-job`` finding says: at the current stage, an entry to fix;
        ahead of it, the job the flip to that stage adds."""
        files = self.reading.files
        read = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        said = f"{item.kind} {item.id}: jobs entry {ref.text!r} ({_where(ref.loc)}) names no job "
        where = f"{close!r} ({_where(self.reading.jobs[close].loc)})" if close else ""
        if self.stage > self.migration.stage:
            return (
                f"{said}of the workflows read ({read or 'none'}) yet: the job does not exist "
                f"yet; the pull request that flips to stage {self.stage} adds it"
                + (f" (or, if you meant {where}, fix the entry)." if close else ".")
            )
        return (
            f"{said}of the workflows read ({read or 'none'}): fix the entry or workflows.paths"
            + (f"; did you mean {where}?" if close else ".")
        )

    def unknown_dispatch(self, item: Release) -> None:
        """Each `dispatch` value of a release is one the workflows starting its jobs offer."""
        roots = {ref.text.partition("#")[0] for ref in self.settings.jobs_of(item)}
        for t in self.transfers_of(item, list(self.reading.transfers)):
            roots.add((t.callers[0] if t.callers else t.job).partition("#")[0])
        for _, loc, why in dispatch.problems(  # its downloads are then not compared
            item.dispatch, item.dispatch_locs, sorted(roots), self.reading.dispatch
        ):
            self.bad_dispatch.add((item.kind, item.id))
            self.found(
                "unknown-dispatch", item.id, loc or item.loc, None, f"release {item.id}: {why}"
            )

    # -- undeclared-upload

    def undeclared(self) -> dict[int, list[Transfer]]:
        """Each upload's rows; an upload that is no active row's is a finding."""
        accounted: dict[int, list[Transfer]] = {}
        grouped: dict[tuple[Loc, str], tuple[Transfer, list[str]]] = {}
        for upload in self.resolved_uploads:
            bad: list[str] = []
            for lang, prefix in self.langs(upload):
                homes = [
                    position
                    for position in self.all_rows.candidates(prefix)
                    if self.declares(
                        self.migration.producers[self.all_rows.rows[position].producer], upload
                    )
                    and not intersects(lang, excluding=[self.all_rows.language(position)])
                ]
                for position in homes:
                    accounted.setdefault(position, []).append(upload)
                if not homes:
                    bad.append(shown(upload.value))
            if bad:
                key = (upload.loc, upload.job)
                if key not in grouped:
                    grouped[key] = (upload, [])
                grouped[key][1].extend(n for n in bad if n not in grouped[key][1])
                self.undeclared_group.setdefault(key, []).append(upload)
        for upload, names in grouped.values():
            self.report_undeclared(upload, names)
        return accounted

    def report_undeclared(self, upload: Transfer, names: list[str]) -> None:
        home, hint, other = self.home_of(upload, names)
        job = upload.job
        shown_names = ", ".join(names[:3]) + (
            f" and {len(names) - 3} more" if len(names) > 3 else ""
        )
        self.undeclared_of[len(self.findings)] = self.undeclared_group.get(
            (upload.loc, upload.job), [upload]
        )
        self.found(
            "undeclared-upload",
            home,
            upload.loc,
            other,
            f"the upload at {_where(upload.loc)} in job {job} names {shown_names}; no "
            f"active producer at stage {self.stage} has {'it' if len(names) == 1 else 'them'} as a "
            f"row ({hint}): declare it "
            "(a template and the job under jobs), or remove the upload.",
        )

    def home_of(self, upload: Transfer, names: list[str]) -> tuple[str, str, Loc]:
        """The producer an undeclared upload belongs to (its id, why it does not declare
        the upload, and where it is): one whose rows hold every name the upload makes,
        first one that lists the upload's job (off at this stage), then any (off, of
        another run, or not listing the job); else the producer listing the job whose row
        is closest to the first name; else "" and the closest active row."""
        langs = [lang for lang, _ in self.langs(upload)]
        listing = [
            p
            for p in self.migration.producers.values()
            if any(matches_job(r.text, upload) for r in self.settings.jobs_of(p))
        ]
        holding = self.holding(upload, langs)
        owner = next((p for p in holding if p in listing), holding[0] if holding else None)
        if owner is not None:
            return owner.id, self.why_not(owner, owner in listing, len(names)), owner.loc
        active = [p for p in listing if p in self.plan.producers]
        if active:
            rows = [row for p in active for row in self.plan.rows(p)]
            near = closest(names[0], [row.name for row in rows], cutoff=0.0)
            row = next(r for r in rows if r.name == near)
            return (
                row.producer,
                (
                    f"producer {row.producer} ({_where(self.migration.producers[row.producer].loc)}) "
                    f"lists this job but none of its active templates has this name; its closest "
                    f"row is {row.name} ({_where(row.template.loc)})"
                ),
                row.template.loc,
            )
        close = self.closest(names[0])
        if close is not None:
            return (
                "",
                (
                    f"the closest active row is {close.name} of producer {close.producer} "
                    f"({_where(close.template.loc)})"
                ),
                close.template.loc,
            )
        return "", "no active producer has a template like it", self.producers_loc()

    def holding(self, upload: Transfer, langs: list[Language]) -> list[Producer]:
        """The producers whose rows (at any stage) hold every name of ``langs``, in the
        migration's order. A row holds a name only where their fixed prefixes meet (one
        starts with the other), so only the producers with such a row for each name are
        checked, each exactly (``holds``); a name that is no name at all (an empty
        language) narrows nothing."""
        from stagegate.engine.globs import intersects
        from stagegate.engine.resolve import rows

        if self._every_row is None:
            producers = self.migration.producers.values()
            self._every_row = RowIndex(row for p in producers for row in rows(self.migration, p))
        every = self._every_row
        maybe: set[str] | None = None
        for lang, prefix in self.langs(upload):
            if intersects(lang):
                found = {every.rows[i].producer for i in every.candidates(prefix)}
                maybe = found if maybe is None else maybe & found
        return [
            p
            for p in self.migration.producers.values()
            if (maybe is None or p.id in maybe) and self.holds(p, langs)
        ]

    def holds(self, producer: Producer, langs: list[Language]) -> bool:
        """Whether every name of ``langs`` is one of the producer's rows (at any stage)."""
        from stagegate.engine.globs import language
        from stagegate.engine.resolve import rows

        made = [language(row.pieces) for row in rows(self.migration, producer)]
        return bool(langs) and all(
            any(not intersects(lang, excluding=[other]) for other in made) for lang in langs
        )

    def why_not(self, producer: Producer, lists_job: bool, count: int) -> str:
        """Why ``producer``, whose rows hold an upload's ``count`` names, does not declare
        it here."""
        from stagegate.engine.resolve import flag_table

        held = "it as a row" if count == 1 else "them as rows"
        said = f"producer {producer.id} ({_where(producer.loc)}) has {held}"
        if producer not in self.plan.producers:
            on = [
                s
                for s, flags in enumerate(flag_table(self.migration))
                if producer.when.evaluate(flags)
            ]
            when = (
                f"active at stage {on[0]}" + (f" to {on[-1]}" if on[-1] != on[0] else "")
                if on and on == list(range(on[0], on[-1] + 1))
                else f"active at stages {', '.join(map(str, on))}"
                if on
                else "active at no stage"
            )
            return f"{said}{' and lists this job' if lists_job else ''}, but is off at stage {self.stage} ({when})"
        if producer.run != "this":
            return f"{said}, but stands for the uploads of run {producer.run}, not this run's"
        return f"{said}, but does not list this job under jobs"

    def closest(self, name: str) -> Row | None:
        rows = self.all_rows.rows
        names = [row.name for row in rows]
        close = closest(name, names, cutoff=0.5)
        return rows[names.index(close)] if close is not None else None

    def producers_loc(self) -> Loc:
        return Loc(self.migration.file, 1, 1)

    # -- missing-upload

    def missing(self, accounted: dict[int, list[Transfer]]) -> None:
        positions = {id(row): i for i, row in enumerate(self.all_rows.rows)}
        for producer in self.plan.producers:
            if producer.run != "this" and not self.jobs(producer):
                continue  # another run's artifacts: uploaded by another branch's workflows
            for on in self.settings.events_of(producer) or ("",):
                by_template: dict[int, list[tuple[Row, int]]] = {}
                for row in self.plan.rows(producer):
                    position = positions[id(row)]
                    if any(self.made(producer, t, on) for t in accounted.get(position, ())):
                        continue
                    lang = self.all_rows.language(position)
                    if any(
                        self.made(producer, t, on)
                        and any(intersects(lang, other) for other, _ in self.langs(t, unknown=True))
                        for t in self.open_uploads
                    ):
                        continue  # an unresolved upload may yield it
                    by_template.setdefault(id(row.template), []).append((row, position))
                for rows in by_template.values():
                    self.report_missing(producer, rows, on)

    def made(self, producer: Producer, upload: Transfer, on: str) -> bool:
        """Whether an upload can stand for the producer in a run on ``on`` ("": any)."""
        return self.in_jobs(producer, upload) and self.runs_on(upload, on)

    def runs_on(self, transfer: Transfer, on: str) -> bool:
        """Whether a transfer's job runs on the run kind ``on`` ("": any); a job whose run
        kinds are not known (an action's steps read alone) may."""
        if not on or self.side is None:
            return True
        kinds = self.side.runs_on.get(transfer.callers[0] if transfer.callers else transfer.job)
        return kinds is None or on in kinds

    def report_missing(
        self, producer: Producer, found: list[tuple[Row, int]], on: str = ""
    ) -> None:
        rows = [row for row, _ in found]
        first = self.all_rows.language(found[0][1])
        template = rows[0].template
        names = [row.name for row in rows]
        shown_rows = ", ".join(names[:4]) + (
            f" and {len(names) - 4} more" if len(names) > 4 else ""
        )
        refs = self.settings.jobs_of(producer)
        off = [
            t
            for t in self.reading.uploads
            if not t.active
            and self.in_jobs(producer, t)
            and any(intersects(lang, first) for lang, _ in self.langs(t, unknown=True))
        ]
        if off:
            other: Loc | None = off[0].loc
            why = f"the upload that would make it ({_where(off[0].loc)}) does not run: {off[0].off}"
        elif refs:
            job_locs = [self.reading.jobs[r.text].loc for r in refs if r.text in self.reading.jobs]
            other = job_locs[0] if job_locs else refs[0].loc
            where = ", ".join(
                f"{r.text} ({_where(self.reading.jobs[r.text].loc)})"
                if r.text in self.reading.jobs
                else r.text
                for r in refs
            )
            why = f"no active upload in its jobs ({where}) makes it" + (
                f" in a run on {on} (its events)" if on else ""
            )
        else:
            close = self.closest_upload(names[0])
            other = close.loc if close else None
            why = (
                f"no active upload in the workflows makes it; the closest is {shown(close.value)} at {_where(close.loc)}"
                if close
                else "no active upload in the workflows makes it"
            )
        self.missing_rows[len(self.findings)] = rows
        self.found(
            "missing-upload",
            producer.id,
            template.loc,
            other,
            f"producer {producer.id}: template {template.text!r} ({_where(template.loc)}) is "
            f"active at stage {self.stage}, but {why}: rows {shown_rows}. Upload it, or turn the "
            "producer off at this stage.",
        )

    def closest_upload(self, name: str) -> Transfer | None:
        names = [shown(t.value) for t in self.uploads]
        close = closest(name, names, cutoff=0.5)
        return self.uploads[names.index(close)] if close is not None else None

    # -- select-differs

    def declared(self, item: Consumer | Release) -> dict[tuple[str, str], Row]:
        """The rows the item selects in the model, once per comparison (each run kind it
        is compared on and each finding's consequences ask again)."""
        key = (item.kind, item.id)
        found = self._declared.get(key)
        if found is None:
            found = self._declared[key] = self._declare(item)
        return found

    def _declare(self, item: Consumer | Release) -> dict[tuple[str, str], Row]:
        from stagegate.engine.match import selections

        chosen: dict[tuple[str, str], Row] = {}
        if isinstance(item, Consumer):
            for entry in item.inputs:
                for _selector, rows in selections(self.plan, entry):
                    for row in rows:
                        chosen.setdefault((row.producer, row.name), row)
        else:
            for row in release_selection(item, index(self.plan, frozenset({item.run}))):
                chosen.setdefault((row.producer, row.name), row)
        return chosen

    def pool(self, transfer: Transfer, item: Consumer | Release) -> RowIndex:
        """The rows a download can see: its run's.

        A download from the run itself sees the producers of run ``this``. One from
        another run (``gh run download RUN``, ``run-id:``) sees, for a release, the run
        the release reads (its ``run``: by default the tag's own CI run); for a consumer,
        the other runs its inputs read (through ``from``), or every other run."""
        if transfer.run == "this":
            return index(self.plan, frozenset({"this"}))
        if isinstance(item, Release):
            return index(self.plan, frozenset({item.run}))
        from stagegate.engine.match import input_runs

        runs = frozenset().union(*(input_runs(self.plan, i) for i in item.inputs)) - {"this"}
        if not runs:
            runs = frozenset(p.run for p in self.plan.producers) - {"this"}
        return index(self.plan, runs)

    def waited(self, download: Transfer) -> frozenset[str] | None:
        """The jobs whose uploads a release's download of its own run can take: its job
        (the top job of the run, for a job of a reusable workflow), those it waits for
        (``needs``) and every job those call; None where the download reads another run.
        A job of its workflow it does not wait for may not have finished (continuity, too,
        takes only these)."""
        if download.run != "this":
            return None
        top = self.reading.jobs.get(download.jobs()[-1])
        if top is None:
            return None
        closure = top.waits | {top.id}
        return frozenset(closure | {t.job for t in self.uploads if closure & set(t.jobs())})

    def reaches(self, row: Row, waited: frozenset[str]) -> bool:
        """Whether a producer row can reach a download that sees the uploads of ``waited``
        (jobs of one workflow): its producer lists a job among them, or one of another
        workflow (the model's run spans the files), or none (or a pattern) to tell."""
        refs = self.jobs(self.migration.producers[row.producer])
        files = {job.partition("#")[0] for job in waited}
        return not refs or any(
            "*" in ref or ref in waited or ref.partition("#")[0] not in files for ref in refs
        )

    def differs(self, item: Consumer | Release, on: str = "") -> None:
        """``on``: compare only the downloads of the jobs that run on that run kind."""
        declared = self.declared(item)
        want = item.dispatch if isinstance(item, Release) else {}
        downloads = [
            t
            for t in self.transfers_of(item, self.active_downloads)
            if self.runs_on(t, on) and dispatch.matches(want, t.dispatch)
        ]
        real: dict[tuple[str, str], tuple[Row, Transfer]] = {}
        maybe: list[tuple[RowIndex, Language]] = []
        for download in downloads:
            pool = self.pool(download, item)
            if not download.resolved and (download.job, download.callers) in self.halted:
                continue  # its job runs no row: it selects nothing (empty-matrix)
            if not download.resolved:
                maybe += [(pool, lang) for lang, _ in self.langs(download, unknown=True)]
                continue
            waited = self.waited(download) if isinstance(item, Release) else None
            for lang, prefix, removed in selections_of(download, self.axes):
                from stagegate.engine.match import Selector

                for row in selected(Selector((), lang, prefix, download.text()), pool, removed):
                    if waited is None or self.reaches(row, waited):
                        real.setdefault((row.producer, row.name), (row, download))
        only_declared = [
            row
            for key, row in declared.items()
            if key not in real and not any(_may_select(pool, lang, row) for pool, lang in maybe)
        ]
        only_real = [pair for key, pair in real.items() if key not in declared]
        if not only_declared and not only_real:
            return
        self.differences[len(self.findings)] = (
            tuple(row.name for row in only_declared),
            tuple(row.name for row, _ in only_real),
        )
        parts = []
        if only_real:
            rows = [f"{row.name} ({row.producer}, by {_where(t.loc)})" for row, t in only_real]
            parts.append(f"the workflows also select {_listed(rows)}")
        if only_declared:
            rows = [f"{row.name} ({row.producer})" for row in only_declared]
            parts.append(f"the model also selects {_listed(rows)}")
        other = only_real[0][1].loc if only_real else downloads[0].loc if downloads else None
        if other is None:
            refs = self.settings.jobs_of(item)
            other = next(
                (self.reading.jobs[r.text].loc for r in refs if r.text in self.reading.jobs), None
            )
        where = ", ".join(ref.text for ref in self.settings.jobs_of(item))
        self.found(
            "select-differs",
            item.id,
            item.loc,
            other,
            f"{item.kind} {item.id} ({_where(item.loc)}) selects other rows than the "
            f"downloads of its jobs ({where}"
            + (f"; first download at {_where(other)}" if downloads else "; no download found")
            + f") at stage {self.stage}"
            + (f" in a run on {on} (its events)" if on else "")
            + ": "
            + "; ".join(parts)
            + ". Make the selects say what the downloads take, or change the downloads.",
        )

    # -- empty-matrix

    def empty_matrices(self, item: Consumer | Release) -> None:
        """Each job of the item (or job its jobs call) whose generated matrix has no row:
        the job fails before its first step, so none of its downloads runs."""
        refs = self.jobs(item)
        for halt in self.reading.halted:
            if not any(_names(ref, job) for ref in refs for job in halt.jobs()):
                continue
            top = halt.callers[0] if halt.callers else halt.job
            how = (
                f"comes from a command that stops with an error ({halt.message!r} at "
                f"{_where(halt.generator)})"
                if halt.generator is not None
                else "is generated with no row"
            )
            self.found(
                "empty-matrix",
                item.id,
                item.loc,
                halt.generator or halt.matrix,
                f"{item.kind} {item.id} ({_where(item.loc)}): its job {top} runs no matrix row "
                f"at stage {self.stage}: the matrix of {halt.job} ({_where(halt.matrix)}) {how}, "
                "so the job fails before its first step and downloads nothing. Give the "
                f"generator rows for {top} again, or take the job out of the {item.kind}'s jobs.",
            )


def _names(ref: str, job: str) -> bool:
    """Whether the `jobs` entry ``ref`` names ``job`` (``PATH#JOB``; globs allowed)."""
    import fnmatch

    return fnmatch.fnmatchcase(job, ref) if "*" in ref else job == ref


def _may_select(pool: RowIndex, lang: Language, row: Row) -> bool:
    for position, candidate in enumerate(pool.rows):
        if candidate is row:
            return intersects(lang, pool.language(position))
    return False


def _listed(rows: Sequence[str], limit: int = 5) -> str:
    shown_rows = ", ".join(rows[:limit])
    return shown_rows + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def drift(
    migration: Migration,
    stage: int,
    reading: Reading | None = None,
    *,
    strict: bool = False,
    files: Files | None = None,
    side: Side | None = None,
) -> Drift:
    """Compare the model with the workflows at ``stage``; InvalidInput for a bad workflow.
    ``strict``: an unresolved value (or an unread step) fails the comparison too.
    ``files``: the parsed workflow files, where the caller keeps them across stages;
    ``reading`` and ``side``: a reading the caller made with ``ci.ships.read_model``."""
    from stagegate.ci.files import files_for
    from stagegate.ci.ships import read_model
    from stagegate.engine import globs
    from stagegate.engine.budget import work_limit

    files = files or files_for(migration)
    if reading is None or side is None:
        reading, side = read_model(migration, stage, files)
    try:
        with globs.budget(work_limit(migration)):
            found = _Compare(migration, stage, reading, side).run()
    except globs.TooMuchWork as exc:  # the input as a whole: exit 2 at the stage, never 70
        raise TooComplex(migration.stage_loc, f"drift at stage {stage}: {exc.message}") from None
    order = {kind: i for i, kind in enumerate(FINDING_KINDS)}
    found.sort(key=lambda f: (order[f.kind], f.loc))
    return Drift(
        stage=stage,
        reading=reading,
        findings=tuple(found),
        paths=migration.workflows.paths,
        strict=strict,
        root=migration.root,
        unread=_unread(reading, side),
    )


# --------------------------------------------------------------------------- what ships


def _unread(reading: Reading, side: Side) -> tuple[Unresolved, ...]:
    """The steps whose effect on artifacts is not read, in jobs where artifacts flow (a
    remote action elsewhere cannot change what is uploaded, downloaded or published):
    remote actions neither known nor declared, versions not in a ref, uploads that may
    collide behind an ``if:`` that cannot be evaluated; each once."""
    known = {(u.loc, u.expression) for u in reading.unresolved}
    out = []
    for u in side.unresolved:
        key = (u.loc, u.expression)
        jobs = side.unread_in.get(key)
        if key not in known and jobs is not None and jobs & side.flow:
            out.append(u)
    return tuple(out)


def _ship_findings(compare: _Compare, side: Side) -> None:
    """What the artifact actions do with the files: collisions, backends, exact names, and
    files a release job downloads for its publish step that land where it does not read."""
    for f in side.findings:
        compare.found(f.kind, "", f.loc, f.contexts[0].loc if f.contexts else None, f.message)
        compare.about[len(compare.findings) - 1] = f
    for release in side.releases:
        _report_stranded(compare, release, list(release.stranded))


def _report_stranded(compare: _Compare, release: ShipRelease, found: list[Stranded]) -> None:
    """A ``where-files-land`` finding per download of ``release`` whose files land where
    its publish step does not read them."""
    by_fetch: dict[Loc, list[Stranded]] = {}
    for s in found:
        by_fetch.setdefault(s.fetch.loc, []).append(s)
    for loc, stranded in by_fetch.items():
        fetch, publisher = stranded[0].fetch, stranded[0].publisher
        moved = sorted({p for s in stranded for p in s.moved})
        if moved:
            why = f"its script then moves them to {', '.join(moved)}"
            fix = "move them into the folder it reads"
        elif fetch.path == "." and fetch.kind == "pattern" and not fetch.merge:
            why = "it has no path: and several artifacts, so each lands in its own folder of the workspace"
            fix = "give it the publish step's folder as path: and merge-multiple: true"
        elif fetch.path == ".":
            why = "it has no path:, so the files land in the workspace"
            fix = "give it the publish step's folder as path:"
        elif fetch.kind == "pattern" and not fetch.merge:
            why = "it takes several artifacts without merge-multiple: true, so each lands in its own folder"
            fix = "add merge-multiple: true (or name: one artifact)"
        else:
            why = f"its path: {fetch.path} is not the folder the publish step reads"
            fix = "download into that folder"
        files = _listed(
            [f"{s.context.label()} ({s.context.name!r}) in {s.lands}" for s in stranded], 4
        )
        compare.found(
            "where-files-land",
            "",
            loc,
            publisher.loc,
            f"release job {release.job}: the download at {_where(loc)} lands {files}; {why}, "
            f"and the publish step {publisher.tool} ({_where(publisher.loc)}) reads "
            f"{', '.join(publisher.reads)}: those files are not published; {fix}.",
        )
        compare.stranded[len(compare.findings) - 1] = stranded


def _rows_of(compare: _Compare, contexts: Sequence[Any]) -> list[Row]:
    """The model rows the uploads of these contexts make (their names, where declared)."""
    if not compare.upload_of:
        for t in compare.uploads:
            compare.upload_of.setdefault((t.loc, shown(t.value)), t)
    found = [compare.upload_of.get((c.loc, c.name)) for c in contexts]
    wanted = {id(t) for t in found if t is not None}
    return [
        compare.all_rows.rows[position]
        for position, uploads in compare.accounted.items()
        if any(id(t) in wanted for t in uploads)
    ]


def _with_consequences(compare: _Compare) -> list[DriftFinding]:
    """Each finding with what it does to the active releases and consumers: which now get
    another set of artifacts, and how (lost, gained)."""
    from stagegate.records import replace

    items: list[Consumer | Release] = [*compare.plan.releases, *compare.plan.consumers]
    out = []
    for n, finding in enumerate(compare.findings):
        found = []
        for item in items:
            chosen = compare.declared(item)
            lost, gained = _effect(compare, n, finding, item, chosen)
            ship = compare.about.get(n)
            uploads = finding.kind in ("upload-collision", "upload-overwrite") and ship
            if lost or gained:
                found.append(
                    Consequence(
                        item=item.id,
                        kind=item.kind,
                        lost=tuple(dict.fromkeys(lost)),
                        gained=tuple(dict.fromkeys(gained)),
                        total=len(ship.contexts) if uploads and ship else len(chosen),
                        unit=f"uploads of {ship.contexts[0].name!r}"
                        if uploads and ship
                        else "artifacts",
                    )
                )
        if found:
            said = "; ".join(c.sentence() for c in found)
            finding = replace(
                finding,
                consequences=tuple(found),
                message=f"{finding.message.rstrip('.')}. Consequence: {said}.",
            )
        out.append(finding)
    return out


def _effect(
    compare: _Compare,
    n: int,
    finding: DriftFinding,
    item: Consumer | Release,
    chosen: dict[tuple[str, str], Row],
) -> tuple[list[str], list[str]]:
    """What ``finding`` (the ``n``-th) takes from and adds to what ``item`` selects."""
    kind = finding.kind
    if kind == "select-differs":
        if finding.item != item.id or n not in compare.differences:
            return [], []
        lost, gained = compare.differences[n]
        return list(lost), list(gained)
    if kind == "missing-upload":
        producer = compare.migration.producers.get(finding.item)
        if producer is None:
            return [], []
        missing = {r.name for r in compare.missing_rows.get(n, ())}
        return [name for (pid, name) in chosen if pid == producer.id and name in missing], []
    if kind == "undeclared-upload":
        uploads = compare.undeclared_of.get(n, [])
        return [], [shown(t.value) for t in uploads if _takes(compare, item, t)]
    ship = compare.about.get(n)
    if kind in ("upload-collision", "upload-overwrite") and ship is not None:
        rows = {(r.producer, r.name) for r in _rows_of(compare, ship.contexts)}
        if not rows & chosen.keys():
            return [], []
        # one upload of the name keeps its files: the first (v4 refuses the others) or the
        # last (each overwrite deletes the one before); which one, a run decides
        kept = ship.contexts[-1] if kind == "upload-overwrite" else ship.contexts[0]
        return [c.label() for c in ship.contexts if c is not kept], []
    if kind == "backend-mismatch" and ship is not None:
        if not _in_item_jobs(compare, item, ship.loc):
            return [], []
        rows = {(r.producer, r.name) for r in _rows_of(compare, ship.contexts)}
        return [name for key in rows if key in chosen for name in [key[1]]], []
    if kind == "exact-name-glob":
        if not _in_item_jobs(compare, item, finding.loc):
            return [], []
        from stagegate.engine.match import plain_selector

        lang = plain_selector(ship.select if ship is not None else "").language
        return [row.name for row in chosen.values() if intersects(lang, language(row.pieces))], []
    stranded = compare.stranded.get(n)
    if kind == "where-files-land" and stranded:
        if not _in_item_jobs(compare, item, finding.loc) and (
            compare.jobs(item) or not isinstance(item, Release)
        ):
            return [], []  # the item's own jobs (or, without jobs, a release) publish
        made = _rows_of(compare, [s.context for s in stranded])
        return [r.name for r in made if (r.producer, r.name) in chosen], []
    return [], []


def _in_item_jobs(compare: _Compare, item: Item, loc: Loc) -> bool:
    """Whether the download step at ``loc`` runs in one of the item's jobs."""
    return any(
        t.loc == loc and compare.in_jobs(item, t) for t in compare.active_downloads
    ) and bool(compare.jobs(item))


def _takes(compare: _Compare, item: Consumer | Release, upload: Transfer) -> bool:
    """Whether the item would take an upload's names (uploads are this run's: the run of
    the workflows read). With jobs: a download of its jobs that runs for it (a release:
    read with its ``dispatch`` values) and reads this run selects them, minus what its
    script removes (``Takers``). Without jobs: its own selects, those that read this run
    (a release's ``run``; an input's ``from`` runs), minus their excludes."""
    if compare.jobs(item):
        return (item.kind, item.id) in compare.takers.of(upload)
    return any(
        intersects(lang, other, excluding=removed)
        for other, removed in _own_selects(compare, item)
        for lang, _prefix in compare.langs(upload)
    )


class Takers:
    """Which items with jobs take an upload's names, for every upload a finding names:
    the selections of every item's downloads (those that run for it and read this run)
    indexed once by their fixed prefixes, so that an upload is tested exactly against the
    selections whose prefix meets one of its names' (``_meet``), not against every
    download of every item."""

    def __init__(self, compare: _Compare) -> None:
        self.compare = compare
        self.entries: list[tuple[str, tuple[str, str], Language, list[Language]]] | None = None
        self.prefixes: list[str] = []
        self.by_prefix: dict[str, list[int]] = {}
        self.found: dict[int, set[tuple[str, str]]] = {}

    def build(self) -> list[tuple[str, tuple[str, str], Language, list[Language]]]:
        compare = self.compare
        entries: list[tuple[str, tuple[str, str], Language, list[Language]]] = []
        items: list[Consumer | Release] = [*compare.plan.releases, *compare.plan.consumers]
        for item in items:
            if not compare.jobs(item):
                continue
            want = item.dispatch if isinstance(item, Release) else {}
            for d in compare.transfers_of(item, compare.active_downloads):
                if d.resolved and dispatch.matches(want, d.dispatch) and _reads_this(item, d):
                    for other, fixed, removed in compare.selections(d):
                        entries.append((fixed, (item.kind, item.id), other, removed))
        entries.sort(key=lambda entry: entry[0])
        self.prefixes = [entry[0] for entry in entries]
        for position, entry in enumerate(entries):
            self.by_prefix.setdefault(entry[0], []).append(position)
        return entries

    def of(self, upload: Transfer) -> set[tuple[str, str]]:
        """(kind, id) of each item with jobs that takes some name of ``upload``."""
        import bisect

        found = self.found.get(id(upload))
        if found is not None:
            return found
        entries = self.entries if self.entries is not None else self.build()
        self.entries = entries
        found = set()
        for lang, prefix in self.compare.langs(upload):
            lo = bisect.bisect_left(self.prefixes, prefix)
            hi = bisect.bisect_left(self.prefixes, prefix + "\U0010ffff", lo)
            near = list(range(lo, hi))
            for end in range(len(prefix)):
                near += self.by_prefix.get(prefix[:end], ())
            for position in near:
                _fixed, key, other, removed = entries[position]
                if key not in found and intersects(lang, other, excluding=removed):
                    found.add(key)
        self.found[id(upload)] = found
        return found


def _own_selects(
    compare: _Compare, item: Consumer | Release
) -> list[tuple[Language, list[Language]]]:
    """An item's own selects that read this run, with what each excludes (once per item)."""
    key = (item.kind, item.id)
    found = compare.own.get(key)
    if found is not None:
        return found
    from stagegate.engine.match import input_excludes, input_runs, input_selectors, plain_selector

    if isinstance(item, Release):
        removed = [plain_selector(t.text).language for t in item.exclude]
        found = (
            [(plain_selector(t.text).language, removed) for t in item.select]
            if item.run == "this"
            else []
        )
    else:
        found = [
            (s.language, input_excludes(entry))
            for entry in item.inputs
            if "this" in input_runs(compare.plan, entry)
            for s in input_selectors(compare.migration, entry)
        ]
    compare.own[key] = found
    return found


def _reads_this(item: Consumer | Release, download: Transfer) -> bool:
    """Whether a download of the item's jobs reads this run: a download from the run
    itself; from another run, only a release's whose ``run`` is this one (the run it
    releases is the one the workflows read, as ``pool`` sees it)."""
    if download.run == "this":
        return True
    return isinstance(item, Release) and item.run == "this"


def workflow_side(finding: DriftFinding, reading: Reading) -> tuple[Loc, ...]:
    """The workflow places ``finding`` is about: its other side, then each upload and
    download of the jobs its message names. In a pull request its annotation goes to the
    first of them the pull request changed (the step that now uploads or downloads
    something else), not to the model's unchanged line."""
    import re

    jobs = {t.job for t in reading.transfers if t.job in finding.message}
    named = {
        job
        for job in jobs
        if re.search(re.escape(job) + r"(?![A-Za-z0-9_.-])", finding.message) is not None
    }
    places = [finding.other] if finding.other is not None else []
    places += [t.loc for t in reading.transfers if named & set(t.jobs())]
    return tuple(dict.fromkeys(places))
