"""A flag is its values, its `env` and its `references` at every stage the base has
reached (rule `flag-readers-unchanged`).

The workflows read a flag by its `env` (`flags --format github` writes it to
$GITHUB_ENV) and its `references`. Swapping two flags' `env` names leaves every flag's
value unchanged by name, yet hands the workflows that read one flag's variable the
values of the other: the irreversible end state's switch turns on with the flip to
stage 1. Each attack beside its control, which keeps its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, init, pin_git, write_small

Sg = Callable[..., Result]

NARROW = "    summary: The release selects by exact name.\n"
EXTRA = "    summary: Build the extra wheels.\n"
FINAL = "    summary: The end state.\n"


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _small(root: Path, stage: int = 0) -> tuple[Repo, str]:
    """The small migration at ``stage`` (stage 1 sets ``narrow``, stage 2 ``extra``, stage
    3, which cannot be undone, ``final``), its flags read by CI: the base."""
    repo = init(root)
    write_small(repo.root)
    repo.edit("migration.yaml", "stage: 0\n", f"stage: {stage}\n")
    repo.edit("migration.yaml", NARROW, NARROW + "    env: SG_NARROW\n")
    repo.edit(
        "migration.yaml", EXTRA, EXTRA + "    env: SG_EXTRA\n    references: [extra-wheels]\n"
    )
    repo.edit("migration.yaml", FINAL, FINAL + "    env: SG_FINAL\n")
    return repo, repo.commit(f"The small migration at stage {stage}")


def _swap(repo: Repo) -> None:
    repo.edit("migration.yaml", "    env: SG_NARROW\n", "    env: SG_SWAP\n")
    repo.edit("migration.yaml", "    env: SG_FINAL\n", "    env: SG_NARROW\n")
    repo.edit("migration.yaml", "    env: SG_SWAP\n", "    env: SG_FINAL\n")


def _rule(result: Result) -> list[str]:
    lines = result.out.splitlines()
    start = next(i for i, line in enumerate(lines) if "  flag-readers-unchanged: " in line)
    end = start + 1
    while end < len(lines) and lines[end].startswith("        - "):
        end += 1
    return lines[start:end]


REFUSED = (
    "must keep the base's `env` and `references`: the workflows read it there by them, and "
    "a renamed or swapped `env` hands those readers another flag's values (a later stage's, "
    "whose checks never ran). Revert it; to rename how a flag is read, do it in a pull "
    "request of its own before any stage sets the flag, or add a new flag that a later "
    "stage sets."
)


def test_a_flip_that_swaps_two_flags_env_names_is_refused(tmp_path: Path, sg: Sg) -> None:
    """0 -> 1, and SG_NARROW now carries `final`, which stage 3 (irreversible) sets: every
    value is unchanged by name, so flag-values-unchanged holds; the swap is refused."""
    repo, base = _small(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    _swap(repo)
    repo.commit("Flip to stage 1")
    assert sg("flags", "--format", "env", cwd=repo.root).out == (
        "SG_FINAL=true\nSG_EXTRA=false\nSG_NARROW=false\n"
    )
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out
    assert "  ok    flag-values-unchanged: " in result.out
    assert _rule(result) == [
        "  FAIL  flag-readers-unchanged: a flag read at stage 0 (and at stage 1, the target) "
        + REFUSED,
        "        - migration.yaml:12: flag narrow `env`: SG_FINAL (the base: SG_NARROW); read "
        "at stage 1",
    ]
    assert result.out.endswith("verify-pr: refused (rule flag-readers-unchanged).\n")


def test_the_same_swap_without_a_flip_is_refused(tmp_path: Path, sg: Sg) -> None:
    repo, base = _small(tmp_path / "repo", stage=1)
    _swap(repo)
    repo.commit("Swap the env names")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out
    assert _rule(result)[1:] == [
        "        - migration.yaml:12: flag narrow `env`: SG_FINAL (the base: SG_NARROW); read "
        "at stage 1"
    ]


def test_references_of_a_flag_read_at_a_reached_stage_cannot_change(tmp_path: Path, sg: Sg) -> None:
    """At stage 2 `extra` is on: its references are what the audit and flags-wired look
    for, and the flip to stage 3 cannot drop them (nor its `env`)."""
    repo, base = _small(tmp_path / "repo", stage=2)
    repo.edit("migration.yaml", "stage: 2\n", "stage: 3\n")
    repo.edit("migration.yaml", "    references: [extra-wheels]\n", "    references: [x]\n")
    repo.edit("migration.yaml", "    env: SG_EXTRA\n", "")
    repo.commit("Flip to stage 3")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out
    assert _rule(result) == [
        "  FAIL  flag-readers-unchanged: a flag read at stages 0, 1, 2 (and at stage 3, the "
        "target) " + REFUSED,
        "        - migration.yaml:14: flag extra `env`: (none) (the base: SG_EXTRA); read at "
        "stages 2, 3",
        "        - migration.yaml:15: flag extra `references`: ['x'] (the base: "
        "['extra-wheels']); read at stages 2, 3",
    ]


def test_a_flag_on_by_default_is_read_from_stage_0(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit("migration.yaml", FINAL, FINAL + "    env: SG_FINAL\n")
    repo.edit(
        "migration.yaml",
        "flags:\n",
        "flags:\n  legacy:\n    summary: Old.\n    default: true\n    env: SG_LEGACY\n",
    )
    base = repo.commit("The small migration, with a legacy flag on")
    repo.edit("migration.yaml", "    env: SG_LEGACY\n", "    env: SG_FINAL\n")
    repo.edit("migration.yaml", FINAL + "    env: SG_FINAL\n", FINAL + "    env: SG_LEGACY\n")
    repo.commit("Swap")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out
    assert _rule(result)[1:] == [
        "        - migration.yaml:13: flag legacy `env`: SG_FINAL (the base: SG_LEGACY); read "
        "at stage 0"
    ]


def test_a_new_flag_and_flags_not_read_yet_may_change(tmp_path: Path, sg: Sg) -> None:
    """Control: the flip to stage 1 adds a flag read by CI, renames the `env` and the
    `references` of `extra` (off and untouched up to stage 1: stage 2 sets it) and swaps
    `extra`'s and `final`'s names (both off at stages 0 and 1), and reorders nothing else."""
    repo, base = _small(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit(
        "migration.yaml", "flags:\n", "flags:\n  later:\n    summary: New.\n    env: SG_LATER\n"
    )
    repo.edit("migration.yaml", "    references: [extra-wheels]\n", "    references: [x, y]\n")
    repo.edit("migration.yaml", "    env: SG_EXTRA\n", "    env: SG_SWAP\n")
    repo.edit("migration.yaml", "    env: SG_FINAL\n", "    env: SG_EXTRA\n")
    repo.edit("migration.yaml", "    env: SG_SWAP\n", "    env: SG_FINAL\n")
    repo.commit("Flip to stage 1; rename what later stages read")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 0, result.out
    assert _rule(result) == [
        "  ok    flag-readers-unchanged: every flag read at stage 0 (and at stage 1, the "
        "target) keeps the base's `env` and `references`"
    ]


def test_references_in_another_order_are_the_same(tmp_path: Path, sg: Sg) -> None:
    """Control: `extra` is read at stage 2; its references listed in another order (and
    written otherwise in YAML) are the same references."""
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit("migration.yaml", "stage: 0\n", "stage: 2\n")
    repo.edit("migration.yaml", EXTRA, EXTRA + "    references: [extra-wheels, {regex: 'x+'}]\n")
    base = repo.commit("The small migration at stage 2")
    repo.edit(
        "migration.yaml",
        "    references: [extra-wheels, {regex: 'x+'}]\n",
        '    references:\n      - regex: x+\n      - "extra-wheels"\n',
    )
    repo.commit("The references, one a line")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 0, result.out
    assert _rule(result)[0].startswith("  ok    flag-readers-unchanged: ")
