"""`stagegate drift` remembers its output for inputs it has read before (cli/remembered.py).

A second run on the same files prints the same thing without reading the workflows
again; any change to what the first run read (a workflow, a script it calls, a folder's
listing, a link, the migration, the stage, the format, the GitHub context) reads afresh.
Each test runs drift once to remember, changes one thing, and runs it again; the reading
is counted by wrapping the comparison the command calls on a miss.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import FIXTURES, Result

FIXTURE = FIXTURES / "drift" / "repo"
BUILD = ".github/workflows/build.yml"
NAMING_STEP = """\
        run: |
          DOCS="${BASENAME}-docs-${{ inputs.platform }}"
          echo "DOCS_NAME=${DOCS}" >> "$GITHUB_ENV"
"""
SCRIPT_STEP = """\
        run: ./ci/docs-name.sh "${{ inputs.platform }}"
"""
SCRIPT = '#!/usr/bin/env bash\necho "DOCS_NAME=${BASENAME}-docs-$1" >> "$GITHUB_ENV"\n'

Sg = Callable[..., Result]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The drift fixture with the docs' name made by a repository script, and a cache
    folder of the test's own."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    build = root / BUILD
    build.write_text(build.read_text().replace(NAMING_STEP, SCRIPT_STEP))
    (root / "ci").mkdir()
    (root / "ci/docs-name.sh").write_text(SCRIPT)
    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(tmp_path / "cache"))
    return root


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times drift read the workflows (one entry per reading)."""
    from stagegate.ci import drift

    real = drift.drift
    made: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        made.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(drift, "drift", counted)
    yield made


def run(sg: Sg, root: Path, *args: str) -> Result:
    result = sg("drift", *args, cwd=root)
    assert result.code in (0, 1), result.output
    return result


def test_the_second_run_on_the_same_files_prints_the_same_without_reading(
    sg: Sg, repo: Path, readings: list[int]
) -> None:
    first = run(sg, repo)
    assert first.code == 0 and "no drift" in first.out, first.output
    again = run(sg, repo)
    assert (again.code, again.out, again.err) == (first.code, first.out, first.err)
    assert len(readings) == 1
    as_json = run(sg, repo, "--format", "json")  # another format is another entry
    assert json.loads(as_json.out)["ok"] is True
    assert len(readings) == 2


def test_fresh_reads_again_and_prints_the_same(
    sg: Sg, repo: Path, readings: list[int]
) -> None:
    first = run(sg, repo)
    again = run(sg, repo, "--fresh")
    assert (again.code, again.out) == (first.code, first.out)
    assert len(readings) == 2


def test_a_failing_verdict_is_remembered_as_failing(
    sg: Sg, repo: Path, readings: list[int]
) -> None:
    script = repo / "ci/docs-name.sh"
    script.write_text(SCRIPT.replace("-docs-", "-documentation-"))
    first = run(sg, repo)
    assert first.code == 1 and "documentation" in first.out, first.output
    again = run(sg, repo)
    assert (again.code, again.out) == (first.code, first.out)
    assert len(readings) == 1


def test_a_called_script_changed_with_its_time_stamp_kept_is_read_again(
    sg: Sg, repo: Path, readings: list[int]
) -> None:
    """The answer is the script's bytes, not its size or time: an edit of the same length
    with the old time stamp put back is still seen."""
    assert run(sg, repo).code == 0
    script = repo / "ci/docs-name.sh"
    before = script.stat()
    script.write_text(SCRIPT.replace("-docs-", "-dacs-"))  # the same length
    os.utime(script, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = run(sg, repo)
    assert after.code == 1 and "dacs" in after.out, after.output
    assert len(readings) == 2


def test_a_workflow_edit_is_read_again(sg: Sg, repo: Path, readings: list[int]) -> None:
    assert run(sg, repo).code == 0
    build = repo / BUILD
    build.write_text(build.read_text().replace("-tests", "-testfiles", 1))
    assert run(sg, repo).code == 1
    assert len(readings) == 2


def test_a_new_workflow_file_is_read_again(sg: Sg, repo: Path, readings: list[int]) -> None:
    assert run(sg, repo).code == 0
    (repo / ".github/workflows/extra.yml").write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/upload-artifact@v4\n        with:\n"
        "          name: stray\n          path: x\n"
    )
    result = run(sg, repo)
    assert result.code == 1 and "stray" in result.out, result.output
    assert len(readings) == 2


def test_a_deleted_script_is_read_again(
    sg: Sg, repo: Path, readings: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run(sg, repo)
    (repo / "ci/docs-name.sh").unlink()
    gone = run(sg, repo)
    assert len(readings) == 2
    assert gone.out != first.out
    fresh = run_fresh(sg, repo, monkeypatch)
    assert (gone.code, gone.out) == (fresh.code, fresh.out)


def run_fresh(sg: Sg, root: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    """A run with no cache at all: what a reading prints."""
    monkeypatch.setenv("STAGEGATE_NO_CACHE", "1")
    try:
        return run(sg, root)
    finally:
        monkeypatch.delenv("STAGEGATE_NO_CACHE")


def test_a_script_turned_into_a_link_out_of_the_repository_is_read_again(
    sg: Sg, repo: Path, tmp_path: Path, readings: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bytes, reached through a link that leaves the repository: stagegate reads
    nothing from outside it, so the verdict is not the remembered one."""
    assert run(sg, repo).code == 0
    outside = tmp_path / "outside.sh"
    outside.write_text(SCRIPT)
    script = repo / "ci/docs-name.sh"
    script.unlink()
    script.symlink_to(outside)
    linked = run(sg, repo)
    assert len(readings) == 2
    fresh = run_fresh(sg, repo, monkeypatch)
    assert (linked.code, linked.out) == (fresh.code, fresh.out)


@pytest.mark.parametrize(
    "change",
    ["stage", "strict", "github-context", "migration"],
)
def test_what_is_not_a_file_is_part_of_the_entry_too(
    sg: Sg, repo: Path, readings: list[int], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    args: list[str] = []
    assert run(sg, repo).code == 0
    if change == "stage":
        args = ["--stage", "1"]
    elif change == "strict":
        args = ["--strict"]
    elif change == "github-context":
        monkeypatch.setenv("GITHUB_REPOSITORY", "someone/else")
    else:
        migration = repo / "migration.yaml"  # every location of the model moves down
        migration.write_text("# a first line\n" + migration.read_text())
    run(sg, repo, *args)
    assert len(readings) == 2


def test_a_migration_edit_that_changes_nothing_loaded_is_the_same_entry(
    sg: Sg, repo: Path, readings: list[int]
) -> None:
    """The entry holds the migration as loaded, not its bytes: a comment after the last
    line changes no value and no location, so nothing drift prints can differ."""
    first = run(sg, repo)
    migration = repo / "migration.yaml"
    migration.write_text(migration.read_text() + "\n# a comment at the end\n")
    again = run(sg, repo)
    assert (again.code, again.out) == (first.code, first.out)
    assert len(readings) == 1


def test_an_entry_altered_in_the_cache_is_not_read(
    sg: Sg, repo: Path, tmp_path: Path, readings: list[int]
) -> None:
    """Someone without the cache's key (a restored cache, a pull request's files) rewrites
    the remembered output to say all is well: the entry's seal no longer holds."""
    script = repo / "ci/docs-name.sh"
    script.write_text(SCRIPT.replace("-docs-", "-documentation-"))
    first = run(sg, repo)
    assert first.code == 1
    (entry,) = (tmp_path / "cache/verdicts").iterdir()
    seal, _, body = entry.read_bytes().partition(b"\n")
    data = json.loads(body)
    data.update(ok=True, out="no drift\n")
    entry.write_bytes(seal + b"\n" + json.dumps(data).encode())
    again = run(sg, repo)
    assert (again.code, again.out) == (first.code, first.out)
    assert len(readings) == 2


def test_no_cache_means_no_entry(
    sg: Sg, repo: Path, tmp_path: Path, readings: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAGEGATE_NO_CACHE", "1")
    run(sg, repo)
    run(sg, repo)
    assert len(readings) == 2
    assert not (tmp_path / "cache/verdicts").exists()


def test_a_comparison_past_its_work_budget_exits_2_at_the_stage(
    sg: Sg, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deciding the names exactly is bounded: past the budget, drift says the migration
    is too large at its `stage:` line and exits 2 (it was an internal error, exit 70)."""
    from stagegate.engine import budget

    monkeypatch.setattr(budget, "work_limit", lambda migration, stages=1: 10)
    result = sg("drift", cwd=repo)
    assert result.code == 2, result.output
    assert result.err.startswith("migration.yaml:6:8: drift at stage 0: deciding the selections")
    assert not (repo.parent / "cache/verdicts").exists()  # nothing remembered
