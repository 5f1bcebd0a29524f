"""Hostile workflow files: each fails fast with a located error (exit 2), or is read as
data; nothing in them runs, hangs or crashes stagegate."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, FUZZ_LONG, Result
from stagegate.ci.drift import SHIP_KINDS

FIXTURE = FIXTURES / "drift" / "repo"
Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: hostile
stage: 0
axes:
  sha: {pattern: "[0-9a-f]{40}"}
producers:
  wheel:
    artifacts: ["wheel-{sha}"]
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "repo"
    (base / ".github" / "workflows").mkdir(parents=True)
    (base / "migration.yaml").write_text(MODEL)
    return base


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "PWNED"


def workflow(root: Path, text: str, name: str = "w.yml") -> Path:
    path = root / ".github" / "workflows" / name
    path.write_text(text)
    return path


def refused(sg: Sg, root: Path, pattern: str, *, seconds: float = 10.0) -> Result:
    start = time.perf_counter()
    result = sg("drift", cwd=root)
    elapsed = time.perf_counter() - start
    assert result.code == 2, result.output
    assert re.search(pattern, result.err), result.err
    assert elapsed < seconds, elapsed
    return result


JOB = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
{body}
"""


def test_huge_matrix_product(sg: Sg, root: Path) -> None:
    values = ", ".join(str(i) for i in range(200))
    workflow(
        root,
        JOB.format(
            body=f"    strategy:\n      matrix:\n        a: [{values}]\n        b: [{values}]\n    steps: []"
        ),
    )
    refused(sg, root, r"w\.yml:\d+:\d+: this matrix has more than 10,000 combinations")


def test_matrix_over_githubs_limit(sg: Sg, root: Path) -> None:
    values = ", ".join(str(i) for i in range(300))
    workflow(
        root, JOB.format(body=f"    strategy:\n      matrix:\n        a: [{values}]\n    steps: []")
    )
    refused(sg, root, r"w\.yml:7:\d+: this matrix makes 300 jobs; GitHub runs at most 256")


def test_yaml_bomb(sg: Sg, root: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    workflow(root, "\n".join(lines) + "\njobs: {}\n")
    refused(sg, root, r"w\.yml:\d+:\d+: more than 200,000 values after expanding aliases")


def test_deep_nesting(sg: Sg, root: Path) -> None:
    workflow(root, "jobs: " + "[" * 100 + "]" * 100 + "\n")
    refused(sg, root, r"w\.yml:1:\d+: nested more than 64 levels deep")


def test_unclosed_expression(sg: Sg, root: Path) -> None:
    step = "      - uses: actions/upload-artifact@v4\n        with:\n          name: wheel-${{ github.sha"
    workflow(root, JOB.format(body="    steps:\n" + step))
    refused(sg, root, r"w\.yml:8:\d+: invalid expression: '\$\{\{' is not closed")


def test_expression_that_never_ends(sg: Sg, root: Path) -> None:
    deep = "(" * 2000 + "github.sha" + ")" * 2000
    step = f"      - uses: actions/upload-artifact@v4\n        with:\n          name: wheel-${{{{ {deep} }}}}"
    workflow(root, JOB.format(body="    steps:\n" + step))
    refused(sg, root, r"w\.yml:8:\d+: invalid expression: the expression nests more than 50 levels")


def test_expression_too_long(sg: Sg, root: Path) -> None:
    long = " || ".join(["github.sha"] * 2000)
    step = f"      - uses: actions/upload-artifact@v4\n        with:\n          name: wheel-${{{{ {long} }}}}"
    workflow(root, JOB.format(body="    steps:\n" + step))
    refused(sg, root, r"w\.yml:8:\d+: invalid expression: expression of [\d,]+ characters")


def test_bad_expression_syntax_names_the_column(sg: Sg, root: Path) -> None:
    step = "      - uses: actions/upload-artifact@v4\n        with:\n          name: wheel-${{ github.sha == }}"
    workflow(root, JOB.format(body="    steps:\n" + step))
    refused(sg, root, r"w\.yml:8:\d+: invalid expression: the expression ends too early")


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("- a\n- b\n", r"w\.yml:1:1: the file holds a list"),
        ("jobs: [a, b]\n", r"w\.yml:1:7: jobs must be a mapping"),
        ("jobs:\n  a:\n    steps: {x: 1}\n", r"w\.yml:3:12: steps must be a list"),
        ("jobs:\n  a:\n    steps: [1]\n", r"w\.yml:3:13: a step must be a mapping"),
        ("jobs:\n  a: [1]\n", r"w\.yml:2:6: job a must be a mapping"),
        ("jobs: {a: {strategy: {matrix: [1]}}}\n", r"strategy.matrix must be a mapping"),
        ("on: push\njobs:\n  a:\n   b: [\n", r"w\.yml:\d+:\d+: invalid YAML"),
        ("jobs: {}\njobs: {}\n", r"w\.yml:2:1: duplicate key 'jobs'"),
        ("x: !!python/object/apply:os.system ['touch PWNED']\n", r"YAML tag .* is not allowed"),
        ("\xff\xfe", r"w\.yml:1:1: not valid UTF-8"),
    ],
)
def test_malformed_workflow_is_a_located_error(sg: Sg, root: Path, text: str, pattern: str) -> None:
    (root / ".github" / "workflows" / "w.yml").write_bytes(
        text.encode("utf-8", "surrogateescape") if "\xff" not in text else b"\xff\xfe"
    )
    refused(sg, root, pattern)


def test_reusable_workflow_cycle(sg: Sg, root: Path) -> None:
    workflow(root, "on: push\njobs:\n  a:\n    uses: ./.github/workflows/b.yml\n", "a.yml")
    workflow(root, "on: workflow_call\njobs:\n  b:\n    uses: ./.github/workflows/c.yml\n", "b.yml")
    workflow(root, "on: workflow_call\njobs:\n  c:\n    uses: ./.github/workflows/b.yml\n", "c.yml")
    refused(sg, root, r"in a cycle \(.*b\.yml#b -> .*c\.yml#c -> \.github/workflows/b\.yml\)")


def test_missing_reusable_workflow_and_action(sg: Sg, root: Path) -> None:
    workflow(root, "on: push\njobs:\n  a:\n    uses: ./.github/workflows/nope.yml\n")
    refused(sg, root, r"w\.yml:4:11: \.github/workflows/nope\.yml: no such file")
    workflow(root, JOB.format(body="    steps:\n      - uses: ./.github/actions/nope"))
    refused(sg, root, r"w\.yml:6:\d+: no action\.yml in \.github/actions/nope")


def test_evaluation_budget(sg: Sg, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reusable calls that each run a matrix multiply; the budget stops them. The budget is
    lowered here (a tenth, 72 x 72 rows x 5 steps pass it) so that the test is quick; the
    real one is pinned."""
    from stagegate.ci import transfers, workflows

    assert transfers.MAX_EVALUATIONS == workflows.MAX_EVALUATIONS == 200_000
    monkeypatch.setattr(workflows, "MAX_EVALUATIONS", 20_000)
    values = ", ".join(str(i) for i in range(72))
    workflow(
        root,
        f"on: push\njobs:\n  a:\n    strategy:\n      matrix:\n        x: [{values}]\n"
        "    uses: ./.github/workflows/b.yml\n",
        "a.yml",
    )
    steps = "".join(f"      - run: echo {i}\n" for i in range(5))
    workflow(
        root,
        f"on: workflow_call\njobs:\n  b:\n    strategy:\n      matrix:\n        y: [{values}]\n"
        f"    steps:\n{steps}",
        "b.yml",
    )
    refused(sg, root, r"more than 20,000 step evaluations", seconds=30)


def test_huge_loop(sg: Sg, root: Path) -> None:
    words = " ".join(f"w{i}" for i in range(2000))
    workflow(
        root,
        JOB.format(
            body=f'    steps:\n      - run: |\n          for x in {words}; do\n            gh run download -n "$x"\n          done'
        ),
    )
    refused(sg, root, r"w\.yml:7:1: a for loop over 2,000 values")


def test_nothing_in_a_script_runs(sg: Sg, root: Path, marker: Path) -> None:
    # `date` after `touch`: what they print is not known (touch alone prints nothing,
    # which the reader knows: `$(touch x)` is "")
    payloads = [
        f"touch {marker}",
        f"gh run download $(touch {marker}; date) -n x",
        f'gh run download `touch {marker}; date` -n "$(touch {marker}; date)"',
        f'X=$(touch {marker}; date); gh run download -n "$X"',
        f'echo "NAME=$(touch {marker}; date)" >> "$GITHUB_ENV"',
    ]
    body = (
        "    steps:\n"
        + "".join("      - run: |\n          " + p + "\n" for p in payloads)
        + "      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{ env.NAME }}\n"
    )
    workflow(root, JOB.format(body=body))
    result = sg("drift", "--format", "json", cwd=root)
    assert result.code == 0  # the unresolved upload may be the wheel: not called missing
    assert sg("drift", "--strict", cwd=root).code == 1
    assert not marker.exists()
    assert "touch" in result.out  # reported as unresolved, with the command's text
    import json

    data = json.loads(result.out)
    reasons = " ".join(u["reason"] for u in data["unresolved"])
    assert "runs a command" in reasons
    assert "written to $GITHUB_ENV by the script at .github/workflows/w.yml:" in reasons


def test_fromjson_of_deep_json_is_unresolved_not_a_crash(sg: Sg, root: Path) -> None:
    deep = "[" * 50_000 + "]" * 50_000
    step = f"      - uses: actions/upload-artifact@v4\n        with:\n          name: ${{{{ fromJSON('{deep[:9000]}') }}}}"
    workflow(root, JOB.format(body="    steps:\n" + step))
    result = sg("drift", cwd=root)
    assert result.code in (0, 1), result.output


def test_symlink_out_of_the_repository_is_not_read(sg: Sg, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_text(
        "on: push\njobs:\n  x:\n    steps:\n      - uses: actions/upload-artifact@v4\n"
    )
    os.symlink(outside, root / ".github" / "workflows" / "link.yml")
    if Path("/dev/zero").exists():
        os.symlink("/dev/zero", root / ".github" / "workflows" / "zero.yml")
    workflow(root, "on: push\njobs:\n  x:\n    steps:\n      - run: true\n", "plain.yml")
    result = sg("drift", "--format", "json", cwd=root)
    assert result.code == 1
    assert '"uploads": []' in result.out
    # the control: the same upload in a file of the repository is read
    workflow(root, outside.read_text(), "inside.yml")
    assert '"name": "artifact"' in sg("drift", "--format", "json", cwd=root).out


def test_fifo_workflow_does_not_hang(sg: Sg, root: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    os.mkfifo(root / ".github" / "workflows" / "pipe.yml")
    start = time.perf_counter()
    result = sg("drift", cwd=root)
    assert time.perf_counter() - start < 10
    assert result.code in (1, 2)


def test_the_fixture_survives_every_line_removed(sg: Sg, tmp_path: Path) -> None:
    """Cutting any one line of any fixture workflow gives a verdict or a located error."""
    base = tmp_path / "base"
    shutil.copytree(FIXTURE, base)
    for path in sorted((base / ".github").rglob("*.yml")):
        original = path.read_text().splitlines(keepends=True)
        for i in range(0, len(original), 3):
            path.write_text("".join(original[:i] + original[i + 1 :]))
            result = sg("drift", cwd=base)
            assert result.code in (0, 1, 2), (path, i, result.output)
            if result.code == 2:
                assert re.search(r"\.ya?ml:\d+:\d+: ", result.err), (path, i, result.err)
        path.write_text("".join(original))


# --------------------------------------------------------------------------- mutants

_VALUES: list[object] = [
    None,
    True,
    3,
    3.5,
    "",
    "x",
    [],
    {},
    [1, {"a": []}],
    "${{ matrix }}",
    "${{ fromJSON('[1,2]') }}",
    "${{ env }}",
    "${{ toJSON(github) }}",
    "'",
    "`",
    "$(touch PWNED)",
    '${{ fromJSON(\'{"include": [{"a": 1}]}\') }}',
    "gh run download -n",
    "for x in; do gh run download -n $x; done",
]


def _mutants(seed: int, count: int) -> list[tuple[str, str]]:
    """(file, text): fixture workflows with one to three values swapped for odd ones."""
    import copy
    import random

    import yaml

    rng = random.Random(seed)
    files = sorted((FIXTURE / ".github").rglob("*.yml"))
    out = []
    for _ in range(count):
        path = rng.choice(files)
        data = yaml.safe_load(path.read_text())
        for _ in range(rng.randint(1, 3)):
            places: list[tuple[object, object]] = []
            stack: list[object] = [data]
            while stack:
                node = stack.pop()
                keys = (
                    list(node)
                    if isinstance(node, dict)
                    else range(len(node))
                    if isinstance(node, list)
                    else []
                )
                for key in keys:
                    places.append((node, key))
                    stack.append(node[key])  # type: ignore[index]
            if not places:
                break
            node, key = rng.choice(places)
            node[key] = copy.deepcopy(rng.choice(_VALUES))  # type: ignore[index]
        out.append((str(path.relative_to(FIXTURE)), yaml.safe_dump(data)))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4] if FUZZ_LONG else [1])  # more with --fuzz-long
def test_mutated_workflows_give_a_verdict_and_init_then_drift_passes(
    sg: Sg, tmp_path: Path, seed: int
) -> None:
    """On any mutant: drift exits 0, 1 or 2 (located); where init accepts it, drift then passes."""
    inits = 0
    for i, (rel, text) in enumerate(_mutants(seed, 25)):
        root = tmp_path / f"m{i}"
        shutil.copytree(FIXTURE, root)
        (root / rel).write_text(text)
        result = sg("drift", cwd=root)
        assert result.code in (0, 1, 2), (rel, result.output)
        if result.code == 2:
            assert re.search(r"\.ya?ml:\d+:\d+: ", result.err), result.err
        (root / "migration.yaml").unlink()
        shutil.rmtree(root / "stages")
        init = sg("init", "--from-workflows", cwd=root)
        assert init.code in (0, 2), (rel, init.output)
        if init.code == 0:
            inits += 1
            after = sg("drift", "--format", "json", cwd=root)
            # what the model can say agrees; the artifact actions' own findings (a mutant
            # that uploads one name from every row) are about the workflows, not the model
            kinds = {f["kind"] for f in json.loads(after.out)["findings"]}
            assert kinds <= SHIP_KINDS, (rel, text, after.output)
            assert after.code == (1 if kinds else 0)
    assert inits >= 10
    assert not list(tmp_path.rglob("PWNED"))  # `$(touch PWNED)` in a script never ran


_WORDS = (
    'gh run download -n -p -D dir "$X" \'a b\' $( ) ` ${ } { ; && || | tee -a "$GITHUB_ENV" >> << EOF'
    " 'EOF' for x in do done while rm -rf dir/*-tests echo \"K=V\" X=1 X=$(y) \\ \" ' # $1 $@ ${X:-d}"
    " (( )) cat if then fi [[ ]] !"
)
_TOKENS = [
    *_WORDS.split(" "),
    "${{ matrix.py }}",
    "${{ env.X }}",
    "\n",
    "\n",
    # issue 24: the characters the reader marks values with, and doubling assignments
    "\ue000",
    "\ue0017\ue001",
    "\ue002GITHUB_ENV\ue003",
    'X="$X$X"',
    '\nX="$X$X$X$X"\n',
]


RANDOM_SCRIPTS = 600 if FUZZ_LONG else 60
"""The suite's random scripts are the first of the long run's (one seeded sequence)."""


def test_random_scripts_give_a_verdict(sg: Sg, root: Path) -> None:
    """Scripts of random shell tokens: parsed or not, never a crash, never run."""
    import random

    rng = random.Random(14)
    for _ in range(RANDOM_SCRIPTS):
        script = " ".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 40)))
        body = "\n".join("          " + line for line in script.split("\n"))
        workflow(
            root,
            "on: push\njobs:\n  a:\n    strategy:\n      matrix:\n        py: ['1', '2']\n"
            "    steps:\n      - run: |\n" + body + "\n",
        )
        result = sg("drift", cwd=root)
        assert result.code in (0, 1, 2), (script, result.output)
        assert "internal error" not in result.err, (script, result.err)


def _doubling(times: int, then: str) -> str:
    lines = ['A0="0123456789"'] + [f'A{i}="$A{i - 1}$A{i - 1}"' for i in range(1, times + 1)]
    body = "".join("          " + line + "\n" for line in [*lines, then])
    return JOB.format(body="    steps:\n      - run: |\n" + body)


def test_doubling_assignments_stay_small_and_are_unresolved_at_their_line(
    sg: Sg, root: Path
) -> None:
    """Issue 24.5: 30 lines of A1="$A0$A0" would build a 10 GB value. Every value is
    capped at 1,000 characters: the first longer one is unresolved at its line, and the
    reading's memory stays bounded by the script's size."""
    import json
    import tracemalloc

    workflow(root, _doubling(30, 'gh run download -n "wheel-$A30"'))
    tracemalloc.start()
    try:
        result = sg("drift", "--format", "json", cwd=root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.code == 1, result.output  # the producer's upload is missing
    assert peak < 30_000_000, peak
    data = json.loads(result.out)
    first = data["unresolved"][0]
    # A7 is 1,280 characters: line 7 is the script's first, A7 its eighth line
    assert (first["file"], first["line"], first["expression"]) == (
        ".github/workflows/w.yml",
        14,
        "$A6$A6",
    )
    assert first["reason"] == (
        "a value longer than 1,000 characters (no artifact name or glob is that long); "
        "stagegate does not compute it"
    )
    [download] = data["downloads"]
    assert download["resolved"] is False
    assert sg("drift", "--strict", cwd=root).code == 1


def test_doubling_below_the_cap_is_computed(sg: Sg, root: Path) -> None:
    """The control: two doublings make the 40-character sha the producer's name needs."""
    import json

    workflow(root, _doubling(2, 'gh run download -n "wheel-$A2"'))
    result = sg("drift", "--format", "json", cwd=root)
    data = json.loads(result.out)
    assert data["unresolved"] == []
    [download] = data["downloads"]
    assert (download["select"], download["resolved"]) == ("wheel-" + "0123456789" * 4, True)


_MARKED = "wheel-\ue0007\ue001-\ue002GITHUB_ENV\ue003"


def test_private_use_characters_in_a_script_are_text(sg: Sg, root: Path) -> None:
    """Issue 24.6: the shell reader marks values with U+E000..U+E003. The same characters
    in a script (or spelling its own $GITHUB_ENV marker) are plain text: no crash, the
    name kept as written, and no env write through a look-alike of the env file."""
    import json

    body = (
        "    steps:\n      - run: |\n"
        f'          gh run download -n "{_MARKED}"\n'
        '          FAKE="\ue002GITHUB_ENV\ue003"\n'
        '          echo "A=1" >> "$FAKE"\n'
        "          cat >> \"$GITHUB_ENV\" <<'EOF'\n"
        "          B=\ue0003\ue001\n"
        "          EOF\n"
        "      - uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: ${{ env.B }}\n"
        "      - uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: ${{ env.A }}\n"
    )
    workflow(root, JOB.format(body=body))
    result = sg("drift", "--format", "json", cwd=root)
    assert result.code == 1, result.output
    data = json.loads(result.out)
    assert [d["select"] for d in data["downloads"]] == [_MARKED]
    assert [(u["name"], u["resolved"]) for u in data["uploads"]] == [
        ("\ue0003\ue001", True),
        ("${{ env.A }}", False),
    ]
    assert [u["expression"] for u in data["unresolved"]] == ["${{ env.A }}"]


def test_private_use_control_the_real_env_file_is_written(sg: Sg, root: Path) -> None:
    """The control: the same script writing to "$GITHUB_ENV" sets A for the later step."""
    import json

    body = (
        "    steps:\n      - run: |\n"
        '          echo "A=wheel-\ue000" >> "$GITHUB_ENV"\n'
        "      - uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: ${{ env.A }}\n"
    )
    workflow(root, JOB.format(body=body))
    data = json.loads(sg("drift", "--format", "json", cwd=root).out)
    assert [(u["name"], u["resolved"]) for u in data["uploads"]] == [("wheel-\ue000", True)]
