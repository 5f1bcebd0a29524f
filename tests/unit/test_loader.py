"""The loader's edges: data flows one way, from the files to the model to what reads it.

``load/`` is handed the rules of the modules that read the model (``validation.RULES``)
instead of importing them; the check kinds use only public helpers of the modules
before them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "src" / "stagegate"


def _imports(path: Path) -> Iterator[tuple[str, str]]:
    """(module, name) of every import in ``path``, at any depth, relative ones resolved
    to dotted names below ``stagegate``."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            for alias in node.names:
                yield module, alias.name


def test_the_loader_imports_none_of_the_modules_that_read_the_model() -> None:
    readers = (
        "checks", "audit", "ci", "validation", "engine.match", "engine.resolve", "report",
        "commands",
    )
    found = [
        (module, name)
        for path in sorted((PACKAGE / "load").glob("*.py"))
        for module, name in _imports(path)
        for reader in readers
        if module == f"stagegate.{reader}"
        or module.startswith(f"stagegate.{reader}.")
        or (module == "stagegate" and name == reader)
    ]
    assert found == []


def test_the_check_kinds_import_no_private_name_of_another_module() -> None:
    found = [
        (path.name, module, name)
        for path in sorted((PACKAGE / "checks").glob("*.py"))
        for module, name in _imports(path)
        if module.startswith("stagegate.")
        and not module.startswith("stagegate.checks")
        and name.startswith("_")
    ]
    assert found == []


def test_the_checks_runner_lives_in_checks() -> None:
    assert not (PACKAGE / "acceptance.py").exists()
    assert (PACKAGE / "checks" / "runner.py").exists()
