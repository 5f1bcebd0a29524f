"""Check kinds, one module each, found by name.

A check module in this package defines:

* ``KIND``: the name used in ``check:`` (e.g. ``"release-continuity"``);
* ``SUMMARY``: one line for ``stagegate schema`` and the docs;
* ``ARGS``: a JSON Schema ``properties`` mapping for its arguments, and
  ``REQUIRED``: the names among them that must be given;
* ``READS``: what it looks at, which decides where ``check --all`` holds it (SPEC
  "Checking main"): ``"model"`` (the migration only: no file, process or clock; must
  pass at every stage), ``"commands"`` (runs the user's commands, such as pytest: must
  pass at every stage) or ``"repository"`` (the repository's files as they are today:
  must pass at the current stage, is readiness at stages ahead, is not run at past ones);
* ``run(context, check) -> list[Result]``: the check itself;
* optionally ``validate(migration, check) -> list[Problem]``: meaning checks of
  its arguments, run by ``stagegate validate``, and ``VALIDATE_EVERY_LOAD = True`` when
  that reads more than the migration's files (where a link on disk leads): it then runs on
  every load, also of a migration the validation cache knows valid.

Adding a kind is adding a module: the schema, the loader, ``status`` and ``check`` find it
here (``declared()`` is read from the modules' source, never written by hand nor stored).
A module without ``KIND`` is not a kind: ``runner`` (which checks apply at a stage, and
running them) and the private helpers.
"""

from __future__ import annotations

import re
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from stagegate.records import record

if TYPE_CHECKING:
    from stagegate.errors import Problem
    from stagegate.model import Check, Migration

READS = ("model", "commands", "repository")
"""What a kind may declare in its ``READS``: ``model``, it looks at the migration and
nothing else (no file, process or clock); ``commands``, it runs the user's commands (a
model check to `check --all`: it must pass at every stage); ``repository``, it reads the
repository's files as they are today (`check --all` runs it at the current stage, shows it
as readiness at stages ahead and does not run it at past stages)."""


@record
class Declared:
    """What a kind's module declares that a command needs before it runs any check."""

    module: str
    """Its module's name in this package (``pytest_check`` for ``pytest``)."""
    reads: str
    """Its ``READS``."""
    every_load: bool
    """Its ``VALIDATE_EVERY_LOAD``: its ``validate`` reads more than the migration's files
    (where a link on disk leads), so it runs on every load, also of a migration the
    validation cache knows valid."""


@cache
def declared() -> dict[str, Declared]:
    """Each kind's declarations, known without importing the check modules: ``status``
    asks what the next stage's checks read, and a cached load which kinds validate on every
    load, and both must start fast. Read from the modules' source (``_scanned``), where a
    kind writes them as plain assignments of literals; where a module writes them any other
    way, from the modules themselves (imported). Never stored: what decides whether a check
    validates, or where ``check --all`` and ``status`` hold it, comes from stagegate's own
    modules, never from a file a user or a pull request could write (the cache folder)."""
    scanned = _scanned()
    return scanned if scanned is not None else _declared()


_NAMES = (b"KIND", b"READS", b"VALIDATE_EVERY_LOAD")
_DECLARATION = re.compile(
    rb'(?:(KIND|READS) = "([a-z0-9-]+)"|(VALIDATE_EVERY_LOAD) = (True|False))[ \t]*(?:#.*)?'
)


def _written(text: bytes) -> dict[str, str] | None:
    """The declarations a module's source writes at the start of a line, as plain
    literals; None where it names one of them at the start of a line in any other form, or
    twice. (Lines found with ``bytes.find``: a regular expression tried at every line of
    every module costs milliseconds at each start.)"""
    padded = b"\n" + text
    written: dict[str, str] = {}
    for name in _NAMES:
        at = padded.find(b"\n" + name)
        while at != -1:
            end = padded.find(b"\n", at + 1)
            line = padded[at + 1 : end if end != -1 else None].rstrip(b"\r")
            after = line[len(name) : len(name) + 1]
            if not (after.isalnum() or after == b"_"):  # not a longer name (READS_OF)
                found = _DECLARATION.fullmatch(line)
                if found is None or name.decode() in written:
                    return None
                written[name.decode()] = (found[2] or found[4]).decode()
            at = padded.find(b"\n" + name, at + 1)
    return written


def _scanned() -> dict[str, Declared] | None:
    """The declarations as each module's source writes them: ``KIND = "..."``, ``READS =
    "..."`` and ``VALIDATE_EVERY_LOAD = True`` at the start of a line. None (ask the
    modules) where a module names one of them in any other form, names one twice, or
    declares a ``KIND`` without a ``READS`` among ``READS``: the source is read only where it
    answers exactly (tests/checks/test_reads.py holds every module of the package to it)."""
    import os

    found: dict[str, Declared] = {}
    for folder in __path__:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return None
        for name in names:
            if not name.endswith(".py") or name.startswith("_"):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as handle:
                    written = _written(handle.read())
            except OSError:
                return None
            if written is None:
                return None  # written some other way: only an import can say
            if "KIND" not in written:
                continue  # not a kind (a helper)
            if written.get("READS") not in READS or written["KIND"] in found:
                return None
            found[written["KIND"]] = Declared(
                name.removesuffix(".py"),
                written["READS"],
                written.get("VALIDATE_EVERY_LOAD") == "True",
            )
    return dict(sorted(found.items()))


def _declared() -> dict[str, Declared]:
    return {
        kind: Declared(
            module.__name__.rpartition(".")[2],
            module.READS,
            getattr(module, "VALIDATE_EVERY_LOAD", False) is True,
        )
        for kind, module in kinds().items()
    }


def repository_checks(migration: Migration, stage: int) -> list[Check]:
    """The checks of ``stage`` that read the repository's files (its readiness), found
    without importing a check module."""
    reads = declared()
    return [
        c
        for c in migration.checks_at(stage)
        if c.kind in reads and reads[c.kind].reads == "repository"
    ]


@cache
def kinds() -> dict[str, ModuleType]:
    import importlib
    import pkgutil  # here: a cached load imports this package without listing its kinds

    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if isinstance(kind, str):
            if getattr(module, "READS", None) not in READS:
                raise TypeError(
                    f"check kind {kind!r} ({module.__name__}) declares no READS in {READS}"
                )
            found[kind] = module
    return dict(sorted(found.items()))


def reading(what: str) -> frozenset[str]:
    """The kinds whose ``READS`` is ``what``: ``reading("model")`` are the model-only
    kinds (computed ahead of their turn, run by verify-pr without a checkout),
    ``reading("repository")`` the kinds that read today's files."""
    return frozenset(
        kind for kind, found in kinds().items() if getattr(found, "READS", None) == what
    )


def argument_problems(migration: Migration, *, uncached_only: bool = False) -> list[Problem]:
    """What every check's kind finds wrong with its arguments (the kind's ``validate``).

    ``uncached_only``: only the kinds that validate on every load (``declared()``), each
    imported only when the migration has such a check, so that a cached load stays fast."""
    checks = (*migration.invariants, *(c for s in migration.stages for c in s.acceptance))
    registry: dict[str, ModuleType] = {}
    if not uncached_only:
        registry = kinds()
    else:
        import importlib

        every_load = {k for k, d in declared().items() if d.every_load}
        for kind in sorted({c.kind for c in checks} & every_load):
            registry[kind] = importlib.import_module(f"{__name__}.{declared()[kind].module}")
    found: list[Problem] = []
    for check in checks:
        validate = getattr(registry.get(check.kind), "validate", None)
        if validate is not None:
            found.extend(validate(migration, check))
    return found


def check_schema() -> dict[str, Any]:
    """The JSON Schema of one check: its kind, then that kind's arguments."""
    registry = kinds()
    branches = []
    for name, module in registry.items():
        properties = {"check": {"const": name}, **module.ARGS}
        branches.append(
            {
                "if": {"properties": {"check": {"const": name}}, "required": ["check"]},
                "then": {
                    "description": module.SUMMARY,
                    "properties": properties,
                    "required": ["check", *module.REQUIRED],
                    "additionalProperties": False,
                },
            }
        )
    return {
        "description": "An acceptance check: its kind in `check`, then its arguments.",
        "type": "object",
        "required": ["check"],
        "properties": {"check": {"enum": list(registry)}},
        "allOf": branches,
    }
