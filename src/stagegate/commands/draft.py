"""What `init --from-workflows` writes: a Draft (records) built from the workflows, and
``render``, the pure function that writes a draft as the text of a migration file.

The workflows are read as ``drift`` reads them, with matrix values tagged by their key:
one producer per job that uploads (its names as templates, matrix keys as axes,
``github.sha`` as the open axis ``sha``), one consumer per job that downloads from its
own run, releases found as ``continuity`` finds them (``ci.ships``), one per set of tags
their triggers accept, each with ``jobs``. Where a job's matrix rows do not form a full
product of the keys a name uses, the rows are written out one by one, so that the model
says exactly what the workflows do and ``drift`` passes at stage 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stagegate.checks._release_plan import selecting_nothing
from stagegate.ci.dispatch import apart as dispatch_apart
from stagegate.ci.dispatch import matches as dispatch_matches
from stagegate.ci.dispatch import split as release_split
from stagegate.ci.publish import GLOB_CHARS
from stagegate.ci.shipped import Side
from stagegate.ci.transfers import Reading, Transfer, shown
from stagegate.ci.workflows import read as read_workflows
from stagegate.errors import Loc
from stagegate.model import Bind, Migration, Template, WorkflowSettings
from stagegate.model.ghexpr import Ph, Sym, Value
from stagegate.model.templates import Axis, split
from stagegate.records import record

SHA_PATTERN = "[0-9a-f]{40}"
GENERATED_PATTERN = "[A-Za-z0-9._-]+"
"""The open axis that stands for a generated matrix key's values (unknown until listed)."""


def quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def _flow(pairs: Iterable[tuple[str, str]]) -> str:
    """A YAML flow mapping of (key, text) pairs, each text quoted."""
    return "{" + ", ".join(f"{k}: {quote(v)}" for k, v in pairs) + "}"


def comment(text: str) -> str:
    return " ".join(text.split())


def new_id(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._") or "item"
    if not re.match(r"[a-z0-9]", base):
        base = "x" + base
    base = base[:90]
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _axis_name(key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", key)
    if not re.match(r"[A-Za-z_]", name):
        name = "m_" + name
    return name[:90]


# --------------------------------------------------------------------------- reading


def _pseudo(root: Path, file: str, axes: Mapping[str, Axis], bind: Mapping[str, str]) -> Migration:
    """A migration with no items, only the axes and binds the reading needs."""
    loc = Loc(file, 1, 1)
    binds = {
        key: Bind(key=key, text=Template(text=text, parts=split(text), loc=loc), loc=loc)
        for key, text in bind.items()
    }
    return Migration(
        version=1,
        id="init",
        stage=0,
        stage_loc=loc,
        stages_dir="stages",
        axes=dict(axes),
        flags={},
        producers={},
        consumers={},
        releases={},
        file=file,
        root=root,
        workflows=WorkflowSettings(bind=binds),
    )


@record(kw_only=True)
class ReleaseJob:
    """A job ``stagegate continuity`` takes for a release, and the tags its trigger accepts."""

    job: str  # PATH#JOB
    events: tuple[str, ...]
    tags: tuple[str, ...]
    """Tag globs: ``on.push.tags``; ``*`` for a push of any tag, a release event or a
    dispatch; narrowed by an ``if:`` that requires ``refs/tags/PREFIX``."""
    ignore: tuple[str, ...]
    """``on.push.tags-ignore``: tags the trigger does not accept."""
    why: str
    closure: frozenset[str] = frozenset()
    """The jobs it waits for (``needs_closure``): the only ones whose uploads it can take."""


_TAG_PREFIX = re.compile(
    r"startsWith\(\s*github\.(?:event\.)?ref\s*,\s*['\"]refs/tags/([^'\"*?\[]*)['\"]\s*\)"
)
_EVENT_WORDS = {
    "release": "a release event (any tag)",
    "workflow_dispatch": "workflow_dispatch (any tag it is given)",
}


def _strings(value: object) -> list[str]:
    items = [value] if isinstance(value, str | int | float) else value
    if not isinstance(items, list):
        return []
    return [str(v) for v in items if isinstance(v, str | int | float) and str(v)]


def _trigger_tags(
    data: Mapping[str, Any], events: Sequence[str], condition: object
) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """The tag globs a release job's trigger accepts, those it ignores, and why."""
    on = data.get("on")
    push = on.get("push") if isinstance(on, dict) else None
    push = push if isinstance(push, dict) else {}
    globs: list[str] = []
    why: list[str] = []
    ignore: list[str] = []
    if "push-tag" in events:
        listed = _strings(push.get("tags"))
        ignore = _strings(push.get("tags-ignore"))
        globs += listed or ["*"]
        why.append(f"on.push.tags {' '.join(listed)}" if listed else "a push of any tag")
    for event, words in _EVENT_WORDS.items():
        if event in events:
            globs.append("*")
            why.append(words)
    prefix = _TAG_PREFIX.search(condition) if isinstance(condition, str) else None
    if "*" in globs:
        globs = ["*"]
        if prefix and prefix.group(1):
            globs = [prefix.group(1) + "*"]
            why.append(f"if: requires refs/tags/{prefix.group(1)}")
    return tuple(dict.fromkeys(globs)), tuple(ignore), "; ".join(why)


def release_jobs(root: Path, shipping: Side, reading: Reading) -> dict[str, ReleaseJob]:
    """The release jobs of the workflows under ``root``, found as ``continuity`` finds them
    (``ci.ships``: a job that can run where a tag is the ref, and publishes)."""
    from stagegate.ci.files import Files

    files = Files(root)
    found: dict[str, ReleaseJob] = {}
    candidates = {f"{r.file}#{r.job}": r.events for r in shipping.releases}
    for job in sorted(candidates):
        rel, _, job_id = job.partition("#")
        data = files.get(rel).data
        condition = _job_spec(data, job_id).get("if")
        tags, ignore, why = _trigger_tags(data, candidates[job], condition)
        found[job] = ReleaseJob(
            job=job,
            events=candidates[job],
            tags=tags,
            ignore=ignore,
            why=why,
            closure=frozenset(needs_closure(data, job)),
        )
    return found


def _job_spec(data: Mapping[str, Any], job: str) -> Mapping[str, Any]:
    jobs = data.get("jobs")
    spec = jobs.get(job) if isinstance(jobs, dict) else None
    return spec if isinstance(spec, dict) else {}


# --------------------------------------------------------------------------- templates


class Axes:
    """Matrix keys become axes; one key with two different value lists becomes two axes."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[str, ...]] = {}
        self.open: dict[str, str] = {}

    def name_for(self, key: str, values: tuple[str, ...]) -> str:
        base = _axis_name(key)
        if base == "sha":
            base = "sha-matrix"
        candidate, n = base, 2
        while candidate in self.open or (
            candidate in self.values and self.values[candidate] != values
        ):
            candidate = f"{base}-{n}"
            n += 1
        self.values[candidate] = values
        return candidate


def _literal(text: str, *, glob_escape: bool) -> str:
    if glob_escape:
        text = re.sub(r"([*?\[])", r"[\1]", text)
    return text.replace("{", "{{").replace("}", "}}")


def _render(value: Value, names: Mapping[str, str], *, escape: bool, release: bool = False) -> str:
    """A transfer's value as template or glob text: the tagged matrix pieces whose key
    ``names`` maps as ``{axis}``, the others as their values."""
    parts = value.parts if isinstance(value, Sym) else (value,)
    out = []
    for part in parts:
        if isinstance(part, Ph) and part.value is not None:
            if part.axis in names:
                out.append("{" + names[part.axis] + "}")
            else:
                out.append(_literal(part.value, glob_escape=escape))
        elif isinstance(part, Ph):
            if release:
                out.append("[0-9a-f]" * 40 if part.axis == "sha" else "*")
            else:
                out.append("{" + part.axis + "}")
        else:
            out.append(_literal(str(part), glob_escape=escape))
    return "".join(out)


def _tagged(value: Value) -> list[Ph]:
    parts = value.parts if isinstance(value, Sym) else ()
    return [p for p in parts if isinstance(p, Ph) and p.value is not None]


def _row(t: Transfer) -> dict[str, str]:
    """The matrix values a transfer's name is made of, by key."""
    row: dict[str, str] = {}
    for ph in _tagged(t.value):
        assert ph.value is not None
        row[ph.axis] = ph.value
    return row


def _key_values(transfers: Sequence[Transfer]) -> dict[str, list[str]]:
    """Each matrix key the names are made of, with its values in order of appearance."""
    values: dict[str, list[str]] = {}
    for t in transfers:
        for key, value in _row(t).items():
            seen = values.setdefault(key, [])
            if value not in seen:
                seen.append(value)
    return values


Rows = dict[tuple[tuple[str, str], ...], None]
"""A template's rows: assignments (axis name -> value, in the template's order), in order."""


def _texts(
    transfers: Sequence[Transfer],
    axes: Axes,
    *,
    escape: bool,
    release: bool = False,
    rows_of: dict[str, Rows] | None = None,
) -> list[tuple[str, Transfer]]:
    """Template (or glob) texts for one step's transfers across its contexts (matrix rows).

    A matrix key with one value wherever the names use it is written as that value: no
    axis has one value. A release's globs are concrete, one per context. Otherwise the
    contexts are grouped by the shape of their names; a group whose rows are every
    combination of its keys' values is one text with ``{axis}`` placeholders. For a
    producer (``rows_of`` given) every key with several values is an axis of all the
    step's values, and each text's rows are recorded in ``rows_of`` (written as the
    template's ``exclude`` or ``rows``: ``_form``), so that each job row is a row of the
    model, which ``stagegate matrix`` gives back; for a consumer a group that is not
    every combination of its own values is written one concrete text per context."""
    if release:
        concrete: dict[str, Transfer] = {}
        for t in transfers:
            concrete.setdefault(_render(t.value, {}, escape=escape, release=True), t)
        return list(concrete.items())
    step = _key_values(transfers)
    varying = {key for key, values in step.items() if len(values) > 1}
    groups: dict[str, list[Transfer]] = {}
    for t in transfers:
        shape = _render(t.value, {k: "\0" + k for k in varying}, escape=escape)
        groups.setdefault(shape, []).append(t)
    out: list[tuple[str, Transfer]] = []
    for group in groups.values():
        values = step if rows_of is not None else _key_values(group)
        keys = [k for k in _key_values(group) if len(values[k]) > 1]
        rows = {tuple((k, _row(t)[k]) for k in keys): t for t in group}
        product = 1
        for key in keys:
            product *= len(values[key])
        if keys and (len(rows) == product or rows_of is not None):
            names = {key: axes.name_for(key, tuple(values[key])) for key in keys}
            text = _render(group[0].value, names, escape=escape)
            out.append((text, group[0]))
            if rows_of is not None and len(rows) < product:
                recorded = rows_of.setdefault(text, {})
                for row in rows:
                    recorded.setdefault(tuple((names[k], v) for k, v in row), None)
            continue
        seen: set[str] = set()
        for t in group:
            text = _render(t.value, {}, escape=escape)
            if text not in seen:
                seen.add(text)
                out.append((text, t))
    return out


MAX_EXCLUDE_WORK = 200_000
"""Most (candidate, row) pairs the search for a short ``exclude`` may weigh; beyond it,
a template's rows are listed (``rows:``) instead."""


def _agrees(row: Mapping[str, str], partial: Sequence[tuple[str, str]]) -> bool:
    return all(row.get(k) == v for k, v in partial)


def _exclusions(
    names: Sequence[str], values: Mapping[str, Sequence[str]], rows: Rows
) -> list[tuple[tuple[str, str], ...]] | None:
    """A short ``exclude`` (partial assignments) that leaves exactly ``rows`` of every
    combination of ``values``: chosen greedily, each entry the one that drops the most rows
    still to drop (fewest axes first on a tie) without dropping a row that is kept. None
    when the combinations are too many to weigh (``MAX_EXCLUDE_WORK``)."""
    import itertools

    kept = [dict(row) for row in rows]
    every = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values.values())]
    drop = [i for i, row in enumerate(every) if tuple(row.items()) not in rows]
    candidates = 1
    for name in names:
        candidates *= len(values[name]) + 1
    if candidates * max(len(drop), 1) > MAX_EXCLUDE_WORK:
        return None
    choices: list[tuple[tuple[tuple[str, str], ...], set[int]]] = []
    for size in range(1, len(names) + 1):
        for subset in itertools.combinations(names, size):
            for combo in itertools.product(*(values[n] for n in subset)):
                partial = tuple(zip(subset, combo, strict=True))
                if any(_agrees(row, partial) for row in kept):
                    continue
                covered = {i for i in drop if _agrees(every[i], partial)}
                if covered:
                    choices.append((partial, covered))
    left, chosen = set(drop), []
    while left:
        best, gain = choices[0], -1
        for choice in choices:
            count = len(choice[1] & left)
            if count > gain:
                best, gain = choice, count
        chosen.append(best[0])
        left -= best[1]
    return chosen


def _form(
    text: str, rows: Rows, axes: Mapping[str, Sequence[str]]
) -> tuple[tuple[tuple[tuple[str, str], ...], ...], tuple[tuple[tuple[str, str], ...], ...] | None]:
    """How a template whose rows are not every combination is written: its ``exclude``
    where that is no longer than listing them, else its ``rows``."""
    names = [name for name, _ in next(iter(rows))]
    values = {name: axes[name] for name in names}
    exclude = _exclusions(names, values, rows)
    if exclude is not None and len(exclude) <= len(rows):
        return tuple(exclude), None
    return (), tuple(rows)


def _selected(
    download: Transfer, uploads: Sequence[Transfer], axes: Mapping[str, Axis]
) -> list[Transfer]:
    """The uploads of this run a download selects (after its script's ``rm -rf``), decided
    by drift's engine (``ci.drift.selections_of``, ``languages``)."""
    from stagegate.ci.drift import languages, selections_of
    from stagegate.engine.globs import intersects

    found: list[Transfer] = []
    wanted = selections_of(download, dict(axes))
    for upload in uploads:
        if not upload.resolved or upload.run != "this":
            continue
        for lang, _prefix in languages(upload, dict(axes)):
            if any(intersects(d, lang, excluding=removed) for d, _p, removed in wanted):
                found.append(upload)
                break
    return found


def _kept(
    download: Transfer, uploads: Sequence[Transfer], axes: Mapping[str, Axis], *, release: bool
) -> list[tuple[str, Transfer]]:
    """The exact names of the uploads a download keeps after its script's ``rm -rf``.

    A select cannot say "this glob minus that one", so the rows it keeps are written one
    by one, each its own exact name: the same selection, decided by the same engine."""
    return [
        (_render(upload.value, {}, escape=True, release=release), download)
        for upload in _selected(download, uploads, axes)
    ]


def needs_closure(data: Mapping[str, Any], job: str) -> set[str]:
    """The jobs of a workflow (``PATH#JOB``) whose artifacts ``job`` can rely on: itself
    and, through ``needs:``, every job it waits for (``ci.transfers.waited_for``)."""
    from stagegate.ci.transfers import waited_for

    path, _, name = job.partition("#")
    jobs = data.get("jobs")
    found = waited_for(jobs, name) if isinstance(jobs, dict) else set()
    return {f"{path}#{j}" for j in (name, *found)}


def _by_step(transfers: Iterable[Transfer]) -> dict[tuple[Any, ...], list[Transfer]]:
    grouped: dict[tuple[Any, ...], list[Transfer]] = {}
    for t in transfers:
        grouped.setdefault((t.job, t.loc, t.kind), []).append(t)
    return grouped


def from_workflows(root: Path, file: str, name: str) -> str:
    """The text of a migration in ``root`` declaring what the workflows of its
    repository do (``ci.files.workflow_root``)."""
    sha = Axis("sha", pattern=SHA_PATTERN)
    first = read_workflows(
        _pseudo(root, file, {"sha": sha}, {"github.sha": "{sha}"}), 0, tag_matrix=True
    )
    axes_open: dict[str, Axis] = {"sha": sha}
    bind: dict[str, str] = {"github.sha": "{sha}"}
    generated: dict[str, str] = {}
    for key in sorted(first.generated):
        axis = _axis_name(key)
        if axis == "sha":
            axis = "sha-matrix"
        generated[key] = axis
        axes_open[axis] = Axis(axis, pattern=GENERATED_PATTERN)
        bind[f"matrix.{key}"] = "{" + axis + "}"
    reading = (
        read_workflows(_pseudo(root, file, axes_open, bind), 0, tag_matrix=True)
        if generated
        else first
    )
    from stagegate.ci.files import Files, workflow_root
    from stagegate.ci.ships import ships

    files = workflow_root(root)  # the workflows are read at the top of the repository
    draft = _draft(reading, ships(Files(files.root)), files.root, name, axes_open, generated)
    return render(_checked(draft, render(draft), Path(file)))


MODEL_CHECKS = frozenset({"release-continuity", "unique-artifacts", "inputs-satisfied"})


def _checked(draft: Draft, text: str, path: Path) -> Draft:
    """The draft with each invariant that fails at stage 0 marked, and why: what the
    workflows do breaks it (two jobs of a run upload one name, a download selects what no
    job uploads, a v4 download of a v3 upload: the `workflows` check's what-ships
    findings); written as a comment, so that the model passes `check` and says what to
    fix (`stagegate drift` still reports it)."""
    from stagegate.checks.runner import run_checks
    from stagegate.records import replace

    migration = _loaded(text, path)
    checks = [c for c in migration.invariants if c.kind in MODEL_CHECKS or c.kind == "workflows"]
    failed: dict[str, str] = {}
    for result in run_checks(migration, 0, checks):
        if result.fails and result.label not in failed:
            first = result.findings[0].message if result.findings else result.message
            failed[result.label] = comment(first)
    failed.update(selecting_nothing(migration, checks, failed))
    if not failed:
        return draft
    invariants = []
    for inv in draft.invariants:
        label = inv.check + "".join(f" {k}={v}" for k, v in inv.args)
        label += "".join(f" dispatch.{k}={v}" for k, v in inv.dispatch)
        invariants.append(replace(inv, fails=failed[label]) if label in failed else inv)
    return replace(draft, invariants=tuple(invariants))


@record(kw_only=True)
class Entry:
    """One artifact template, select glob or input of an item, and the step it comes from."""

    text: str
    loc: Loc
    note: str = ""
    exclude: tuple[tuple[tuple[str, str], ...], ...] = ()
    rows: tuple[tuple[tuple[str, str], ...], ...] | None = None
    """An artifact template's ``exclude`` or ``rows`` (``_form``), where its rows are not
    every combination of its axes' values."""


@record(kw_only=True)
class Item:
    """A producer, consumer or release as init writes it: one per job (or per trigger)."""

    id: str
    summary: str
    entries: tuple[Entry, ...]
    jobs: tuple[str, ...]
    tags: tuple[str, ...] = ()
    dispatch: tuple[tuple[str, str], ...] = ()
    """A release's workflow_dispatch values (``dispatch:``), where its downloads differ by them."""
    exclude: tuple[str, ...] = ()
    """A release's ``exclude``: the skips all its downloads share."""


@record(kw_only=True)
class Invariant:
    check: str
    args: tuple[tuple[str, str], ...] = ()
    dispatch: tuple[tuple[str, str], ...] = ()
    comment: str = ""
    fails: str = ""
    """Why it fails at stage 0 on what the workflows do: then it is written commented out."""


@record(kw_only=True)
class Draft:
    """What ``init --from-workflows`` writes, before it is text: ``render`` writes it."""

    name: str
    files: int
    axes: tuple[tuple[str, tuple[str, ...]], ...]
    """Finite axes (from matrix keys) and their values."""
    open_axes: tuple[tuple[str, str], ...]
    """Open axes and their patterns: ``sha``, and the keys of generated matrices."""
    generated: tuple[tuple[str, str], ...]
    """A generated matrix's key and the open axis bound to it."""
    producers: tuple[Item, ...]
    consumers: tuple[Item, ...]
    releases: tuple[Item, ...]
    invariants: tuple[Invariant, ...]
    notes: tuple[str, ...]
    """What is not declared: unresolved values, downloads from other runs (one line each)."""


def entries_of(
    texts: Iterable[tuple[str, Transfer]],
    rows_of: Mapping[str, Rows] | None = None,
    axes: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Entry, ...]:
    """One entry per distinct text, in order, each with the step it first comes from (and,
    for a template whose rows ``rows_of`` records, its ``exclude`` or ``rows``)."""
    seen: dict[str, Entry] = {}
    for text, t in texts:
        if text not in seen and rows_of and text in rows_of and axes is not None:
            exclude, rows = _form(text, rows_of[text], axes)
            seen[text] = Entry(text=text, loc=t.loc, exclude=exclude, rows=rows)
        elif text not in seen:
            exact = t.direction == "download" and t.kind == "name"
            note = (
                "an exact name (name:), not a glob: no artifact name holds * or ?, so it "
                "selects nothing"
                if exact and GLOB_CHARS & set(shown(t.value))
                else ""
            )
            seen[text] = Entry(text=text, loc=t.loc, note=note)
    return tuple(seen.values())


class Builder:
    """Reads a ``Reading`` into the items of a ``Draft``, one job at a time."""

    def __init__(
        self,
        reading: Reading,
        releases: Mapping[str, ReleaseJob],
        open_axes: Mapping[str, Axis],
    ) -> None:
        self.reading = reading
        self.release_jobs = releases
        self.open_axes = open_axes
        self.axes = Axes()
        self.axes.open = {k: v.pattern or "" for k, v in open_axes.items()}
        self.skipped: list[str] = []
        self.ids: dict[str, set[str]] = {"p": set(), "c": set(), "r": set()}
        self.uploads = [t for t in reading.uploads if t.active]
        self.waits: dict[str, tuple[dict[str, None], dict[str, None]]] = {}
        """Each release job: the names its downloads select of uploads in the jobs it waits
        for (or in other workflows), and of uploads in jobs of its workflow it does not wait
        for."""
        self.rows_of: dict[str, Rows] = {}
        """Producer templates whose rows are not every combination: their rows."""
        self.kept: dict[int, list[tuple[str, Transfer]]] = {}
        """A release download with skips: the exact names of the uploads it keeps."""

    def known(self, group: Sequence[Transfer], what: str) -> list[Transfer]:
        for t in group:
            if not t.resolved:
                self.skipped.append(f"{t.loc.file}:{t.loc.line}: {what} {shown(t.value)}")
        return [t for t in group if t.resolved]

    def producers(self) -> dict[str, tuple[str, list[tuple[str, Transfer]]]]:
        producers: dict[str, tuple[str, list[tuple[str, Transfer]]]] = {}
        steps = sorted(_by_step(self.uploads).items(), key=lambda kv: kv[1][0].loc)
        for (job, _loc, _kind), group in steps:
            known = self.known(group, "upload")
            if not known:
                continue
            if job not in producers:
                producers[job] = (new_id(job.partition("#")[2], self.ids["p"]), [])
            producers[job][1].extend(_texts(known, self.axes, escape=False, rows_of=self.rows_of))
        return producers

    def release_texts(self, job: str, known: Sequence[Transfer]) -> list[tuple[str, Transfer]]:
        """A release job's download globs; the names they select of uploads in jobs it does
        not wait for are kept apart (``waits``), as continuity keeps them out."""
        texts: list[tuple[str, Transfer]] = []
        closure = self.release_jobs[job].closure
        inside, outside = self.waits.setdefault(job, ({}, {}))
        for t in known:
            if t.exclude:
                self.kept[id(t)] = _kept(t, self.uploads, self.open_axes, release=True)
            texts.extend(_texts([t], self.axes, escape=t.kind == "name", release=True))
            if t.run != "this":
                continue
            same = job.partition("#")[0]
            for upload in _selected(t, self.uploads, self.open_axes):
                name = _render(upload.value, {}, escape=True, release=True)
                top = upload.jobs()[-1]
                waited = closure & set(upload.jobs()) or top.partition("#")[0] != same
                (inside if waited else outside).setdefault(name, None)
        return texts

    def consumer_texts(self, known: Sequence[Transfer]) -> list[tuple[str, Transfer]] | None:
        this = [t for t in known if t.run == "this"]
        for t in known:
            if t.run != "this":
                self.skipped.append(
                    f"{t.loc.file}:{t.loc.line}: download {shown(t.value)} from another run "
                    f"({t.run}): declare that run's producer (run: NAME) and an input with from:"
                )
        if not this:
            return None
        texts: list[tuple[str, Transfer]] = []
        for kind in ("name", "pattern"):
            same = [t for t in this if t.kind == kind and not t.exclude]
            if same:
                texts.extend(_texts(same, self.axes, escape=kind == "name"))
        for t in this:
            if t.exclude:
                texts.extend(_kept(t, self.uploads, self.open_axes, release=False))
        return texts

    def release_of(self, t: Transfer) -> str | None:
        """The release job a download runs in (its own job, or the job calling it)."""
        return next((job for job in t.jobs() if job in self.release_jobs), None)

    def downloads(
        self,
    ) -> tuple[
        dict[str, tuple[str, list[tuple[str, Transfer]]]],
        dict[str, list[tuple[str, Transfer]]],
    ]:
        consumers: dict[str, tuple[str, list[tuple[str, Transfer]]]] = {}
        releases: dict[str, list[tuple[str, Transfer]]] = {}
        downloads = [t for t in self.reading.downloads if t.active]
        steps = sorted(_by_step(downloads).items(), key=lambda kv: kv[1][0].loc)
        for (job, _loc, _kind), group in steps:
            known = self.known(group, "download")
            release = self.release_of(group[0])
            if release is not None:
                if known:
                    releases.setdefault(release, []).extend(self.release_texts(release, known))
                continue
            texts = self.consumer_texts(known)
            if texts is None:
                continue
            if job not in consumers:
                consumers[job] = (new_id(job.partition("#")[2], self.ids["c"]), [])
            consumers[job][1].extend(texts)
        return consumers, releases


def _draft(
    reading: Reading,
    shipping: Side,
    root: Path,
    name: str,
    open_axes: Mapping[str, Axis],
    generated: Mapping[str, str],
) -> Draft:
    """What the workflows upload, download and publish, as the items of a migration."""
    jobs = release_jobs(root, shipping, reading)
    build = Builder(reading, jobs, open_axes)
    producers = _merged_v3(producer_items(build), shipping)
    consumers, releases = build.downloads()
    notes = [comment(entry) for entry in build.skipped]
    for job, release in jobs.items():
        if job not in releases:
            notes.append(
                f"{job}: a release job ({release.why}) whose downloads stagegate does not read "
                "(a script, or none): declare its release by hand (tags, select)"
            )
    notes += [
        f"{u.loc.file}:{u.loc.line}: {comment(u.expression)}: {comment(u.reason)}"
        for u in reading.unresolved
    ]
    items = _releases(releases, jobs, build.kept, reading.dispatch, build.waits)
    continuity = _continuity(items, jobs, notes)
    return Draft(
        name=name,
        files=len(reading.files),
        axes=tuple(build.axes.values.items()),
        open_axes=tuple(build.axes.open.items()),
        generated=tuple(generated.items()),
        producers=tuple(producers),
        consumers=tuple(
            Item(id=i, summary=f"The downloads of {job}.", entries=entries_of(t), jobs=(job,))
            for job, (i, t) in consumers.items()
        ),
        releases=tuple(items),
        invariants=(
            Invariant(
                check="workflows", comment="the model against the workflows (stagegate drift)"
            ),
            *continuity,
            Invariant(check="unique-artifacts", comment="no two producer rows make one name"),
            Invariant(
                check="inputs-satisfied",
                comment="each consumer's inputs are made by an active producer",
            ),
        ),
        notes=tuple(notes),
    )


def producer_items(build: Builder) -> list[Item]:
    """One producer per job that uploads, its templates as ``_texts`` writes them."""
    return [
        Item(
            id=i,
            summary=f"The uploads of {job}.",
            entries=entries_of(t, build.rows_of, build.axes.values),
            jobs=(job,),
        )
        for job, (i, t) in build.producers().items()
    ]


def _merged_v3(items: Sequence[Item], shipping: Side) -> list[Item]:
    """Jobs uploading one name: one producer where they run in different workflows (other
    runs) or use upload-artifact v3 or older (which merges same-name uploads of a run into
    one artifact). Two jobs of one run on v4 stay two producers: the second upload fails,
    and so does ``unique-artifacts``."""
    from stagegate.ci import actions

    versions: dict[str, set[int | None]] = {}
    for ctx in shipping.contexts:
        versions.setdefault(f"{ctx.file}#{ctx.job}", set()).add(ctx.version)

    def old(job: str) -> bool:
        found = versions.get(job, {None})
        return all(v is not None and v < actions.NEW_BACKEND for v in found)

    merged: list[Item] = []
    for item in items:
        job = item.jobs[0]
        texts = {e.text for e in item.entries}
        into = next(
            (
                i
                for i, m in enumerate(merged)
                if texts & {e.text for e in m.entries}
                and (
                    all(old(j) for j in (*m.jobs, job))
                    or job.partition("#")[0] not in {j.partition("#")[0] for j in m.jobs}
                )
            ),
            None,
        )
        if into is None:
            merged.append(item)
            continue
        m = merged[into]
        jobs = (*m.jobs, job)
        merged[into] = Item(
            id=m.id,
            summary=f"The uploads of {', '.join(jobs)}: one producer, as they upload one name "
            "(in different workflows' runs, or merged into one artifact by upload-artifact v3).",
            entries=tuple({e.text: e for e in (*item.entries[::-1], *m.entries[::-1])}.values())[
                ::-1
            ],
            jobs=jobs,
        )
    return merged


def _skips(t: Transfer) -> tuple[str, ...]:
    return tuple(_render(v, {}, escape=False, release=True) for v in t.exclude)


def _release_entries(
    pairs: list[tuple[str, Transfer]], kept: Mapping[int, list[tuple[str, Transfer]]]
) -> tuple[tuple[Entry, ...], tuple[str, ...]]:
    """A release's select entries and excludes: its downloads' globs and the skips they all
    share; where they skip differently, the exact names each one keeps (``_kept``)."""
    skips = {_skips(t) for _, t in pairs}
    if len(skips) == 1:
        return entries_of(pairs), next(iter(skips))
    return entries_of(
        pair for text, t in pairs for pair in (kept.get(id(t), []) if t.exclude else [(text, t)])
    ), ()


def _releases(
    texts: Mapping[str, list[tuple[str, Transfer]]],
    jobs: Mapping[str, ReleaseJob],
    kept: Mapping[int, list[tuple[str, Transfer]]],
    offered: Mapping[str, Mapping[str, tuple[str, ...]]],
    waits: Mapping[str, tuple[Mapping[str, None], Mapping[str, None]]],
) -> list[Item]:
    """One release per set of tags and dispatch values: jobs whose triggers accept the
    same tags release together (a tag is claimed by exactly one release), selecting the
    union, split by the workflow_dispatch inputs their downloads differ by
    (``release_split``)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for job in texts:
        groups.setdefault(jobs[job].tags, []).append(job)
    taken: set[str] = set()
    items: list[Item] = []
    for tags, every in groups.items():
        for dispatch, members, merged in release_split(every, texts, offered):
            stems = dict.fromkeys(Path(job.partition("#")[0]).stem for job in members)
            ids = (
                "-".join(v for _, v in dispatch)
                if dispatch
                else members[0].partition("#")[2]
                if len(members) == 1
                else "-".join(stems)
            )
            whys = "; ".join(dict.fromkeys(jobs[job].why for job in members))
            chosen = ", ".join(f"{k}: {v}" for k, v in dispatch)
            summary = (
                f"The downloads of {members[0]}"
                if len(members) == 1
                else f"The downloads of {', '.join(members)}"
            ) + (f" when dispatched with {chosen}" if dispatch else "")
            if merged:
                summary += (
                    f"; {', '.join(merged)} download{'s' if len(merged) == 1 else ''} the same "
                    "names in a run of its own, for the same tags: one release"
                )
            elif len(members) > 1:
                summary += f": one release, as their triggers accept the same tags ({whys})"
            pairs = [
                pair
                for job in members
                for pair in texts[job]
                if dispatch_matches(dict(dispatch), pair[1].dispatch)
            ]
            entries, exclude = _release_entries(pairs, kept)
            entries, exclude = _waited(members, entries, exclude, waits)
            items.append(
                Item(
                    id=new_id(ids, taken),
                    summary=summary + ".",
                    entries=entries,
                    jobs=tuple(members),
                    tags=tags,
                    dispatch=dispatch,
                    exclude=exclude,
                )
            )
    return items


def _waited(
    members: Sequence[str],
    entries: tuple[Entry, ...],
    exclude: tuple[str, ...],
    waits: Mapping[str, tuple[Mapping[str, None], Mapping[str, None]]],
) -> tuple[tuple[Entry, ...], tuple[str, ...]]:
    """A release's select without the names its jobs' downloads match only in jobs of their
    workflow they do not wait for (``needs``): those uploads may not have finished, so they
    are excluded (or, where it lists exact names, left out), as continuity sees it and as
    drift compares it."""
    inside = {name for job in members for name in waits.get(job, ({}, {}))[0]}
    outside = [
        name for job in members for name in waits.get(job, ({}, {}))[1] if name not in inside
    ]
    outside = list(dict.fromkeys(outside))
    if not outside:
        return entries, exclude
    kept = tuple(e for e in entries if e.text not in outside)
    if len(kept) < len(entries):
        return kept, exclude
    return entries, (*exclude, *(n for n in outside if n not in exclude))


_TAG_EXAMPLES = ("v0.0.0", "0.0.0", "v1.0.0", "release-0.0.0")


def _continuity(
    items: Sequence[Item], jobs: Mapping[str, ReleaseJob], unclaimed: list[str]
) -> list[Invariant]:
    """``release-continuity`` for each release, at a tag its trigger accepts and no other
    release claims (each release's first tag glob made concrete, else a usual tag form)."""
    from stagegate.engine.globs import Glob, language, matches

    def claims(globs: Sequence[str], tag: str) -> bool:
        return any(matches(language((Glob(g),)), tag) for g in globs)

    out: list[Invariant] = []
    for item in items:
        ignore = [g for job in item.jobs for g in jobs[job].ignore]
        made = [
            g.replace("**", "*").replace("*", "0.0.0").replace("?", "0")
            for g in item.tags
            if g != "*" and "[" not in g
        ]
        tag = next(
            (
                t
                for t in dict.fromkeys([*made, *_TAG_EXAMPLES])
                if claims(item.tags, t)
                and not claims(ignore, t)
                and not any(
                    claims(o.tags, t)
                    for o in items
                    if o is not item and not dispatch_apart(o.dispatch, item.dispatch)
                )
            ),
            None,
        )
        why = "; ".join(dict.fromkeys(jobs[job].why for job in item.jobs))
        if tag is None:
            unclaimed.append(
                f"release {item.id}: no release-continuity; no tag its trigger accepts ({why}) "
                "is claimed by it alone: add the check with a tag of yours"
            )
            continue
        chosen = "".join(f", {k}: {v}" for k, v in item.dispatch)
        out.append(
            Invariant(
                check="release-continuity",
                args=(("tag", tag),),
                dispatch=item.dispatch,
                comment=f"release {item.id}: {tag}{chosen}, a tag its trigger accepts ({why})",
            )
        )
    return out


def entry_lines(entry: Entry, section: str) -> list[str]:
    """One entry of an item's artifacts, inputs or select, with where it comes from; a
    template with an ``exclude`` or ``rows`` in the mapping form, one pair a line."""
    where = f"   # {entry.loc.file}:{entry.loc.line}"
    where += f": {entry.note}" if entry.note else ""
    if section == "consumers":
        return [f"      - select: {quote(entry.text)}{where}"]
    if not entry.exclude and entry.rows is None:
        return [f"      - {quote(entry.text)}{where}"]
    key, listed = ("rows", entry.rows) if entry.rows is not None else ("exclude", entry.exclude)
    return [
        f"      - name: {quote(entry.text)}{where}",
        f"        {key}:",
        *(f"          - {_flow(pairs)}" for pairs in listed),
    ]


def _item_lines(section: str, items: Sequence[Item]) -> list[str]:
    if not items:
        return [f"{section}: {{}}", ""]
    lines = [f"{section}:"]
    for item in items:
        lines.append(f"  {item.id}:")
        lines.append(f"    summary: {quote(item.summary)}")
        if section == "releases":
            lines.append(f"    tags: [{', '.join(quote(t) for t in item.tags)}]")
            if item.dispatch:
                lines.append(f"    dispatch: {_flow(item.dispatch)}")
            lines.append("    select:")
        elif section == "producers":
            lines.append("    artifacts:")
        else:
            lines.append("    inputs:")
        for entry in item.entries:
            lines += entry_lines(entry, section)
        if item.exclude:
            lines.append(f"    exclude: [{', '.join(quote(g) for g in item.exclude)}]")
        lines.append(f"    jobs: [{', '.join(quote(job) for job in item.jobs)}]")
    lines.append("")
    return lines


def _invariant_lines(invariants: Sequence[Invariant]) -> list[str]:
    lines = ["invariants:"]
    for inv in invariants:
        comment = f"   # {inv.comment}" if inv.comment else ""
        args = [f"{key}: {quote(value)}" for key, value in inv.args]
        args += [f"dispatch: {_flow(inv.dispatch)}"] if inv.dispatch else []
        if inv.fails:
            lines.append(f"# - check: {inv.check}   # fails at stage 0, so left out: {inv.fails}")
            lines += [f"#   {line}" for line in args]
            continue
        lines.append(f"  - check: {inv.check}{comment}")
        lines += [f"    {line}" for line in args]
    return lines


def render(draft: Draft) -> str:
    """The migration file a draft stands for, commented with where each entry comes from."""
    files = f"{draft.files} workflow file{'s' if draft.files != 1 else ''}"
    lines = [
        f"# Written by `stagegate init --from-workflows` from {files}: what they upload",
        "# (producers), download (consumers) and publish on a tag (releases), one item per job.",
        "# Every key is described in stagegate's docs/file-format.md; docs/adopt.md walks from",
        "# here to a gate in CI. Next:",
        "# - rename the items, add flags and `when:`, then stages (`stagegate new-stage TITLE`);",
        "#   `stagegate drift` keeps this model and the workflows in step;",
        "# - give each producer `paths:` (the sources it builds from): without them",
        "#   `stagegate affected` rebuilds every producer on every change;",
        "# - give each item a stage retires `legacy:` (the files and strings it leaves",
        "#   behind): without them `stagegate audit` has nothing to look for.",
        "version: 1",
        f"migration: {draft.name}",
        'summary: ""',
        "stage: 0",
        "",
        "axes:",
    ]
    for axis, values in draft.axes:
        lines.append(f"  {axis}: [{', '.join(quote(v) for v in values)}]")
    for axis, pattern in draft.open_axes:
        note = (
            "   # the run's commit (github.sha)"
            if axis == "sha"
            else "   # a generated matrix's values: list them (a finite axis) to check rows exactly"
        )
        lines.append(f"  {axis}: {{pattern: {quote(pattern)}}}{note}")
    lines += ["", "flags: {}", ""]
    if draft.generated:
        lines += ["workflows:", "  bind:"]
        for key, axis in draft.generated:
            lines.append(
                f"    matrix.{key}: {quote('{' + axis + '}')}   # the matrix is generated"
            )
        lines.append("")
    lines += _item_lines("producers", draft.producers)
    lines += _item_lines("consumers", draft.consumers)
    lines += _item_lines("releases", draft.releases)
    lines += _invariant_lines(draft.invariants)
    if draft.notes:
        lines += [
            "",
            "# Not declared: what stagegate cannot evaluate (bind it under workflows.bind, then",
            "# declare it) or takes from another run:",
        ]
        lines += [f"#   {note}" for note in draft.notes]
    return "\n".join(lines) + "\n"


def _loaded(text: str, path: Path) -> Migration:
    from stagegate.commands.flip import Pinned
    from stagegate.load.sources import FileSource
    from stagegate.validation import load

    root = path.parent if str(path.parent) else Path(".")
    return load(path, source=Pinned(FileSource(root), path.name, text.encode("utf-8")))
