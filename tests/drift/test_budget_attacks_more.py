"""Issue 37's attacks 5 and 8, more ways: constructs the first round did not try.

A few hundred bytes of script that nest parameter expansions (``${A:-${A:-...}}``) ended
in RecursionError (exit 70) in drift, continuity and verify-pr; a ``printf`` with a width
of a hundred million characters built a 100 MB string (the reading at 215 MB), and one of
twenty digits ended in ValueError (exit 70). Each is now read within the budget: the
value is unknown at its line, and the same construct small is computed (the control)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import WHEELS_RELEASE, init, pin_git, write_small

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: budget
stage: 0
producers:
  wheel:
    artifacts: ["ab"]
"""
UPLOAD = "      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{ env.A }}\n"
FIRST = 7
"""The workflow line of a script's first line (``steps:`` then ``- run: |``)."""
NESTED = "shell constructs nested more than 40 deep"


def run(script: str) -> str:
    """A step running ``script``, then an upload named by what it wrote."""
    return (
        "      - run: |\n" + "".join(f"          {line}\n" for line in script.split("\n")) + UPLOAD
    )


def params(depth: int, op: str = ":-") -> str:
    """``X=${Y:-${Y:-...ab}}``, ``depth`` deep (``:+`` with Y set takes the inner word)."""
    inner = "Y=1\n" if op == ":+" else ""
    return run(
        inner + "X=" + f"${{Y{op}" * depth + "ab" + "}" * depth + '\necho "A=$X" >> "$GITHUB_ENV"'
    )


def printf(form: str, arg: str = "1") -> str:
    return run(f'X=$(printf "{form}" {arg})\necho "A=$X" >> "$GITHUB_ENV"')


def workflow(root: Path, steps: str) -> None:
    (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / "migration.yaml").write_text(MODEL, encoding="utf-8")
    (root / ".github" / "workflows" / "w.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n" + steps
    )


def drift(sg: Sg, root: Path) -> tuple[dict[str, list[dict[str, object]]], int]:
    """drift's JSON and the peak of the memory it allocated."""
    tracemalloc.start()
    try:
        result = sg("drift", "--format", "json", cwd=root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.code in (0, 1), result.output
    return json.loads(result.out), peak


ATTACKS = {
    # name: (steps, the control's steps, the control's upload name)
    "nested-default": (params(300), params(5), "ab"),
    "nested-alternative": (params(300, ":+"), params(5, ":+"), "ab"),
    "printf-width": (printf("%100000000s", "ab"), printf("%4s", "ab"), "  ab"),
    "printf-precision": (printf("%.100000000d"), printf("%.3d"), "001"),
    "printf-width-digits": (printf("%" + "9" * 20 + "s", "ab"), printf("%-3s|", "ab"), "ab |"),
}


@pytest.mark.parametrize("name", ["nested-default", "nested-alternative"])
def test_nested_parameter_expansions_are_not_read_and_say_so(
    sg: Sg, tmp_path: Path, name: str
) -> None:
    steps = ATTACKS[name][0]
    workflow(tmp_path, steps)
    data, peak = drift(sg, tmp_path)
    assert peak < 30_000_000, peak
    up = 6 + steps.split("\n").index("          name: ${{ env.A }}")
    [(line, expression, reason)] = [
        (u["line"], u["expression"], u["reason"]) for u in data["unresolved"]
    ]
    assert (line, expression) == (up, "${{ env.A }}")
    assert reason.endswith(f"({NESTED}, .github/workflows/w.yml:{up - 4}:1)); bind env.A"), reason


@pytest.mark.parametrize("name", ["printf-width", "printf-precision", "printf-width-digits"])
def test_a_printf_wider_than_the_value_limit_is_not_built(
    sg: Sg, tmp_path: Path, name: str
) -> None:
    workflow(tmp_path, ATTACKS[name][0])
    data, peak = drift(sg, tmp_path)
    assert peak < 30_000_000, peak
    assert [u["expression"] for u in data["unresolved"]] == ["${{ env.A }}"]
    assert [u["name"] for u in data["uploads"]] == ["${{ env.A }}"]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_controls_are_computed(sg: Sg, tmp_path: Path, name: str) -> None:
    _attack, control, value = ATTACKS[name]
    workflow(tmp_path, control)
    data, _peak = drift(sg, tmp_path)
    assert data["unresolved"] == []
    assert [u["name"] for u in data["uploads"]] == [value]


def test_continuity_and_verify_pr_read_them_within_the_budget(
    sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every attack in the release's publish job, in a flip: each command answers."""
    pin_git(monkeypatch)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    repo = init(tmp_path / "r")
    write_small(repo.root)
    repo.write(".github/workflows/release.yml", WHEELS_RELEASE)
    base = repo.commit("base")
    marker = "    steps:\n      - uses: actions/download-artifact@v4\n"
    steps = "".join(attack for attack, _control, _value in ATTACKS.values())
    repo.write(
        ".github/workflows/release.yml",
        WHEELS_RELEASE.replace(marker, "    steps:\n" + steps + marker[11:]),
    )
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("Flip to stage 1, and run every attack in the release job")
    shipped = sg("continuity", "--base", base, cwd=repo.root)
    assert shipped.code in (0, 1), shipped.output
    gate = sg("verify-pr", "--base", base, cwd=repo.root)
    assert gate.code in (0, 1), gate.output
    assert "releases-as-declared" in gate.out
