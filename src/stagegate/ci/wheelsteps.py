"""The build steps of the workflows, read with the workflow reader, and the wheels each
upload context carries: the bridge between ``ci.workflows`` and ``ci.wheels``.

``WheelsReader`` is the reader with three hooks (the job's steps, ``uses:`` and ``run:``
steps): in each context (job, callers, matrix row) it keeps, in order, the build steps
(``ci.wheels.steps``) and the uploads, so that an upload carries the wheels of the build
steps before it whose output folder its ``path`` takes. ``uploads`` reads a tree's
workflows that way; ``changes`` compares two trees' uploads, paired by workflow file,
job, matrix row and artifact name.

Continuity keeps its own pairing of upload contexts; what it needs from here is
``WheelsReader``'s hooks (or the same calls made from its typed model) and
``ci.wheels.compare``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stagegate.ci import wheels
from stagegate.ci.files import Files
from stagegate.ci.scopes import Scope
from stagegate.ci.transfers import Site, shown, text_value
from stagegate.ci.wheels import compare as wheels_compare
from stagegate.ci.wheels import steps as wheel_steps
from stagegate.ci.wheels.model import CIBUILDWHEEL, BuildStep, Setting, Wheels, Word
from stagegate.ci.workflows import Reader
from stagegate.errors import Loc
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import Migration, ghexpr
from stagegate.records import record, replace

UNKNOWN = "\ue010"
_SEPARATORS = {"&&", "||", ";", "|", "&", "\n"}


@record(kw_only=True)
class Upload:
    """One upload context and the build steps whose wheels it carries."""

    loc: Loc
    job: str  # PATH#JOB
    callers: tuple[str, ...]
    matrix: tuple[tuple[str, str], ...]
    name: str
    path: str
    steps: tuple[BuildStep, ...]
    place: tuple[Any, ...] = ()
    """Where it runs apart from its values: the matrix row's index, the upload's order."""

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.job, self.callers, self.matrix, self.name)


class TreeFiles:
    """A work tree's files (``ci.wheels.model.Files``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.read: dict[str, str | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self.read:
            try:
                self.read[path] = (self.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self.read[path] = None
        return self.read[path]


def _mapping(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _row(matrix: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(matrix, dict):
        return ()
    return tuple(sorted((str(k), shown(v) if not isinstance(v, str) else v) for k, v in matrix.items()))


class WheelsReader(Reader):
    """The reader, keeping the build steps and uploads of each context in order."""

    def __init__(self, migration: Migration, files: Files) -> None:
        super().__init__(migration, 0, files)
        self.events: dict[tuple[Any, ...], list[BuildStep | Upload]] = {}
        self.pins: dict[tuple[Any, ...], Setting] = {}
        self.runner: Setting = Setting(name="runs-on", value=None, loc=Loc("", 1, 1))
        self.where: tuple[Any, ...] = ()
        self.row = -1
        self.lines: dict[str, list[str]] = {}

    # -- hooks

    def job_steps(self, site: Site, jpath: DocPath, job: Mapping[str, Any], scope: Scope) -> None:
        self.where = (site.job, site.callers, _row(scope.matrix))
        self.row = scope.strategy[0] if scope.strategy is not None else -1
        raw = job.get("runs-on")
        loc = site.doc.loc((*jpath, "runs-on"))
        value = scope.evaluate(raw, (*jpath, "runs-on")) if raw is not None else None
        if isinstance(value, list):
            value = value[0] if len(value) == 1 else ghexpr.Unknown("runs-on", "runs-on lists several labels")
        self.runner = Setting.of("runs-on", value, loc)
        super().job_steps(site, jpath, job, scope)

    def on_uses(self, site: Site, path: DocPath, step: Mapping[str, Any], uses: str, scope: Scope) -> None:
        if not site.runs:
            return
        doc = site.doc
        loc = doc.loc((*path, "uses"))
        given = _mapping(step.get("with"))
        inputs = {str(k): Setting.of(str(k), scope.evaluate(v, (*path, "with", k)), doc.loc((*path, "with", k)))
                  for k, v in given.items()}
        name = wheel_steps.action_of(uses)
        if name == "actions/upload-artifact":
            self._upload(site, loc, inputs)
            return
        built = wheel_steps.from_uses(
            uses, self._line(loc), loc=loc, runner=self.runner,
            env=self._env(site, path, step, scope), inputs=inputs, directory=self._directory(step, scope, path),
        )
        if built is not None:
            self.events.setdefault(self.where, []).append(built)

    def on_run(self, site: Site, path: DocPath, step: Mapping[str, Any], scope: Scope) -> None:
        if not site.runs:
            return
        loc = site.doc.loc((*path, "run"))
        env = self._env(site, path, step, scope)
        for words in self._commands(step["run"], scope, path, loc):
            pin = wheel_steps.install_pin(words)
            if pin is not None:
                self.pins[self.where] = pin
                continue
            built = wheel_steps.from_command(
                words, runner=self.runner, env=env, installed=self.pins.get(self.where),
                directory=self._directory(step, scope, path),
            )
            if built is not None:
                self.events.setdefault(self.where, []).append(built)

    # -- helpers

    def _upload(self, site: Site, loc: Loc, inputs: Mapping[str, Setting]) -> None:
        name = inputs.get("name")
        path = inputs.get("path")
        events = self.events.setdefault(self.where, [])
        order = sum(isinstance(e, Upload) for e in events)
        events.append(Upload(
            loc=loc, job=site.job, callers=site.callers, matrix=self.where[2],
            name=(name.value if name else "artifact") or "", path=(path.value if path else "") or "",
            steps=(), place=(site.job, site.callers, self.row, order),
        ))

    def _line(self, loc: Loc) -> str:
        if loc.file not in self.lines:
            try:
                self.lines[loc.file] = Path(loc.file if Path(loc.file).is_absolute() else self.files.root / loc.file).read_text(encoding="utf-8").splitlines()
            except OSError:
                self.lines[loc.file] = []
        lines = self.lines[loc.file]
        return lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""

    def _directory(self, step: Mapping[str, Any], scope: Scope, path: DocPath) -> str:
        raw = step.get("working-directory")
        value = scope.evaluate(raw, (*path, "working-directory")) if raw is not None else ""
        return value if isinstance(value, str) else ""

    def _env(self, site: Site, path: DocPath, step: Mapping[str, Any], scope: Scope) -> dict[str, Setting]:
        """Every variable the step sees, where the nearest layer sets it."""
        doc = site.doc
        names = {str(k) for layer in scope.env.layers for k in layer}
        step_env = _mapping(step.get("env"))
        names |= {str(k) for k in step_env}
        out: dict[str, Setting] = {}
        job_path = path[:2] if path[:1] == ("jobs",) else ()  # () in an action's steps
        for name in sorted(names):
            if not name.startswith("CIBW_"):
                continue
            value, shown = scope.env_value(name), name
            if name in step_env:
                where = doc.loc((*path, "env", name))
                value = scope.evaluate(step_env[name], (*path, "env", name))
            elif name in site.written:
                where, shown = doc.loc(path), f"{name} (written to $GITHUB_ENV before this step)"
            elif not job_path:
                where, shown = doc.loc(path), f"{name} (the env of the job using this action)"
            elif name in _mapping(_mapping(_mapping(doc.data.get("jobs")).get(str(job_path[1]))).get("env")):
                where = doc.loc((*job_path, "env", name))
            else:
                where = doc.loc(("env", name))
            out[name] = Setting.of(shown, text_value(value), where)
        return out

    def _commands(self, run: Any, scope: Scope, path: DocPath, loc: Loc) -> list[list[Word]]:
        value = scope.evaluate(run, (*path, "run"))
        if isinstance(value, ghexpr.Sym):
            text = "".join(p if isinstance(p, str) else UNKNOWN for p in value.parts)
        elif isinstance(value, str):
            text = value
        else:
            return []
        first = text.lstrip("\n").split("\n", 1)[0].strip()
        base = loc.line + (0 if first and first in self._line(loc) else 1)
        return commands(text, Loc(loc.file, base, 1))


def commands(text: str, start: Loc) -> list[list[Word]]:
    """The simple commands of a script, as words; a word with an unknown piece or a shell
    expansion (``$X``, a backquote) is not known."""
    out: list[list[Word]] = []
    joined = text.replace("\\\n", " ")
    for number, line in enumerate(joined.split("\n")):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        at = Loc(start.file, start.line + number, 1)
        current: list[Word] = []
        for token in tokens:
            if token in _SEPARATORS:
                if current:
                    out.append(current)
                current = []
                continue
            if UNKNOWN in token or "$" in token or "`" in token:
                current.append(Word(text=None, loc=at, why=f"{token.replace(UNKNOWN, '${{ }}')} is not known"))
            else:
                current.append(Word(text=token, loc=at))
        if current:
            out.append(current)
    return out


# --------------------------------------------------------------------------- trees


def _output(step: BuildStep) -> str | None:
    """The folder a build step writes its wheels to (None: not known)."""
    words = [w.text for w in step.args]
    for flag in ("--output-dir", "-o", "--out"):
        if flag in words:
            i = words.index(flag)
            return words[i + 1] if i + 1 < len(words) else None
    if step.tool == CIBUILDWHEEL:
        given = step.inputs.get("output-dir") or step.env.get("CIBW_OUTPUT_DIR")
        return (given.value if given else "wheelhouse") or "wheelhouse"
    args = step.inputs.get("args")
    if args is not None and args.value:
        try:
            parts = shlex.split(args.value)
        except ValueError:
            return None
        for flag in ("--out", "-o"):
            if flag in parts and parts.index(flag) + 1 < len(parts):
                return parts[parts.index(flag) + 1]
    return "target/wheels"


def _norm(path: str) -> str:
    path = path.strip().removeprefix("./").rstrip("/")
    return "" if path in (".", "*") else path


def takes(upload_path: str, step: BuildStep) -> bool:
    """Whether an upload's ``path`` takes the step's wheels."""
    output = _output(step)
    if output is None or not upload_path.strip():
        return True
    folder = _norm(step.directory + "/" + output if step.directory else output)
    for line in upload_path.splitlines():
        line = _norm(line)
        if line.endswith((".tar.gz", ".zip")):
            continue
        if not line or not folder or line == folder or line.startswith(folder + "/") or folder.startswith(line + "/"):
            return True
    return False


def uploads(root: Path, paths: Sequence[str] | None = None) -> list[Upload]:
    """Each upload of the workflows under ``root`` with the build steps it carries."""
    from stagegate.ci.files import discover
    from stagegate.ci.ships import bare_migration
    from stagegate.model import DEFAULT_WORKFLOW_PATHS

    reader = WheelsReader(bare_migration(root), Files(root))
    reader.run(discover(root, paths or DEFAULT_WORKFLOW_PATHS))
    out: list[Upload] = []
    for events in reader.events.values():
        built: list[BuildStep] = []
        for event in events:
            if isinstance(event, BuildStep):
                built.append(event)
            else:
                carried = tuple(b for b in built if takes(event.path, b))
                out.append(replace(event, steps=carried))
    return out


def shipped(root: Path, *, tool: bool = True) -> dict[tuple[Any, ...], tuple[Upload, list[Wheels]]]:
    """Each upload context that carries wheels, with what its build steps ship."""
    files = TreeFiles(root)
    return {u.key: (u, [wheels.shipped(s, files, tool=tool) for s in u.steps]) for u in uploads(root) if u.steps}


def pairs(
    before: Mapping[tuple[Any, ...], tuple[Upload, list[Wheels]]],
    after: Mapping[tuple[Any, ...], tuple[Upload, list[Wheels]]],
) -> list[tuple[tuple[Any, ...], list[Wheels], list[Wheels]]]:
    """Base and head uploads paired by job, matrix row and name; what is left, by where
    it runs (a runner label in the row or the name changes neither's place)."""
    out = [(key, before[key][1], after[key][1]) for key in before.keys() & after.keys()]
    rest_before = {v[0].place: k for k, v in before.items() if k not in after}
    rest_after = {v[0].place: k for k, v in after.items() if k not in before}
    for place in rest_before.keys() | rest_after.keys():
        b, a = rest_before.get(place), rest_after.get(place)
        key = a if a is not None else b
        assert key is not None
        out.append((key, before[b][1] if b is not None else [], after[a][1] if a is not None else []))
    return out


def overall(base: Path, head: Path, *, tool: bool = True) -> wheels_compare.Change:
    """What every upload of the workflows ships together, base against head (a release
    that takes every upload: ``compare.release``)."""
    found = pairs(shipped(base, tool=tool), shipped(head, tool=tool))
    return wheels_compare.release([(b, h) for _key, b, h in found], tool=tool)


def changes(base: Path, head: Path, *, tool: bool = True) -> dict[tuple[Any, ...], wheels_compare.Change]:
    """The upload contexts whose wheels differ between two trees (or cannot be compared),
    by the head's key (the base's where the head has none)."""
    out: dict[tuple[Any, ...], wheels_compare.Change] = {}
    for key, b, h in pairs(shipped(base, tool=tool), shipped(head, tool=tool)):
        change = wheels_compare.compare(b, h, tool=tool)
        if change.changed or change.unresolved:
            out[key] = change
    return out
