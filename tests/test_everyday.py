"""Everyday use (#16): installs where users run it, finds its file, streams, reads right."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from conftest import REPO


def _pyproject() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_has_a_name_of_its_own_and_runs_every_check_kind() -> None:
    project = _pyproject()["project"]
    # `stagegate` on PyPI is someone else's scheduler; the command stays `stagegate`
    assert project["name"] == "stagegate-ci"
    assert project["scripts"] == {"stagegate": "stagegate.cli:main"}
    runtime = {re.split(r"[<>=!~ \[]", d, 1)[0].lower() for d in project["dependencies"]}
    assert {"pytest", "pytest-snapshot"} <= runtime


def test_no_hint_or_doc_installs_the_other_projects_name() -> None:
    files = [REPO / "README.md", REPO / "action.yml", REPO / ".pre-commit-hooks.yaml"]
    files += sorted((REPO / "docs").rglob("*.md")) + sorted((REPO / "src").rglob("*.py"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"pip install[^\n]*['\" ]stagegate(\[|['\" \n]|$)", text), path
        assert "stagegate[" not in text, path


def test_the_hooks_need_no_extra_dependencies() -> None:
    for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")):
        assert "additional_dependencies" not in hook, hook["id"]


def test_readme_first_commands_and_ci_run_the_same_suite() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert "stagegate status" in block[0] and "stagegate check" in block[0]
    assert block[0].startswith("python3 -m venv .venv && .venv/bin/pip install -q -e . ")
    assert block[1].endswith(".venv/bin/python -m pytest -q")
    assert block[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8")
