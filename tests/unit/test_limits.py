"""Every limit on hostile input: exit 2, the place (FILE:LINE:COL) and what to do.

Each test feeds the smallest input that crosses one limit. The limits live next to
the code that enforces them (``yamlsrc.MAX_*``, ``expr.MAX_*``, ``templates.MAX_*``,
``globs.MAX_*``); docs/security.md lists them with these tests.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from stagegate.engine import budget, globs
from stagegate.load import sources as load
from stagegate.load import yamlsrc
from stagegate.model import expr, templates

STAGE = "stage: 1\ntitle: Switch\n"

BASE = """\
version: 1
migration: demo
stage: 0
axes:
  py: ["312", "313"]
  sha: {{pattern: "[0-9a-f]{{40}}"}}
{axes}flags:
  new:
    summary: The new path.
producers:
  old:
    when: {when}
    artifacts: [{artifact}]
{producers}consumers:
  tests:
    inputs:
      - select: {select}
releases:
  main:
    tags: ["v1.*"]
    select: [{release_select}]
invariants:
  - check: inputs-satisfied
  - check: release-continuity
    tag: v1.0
"""


def write(
    root: Path,
    *,
    axes: str = "",
    when: str = "not new",
    artifact: str = '"old-python{py}-{sha}"',
    producers: str = "",
    select: str = '"old-python{py}-*"',
    release_select: str = '"old-*"',
    stage: str = STAGE,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "stages").mkdir(exist_ok=True)
    text = BASE.format(
        axes=axes,
        when=when,
        artifact=artifact,
        producers=producers,
        select=select,
        release_select=release_select,
    )
    (root / "migration.yaml").write_text(text)
    (root / "stages" / "01-switch.yaml").write_text(stage)
    return root


def line_of(root: Path, needle: str, file: str = "migration.yaml") -> int:
    lines = (root / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def assert_invalid(result: Result, pattern: str) -> None:
    """Exit 2, no traceback (the ``sg`` fixture checks), and a located message."""
    assert result.code == 2, result.output
    assert re.search(pattern, result.err), f"{pattern!r} not in:\n{result.err}"


def test_the_base_migration_is_valid_and_passes(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path)
    assert sg("validate", cwd=root).code == 0
    assert sg("check", "--all", cwd=root).code == 0


# --------------------------------------------------------------------------- files


def test_file_size(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path)
    with (root / "migration.yaml").open("a") as f:
        f.write("#" * yamlsrc.MAX_BYTES)
    assert_invalid(
        sg("validate", cwd=root),
        r"^migration\.yaml:1:1: file is larger than 4,194,304 bytes, the limit\. Split",
    )


def test_file_size_of_a_stage_file(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path, stage=STAGE + "#" * (yamlsrc.MAX_BYTES + 1))
    assert_invalid(
        sg("validate", cwd=root),
        r"stages/01-switch\.yaml:1:1: file is larger than 4,194,304 bytes, the limit",
    )


@pytest.mark.parametrize("command", ["validate", "check", "advance"])
@pytest.mark.parametrize("kind", ["endless device", "named pipe"])
def test_a_file_that_never_ends_is_refused(
    kind: str, command: str, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """A link to /dev/zero would be read until memory runs out; a pipe would wait forever."""
    root = write(tmp_path)
    (root / "migration.yaml").unlink()
    if kind == "endless device":
        (root / "migration.yaml").symlink_to("/dev/zero")
    else:
        os.mkfifo(root / "migration.yaml")
    assert_invalid(
        sg(command, cwd=root),
        r"^migration\.yaml: cannot read: not a regular file \(a device, pipe or socket\); "
        r"stagegate reads plain files only",
    )


def test_a_file_larger_than_memory_is_not_read_whole(
    tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """A sparse file of 64 GiB: refused after reading one byte past the limit."""
    root = write(tmp_path)
    with (root / "migration.yaml").open("r+b") as f:
        f.truncate(64 * 1024**3)
    assert_invalid(sg("validate", cwd=root), r"^migration\.yaml:1:1: file is larger than")


def test_number_of_stage_files(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path)
    for n in range(2, load.MAX_STAGES + 2):
        (root / "stages" / f"{n:04d}-s.yaml").write_text(f"stage: {n}\ntitle: S\n")
    (root / "stages" / "01-switch.yaml").rename(root / "stages" / "0001-switch.yaml")
    assert_invalid(
        sg("validate", cwd=root),
        r"^migration\.yaml:1:1: \$\.stages_dir: 1,000 stage files; the limit is 999",
    )


def test_bytes_of_all_files_together(tmp_path: Path, sg: Callable[..., Result]) -> None:
    """Stage files just under the per-file limit: the fourth, with migration.yaml, passes 16 MiB."""
    root = write(tmp_path)
    padding = "#" * 99 + "\n"
    for n in range(1, 6):
        text = f"stage: {n}\ntitle: S{n}\n" + padding * (yamlsrc.MAX_BYTES // 100 - 1)
        (root / "stages" / f"0{n}-s{n}.yaml").write_text(text)
    (root / "stages" / "01-switch.yaml").unlink()
    assert_invalid(
        sg("validate", cwd=root),
        r"^stages/04-s4\.yaml:1:1: with this file, the migration's files hold more than "
        r"16,777,216 bytes, the limit",
    )


def test_number_of_check_runs(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit was 10,000 until check --all evaluated stages incrementally (issue 17):
    a migration of 1,000 producers over 50 stages makes about 17,000 runs, in seconds.
    The limit is lowered here to a tenth, so that the test reads 5,000 checks, not 50,000;
    the real one is pinned."""
    from stagegate.load import build

    assert load.MAX_CHECK_RUNS == build.MAX_CHECK_RUNS == 50_000
    monkeypatch.setattr(build, "MAX_CHECK_RUNS", 5_000)
    checks = "  - check: unique-artifacts\n" * (5_000 - 1)
    root = write(tmp_path, stage=STAGE + "acceptance:\n" + checks)
    assert_invalid(
        sg("validate", cwd=root),
        r"^stages/01-switch\.yaml:3:1: \$\.acceptance: the invariants at each of 2 stages and "
        r"the stages' own checks make 5,003 check runs; the limit is 5,000",
    )


def test_nesting_depth(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path)
    depth = yamlsrc.MAX_DEPTH + 1
    with (root / "migration.yaml").open("a") as f:
        f.write("deep: " + "[" * depth + "]" * depth + "\n")
    line = line_of(root, "deep:")
    assert_invalid(
        sg("validate", cwd=root),
        rf"migration\.yaml:{line}:\d+: nested more than 64 levels deep; flatten the structure",
    )


def test_very_deep_nesting_is_refused_without_recursion(
    tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """100,000 levels: far past Python's recursion limit, refused by the iterative reader."""
    root = write(tmp_path)
    with (root / "migration.yaml").open("a") as f:
        f.write("deep: " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert_invalid(
        sg("validate", cwd=root),
        r"migration\.yaml:\d+:\d+: (nested more than 64|invalid YAML: exceeded maximum nesting)",
    )


def test_alias_expansion(tmp_path: Path, sg: Callable[..., Result]) -> None:
    """A billion laughs: nine levels of ten aliases each would be 10^9 values."""
    root = write(tmp_path)
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 9)]
    with (root / "migration.yaml").open("a") as f:
        f.write("\n".join(lines) + "\n")
    result = sg("validate", cwd=root)
    assert_invalid(
        result,
        r"migration\.yaml:\d+:\d+: more than 200,000 values after expanding aliases; "
        r"this looks like an alias bomb",
    )


def test_long_list_of_mixed_types_is_checked_in_linear_time(
    tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """jsonschema compares every pair of a list whose items do not sort; ours does not.

    20,000 values: every pair would be 200 million comparisons (minutes), where reading
    them takes about a second; a larger list proves no more and only reads longer."""
    values = ", ".join(f'"v{i}"' for i in range(20_000))
    root = write(tmp_path, axes=f"  many: [{values}, 7, 7]\n")
    result = sg("validate", cwd=root)
    line = line_of(root, "many:")
    assert_invalid(result, rf"migration\.yaml:{line}:9: \$\.axes\.many: 7 is listed more than once")


def test_huge_integer(tmp_path: Path, sg: Callable[..., Result]) -> None:
    """Python refuses to convert more than 4,300 digits; the reader refuses before it."""
    root = write(tmp_path)
    text = (root / "migration.yaml").read_text().replace("stage: 0", "stage: " + "9" * 5000)
    (root / "migration.yaml").write_text(text)
    assert_invalid(
        sg("validate", cwd=root),
        r"migration\.yaml:3:8: the number 9{20}\.\.\. \(5,000 characters\) is too large "
        r"\(the limit is 64 bits\)",
    )


@pytest.mark.parametrize(
    "value", ["0x" + "f" * 5000, "!!float " + "1" * 400, "-" + "1" * 30, "!!int 0x1" + "0" * 16]
)
def test_integers_beyond_64_bits(value: str, tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path)
    text = (root / "migration.yaml").read_text().replace("stage: 0", "stage: " + value)
    (root / "migration.yaml").write_text(text)
    assert_invalid(sg("validate", cwd=root), r"migration\.yaml:3:8: the number .* is too large")


def test_long_values_are_not_echoed(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path, artifact='"old-' + "x" * 1_000_000 + '"')
    result = sg("validate", cwd=root)
    line = line_of(root, "artifacts:")
    assert_invalid(
        result,
        rf"migration\.yaml:{line}:17: \$\.producers\.old\.artifacts\[0\]: is 1,000,004 "
        r"characters long; the limit is 1,000: shorten it",
    )
    assert len(result.err) < 2000


# --------------------------------------------------------------------------- templates


def test_rows_of_one_template(tmp_path: Path, sg: Callable[..., Result]) -> None:
    values = "[" + ", ".join(f'"{i}"' for i in range(30)) + "]"
    axes = f"  a: {values}\n  b: {values}\n  c: {values}\n"
    root = write(tmp_path, axes=axes, artifact='"old-{a}-{b}-{c}-{py}"')
    line = line_of(root, "old-{a}-{b}-{c}-{py}")
    assert templates.MAX_ROWS == 10_000
    assert_invalid(
        sg("validate", cwd=root),
        rf"migration\.yaml:{line}:17: \$\.producers\.old\.artifacts\[0\]: expands to 54,000 rows; "
        r"the limit is 10,000: split the template or use fewer axis values",
    )


def test_rows_of_all_templates(tmp_path: Path, sg: Callable[..., Result]) -> None:
    """Ten templates of 10,000 rows each, beside the two rows of `old`: over 100,000.

    The limit was 50,000 until check --all evaluated stages incrementally (issue 17): a
    migration of 1,000 producers of 2-4 templates over py x platform makes about 86,000."""
    assert templates.MAX_TOTAL_ROWS == 100_000
    values = "[" + ", ".join(f'"{i}"' for i in range(100)) + "]"
    artifacts = ", ".join(f'"a{k}-{{a}}-{{b}}"' for k in range(11))
    producers = f"  many:\n    artifacts: [{artifacts}]\n"
    root = write(tmp_path, axes=f"  a: {values}\n  b: {values}\n", producers=producers)
    line = line_of(root, '"a0-{a}-{b}"')
    assert_invalid(
        sg("validate", cwd=root),
        rf"migration\.yaml:{line}:\d+: \$\.producers\.many\.artifacts\[9\]: with this one, "
        r"the artifact templates expand to more than 100,000 rows in all, the limit",
    )


# --------------------------------------------------------------------------- expressions


def test_expression_length(tmp_path: Path, sg: Callable[..., Result]) -> None:
    when = '"' + " or ".join(["new"] * 300) + '"'
    root = write(tmp_path, when=when)
    line = line_of(root, "when: ")
    assert_invalid(
        sg("validate", cwd=root),
        rf"migration\.yaml:{line}:\d+: \$\.producers\.old\.when: expression is 2096 "
        rf"characters; the limit is {expr.MAX_LENGTH}: introduce a flag",
    )


def test_expression_nesting(tmp_path: Path, sg: Callable[..., Result]) -> None:
    depth = expr.MAX_DEPTH + 5
    root = write(tmp_path, when='"' + "(" * depth + "new" + ")" * depth + '"')
    line = line_of(root, "when: ")
    assert_invalid(
        sg("validate", cwd=root),
        rf"migration\.yaml:{line}:\d+: \$\.producers\.old\.when: expression nests more than "
        rf"{expr.MAX_DEPTH} levels; simplify it",
    )


def test_expression_of_many_nots(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path, when='"' + "not " * 100 + 'new"')
    assert_invalid(sg("validate", cwd=root), r"migration\.yaml:\d+:\d+: .*nests more than 50")


# --------------------------------------------------------------------------- globs


def test_glob_length(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path, release_select='"' + "*x" * 501 + '"')
    line = line_of(root, "*x*x")
    assert_invalid(
        sg("validate", cwd=root),
        rf"migration\.yaml:{line}:14: \$\.releases\.main\.select\[0\]: is 1,002 characters long; "
        r"the limit is 1,000",
    )


def test_glob_length_in_a_consumer_select(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path, select='"{py}' + "?" * 1000 + '"')
    assert_invalid(sg("validate", cwd=root), r"migration\.yaml:\d+:\d+: .*the limit is 1,000")


@pytest.mark.parametrize("where", ["release", "consumer"])
def test_glob_too_complex_to_decide_names_the_glob(
    where: str, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """``*a`` then 16 ``?``: a subset automaton of 2^17 states; refused, located, exit 2."""
    glob = '"*a' + "?" * 16 + '"'
    root = (
        write(tmp_path, release_select=glob) if where == "release" else write(tmp_path, select=glob)
    )
    assert sg("validate", cwd=root).code == 0  # a valid glob; only deciding it is too costly
    line = line_of(root, "*a????")
    result = sg("check", "--all", cwd=root)
    assert_invalid(
        result,
        rf"^migration\.yaml:{line}:\d+: cannot decide whether glob '\*a\?{{16}}' selects "
        r"old-python312-\{sha\} \(template at migration\.yaml:\d+\): too complex to decide: a "
        r"pattern needs more than 20000 automaton states; simplify",
    )
    assert "internal error" not in result.err


# --------------------------------------------------------------------------- open-axis regexes


@pytest.mark.parametrize("pattern", ["(a*)*b", "(a|aa)*c", "(x+x+)+y", "(a|a?)+z"])
def test_catastrophic_backtracking_regexes_are_decided_quickly(
    pattern: str, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """Regexes that hang a backtracking engine are automata here: linear in the input."""
    axes = f'  v: {{pattern: "{pattern}"}}\n'
    root = write(tmp_path, axes=axes, artifact='"old-python{py}-{sha}", "odd-{v}"')
    assert sg("validate", cwd=root).code == 0
    assert sg("check", "--all", cwd=root).code == 0
    lang = globs.language([globs.Lit("odd-"), globs.Rx(pattern)])
    assert not globs.matches(lang, "odd-" + "a" * 50_000)  # `re` would not return
    assert globs.matches(lang, "odd-" + "a" * 5 + pattern[-1]) == (pattern != "(x+x+)+y")


def test_open_axis_regex_too_complex_to_decide(tmp_path: Path, sg: Callable[..., Result]) -> None:
    """``[ab]*a[ab]{20}``: its deterministic automaton needs 2^21 states: refused, located."""
    axes = '  v: {pattern: "[ab]*a[ab]{20}"}\n'
    root = write(
        tmp_path, axes=axes, artifact='"old-python{py}-{sha}", "odd-{v}"', release_select='"o*"'
    )
    result = sg("check", "--all", cwd=root)
    line = line_of(root, '"o*"')
    assert_invalid(
        result,
        rf"^migration\.yaml:{line}:\d+: cannot decide whether glob 'o\*' selects odd-\{{v\}} "
        r"\(template at migration\.yaml:\d+\): too complex to decide",
    )


@pytest.mark.parametrize(
    ("pattern", "column", "message"),
    [
        ("a{1001}", 1, "repetition count 1001 is over the limit of 1000"),
        ("(a{100}){100}", 8, "regex too complex: it expands to 10000 automaton states"),
        ("(" * 101 + "a" + ")" * 101, 100, "groups nested more than 100 deep"),
        ("(a)\\\\1", 3, "backreferences are not supported"),
        ("(?=a)", 0, "lookaround assertions are not supported"),
    ],
)
def test_open_axis_regex_limits(
    pattern: str, column: int, message: str, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    root = write(tmp_path, axes=f'  v: {{pattern: "{pattern}"}}\n')
    line = line_of(root, "  v: ")
    result = sg("validate", cwd=root)
    assert_invalid(result, rf"migration\.yaml:{line}:\d+: \$\.axes\.v\.pattern: open-axis regex: ")
    assert message in result.err
    located = re.search(rf"migration\.yaml:{line}:(\d+):", result.err)
    assert located is not None
    quote_col = (root / "migration.yaml").read_text().splitlines()[line - 1].index('"') + 1
    assert int(located[1]) == quote_col + 1 + column


def test_regex_length(tmp_path: Path, sg: Callable[..., Result]) -> None:
    root = write(tmp_path, axes='  v: {pattern: "' + "a" * 1001 + '"}\n')
    assert_invalid(
        sg("validate", cwd=root),
        r"migration\.yaml:\d+:\d+: \$\.axes\.v\.pattern: is 1,001 characters long; the limit",
    )


# --------------------------------------------------------------------------- the whole migration


def _many_rows(root: Path) -> Path:
    """900 rows with no fixed text in front: every pair could collide, so each is asked."""
    values = "[" + ", ".join(f'"{i}"' for i in range(30)) + "]"
    producers = '  many:\n    artifacts: ["{sha}-{a}-{b}"]\n'
    root = write(root, axes=f"  a: {values}\n  b: {values}\n", producers=producers)
    with (root / "stages" / "01-switch.yaml").open("a") as f:
        f.write("acceptance:\n  - check: unique-artifacts\n")
    return root


def test_work_budget_of_a_command(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What would take hours (50 million questions at 10,000 rows) is cut off, located.

    The budget is lowered here so that the test is quick (30,000 plus 100 for each of its
    904 rows, a tenth of each); the real one is exercised by
    ``test_work_budget_at_its_real_size`` in the long run."""
    root = _many_rows(tmp_path)
    monkeypatch.setattr(globs, "MAX_WORK", 100_000)
    monkeypatch.setattr(budget, "WORK_PER_ROW", 300)
    line = line_of(root, "unique-artifacts", "stages/01-switch.yaml")
    result = sg("check", "--stage", "1", cwd=root)
    assert_invalid(
        result,
        rf"^stages/01-switch\.yaml:{line}:5: unique-artifacts at stage 1: deciding the "
        r"selections exactly needs more than 371,200 units of work .* too large to check in "
        r"bounded time: start artifact templates and globs with distinct fixed text",
    )


def test_the_example_uses_a_fraction_of_the_work_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sg: Callable[..., Result]
) -> None:
    """The limit leaves room: the worked example's check --all needs under a quarter."""
    from fuzzkit import seeds, write_project

    write_project(tmp_path / "example", seeds()["example"])
    globs._witness.cache_clear()
    globs._search_from.cache_clear()
    globs._language.cache_clear()
    globs._automaton.cache_clear()
    monkeypatch.setattr(globs, "MAX_WORK", globs.MAX_WORK // 4)
    result = sg("check", "--all", cwd=tmp_path / "example")
    assert result.code in (0, 1), result.output
    assert "units of work" not in result.output


@pytest.mark.fuzz_long
def test_work_budget_at_its_real_size(
    tmp_path: Path, sg: Callable[..., Result], request: pytest.FixtureRequest
) -> None:
    if not request.config.getoption("--fuzz-long"):
        pytest.skip("spends the whole budget (seconds): run with --fuzz-long")
    values = "[" + ", ".join(f'"{i}"' for i in range(100)) + "]"
    producers = '  many:\n    artifacts: ["{sha}-{a}-{b}"]\n'
    root = write(tmp_path, axes=f"  a: {values}\n  b: {values}\n", producers=producers)
    with (root / "stages" / "01-switch.yaml").open("a") as f:
        f.write("acceptance:\n  - check: unique-artifacts\n")
    result = sg("check", "--stage", "1", cwd=root)
    assert_invalid(
        result, r"stages/01-switch\.yaml:\d+:5: unique-artifacts at stage 1: .*18,00\d,000"
    )


def test_the_work_allowance_has_a_ceiling(tmp_path: Path) -> None:
    """The allowance grows with rows and stages, but never past MAX_WORK_CEILING."""
    from stagegate.engine import budget
    from stagegate.validation import load as load_migration

    values = "[" + ", ".join(f'"{i}"' for i in range(100)) + "]"
    producers = '  many:\n    artifacts: ["{sha}-{a}-{b}"]\n'
    root = write(tmp_path, axes=f"  a: {values}\n  b: {values}\n", producers=producers)
    migration = load_migration(root / "migration.yaml")
    assert budget.work_limit(migration, 1) == globs.MAX_WORK + 1_000 * 10_004
    assert budget.work_limit(migration, 999) == budget.MAX_WORK_CEILING


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("top", r"migration\.yaml:\d+:3: \$\['k{57}'\.\.\.\]: unknown key 'k{56}\.\.\.; expected"),
        ("flag", r"migration\.yaml:\d+:5: \$\.flags\['k{57}'\.\.\.\]: 'k{56}\.\.\. is not a valid"),
        ("twice", r"migration\.yaml:\d+:3: duplicate key 'k{60}' \(first at line \d+\)"),
    ],
)
def test_long_keys_are_not_echoed(
    where: str, message: str, tmp_path: Path, sg: Callable[..., Result]
) -> None:
    """Keys have no length limit of their own (an explicit `? key` may be megabytes)."""
    root = write(tmp_path)
    key = "k" * 200_000
    text = (root / "migration.yaml").read_text()
    if where == "flag":
        text = text.replace("  new:\n", f"  ? {key}\n  :\n", 1)
    else:
        text += f"? {key}\n: 1\n" * (2 if where == "twice" else 1)
    (root / "migration.yaml").write_text(text)
    result = sg("validate", cwd=root)
    assert_invalid(result, message)
    assert len(result.err) < 1000
