"""verify-pr's `releases-as-declared`: a pull request that flips a stage may change what
the real release jobs ship (their upload contexts, as `stagegate continuity` reads them)
only as the target stage's release_changes, the base's, declare. Each refusal beside a
control that passes, so that no test can pass by refusing everything."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import (
    WHEELS_DECLARED,
    WHEELS_LINUX_ONLY,
    WHEELS_MIGRATION,
    WHEELS_RELEASE,
    Repo,
    dedent,
    init,
    pin_git,
)

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"

WORKFLOW = WHEELS_RELEASE
LINUX_ONLY = WHEELS_LINUX_ONLY

MIGRATION = WHEELS_MIGRATION
# the model says the stage changes nothing for the release; the workflows will say otherwise
QUIET = "stage: 1\ntitle: Tidy the workflows\n"
DECLARED = WHEELS_DECLARED


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def base(root: Path, stage_file: str, migration: str = MIGRATION) -> tuple[Repo, str]:
    repo = init(root)
    repo.write("migration.yaml", migration)
    repo.write("stages/01-step.yaml", stage_file)
    repo.write(WF, WORKFLOW)
    return repo, repo.commit("The migration, at stage 0")


def flip(repo: Repo, workflow: str = LINUX_ONLY) -> None:
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write(WF, workflow)
    repo.commit("Flip to stage 1, and build Linux wheels only")


def rule(result: Result, name: str = "releases-as-declared") -> list[str]:
    """The rule's line and its details, as verify-pr prints them."""
    lines = result.out.splitlines()
    start = next(i for i, line in enumerate(lines) if f"  {name}: " in line)
    end = start + 1
    while end < len(lines) and lines[end].startswith("        - "):
        end += 1
    return lines[start:end]


LOST = (
    "release job publish (.github/workflows/release.yml:15, release rel) loses the upload "
    "context wheels{os=windows-latest} (.github/workflows/release.yml:13, artifact "
    "'wheels-windows-latest')"
)


def test_a_flip_whose_workflows_lose_an_upload_context_undeclared_is_refused(
    tmp_path: Path, sg: Sg
) -> None:
    repo, at = base(tmp_path / "repo", QUIET)
    flip(repo)
    assert sg("check", cwd=repo.root).code == 0  # the model sees nothing wrong
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1, result.out
    assert rule(result) == [
        "  FAIL  releases-as-declared: this pull request flips to stage 1, and the real "
        "release jobs change beyond what stage 1's release_changes (stages/01-step.yaml, the "
        "base's) declare: declare each change there in a pull request of its own (a `drop` of "
        "a lost name, an `add` of a gained one), then flip; or keep the workflows as they were.",
        f"        - {LOST}, which no `drop` of stage 1's release_changes (stages/01-step.yaml) "
        "declares",
    ]
    assert result.out.endswith("verify-pr: refused (rule releases-as-declared).\n")
    data = json.loads(sg("verify-pr", "--base", at, "--format", "json", cwd=repo.root).out)
    (found,) = [r for r in data["rules"] if r["rule"] == "releases-as-declared"]
    assert found["ok"] is False
    assert found["locations"] == [{"file": ".github/workflows/release.yml", "line": 15}]


def test_the_same_flip_with_the_drop_declared_is_accepted(tmp_path: Path, sg: Sg) -> None:
    repo, at = base(tmp_path / "repo", DECLARED)
    flip(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 0, result.out
    assert rule(result) == [
        "  ok    releases-as-declared: 1 upload context lost or gained, each declared by stage "
        "1's release_changes (stages/01-step.yaml)"
    ]


def test_an_entry_added_in_the_flip_itself_does_not_declare_it(tmp_path: Path, sg: Sg) -> None:
    """The pull request writes the entry into the stage it flips to: the base's counts."""
    repo, at = base(tmp_path / "repo", QUIET)
    repo.write("stages/01-step.yaml", QUIET + DECLARED.split("title: No Windows wheels\n")[1])
    flip(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1
    assert rule(result)[0].startswith("  FAIL  releases-as-declared: ")
    assert rule(result, "target-unchanged")[0].startswith("  FAIL  target-unchanged: ")


def test_a_gained_context_needs_an_add(tmp_path: Path, sg: Sg) -> None:
    macos = WORKFLOW.replace(
        "os: [ubuntu-latest, windows-latest]", "os: [ubuntu-latest, windows-latest, macos-latest]"
    )
    repo, at = base(tmp_path / "repo", QUIET)
    flip(repo, macos)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1
    assert rule(result)[1] == (
        "        - release job publish (.github/workflows/release.yml:15, release rel) gains the "
        "upload context wheels{os=macos-latest} (.github/workflows/release.yml:13, artifact "
        "'wheels-macos-latest'), which no `add` of stage 1's release_changes "
        "(stages/01-step.yaml) declares"
    )


def test_a_pull_request_that_does_not_flip_is_unaffected(tmp_path: Path, sg: Sg) -> None:
    repo, at = base(tmp_path / "repo", QUIET)
    repo.write(WF, LINUX_ONLY)
    repo.commit("Build Linux wheels only (no flip)")
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 0, result.out
    assert "releases-as-declared" not in result.out


def test_releases_without_jobs_are_information_never_a_guess(tmp_path: Path, sg: Sg) -> None:
    untied = MIGRATION.replace('    jobs: [".github/workflows/release.yml#publish"]\n', "")
    repo, at = base(tmp_path / "repo", QUIET, untied)
    flip(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 0, result.out
    assert rule(result) == [
        "  ok    releases-as-declared: 1 real release job ships other upload contexts at the "
        "head, but no release of the model lists `jobs`, so they cannot be tied to its "
        "releases and are not compared with release_changes (information)",
        "        - release job publish (.github/workflows/release.yml:15) loses the upload "
        "context wheels{os=windows-latest} (.github/workflows/release.yml:13, artifact "
        "'wheels-windows-latest')",
    ]


def test_a_name_that_cannot_be_worked_out_is_unresolved_not_matched(tmp_path: Path, sg: Sg) -> None:
    """A lost upload whose name the reader cannot evaluate cannot be shown to match the
    declared `drop`: refused as unresolved (control: the declared flip above passes)."""
    unknown = WORKFLOW.replace(
        "name: wheels-${{ matrix.os }}", "name: wheels-${{ matrix.os }}-${{ vars.SUFFIX }}"
    )
    repo = init(tmp_path / "repo")
    repo.write("migration.yaml", MIGRATION)
    repo.write("stages/01-step.yaml", DECLARED)
    repo.write(WF, unknown)
    at = repo.commit("The migration, at stage 0")
    flip(repo, unknown.replace("os: [ubuntu-latest, windows-latest]", "os: [ubuntu-latest]"))
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1, result.out
    assert rule(result)[1].endswith(
        "loses the upload context wheels{os=windows-latest} (.github/workflows/release.yml:13, "
        "artifact 'wheels-windows-latest-${{ vars.SUFFIX }}'): its name cannot be worked out, "
        "so no "
        "`drop` can be shown to declare it (unresolved)"
    )


def test_a_release_job_no_release_lists_is_information(tmp_path: Path, sg: Sg) -> None:
    """The model ties its release to another job: the one that changes is not compared."""
    elsewhere = MIGRATION.replace("release.yml#publish", "other.yml#publish")
    repo, at = base(tmp_path / "repo", QUIET, elsewhere)
    flip(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 0, result.out
    assert rule(result) == [
        "  ok    releases-as-declared: the release jobs the model's releases list in `jobs` "
        "ship the same upload contexts; the others are listed as information",
        "        - release job publish (.github/workflows/release.yml:15) loses the upload "
        "context wheels{os=windows-latest} (.github/workflows/release.yml:13, artifact "
        "'wheels-windows-latest') (information: no release of the model lists "
        ".github/workflows/release.yml#publish in `jobs`)",
    ]


EXTRA_WF = ".github/workflows/docs-release.yml"
EXTRA = dedent(
    """\
    on:
      push:
        tags: ["v*"]
    jobs:
      docs:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/upload-artifact@v4
            with:
              name: docs-html
              path: site/*.tar.gz
      ship-docs:
        needs: docs
        runs-on: ubuntu-latest
        steps:
          - uses: actions/download-artifact@v4
            with:
              name: docs-html
              path: dist
          - uses: pypa/gh-action-pypi-publish@release/v1
    """
)
"""A whole release job of its own, in another workflow file, publishing a new artifact."""


def flip_adding(repo: Repo) -> None:
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write(EXTRA_WF, EXTRA)
    repo.commit("Flip to stage 1, and publish the docs from a new release job")


NEW_JOB = (
    "        - release job ship-docs (.github/workflows/docs-release.yml:12) is new at the head "
    "and gains the upload context docs (.github/workflows/docs-release.yml:10, artifact "
    "'docs-html'), which no entry of stage 1's release_changes (stages/01-step.yaml) "
    "declares: a new release job is declared by an entry "
    "`job: .github/workflows/docs-release.yml#ship-docs` with an `add` of each name it "
    "publishes"
)
DOCS_DECLARED = (
    QUIET + "release_changes:\n"
    "  - job: .github/workflows/docs-release.yml#ship-docs\n    add: ['docs-*']\n"
)


def test_a_flip_that_adds_a_whole_release_job_is_refused(tmp_path: Path, sg: Sg) -> None:
    """The flip adds a release job of its own (another workflow file, a new artifact),
    which no release of the model lists: not information, an undeclared release."""
    repo, at = base(tmp_path / "repo", QUIET)
    flip_adding(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1, result.out
    assert rule(result) == [
        "  FAIL  releases-as-declared: this pull request flips to stage 1, and the real "
        "release jobs change beyond what stage 1's release_changes (stages/01-step.yaml, the "
        "base's) declare: declare each change there in a pull request of its own (a `drop` of "
        "a lost name, an `add` of a gained one), then flip; or keep the workflows as they were.",
        NEW_JOB,
    ]
    assert result.out.endswith("verify-pr: refused (rule releases-as-declared).\n")
    data = json.loads(sg("verify-pr", "--base", at, "--format", "json", cwd=repo.root).out)
    (found,) = [r for r in data["rules"] if r["rule"] == "releases-as-declared"]
    assert found["locations"] == [{"file": EXTRA_WF, "line": 10}]
    shipped = sg("continuity", "--base", at, cwd=repo.root)  # continuity agrees
    assert shipped.code == 1, shipped.out


def test_a_new_release_job_is_refused_also_where_no_release_lists_jobs(
    tmp_path: Path, sg: Sg
) -> None:
    """Without `jobs` in the model, changes of the existing jobs stay information (above);
    a release job the flip adds is still one nobody declared."""
    untied = MIGRATION.replace('    jobs: [".github/workflows/release.yml#publish"]\n', "")
    repo, at = base(tmp_path / "repo", QUIET, untied)
    flip_adding(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1, result.out
    assert rule(result)[1] == NEW_JOB


def test_the_same_new_release_job_declared_is_accepted(tmp_path: Path, sg: Sg) -> None:
    """Control: the base's stage 1 declares the job and what it publishes."""
    repo, at = base(tmp_path / "repo", DOCS_DECLARED)
    assert sg("validate", cwd=repo.root).code == 0
    flip_adding(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 0, result.out
    assert rule(result) == [
        "  ok    releases-as-declared: 1 upload context lost or gained, each declared by stage "
        "1's release_changes (stages/01-step.yaml)"
    ]
    shipped = sg("continuity", "--base", at, cwd=repo.root)  # continuity agrees
    assert shipped.code == 0, shipped.out
    assert "stages/01-step.yaml (release_changes of stage 1, job " in shipped.out


def test_a_declared_new_job_that_publishes_more_is_refused(tmp_path: Path, sg: Sg) -> None:
    """The entry names the job, but its `add` does not cover what it also publishes."""
    repo, at = base(tmp_path / "repo", DOCS_DECLARED)
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write(EXTRA_WF, EXTRA.replace("name: docs-html", "name: sources-tarball"))
    repo.commit("Flip to stage 1, and publish the sources under the docs' entry")
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1, result.out
    assert rule(result)[1] == (
        "        - release job ship-docs (.github/workflows/docs-release.yml:12, release job "
        ".github/workflows/docs-release.yml#ship-docs) gains the upload context docs "
        "(.github/workflows/docs-release.yml:10, artifact 'sources-tarball'), which no `add` "
        "of stage 1's release_changes (stages/01-step.yaml) declares"
    )


def test_a_job_entry_written_in_the_flip_itself_declares_nothing(tmp_path: Path, sg: Sg) -> None:
    repo, at = base(tmp_path / "repo", QUIET)
    repo.write("stages/01-step.yaml", DOCS_DECLARED)
    flip_adding(repo)
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 1
    assert rule(result)[1] == NEW_JOB
    assert rule(result, "target-unchanged")[0].startswith("  FAIL  target-unchanged: ")


def test_a_new_release_job_without_a_flip_is_for_continuity(tmp_path: Path, sg: Sg) -> None:
    """Control: a pull request that does not flip is not held to a stage's declarations;
    `continuity`, the gate of the workflows, refuses the new release it ships."""
    repo, at = base(tmp_path / "repo", QUIET)
    repo.write(EXTRA_WF, EXTRA)
    repo.commit("Publish the docs from a new release job (no flip)")
    result = sg("verify-pr", "--base", at, cwd=repo.root)
    assert result.code == 0, result.out
    assert "releases-as-declared" not in result.out
    shipped = sg("continuity", "--base", at, cwd=repo.root)
    assert shipped.code == 1, shipped.out
    assert "ship-docs" in shipped.out


@pytest.mark.parametrize(
    ("case", "head"),
    [
        # the publish step deleted: the release ships nothing it did
        (
            "publish deleted",
            LINUX_ONLY.replace("      - uses: pypa/gh-action-pypi-publish@release/v1\n", ""),
        ),
        # the upload pinned to a commit with no version comment: the flow cannot be read
        (
            "unversioned pin",
            LINUX_ONLY.replace(
                "actions/upload-artifact@v4", "actions/upload-artifact@" + "0" * 39 + "1"
            ),
        ),
        # files from a URL brought to the publish step
        (
            "curl into dist",
            LINUX_ONLY.replace(
                "      - uses: pypa/gh-action-pypi-publish@release/v1\n",
                "      - run: curl -sSLo dist/x-1.0-py3-none-any.whl https://example.com/x.whl\n"
                "      - uses: pypa/gh-action-pypi-publish@release/v1\n",
            ),
        ),
    ],
)
def test_a_flip_cannot_carry_a_release_that_no_longer_reads_as_it_did(
    sg: Sg, tmp_path: Path, case: str, head: str
) -> None:
    """The declared flip (drop the Windows wheels) is accepted (the control, below); the
    same flip that also deletes the publish step, unpins the upload's version or curls a
    file into dist/ is refused, and continuity on the same pull request fails too."""
    repo, first = base(tmp_path / "r", DECLARED)
    flip(repo, head)
    result = sg("verify-pr", "--base", first, cwd=repo.root)
    assert result.code == 1, (case, result.out)
    assert rule(result)[0].startswith("  FAIL  releases-as-declared: ")
    assert sg("continuity", "--base", first, cwd=repo.root).code == 1
    control, start = base(tmp_path / "c", DECLARED)
    flip(control)
    assert sg("verify-pr", "--base", start, cwd=control.root).code == 0
    assert sg("continuity", "--base", start, cwd=control.root).code == 0
