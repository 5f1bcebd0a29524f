"""`{regex: PATTERN}` references: in the audit, the `retired` check, stale flags and --blame,
searched through git by their fixed texts and confirmed exactly by Python's `re`."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result, story_twin
from stagegate.model.references import fixed_texts, literals, regex_problem

Sg = Callable[..., Result]

MIGRATION = """\
version: 1
migration: regex-refs
summary: The unversioned metapackage name is retired.
stage: 0
flags:
  versioned:
    summary: The metapackage is uploaded under its versioned name.
    references: [{regex: 'VERSIONED_META(?:DATA)?\\b'}]
producers:
  meta:
    when: not versioned
    artifacts: [cuda-python-wheel]
    legacy:
      references:
        - {regex: 'cuda-python-wheel(?!-cuda)'}
        - 'cuda-python-wheel"'
  meta-versioned:
    when: versioned
    artifacts: [cuda-python-wheel-cuda13.4.1]
"""
STAGE = """\
stage: 1
title: Versioned metapackage
set:
  versioned: true
acceptance:
  - check: retired
"""
WORKFLOW = """\
jobs:
  test:
    steps:
      - run: gh run download $ID -p cuda-python-wheel
      - run: gh run download $ID -p cuda-python-wheel-cuda13.4.1
      - name: "cuda-python-wheel"
      - run: echo cuda-python-wheel-cuda12.9.1 and cuda-python-wheel
        if: env.VERSIONED_META == 'true'
      - run: echo VERSIONED_METADATA_X
"""


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True)
    return done.stdout.decode()


def make(tmp_path: Path, migration: str = MIGRATION, workflow: str = WORKFLOW) -> Path:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "migration.yaml").write_text(migration)
    (root / "stages" / "01-versioned.yaml").write_text(STAGE)
    (root / ".github" / "workflows" / "test.yml").write_text(workflow)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tree")
    return root


def audit(sg: Sg, root: Path, *args: str) -> tuple[int, dict[str, object]]:
    result = sg("audit", "--stage", "1", "--format", "json", *args, cwd=root)
    data: dict[str, object] = json.loads(result.out)
    return result.code, data


def test_a_regex_reference_finds_the_unversioned_name_and_not_the_versioned_ones(
    tmp_path: Path, sg: Sg
) -> None:
    root = make(tmp_path)
    code, report = audit(sg, root)
    assert code == 1
    findings = report["findings"]
    assert isinstance(findings, list)
    found = [(f["line"], f["reference"]) for f in findings]
    assert found == [
        (4, "{regex: cuda-python-wheel(?!-cuda)}"),
        (6, "{regex: cuda-python-wheel(?!-cuda)}"),
        (6, 'cuda-python-wheel"'),
        (7, "{regex: cuda-python-wheel(?!-cuda)}"),
    ]
    first = findings[0]
    assert isinstance(first, dict)
    assert first["file"] == ".github/workflows/test.yml" and first["text"].endswith(
        "-p cuda-python-wheel"
    )
    stale = report["stale_flags"]
    assert isinstance(stale, list)
    assert [(r["line"], r["reference"]) for r in stale[0]["references"]] == [
        (8, "{regex: VERSIONED_META(?:DATA)?\\b}")
    ]
    assert stale[0]["searched"] == ["{regex: VERSIONED_META(?:DATA)?\\b}"]


def test_the_column_of_a_regex_finding_is_where_it_matches(tmp_path: Path, sg: Sg) -> None:
    root = make(tmp_path)
    result = sg("audit", "--stage", "1", "--format", "github", cwd=root)
    # line 7 holds cuda-python-wheel-cuda12.9.1 first: the regex matches the later one
    assert "file=.github/workflows/test.yml,line=7,col=52" in result.out


def test_the_retired_check_fails_on_a_regex_leftover_and_passes_once_it_is_gone(
    tmp_path: Path, sg: Sg
) -> None:
    root = make(tmp_path)
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert (
        "producer meta (retired at stage 1): '{regex: cuda-python-wheel(?!-cuda)}' is still in "
        ".github/workflows/test.yml:4: - run: gh run download $ID -p cuda-python-wheel"
    ) in result.out
    clean = "\n".join(
        line for line in WORKFLOW.splitlines() if not re.search(r"cuda-python-wheel(?!-cuda)", line)
    )
    (root / ".github" / "workflows" / "test.yml").write_text(clean + "\n")
    git(root, "commit", "-q", "-am", "clean up")
    again = sg("check", "--stage", "1", cwd=root)
    assert again.code == 0, again.output


def test_blame_covers_regex_findings(tmp_path: Path, sg: Sg) -> None:
    root = make(tmp_path)
    _, report = audit(sg, root, "--blame")
    findings = report["findings"]
    assert isinstance(findings, list)
    assert all(f["blame"]["author"] == "Ada" for f in findings)


def test_a_case_insensitive_regex_has_no_literal_and_is_still_exact(tmp_path: Path, sg: Sg) -> None:
    migration = MIGRATION.replace(
        "'cuda-python-wheel(?!-cuda)'", "'(?i)CUDA-PYTHON-WHEEL(?!-cuda)'"
    )
    assert literals("(?i)CUDA-PYTHON-WHEEL(?!-cuda)") is None
    root = make(tmp_path, migration)
    _, report = audit(sg, root)
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["line"] for f in findings if f["reference"].startswith("{regex")] == [4, 6, 7]


@pytest.mark.parametrize(
    ("pattern", "column", "says"),
    [
        ("cuda-(python", 5, "invalid regex: missing ), unterminated subpattern"),
        ("wheel[", 5, "invalid regex: unterminated character set"),
        ("x*", 0, "this regex matches the empty string"),
        ("(a+)+b", 0, "this regex repeats a group that itself repeats"),
    ],
)
def test_an_invalid_regex_is_a_located_error_naming_its_column(
    tmp_path: Path, sg: Sg, pattern: str, column: int, says: str
) -> None:
    migration = MIGRATION.replace("'cuda-python-wheel(?!-cuda)'", f"'{pattern}'")
    root = make(tmp_path, migration)
    result = sg("validate", cwd=root)
    assert result.code == 2
    line = next(
        n for n, text in enumerate(migration.splitlines(), start=1) if f"'{pattern}'" in text
    )
    col = migration.splitlines()[line - 1].index(f"'{pattern}'") + 2 + column
    assert f"migration.yaml:{line}:{col}: $.producers.meta.legacy.references[0].regex: {says}" in (
        result.err
    )


def test_a_flag_regex_is_checked_too(tmp_path: Path, sg: Sg) -> None:
    migration = MIGRATION.replace("'VERSIONED_META(?:DATA)?\\b'", "'VERSIONED(META'")
    result = sg("validate", cwd=make(tmp_path, migration))
    assert result.code == 2
    assert (
        "migration.yaml:8:36: $.flags.versioned.references[0].regex: invalid regex: missing ), unterminated subpattern"
        in result.err
    )


def test_a_reference_mapping_with_another_key_is_a_schema_error(tmp_path: Path, sg: Sg) -> None:
    migration = MIGRATION.replace("{regex: 'cuda-python-wheel(?!-cuda)'}", "{regexp: 'x'}")
    result = sg("validate", cwd=make(tmp_path, migration))
    assert result.code == 2
    assert "$.producers.meta.legacy.references[0].regexp: unknown key 'regexp'" in result.err


# --------------------------------------------------------------------------- the prefilter


def test_literals_are_read_off_the_parsed_expression() -> None:
    assert literals("cuda-python-wheel(?!-cuda)") == ("cuda-python-wheel",)
    assert literals("(foo|bar)baz") == ("barbaz", "foobaz")
    assert literals("a(?i:b)cd") == ("cd",)
    assert literals("x{3}y") == ("xxxy",)
    assert literals("(?x) a b c") == ("abc",)
    assert literals("[ab]x|\\d") is None  # \d is any Unicode digit: no fixed text
    assert literals("\\w+") is None
    assert fixed_texts(["plain", *[]]) == (["plain"], False)


def test_regex_problem_accepts_what_it_should() -> None:
    assert regex_problem("cuda-python-wheel(?!-cuda)") is None
    assert regex_problem("(?<=a)") is None  # zero width, but never on an empty line
    problem = regex_problem("a{2")
    assert problem is None or problem[1] >= 0


ALPHABET = "ab-c(XY)"


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    atoms = ["a", "b", "-", "c", "ab", "[ab]", "[a-c]", ".", "\\w", "X", "\\b", "^", "$"]
    out = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.15 and depth < 2:
            out.append(f"(?:{_random_pattern(rng, depth + 1)}|{_random_pattern(rng, depth + 1)})")
        elif roll < 0.25 and depth < 2:
            out.append(f"(?i:{_random_pattern(rng, depth + 1)})")
        elif roll < 0.35 and depth < 2:
            out.append(f"(?!{_random_pattern(rng, depth + 1)})")
        else:
            atom = rng.choice(atoms)
            out.append(atom + rng.choice(["", "", "", "+", "*", "?", "{2}", "{1,3}"]))
    return "".join(out)


def test_every_line_a_regex_matches_holds_one_of_its_literals() -> None:
    """The prefilter may report more lines than the regex matches, never fewer."""
    rng = random.Random(12)
    lines = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12))) for _ in range(400)]
    checked = 0
    for _ in range(600):
        pattern = _random_pattern(rng)
        if regex_problem(pattern) is not None:
            continue
        found = literals(pattern)
        if found is None:
            continue
        compiled = re.compile(pattern)
        for line in lines:
            if compiled.search(line):
                checked += 1
                assert any(text in line for text in found), (pattern, found, line)
    assert checked > 1000


def test_a_regex_audit_finds_exactly_the_lines_python_re_matches(tmp_path: Path, sg: Sg) -> None:
    rng = random.Random(5)
    body = "\n".join(
        "".join(rng.choice(ALPHABET + " ") for _ in range(rng.randint(0, 30))) for _ in range(800)
    )
    patterns = ["ab(?!c)", "a[bc]-X", "(?:XY|Y\\))b", "\\bc-", "b{2}", "(?i)xy"]
    refs = "\n".join(f"        - {{regex: '{p}'}}" for p in patterns)
    migration = textwrap.dedent(MIGRATION).replace(
        "        - {regex: 'cuda-python-wheel(?!-cuda)'}\n        - 'cuda-python-wheel\"'", refs
    )
    root = make(tmp_path, migration, body + "\n")
    _, report = audit(sg, root)
    findings = report["findings"]
    assert isinstance(findings, list)
    got = {(f["line"], f["reference"]) for f in findings}
    want = {
        (n, f"{{regex: {p}}}")
        for n, line in enumerate(body.splitlines(), start=1)
        for p in patterns
        if re.search(p, line)
    }
    assert got == want and len(want) > 100


def test_the_stories_fixed_strings_alone_find_none_of_the_unquoted_leftovers(
    tmp_path: Path, sg: Sg
) -> None:
    """Why the story needs a regex: the example's quoted strings miss every unquoted line."""
    root = story_twin("unquoted-metapackage-leftovers", "broken", tmp_path / "repo")
    text = (root / "migration.yaml").read_text()
    (root / "migration.yaml").write_text(
        text.replace("        - {regex: 'cuda-python-wheel(?!-cuda)'}\n", "")
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tree")
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output


def test_hostile_expressions_fall_back_to_reading_every_line_without_failing(
    tmp_path: Path, sg: Sg
) -> None:
    many = "(" + "|".join(f"{chr(0x4E00 + i)}{i}y" for i in range(200)) + ")"
    assert literals(many) is None  # 200 alternatives: more than a prefilter may hold
    assert literals("(" + "|".join(f"x{i}y" for i in range(200)) + ")") == ("x",)
    deep = "(" * 400 + "wheel" + ")" * 400
    assert regex_problem(deep) is None or regex_problem(deep) is not None  # never raises
    assert literals(deep) in (None, ("wheel",))
    newline = "cuda-python-wheel\n"
    assert literals(newline) is None
    migration = MIGRATION.replace(
        "{regex: 'cuda-python-wheel(?!-cuda)'}", "{regex: '(?:x1y|x2y|cuda-python-wheel)(?!-cuda)'}"
    )
    root = make(tmp_path, migration)
    _, report = audit(sg, root)
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["line"] for f in findings if f["reference"].startswith("{regex")] == [4, 6, 7]


def test_a_long_line_is_shown_around_where_the_regex_matched(tmp_path: Path, sg: Sg) -> None:
    long = "      - run: echo " + "x" * 400 + " && gh run download $ID -p cuda-python-wheel\n"
    root = make(tmp_path, workflow="jobs:\n  test:\n    steps:\n" + long)
    result = sg("check", "--stage", "1", cwd=root)
    assert result.code == 1
    assert "-p cuda-python-wheel" in result.out


def test_a_regex_that_could_backtrack_for_ever_is_refused_not_run(tmp_path: Path) -> None:
    """`(a+)+b` against a long line of a's takes exponential time in `re`: refused."""
    assert regex_problem("(a+)+b") is not None
    assert regex_problem("(?:x{1,3})+y") is not None
    assert regex_problem("(a+)++b") is None  # possessive: never backtracks
    assert regex_problem("(?:x{2})+y") is None  # a fixed count inside is fine
    assert regex_problem("x(?:-\\w+)?y") is None  # at most once outside
