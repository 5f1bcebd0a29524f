"""Check kinds, one module each, found by name.

A check module in this package defines:

* ``KIND``: the name used in ``check:`` (e.g. ``"release-continuity"``);
* ``SUMMARY``: one line for ``stagegate schema`` and the docs;
* ``ARGS``: a JSON Schema ``properties`` mapping for its arguments, and
  ``REQUIRED``: the names among them that must be given;
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
from typing import Any


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
            found[kind] = module
    return dict(sorted(found.items()))


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
