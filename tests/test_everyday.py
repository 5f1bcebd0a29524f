"""Everyday use (#16): installs where users run it, finds its file, streams, reads right."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, Result

Sg = Callable[..., Result]


def _pyproject() -> Any:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_has_a_name_of_its_own_and_runs_every_check_kind() -> None:
    project = _pyproject()["project"]
    # `stagegate` on PyPI is someone else's scheduler; the command stays `stagegate`
    assert project["name"] == "stagegate-ci"
    assert project["scripts"] == {"stagegate": "stagegate.cli:main"}
    runtime = {re.split(r"[<>=!~ \[]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
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


# --------------------------------------------------------------------------- which file

SMALL = """\
version: 1
migration: demo
summary: Small.
stage: 0
flags:
  on:
    summary: A flag.
producers:
  p:
    summary: Makes x.
    artifacts: [x]
"""
STAGE = "stage: 1\ntitle: Turn it on\nset:\n  on: true\n"


def small(root: Path, where: str = "") -> Path:
    folder = root / where if where else root
    (folder / "stages").mkdir(parents=True)
    (folder / "migration.yaml").write_text(SMALL)
    (folder / "stages" / "01-on.yaml").write_text(STAGE)
    return folder / "migration.yaml"


VALID = "valid: 1 stage file, 1 flag, 1 producer, 0 consumers, 0 releases"


@pytest.mark.parametrize(
    "args",
    [
        ("-f", "ci/migration.yaml", "validate"),
        ("validate", "-f", "ci/migration.yaml"),
        ("validate", "--file", "ci/migration.yaml", "--format", "text"),
        ("validate", "--file=ci/migration.yaml"),
        ("status", "-f", "ci/migration.yaml"),
    ],
    ids=["before", "after", "after-long", "equals", "status"],
)
def test_file_option_before_or_after_the_command(
    tmp_path: Path, sg: Sg, args: tuple[str, ...]
) -> None:
    small(tmp_path, "ci")
    result = sg(*args, cwd=tmp_path)
    assert result.code == 0, result.output
    assert "ci/migration.yaml" in result.out or "demo: stage 0 of 1" in result.out


def test_pre_commit_args_name_the_file(tmp_path: Path, sg: Sg) -> None:
    """`args: [-f, ci/migration.yaml]` is appended to each hook's entry, after the command."""
    small(tmp_path, "ci")
    for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")):
        _program, *command = hook["entry"].split()
        result = sg(*command, "-f", "ci/migration.yaml", cwd=tmp_path)
        assert result.code == 0, (hook["id"], result.output)


def test_stagegate_file_names_the_file_and_f_wins(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    small(tmp_path, "ci")
    monkeypatch.setenv("STAGEGATE_FILE", "ci/migration.yaml")
    assert f"ci/migration.yaml: {VALID}" in sg("validate", cwd=tmp_path).out
    result = sg("validate", "-f", "nowhere.yaml", cwd=tmp_path)
    assert result.code == 2 and "nowhere.yaml: no such file" in result.err


def test_the_file_is_found_above_the_current_folder_up_to_the_repository_root(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    small(tmp_path, "repo")
    (tmp_path / "repo" / ".git").mkdir()
    deep = tmp_path / "repo" / "stages" / "deeper"
    deep.mkdir()
    result = sg("validate", cwd=deep)
    assert result.code == 0, result.output
    assert result.out.startswith(f"../../migration.yaml: {VALID}")
    assert "demo: stage 0 of 1" in sg("status", cwd=tmp_path / "repo" / "stages").out


def test_the_search_stops_at_the_repository_root(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration.yaml above the repository is another project's: never picked up."""
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    small(tmp_path)
    inner = tmp_path / "other-repo" / "src"
    inner.mkdir(parents=True)
    (tmp_path / "other-repo" / ".git").mkdir()
    result = sg("status", cwd=inner)
    assert result.code == 2
    assert (
        f"no migration.yaml in {inner} or in a folder above it inside its git repository"
        in result.err
    )
    assert "-f PATH or $STAGEGATE_FILE" in result.err


def test_outside_a_repository_only_the_current_folder_counts(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    small(tmp_path)
    assert sg("status", cwd=tmp_path).code == 0
    if not any((p / ".git").exists() for p in tmp_path.parents):
        assert sg("status", cwd=tmp_path / "stages").code == 2


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(sg: Sg, flag: str) -> None:
    from stagegate import __version__

    result = sg(flag)
    assert result.code == 0 and result.out == f"stagegate, version {__version__}\n"


def _complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    script = Path(sys.executable).with_name("stagegate")
    proc = subprocess.run(
        [str(script)],
        env={
            **os.environ,
            "_STAGEGATE_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
            **(env or {}),
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines()]


def test_shell_completion_works_as_documented() -> None:
    assert "validate" in _complete("stagegate val")
    assert {"--stage", "--all", "--format"} <= set(_complete("stagegate check --"))
    assert "--file" in _complete("stagegate --")
    assert _complete("stagegate check --format ") == ["text", "json", "github"]
    doc = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    assert 'eval "$(_STAGEGATE_COMPLETE=bash_source stagegate)"' in doc
    source = subprocess.run(
        [str(Path(sys.executable).with_name("stagegate"))],
        env={**os.environ, "_STAGEGATE_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert "_stagegate_completion" in source.stdout
