"""verify-pr, advance and rollback stream their check lines in the text format, as `check`
does: each line as its check finishes, with its duration, so a CI log is not silent
while the checks run. The json and github formats print their report at the end."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import Repo, pin_git, small_repo

Sg = Callable[..., Result]

SECONDS = re.compile(r" \(\d+\.\d\d s\)$", re.MULTILINE)
RC = (
    "  ok    release-continuity tag=v1.0.0: release exact selects the same 2 artifact names "
    "as at stage 0\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    pin_git(monkeypatch)
    return small_repo(tmp_path / "repo")


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """What standard output held when each `tags-routed` check started (the last check
    of stage 2): proof that a check's line is out before the next check runs."""
    import stagegate.checks.tags_routed as kind

    snapshots: list[str] = []
    original = kind.run

    def run(ctx: Any, check: Any) -> Any:
        snapshots.append(sys.stdout.getvalue())  # type: ignore[attr-defined]
        return original(ctx, check)

    monkeypatch.setattr(kind, "run", run)
    yield snapshots


def flip_to_2(repo: Repo, sg: Sg) -> None:
    assert sg("advance", cwd=repo.root).code == 0
    repo.commit("Flip to stage 1")
    assert sg("advance", cwd=repo.root).code == 0
    repo.commit("Flip to stage 2")


def test_verify_pr_streams_each_check_with_its_duration(
    repo: Repo, sg: Sg, seen: list[str]
) -> None:
    flip_to_2(repo, sg)
    seen.clear()
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    # stage 2 lists the invariant release-continuity again: it runs once
    checks = "checks of stage 2, taken from the base and evaluated on the head:\n" + RC
    # the lines of the checks before it were out when the last check started
    assert [SECONDS.sub("", out) for out in seen] == [checks]
    assert len(SECONDS.findall(result.out)) == 2
    text = SECONDS.sub("", result.out)
    assert text.startswith(
        checks + "  ok    tags-routed: 1 tag each routed to one release\n"
        "2 checks at stage 2: all passed\n"
        "\n"
        "verify-pr migration.yaml: base HEAD~1 ("
    ), text
    assert text.endswith(
        "  ok    checks-pass: the 2 checks of stage 2 (the base's, on the head) pass\n"
        "verify-pr: accepted.\n"
    ), text
    assert text.count("checks of stage 2, taken from the base") == 1


def test_verify_pr_json_and_github_print_at_the_end(repo: Repo, sg: Sg, seen: list[str]) -> None:
    flip_to_2(repo, sg)
    seen.clear()
    result = sg("verify-pr", "--base", "HEAD~1", "--format", "json", cwd=repo.root)
    assert json.loads(result.out)["ok"] is True
    github = sg("verify-pr", "--base", "HEAD~1", "--format", "github", cwd=repo.root)
    assert github.code == 0
    assert seen == ["", ""]  # nothing printed while the checks ran
    assert "checks of stage 2, taken from the base and evaluated on the head:\nstage 2: " in (
        github.out
    )
    assert not SECONDS.search(github.out)


def test_advance_streams_and_then_shows_the_outcome(repo: Repo, sg: Sg, seen: list[str]) -> None:
    assert sg("advance", cwd=repo.root).code == 0
    repo.commit("Flip to stage 1")
    seen.clear()
    result = sg("advance", "--dry-run", cwd=repo.root)
    assert result.code == 0, result.output
    assert [SECONDS.sub("", out) for out in seen] == ["stage 2: Extra wheels\n" + RC]
    text = SECONDS.sub("", result.out)
    assert text.startswith(
        "stage 2: Extra wheels\n" + RC + "  ok    tags-routed: 1 tag each routed to one "
        "release\n"
        "2 checks at stage 2: all passed\n"
        "\n"
        "--- a/migration.yaml\n"
    ), text
    assert text.endswith(
        "advance --dry-run: the checks pass; migration.yaml would go from stage 1 to stage 2: "
        "Extra wheels. Nothing was written.\n"
    )


def test_a_refused_advance_streams_the_failure(repo: Repo, sg: Sg) -> None:
    migration = repo.root / "migration.yaml"
    migration.write_text(migration.read_text().replace('select: ["pkg-py*"]', 'select: ["x*"]'))
    result = sg("advance", cwd=repo.root)
    assert result.code == 1
    text = SECONDS.sub("", result.out)
    assert text.startswith("stage 1: Narrow the release glob\n  FAIL  release-continuity"), text
    assert text.endswith(
        "\nadvance: refused: the checks of stage 1 failed; migration.yaml is unchanged "
        "(still stage 0).\n"
    ), text
    assert len(SECONDS.findall(result.out)) == 2
