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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stagegate.ci.transfers import Reading, Transfer, shown
from stagegate.ci.workflows import matches_job
from stagegate.ci.workflows import read as read_workflows
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
from stagegate.errors import Loc
from stagegate.model import Consumer, Item, Migration, Producer, Release
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value
from stagegate.model.templates import Axis, finite_axes
from stagegate.records import record
from stagegate.words import closest

FINDING_KINDS = ("undeclared-upload", "missing-upload", "select-differs", "unknown-job")


@record(kw_only=True)
class DriftFinding:
    kind: str
    item: str  # the model item, or "" for an upload no producer declares
    loc: Loc  # the primary place: the workflow for uploads, migration.yaml otherwise
    other: Loc | None  # the other side
    message: str


@record(kw_only=True, eq=False)
class Drift:
    stage: int
    reading: Reading
    findings: tuple[DriftFinding, ...]
    paths: tuple[str, ...] = ()
    strict: bool = False
    """Whether a value that cannot be evaluated fails too (`drift --strict`)."""
    root: Path | None = None
    """The migration's folder (where the pull request's changed lines are asked of git)."""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def failed(self) -> bool:
        return not self.ok or (self.strict and bool(self.reading.unresolved))


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
    def __init__(self, migration: Migration, stage: int, reading: Reading) -> None:
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
        self._by_job: dict[int, dict[str, list[Transfer]]] = {}

    def langs(self, transfer: Transfer, *, unknown: bool = False) -> list[tuple[Language, str]]:
        """A transfer's languages, built once per comparison."""
        key = (id(transfer), unknown)
        found = self._langs.get(key)
        if found is None:
            found = self._langs[key] = languages(transfer, self.axes, unknown=unknown)
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
        accounted = self.undeclared()
        self.missing(accounted)
        for consumer in self.plan.consumers:
            if self.jobs(consumer):
                self.differs(consumer)
        for release in self.plan.releases:
            if self.jobs(release):
                self.differs(release)
        return self.findings

    # -- unknown-job

    def unknown_jobs(self) -> None:
        """Each ``jobs`` entry names a job, but for an item retired at or before this stage:
        removing its job is what retiring it means (the flip to that stage does it)."""
        from stagegate.engine.resolve import retired_at

        known = self.reading.jobs
        for item in self.migration.items():
            gone = retired_at(self.migration, item.when)
            if gone is not None and gone <= self.stage:
                continue
            for ref in self.settings.jobs_of(item):
                if "*" in ref.text:
                    import fnmatch

                    if any(fnmatch.fnmatchcase(job, ref.text) for job in known):
                        continue
                elif ref.text in known:
                    continue
                close = closest(ref.text, known)
                hint = f"; did you mean {close!r} ({_where(known[close].loc)})?" if close else ""
                read = ", ".join(self.reading.files[:3]) + (
                    f" and {len(self.reading.files) - 3} more"
                    if len(self.reading.files) > 3
                    else ""
                )
                self.found(
                    "unknown-job",
                    item.id,
                    ref.loc,
                    known[close].loc if close else None,
                    f"{item.kind} {item.id}: jobs entry {ref.text!r} ({_where(ref.loc)}) names no "
                    f"job of the workflows read ({read or 'none'}){hint}: fix the entry or "
                    "workflows.paths.",
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
        for upload, names in grouped.values():
            self.report_undeclared(upload, names)
        return accounted

    def report_undeclared(self, upload: Transfer, names: list[str]) -> None:
        listing = [
            p
            for p in self.plan.producers
            if any(matches_job(r.text, upload) for r in self.settings.jobs_of(p))
        ]
        if listing:
            home: Item = listing[0]
            hint = (
                f"producer {home.id} ({_where(home.loc)}) lists this job but none of its active "
                "templates has this name"
            )
            other = home.loc
        else:
            close = self.closest(names[0])
            hint = (
                f"the closest active row is {close.name} of producer {close.producer} "
                f"({_where(close.template.loc)})"
                if close
                else "no active producer has a template like it"
            )
            other = close.template.loc if close else self.producers_loc()
        job = upload.job
        shown_names = ", ".join(names[:3]) + (
            f" and {len(names) - 3} more" if len(names) > 3 else ""
        )
        self.found(
            "undeclared-upload",
            listing[0].id if listing else "",
            upload.loc,
            other,
            f"the upload at {_where(upload.loc)} in job {job} names {shown_names}; no "
            f"active producer at stage {self.stage} has {'it' if len(names) == 1 else 'them'} as a "
            f"row ({hint}): declare it "
            "(a template and the job under jobs), or remove the upload.",
        )

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
            by_template: dict[int, list[tuple[Row, int]]] = {}
            for row in self.plan.rows(producer):
                position = positions[id(row)]
                if any(self.in_jobs(producer, t) for t in accounted.get(position, ())):
                    continue
                lang = self.all_rows.language(position)
                if any(
                    self.in_jobs(producer, t)
                    and any(intersects(lang, other) for other, _ in self.langs(t, unknown=True))
                    for t in self.open_uploads
                ):
                    continue  # an unresolved upload may yield it
                by_template.setdefault(id(row.template), []).append((row, position))
            for rows in by_template.values():
                self.report_missing(producer, rows)

    def report_missing(self, producer: Producer, found: list[tuple[Row, int]]) -> None:
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
            why = f"no active upload in its jobs ({where}) makes it"
        else:
            close = self.closest_upload(names[0])
            other = close.loc if close else None
            why = (
                f"no active upload in the workflows makes it; the closest is {shown(close.value)} at {_where(close.loc)}"
                if close
                else "no active upload in the workflows makes it"
            )
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

    def differs(self, item: Consumer | Release) -> None:
        declared = self.declared(item)
        downloads = self.transfers_of(item, self.active_downloads)
        real: dict[tuple[str, str], tuple[Row, Transfer]] = {}
        maybe: list[tuple[RowIndex, Language]] = []
        for download in downloads:
            pool = self.pool(download, item)
            if not download.resolved:
                maybe += [(pool, lang) for lang, _ in self.langs(download, unknown=True)]
                continue
            for lang, prefix, removed in selections_of(download, self.axes):
                from stagegate.engine.match import Selector

                for row in selected(Selector((), lang, prefix, download.text()), pool, removed):
                    real.setdefault((row.producer, row.name), (row, download))
        only_declared = [
            row
            for key, row in declared.items()
            if key not in real and not any(_may_select(pool, lang, row) for pool, lang in maybe)
        ]
        only_real = [pair for key, pair in real.items() if key not in declared]
        if not only_declared and not only_real:
            return
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
            + (f"; first download at {_where(other)}" if other else "; no download found")
            + f") at stage {self.stage}: "
            + "; ".join(parts)
            + ". Make the selects say what the downloads take, or change the downloads.",
        )


def _may_select(pool: RowIndex, lang: Language, row: Row) -> bool:
    for position, candidate in enumerate(pool.rows):
        if candidate is row:
            return intersects(lang, pool.language(position))
    return False


def _listed(rows: Sequence[str], limit: int = 5) -> str:
    shown_rows = ", ".join(rows[:limit])
    return shown_rows + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def drift(
    migration: Migration, stage: int, reading: Reading | None = None, *, strict: bool = False
) -> Drift:
    """Compare the model with the workflows at ``stage``; InvalidInput for a bad workflow.
    ``strict``: an unresolved value fails the comparison too."""
    from stagegate.engine import globs
    from stagegate.engine.budget import work_limit

    reading = reading if reading is not None else read_workflows(migration, stage)
    with globs.budget(work_limit(migration)):
        found = _Compare(migration, stage, reading).run()
    order = {kind: i for i, kind in enumerate(FINDING_KINDS)}
    found.sort(key=lambda f: (order[f.kind], f.loc))
    return Drift(
        stage=stage,
        reading=reading,
        findings=tuple(found),
        paths=migration.workflows.paths,
        strict=strict,
        root=migration.root,
    )


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


# --------------------------------------------------------------------------- transfers as data


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
