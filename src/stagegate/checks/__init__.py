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
  its arguments, run by ``stagegate validate``.

Adding a kind is adding a module: the schema, the loader and ``check`` find it here.
A module without ``KIND`` is not a kind: ``runner`` (which checks apply at a stage, and
running them) and the private helpers.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stagegate.errors import Problem
    from stagegate.model import Check, Migration

READS = ("model", "commands", "repository")
"""What a kind may declare in its ``READS``: ``model``, it looks at the migration and
nothing else (no file, process or clock); ``commands``, it runs the user's commands (a
model check to `check --all`: it must pass at every stage); ``repository``, it reads the
repository's files as they are today (`check --all` runs it at the current stage, shows it
as readiness at stages ahead and does not run it at past stages)."""

READS_OF = {
    "command": "commands",
    "flags-wired": "repository",
    "inputs-satisfied": "model",
    "pytest": "commands",
    "release-continuity": "model",
    "retired": "repository",
    "reuse-safe": "repository",
    "single-source": "model",
    "tags-routed": "model",
    "unique-artifacts": "model",
    "workflows": "repository",
}
"""Each kind's ``READS``, known without importing its module: ``status`` asks what the
next stage's checks read and must start fast. tests/checks/test_reads.py compares it
with the modules (a kind added without its line here fails there)."""


def repository_checks(migration: Migration, stage: int) -> list[Check]:
    """The checks of ``stage`` that read the repository's files (its readiness), found
    without importing a check module."""
    return [c for c in migration.checks_at(stage) if READS_OF.get(c.kind) == "repository"]


READS_MORE_THAN_FILES = {"pytest": "pytest_check"}
"""Kinds (and their modules) whose argument checks read more than the migration's files (links on disk): run
on every load, also of a migration the validation cache knows valid."""


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

    ``uncached_only``: only the kinds in ``READS_MORE_THAN_FILES``, each imported only
    when the migration has such a check, so that a cached load stays fast."""
    checks = (*migration.invariants, *(c for s in migration.stages for c in s.acceptance))
    registry: dict[str, ModuleType] = {}
    if not uncached_only:
        registry = kinds()
    elif wanted := {c.kind for c in checks} & set(READS_MORE_THAN_FILES):
        import importlib

        for kind in sorted(wanted):
            registry[kind] = importlib.import_module(f"{__name__}.{READS_MORE_THAN_FILES[kind]}")
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
