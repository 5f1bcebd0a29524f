"""What an expression in a step can see: ``env`` layers (step, job, workflow; nearest wins),
``matrix``, ``inputs``, ``needs`` and ``steps`` outputs, evaluated lazily.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from stagegate.ci import runkinds
from stagegate.ci.budget import Budget
from stagegate.ci.files import Files
from stagegate.ci.transfers import THIS_RUN, Site, Transfer
from stagegate.ci.wheels.runners import platform_of
from stagegate.errors import Loc
from stagegate.load.yamlsrc import Document
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Unknown, Value

# --------------------------------------------------------------------------- scopes


Command = tuple[
    Loc, tuple[Value, ...], tuple[tuple[str, Value | None, bool], ...], Value | None, bool
]
"""A command a script runs, as the shell reader tells of it (``Host.on_command``): where,
its words expanded, the variables the script set by then (name, value or None where
unset, whether exported; its prefix assignments last), the folder it runs in (None: the
step's; else from it, or absolute; unknown where a ``cd`` is not followed), and whether
it may not run in a run that gets that far (a condition not decided, a jump past it)."""


class Host(Protocol):
    """What scopes and the shell reader ask of the reading they belong to
    (``ci.workflows.Reader``): binds, what scripts wrote to ``$GITHUB_ENV``, where the
    reading stands, and where to put what they find."""

    files: Files
    current_job: str
    current_callers: tuple[str, ...]
    tag_matrix: bool
    generated: set[str]
    env_writers: dict[str, str]
    work: Budget
    """The work the reading's scripts may still use (``ci.budget``)."""
    kind: str | None
    """The run kind read for (``ci.runkinds``: what ``github.event_name`` and
    ``github.ref`` are then); None: any run."""
    bind_paths: frozenset[str]
    """The paths some bind names: ``bound`` of any other path without a space is
    NotImplemented wherever it is asked."""

    def bound(
        self, path: str, scope: Scope | None = None, *, scoped: bool = True, bare: bool = True
    ) -> Value: ...

    def interpolate(
        self, text: str, scope: Scope, doc: Document, path: DocPath, *, condition: bool
    ) -> Value: ...

    def note_unresolved(self, loc: Loc, value: Value) -> None: ...

    def note_run(self, loc: Loc, value: Value) -> None:
        """An unknown id of the other run a download reads (noted as unresolved too)."""

    def add(self, transfer: Transfer) -> None: ...

    def stopped(self, site: Site, loc: Loc, message: str) -> None:
        """A command of a script of ``site``'s job stops with an error (``message``) at
        ``loc``: the step fails, and with it the job."""

    def on_files(
        self, site: Site, loc: Loc, words: list[Value], fetch: Transfer | None, cwd: Value = "."
    ) -> None:
        """A script's ``gh run download`` (``fetch``; ``words``: its ``-D`` folder, and
        ``"1"`` where each artifact gets its own folder) or ``mv``/``cp``/``find`` (its words),
        run where the script is (``cwd``, from the step's folder: ``cd``)."""

    def on_command(self, site: Site, command: Command) -> None:
        """A command of a script (``ci.shell.commands.reported``), its words expanded."""

    def wants_script(self, site: Site, text: str) -> bool:
        """Whether a script no transfer makes worth reading is read for ``on_command``."""

    def identifiers(self, command: Command) -> Value:
        """What ``cibuildwheel --print-build-identifiers`` prints in the step being read
        (``command`` as ``on_command`` is told of it)."""


_RUNNER_OS = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}
_RUNNER_ARCH = {
    "x86_64": "X64",
    "AMD64": "X64",
    "aarch64": "ARM64",
    "arm64": "ARM64",
    "ARM64": "ARM64",
}


def runner_context(label: str, key: str) -> str | None:
    """``runner.os`` or ``runner.arch`` (``key``) on the GitHub-hosted runner ``label``
    (``ci.wheels.runners``), as GitHub sets them; None for a label stagegate does not know
    (a self-hosted or custom runner is not guessed)."""
    found = platform_of(label)
    if isinstance(found, str):
        return None
    platform, arch = found
    return _RUNNER_OS[platform] if key == "os" else _RUNNER_ARCH[arch]


class Env:
    """Environment layers: workflow, job, `$GITHUB_ENV` writes, step; nearest wins."""

    def __init__(self, layers: Sequence[Mapping[str, Any]]) -> None:
        self.layers = list(layers)

    def get(self, name: str) -> Any:
        for layer in reversed(self.layers):
            if name in layer:
                return layer[name]
        return NotImplemented

    def child(self, layer: Mapping[str, Any]) -> Env:
        return Env([*self.layers, layer])


class Lazy:
    """An env entry evaluated on first use, in the scope that declares it."""

    __slots__ = ("done", "evaluate", "value")

    def __init__(self, evaluate: Any) -> None:
        self.evaluate = evaluate
        self.done = False
        self.value: Value = None

    def get(self) -> Value:
        if not self.done:
            self.done = True
            self.value = Unknown("env", "an env value that refers to itself")
            self.value = self.evaluate()
        return self.value


class Scope:
    """What a value's expressions can see, where it is written."""

    def __init__(
        self,
        reader: Host,
        doc: Document,
        *,
        matrix: Value = None,
        inputs: Mapping[str, Value] | Unknown | None = None,
        env: Env | None = None,
        steps: Mapping[str, Mapping[str, Value]] | None = None,
        needs: Mapping[str, Any] | None = None,
        in_action: bool = False,
        strategy: tuple[int, int] | None = None,
        runner: Value = None,
    ) -> None:
        self.reader = reader
        self.doc = doc
        self.matrix = matrix
        self.inputs = inputs
        self.env = env or Env([])
        self.steps = steps if steps is not None else {}
        self.needs = needs if needs is not None else {}
        self.in_action = in_action
        self.job = reader.current_job
        self.callers = reader.current_callers
        self.strategy = strategy
        """``strategy.job-index`` and ``job-total`` of the job's matrix row, where known."""
        self.runner = runner
        """The job's ``runs-on`` label in this row (None where not one known label)."""

    def with_env(self, env: Env) -> Scope:
        return Scope(
            self.reader,
            self.doc,
            matrix=self.matrix,
            inputs=self.inputs,
            env=env,
            steps=self.steps,
            needs=self.needs,
            in_action=self.in_action,
            strategy=self.strategy,
            runner=self.runner,
        )

    # -- look-ups

    def lookup(self, path: str) -> Value:
        bound = self.reader.bound(path, self)
        if bound is not NotImplemented:
            return bound
        head, _, rest = path.partition(".")
        head = head.lower()
        if head == "matrix":
            return self._matrix(path, rest)
        if head == "env":
            if not rest:
                return NotImplemented
            found = self.env_value(rest)
            return (
                found
                if found is not NotImplemented
                else Unknown(
                    path,
                    f"{path} is set in no env: of the step, job or workflow (a script stagegate "
                    f"does not read may write it to $GITHUB_ENV); bind {path}",
                )
                if not self.reader.env_writers.get(rest)
                else Unknown(path, self.reader.env_writers[rest])
            )
        if head == "inputs":
            if not rest:
                return NotImplemented
            if isinstance(self.inputs, Unknown):
                return Unknown(path, self.inputs.reason)
            if self.inputs is None:
                return Unknown(path, f"{path}: no workflow read here calls this one; bind it")
            for name, value in self.inputs.items():
                if name.lower() == rest.split(".")[0].lower():
                    return value if "." not in rest else NotImplemented
            return None if "." not in rest else NotImplemented
        if head == "github":
            name = rest.lower()
            if self.reader.kind is not None:
                known = runkinds.github_value(self.reader.kind, path)
                if known is not NotImplemented:
                    return known
            if name == "run_id":
                return THIS_RUN
            if name == "workspace":
                return "."
            if name == "job" and self.job and not self.callers:
                return self.job.partition("#")[2]  # the job's id (GITHUB_JOB)
            return Unknown(path, f"{path} depends on the event; bind it if a name uses it")
        if head == "steps":
            return self._steps(path, rest)
        if head == "needs":
            return self._needs(path, rest)
        if head == "strategy" and self.strategy is not None and not self.in_action:
            which = rest.lower()
            if which in ("job-index", "job-total"):
                return self.strategy[0 if which == "job-index" else 1]
        if head == "runner" and rest.lower() in ("os", "arch") and isinstance(self.runner, str):
            known = runner_context(self.runner, rest.lower())
            if known is not None:
                return known
        if head in ("secrets", "vars", "runner", "job", "strategy", "jobs", "hashfiles"):
            return Unknown(path, f"{path} is not known from the YAML; bind it if a name uses it")
        return NotImplemented

    def env_value(self, name: str) -> Value:
        found = self.env.get(name)
        if isinstance(found, Lazy):
            return found.get()
        return found

    def _matrix(self, path: str, rest: str) -> Value:
        if self.in_action:
            return Unknown(
                path, "matrix is not available in a composite action; pass it as an input"
            )
        if isinstance(self.matrix, Unknown):
            if rest:
                self.reader.generated.add(rest)
            return Unknown(path, self.matrix.reason)
        if self.matrix is None:
            return Unknown(path, f"{path}: the job has no strategy.matrix")
        if not rest:
            return self.matrix
        value: Any = self.matrix
        for key in rest.split("."):
            if not isinstance(value, dict):
                return None
            value = next((v for k, v in value.items() if k.lower() == key.lower()), None)
        if self.reader.tag_matrix and value is not None and not isinstance(value, dict | list):
            return ghexpr.Tagged(ghexpr.to_text(value), rest)
        return value

    def _steps(self, path: str, rest: str) -> Value:
        step, _, tail = rest.partition(".")
        outputs = self.steps.get(step)
        if outputs is not None and tail.lower().startswith("outputs."):
            name = tail[len("outputs.") :]
            if name in outputs:
                return outputs[name]
        return Unknown(path, f"{path}: a step's output is not known from the YAML; bind it")

    def _needs(self, path: str, rest: str) -> Value:
        job, _, tail = rest.partition(".")
        if not tail.lower().startswith("outputs."):
            return Unknown(path, f"{path} is not known from the YAML")
        name = tail[len("outputs.") :]
        outputs = self.needs.get(job)
        if outputs is None:
            return Unknown(path, f"{path}: job {job} is not in this job's needs, or not known")
        value = outputs(name)
        return value

    # -- evaluation

    def evaluate(self, text: Any, path: DocPath, *, condition: bool = False) -> Value:
        """The value of ``text`` (a YAML value) with its ``${{ }}`` expressions evaluated."""
        if not isinstance(text, str):
            return text
        return self.reader.interpolate(text, self, self.doc, path, condition=condition)
