"""The typed workflow model: a workflow, its triggers, jobs and steps, a composite action,
an action reference with its version.

Built once per file from the located YAML (``load.yamlsrc.Document``) by ``build`` and
shared by every reader of the workflows (drift, continuity, init, flags-wired, the
``workflows`` check). A value the readers evaluate (``with:``, ``env:``, ``if:``, a
``run:`` script) stays as the YAML wrote it, beside the path that locates it: the model
decides the shapes, the readers the meaning. A shape GitHub would refuse (``jobs`` that
is not a mapping, a step that is a list) is ``InvalidInput`` at its place, raised when
the file is built, whichever reader asks first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from stagegate.ci.pins import pin_version
from stagegate.errors import InvalidInput, Loc, Problem
from stagegate.load.yamlsrc import Document
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.records import record

# --------------------------------------------------------------------------- actions

_SHA = re.compile(r"^[0-9a-f]{40}$")
_REF_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)$")
_COMMENT_VERSIONS = (
    # `# ratchet:owner/repo@v4` and `# pin @v4`: the version after an @
    re.compile(r"@\s*v?(\d+(?:\.\d+)*)\b"),
    # `# tag=v4.1.7`, `# v4`, `# v4.1.7`, `# 4.1.7`
    re.compile(r"(?:^|[\s=:])v?(\d+(?:\.\d+)*)\b"),
)


def comment_version(line: str) -> tuple[int, ...] | None:
    """The version a pin comment on the ``uses:`` line names, in the forms seen in the
    wild: ``# v4``, ``# v4.1.7``, ``# tag=v4``, ``# ratchet:actions/upload-artifact@v4``,
    ``# pin @v4``; None where the line has no comment or the comment names no version."""
    hash_at = _comment_start(line)
    if hash_at < 0:
        return None
    comment = line[hash_at + 1 :].strip()
    for pattern in _COMMENT_VERSIONS:
        found = pattern.search(comment)
        if found:
            return tuple(int(p) for p in found.group(1).split("."))
    return None


def _comment_start(line: str) -> int:
    """Where a YAML comment starts on the line (-1: none): a ``#`` at the start or after
    whitespace, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
    return -1


@record(kw_only=True)
class ActionRef:
    """A ``uses:`` value: a remote action or reusable workflow (``owner/name[/path]@ref``),
    a local one (``./path``) or a container (``docker://...``)."""

    uses: str
    """As written, stripped."""
    name: str
    """``owner/name[/path]`` in lower case (the action); "" for a local or docker one."""
    ref: str
    """What follows the ``@`` ("" where nothing does)."""
    local: str | None
    """The repository path of a ``./path`` reference (None: not local, or leading out)."""
    docker: bool
    pinned: bool
    """The ref is a full commit id."""
    version: tuple[int, ...] | None
    """The version the ref names (``v4.1.7`` -> (4, 1, 7)), or, for a commit pin, the pin
    comment on its line; None where neither says one (a branch, an unmarked commit)."""
    loc: Loc

    @property
    def major(self) -> int | None:
        return self.version[0] if self.version else None

    @property
    def family(self) -> str:
        """``owner/name`` of a remote action (its sub-path dropped)."""
        return "/".join(self.name.split("/")[:2])


def action_ref(uses: str, line: str, loc: Loc) -> ActionRef:
    """The reference ``uses`` names; ``line`` is its line of the file (for a pin comment)."""
    text = uses.strip()
    if text.startswith("docker://"):
        return ActionRef(
            uses=text, name="", ref="", local=None, docker=True, pinned=False, version=None, loc=loc
        )
    if text.startswith("./"):
        rel = PurePosixPath(text[2:].split("@", 1)[0])
        local = None if ".." in rel.parts or rel.is_absolute() else rel.as_posix()
        return ActionRef(
            uses=text, name="", ref="", local=local, docker=False, pinned=False, version=None,
            loc=loc,
        )  # fmt: skip
    name, _, ref = text.partition("@")
    ref = ref.strip()
    pinned = bool(_SHA.match(ref))
    version: tuple[int, ...] | None = None
    if pinned:
        # the commit is what runs: a release's commit names its version, else the comment
        family = "/".join(name.strip().lower().split("/")[:2])
        version = pin_version(family, ref) or comment_version(line)
    else:
        found = _REF_VERSION.match(ref)
        if found:
            version = tuple(int(p) for p in found.group(1).split("."))
    return ActionRef(
        uses=text,
        name=name.strip().lower(),
        ref=ref,
        local=None,
        docker=False,
        pinned=pinned,
        version=version,
        loc=loc,
    )


# --------------------------------------------------------------------------- steps, jobs


@record(kw_only=True, eq=False)
class Step:
    """One step of a job or of a composite action."""

    index: int
    path: DocPath
    loc: Loc
    id: str | None
    name: str | None
    condition: Any
    """The ``if:`` as written (None: none)."""
    uses: ActionRef | None
    given: Mapping[str, Any]
    """``with:``, as written."""
    run: str | None
    shell: str | None
    working_directory: str | None
    env: Any
    """``env:`` as written: a mapping, a whole ``${{ }}`` text, or None."""
    raw: Mapping[str, Any]

    def at(self, *keys: str | int) -> DocPath:
        """The path of something inside the step (``step.at("with", "name")``)."""
        return (*self.path, *keys)


@record(kw_only=True, eq=False)
class Defaults:
    shell: str | None = None
    working_directory: str | None = None


@record(kw_only=True, eq=False)
class Job:
    """One job of a workflow: steps, or a call of a reusable workflow (``uses``)."""

    id: str
    key: str
    """``FILE#ID``."""
    path: DocPath
    loc: Loc
    """Where its key is written."""
    name: Any
    condition: Any
    needs: tuple[str, ...]
    runs_on: Any
    env: Any
    defaults: Defaults
    strategy: Any
    """``strategy:`` as written (None: no matrix)."""
    steps: tuple[Step, ...]
    uses: ActionRef | None
    given: Mapping[str, Any]
    """``with:`` of a reusable-workflow call."""
    outputs: Mapping[str, Any]
    raw: Mapping[str, Any]

    def at(self, *keys: str | int) -> DocPath:
        return (*self.path, *keys)


@record(kw_only=True, eq=False)
class Workflow:
    """A workflow file: its triggers (``on``, normalised to trigger -> settings), env,
    defaults and jobs (in the order written)."""

    file: str
    doc: Document
    on: Mapping[str, Any]
    env: Any
    defaults: Defaults
    jobs: Mapping[str, Job]

    @property
    def triggers(self) -> set[str]:
        return set(self.on)

    @property
    def call_inputs(self) -> Mapping[str, Any]:
        """``on.workflow_call.inputs`` ({}: not a reusable workflow, or none declared)."""
        return _mapping_in(self.on.get("workflow_call"), "inputs")

    @property
    def call_outputs(self) -> Mapping[str, Any]:
        """``on.workflow_call.outputs``: what a caller reads as ``needs.JOB.outputs.K``."""
        return _mapping_in(self.on.get("workflow_call"), "outputs")

    @property
    def dispatch_inputs(self) -> Mapping[str, Any]:
        return _mapping_in(self.on.get("workflow_dispatch"), "inputs")

    @property
    def data(self) -> Any:
        return self.doc.data

    def waits(self, job: str) -> set[str]:
        """The jobs ``job`` waits for through ``needs:``, directly or not: a download sees
        what they uploaded; a job it does not wait for may not have finished."""
        out: set[str] = set()
        todo = [job]
        while todo:
            spec = self.jobs.get(todo.pop())
            for name in spec.needs if spec is not None else ():
                if name not in out:
                    out.add(name)
                    todo.append(name)
        return out


@record(kw_only=True, eq=False)
class Action:
    """A local action (``action.yml``): its inputs, and its steps when it is composite."""

    file: str
    doc: Document
    using: str
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]
    steps: tuple[Step, ...]

    @property
    def composite(self) -> bool:
        return self.using.lower() == "composite"


def _mapping_in(value: Any, key: str) -> Mapping[str, Any]:
    inner = value.get(key) if isinstance(value, dict) else None
    return inner if isinstance(inner, dict) else {}


# --------------------------------------------------------------------------- building


def invalid(loc: Loc, message: str) -> InvalidInput:
    return InvalidInput([Problem(loc, message)])


def is_action(data: Any) -> bool:
    """Whether a document is an action (``runs:``) rather than a workflow (``jobs:``)."""
    return isinstance(data, dict) and isinstance(data.get("runs"), dict) and "jobs" not in data


class _Builder:
    """Builds the records of one document (``lines``: its text, for pin comments)."""

    def __init__(self, doc: Document, lines: list[str]) -> None:
        self.doc = doc
        self.lines = lines

    def mapping(self, path: DocPath, value: Any, what: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise invalid(
                self.doc.loc(path), f"{what} must be a mapping (key: value); fix the workflow."
            )
        return value

    def sequence(self, path: DocPath, value: Any, what: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise invalid(self.doc.loc(path), f"{what} must be a list; fix the workflow.")
        return value

    def ref(self, path: DocPath, uses: Any) -> ActionRef | None:
        if not isinstance(uses, str):
            return None
        loc = self.doc.loc(path)
        line = self.lines[loc.line - 1] if 0 < loc.line <= len(self.lines) else ""
        return action_ref(uses, line, loc)

    def defaults(self, path: DocPath, raw: Any) -> Defaults:
        run = raw.get("run") if isinstance(raw, dict) else None
        if not isinstance(run, dict):
            return Defaults()
        shell, folder = run.get("shell"), run.get("working-directory")
        return Defaults(
            shell=shell if isinstance(shell, str) else None,
            working_directory=folder if isinstance(folder, str) else None,
        )

    def step(self, path: DocPath, index: int, raw: Any) -> Step:
        spec = self.mapping(path, raw, "a step")
        run, shell, folder = spec.get("run"), spec.get("shell"), spec.get("working-directory")
        ident, name = spec.get("id"), spec.get("name")
        return Step(
            index=index,
            path=path,
            loc=self.doc.loc(path),
            id=ident if isinstance(ident, str) else None,
            name=name if isinstance(name, str) else None,
            condition=spec.get("if"),
            uses=self.ref((*path, "uses"), spec.get("uses")),
            given=self.mapping((*path, "with"), spec.get("with"), "with"),
            run=run if isinstance(run, str) else None,
            shell=shell if isinstance(shell, str) else None,
            working_directory=folder if isinstance(folder, str) else None,
            env=spec.get("env"),
            raw=spec,
        )

    def steps(self, path: DocPath, raw: Any, what: str) -> tuple[Step, ...]:
        listed = self.sequence(path, raw, what)
        return tuple(self.step((*path, i), i, step) for i, step in enumerate(listed))

    def job(self, file: str, job_id: str, raw: Any) -> Job:
        path: DocPath = ("jobs", job_id)
        spec = self.mapping(path, raw, f"job {job_id}")
        needs = spec.get("needs")
        names = (
            (needs,)
            if isinstance(needs, str)
            else tuple(n for n in needs if isinstance(n, str))
            if isinstance(needs, list)
            else ()
        )
        outputs = spec.get("outputs")
        return Job(
            id=job_id,
            key=f"{file}#{job_id}",
            path=path,
            loc=self.doc.key_loc(path),
            name=spec.get("name"),
            condition=spec.get("if"),
            needs=names,
            runs_on=spec.get("runs-on"),
            env=spec.get("env"),
            defaults=self.defaults((*path, "defaults"), spec.get("defaults")),
            strategy=spec.get("strategy"),
            steps=self.steps((*path, "steps"), spec.get("steps"), "steps"),
            uses=self.ref((*path, "uses"), spec.get("uses")),
            given=self.mapping((*path, "with"), spec.get("with"), "with"),
            outputs=outputs if isinstance(outputs, dict) else {},
            raw=spec,
        )

    def workflow(self, file: str) -> Workflow:
        data = self.doc.data if isinstance(self.doc.data, dict) else {}
        jobs = self.mapping(("jobs",), data.get("jobs"), "jobs")
        return Workflow(
            file=file,
            doc=self.doc,
            on=triggers(data),
            env=data.get("env"),
            defaults=self.defaults(("defaults",), data.get("defaults")),
            jobs={str(k): self.job(file, str(k), v) for k, v in jobs.items()},
        )

    def action(self, file: str) -> Action:
        data = self.doc.data
        runs = self.mapping(("runs",), data.get("runs"), "runs")
        using = str(runs.get("using", ""))
        inputs, outputs = data.get("inputs"), data.get("outputs")
        steps: tuple[Step, ...] = ()
        if using.lower() == "composite":
            steps = self.steps(("runs", "steps"), runs.get("steps"), "runs.steps")
        return Action(
            file=file,
            doc=self.doc,
            using=using,
            inputs=inputs if isinstance(inputs, dict) else {},
            outputs=outputs if isinstance(outputs, dict) else {},
            steps=steps,
        )


def triggers(data: Mapping[str, Any]) -> dict[str, Any]:
    """``on:`` as trigger -> its settings (None where it has none): ``on: push``,
    ``on: [push, pull_request]`` and the mapping form alike."""
    on = data.get("on")
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {str(t): None for t in on}
    if isinstance(on, dict):
        return {str(t): v for t, v in on.items()}
    return {}


def build_workflow(file: str, doc: Document, lines: list[str]) -> Workflow:
    """The workflow of ``doc`` (``file``: its name from the repository's top)."""
    return _Builder(doc, lines).workflow(file)


def build_action(file: str, doc: Document, lines: list[str]) -> Action:
    """The action of ``doc``; InvalidInput where it is not one."""
    if not is_action(doc.data):
        raise invalid(
            doc.loc(()), f"{file} is not an action (no runs: mapping); fix the uses: path."
        )
    return _Builder(doc, lines).action(file)
