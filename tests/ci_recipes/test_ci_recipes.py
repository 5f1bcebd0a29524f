"""The CI integration a user copies: the workflow, the composite action, the hooks, the docs."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from conftest import REPO, action_script, load_yaml, run_action_step, schema_check
from stagegate.cli import cli

WORKFLOW = REPO / "docs" / "examples" / "stagegate.yml"
ACTION = REPO / "action.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"
FLAGS_WORKFLOW = REPO / "docs" / "examples" / "flags.yml"
CONTINUITY_WORKFLOW = REPO / "docs" / "examples" / "continuity.yml"
SHOWN = [
    # each workflow docs/ci.md shows: its section, and an edit its schema refuses
    (WORKFLOW, "## The workflow", ("runs-on:", "run-on:")),
    (FLAGS_WORKFLOW, "## Reading flags in CI", ("strategy:", "stratgy:")),
    (CONTINUITY_WORKFLOW, "## What ships, on every pull request", ("runs-on:", "run-on:")),
]
SHOWN_IDS = ["workflow", "flags-workflow", "continuity-workflow"]


@pytest.mark.parametrize(
    ("builtin", "path"),
    [
        ("vendor.github-workflows", WORKFLOW),
        ("vendor.github-actions", ACTION),
        ("vendor.github-workflows", FLAGS_WORKFLOW),
        ("vendor.github-workflows", CONTINUITY_WORKFLOW),
    ],
    ids=["workflow", "action", "flags-workflow", "continuity-workflow"],
)
def test_valid_under_the_vendored_schema(builtin: str, path: Path) -> None:
    proc = schema_check(builtin, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok -- validation done" in proc.stdout


@pytest.mark.parametrize(("path", "heading", "edit"), SHOWN[:2], ids=SHOWN_IDS[:2])
def test_the_schema_check_does_catch_a_broken_workflow(
    tmp_path: Path, path: Path, heading: str, edit: tuple[str, str]
) -> None:
    broken = tmp_path / "broken.yml"
    text = path.read_text()
    assert edit[0] in text
    broken.write_text(text.replace(*edit, 1))
    assert schema_check("vendor.github-workflows", broken).returncode == 1


@pytest.mark.parametrize(("path", "heading", "edit"), SHOWN, ids=SHOWN_IDS)
def test_docs_ci_shows_the_workflow_file_byte_for_byte(
    path: Path, heading: str, edit: tuple[str, str]
) -> None:
    doc = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    section = doc.split(heading, 1)[1]
    shown = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert shown is not None
    assert shown.group(1) == path.read_text(encoding="utf-8")


def test_the_workflow_covers_every_event_it_promises() -> None:
    workflow = load_yaml(WORKFLOW)
    events = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(events) == {"pull_request", "merge_group", "push"}
    assert events["push"]["branches"] == ["main"]
    jobs = workflow["jobs"]
    commands = [
        step.get("with", {}).get("command", "") for job in jobs.values() for step in job["steps"]
    ]
    assert "validate" in commands and "check" in commands and "check --all" in commands
    verify = jobs["verify-pr"]
    assert "merge_group" in verify["if"] and "pull_request" in verify["if"]
    assert verify["steps"][0]["with"]["fetch-depth"] == 0
    gate = verify["steps"][-1]
    assert gate["with"]["command"].startswith("verify-pr --base ${{ github.event.pull_request")
    assert "github.event.merge_group.base_sha" in gate["with"]["command"]
    assert "migration.yaml stages/" in verify["steps"][1]["run"]
    check_all = next(s for s in jobs["check"]["steps"] if s.get("name") == "Check every stage")
    assert check_all["if"] == "github.event_name == 'push'"


@pytest.mark.parametrize(
    ("command", "fmt", "expected"),
    [
        (
            "verify-pr --base 0123abc",
            "github",
            "-f m.yaml verify-pr --base 0123abc --format github",
        ),
        ("check --all", "github", "-f m.yaml check --all --format github"),
        ("check --format json", "github", "-f m.yaml check --format json"),
        ("log", "github", "-f m.yaml log"),
        ("graph --stage 2", "github", "-f m.yaml graph --stage 2"),
        ("validate", "", "-f m.yaml validate"),
        # the commands CI reads flags with (docs/ci.md, "Reading flags in CI")
        ("flags", "github", "-f m.yaml flags --format github"),
        ("flags --stage 3", "github", "-f m.yaml flags --stage 3 --format github"),
        ("matrix bindings-cu12", "github", "-f m.yaml matrix bindings-cu12 --format github"),
        ("flag local-cu12-bindings", "github", "-f m.yaml flag local-cu12-bindings"),
        ("flags --format=env", "github", "-f m.yaml flags --format=env"),
    ],
)
def test_the_action_runs_the_command_it_is_given(
    tmp_path: Path, command: str, fmt: str, expected: str
) -> None:
    fake = tmp_path / "bin" / "stagegate"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    env = {
        "STAGEGATE_COMMAND": command,
        "STAGEGATE_OUTPUT_FORMAT": fmt,
        "STAGEGATE_MIGRATION": "m.yaml",
    }
    proc = run_action_step(tmp_path, fake.parent, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected


def test_the_action_installs_stagegate_from_its_own_folder() -> None:
    action = load_yaml(ACTION)
    assert action["runs"]["using"] == "composite"
    assert action["inputs"]["command"]["required"] is True
    assert action["inputs"]["format"]["default"] == "github"
    install = next(s for s in action["runs"]["steps"] if s.get("name") == "Install stagegate")
    assert 'pip install --disable-pip-version-check --quiet "$GITHUB_ACTION_PATH"' in install["run"]
    assert "${{" not in action_script()  # inputs reach the shell only through env


def test_pre_commit_hooks_name_commands_that_exist() -> None:
    hooks = load_yaml(HOOKS)
    assert [h["id"] for h in hooks] == ["stagegate-validate", "stagegate-check"]
    for hook in hooks:
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python"
        program, command = hook["entry"].split()
        assert program == "stagegate"
        assert command in cli.commands
        pattern = re.compile(hook["files"])
        assert pattern.search("migration.yaml")
        assert pattern.search("stages/01-version-config-foundations.yaml")
        assert not pattern.search("src/stagegate/cli.py")
    # a workflow edit can break `check` (its workflows and flags-wired checks read them)
    check = re.compile(hooks[1]["files"])
    assert check.search(".github/workflows/ci.yml")
    assert check.search(".github/actions/build/action.yml")


@pytest.mark.parametrize("name", ["advance", "rollback", "verify-pr", "log"])
def test_docs_flip_describes_every_option(name: str) -> None:
    doc = (REPO / "docs" / "flip.md").read_text(encoding="utf-8")
    assert f"## {name}\n" in doc
    command = cli.commands[name]
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            for flag in param.opts:
                if flag.startswith("--") and flag != "--help":
                    assert f"`{flag}" in doc, f"{name} {flag} is not documented in docs/flip.md"


RELEASE = REPO / ".github" / "workflows" / "release.yml"


def test_the_release_workflow_builds_once_and_publishes_with_trusted_publishing() -> None:
    """stagegate's own release: valid, on a version tag, sdist and wheel built in one job
    and published from another that alone may ask for an OIDC token (no PyPI secret)."""
    proc = schema_check("vendor.github-workflows", RELEASE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    workflow = load_yaml(RELEASE)
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads `on` as true
    assert workflow["permissions"] == {"contents": "read"}
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    assert "python -m build" in "\n".join(s.get("run", "") for s in build["steps"])
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1] == {"uses": "pypa/gh-action-pypi-publish@release/v1"}
    assert "secrets." not in RELEASE.read_text(encoding="utf-8")
    upload = next(s for s in build["steps"] if s.get("uses") == "actions/upload-artifact@v4")
    download = publish["steps"][0]
    assert download["uses"] == "actions/download-artifact@v4"
    assert download["with"]["name"] == upload["with"]["name"]


def test_the_readme_wheel_is_the_one_pip_builds() -> None:
    """README's install from a built wheel names the file `pip wheel` makes of this version."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wheel = f"dist/{project['name'].replace('-', '_')}-{project['version']}-py3-none-any.whl"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"pip install {wheel}" in readme
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
