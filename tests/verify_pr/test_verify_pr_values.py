"""Issue #24, item 1: edits of the model that move values between stages.

A flag's ``default`` is stage 0 and every stage builds on it. A pull request that
changes a default, removes a flag or rewrites an item's ``when:`` moves what a later
stage does into a stage the base has rolled out (or into the target), where the later
stage's checks never ran. Each attack is refused by the rule named, each with its
harmless control accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, init, pin_git, write_small

Sg = Callable[..., Result]

EXTRA = "    summary: Build the extra wheels.\n"


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _small(root: Path, stage: int = 0) -> tuple[Repo, str]:
    """The small migration at ``stage``, committed: the base. In it stage 2 sets
    ``extra`` and stage 3 (``reversible: false``) sets ``final``."""
    repo = init(root)
    write_small(repo.root)
    repo.edit("migration.yaml", "stage: 0\n", f"stage: {stage}\n")
    return repo, repo.commit(f"The small migration at stage {stage}")


def _rule_lines(result: Result) -> list[str]:
    return [line for line in result.out.splitlines() if line.startswith("  FAIL")]


def test_a_flip_that_also_changes_a_later_stage_flag_default_is_refused(
    tmp_path: Path, sg: Sg
) -> None:
    """The blocker: 0 -> 1 with ``extra`` on by default makes stage 1 equal stage 2."""
    repo, base = _small(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit("migration.yaml", EXTRA, EXTRA + "    default: true\n")
    repo.commit("Flip to stage 1, and build the extra wheels from stage 0 on")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert _rule_lines(result) == [
        "  FAIL  flag-values-unchanged: the flag values at stage 0 (and at stage 1, the target, "
        "but for the flags it sets) must be the base's: a flag's default is stage 0 and every "
        "stage builds on it, so this edit moves what a later stage does into a stage whose "
        "checks never ran for it. Revert it; to change a flag from now on, set it in a stage "
        "the base has not reached."
    ]
    assert (
        "        - migration.yaml:12: flag extra at stage 0: true (the base: false), "
        "stage 1: true (the base: false)\n" in result.out
    )
    assert result.out.endswith("verify-pr: refused (rule flag-values-unchanged).\n")


def test_the_same_default_edit_without_a_flip_is_refused(tmp_path: Path, sg: Sg) -> None:
    repo, base = _small(tmp_path / "repo", stage=1)
    repo.edit("stages/03-final.yaml", "reversible: false\n", "reversible: false\n")
    repo.edit(
        "migration.yaml",
        "    summary: The end state.\n",
        "    summary: The end state.\n    default: true\n",
    )
    repo.commit("The end state from the start")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert (
        "        - migration.yaml:14: flag final at stage 0: true (the base: false), "
        "stage 1: true (the base: false)\n" in result.out
    )
    assert result.out.endswith("verify-pr: refused (rule flag-values-unchanged).\n")


def test_the_honest_flip_and_unreached_edits_are_accepted(tmp_path: Path, sg: Sg) -> None:
    """Control: the flip alone, a new flag on by default that nothing reads yet, a stage
    the base has not reached setting a flag another stage sets, and a ``when:`` rewritten
    so that it differs only at stages not reached."""
    repo, base = _small(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit(
        "migration.yaml", "flags:\n", "flags:\n  later:\n    summary: Unused.\n    default: true\n"
    )
    repo.edit("stages/03-final.yaml", "  final: true\n", "  final: true\n  extra: false\n")
    repo.edit("migration.yaml", "    when: extra\n", "    when: extra and not final\n")
    repo.commit("Flip to stage 1; stage 3 drops the extra wheels")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
    assert "  ok    flag-values-unchanged: every flag has the base's value at stage 0 (and at " in (
        result.out
    )
    assert (
        "  ok    item-states-unchanged: every producer, consumer and release is active or off "
        "at stage 0 as at the base\n" in result.out
    )


def test_removing_a_flag_is_refused(tmp_path: Path, sg: Sg) -> None:
    repo, base = _small(tmp_path / "repo")
    repo.edit("migration.yaml", "  final:\n    summary: The end state.\n", "")
    repo.edit("stages/03-final.yaml", "set:\n  final: true\n", "")
    repo.commit("No end-state flag")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert (
        "        - migration.yaml: flag final is removed at the head; it has a value at every "
        "stage (the base: false at stage 0)\n" in result.out
    )
    assert result.out.endswith("verify-pr: refused (rule flag-values-unchanged).\n")


def test_a_when_that_switches_an_item_at_a_reached_stage_is_refused(tmp_path: Path, sg: Sg) -> None:
    """At stage 1 (narrow on), ``extras`` moved from ``extra`` to ``narrow`` is built at
    stage 1 already, though stage 2's checks never ran."""
    repo, base = _small(tmp_path / "repo", stage=1)
    repo.edit("migration.yaml", "    when: extra\n", "    when: narrow\n")
    repo.commit("Extra wheels with the narrow release")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert _rule_lines(result)[0].startswith(
        "  FAIL  item-states-unchanged: a producer, consumer or release must stay active or "
        "off at stages 0, 1 as the base has it"
    )
    assert (
        "        - migration.yaml:19: producer extras (when: narrow; the base: extra) at "
        "stage 1: active (the base: off)\n" in result.out
    )
    assert result.out.endswith("verify-pr: refused (rule item-states-unchanged).\n")


def test_a_flip_cannot_also_switch_the_stage_after_it_in(tmp_path: Path, sg: Sg) -> None:
    """1 -> 2 while ``final``'s default moves the irreversible stage 3 into stage 2."""
    repo, base = _small(tmp_path / "repo", stage=1)
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.edit(
        "migration.yaml",
        "    summary: The end state.\n",
        "    summary: The end state.\n    default: true\n",
    )
    repo.commit("Flip to stage 2, the end state with it")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert (
        "        - migration.yaml:14: flag final at stage 0: true (the base: false), stage 1: "
        "true (the base: false), stage 2: true (the base: false)\n" in result.out
    )


# --------------------------------------------------------------------------- item 3: expect

WHEELS2 = """\
  wheels2:
    when: extra
    artifacts: ["pkg-py{py}"]
"""


def _expecting(root: Path) -> tuple[Repo, str]:
    """The small migration at stage 1, its release ``exact`` expecting producer wheels."""
    repo = init(root)
    write_small(repo.root)
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit(
        "migration.yaml",
        '    select: ["pkg-py*"]\n',
        '    select: ["pkg-py*"]\n    expect: [wheels]\n',
    )
    return repo, repo.commit("At stage 1; the exact release ships the wheels producer's")


def _swap_producers(repo: Repo) -> None:
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.edit("migration.yaml", "  wheels:\n", "  wheels:\n    when: not extra\n")
    repo.edit("migration.yaml", "producers:\n", "producers:\n" + WHEELS2)


def test_the_base_expect_holds_when_the_head_rewrites_it(tmp_path: Path, sg: Sg) -> None:
    """A producer with the same names replaces the expected one, and expect follows it."""
    repo, base = _expecting(tmp_path / "repo")
    _swap_producers(repo)
    repo.edit("migration.yaml", "expect: [wheels]", "expect: [wheels2]")
    # and the head declares the move (release_changes: the base's count under verify-pr)
    repo.edit(
        "stages/02-extra.yaml",
        "acceptance:\n",
        "release_changes:\n  - tag: v1.0.0\n    drop: ['pkg-py*']\n    add: ['pkg-py*']\n"
        "acceptance:\n",
    )
    repo.commit("Flip to stage 2; the wheels now come from wheels2")
    assert sg("check", cwd=repo.root).code == 0  # the head's own expect is met
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert "  FAIL  release-continuity tag=v1.0.0: 4 problems (0." in result.out  # streamed
    assert (
        "release exact (migration.yaml:31) still selects all 2 rows of pkg-py{py} (e.g. "
        "pkg-py311) but now takes them from producer wheels2 (migration.yaml:17) instead of "
        "producer wheels (migration.yaml:20), from which it took them at stage 0; changed at "
        "stage 2 (stages/02-extra.yaml)" in result.out
    )
    assert (
        "release exact (migration.yaml:31) is judged by the base's expect (wheels; "
        "base migration.yaml:27), not this one's (wheels2): change expect in a pull request of "
        "its own, before the producers." in result.out
    )
    assert (
        "release exact (migration.yaml:31) selects from producer wheels2 (migration.yaml:17), "
        "which is not in its expect (wheels)" in result.out
    )
    assert (
        "selects nothing from expected producer wheels (migration.yaml:20) (off since stage 2 (extra))."
        in result.out
    )


def test_an_expected_producer_removed_at_the_head_is_a_finding(tmp_path: Path, sg: Sg) -> None:
    repo, base = _expecting(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.edit(
        "migration.yaml",
        '  wheels:\n    artifacts: ["pkg-py{py}"]\n',
        WHEELS2.replace("extra", "true"),
    )
    repo.edit("migration.yaml", "expect: [wheels]", "expect: [wheels2]")
    repo.commit("Flip to stage 2; wheels is now called wheels2")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert (
        "selects nothing from expected producer wheels, which this migration no longer "
        "defines." in result.out
    )


def test_a_flip_that_keeps_the_expected_producer_is_accepted(tmp_path: Path, sg: Sg) -> None:
    """The control."""
    repo, base = _expecting(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.commit("Flip to stage 2")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
