"""verify-pr on real throwaway repositories: what it accepts, what it refuses, and why."""

from __future__ import annotations

import atexit
import json
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import (
    SMALL,
    Repo,
    copy_repo,
    example_repo,
    init,
    pin_git,
    small_repo,
    write_shipped_example,
    write_small,
)

Sg = Callable[..., Result]


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _set_stage(repo: Repo, stage: int) -> None:
    text = repo.read("migration.yaml")
    current = next(line for line in text.splitlines() if line.startswith("stage: "))
    repo.write("migration.yaml", text.replace(current + "\n", f"stage: {stage}\n", 1))


_MADE: dict[int, Repo] = {}
"""The repositories ``_at_stage`` copies, each made once a process."""


def _at_stage(tmp_path: Path, stage: int) -> Repo:
    """The small migration, committed once at stage 0 and once per stage up to ``stage``:
    a copy of the one made the first time a test asked for it."""
    if stage not in _MADE:
        made = Path(tempfile.mkdtemp(prefix="stagegate-at-stage-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        repo = small_repo(made / "repo")
        for s in range(1, stage + 1):
            _set_stage(repo, s)
            repo.commit(f"Flip to stage {s}")
        _MADE[stage] = repo
    return copy_repo(_MADE[stage], tmp_path / "repo")


# --------------------------------------------------------------------------- accepted


def test_one_honest_flip_per_commit_verifies_through_the_example(tmp_path: Path, sg: Sg) -> None:
    repo = example_repo(tmp_path / "repo")
    for stage in range(1, 8):
        flipped = sg("advance", cwd=repo.root)
        assert flipped.code == 0, flipped.output
        repo.commit(f"Flip to stage {stage}")
        assert repo.git("diff", "--numstat", "HEAD~1", "HEAD") == "1\t1\tmigration.yaml\n"
        verdict = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
        assert verdict.code == 0, verdict.output
        assert (
            f"ok    one-step: the stage moves forward by one: {stage - 1} -> {stage}" in verdict.out
        )
        assert "verify-pr: accepted." in verdict.out
    assert repo.status() == ""
    log = sg("log", cwd=repo.root)
    assert log.code == 0
    assert "7 stage flips, oldest first:" in log.out
    assert "6 -> 7  Legacy retirement" in log.out


def test_the_shipped_example_with_its_stage_tests_flips_and_verifies(
    tmp_path: Path, sg: Sg
) -> None:
    repo = init(tmp_path / "repo")
    write_shipped_example(repo.root)
    repo.commit("Add the worked example with its stage tests")
    repo.git("checkout", "-q", "-b", "flip-1")
    flipped = sg("advance", cwd=repo.root)
    assert flipped.code == 0, flipped.output
    assert "ok    pytest: pytest stages/01-version-config-foundations:" in flipped.out
    repo.commit("Flip to stage 1")
    in_place = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert in_place.code == 0, in_place.output
    assert "ok    pytest" in in_place.out and "temporary checkout" not in in_place.out


def test_a_pull_request_that_does_not_flip_runs_the_current_stage_checks(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _at_stage(tmp_path, 1)
    repo.write("README.md", "docs\n")
    repo.commit("Docs")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "ok    one-step: the stage stays at 1" in result.out
    assert "checks of stage 1, taken from the base and evaluated on the head:" in result.out


def test_one_check_is_counted_as_one(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 0)
    repo.write("README.md", "docs\n")
    repo.commit("Docs")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "ok    checks-pass: the 1 check of stage 0 (the base's, on the head) passes" in (
        result.out
    )


def test_formatting_and_comments_of_a_past_stage_may_change(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 2)
    repo.edit("stages/01-narrow.yaml", "set:\n  narrow: true\n", "set: {narrow: true}  # tidied\n")
    repo.commit("Tidy stage 1")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "ok    past-stages-unchanged: stages 1..2 (at or below the base stage) unchanged" in (
        result.out
    )


def test_an_honest_rollback_verifies(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 2)
    assert sg("rollback", cwd=repo.root).code == 0
    repo.commit("Roll back to stage 1")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "ok    reversible: the stages left behind are reversible" in result.out


def test_a_detached_head_is_judged_like_a_branch(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 1)
    repo.git("checkout", "-q", "--detach", "HEAD")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "head HEAD (" in result.out


def test_a_base_that_moved_on_is_compared_at_the_merge_base(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 1)
    repo.git("checkout", "-q", "-b", "flip")
    _set_stage(repo, 2)
    repo.commit("Flip to stage 2")
    repo.git("checkout", "-q", "main")
    repo.write("NEWS.md", "main moved on\n")
    repo.commit("Unrelated change on main")
    result = sg("verify-pr", "--base", "main", "--head", "flip", cwd=repo.root)
    assert result.code == 0, result.output
    assert "main is not an ancestor of flip: what the pull request changed is compared with" in (
        result.out
    )
    assert "the checks that judge it are main's." in result.out
    assert "ok    one-step: the stage moves forward by one: 1 -> 2" in result.out


def test_a_new_migration_starts_at_stage_0(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    repo.write("README.md", "project\n")
    repo.commit("Start")
    write_small(repo.root)
    repo.commit("Add the migration")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "ok    new-migration-at-stage-0" in result.out
    _set_stage(repo, 1)
    repo.commit("Start at stage 1 right away")
    result = sg("verify-pr", "--base", "HEAD~2", cwd=repo.root)
    assert result.code == 1
    assert (
        "FAIL  new-migration-at-stage-0: migration.yaml is new in this pull request at stage 1"
        in (result.out)
    )


# --------------------------------------------------------------------------- refused


def test_a_new_migration_names_the_invariants_it_could_not_run(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    repo.write("README.md", "project\n")
    repo.commit("Start")
    write_small(repo.root)
    repo.edit(
        "migration.yaml",
        "invariants:\n",
        "invariants:\n  - check: command\n    run: [git, --version]\n",
    )
    repo.commit("Add the migration")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "note: 1 invariant not run (checks that run programs or read files)" in result.out


def test_a_skipped_stage_is_refused(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 0)
    assert sg("advance", "--to", "2", cwd=repo.root).code == 0
    repo.commit("Jump to stage 2")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert (
        "FAIL  one-step: the stage moves from 0 to 2, skipping stage 1; move one stage per pull "
        "request" in result.out
    )
    assert "At migration.yaml:6:8." in result.out
    assert "verify-pr: refused (rule one-step)." in result.out


def test_a_flip_that_weakens_its_own_checks_is_refused(tmp_path: Path, sg: Sg) -> None:
    """The flip to stage 2 widens the release glob (so the extra wheels would be released)
    and, in the same commit, deletes the checks that would notice."""
    repo = _at_stage(tmp_path, 1)
    _set_stage(repo, 2)
    repo.edit("migration.yaml", 'select: ["pkg-py*"]', 'select: ["pkg*"]')
    repo.edit("migration.yaml", "invariants:\n  - check: release-continuity\n    tag: v1.0.0\n", "")
    repo.edit("stages/02-extra.yaml", "  - check: release-continuity\n    tag: v1.0.0\n", "")
    repo.commit("Flip to stage 2 (and quietly drop the continuity checks)")
    assert sg("check", cwd=repo.root).code == 0  # the head's own checks no longer look
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  target-unchanged: this pull request flips to stage 2 and also edits its" in (
        result.out
    )
    assert (
        "- stages/02-extra.yaml:7: $.acceptance[0] removed: {check: release-continuity, "
        "tag: v1.0.0} (base stages/02-extra.yaml:7)" in result.out
    )
    assert "FAIL  release-continuity tag=v1.0.0" in result.out
    assert "pkg-extra-py{py}" in result.out
    assert "note: this pull request changes the invariants (migration.yaml)" in result.out
    assert (
        "verify-pr: refused (rules target-unchanged, checks-pass; 1 check failed)." in result.out
    )


def test_an_edited_past_stage_is_refused_naming_the_lines(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 2)
    repo.edit("stages/01-narrow.yaml", "title: Narrow the release glob", "title: Narrowed")
    repo.edit("stages/01-narrow.yaml", "acceptance:\n  - check: unique-artifacts\n", "")
    repo.commit("Rewrite history")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  past-stages-unchanged: stages 1..2 (at or below the base stage) must not" in (
        result.out
    )
    assert (
        "- stages/01-narrow.yaml:2: $.title changed: title: Narrowed; base line 2: "
        "title: Narrow the release glob" in result.out
    )
    assert "$.acceptance removed: [{check: unique-artifacts}]" in result.out


def test_many_edits_of_a_past_stage_are_listed_up_to_a_limit_that_is_stated(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _at_stage(tmp_path, 2)
    repo.edit(
        "stages/01-narrow.yaml",
        "acceptance:\n",
        "acceptance:\n" + "  - check: tags-routed\n    tags: [v1.0.0]\n" * 25,
    )
    repo.commit("Rewrite history at length")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "The first 20 of 25 changes are listed." in result.out
    assert result.out.count("$.acceptance[") == 20


def test_a_rollback_past_an_irreversible_stage_is_refused(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 3)
    _set_stage(repo, 2)
    repo.commit("Try to go back")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert (
        "FAIL  reversible: the stage moves back past a stage that is not reversible." in result.out
    )
    assert (
        "stage 3 (The end state) is not reversible (stages/03-final.yaml:6: reversible: false)"
        in (result.out)
    )


def test_flipping_to_a_stage_added_in_the_same_pull_request_is_refused(
    tmp_path: Path, sg: Sg
) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    (repo.root / "stages" / "03-final.yaml").unlink()
    _set_stage(repo, 2)
    repo.commit("Two stages, at stage 2")
    write_small(repo.root)
    _set_stage(repo, 3)
    repo.commit("Add stage 3 and flip to it")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  target-defined: stage 3 (stages/03-final.yaml) is new in this pull request" in (
        result.out
    )
    assert "note: the checks of stage 3 were not run: the base does not define it." in result.out


def test_the_summary_of_a_refused_flip_does_not_claim_checks_that_never_ran(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    (repo.root / "stages" / "03-final.yaml").unlink()
    _set_stage(repo, 2)
    repo.commit("Two stages, at stage 2")
    write_small(repo.root)
    _set_stage(repo, 3)
    repo.commit("Add stage 3 and flip to it")
    result = sg("verify-pr", "--base", "HEAD~1", "--format", "github", cwd=repo.root)
    assert result.code == 1, result.output
    text = summary.read_text()
    assert "### stagegate verify-pr: **refused**" in text
    assert "The checks of stage 3 were not run." in text
    assert "all passed" not in text


def test_command_checks_come_from_the_base(tmp_path: Path, sg: Sg) -> None:
    guard = "import os, sys; sys.exit(os.path.exists('forbidden.txt'))"
    invariant = (
        f"  - check: command\n    run: [{json.dumps(sys.executable)}, -c, {json.dumps(guard)}]\n"
    )
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.write("migration.yaml", SMALL + invariant)
    repo.commit("Guard against forbidden.txt")
    repo.write("forbidden.txt", "here\n")
    repo.edit("migration.yaml", json.dumps(guard), json.dumps("pass"))
    repo.commit("Add the forbidden file and defuse the guard")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  command: 1 problem" in result.out
    assert f"- `{shlex.join([sys.executable, '-c', guard])}` exited 1" in result.out
    assert "note: this pull request changes the invariants (migration.yaml)" in result.out
    assert repo.status() == ""


def test_stage_tests_come_from_the_base_and_the_work_tree_stays(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 1)
    repo.edit("stages/02-extra.yaml", "acceptance:\n", "acceptance:\n  - check: pytest\n")
    repo.write(
        "stages/02-extra/test_switch.py",
        "from pathlib import Path\n\n\ndef test_switch_is_on():\n"
        "    assert Path('switch.txt').read_text() == 'on\\n'\n",
    )
    repo.write("switch.txt", "on\n")
    repo.commit("Stage 2 tests the switch")
    main = repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "flip")
    _set_stage(repo, 2)
    repo.write("switch.txt", "off\n")
    repo.edit("stages/02-extra/test_switch.py", "'on\\n'", "'off\\n'")
    repo.commit("Flip to stage 2, switch off, and adjust the test")
    repo.git("checkout", "-q", "main")
    before = repo.status()
    result = sg("verify-pr", "--base", main, "--head", "flip", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  pytest" in result.out
    assert (
        "note: stages/02-extra/ differs at the head; the gate ran the base's version" in result.out
    )
    assert "checks that read files ran in a temporary checkout of the head" in result.out
    assert repo.status() == before
    assert repo.read("switch.txt") == "on\n"
    assert repo.git("worktree", "list").count("\n") == 1


def test_github_format_annotates_the_lines_and_writes_the_summary(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    repo = _at_stage(tmp_path, 1)
    _set_stage(repo, 2)
    repo.edit("stages/01-narrow.yaml", "title: Narrow the release glob", "title: Narrowed")
    repo.commit("Flip and rewrite")
    result = sg("verify-pr", "--base", "HEAD~1", "--format", "github", cwd=repo.root)
    assert result.code == 1
    assert result.out.startswith(
        "::error file=stages/01-narrow.yaml,line=2,col=8,"
        "title=stagegate verify-pr%3A past-stages-unchanged::stages/01-narrow.yaml:2: $.title changed"
    )
    text = summary.read_text()
    assert "### stagegate verify-pr: **refused**" in text
    assert "## small: stage 1 → 2: Extra wheels" in text
    assert "- producer `extras`" in text
    assert "```mermaid\nflowchart LR" in text


def test_json_format(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 1)
    result = sg("verify-pr", "--base", "HEAD~1", "--format", "json", cwd=repo.root)
    assert result.code == 0, result.output
    report = json.loads(result.out)
    assert report["ok"] is True
    assert report["move"] == "forward"
    assert report["base"]["stage"] == 0 and report["head"]["stage"] == 1
    assert [r["rule"] for r in report["rules"]] == [
        "one-step",
        "target-defined",
        "past-stages-unchanged",
        "target-unchanged",
        "flag-values-unchanged",
        "item-states-unchanged",
        "checks-pass",
    ]
    assert {r["check"] for r in report["results"]} == {"release-continuity", "unique-artifacts"}


def test_an_invalid_migration_at_the_head_is_invalid_input(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 0)
    repo.edit("migration.yaml", "when: extra", "when: extar")
    repo.commit("Typo")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 2
    assert "migration.yaml at HEAD (" in result.err
    assert "unknown flag 'extar'; did you mean 'extra'?" in result.err


# --------------------------------------------------------------------------- git trouble


def test_a_shallow_clone_without_the_base_says_how_to_fetch_it(tmp_path: Path, sg: Sg) -> None:
    origin = _at_stage(tmp_path, 1)
    clone = tmp_path / "clone"
    Repo(tmp_path).git("clone", "-q", "--depth", "1", f"file://{origin.root}", str(clone))
    result = sg("verify-pr", "--base", "HEAD~1", cwd=clone)
    assert result.code == 3
    assert "unknown git ref 'HEAD~1': this clone of" in result.err
    assert "is shallow, so older commits are missing; run `git fetch --unshallow`" in result.err
    assert "actions/checkout `fetch-depth: 0`" in result.err


def test_a_shallow_base_without_the_history_between_says_so(tmp_path: Path, sg: Sg) -> None:
    origin = _at_stage(tmp_path, 1)
    origin.git("checkout", "-q", "-b", "flip")
    _set_stage(origin, 2)
    origin.commit("Flip to stage 2")
    clone = Repo(tmp_path / "clone")
    Repo(tmp_path).git(
        "clone", "-q", "--depth", "1", "--branch", "flip", f"file://{origin.root}", str(clone.root)
    )
    clone.git("fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    result = sg("verify-pr", "--base", "origin/main", cwd=clone.root)
    assert result.code == 3
    assert "origin/main and HEAD have no common history in this shallow clone" in result.err
    assert "git fetch --unshallow" in result.err


def test_an_unknown_ref_says_how_to_fetch_it(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 1)
    result = sg("verify-pr", "--base", "origin/main", cwd=repo.root)
    assert result.code == 3
    assert "unknown git ref 'origin/main': no commit by that name in" in result.err
    assert "fetch it with `git fetch origin main:refs/remotes/origin/main`" in result.err
    assert "fetch-depth: 0" in result.err


def test_git_trouble_in_github_format_is_also_an_annotation(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    repo = _at_stage(tmp_path, 1)
    result = sg("verify-pr", "--base", "v9", "--format", "github", cwd=repo.root)
    assert result.code == 3
    assert result.out.startswith("::error title=stagegate verify-pr::unknown git ref 'v9'")
    assert "### stagegate verify-pr: **failed**" in summary.read_text()


def test_outside_a_repository(tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path / "plain")
    result = sg("verify-pr", "--base", "main", cwd=tmp_path / "plain")
    assert result.code == 3
    assert "is not in a git repository; run stagegate inside a git work tree" in result.err


def test_a_repository_without_commits(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    result = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert result.code == 3
    assert "has no commits yet; commit migration.yaml and the stage files first" in result.err


def test_a_bare_repository(tmp_path: Path, sg: Sg) -> None:
    origin = _at_stage(tmp_path, 1)
    Repo(tmp_path).git("clone", "-q", "--bare", str(origin.root), str(tmp_path / "bare.git"))
    result = sg("verify-pr", "--base", "main", cwd=tmp_path / "bare.git")
    assert result.code == 3
    assert "is a bare repository; run stagegate inside a work tree" in result.err


def test_base_is_required(tmp_path: Path, sg: Sg) -> None:
    repo = _at_stage(tmp_path, 1)
    result = sg("verify-pr", cwd=repo.root)
    assert result.code == 2
    assert "Missing option '--base'" in result.err


# --------------------------------------------------------------------------- reading commits


def test_a_migration_in_a_subfolder(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    write_small(repo.root / "ci")
    repo.commit("Add the migration under ci/")
    assert sg("-f", "ci/migration.yaml", "advance", cwd=repo.root).code == 0
    repo.commit("Flip to stage 1")
    result = sg("-f", "ci/migration.yaml", "verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "\n\nverify-pr ci/migration.yaml: base HEAD~1" in result.out  # after the checks
    inside = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root / "ci")
    assert inside.code == 0, inside.output
    log = sg("-f", "ci/migration.yaml", "log", cwd=repo.root)
    assert "0 -> 1  Narrow the release glob" in log.out


def test_the_commit_is_read_from_git_objects_not_the_work_tree(tmp_path: Path) -> None:
    from stagegate.git.repo import open_repository

    repo = small_repo(tmp_path / "repo")
    (repo.root / "inside").symlink_to("stages")
    (repo.root / "outside").symlink_to("../elsewhere")
    repo.commit("Links")
    (repo.root / "migration.yaml").write_text("not yaml: [\n")
    opened = open_repository(repo.root / "stages")
    source = opened.source(opened.resolve("HEAD"))
    assert source.read("migration.yaml") == SMALL.encode()
    assert ("01-narrow.yaml", False) in source.listdir("stages")
    assert ("inside", True) in source.listdir(".")
    assert source.read("inside/02-extra.yaml").startswith(b"stage: 2\n")
    assert not source.escapes("inside") and source.escapes("outside")
    with pytest.raises(FileNotFoundError):
        source.read("outside/anything")
    with pytest.raises(IsADirectoryError):
        source.read("stages")
    with pytest.raises(FileNotFoundError):
        source.read("nope.yaml")
    staged = opened.source(opened.resolve("HEAD"), "stages")
    assert staged.escapes("..") and not staged.escapes("01-narrow.yaml")
