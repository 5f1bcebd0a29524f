"""Hostile and broken input: every command ends with exit 0, 1 or 2, quickly, without a traceback.

Two sources of inputs:

* a seeded mutation corpus: the worked example, ``tests/cases/`` and a medium-sized
  migration that exercises every cheap check kind, each mutated by a seeded
  ``random.Random`` (lines deleted, duplicated, swapped, re-indented, truncated;
  values replaced by odd YAML; anchors and aliases; stray and invalid bytes; files
  removed or renamed). A case is reproducible from its seed alone.
* hypothesis: odd text in the fields that carry a language of their own (flag
  expressions, templates, globs, open-axis regexes, tags) and arbitrary bytes as
  whole files.

``pytest`` and ``command`` checks are removed from the seeds: they would spend the
time budget starting processes and prove nothing about parsing. A case that fails
is written to ``$STAGEGATE_FUZZ_KEEP`` (default: the test's tmp dir) so that it can
be replayed with the CLI. ``--fuzz-long`` runs thousands of cases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FUZZ_LONG
from fuzzkit import (
    CHUNK,
    COMMAND_SECONDS,
    LONG_CASES,
    NORMAL_CASES,
    ODD_VALUES,
    TEXT_MUTATIONS,
    Outcome,
    Project,
    commands,
    exercise,
    mutate,
    run_cases,
    run_in_process,
    seeds,
    write_project,
)


def _chunks(total: int, offset: int) -> list[range]:
    return [range(offset + i, offset + min(i + CHUNK, total)) for i in range(0, total, CHUNK)]


@pytest.mark.parametrize(
    "seeds_", _chunks(NORMAL_CASES, 0), ids=lambda r: f"{r.start}-{r.stop - 1}"
)
def test_mutated_inputs_end_cleanly(seeds_: range, tmp_path: Path) -> None:
    run_cases(seeds_, tmp_path)


def test_the_suites_seeds_make_every_text_mutation() -> None:
    """The suite runs seeds 0 to NORMAL_CASES - 1 (``--fuzz-long`` the thousands after):
    a slice that still makes each text mutation, on several seed projects."""
    corpus = seeds()
    cases = [mutate(seed, corpus) for seed in range(NORMAL_CASES)]
    made = {step.split(" in ")[0] for case in cases for step in case.steps}
    assert {m.__name__.lstrip("_") for m in TEXT_MUTATIONS} <= made
    assert len({case.base for case in cases}) >= 10


def test_what_validate_refuses_every_command_refuses_alike(tmp_path: Path) -> None:
    """Why ``exercise`` stops at ``validate`` on refused input: every command loads the
    files the same way first, and ends with the same code and message."""
    refused = 0
    corpus = seeds()
    for seed in range(8):
        case = mutate(seed, corpus)
        write_project(tmp_path / "case", case.files)
        argv = ["-f", str(tmp_path / "case" / "migration.yaml")]
        outcomes = [run_in_process([*argv, *command]) for command in commands()]
        first = outcomes[0]
        if first.code != 2:
            continue
        refused += 1
        for outcome in outcomes[1:]:
            assert (outcome.code, outcome.out, outcome.err) == (2, first.out, first.err), seed
    assert refused >= 4  # the corpus mostly breaks the files: the claim is tested


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The long corpus exists only with ``--fuzz-long``; otherwise one skipped placeholder."""
    if metafunc.function.__name__ != "test_many_mutated_inputs_end_cleanly":
        return
    if metafunc.config.getoption("--fuzz-long"):
        chunks = _chunks(LONG_CASES, NORMAL_CASES)  # the seeds after the suite's
        metafunc.parametrize("seeds_", chunks, ids=[f"{r.start}-{r.stop - 1}" for r in chunks])
    else:
        metafunc.parametrize("seeds_", [range(0)], ids=["off"])


@pytest.mark.fuzz_long
def test_many_mutated_inputs_end_cleanly(
    seeds_: range, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if not request.config.getoption("--fuzz-long"):
        pytest.skip("thousands of cases: run with --fuzz-long")
    run_cases(seeds_, tmp_path)


# --------------------------------------------------------------------------- hypothesis

SLOTS: dict[str, tuple[str, str]] = {
    "producer when": ("migration.yaml", "when: not drop-old"),
    "producer when (or)": ("migration.yaml", "when: new-build or not drop-old"),
    "artifact template": ("migration.yaml", '"pkg-python{py}-{platform}-{sha}"'),
    "consumer select": ("migration.yaml", '"pkg-python{py}-{platform}-*[0-9a-f]"'),
    "consumer select (plain)": ("migration.yaml", '"docs-*"'),
    "release select": ("migration.yaml", '"pkg-python*"'),
    "release exclude": ("migration.yaml", '"*-tests"'),
    "release tag glob": ("migration.yaml", '"v1.*"'),
    "open-axis regex": ("migration.yaml", '"[0-9a-f]{40}"'),
    "open-axis regex (alternation)": ("migration.yaml", '"(?:dev|rc)[0-9]+|[0-9]+"'),
    "finite axis value": ("migration.yaml", '"311"'),
    "flag name": ("migration.yaml", "new-build:\n    summary"),
    "legacy reference": ("migration.yaml", "OLD_WHEELS"),
    "audit ignore": ("migration.yaml", '"docs/*.rst"'),
    "routed tag": ("migration.yaml", "tags: [v1.0, v2.5]"),
    "continuity tag": ("stages/01-new-build.yaml", "tag: v1.0"),
    "stage set key": ("stages/01-new-build.yaml", "new-build: true"),
    "stage title": ("stages/01-new-build.yaml", "New build beside the old one"),
}

_SYNTAX = [
    *"()*?[]!{}|\\^$.+-,:#&'\"/ \t\naZz09_",
    "not ",
    " and ",
    " or ",
    "{py}",
    "{sha}",
    "{build}",
    "{platform}",
    "[!",
    "(?:",
    "{1000}",
    "{2,}",
    "\\d",
    "\x00",
    "\u2028",
    "\U0001f600",
]
ANY_CHARACTER = st.characters(exclude_categories=("Cs",))
"""What ``st.text`` draws from by default (every code point UTF-8 encodes: all but the
surrogates), said so that hypothesis does not work the set out by encoding each code
point, ~2.7 CPU-s in every session."""
odd_text = st.one_of(
    st.lists(st.sampled_from(_SYNTAX), max_size=30).map("".join),
    st.text(alphabet=ANY_CHARACTER, max_size=30),
    st.sampled_from([v.strip('"') for v in ODD_VALUES]),
)


def _slot_value(slot: str, text: str) -> str:
    """The YAML that puts ``text`` into ``slot``: a double-quoted scalar (JSON escapes)."""
    quoted = json.dumps(text)
    old = SLOTS[slot][1]
    if old.startswith("when: "):
        return "when: " + quoted
    if old == "new-build:\n    summary":
        return quoted + ":\n    summary"
    if old.startswith("tags: ["):
        return f"tags: [{quoted}, v2.5]"
    if old.startswith("tag: "):
        return "tag: " + quoted
    if old.endswith(": true"):
        return quoted + ": true"
    return quoted


def _medium_with(slot: str, text: str) -> Project:
    files = {rel: raw.decode() for rel, raw in seeds()["medium"].items()}
    rel, old = SLOTS[slot]
    assert old in files[rel], f"slot {slot!r} not found in {rel}"
    files[rel] = files[rel].replace(old, _slot_value(slot, text), 1)
    return {k: v.encode("utf-8", "surrogatepass") for k, v in files.items()}


def _examples(request: pytest.FixtureRequest, normal: int, long: int) -> int:
    return long if request.config.getoption("--fuzz-long") else normal


def _clean(root: Path, files: Project) -> None:
    found = exercise(root, files, run_in_process)
    assert not found, "\n".join(found)


def test_odd_text_in_every_field_ends_cleanly(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Expressions, templates, globs, regexes and tags hold their own languages: fuzz them."""

    @settings(
        max_examples=_examples(request, 30, long=1600),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(slot=st.sampled_from(sorted(SLOTS)), text=odd_text)
    def check(slot: str, text: str) -> None:
        _clean(tmp_path / "case", _medium_with(slot, text))

    check()


SUBPROCESS_SEEDS = (0, 3, 8, 25, 40, 77) if FUZZ_LONG else (3, 25)
"""Through the console script: one case validate refuses (3) and one every command runs on
(25) in the suite; with ``--fuzz-long`` four more."""


def run_in_subprocess(argv: list[str]) -> Outcome:
    """The installed console script, as CI runs it: a real process, real streams."""
    script = Path(sys.executable).with_name("stagegate")
    fallback = [sys.executable, "-c", "from stagegate.cli import main; main()"]
    command = [str(script)] if script.exists() else fallback
    env = {k: v for k, v in os.environ.items() if k != "STAGEGATE_TRACEBACK"}
    start = time.monotonic()
    proc = subprocess.run(
        [*command, *argv],
        capture_output=True,
        env=env,
        timeout=COMMAND_SECONDS * 3,
        check=False,
    )
    return Outcome(
        tuple(argv),
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
        time.monotonic() - start,
    )


@pytest.mark.parametrize("seed", SUBPROCESS_SEEDS)
def test_mutated_inputs_end_cleanly_in_a_real_process(seed: int, tmp_path: Path) -> None:
    case = mutate(seed, seeds())
    found = exercise(tmp_path / "case", case.files, run_in_subprocess)
    assert not found, case.describe() + "\n" + "\n".join(found)


def test_hostile_bytes_end_cleanly_in_a_real_process(tmp_path: Path) -> None:
    """Invalid UTF-8, NUL, a lone surrogate escape and a python tag, through real streams."""
    for junk in (b"\xff\xfe", b"\x00", b'summary: "\\ud800"\n', b"x: !!python/name:os.system\n"):
        files = dict(seeds()["medium"])
        files["migration.yaml"] = junk + files["migration.yaml"]
        found = exercise(tmp_path / "case", files, run_in_subprocess)
        assert not found, f"{junk!r}:\n" + "\n".join(found)


def test_arbitrary_bytes_as_files_end_cleanly(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    @settings(
        max_examples=_examples(request, 60, long=1200),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        target=st.sampled_from(["migration.yaml", "stages/01-new-build.yaml"]),
        prefix=st.integers(min_value=0, max_value=4000),
        junk=st.binary(max_size=200),
    )
    def check(target: str, prefix: int, junk: bytes) -> None:
        files = dict(seeds()["medium"])
        files[target] = files[target][:prefix] + junk
        _clean(tmp_path / "case", files)

    check()
