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
here (``declared()`` is derived from the modules, never written by hand).
A module without ``KIND`` is not a kind: ``runner`` (which checks apply at a stage, and
running them) and the private helpers.
"""

from __future__ import annotations

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
    load, and both must start fast. Derived from the modules (``kinds()``) once per
    stagegate (its modules' names, sizes and times, as the validation cache is keyed) and
    kept in the cache folder; a module added, changed or removed makes it derived afresh.
    Without a cache folder, it is the modules themselves."""
    from stagegate.load.cache import cache_directory, fingerprint, read_json, store_json
    from stagegate.load.digest import blake2b

    folder = cache_directory()
    if folder is None:
        return _declared()
    key = blake2b(f"{fingerprint()}\0{list(__path__)}".encode()).hexdigest()
    path = folder / "kinds" / f"{key}.json"
    stored = _restored(read_json(path))
    if stored is not None:
        return stored
    found = _declared()  # not stored yet, or not what this stagegate stores
    store_json(path, {kind: [d.module, d.reads, d.every_load] for kind, d in found.items()})
    return found


def _restored(stored: Any) -> dict[str, Declared] | None:
    """The declarations a cache file holds; None unless it holds exactly their shape."""
    if not isinstance(stored, dict):
        return None
    import os

    modules = {name for folder in __path__ for name in os.listdir(folder)}
    found: dict[str, Declared] = {}
    for kind, fields in stored.items():
        match fields:
            case [str(module), str(reads), bool(every_load)] if (
                f"{module}.py" in modules and reads in READS
            ):
                found[kind] = Declared(module, reads, every_load)
            case _:
                return None
    return found


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
