"""The records of the wheels a build step ships: the settings that decide them (each where
it is written), the step as the workflow reader hands it over, and the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from stagegate.ci.transfers import Unresolved
from stagegate.errors import Loc
from stagegate.model import ghexpr
from stagegate.records import field, record

CIBUILDWHEEL = "cibuildwheel"
MATURIN = "maturin"


@record(kw_only=True)
class Setting:
    """One value that decides which wheels a step builds, and where it is written.

    ``value`` is its text, or ``None`` where it cannot be read (``why`` says why: a
    matrix value not known, a script's output). ``name`` is what a user reads in a message
    ("CIBW_SKIP", "python_requires", "cibuildwheel version")."""

    name: str
    value: str | None
    loc: Loc
    why: str = ""
    partial: str = ""
    """Where ``value`` is None: its text with each piece that cannot be read as ``*``
    (``dist/*`` for ``dist/${{ steps.x.outputs.sdist }}``); "" where nothing is known."""

    @property
    def label(self) -> str:
        return f"{self.name} at {self.loc.at}"

    @staticmethod
    def of(name: str, value: ghexpr.Value, loc: Loc) -> Setting:
        """A setting from a value the workflow reader evaluated (text, a number, a
        boolean, or something it could not compute)."""
        if isinstance(value, bool):
            return Setting(name=name, value="true" if value else "false", loc=loc)
        if isinstance(value, str | int | float):
            return Setting(name=name, value=str(value), loc=loc)
        if value is None:
            return Setting(name=name, value="", loc=loc)
        unknown = ghexpr.unknowns(value)
        why = unknown[0].reason if unknown else "not a text value"
        partial = ""
        if isinstance(value, ghexpr.Sym):
            partial = "".join(p if isinstance(p, str) else "*" for p in value.parts)
        return Setting(name=name, value=None, loc=loc, why=why, partial=partial)


@record(kw_only=True)
class Word:
    """One word of a command line (``run:``), where it is written; ``None``: not known."""

    text: str | None
    loc: Loc
    why: str = ""
    option: str = ""
    """Where ``text`` is None, the option the word is known to give (``--interpreter`` of
    ``--interpreter="${PYTHON}"``): its value is what is not known."""


@record(kw_only=True)
class BuildStep:
    """A step that builds wheels, as the workflow reader sees it in one context (one
    matrix row of one job, in one caller).

    - ``tool``: ``cibuildwheel`` or ``maturin``;
    - ``loc``: the step (its ``uses:`` or the command's line);
    - ``version``: the tool's version as the workflow pins it (``uses: ...@v2.23.3``, a
      commit with a version comment, ``cibuildwheel==2.23.3``); ``None``: not pinned;
    - ``runner``: the job's ``runs-on`` label, evaluated;
    - ``env``: every ``CIBW_*`` (and other) variable the step sees, nearest layer winning
      (workflow, job, ``$GITHUB_ENV`` writes, step), each where it is set;
    - ``inputs``: the action's ``with:`` (``package-dir``, ``config-file``, ``only``;
      maturin-action's ``target``, ``manylinux``, ``args``, ``command``);
    - ``args``: the command's words after the tool's name (``run:`` steps);
    - ``directory``: the step's ``working-directory`` (relative to the repository root);
    - ``action``: a ``uses:`` step (the action decides its folders), not a command.
    """

    tool: str
    loc: Loc
    version: Setting | None
    runner: Setting
    env: Mapping[str, Setting] = field(default_factory=dict)
    inputs: Mapping[str, Setting] = field(default_factory=dict)
    args: tuple[Word, ...] = ()
    directory: str = ""
    action: bool = False


class Files(Protocol):
    """The repository's files at one commit: ``text(path)`` is a file's text, or
    ``None`` where there is no such file."""

    def text(self, path: str) -> str | None: ...


@record(kw_only=True)
class Wheels:
    """What one build step ships: its identifiers, or why they cannot be known.

    ``deciders`` are the settings that were read, by key (``env.CIBW_SKIP``,
    ``toml.skip``, ``requires-python``, ``version``, ``runner``, ...): comparing two
    commits, a change of identifiers is put down to the deciders whose values differ.
    ``how`` says what computed them (``cibuildwheel 3.1.4``: the installed tool; ``the
    table of cibuildwheel 3.1.4``; ``maturin``)."""

    tool: str
    step: Loc
    deciders: Mapping[str, Setting]
    identifiers: frozenset[str] | None
    unresolved: Unresolved | None = None
    how: str = ""
    project: str | None = None
    """The folder of the project built (from the repository root; None: not known): one
    identifier of one project is one wheel file, whichever step builds it."""
    naming: tuple[tuple[str, str], ...] = ()
    """The settings that reach the wheels' file names but not their identifiers (the
    manylinux and musllinux images or policies): another value, another file."""
    stopped: bool = False
    """The tool itself stops on the setting ``unresolved`` names (cibuildwheel refuses an
    enable group, an option or archs): the step builds nothing."""

    @property
    def resolved(self) -> bool:
        return self.identifiers is not None
