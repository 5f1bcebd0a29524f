"""What a new user reads while adopting (issue 38): stage-file names of whole words, the
status of a migration without stages, a check listed twice, the audit's folder, drift
with and without --strict, and a job that a stage ahead turns on before it exists."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import init, pin_git

Sg = Callable[..., Result]


@pytest.fixture(autouse=True)
def _pinned_git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


BARE = """\
version: 1
migration: bare
stage: 0
flags:
  f:
    summary: A flag.
producers:
  p:
    artifacts: [p-wheel]
invariants:
  - check: unique-artifacts
"""


@pytest.mark.parametrize(
    ("title", "name"),
    [
        (
            "Upload to PyPI from the tag run, then retire the PyPI file job",
            "01-upload-to-pypi-from-the-tag-run-then.yaml",
        ),
        ("Build the sdist in its own job", "01-build-the-sdist-in-its-own-job.yaml"),
        ("x" * 50 + " and more", "01-" + "x" * 50 + ".yaml"),  # one long word stays whole
        ("!!!", "01-stage.yaml"),
    ],
)
def test_new_stage_names_never_end_in_a_cut_word(
    tmp_path: Path, sg: Sg, title: str, name: str
) -> None:
    (tmp_path / "migration.yaml").write_text(BARE, encoding="utf-8")
    result = sg("new-stage", title, cwd=tmp_path)
    assert result.code == 0, result.output
    assert [p.name for p in (tmp_path / "stages").iterdir()] == [name]


def test_the_stage_skeleton_suggests_what_the_invariants_do_not_run(tmp_path: Path, sg: Sg) -> None:
    (tmp_path / "migration.yaml").write_text(BARE + "  - check: flags-wired\n", encoding="utf-8")
    assert sg("new-stage", "First", cwd=tmp_path).code == 0
    text = (tmp_path / "stages" / "01-first.yaml").read_text(encoding="utf-8")
    assert "#   - check: retired           # what this stage retires is gone" in text
    assert "check: flags-wired" not in text  # an invariant already: it runs at every stage
    assert "# release_changes:" in text


def test_status_before_any_stage_says_how_to_add_one(tmp_path: Path, sg: Sg) -> None:
    (tmp_path / "migration.yaml").write_text(BARE, encoding="utf-8")
    result = sg("status", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "bare: stage 0 of 0: before the migration" in result.out
    assert "last stage" not in result.out and "audit" not in result.out
    assert result.out.rstrip().endswith(
        'no stages yet: add the first with `stagegate new-stage "TITLE"`, then check it '
        "with `stagegate check --all`."
    )


def test_a_check_listed_as_invariant_and_in_a_stage_runs_once(tmp_path: Path, sg: Sg) -> None:
    (tmp_path / "migration.yaml").write_text(BARE, encoding="utf-8")
    (tmp_path / "stages").mkdir()
    (tmp_path / "stages" / "01-first.yaml").write_text(
        "stage: 1\ntitle: First\nset:\n  f: true\nacceptance:\n"
        "  - check: unique-artifacts\n  - check: inputs-satisfied\n"
        "  - check: unique-artifacts\n",
        encoding="utf-8",
    )
    result = sg("check", "--stage", "1", "--format", "json", cwd=tmp_path)
    assert result.code == 0, result.output
    results = json.loads(result.out)["results"]
    assert [(r["label"], r["origin"]) for r in results] == [
        ("unique-artifacts", "invariant"),
        ("inputs-satisfied", "acceptance"),
    ]


def test_audit_names_the_work_tree_from_the_current_folder(tmp_path: Path, sg: Sg) -> None:
    repo = init(tmp_path / "repo")
    repo.write("migration.yaml", BARE)
    repo.write("ci/build.sh", "echo\n")
    repo.commit("bare")
    at_top = sg("audit", cwd=repo.root)
    below = sg("audit", "-f", "../migration.yaml", cwd=repo.root / "ci")
    assert "searched the files git tracks in ./, except" in at_top.out
    assert "searched the files git tracks in ../, except" in below.out
    assert str(tmp_path) not in at_top.out + below.out


DRIFT = """\
version: 1
migration: ahead
stage: 0
flags:
  new-job:
    summary: The job the flip adds.
producers:
  wheels:
    artifacts: [wheel]
    jobs: [".github/workflows/ci.yml#build"]
  sdist:
    when: new-job
    artifacts: [sdist]
    jobs: [".github/workflows/ci.yml#sdist"]
releases:
  pypi:
    tags: ["v*"]
    select: ["*"]
    jobs: [".github/workflows/ci.yml#release"]
invariants:
  - check: workflows
"""

CI = """\
on: {push: {tags: ["v*"]}}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: acme/check-version@v1
      - uses: actions/upload-artifact@v4
        with: {name: wheel, path: dist}
  release:
    needs: [build]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with: {path: dist, merge-multiple: true}
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


@pytest.fixture
def ahead(tmp_path: Path) -> Path:
    repo = init(tmp_path / "ahead")
    repo.write("migration.yaml", DRIFT)
    repo.write("stages/01-sdist.yaml", "stage: 1\ntitle: Sdist\nset:\n  new-job: true\n")
    repo.write(".github/workflows/ci.yml", CI)
    repo.commit("ahead")
    return repo.root


def test_a_job_a_stage_ahead_turns_on_is_readiness_until_the_flip(ahead: Path, sg: Sg) -> None:
    now = sg("drift", cwd=ahead)
    assert now.code == 0 and "unknown-job" not in now.out  # sdist is off at stage 0
    every = sg("check", "--all", cwd=ahead)
    assert every.code == 0, every.output
    assert (
        "- unknown-job: producer sdist: jobs entry '.github/workflows/ci.yml#sdist' "
        "(migration.yaml:14) names no job of the workflows read (.github/workflows/ci.yml) yet: "
        "the job does not exist yet; the pull request that flips to stage 1 adds it (or, if "
        "you meant '.github/workflows/ci.yml#build' (.github/workflows/ci.yml:3), fix the "
        "entry)." in every.out
    )
    assert sg("check", "--all", "--ahead=fail", cwd=ahead).code == 1
    # at the current stage, the same entry is a finding to fix
    (ahead / "migration.yaml").write_text(DRIFT.replace("stage: 0\n", "stage: 1\n"))
    current = sg("drift", cwd=ahead)
    assert current.code == 1
    assert (
        "names no job of the workflows read (.github/workflows/ci.yml): fix the entry or "
        "workflows.paths; did you mean '.github/workflows/ci.yml#build' "
        "(.github/workflows/ci.yml:3)?" in current.out
    )


def test_drift_and_drift_strict_word_a_line_the_same(ahead: Path, sg: Sg) -> None:
    plain, strict = sg("drift", cwd=ahead), sg("drift", "--strict", cwd=ahead)
    assert (plain.code, strict.code) == (0, 1)
    unread = (
        "1 step where artifacts flow is not read (declare remote actions under "
        "workflows.actions, bind what an if: reads; --strict fails on them)"
    )
    assert plain.out.splitlines()[0] == strict.out.splitlines()[0] == unread
    assert plain.out.splitlines()[-1] == (
        "drift at stage 0: 1 workflow file, 1 upload, 1 download: no drift"
    )
    assert strict.out.splitlines()[-1] == (
        "drift at stage 0: 1 workflow file, 1 upload, 1 download: no drift; "
        "--strict fails on the 1 step not read"
    )
