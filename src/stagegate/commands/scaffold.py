"""Starting files: `init` (a migration, from the workflows or a skeleton) and `new-stage`.

``init --from-workflows`` reads the workflows as ``drift`` does, with matrix values
tagged by their key, and writes back what it read: one producer per job that uploads
(its names as templates, matrix keys as axes, ``github.sha`` as the open axis
``sha``), one consumer per job that downloads from its own run, one release per
tag-triggered job, each with ``jobs``. Where a job's matrix rows do not form a full
product of the keys a name uses, the rows are written out one by one, so that the
model says exactly what the workflows do and ``drift`` passes at stage 0. Every file
is written whole or not at all (temporary file, then rename).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stagegate.ci.files import discover
from stagegate.ci.transfers import Reading, Transfer, shown
from stagegate.ci.workflows import read as read_workflows
from stagegate.errors import InvalidInput, Loc, UsageError
from stagegate.model import Bind, Migration, Template, WorkflowSettings
from stagegate.model.ghexpr import Ph, Sym, Value
from stagegate.model.templates import Axis, split

SHA_PATTERN = "[0-9a-f]{40}"
GENERATED_PATTERN = "[A-Za-z0-9._-]+"
"""The open axis that stands for a generated matrix key's values (unknown until listed)."""


def _quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def _comment(text: str) -> str:
    return " ".join(text.split())


def _id(text: str, taken: set[str]) -> str:
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


def _tag_triggers(rel: str, reading_root: Path) -> list[str] | None:
    """The tag globs of a workflow's `on: push: tags:` (None: not tag-triggered)."""
    from stagegate.ci.files import Files

    try:
        doc = Files(reading_root).get(rel)
    except InvalidInput:
        return None
    on = doc.data.get("on")
    if not isinstance(on, dict):
        return None
    push = on.get("push")
    if not isinstance(push, dict) or "tags" not in push:
        return None
    tags = push["tags"]
    if isinstance(tags, str):
        return [tags]
    if isinstance(tags, list):
        found = [str(t) for t in tags if isinstance(t, str | int | float) and str(t)]
        return found or ["*"]
    return ["*"]


# --------------------------------------------------------------------------- templates


class _Axes:
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


def _render(
    value: Value,
    names: Mapping[str, str],
    concrete: Mapping[str, str] | None,
    *,
    escape: bool,
    release: bool = False,
) -> str:
    """A transfer's value as template or glob text: tagged matrix pieces as ``{axis}``."""
    parts = value.parts if isinstance(value, Sym) else (value,)
    out = []
    for part in parts:
        if isinstance(part, Ph) and part.value is not None:
            if concrete is not None:
                out.append(_literal(part.value, glob_escape=escape))
            else:
                out.append("{" + names[part.axis] + "}")
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


def _texts(
    transfers: Sequence[Transfer], axes: _Axes, *, escape: bool, release: bool = False
) -> list[tuple[str, Transfer]]:
    """Template (or glob) texts for one step's transfers across its contexts.

    The contexts' tagged pieces form the step's assignments; when they are the full
    product of each key's values, one text with placeholders covers them, else each
    context's concrete text is written."""
    by_shape: dict[str, list[Transfer]] = {}
    for t in transfers:
        by_shape.setdefault(shown(t.value), []).append(t)
    out: list[tuple[str, Transfer]] = []
    for group in by_shape.values():
        keys: list[str] = []
        values: dict[str, list[str]] = {}
        rows: set[tuple[tuple[str, str], ...]] = set()
        for t in group:
            row: dict[str, str] = {}
            for ph in _tagged(t.value):
                if ph.axis not in values:
                    keys.append(ph.axis)
                    values[ph.axis] = []
                assert ph.value is not None
                if ph.value not in values[ph.axis]:
                    values[ph.axis].append(ph.value)
                row[ph.axis] = ph.value
            rows.add(tuple(sorted(row.items())))
        product = 1
        for key in keys:
            product *= len(values[key])
        full = all(len(r) == len(keys) for r in rows) and len(rows) == product
        if keys and full and not release:
            names = {key: axes.name_for(key, tuple(values[key])) for key in keys}
            out.append((_render(group[0].value, names, None, escape=escape), group[0]))
        else:
            seen: set[str] = set()
            for t in group:
                text = _render(t.value, {}, {}, escape=escape, release=release)
                if text not in seen:
                    seen.add(text)
                    out.append((text, t))
    return out


def _kept(
    download: Transfer, uploads: Sequence[Transfer], axes: Mapping[str, Axis], *, release: bool
) -> list[tuple[str, Transfer]]:
    """The exact names of the uploads a download keeps after its script's ``rm -rf``.

    A select cannot say "this glob minus that one", so the rows it keeps are written one
    by one, each its own exact name: the same selection, decided by the same engine."""
    from stagegate.ci.drift import languages, selections_of
    from stagegate.engine.globs import intersects

    kept: list[tuple[str, Transfer]] = []
    wanted = selections_of(download, dict(axes))
    for upload in uploads:
        if not upload.resolved or upload.run != "this":
            continue
        for lang, _prefix in languages(upload, dict(axes)):
            if any(intersects(d, lang, excluding=removed) for d, _p, removed in wanted):
                kept.append((_render(upload.value, {}, {}, escape=True, release=release), download))
                break
    return kept


def _by_step(transfers: Iterable[Transfer]) -> dict[tuple[Any, ...], list[Transfer]]:
    grouped: dict[tuple[Any, ...], list[Transfer]] = {}
    for t in transfers:
        grouped.setdefault((t.job, t.loc, t.kind), []).append(t)
    return grouped


# --------------------------------------------------------------------------- init


def _skeleton(name: str) -> str:
    return f"""# A staged migration, checked by stagegate (https://stagegate.dev; `stagegate --help`).
# Fill in what your CI builds (producers), takes (consumers) and publishes (releases),
# then add stages with `stagegate new-stage "TITLE"` and check them with `stagegate check --all`.
version: 1
migration: {name}
summary: ""
stage: 0                      # the current stage; 0 is before the migration

axes: {{}}                      # values artifact names expand over, e.g.
#   py: ["312", "313"]           # a finite axis
#   sha: {{pattern: "[0-9a-f]{{40}}"}}   # an open axis: any string the regex matches

flags: {{}}                     # what the stages switch, e.g.
#   new-builds:
#     summary: Build the new wheels.
#     default: false

producers: {{}}                 # jobs that make artifacts, e.g.
#   wheels:
#     artifacts: ["pkg-python{{py}}-{{sha}}"]
#     jobs: [".github/workflows/build.yml#build"]

consumers: {{}}                 # jobs that take artifacts, e.g.
#   tests:
#     inputs:
#       - select: "pkg-python{{py}}-*"

releases: {{}}                  # tag-triggered publishing, e.g.
#   pkg:
#     tags: ["v*"]
#     select: ["pkg-python*"]

invariants: []                # checks at every stage, e.g.
#   - check: workflows          # the model against the real workflows (stagegate drift)
"""


def _from_workflows(root: Path, file: str, name: str) -> str:
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
    return _write(reading, root, name, axes_open, generated)


def _write(
    reading: Reading,
    root: Path,
    name: str,
    open_axes: Mapping[str, Axis],
    generated: Mapping[str, str],
) -> str:
    axes = _Axes()
    axes.open = {k: v.pattern or "" for k, v in open_axes.items()}
    producers: dict[str, tuple[str, list[tuple[str, Transfer]]]] = {}
    consumers: dict[str, tuple[str, list[tuple[str, Transfer]]]] = {}
    releases: dict[str, tuple[str, list[str], list[tuple[str, Transfer]]]] = {}
    skipped: list[str] = []
    ids: dict[str, set[str]] = {"p": set(), "c": set(), "r": set()}
    tags_of: dict[str, list[str] | None] = {}

    uploads = [t for t in reading.uploads if t.active]
    for (job, _loc, _kind), group in sorted(_by_step(uploads).items(), key=lambda kv: kv[1][0].loc):
        known = [t for t in group if t.resolved]
        for t in group:
            if not t.resolved:
                skipped.append(f"{t.loc.file}:{t.loc.line}: upload {shown(t.value)}")
        if not known:
            continue
        if job not in producers:
            producers[job] = (_id(job.partition("#")[2], ids["p"]), [])
        producers[job][1].extend(_texts(known, axes, escape=False))

    downloads = [t for t in reading.downloads if t.active]
    for (job, _loc, _kind), group in sorted(
        _by_step(downloads).items(), key=lambda kv: kv[1][0].loc
    ):
        rel = job.partition("#")[0]
        if rel not in tags_of:
            tags_of[rel] = _tag_triggers(rel, root)
        tags = tags_of[rel]
        known = [t for t in group if t.resolved]
        for t in group:
            if not t.resolved:
                skipped.append(f"{t.loc.file}:{t.loc.line}: download {shown(t.value)}")
        if tags is not None:
            if known:
                if job not in releases:
                    releases[job] = (_id(job.partition("#")[2], ids["r"]), tags, [])
                for t in known:
                    if t.exclude:
                        releases[job][2].extend(_kept(t, uploads, open_axes, release=True))
                        continue
                    escape = t.kind == "name"
                    for text, tr in _texts([t], axes, escape=escape, release=True):
                        releases[job][2].append((text, tr))
            continue
        this = [t for t in known if t.run == "this"]
        for t in known:
            if t.run != "this":
                skipped.append(
                    f"{t.loc.file}:{t.loc.line}: download {shown(t.value)} from another run "
                    f"({t.run}): declare that run's producer (run: NAME) and an input with from:"
                )
        if not this:
            continue
        if job not in consumers:
            consumers[job] = (_id(job.partition("#")[2], ids["c"]), [])
        for kind in ("name", "pattern"):
            same = [t for t in this if t.kind == kind and not t.exclude]
            if same:
                consumers[job][1].extend(_texts(same, axes, escape=kind == "name"))
        for t in this:
            if t.exclude:
                consumers[job][1].extend(_kept(t, uploads, open_axes, release=False))

    lines = [
        f"# Written by `stagegate init --from-workflows` from {len(reading.files)} workflow "
        f"file{'s' if len(reading.files) != 1 else ''}: what they upload (producers), download "
        "(consumers) and publish on a tag (releases), one item per job. Rename the items, add",
        "# flags and `when:`, then stages (`stagegate new-stage TITLE`); `stagegate drift` keeps "
        "this model and the workflows in step.",
        "version: 1",
        f"migration: {name}",
        'summary: ""',
        "stage: 0",
        "",
        "axes:",
    ]
    for axis, values in axes.values.items():
        lines.append(f"  {axis}: [{', '.join(_quote(v) for v in values)}]")
    for axis, pattern in axes.open.items():
        note = (
            "   # the run's commit (github.sha)"
            if axis == "sha"
            else "   # a generated matrix's values: list them (a finite axis) to check rows exactly"
        )
        lines.append(f"  {axis}: {{pattern: {_quote(pattern)}}}{note}")
    lines += ["", "flags: {}", ""]
    if generated:
        lines += ["workflows:", "  bind:"]
        for key, axis in generated.items():
            lines.append(
                f"    matrix.{key}: {_quote('{' + axis + '}')}   # the matrix is generated"
            )
        lines.append("")

    def item_lines(section: str, items: Mapping[str, Any], key: str) -> None:
        if not items:
            lines.append(f"{section}: {{}}")
            lines.append("")
            return
        lines.append(f"{section}:")
        for job, entry in items.items():
            item_id = entry[0]
            texts = entry[-1]
            lines.append(f"  {item_id}:")
            lines.append(f"    summary: {_quote(f'The {key} of {job}.')}")
            if section == "releases":
                lines.append(f"    tags: [{', '.join(_quote(t) for t in entry[1])}]")
                lines.append("    select:")
            elif section == "producers":
                lines.append("    artifacts:")
            else:
                lines.append("    inputs:")
            seen: set[str] = set()
            for text, t in texts:
                if text in seen:
                    continue
                seen.add(text)
                where = f"   # {t.loc.file}:{t.loc.line}"
                if section == "consumers":
                    lines.append(f"      - select: {_quote(text)}{where}")
                else:
                    lines.append(f"      - {_quote(text)}{where}")
            lines.append(f"    jobs: [{_quote(job)}]")
        lines.append("")

    item_lines("producers", producers, "uploads")
    item_lines("consumers", consumers, "downloads")
    item_lines("releases", releases, "downloads")
    lines += [
        "invariants:",
        "  - check: workflows   # the model against the workflows (stagegate drift)",
    ]
    if skipped or reading.unresolved:
        lines += [
            "",
            "# Not declared: what stagegate cannot evaluate (bind it under workflows.bind, then",
            "# declare it) or takes from another run:",
        ]
        lines += [f"#   {_comment(entry)}" for entry in skipped]
        lines += [
            f"#   {u.loc.file}:{u.loc.line}: {_comment(u.expression)}: {_comment(u.reason)}"
            for u in reading.unresolved
        ]
    return "\n".join(lines) + "\n"


def init(file: str, *, from_workflows: bool, force: bool) -> list[Path]:
    """Write a starting migration (and an empty stages folder); the paths written."""
    from stagegate.fs import write_atomic
    from stagegate.load.sources import STAGE_FILE

    path = Path(file)
    root = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"{file} is a folder; pass the migration file to write with -f FILE.")
    if path.exists() and not force:
        raise UsageError(
            f"{file} exists; stagegate init never overwrites it: pass --force to replace it, "
            "or -f OTHER.yaml to write another file."
        )
    stages = root / "stages"
    if stages.is_dir() and any(STAGE_FILE.fullmatch(p.name) for p in stages.iterdir()):
        raise UsageError(
            f"{stages} already holds stage files, which a new migration at stage 0 would not "
            "match; move them away first."
        )
    name = _id(root.resolve().name, set())
    if from_workflows:
        from stagegate.ci.files import workflow_root
        from stagegate.model import DEFAULT_WORKFLOW_PATHS

        found = workflow_root(root)
        if not discover(found.root, DEFAULT_WORKFLOW_PATHS):
            raise UsageError(
                f"no workflow files in {found.shown('.github/workflows')}; run init without "
                "--from-workflows for a skeleton."
            )
        text = _from_workflows(root, file, name)
    else:
        text = _skeleton(name)
    _check_written(text, path)
    stages.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return [path, stages]


def _check_written(text: str, path: Path) -> None:
    """What init writes must load, with its stage files, before anything is written."""
    from stagegate.commands.flip import Pinned
    from stagegate.load.sources import FileSource
    from stagegate.validation import load

    root = path.parent if str(path.parent) else Path(".")
    load(path, source=Pinned(FileSource(root), path.name, text.encode("utf-8")))


# --------------------------------------------------------------------------- new-stage


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:40].strip("-") or "stage"


def new_stage(migration: Migration, title: str) -> Path:
    """Write the next numbered stage file with a commented skeleton; its path."""
    from stagegate.fs import write_atomic
    from stagegate.validation import load

    title = " ".join(title.split())
    if not title:
        raise UsageError('give the stage a title: stagegate new-stage "Build the new wheels".')
    number = migration.last + 1
    width = max([2, *(len(Path(s.file).name.split("-", 1)[0]) for s in migration.stages)])
    folder = migration.root / migration.stages_dir
    path = folder / f"{number:0{width}d}-{_slug(title)}.yaml"
    if path.exists():
        raise UsageError(f"{path} exists; remove it or choose another title.")
    flags = list(migration.flags)
    example = flags[0] if flags else "some-flag"
    text = f"""# Stage {number}: {_comment(title)}
# Set the flags this stage changes, list its checks, then `stagegate check --stage {number}`;
# flip to it with `stagegate advance` once the stage before it is current.
stage: {number}
title: {_quote(title)}
# outcome: The useful state once this stage is merged.
set: {{}}
#   {example}: true
# reversible: false            # rollback refuses to go below this stage
acceptance: []
#   - check: inputs-satisfied
#   - check: workflows
"""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    try:
        load(migration.file)
    except InvalidInput:
        path.unlink(missing_ok=True)
        raise
    return path
