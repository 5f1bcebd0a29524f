"""The flags workflow of docs/ci.md and the action's outputs, checked offline."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, load_yaml, run_action_step
from stagegate.validation import load

FLAGS_WORKFLOW = REPO / "docs" / "examples" / "flags.yml"
ACTION = REPO / "action.yml"


# the flags workflow's schema validity and its copy in docs/ci.md: tests/ci_recipes/test_ci_recipes.py (SHOWN)


def _expressions(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [e for v in value.values() for e in _expressions(v)]
    if isinstance(value, list):
        return [e for v in value for e in _expressions(v)]
    return [value] if isinstance(value, str) else []


def test_the_flags_workflow_reads_the_flags_from_a_gate_job() -> None:
    workflow = load_yaml(FLAGS_WORKFLOW)
    jobs = workflow["jobs"]
    gate = jobs["gate"]
    steps = {step.get("id"): step for step in gate["steps"]}
    assert steps["flags"]["with"]["command"] == "flags"
    assert "format" not in steps["flags"]["with"]  # the action's default: github
    matrix_step = steps["cu12"]
    assert matrix_step["with"]["command"].split()[0] == "matrix"
    assert gate["outputs"] == {
        "stage": "${{ steps.flags.outputs.stage }}",
        "flags": "${{ steps.flags.outputs.flags }}",
        "active": "${{ steps.flags.outputs.active }}",
        "matrix": "${{ steps.cu12.outputs.matrix }}",
    }
    build = jobs["build-cu12"]
    assert build["strategy"]["matrix"] == "${{ fromJSON(needs.gate.outputs.matrix) }}"
    assert build["if"].startswith("contains(fromJSON(needs.gate.outputs.active).producers, ")
    gated = [
        job for job in jobs.values() if "fromJSON(needs.gate.outputs.flags)[" in job.get("if", "")
    ]
    assert len(gated) >= 2
    for job in jobs.values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), "values reach scripts through env:"


def test_every_flag_producer_and_matrix_axis_it_reads_exists_in_the_example() -> None:
    migration = load(REPO / "migration.yaml")
    text = FLAGS_WORKFLOW.read_text(encoding="utf-8")
    flags = re.findall(r"fromJSON\(needs\.gate\.outputs\.flags\)\['([^']+)'\]", text)
    assert flags and set(flags) <= set(migration.flags)
    producers = re.findall(r"\.producers, '([^']+)'\)", text)
    matrix = re.findall(r"command: matrix (\S+)", text)
    assert producers == matrix  # the job is gated on the producer its matrix builds
    assert set(producers) <= set(migration.producers)
    axes = set(re.findall(r"matrix\.([a-z_]+)", text)) - {"py", "platform"}
    assert not axes
    producer = migration.producers[matrix[0]]
    named = {p.axis for t in producer.artifacts for p in t.parts if not isinstance(p, str)}
    assert {"py", "platform"} <= named


def test_the_action_exposes_the_outputs_of_its_stagegate_step() -> None:
    action = load_yaml(ACTION)
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "stagegate")
    assert step["run"].rstrip().endswith('stagegate -f "$STAGEGATE_MIGRATION" "${args[@]}"')
    assert {name: output["value"] for name, output in action["outputs"].items()} == {
        name: f"${{{{ steps.stagegate.outputs.{name} }}}}"
        for name in ("stage", "flags", "active", "matrix")
    }
    assert all(output["description"] for output in action["outputs"].values())


# the action running flags, flag and matrix with the fake stagegate: tests/ci_recipes/test_ci_recipes.py


def test_the_action_step_writes_the_outputs_the_workflow_reads(tmp_path: Path) -> None:
    """The action's script, with the real stagegate, on the example: what the runner gets."""
    work = tmp_path / "example"
    work.mkdir()
    shutil.copy(REPO / "migration.yaml", work)
    shutil.copytree(REPO / "stages", work / "stages")
    bin_dir = Path(sys.executable).parent  # the environment's own `stagegate` script
    if not (bin_dir / "stagegate").exists():
        pytest.skip("stagegate is not installed beside this Python")
    outputs = {}
    for command in ("flags", "matrix bindings-cu12 --stage 3"):
        output = tmp_path / "output"
        output.write_text("")
        env = {
            "STAGEGATE_COMMAND": command,
            "STAGEGATE_OUTPUT_FORMAT": "github",
            "STAGEGATE_MIGRATION": "migration.yaml",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_ENV": None,
            "GITHUB_STEP_SUMMARY": None,
        }
        proc = run_action_step(work, bin_dir, env)
        assert proc.returncode == 0, proc.stderr
        for line in output.read_text().splitlines():
            name, _, value = line.partition("=")
            outputs[name] = value
    assert set(load_yaml(ACTION)["outputs"]) <= set(outputs)
    assert outputs["stage"] == "0"
    assert outputs["local-cu12-bindings"] == "false"
    assert outputs["matrix"].startswith('{"include":[{"py":"310","platform":"linux-64"}')


@pytest.mark.parametrize("name", ["flags", "flag", "matrix"])
def test_docs_commands_describes_every_option(name: str) -> None:
    import click

    from stagegate.cli import cli

    doc = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    assert f"## {name}\n" in doc
    section = doc.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
    for param in cli.commands[name].params:
        if isinstance(param, click.Option) and param.opts[0] != "--help":
            assert param.opts[0] in section, f"{name} {param.opts[0]} is not in docs/commands.md"
            if isinstance(param.type, click.Choice):
                for choice in param.type.choices:
                    assert str(choice) in section
