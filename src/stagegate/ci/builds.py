"""The steps that build wheels, in each context a job runs in, as the reader walks them: the
bridge from the workflow model (``ci.model``) to ``ci.wheels``.

``Builds`` is fed by the shipping reader's hooks (a job's steps, a ``uses:`` step, a
``run:`` step, and the commands the shell reader tells of): for each context (job,
callers, matrix row) it keeps, in order, the build steps (``ci.wheels.steps``) and the
job's ``pip install cibuildwheel==X`` pins, so that an upload carries the wheels of the
build steps before it whose output folder its ``path`` takes (``carried``), with the
identifiers they ship (``ci.wheels.shipped``).

A ``run:`` script's commands come with their words as the shell reader expanded them
(``ci.shell``: variables set earlier in the script, the step's and job's env, ``${{ }}``),
the variables the script exported and the folder a ``cd`` left it in; a script the shell
reader did not read to its end is split into words as written, a word with an expansion
not known. A copy or move of all of a build's wheels (``cp OUT/*.whl dist``) read
exactly adds (moves) the folder they are in.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Any

from stagegate.ci.shell.commands import REPORTED_TOOLS
from stagegate.ci.shell.state import CWD
from stagegate.ci.shell.values import Glob, Marker
from stagegate.ci.transfers import Site, Unresolved, shown, text_value
from stagegate.ci.wheels import folders
from stagegate.ci.wheels import steps as wheel_steps
from stagegate.ci.wheels.model import BuildStep, Setting, Wheels, Word
from stagegate.errors import Loc
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Value, unknowns

if TYPE_CHECKING:
    from stagegate.ci.files import Files
    from stagegate.ci.handlers import Use
    from stagegate.ci.model import Job, Step, Workflow
    from stagegate.ci.scopes import Command, Scope

UNKNOWN = "\ue010"
"""Stands for a piece of a script that cannot be evaluated, while it is split into words."""
Where = tuple[Any, ...]
"""A context a job runs in: the job, its callers and their rows, its own row (what the
reader says it is)."""
_SEPARATORS = {"&&", "||", ";", "|", "&", "\n"}
_REQUIREMENTS = re.compile(r"\binstall\b[^\n]*\s(?:-r|--requirement)")
"""A script that may install from a requirements file (which may pin cibuildwheel)."""


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
    """A build step, the folders its wheels are in (None: its output folder), and the
    identifiers it ships once they were asked for; ``blind``: why they cannot be known
    (the folder it runs in)."""

    __slots__ = ("blind", "places", "step", "wheels")

    def __init__(self, step: BuildStep, blind: Unresolved | None = None) -> None:
        self.step = step
        self.blind = blind
        self.places: tuple[str, ...] | None = None
        self.wheels: Wheels | None = None

    def folders(self) -> tuple[str, ...] | None:
        """Where its wheels are (None: not known)."""
        if self.places is not None:
            return self.places
        if self.blind is not None:
            return None
        output = folders.output(self.step)
        return None if output is None else (folders.folder(self.step.directory, output),)


class Builds:
    """The build steps of each context a job runs in, in order."""

    def __init__(self, files: Files, *, tool: bool = True) -> None:
        self.files = files
        self.text = _Text(files)
        self.tool = tool
        self.steps: dict[tuple[Any, ...], list[_Built]] = {}
        self.pins: dict[tuple[Any, ...], Setting] = {}
        self.pinned_at: dict[tuple[Any, ...], list[tuple[Loc, Setting]]] = {}
        """Each context's installs of cibuildwheel, in order, with the install's line."""
        self.runners: dict[tuple[Any, ...], Setting] = {}
        self.told: list[Command] = []
        """The commands the shell reader told of in the step being read, in order."""

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

    def wants(self, where: tuple[Any, ...], text: str) -> bool:
        """Whether a script is read for its commands: it names a build tool, or copies
        or moves files after a build of its context."""
        if any(tool in text for tool in REPORTED_TOOLS) or _REQUIREMENTS.search(text):
            return True
        return bool(self.steps.get(where)) and _MOVES.search(text) is not None

    def command(self, site: Site, told: Command) -> None:
        """A command of the script being read, as the shell reader expanded it."""
        if site.runs:
            self.told.append(told)

    def run(
        self,
        where: tuple[Any, ...],
        site: Site,
        step: Step,
        scope: Scope,
        workflow: Workflow | None,
        *,
        read: bool,
    ) -> None:
        """A ``run:`` step was read: its commands as the shell reader told them (``read``:
        it read the script to its end), else its text split into words."""
        assert step.run is not None
        told, self.told = self.told, []
        if not site.runs:
            return
        if read:
            for command in told:
                self._told(where, site, (step, scope, workflow), command)
            return
        if not any(w in step.run for w in REPORTED_TOOLS) and not _REQUIREMENTS.search(step.run):
            return
        loc = site.doc.loc(step.at("run"))
        env = self._env(site, step, scope, workflow)
        for words in self._commands(site, step, scope, loc):
            self._command(where, site, words, env, self._directory(step, scope))

    def _command(
        self,
        where: tuple[Any, ...],
        site: Site,
        words: list[Word],
        env: dict[str, Setting],
        directory: str,
        blind: Unresolved | None = None,
    ) -> None:
        pin = wheel_steps.install_pin(words) or wheel_steps.requirements_pin(
            words, self.text.text, directory
        )
        if pin is not None:
            self.pins[where] = pin
            self.pinned_at.setdefault(where, []).append((words[0].loc, pin))
            return
        built = wheel_steps.from_command(
            words,
            runner=self.runner(where, site),
            env=env,
            installed=self.pins.get(where),
            directory=directory,
        )
        if built is not None:
            self.steps.setdefault(where, []).append(_Built(built, blind))

    def _told(
        self,
        where: tuple[Any, ...],
        site: Site,
        at: tuple[Step, Scope, Workflow | None],
        command: Command,
    ) -> None:
        """A command the shell reader told of: a build, a pin, a copy or move of wheels."""
        step, scope, workflow = at
        loc, argv, variables, folder, maybe = command
        here, why = _here(self._directory(step, scope), folder)
        if argv[0] in ("cp", "mv"):
            if here is not None and not maybe:  # a copy that may not run: not followed
                self._move(where, argv, here)
            return
        env = self._env(site, step, scope, workflow, (variables, loc))
        head = argv[0]
        tool = next((t for t in REPORTED_TOOLS if t in shown(head)), None)
        if not isinstance(head, str) and tool is not None:  # a statement not read
            missing = unknowns(head)
            unread = Unresolved(loc, shown(head), missing[0].reason if missing else "")
            built = BuildStep(tool=tool, loc=loc, version=None, runner=self.runner(where, site))
            self.steps.setdefault(where, []).append(_Built(built, unread))
            return
        words = [_word(value, loc) for value in argv]
        blind = None if why is None else Unresolved(loc, shown(head), why)
        self._command(where, site, words, env, here or self._directory(step, scope), blind)

    def identifiers(
        self,
        where: tuple[Any, ...],
        site: Site,
        at: tuple[Step, Scope, Workflow | None],
        command: Command,
    ) -> Value:
        """What ``cibuildwheel --print-build-identifiers`` (``command``, as the shell
        reader told it) prints: computed from the pin, the runner, the ``CIBW_*``
        variables, the command line and the project, as a build of the step would be;
        else unknown, saying why."""
        step, scope, workflow = at
        loc, argv, variables, folder, _maybe = command
        shown_as = "cibuildwheel --print-build-identifiers"
        here, why = _here(self._directory(step, scope), folder)
        missing = [u for a in argv for u in unknowns(a)]
        if here is None or missing or not all(isinstance(a, str) for a in argv):
            reason = why or (missing[0].reason if missing else "its words are not known")
            return ghexpr.Unknown(shown_as, reason)
        env = self._env(site, step, scope, workflow, (variables, loc))
        begins = site.doc.loc(step.path)
        before = [  # installed by an earlier step, or earlier in the same script
            pin
            for at, pin in self.pinned_at.get(where, ())
            if at.file in (begins.file, loc.file)
            and at.line < (loc.line if at.file == loc.file else begins.line)
        ]
        built = wheel_steps.from_command(
            [_word(value, loc) for value in argv],
            runner=self.runner(where, site),
            env=env,
            installed=before[-1] if before else None,
            directory=here,
        )
        if built is None:
            return ghexpr.Unknown(shown_as, "the command is not read as cibuildwheel's")
        from stagegate.ci.wheels import cibw

        text, how = cibw.printed(built, self.text)
        if text is None:
            return ghexpr.Unknown(shown_as, f"{how.reason} ({how.loc.file}:{how.loc.line})")
        return text

    def _move(self, where: tuple[Any, ...], argv: tuple[Value, ...], here: str) -> None:
        """``cp``/``mv`` of every wheel of a build's folder, read exactly: the folder
        they are then in too (cp), or instead (mv)."""
        found = _copy(argv)
        if found is None:
            return
        sources, dest = found
        target = folders.folder(here, dest)
        for built in self.steps.get(where, ()):
            places = built.folders()
            if places is None:
                continue
            moved = {
                folders.folder(here, folder)
                for folder, name in sources
                if folders.folder(here, folder) in places and self._all(built, name)
            }
            if moved:
                gone = moved if argv[0] == "mv" else set()
                built.places = tuple(dict.fromkeys([*(p for p in places if p not in gone), target]))

    def _all(self, built: _Built, name: str) -> bool:
        """Whether the file glob ``name`` (after the folder) takes every wheel of a build:
        ``*``, ``*.whl``, or the project's name as its wheels begin and ``*`` (``orjson*.whl``)."""
        if name in ("*", "*.whl"):
            return True
        lead, star, rest = name.partition("*")
        if not star or rest not in ("", ".whl") or set("*?[") & set(lead) or not lead:
            return False
        from stagegate.ci import wheels

        begins = wheels.file_names(built.step, self.text)
        return begins is not None and all(b.startswith(lead) for b in begins)

    # -- what an upload carries

    def carried(self, where: tuple[Any, ...], path: str) -> tuple[Wheels, ...]:
        """The wheels of the build steps before an upload of ``path`` in the context
        ``where`` whose wheels' folder it takes, each step's identifiers computed once."""
        out = []
        for built in self.steps.get(where, ()):
            if folders.takes(path, built.folders()):
                if built.wheels is None:
                    built.wheels = self._shipped(built)
                out.append(built.wheels)
        return tuple(out)

    def _shipped(self, built: _Built) -> Wheels:
        if built.blind is not None:
            return Wheels(
                tool=built.step.tool, step=built.step.loc, deciders={}, identifiers=None,
                unresolved=built.blind,
            )  # fmt: skip
        from stagegate.ci import wheels

        return wheels.shipped(built.step, self.text, tool=self.tool)

    # -- helpers

    def _directory(self, step: Step, scope: Scope) -> str:
        if step.working_directory is None:
            return ""
        value = scope.evaluate(step.working_directory, step.at("working-directory"))
        return value if isinstance(value, str) else ""

    def _env(
        self,
        site: Site,
        step: Step,
        scope: Scope,
        workflow: Workflow | None,
        script: tuple[tuple[tuple[str, Value | None, bool], ...], Loc] | None = None,
    ) -> dict[str, Setting]:
        """Every ``CIBW_*`` variable and ``CARGO_TARGET_DIR`` the step sees, where the
        nearest layer sets it; ``script``: the variables a script set before the command
        (exported, or inherited from the env), at the command's line."""
        doc = site.doc
        step_env = step.env if isinstance(step.env, dict) else {}
        names = {str(k) for layer in scope.env.layers for k in layer} | {str(k) for k in step_env}
        job = workflow.jobs.get(site.job.partition("#")[2]) if workflow is not None else None
        job_env = job.env if job is not None and isinstance(job.env, dict) else {}
        out: dict[str, Setting] = {}
        for name in sorted(n for n in names if _decides(n)):
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
        variables, at = script if script is not None else ((), doc.loc(step.path))
        for name, value, exported in variables:
            if _decides(name) and (exported or name in names):  # inherited: exported
                if value is None:  # unset
                    out.pop(name, None)
                else:
                    label = f"{name} (set by the script before this command)"
                    out[name] = Setting.of(label, text_value(value), at)
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


_MOVES = re.compile(r"(?:^|[\s;&|(])(?:cp|mv)\s")
_DECIDING = frozenset({"CARGO_TARGET_DIR"})
"""The variables besides ``CIBW_*`` that decide where or what a build writes."""


def _decides(name: str) -> bool:
    return name.startswith("CIBW_") or name in _DECIDING


def _word(value: Value, loc: Loc) -> Word:
    """A word of a command as the shell reader expanded it."""
    if isinstance(value, str) and not isinstance(value, Marker):
        return Word(text=str(value), loc=loc)
    missing = unknowns(value)
    why = missing[0].reason if missing else "a value of the run stagegate does not name"
    lead = value.parts[0] if isinstance(value, ghexpr.Sym) and value.parts else None
    option = lead.partition("=")[0] if isinstance(lead, str) and "=" in lead else ""
    return Word(
        text=None,
        loc=loc,
        why=f"{shown(value)} is not known: {why}",
        option=option if option.startswith("-") else "",
    )


def _here(directory: str, folder: Value | None) -> tuple[str | None, str | None]:
    """The folder (from the repository root) a command runs in, after the script's ``cd``
    (``folder``: None, none; from the step's folder; absolute): None and why where it is
    not known, or outside the repository."""
    if folder is None:
        return directory, None
    if not isinstance(folder, str):
        missing = unknowns(folder)
        why = missing[0].reason if missing else "not known"
        why = why.split("; bind env.")[0].replace(f"${CWD}", "the folder it runs in")
        return (
            None,
            f"the folder it runs in is not known ({why}): where its project is, is not known",
        )
    here = folders.folder(directory, folder)
    if here.startswith(("/", "../")) or here == "..":
        return None, f"it runs in {folder}, outside the repository: its project is not read"
    return here, None


def _copy(argv: tuple[Value, ...]) -> tuple[list[tuple[str, str]], str] | None:
    """``cp``/``mv`` [options] SOURCE... DEST, every word known: each source as (folder,
    file glob) and the destination folder; None where it is not read exactly (an option
    stagegate does not know, a destination that is a file or a pattern)."""
    if not all(isinstance(a, str) and not isinstance(a, Marker) for a in argv):
        return None
    if any(set("*?[") & set(a) and not isinstance(a, Glob) for a in argv):
        return None  # a quoted pattern names one file of that name
    flags = "fvpnuaRr" if argv[0] == "cp" else "fvnu"
    paths: list[str] = []
    dest: str | None = None
    words = [str(a) for a in argv[1:]]
    while words:
        word = words.pop(0)
        if word == "--":
            paths += words
            break
        if word in ("-t", "--target-directory") and words:
            dest = words.pop(0)
        elif word.startswith("--target-directory="):
            dest = word.partition("=")[2]
        elif word.startswith("--") and word[2:] in ("force", "verbose", "recursive", "no-clobber"):
            continue
        elif word.startswith("-") and len(word) > 1:
            if not set(word[1:]) <= set(flags):
                return None
        else:
            paths.append(word)
    if dest is None and len(paths) >= 2:
        dest = paths.pop()
    if dest is None or not paths or set("*?[") & set(dest) or dest.endswith(".whl"):
        return None
    sources = [posixpath.split(p) for p in paths]
    return [(folder or ".", name) for folder, name in sources if name], dest


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
