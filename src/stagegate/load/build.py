"""Meaning: the checks past the schema, and the records of the model.

``Builder`` reads the located data once and builds the frozen ``Migration``; every
problem is collected with the location of the value at fault.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from stagegate.errors import Loc, LocatedError, Problem
from stagegate.load.rules import Located, Rules
from stagegate.load.sources import MAX_CHECK_RUNS, StageFile
from stagegate.load.yamlsrc import Document, json_path
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import (
    DEFAULT_WORKFLOW_PATHS,
    ActionSpec,
    Bind,
    Check,
    Consumer,
    Flag,
    Input,
    JobChange,
    JobRef,
    Legacy,
    Migration,
    Producer,
    PublisherSpec,
    Ref,
    Reference,
    Release,
    ReleaseChange,
    Stage,
    Template,
    WorkflowSettings,
)
from stagegate.model.expr import parse as parse_expr
from stagegate.model.templates import (
    MAX_ROWS,
    MAX_TOTAL_ROWS,
    Axis,
    Placeholder,
    assignments,
    finite_axes,
    row_count,
    split,
)
from stagegate.records import replace
from stagegate.words import suggest

_BIND_KEY = re.compile(
    r"(?:[^\s#]+(?:#[A-Za-z_][A-Za-z0-9_-]*)? +)?"
    r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_*][A-Za-z0-9_*-]*)+"
)
"""A context path that `workflows.bind` may give a value (env.NAME, steps.ID.outputs.NAME),
optionally after the file or PATH#JOB it holds in and a space."""
_JOB_REF = re.compile(r"[^#\s]+#[A-Za-z_][A-Za-z0-9_-]*")
_ACTION = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*/[^@\s]+@\S+")
_READ_ACTIONS = ("actions/upload-artifact", "actions/download-artifact")
"""A `workflows.actions` key: a remote action as `uses:` names it, owner/name[/path]@ref."""

_Item = TypeVar("_Item", Producer, Consumer, Release)


def check_runs_problem(doc: Document, stage_docs: list[StageFile]) -> Problem | None:
    """More check runs than MAX_CHECK_RUNS (the invariants at every stage, and each
    stage's own checks), counted on the data as read: before anything is validated, so
    that the limit bounds the work of a load too. Located at the larger contributor."""

    def count(data: Any, key: str) -> int:
        found = data.get(key) if isinstance(data, dict) else None
        return len(found) if isinstance(found, list) else 0

    invariants = count(doc.data, "invariants") * (len(stage_docs) + 1)
    counts = [(count(f.doc.data, "acceptance"), f.doc) for f in stage_docs]
    runs = invariants + sum(c for c, _doc in counts)
    if runs <= MAX_CHECK_RUNS:
        return None
    own, largest = max(counts, key=lambda c: c[0], default=(0, doc))
    path: DocPath = ("invariants",) if invariants >= own else ("acceptance",)
    at = doc if invariants >= own else largest
    return Problem(
        at.key_loc(path),
        f"the invariants at each of {len(stage_docs) + 1} stages and the stages' own checks "
        f"make {runs:,} check runs; the limit is {MAX_CHECK_RUNS:,}: check less often.",
        json_path(path),
    )


class Builder:
    """Meaning checks and model construction over schema-valid data."""

    def __init__(
        self,
        doc: Document,
        stage_docs: list[StageFile],
        root: Path,
        stages_dir: str,
        rules: Rules,
        *,
        trusted: bool = False,
    ) -> None:
        self.trusted = trusted  # known valid: skip the checks that need the glob engine
        self.rules = rules
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.stage_docs = stage_docs
        self.root = root
        self.stages_dir = stages_dir
        self.problems: list[Problem] = []
        self.axes: dict[str, Axis] = {}
        self.flag_names: set[str] = set()
        self.producer_ids: set[str] = set(self.data.get("producers", {}))
        self.total_rows: dict[str, int] = {}

    def problem(self, doc: Document, path: DocPath, message: str, loc: Loc | None = None) -> None:
        self.problems.append(Problem(loc or doc.loc(path), message, json_path(path)))

    def _pattern_problem(self, path: DocPath, text: str, what: str, offset: int = 0) -> None:
        """Problems of an open-axis regex or a glob (skipped for known-valid input)."""
        if self.trusted:
            return
        from stagegate.engine import globs

        try:
            (globs.check_regex if what == "open-axis regex" else globs.check_glob)(text)
        except globs.PatternError as exc:
            loc = self.doc.text_loc(path, offset + exc.column)
            self.problem(self.doc, path, f"{what}: {exc.message}", loc)

    def build(self) -> Migration:
        data = self.data
        for name, spec in data.get("axes", {}).items():
            if isinstance(spec, dict):
                pattern = spec["pattern"]
                self._pattern_problem(("axes", name, "pattern"), pattern, "open-axis regex")
                self.axes[name] = Axis(name, pattern=pattern)
            else:
                self.axes[name] = Axis(name, values=tuple(spec))
        flags = {
            name: Flag(
                id=name,
                summary=spec.get("summary", ""),
                default=spec.get("default", False),
                references=self._references(("flags", name, "references"), spec),
                loc=self.doc.key_loc(("flags", name)),
                env=spec.get("env"),
            )
            for name, spec in data.get("flags", {}).items()
        }
        self.flag_names = set(flags)
        producers = self._items("producers", self._producer)
        consumers = self._items("consumers", self._consumer)
        releases = self._items("releases", self._release)
        invariants = tuple(
            self._check(self.doc, ("invariants", i), spec, "invariant")
            for i, spec in enumerate(data.get("invariants", ()))
        )
        stages = tuple(self._stage(stage_file) for stage_file in self.stage_docs)
        stage = data["stage"]
        if stage > len(stages):
            self.problem(
                self.doc,
                ("stage",),
                f"stage {stage} is beyond the last stage ({len(stages)}); "
                f"use 0..{len(stages)} or add the stage file.",
            )
        migration = Migration(
            version=data["version"],
            id=data["migration"],
            summary=data.get("summary", ""),
            stage=stage,
            stage_loc=self.doc.loc(("stage",)),
            stages_dir=self.stages_dir,
            axes=self.axes,
            flags=flags,
            producers=producers,
            consumers=consumers,
            releases=releases,
            invariants=invariants,
            audit_ignore=tuple(data.get("audit", {}).get("ignore", ())),
            audit_ignore_locs=tuple(
                self.doc.text_loc(("audit", "ignore", i), 0)
                for i in range(len(data.get("audit", {}).get("ignore", ())))
            ),
            stages=stages,
            file=self.doc.file,
            root=self.root,
            workflows=self._workflows(),
            stage_span=self.doc.spans.get(("stage",)),
            document=self.doc,
        )
        if not self.trusted:
            self._kinds_in_use(migration)
        files = Located(migration=self.doc, stages=tuple(f.doc for f in self.stage_docs))
        # on a cache hit, only what depends on more than the files' bytes (links on disk)
        for validator in self.rules.uncached if self.trusted else self.rules.validators:
            self.problems += validator(migration, files)
        return migration

    # -- items

    def _when(self, path: DocPath, spec: dict[str, Any]) -> Any:
        raw = spec.get("when", True)
        try:
            tree = parse_expr(raw)
        except LocatedError as exc:
            self.problem(
                self.doc,
                (*path, "when"),
                exc.message,
                self.doc.text_loc((*path, "when"), exc.column),
            )
            return parse_expr(True)
        for flag in _flag_refs(tree):
            if flag.name not in self.flag_names:
                hint = suggest(flag.name, self.flag_names)
                self.problem(
                    self.doc,
                    (*path, "when"),
                    f"unknown flag {flag.name!r}{hint or '; declare it under flags:'}",
                    self.doc.text_loc((*path, "when"), flag.column),
                )
        return tree

    def _references(self, path: DocPath, spec: dict[str, Any]) -> tuple[Ref, ...]:
        """Fixed strings as they are; ``{regex: ...}`` checked here, with its column."""
        out: list[Ref] = []
        for i, entry in enumerate(spec.get("references", ())):
            if isinstance(entry, str):
                out.append(entry)
                continue
            out.append(Reference(regex=entry["regex"]))
            if self.trusted:
                continue
            from stagegate.model.references import regex_problem

            problem = regex_problem(entry["regex"])
            if problem is not None:
                message, column = problem
                at = (*path, i, "regex")
                self.problem(self.doc, at, message, self.doc.text_loc(at, column))
        return tuple(out)

    def _axes_of(self, path: DocPath, spec: dict[str, Any]) -> dict[str, Axis]:
        """An item's own finite axis values (``axes: {py: [...]}``), over declared finite axes."""
        own: dict[str, Axis] = {}
        for name, values in spec.get("axes", {}).items():
            declared = self.axes.get(name)
            if declared is None:
                finite = ", ".join(n for n, a in self.axes.items() if not a.is_open)
                hint = suggest(name, self.axes) or f"; the finite axes are: {finite or 'none'}"
                self.problem(
                    self.doc,
                    (*path, "axes", name),
                    f"unknown axis {name!r}: an item's axes narrow or replace the values of "
                    f"a finite axis declared under axes:{hint}",
                    self.doc.key_loc((*path, "axes", name)),
                )
                continue
            if declared.is_open:
                self.problem(
                    self.doc,
                    (*path, "axes", name),
                    f"axis {name!r} is open (a pattern); only a finite axis can be given values "
                    "per item. Remove it here, or make the axis finite.",
                    self.doc.key_loc((*path, "axes", name)),
                )
                continue
            own[name] = Axis(name, values=tuple(values))
        return own

    def _template(
        self, path: DocPath, text: str, *, kind: str, axes: dict[str, Axis] | None = None
    ) -> Template:
        """Parse a template or glob; ``kind`` is artifact, select or plain (no placeholders).

        ``axes``: the item's own values of some finite axes, for counting its rows."""
        loc = self.doc.loc(path)
        try:
            parts = split(text) if kind != "plain" else (text,)
        except LocatedError as exc:
            self.problem(self.doc, path, exc.message, self.doc.text_loc(path, exc.column))
            return Template(text=text, parts=(text,), loc=loc)
        seen_open: set[str] = set()
        for part in parts:
            if isinstance(part, Placeholder):
                axis = self.axes.get(part.axis)
                if axis is None:
                    hint = suggest(part.axis, self.axes)
                    self.problem(
                        self.doc,
                        path,
                        f"unknown axis {{{part.axis}}}{hint or '; declare it under axes:'}",
                        self.doc.text_loc(path, part.column),
                    )
                elif axis.is_open:
                    if part.axis in seen_open:
                        self.problem(
                            self.doc,
                            path,
                            f"open axis {{{part.axis}}} appears twice; an open axis may appear once "
                            "per name (its two values could not be tied together exactly).",
                            self.doc.text_loc(path, part.column),
                        )
                    seen_open.add(part.axis)
            elif kind != "artifact":
                self._pattern_problem(path, part, "glob", max(text.find(part), 0))
        if kind == "plain" and re.search(r"\{[A-Za-z_][A-Za-z0-9_-]*\}", text):
            self.problem(
                self.doc,
                path,
                "release globs and tags are applied as written, without {axis} placeholders; "
                "write the value itself (e.g. cuda13.4.1).",
            )
        if all(not isinstance(p, Placeholder) or p.axis in self.axes for p in parts):
            rows = row_count(parts, {**self.axes, **(axes or {})})
            if rows > MAX_ROWS:
                self.problem(
                    self.doc,
                    path,
                    f"expands to {rows:,} rows; the limit is {MAX_ROWS:,}: "
                    "split the template or use fewer axis values.",
                )
            before = self.total_rows.get(kind, 0)
            self.total_rows[kind] = before + rows
            if before <= MAX_TOTAL_ROWS < before + rows and kind != "plain":
                what = "artifact templates" if kind == "artifact" else "consumer selects"
                self.problem(
                    self.doc,
                    path,
                    f"with this one, the {what} expand to more than {MAX_TOTAL_ROWS:,} rows "
                    "in all, the limit: use fewer axis values or fewer templates.",
                )
        return Template(text=text, parts=parts, loc=loc)

    def _legacy(self, path: DocPath, spec: dict[str, Any]) -> Legacy:
        legacy = spec.get("legacy", {})
        return Legacy(
            references=self._references((*path, "legacy", "references"), legacy),
            paths=tuple(legacy.get("paths", ())),
        )

    def _items(
        self, section: str, make: Callable[[DocPath, dict[str, Any], dict[str, Any]], _Item]
    ) -> dict[str, _Item]:
        """The items of ``section``: the fields all items have read one way, then ``make``'s."""
        items = {}
        for item_id, spec in self.data.get(section, {}).items():
            path: DocPath = (section, item_id)
            when = self._when(path, spec)
            fields = {
                "id": item_id,
                "summary": spec.get("summary", ""),
                "when": when,
                "legacy": self._legacy(path, spec),
                "loc": self.doc.key_loc(path),
            }
            items[item_id] = make(path, spec, fields)
        return items

    def _plain_globs(self, path: DocPath, spec: dict[str, Any], key: str) -> tuple[Template, ...]:
        """``spec[key]``: globs applied as written (a release's select, an exclude)."""
        return tuple(
            self._template((*path, key, i), text, kind="plain")
            for i, text in enumerate(spec.get(key, ()))
        )

    def _producer_refs(
        self, path: DocPath, spec: dict[str, Any], key: str
    ) -> tuple[str, ...] | None:
        """The producer ids listed under ``spec[key]`` (None when it is not given)."""
        if key not in spec:
            return None
        for i, pid in enumerate(spec[key]):
            if pid not in self.producer_ids:
                hint = suggest(pid, self.producer_ids)
                self.problem(
                    self.doc,
                    (*path, key, i),
                    f"unknown producer {pid!r}{hint or '; declare it under producers:'}",
                )
        return tuple(spec[key])

    def _producer(self, path: DocPath, spec: dict[str, Any], fields: dict[str, Any]) -> Producer:
        own = self._axes_of(path, spec)
        artifacts = []
        for i, entry in enumerate(spec["artifacts"]):
            at: DocPath = (*path, "artifacts", i)
            if isinstance(entry, str):
                artifacts.append(self._template(at, entry, kind="artifact", axes=own))
            else:
                template = self._template((*at, "name"), entry["name"], kind="artifact", axes=own)
                artifacts.append(
                    replace(
                        template,
                        kind=entry.get("kind", "artifact"),
                        **self._template_rows(at, entry, template, {**self.axes, **own}),
                    )
                )
        return Producer(
            **fields,
            **self._planning(path, spec),
            artifacts=tuple(artifacts),
            axes=tuple(own.values()),
            run=spec.get("run", "this"),
            **self._wheels(path, spec),
        )

    def _template_rows(
        self, path: DocPath, entry: dict[str, Any], template: Template, axes: dict[str, Axis]
    ) -> dict[str, Any]:
        """An artifact template's ``exclude`` and ``rows`` (finite axis -> value), each pair
        checked against the template's finite axes and their values (the item's own, where
        it narrows them); an exclude that leaves no row is a problem too."""
        if any(isinstance(p, Placeholder) and p.axis not in axes for p in template.parts):
            return {}  # an unknown axis: already a problem of the name
        names = finite_axes(template.parts, axes)
        before = len(self.problems)
        found: dict[str, Any] = {}
        for key in ("exclude", "rows"):
            if key not in entry:
                continue
            made = []
            for i, pairs in enumerate(entry[key]):
                at: DocPath = (*path, key, i)
                for axis, value in pairs.items():
                    self._assigned(at, axis, value, names, axes)
                missing = [n for n in names if n not in pairs]
                if key == "rows" and missing:
                    self.problem(
                        self.doc,
                        at,
                        f"this row gives no value to {', '.join(missing)}: a row of "
                        f"{template.text!r} gives one to each of its finite axes "
                        f"({', '.join(names)}).",
                    )
                made.append(tuple((n, str(pairs[n])) for n in names if n in pairs))
            found[key] = tuple(made)
        if len(self.problems) > before:
            return {}
        if found and not any(
            True
            for _ in assignments(
                template.parts, axes, exclude=found.get("exclude", ()), rows=found.get("rows")
            )
        ):
            self.problem(
                self.doc,
                (*path, "exclude"),
                f"the exclude of {template.text!r} leaves it no row: drop the template, or "
                "narrow the exclude.",
            )
        return found

    def _assigned(
        self, at: DocPath, axis: str, value: str, names: list[str], axes: dict[str, Axis]
    ) -> None:
        """One pair of an exclude or rows entry: a finite axis of the template, one of its values."""
        if axis not in names:
            known = f"its finite axes: {', '.join(names) or 'none'}"
            why = (
                f"axis {axis!r} is open: exclude and rows name finite axes only ({known})."
                if axis in axes and axes[axis].is_open
                else f"{axis!r} is not a finite axis of this template ({known})"
                + (suggest(axis, names) or ".")
            )
            self.problem(self.doc, (*at, axis), why, self.doc.key_loc((*at, axis)))
            return
        values = axes[axis].values or ()
        if value not in values:
            hint = suggest(value, values) or f"; its values: {', '.join(values)}"
            self.problem(self.doc, (*at, axis), f"{value!r} is not a value of axis {axis}{hint}")

    def _wheels(self, path: DocPath, spec: dict[str, Any]) -> dict[str, Any]:
        """A producer's ``wheels``: each pattern's exact identifiers."""
        if "wheels" not in spec:
            return {}
        from stagegate.model import identifiers

        found: set[str] = set()
        for i, pattern in enumerate(spec["wheels"]):
            at: DocPath = (*path, "wheels", i)
            try:
                found.update(identifiers.identifiers(pattern))
            except LocatedError as exc:
                self.problem(
                    self.doc, at, f"wheels: {exc.message}", self.doc.text_loc(at, exc.column)
                )
        return {"wheels": frozenset(found), "wheels_loc": self.doc.loc((*path, "wheels"))}

    def _planning(self, path: DocPath, spec: dict[str, Any]) -> dict[str, Any]:
        """What a producer and a consumer both say for `affected`: their own sources
        (`paths`, each located) and `always`."""
        paths = tuple(spec.get("paths", ()))
        return {
            "paths": paths,
            "paths_locs": tuple(self.doc.loc((*path, "paths", i)) for i in range(len(paths))),
            "always": spec.get("always", False),
        }

    def _consumer(self, path: DocPath, spec: dict[str, Any], fields: dict[str, Any]) -> Consumer:
        own = self._axes_of(path, spec)
        inputs = []
        for i, item in enumerate(spec["inputs"]):
            at: DocPath = (*path, "inputs", i)
            select = self._template((*at, "select"), item["select"], kind="select", axes=own)
            inputs.append(
                Input(
                    select=select,
                    required=item.get("required", True),
                    from_=self._producer_refs(at, item, "from"),
                    exclude=self._plain_globs(at, item, "exclude"),
                    loc=self.doc.loc(at),
                    axes=tuple(own.values()),
                    run=item.get("run", "this"),
                )
            )
        return Consumer(
            **fields,
            **self._planning(path, spec),
            inputs=tuple(inputs),
            axes=tuple(own.values()),
            feeds=self._producer_refs(path, spec, "feeds") or (),
            planned=spec.get("planned", True),
        )

    def _release(self, path: DocPath, spec: dict[str, Any], fields: dict[str, Any]) -> Release:
        return Release(
            **fields,
            tags=tuple(spec["tags"]),
            select=self._plain_globs(path, spec, "select"),
            exclude=self._plain_globs(path, spec, "exclude"),
            expect=self._producer_refs(path, spec, "expect"),
            tooling=spec.get("tooling", "tag"),
            kinds=tuple(spec["kinds"]) if "kinds" in spec else None,
            run=spec.get("run", "this"),
            ships_reused=spec.get("ships_reused", False),
            dispatch={k: _dispatch_text(v) for k, v in spec.get("dispatch", {}).items()},
            dispatch_locs={
                k: self.doc.loc((*path, "dispatch", k)) for k in spec.get("dispatch", {})
            },
        )

    # -- workflows (stagegate drift)

    def _workflows(self) -> WorkflowSettings:
        """`workflows.paths`, `workflows.bind` and every item's `jobs`, checked for form."""
        section = self.data.get("workflows", {})
        paths = tuple(section.get("paths", DEFAULT_WORKFLOW_PATHS))
        for i, text in enumerate(section.get("paths", ())):
            posix = PurePosixPath(text)
            if posix.is_absolute() or ".." in posix.parts or os.path.isabs(text):
                self.problem(
                    self.doc,
                    ("workflows", "paths", i),
                    f"{text!r} leads outside the repository; workflows.paths are relative "
                    "to the top of the repository (the migration's folder outside git): "
                    "use a glob such as '.github/workflows/*.yml'.",
                )
        jobs, events = self._jobs()
        return WorkflowSettings(
            paths=paths,
            paths_loc=self.doc.key_loc(("workflows", "paths")) if "paths" in section else None,
            bind=self._binds(section.get("bind", {})),
            jobs=jobs,
            actions=self._actions(section.get("actions", {})),
            events=events,
            publishers=self._publishers(section.get("publishers", {})),
            runs={str(k).strip(): str(v).strip() for k, v in section.get("runs", {}).items()},
            runs_loc={
                str(k).strip(): self.doc.key_loc(("workflows", "runs", k))
                for k in section.get("runs", {})
            },
        )

    def _binds(self, section: dict[str, Any]) -> dict[str, Bind]:
        """`workflows.bind`, and `github.sha` bound to an open axis `sha` by default."""
        bind: dict[str, Bind] = {}
        for key, value in section.items():
            path: DocPath = ("workflows", "bind", key)
            if not _BIND_KEY.fullmatch(key):
                self.problem(
                    self.doc,
                    path,
                    f"{key[:60]!r} is not an expression stagegate can bind: write a context "
                    "path such as env.NAME, matrix.KEY, inputs.NAME, github.sha or "
                    "steps.ID.outputs.NAME.",
                    self.doc.key_loc(path),
                )
                continue
            loc = self.doc.loc(path)
            if isinstance(value, str) and "${{" in value:
                bind[key] = self._expression_bind(key, path, value)
            elif isinstance(value, str):
                bind[key] = Bind(
                    key=key, text=self._template(path, value, kind="artifact"), loc=loc
                )
            else:
                when = self._when(path, value)
                bind[key] = Bind(
                    key=key,
                    when=when,
                    then=value.get("then", "true"),
                    otherwise=value.get("else", "false"),
                    loc=loc,
                )
        sha = self.axes.get("sha")
        if "github.sha" not in bind and sha is not None and sha.is_open:
            text = "{sha}"
            bind["github.sha"] = Bind(
                key="github.sha",
                text=Template(text=text, parts=split(text), loc=self.doc.key_loc(("axes", "sha"))),
                loc=self.doc.key_loc(("axes", "sha")),
            )
        return bind

    def _jobs(
        self,
    ) -> tuple[dict[tuple[str, str], tuple[JobRef, ...]], dict[tuple[str, str], tuple[str, ...]]]:
        """Every item's `jobs` (checked for form) and `events`, by (kind, id)."""
        jobs: dict[tuple[str, str], tuple[JobRef, ...]] = {}
        events: dict[tuple[str, str], tuple[str, ...]] = {}
        for kind, section_name in (
            ("producer", "producers"),
            ("consumer", "consumers"),
            ("release", "releases"),
        ):
            for item_id, spec in self.data.get(section_name, {}).items():
                refs = []
                for i, text in enumerate(spec.get("jobs", ())):
                    jpath: DocPath = (section_name, item_id, "jobs", i)
                    if not _JOB_REF.fullmatch(text):
                        self.problem(
                            self.doc,
                            jpath,
                            f"{text[:80]!r} is not a job: write PATH#JOB, the workflow file "
                            "relative to the top of the repository and the job's id, e.g. "
                            "'.github/workflows/build.yml#build'.",
                        )
                        continue
                    refs.append(JobRef(text=text, loc=self.doc.loc(jpath)))
                if refs:
                    jobs[(kind, item_id)] = tuple(refs)
                if spec.get("events"):
                    events[(kind, item_id)] = tuple(spec["events"])
        return jobs, events

    def _publishers(self, section: dict[str, Any]) -> dict[str, PublisherSpec]:
        """`workflows.publishers`: a command prefix or a remote action -> its files."""
        out: dict[str, PublisherSpec] = {}
        for key, spec in section.items():
            where = self.doc.key_loc(("workflows", "publishers", key))
            text = " ".join(str(key).split())
            if not text:
                self.problem(
                    self.doc,
                    ("workflows", "publishers", key),
                    "a publisher is a command prefix (e.g. 'uv run scripts/publish.py') or a "
                    "remote action (owner/name@ref); this one is empty.",
                    where,
                )
                continue
            out[text.lower()] = PublisherSpec(key=text, files=tuple(spec["files"]), loc=where)
        return out

    def _actions(self, section: dict[str, Any]) -> dict[str, ActionSpec]:
        """`workflows.actions`: each text checked like a bind's (expressions that parse,
        ``{axis}`` placeholders of declared axes)."""
        out: dict[str, ActionSpec] = {}
        for uses, spec in section.items():
            if uses.lower().startswith(_READ_ACTIONS):
                self.problem(
                    self.doc,
                    ("workflows", "actions", uses),
                    f"{uses[:80]!r} is read by stagegate itself (its name, pattern, path and "
                    "version); declare only remote actions it does not read.",
                    self.doc.key_loc(("workflows", "actions", uses)),
                )
                continue
            if not _ACTION.fullmatch(uses):
                self.problem(
                    self.doc,
                    ("workflows", "actions", uses),
                    f"{uses[:80]!r} is not a remote action as a workflow's uses: names it: "
                    "write owner/name@ref (or owner/name/path@ref), e.g. "
                    "'example/sign-and-upload@v2'.",
                    self.doc.key_loc(("workflows", "actions", uses)),
                )
                continue
            for direction in ("uploads", "downloads"):
                for i, text in enumerate(spec.get(direction, ())):
                    path: DocPath = ("workflows", "actions", uses, direction, i)
                    self._expression_bind(f"{uses} {direction}", path, text)  # for its checks
            out[uses.strip().lower()] = ActionSpec(
                uses=uses,
                uploads=tuple(spec.get("uploads", ())),
                downloads=tuple(spec.get("downloads", ())),
                loc=self.doc.key_loc(("workflows", "actions", uses)),
            )
        return out

    def _expression_bind(self, key: str, path: DocPath, value: str) -> Bind:
        """A bind whose text holds ``${{ }}`` expressions, evaluated where it is used."""
        loc = self.doc.loc(path)
        found = Bind(
            key=key, text=Template(text=value, parts=(value,), loc=loc), expressions=True, loc=loc
        )
        if self.trusted:  # validated when it was cached: the expression parser stays unloaded
            return found
        from stagegate.model import ghexpr

        try:
            pieces = ghexpr.split_text(value)
        except LocatedError as exc:
            self.problem(
                self.doc,
                path,
                f"invalid expression: {exc.message}",
                self.doc.text_loc(path, exc.column),
            )
            pieces = []
        for piece, offset in pieces:
            if piece.startswith("${{"):
                try:
                    ghexpr.parse(piece[3:-2])
                except LocatedError as exc:
                    self.problem(
                        self.doc,
                        path,
                        f"invalid expression: {exc.message}",
                        self.doc.text_loc(path, offset + 3 + exc.column),
                    )
            else:
                self._template(path, piece, kind="artifact")
        return found

    # -- checks and stages

    def _check(self, doc: Document, path: DocPath, spec: dict[str, Any], origin: str) -> Check:
        args = {k: v for k, v in spec.items() if k != "check"}
        return Check(kind=spec["check"], args=args, loc=doc.loc(path), origin=origin)

    def _stage(self, stage_file: StageFile) -> Stage:
        number, slug, shown, doc = (
            stage_file.number,
            stage_file.slug,
            stage_file.shown,
            stage_file.doc,
        )
        data = doc.data
        if data["stage"] != number:
            self.problem(
                doc,
                ("stage",),
                f"stage: {data['stage']} does not match the file name ({number:02d}-...); "
                "make them agree.",
            )
        values: dict[str, bool] = {}
        locs: dict[str, Loc] = {}
        for name, value in data.get("set", {}).items():
            if name not in self.flag_names:
                hint = suggest(name, self.flag_names)
                self.problem(
                    doc,
                    ("set", name),
                    f"unknown flag {name!r}{hint or '; declare it under flags: in the migration file'}",
                    doc.key_loc(("set", name)),
                )
            values[name] = value
            locs[name] = doc.key_loc(("set", name))
        acceptance = tuple(
            self._check(doc, ("acceptance", i), spec, "acceptance")
            for i, spec in enumerate(data.get("acceptance", ()))
        )
        return Stage(
            number=number,
            slug=slug,
            title=data["title"],
            outcome=data.get("outcome", ""),
            set=values,
            set_locs=locs,
            reversible=data.get("reversible", True),
            acceptance=acceptance,
            release_changes=self._release_changes(doc),
            job_changes=self._job_changes(doc),
            file=shown,
            loc=doc.loc(()),
            reversible_loc=doc.key_loc(("reversible",)) if "reversible" in data else None,
            document=doc,
        )

    def _change_globs(
        self, doc: Document, path: DocPath, spec: dict[str, Any], key: str
    ) -> tuple[Template, ...]:
        found = []
        for j, text in enumerate(spec.get(key, ())):
            at = (*path, key, j)
            found.append(Template(text=text, parts=(text,), loc=doc.loc(at)))
            if re.search(r"\{[A-Za-z_][A-Za-z0-9_-]*\}", text):
                self.problem(
                    doc,
                    at,
                    "release_changes globs are applied as written, like a release's select, "
                    "without {axis} placeholders; write the value itself.",
                )
            elif not self.trusted:
                from stagegate.engine import globs as engine

                try:
                    engine.check_glob(text)
                except engine.PatternError as exc:
                    self.problem(doc, at, f"glob: {exc.message}", doc.text_loc(at, exc.column))
        return tuple(found)

    def _job_changes(self, doc: Document) -> tuple[JobChange, ...]:
        """The `release_changes` entries that name a real release job (`job: PATH#JOB`)."""
        out = []
        for i, spec in enumerate(doc.data.get("release_changes", ())):
            path: DocPath = ("release_changes", i)
            if "job" not in spec:
                continue
            text = spec["job"]
            if not _JOB_REF.fullmatch(text):
                self.problem(
                    doc,
                    (*path, "job"),
                    f"{text[:80]!r} is not a job: write PATH#JOB, the workflow file relative "
                    "to the top of the repository and the job's id, e.g. "
                    "'.github/workflows/release.yml#publish'.",
                )
                continue
            change = JobChange(
                job=JobRef(text=text, loc=doc.loc((*path, "job"))),
                add=self._change_globs(doc, path, spec, "add"),
                drop=self._change_globs(doc, path, spec, "drop"),
                loc=doc.loc(path),
            )
            if "wheels" in spec:
                self.problem(
                    doc,
                    (*path, "wheels"),
                    f"release_changes for job {text}: `wheels` is said of a release, by its "
                    "`tag`; give the job's artifact names in `add` and `drop`, or make this a "
                    "`tag` entry.",
                )
            if not change.add and not change.drop:
                self.problem(
                    doc,
                    path,
                    f"release_changes for job {text} lists no `add` and no `drop` glob; say "
                    "which artifact names that job's uploads gain or lose at this stage, or "
                    "remove the entry.",
                )
            out.append(change)
        return tuple(out)

    def _release_changes(self, doc: Document) -> tuple[ReleaseChange, ...]:
        out = []
        for i, spec in enumerate(doc.data.get("release_changes", ())):
            path: DocPath = ("release_changes", i)
            if "tag" not in spec:
                continue  # a `job` entry (_job_changes)
            wheels = spec.get("wheels", {})
            change = ReleaseChange(
                tag=spec["tag"],
                add=self._change_globs(doc, path, spec, "add"),
                drop=self._change_globs(doc, path, spec, "drop"),
                loc=doc.loc(path),
                wheels_add=tuple(wheels.get("add", ())),
                wheels_drop=tuple(wheels.get("drop", ())),
            )
            if any(c.isspace() for c in change.tag):
                self.problem(
                    doc,
                    (*path, "tag"),
                    f"release_changes tag {change.tag!r} holds a space, which no git tag "
                    "does; name a concrete tag, such as v13.4.2.",
                )
            if not (change.add or change.drop or change.wheels_add or change.wheels_drop):
                self.problem(
                    doc,
                    path,
                    f"release_changes for {change.tag} lists no `add` and no `drop` glob; "
                    "say what the stage adds to or drops from the release, or remove the entry.",
                )
            out.append(change)
        return tuple(out)

    def _kinds_in_use(self, migration: Migration) -> None:
        """A release's ``kinds`` that no artifact template has."""
        kinds = {t.kind for p in migration.producers.values() for t in p.artifacts}
        for release in migration.releases.values():
            for i, kind in enumerate(release.kinds or ()):
                if kind not in kinds:
                    hint = suggest(kind, kinds) or f"; kinds in use: {', '.join(sorted(kinds))}"
                    self.problem(
                        self.doc,
                        ("releases", release.id, "kinds", i),
                        f"no artifact template has kind {kind!r}: write a template as "
                        f"{{name: TEMPLATE, kind: {kind}}} to give it that kind{hint}",
                    )


def _flag_refs(tree: Any) -> Iterator[Any]:
    from stagegate.model.expr import And, Flag, Not, Or

    if isinstance(tree, Flag):
        yield tree
    elif isinstance(tree, Not):
        yield from _flag_refs(tree.operand)
    elif isinstance(tree, And | Or):
        for operand in tree.operands:
            yield from _flag_refs(operand)


def _dispatch_text(value: str | bool) -> str:
    """A `dispatch` value as the reader names it (a boolean input's ``true``/``false``)."""
    return ("true" if value else "false") if isinstance(value, bool) else value
