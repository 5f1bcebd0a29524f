"""`new-stage TITLE --from-workflows`: the next stage, from what the workflows now do.

``drift`` at the last stage says what the model does not declare: uploads no active
producer makes, downloads in jobs no item stands for. The new stage declares them, as
``init --from-workflows`` would (``commands.draft``), gated by one new flag that the
stage sets: new producers and consumers (with ``when: FLAG``) and the axes they need go
into migration.yaml, the flag's value into the new stage file. A release that then
selects more (the new producers' rows its `select` globs take) gets a ``release_changes``
entry adding them, at a tag of a ``release-continuity`` check it claims; a release whose
declared selection still differs from what its jobs download is listed for a hand-written
entry. Both files are written all or nothing, and the migration must load.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from stagegate.commands.draft import (
    Axes,
    Builder,
    Item,
    comment,
    entries_of,
    entry_lines,
    new_id,
    producer_items,
    quote,
)
from stagegate.engine.resolve import Plan, Row
from stagegate.errors import Refused, UsageError
from stagegate.model import Migration
from stagegate.records import record, replace

_TOP = re.compile(r"^([A-Za-z_][\w-]*):(.*)$")


def _block(lines: list[str], key: str, entries: Sequence[str], file: str) -> list[str]:
    """``lines`` of a YAML file with ``entries`` (lines indented by two) added to the
    top-level block mapping ``key`` (written ``key: {}`` or ``key:`` then a block)."""
    if not entries:
        return lines
    at = next((i for i, line in enumerate(lines) if line.split(":", 1)[0] == key), None)
    if at is None:
        return [*lines, f"{key}:", *entries]
    rest = lines[at].split(":", 1)[1].split("#", 1)[0].strip()
    if rest == "{}":
        return [*lines[:at], f"{key}:", *entries, *lines[at + 1 :]]
    if rest:
        raise UsageError(
            f"{file}:{at + 1}:{len(key) + 3}: {key}: is written in flow style; write it as a "
            "block mapping (one item per line) for new-stage --from-workflows to add to it."
        )
    end = at + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t#"):
        end += 1
    while end > at + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    return [*lines[:end], *entries, *lines[end:]]


def _item(item: Item, section: str, flag: str) -> list[str]:
    out = [f"  {item.id}:", f"    summary: {quote(item.summary)}", f"    when: {flag}"]
    out.append("    artifacts:" if section == "producers" else "    inputs:")
    for entry in item.entries:
        out += entry_lines(entry, section)
    out.append(f"    jobs: [{', '.join(quote(j) for j in item.jobs)}]")
    return out


@record(kw_only=True, eq=False)
class AutoStage:
    """What the next stage declares: the flag it sets, the producers and consumers it turns
    on (gated by the flag), the axes they need, and the selections left for a hand."""

    number: int
    title: str
    last: int
    flag: str
    producers: list[Item]
    consumers: list[Item]
    new_axes: list[str]
    notes: list[str]


def draft_stage(migration: Migration, title: str, number: int) -> AutoStage:
    """The stage that declares what drift finds undeclared at the last stage; Refused
    where it finds nothing."""
    from stagegate.ci.drift import drift
    from stagegate.ci.workflows import read

    last = migration.last
    found = drift(migration, last)
    undeclared = {f.loc for f in found.findings if f.kind == "undeclared-upload"}
    declared = {
        job
        for items in (migration.producers, migration.consumers, migration.releases)
        for item in items.values()
        for job in (ref.text for ref in migration.workflows.jobs_of(item))
    }
    reading = read(migration, last, tag_matrix=True)
    uploads = [t for t in reading.uploads if t.loc in undeclared]
    downloads = [
        t
        for t in reading.downloads
        if t.active and t.run == "this" and not set(t.jobs()) & declared
    ]
    differs = [f for f in found.findings if f.kind == "select-differs"]
    if not uploads and not downloads and not differs:
        raise Refused(
            f"drift finds nothing undeclared at stage {last}: the model already says what the "
            "workflows do; add a stage by hand with new-stage TITLE."
        )
    taken = {*migration.flags, *migration.producers, *migration.consumers}
    build = Builder(replace(reading, transfers=(*uploads, *downloads)), {}, {})
    build.axes = Axes()
    for name, axis in migration.axes.items():
        if axis.pattern is not None:
            build.axes.open[name] = axis.pattern
        else:
            build.axes.values[name] = tuple(axis.values or ())
    known_axes = dict(build.axes.values)
    build.ids = {"p": set(taken), "c": set(taken), "r": set(taken)}
    producers = producer_items(build)
    return AutoStage(
        number=number,
        title=title,
        last=last,
        flag=new_id(title, set(taken)),
        producers=producers,
        consumers=[
            Item(id=i, summary=f"The downloads of {job}.", entries=entries_of(t), jobs=(job,))
            for job, (i, t) in build.downloads()[0].items()
        ],
        new_axes=[
            f"  {name}: [{', '.join(quote(v) for v in values)}]"
            for name, values in build.axes.values.items()
            if name not in known_axes
        ],
        notes=[
            f"#   {comment(f.message)} ({f.loc.file}:{f.loc.line}): declare it under "
            "release_changes (tag, add, drop) or change the release's select"
            for f in differs
        ],
    )


def render_migration(text: str, stage: AutoStage, file: str) -> str:
    """``text`` (migration.yaml) with the stage's flag, axes, producers and consumers."""
    lines = text.split("\n")
    trailing = lines[-1] == ""
    lines = lines[:-1] if trailing else lines
    summary = (
        f"Stage {stage.number} ({comment(stage.title)}): what the workflows do that the model "
        "did not say."
    )
    for key in ("axes", "flags", "producers", "consumers"):
        _block(lines, key, ["-"], file)  # a flow-style section: refused, as written
    lines = _block(lines, "axes", stage.new_axes, file)
    flag_lines = [f"  {stage.flag}:", f"    summary: {quote(summary)}", "    default: false"]
    lines = _block(lines, "flags", flag_lines, file)
    for key, items in (("producers", stage.producers), ("consumers", stage.consumers)):
        lines = _block(lines, key, [x for i in items for x in _item(i, key, stage.flag)], file)
    return "\n".join(lines) + ("\n" if trailing else "")


def render_stage(stage: AutoStage) -> str:
    """The stage file's text."""
    return "\n".join(
        [
            f"# Stage {stage.number}: {comment(stage.title)}",
            "# Written by `stagegate new-stage --from-workflows` from what drift finds at stage "
            f"{stage.last}: the flag {stage.flag} turns on what the workflows now do.",
            f"stage: {stage.number}",
            f"title: {quote(stage.title)}",
            "set:",
            f"  {stage.flag}: true",
            "acceptance:",
            "  - check: workflows",
            *(["# Not written: selections that differ:", *stage.notes] if stage.notes else []),
            "",
        ]
    )


def stage_from_workflows(migration: Migration, title: str, number: int, path: Path) -> Path:
    """Write stage ``number`` (at ``path``) declaring what drift finds undeclared at the
    last stage, and the items and flag it needs in migration.yaml, all or nothing; ``path``."""
    if path.exists():
        raise UsageError(f"{path} exists; remove it or choose another title.")
    stage = draft_stage(migration, title, number)
    main = Path(migration.file)
    original = main.read_bytes()
    text = render_migration(original.decode("utf-8"), stage, migration.file)
    _write(main, original, text, path, render_stage(stage), (stage.last, number))
    return path


def _write(
    main: Path, original: bytes, text: str, path: Path, stage: str, stages: tuple[int, int]
) -> None:
    """The stage file (new) and migration.yaml (compared-and-swapped), then the release
    changes the new rows call for; on any failure, neither is left changed."""
    from stagegate.fs import write_atomic
    from stagegate.validation import load

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as handle:
        handle.write(stage)
    try:
        write_atomic(main, text.encode("utf-8"), expected=original)
        changes = release_changes(load(str(main)), *stages)
        if changes:
            at = stage.index("acceptance:\n")
            write_atomic(path, (stage[:at] + changes + stage[at:]).encode("utf-8"))
            load(str(main))
    except BaseException:
        path.unlink(missing_ok=True)
        if main.read_bytes() != original:
            write_atomic(main, original)
        raise


def release_changes(migration: Migration, last: int, number: int) -> str:
    """The ``release_changes`` lines of stage ``number``: for each release active there
    that selects rows it did not select at ``last`` (the new producers' rows its globs
    take), an entry adding their templates, at a tag a ``release-continuity`` check names
    and the release claims; a release with no such tag gets a comment instead."""
    from stagegate.engine.match import release_selection
    from stagegate.engine.resolve import resolve, tag_claimed

    before, after = resolve(migration, last), resolve(migration, number)
    tags = [
        str(check.args["tag"])
        for check in (*migration.invariants, *(c for s in migration.stages for c in s.acceptance))
        if check.kind == "release-continuity" and "tag" in check.args
    ]
    out: list[str] = []
    for release in after.releases:
        had = {r.name for r in release_selection(release, _rows(before))}
        gained = [r for r in release_selection(release, _rows(after)) if r.name not in had]
        if not gained:
            continue
        globs = dict.fromkeys(re.sub(r"\{[^{}]*\}", "*", r.template.text) for r in gained)
        tag = next((t for t in dict.fromkeys(tags) if tag_claimed(release, t)), None)
        if tag is None:
            out.append(
                f"# release {release.id} now also selects {', '.join(globs)}: no "
                "release-continuity check names a tag it claims; add one, then a "
                "release_changes entry"
            )
            continue
        out += [
            f"  - tag: {quote(tag)}   # release {release.id}: the new producers' rows",
            f"    add: [{', '.join(quote(g) for g in globs)}]",
        ]
    if not out:
        return ""
    entries = [line for line in out if not line.startswith("#")]
    notes = [line for line in out if line.startswith("#")]
    return "\n".join([*notes, *(["release_changes:", *entries] if entries else []), ""])


def _rows(plan: Plan) -> list[Row]:
    return [row for producer in plan.producers for row in plan.rows(producer)]
