"""The steps that build wheels, in each context a job runs in, as the reader walks them: the
bridge from the workflow model (``ci.model``) to ``ci.wheels``.

``Builds`` is fed by the shipping reader's hooks (a job's steps, a ``uses:`` step, a
``run:`` step): for each context (job, callers, matrix row) it keeps, in order, the build
steps (``ci.wheels.steps``) and the job's ``pip install cibuildwheel==X`` pins, so that an
upload carries the wheels of the build steps before it whose output folder its ``path``
takes (``carried``), with the identifiers they ship (``ci.wheels.shipped``).
"""

from __future__ import annotations

import functools
import shlex
from typing import TYPE_CHECKING, Any

from stagegate.ci.transfers import Site, text_value
from stagegate.ci.wheels import steps as wheel_steps
from stagegate.ci.wheels.model import CIBUILDWHEEL, BuildStep, Setting, Wheels, Word
from stagegate.errors import Loc
from stagegate.model import ghexpr

if TYPE_CHECKING:
    from stagegate.ci.files import Files
    from stagegate.ci.handlers import Use
    from stagegate.ci.model import Job, Step, Workflow
    from stagegate.ci.scopes import Scope

UNKNOWN = "\ue010"
"""Stands for a piece of a script that cannot be evaluated, while it is split into words."""
Where = tuple[Any, ...]
"""A context a job runs in: the job, its callers and their rows, its own row (what the
reader says it is)."""
_SEPARATORS = {"&&", "||", ";", "|", "&", "\n"}


class _Text:
    """The repository's files as ``ci.wheels.model.Files`` (text, through ``ci.files``)."""

    def __init__(self, files: Files) -> None:
        self.files = files

    def text(self, path: str) -> str | None:
        data = self.files.bytes_of(path.removeprefix("./"))
        try:
            return data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            return None


class _Built:
    """A build step, and the identifiers it ships once they were asked for."""

    __slots__ = ("step", "wheels")

    def __init__(self, step: BuildStep) -> None:
        self.step = step
        self.wheels: Wheels | None = None


class Builds:
    """The build steps of each context a job runs in, in order."""

    def __init__(self, files: Files, *, tool: bool = True) -> None:
        self.files = files
        self.text = _Text(files)
        self.tool = tool
        self.steps: dict[tuple[Any, ...], list[_Built]] = {}
        self.pins: dict[tuple[Any, ...], Setting] = {}
        self.runners: dict[tuple[Any, ...], Setting] = {}

    def runner(self, where: tuple[Any, ...], site: Site) -> Setting:
        return self.runners.get(where, Setting(name="runs-on", value=None, loc=Loc(site.rel, 1, 1)))

    # -- hooks

    def job(self, where: tuple[Any, ...], site: Site, job: Job, scope: Scope) -> None:
        """A job's steps are about to be read in ``site``'s context: its runner."""
        loc = site.doc.loc(job.at("runs-on"))
        value = scope.evaluate(job.runs_on, job.at("runs-on")) if job.runs_on is not None else None
        if isinstance(value, list):
            value = (
                value[0]
                if len(value) == 1
                else ghexpr.Unknown("runs-on", "runs-on lists several labels")
            )
        self.runners[where] = Setting.of("runs-on", value, loc)

    def uses(self, where: tuple[Any, ...], use: Use, workflow: Workflow | None) -> None:
        site, step, scope = use.site, use.step, use.scope
        if not site.runs or use.ref.name not in (
            wheel_steps.CIBW_ACTION,
            wheel_steps.MATURIN_ACTION,
        ):
            return
        inputs = {
            str(k): Setting.of(str(k), use.value(str(k)), use.loc(str(k))) for k in step.given
        }
        lines = self.files.texts.get(site.doc.file, [])
        loc = use.ref.loc
        directory = self._directory(step, scope)
        folder = inputs.get("working-directory")  # maturin-action builds (and writes) there
        if use.ref.name == wheel_steps.MATURIN_ACTION and folder is not None and folder.value:
            directory = folder.value
        built = wheel_steps.from_uses(
            use.ref.uses,
            lines[loc.line - 1] if 0 < loc.line <= len(lines) else "",
            loc=loc,
            runner=self.runner(where, site),
            env=self._env(site, step, scope, workflow),
            inputs=inputs,
            directory=directory,
        )
        if built is not None:
            self.steps.setdefault(where, []).append(_Built(built))

    def run(
        self,
        where: tuple[Any, ...],
        site: Site,
        step: Step,
        scope: Scope,
        workflow: Workflow | None,
    ) -> None:
        assert step.run is not None
        if not site.runs or not any(w in step.run for w in ("cibuildwheel", "maturin")):
            return
        loc = site.doc.loc(step.at("run"))
        env = self._env(site, step, scope, workflow)
        for words in self._commands(site, step, scope, loc):
            pin = wheel_steps.install_pin(words)
            if pin is not None:
                self.pins[where] = pin
                continue
            built = wheel_steps.from_command(
                words,
                runner=self.runner(where, site),
                env=env,
                installed=self.pins.get(where),
                directory=self._directory(step, scope),
            )
            if built is not None:
                self.steps.setdefault(where, []).append(_Built(built))

    # -- what an upload carries

    def carried(self, where: tuple[Any, ...], path: str) -> tuple[Wheels, ...]:
        """The wheels of the build steps before an upload of ``path`` in the context
        ``where`` whose output folder it takes, each step's identifiers computed once."""
        out = []
        for built in self.steps.get(where, ()):
            if takes(path, built.step):
                if built.wheels is None:
                    from stagegate.ci import wheels

                    built.wheels = wheels.shipped(built.step, self.text, tool=self.tool)
                out.append(built.wheels)
        return tuple(out)

    # -- helpers

    def _directory(self, step: Step, scope: Scope) -> str:
        if step.working_directory is None:
            return ""
        value = scope.evaluate(step.working_directory, step.at("working-directory"))
        return value if isinstance(value, str) else ""

    def _env(
        self, site: Site, step: Step, scope: Scope, workflow: Workflow | None
    ) -> dict[str, Setting]:
        """Every ``CIBW_*`` variable the step sees, where the nearest layer sets it."""
        doc = site.doc
        step_env = step.env if isinstance(step.env, dict) else {}
        names = {str(k) for layer in scope.env.layers for k in layer} | {str(k) for k in step_env}
        job = workflow.jobs.get(site.job.partition("#")[2]) if workflow is not None else None
        job_env = job.env if job is not None and isinstance(job.env, dict) else {}
        out: dict[str, Setting] = {}
        for name in sorted(n for n in names if n.startswith("CIBW_")):
            value, label = scope.env_value(name), name
            if name in step_env:
                where = doc.loc(step.at("env", name))
                value = scope.evaluate(step_env[name], step.at("env", name))
            elif name in site.written:
                where, label = (
                    doc.loc(step.path),
                    f"{name} (written to $GITHUB_ENV before this step)",
                )
            elif job is None:
                where, label = doc.loc(step.path), f"{name} (the env of the job using this action)"
            elif name in job_env:
                where = doc.loc(job.at("env", name))
            else:
                where = doc.loc(("env", name))
            out[name] = Setting.of(label, text_value(value), where)
        return out

    def _commands(self, site: Site, step: Step, scope: Scope, loc: Loc) -> list[list[Word]]:
        assert step.run is not None
        value = scope.evaluate(step.run, step.at("run"))
        if isinstance(value, ghexpr.Sym):
            text = "".join(p if isinstance(p, str) else UNKNOWN for p in value.parts)
        elif isinstance(value, str):
            text = value
        else:
            return []
        block = self.files.block_offset(site.doc, step.at("run"))
        return commands(text, Loc(loc.file, loc.line + block, 1))


def commands(text: str, start: Loc) -> list[list[Word]]:
    """The simple commands of a script, as words; a word with an unknown piece or a shell
    expansion (``$X``, a backquote) is not known."""
    out: list[list[Word]] = []
    for number, words in _commands(text):
        at = Loc(start.file, start.line + number, 1)
        out.append(
            [
                Word(text=None, loc=at, why=f"{token.replace(UNKNOWN, '${{ }}')} is not known")
                if UNKNOWN in token or "$" in token or "`" in token
                else Word(text=token, loc=at)
                for token in words
            ]
        )
    return out


@functools.lru_cache(maxsize=1024)
def _commands(text: str) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """(line number from the script's first, tokens) of each simple command: split once
    per text, which a step has in most of the contexts it runs in."""
    out: list[tuple[int, tuple[str, ...]]] = []
    joined = text.replace("\\\n", " ")
    for number, line in enumerate(joined.split("\n")):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        current: list[str] = []
        for token in tokens:
            if token in _SEPARATORS:
                if current:
                    out.append((number, tuple(current)))
                current = []
                continue
            current.append(token)
        if current:
            out.append((number, tuple(current)))
    return tuple(out)


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
        if (
            not line
            or not folder
            or line == folder
            or line.startswith(folder + "/")
            or folder.startswith(line + "/")
        ):
            return True
    return False
