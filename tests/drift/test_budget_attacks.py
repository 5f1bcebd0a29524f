"""One work budget for the readers of scripts (issue 33, and issue 37's attacks 5 and 8):
a few hundred bytes of script asking for unbounded work or depth. Before, each made
drift, continuity and verify-pr reach a gigabyte, run for half a minute, or stop with
RecursionError (exit 70); now each is read within the budget (ci.budget): what it
cannot compute is unresolved at its line, the command exits 0, 1 or 2, and the
reading's memory stays small. Each attack has its control beside it: the same
construct, small, computed exactly."""

from __future__ import annotations

import inspect
import json
import sys
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
axes:
  sha: {pattern: "[0-9a-f]{40}"}
producers:
  wheel:
    artifacts: ["wheel-{sha}"]
"""
UPLOAD = "      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{ env.A }}\n"
FIRST = 7
"""The workflow line of a script's first line (``steps:`` then ``- run: |``)."""


def run(script: str, shell: str = "") -> str:
    """A step running ``script`` (in ``shell``), then an upload named by what it wrote."""
    lines = "".join(f"          {line}\n" for line in script.split("\n"))
    head = f"      - shell: {shell}\n        run: |\n" if shell else "      - run: |\n"
    return head + lines + UPLOAD


def doubling(times: int) -> str:
    """PowerShell doubling a string ``times`` times, then writing it to the env."""
    lines = ["$a = 'ab'", *['$a = "$a$a"'] * times, '"A=$a" >> $env:GITHUB_ENV']
    return run("\n".join(lines), "pwsh")


def jq_chain(times: int) -> str:
    chain = "|".join([".+."] * times)
    return run(f'X=$(echo \'"ab"\' | jq -r \'{chain}\')\necho "A=$X" >> "$GITHUB_ENV"')


def loops(words: int) -> str:
    items = " ".join(f"w{i}" for i in range(words))
    body = [
        f"for a in {items}; do",
        f"  for b in {items}; do",
        f"    for c in {items}; do",
        '      A="$a$b$c"',
        "    done",
        "  done",
        "done",
        'echo "A=$A" >> "$GITHUB_ENV"',
    ]
    return run("\n".join(body))


def substitutions(depth: int) -> str:
    return run("X=" + "$(echo " * depth + "ab" + ")" * depth + '\necho "A=$X" >> "$GITHUB_ENV"')


def ifs(depth: int) -> str:
    lines = ["if true; then"] * depth + ["X=ab"] + ["fi"] * depth
    return run("\n".join([*lines, 'echo "A=$X" >> "$GITHUB_ENV"']))


STOPPED = (
    "reading this script takes more than 50,000 units of work; stagegate stops reading it "
    "here, so what it does from here on is not known"
)
LONG = (
    "a value longer than 1,000 characters (no artifact name or glob is that long); "
    "stagegate does not compute it"
)
NOT_SET = (
    "env.A is set in no env: of the step, job or workflow (a script stagegate does not "
    "read may write it to $GITHUB_ENV); bind env.A"
)
NESTED = "shell constructs nested more than 40 deep"

ATTACKS = {
    # name: (steps, the control's steps, the control's upload name)
    "pwsh-doubling": (doubling(40), doubling(2), "abababab"),
    "jq-chain": (jq_chain(45), jq_chain(2), "abababab"),
    "nested-loops": (loops(100), loops(3), "w2w2w2"),
    "nested-substitutions": (substitutions(180), substitutions(5), "ab"),
    "nested-ifs": (ifs(500), ifs(5), "ab"),
}


def workflow(root: Path, steps: str) -> Path:
    (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / "migration.yaml").write_text(MODEL, encoding="utf-8")
    path = root / ".github" / "workflows" / "w.yml"
    path.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n" + steps)
    return path


def drift(sg: Sg, root: Path) -> tuple[Result, dict[str, list[dict[str, object]]], int]:
    """drift's JSON and the peak of the memory it allocated (traced in process)."""
    tracemalloc.start()
    try:
        result = sg("drift", "--format", "json", cwd=root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.code in (0, 1), result.output
    return result, json.loads(result.out), peak


def unresolved(data: dict[str, list[dict[str, object]]]) -> list[tuple[object, ...]]:
    return [(u["line"], u["expression"], u["reason"]) for u in data["unresolved"]]


def upload_line(steps: str) -> int:
    """The workflow line of the upload's name (the steps start on line 6)."""
    return 6 + steps.split("\n").index("          name: ${{ env.A }}")


def test_a_powershell_doubling_stops_at_the_value_limit(sg: Sg, tmp_path: Path) -> None:
    steps = ATTACKS["pwsh-doubling"][0]
    path = workflow(tmp_path, steps)
    assert len(path.read_bytes()) < 1_200  # the attack is about a kilobyte
    _result, data, peak = drift(sg, tmp_path)
    assert peak < 30_000_000, peak
    # 'ab' doubled 9 times is 1,024 characters: the ninth doubling, the script's tenth
    # line (after `shell: pwsh`, the script starts a line later)
    up = upload_line(steps)
    assert unresolved(data) == [
        (FIRST + 1 + 9, '"$a$a"', LONG),
        (
            up,
            "${{ env.A }}",
            "A is written to $GITHUB_ENV by the PowerShell script at .github/workflows/w.yml:"
            f"{up - 3} from a value stagegate cannot compute; bind env.A",
        ),
    ]


def test_a_jq_chain_stops_at_the_budget(sg: Sg, tmp_path: Path) -> None:
    steps = ATTACKS["jq-chain"][0]
    workflow(tmp_path, steps)
    _result, data, peak = drift(sg, tmp_path)
    assert peak < 30_000_000, peak
    chain = "|".join([".+."] * 45)
    assert unresolved(data) == [
        (FIRST, f"X=$(echo '\"ab\"' | jq -r '{chain}')"[:200], STOPPED),
        (upload_line(steps), "${{ env.A }}", NOT_SET),
    ]


def test_three_nested_loops_of_a_hundred_words_stop_at_the_budget(sg: Sg, tmp_path: Path) -> None:
    steps = ATTACKS["nested-loops"][0]
    workflow(tmp_path, steps)
    _result, data, peak = drift(sg, tmp_path)
    assert peak < 30_000_000, peak
    assert unresolved(data) == [
        (FIRST + 3, 'A="$a$b$c"', STOPPED),
        (upload_line(steps), "${{ env.A }}", NOT_SET),
    ]


@pytest.mark.parametrize(
    ("name", "construct"), [("nested-substitutions", "$X"), ("nested-ifs", "$X")]
)
def test_deep_nesting_is_not_read_and_says_so(
    sg: Sg, tmp_path: Path, name: str, construct: str
) -> None:
    """Nested past MAX_DEPTH: the statement is not read; what it sets is unknown, saying
    where and why (no RecursionError: the parse and the walk are depth-limited)."""
    steps = ATTACKS[name][0]
    workflow(tmp_path, steps)
    _result, data, peak = drift(sg, tmp_path)
    assert peak < 30_000_000, peak
    up = upload_line(steps)
    [(line, expression, reason)] = unresolved(data)
    assert (line, expression) == (up, "${{ env.A }}")
    assert reason == (
        f"A is written to $GITHUB_ENV by the script at .github/workflows/w.yml:{up - 3} "
        f"from a value stagegate cannot compute ({construct}, which is set where stagegate does "
        f"not read ({NESTED}, .github/workflows/w.yml:{FIRST}:1)); bind env.A"
    )


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_controls_are_computed(sg: Sg, tmp_path: Path, name: str) -> None:
    _attack, control, value = ATTACKS[name]
    workflow(tmp_path, control)
    _result, data, _peak = drift(sg, tmp_path)
    assert data["unresolved"] == []
    assert [u["name"] for u in data["uploads"]] == [value]


def release_with(steps: str) -> str:
    """scratch.WHEELS_RELEASE with ``steps`` run in its publish job before the download."""
    marker = "    steps:\n      - uses: actions/download-artifact@v4\n"
    assert marker in WHEELS_RELEASE
    return WHEELS_RELEASE.replace(marker, "    steps:\n" + steps + marker[11:])


@pytest.fixture
def attacked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """The small migration and a tag release at the base; at the head, a flip to stage 1
    and every attack run in the release's publish job."""
    pin_git(monkeypatch)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    repo = init(tmp_path / "r")
    write_small(repo.root)
    repo.write(".github/workflows/release.yml", WHEELS_RELEASE)
    base = repo.commit("base")
    steps = "".join(attack for attack, _control, _value in ATTACKS.values())
    repo.write(".github/workflows/release.yml", release_with(steps))
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("Flip to stage 1, and run every attack in the release job")
    return repo.root, base


def test_continuity_reads_every_attack_within_the_budget(
    sg: Sg, attacked: tuple[Path, str]
) -> None:
    root, base = attacked
    limit = sys.getrecursionlimit()
    result = sg("continuity", "--base", base, cwd=root)
    assert result.code in (0, 1), result.output
    assert "internal error" not in result.err
    assert sys.getrecursionlimit() == limit


def test_verify_pr_reads_every_attack_within_the_budget(sg: Sg, attacked: tuple[Path, str]) -> None:
    root, base = attacked
    result = sg("verify-pr", "--base", base, cwd=root)
    assert result.code in (0, 1, 2), result.output
    assert "internal error" not in result.err
    assert "releases-as-declared" in result.out


@pytest.mark.parametrize("name", ["nested-substitutions", "nested-ifs"])
def test_the_parse_and_the_walk_stay_shallow(sg: Sg, tmp_path: Path, name: str) -> None:
    """Depth-limited, not recursion-limited: the deepest scripts are read within a few
    hundred Python frames of the command's own (tree-sitter's parse is iterative)."""
    workflow(tmp_path, ATTACKS[name][0])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 400)
    try:
        result = sg("drift", cwd=tmp_path)
    finally:
        sys.setrecursionlimit(limit)
    assert result.code in (0, 1), result.output
