"""advance and rollback: the one-line edit, its checks, and its atomic write."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import SMALL, write_example, write_small

Sg = Callable[..., Result]


@pytest.fixture
def small(tmp_path: Path) -> Path:
    write_small(tmp_path)
    return tmp_path


def _stage_line_swapped(before: bytes, old: int, new: int) -> bytes:
    needle = f"stage: {old}".encode()
    assert before.count(b"\nstage: ") == 1
    return before.replace(b"\n" + needle, b"\n" + f"stage: {new}".encode(), 1)


def test_advance_changes_only_the_stage_line(small: Path, sg: Sg) -> None:
    before = (small / "migration.yaml").read_bytes()
    result = sg("advance", cwd=small)
    assert result.code == 0, result.output
    assert "stage 0 -> stage 1: Narrow the release glob" in result.out
    assert "ok    release-continuity tag=v1.0.0" in result.out
    assert (small / "migration.yaml").read_bytes() == _stage_line_swapped(before, 0, 1)
    assert sg("status", cwd=small).out.startswith("small: stage 1 of 3: Narrow the release glob")


@pytest.mark.parametrize(
    "variant",
    ["crlf", "bom", "no-final-newline", "comments", "anchor-and-tag", "everything"],
)
def test_advance_keeps_every_other_byte(small: Path, sg: Sg, variant: str) -> None:
    text = SMALL
    if variant in ("comments", "everything"):
        text = text.replace("stage: 0\n", "stage: 0   # flipped by `stagegate advance`\n")
        text = text.replace("axes:\n", "# élan: ünïcode before and after\naxes:   # the axes\n")
    if variant == "anchor-and-tag":
        text = text.replace("stage: 0\n", "stage: &current !!int 0\n")
    raw = text.encode()
    if variant in ("crlf", "everything"):
        raw = raw.replace(b"\n", b"\r\n")
    if variant in ("bom", "everything"):
        raw = b"\xef\xbb\xbf" + raw
    if variant in ("no-final-newline", "everything"):
        raw = raw.rstrip(b"\r\n")
    (small / "migration.yaml").write_bytes(raw)
    result = sg("advance", cwd=small)
    assert result.code == 0, result.output
    after = (small / "migration.yaml").read_bytes()
    expected = raw.replace(b"stage: 0", b"stage: 1", 1).replace(
        b"stage: &current !!int 0", b"stage: &current !!int 1", 1
    )
    assert after == expected


def test_advance_keeps_the_mode_and_writes_through_a_symlink(tmp_path: Path, sg: Sg) -> None:
    real = tmp_path / "config"
    write_small(real)
    os.chmod(real / "migration.yaml", 0o640)
    work = tmp_path / "work"
    work.mkdir()
    (work / "migration.yaml").symlink_to(real / "migration.yaml")
    shutil.copytree(real / "stages", work / "stages")
    result = sg("advance", cwd=work)
    assert result.code == 0, result.output
    assert (work / "migration.yaml").is_symlink()
    assert "stage: 1\n" in (real / "migration.yaml").read_text()
    assert stat.S_IMODE(os.stat(real / "migration.yaml").st_mode) == 0o640
    assert sorted(p.name for p in real.iterdir()) == ["migration.yaml", "stages"]


def test_advance_refuses_when_the_file_changed_while_checking(small: Path, sg: Sg) -> None:
    """A check that edits migration.yaml stands for anyone else writing it meanwhile."""
    touch = "open('migration.yaml', 'a').write('# edited meanwhile\\n')"
    stage_file = small / "stages" / "01-narrow.yaml"
    stage_file.write_text(
        stage_file.read_text()
        + f"  - check: command\n    run: [{json.dumps(sys.executable)}, -c, {json.dumps(touch)}]\n"
    )
    before = (small / "migration.yaml").read_bytes()
    result = sg("advance", cwd=small)
    assert result.code == 1, result.output
    assert "migration.yaml changed on disk while stagegate was running its checks" in result.err
    assert "nothing was written" in result.err
    assert (small / "migration.yaml").read_bytes() == before + b"# edited meanwhile\n"
    assert not [p for p in small.iterdir() if p.name.endswith(".tmp")]


def test_failing_checks_leave_the_file_untouched(small: Path, sg: Sg) -> None:
    """At stage 2 the extra wheels appear, and a release glob of pkg* would take them."""
    broken = SMALL.replace('select: ["pkg-py*"]', 'select: ["pkg*"]').replace(
        "stage: 0", "stage: 1"
    )
    (small / "migration.yaml").write_text(broken)
    before = (small / "migration.yaml").read_bytes()
    result = sg("advance", "--pr-body", "body.md", cwd=small)
    assert result.code == 1, result.output
    assert "FAIL  release-continuity tag=v1.0.0" in result.out
    assert "pkg-extra-py{py}" in result.out
    assert (
        "advance: refused: the checks of stage 2 failed; migration.yaml is unchanged" in result.out
    )
    assert (small / "migration.yaml").read_bytes() == before
    assert not (small / "body.md").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(small: Path, sg: Sg) -> None:
    before = (small / "migration.yaml").read_bytes()
    result = sg("advance", "--dry-run", cwd=small)
    assert result.code == 0, result.output
    assert "--- a/migration.yaml\n+++ b/migration.yaml\n" in result.out
    assert "\n-stage: 0\n+stage: 1\n" in result.out
    assert "Nothing was written." in result.out
    assert (small / "migration.yaml").read_bytes() == before


def test_advance_to_runs_every_stage_in_between(small: Path, sg: Sg) -> None:
    result = sg("advance", "--to", "3", "--format", "json", cwd=small)
    assert result.code == 0, result.output
    report = json.loads(result.out)
    assert report["checked_stages"] == [1, 2, 3]
    assert {r["stage"] for r in report["results"]} == {1, 2, 3}
    assert report["written"] is True and report["from"] == 0 and report["to"] == 3
    assert "stage: 3\n" in (small / "migration.yaml").read_text()


def test_advance_to_stops_at_a_failing_stage_in_between(small: Path, sg: Sg) -> None:
    (small / "migration.yaml").write_text(SMALL.replace('select: ["pkg-py*"]', 'select: ["pkg*"]'))
    result = sg("advance", "--to", "3", cwd=small)
    assert result.code == 1
    assert "the checks of stage 2 failed" in result.out
    assert "stage 3:" not in result.out
    assert "stage: 0\n" in (small / "migration.yaml").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--to", "9"), "--to 9: migration.yaml has stages 0..3; pick one of them."),
        (("--to", "0"), "--to 0: the migration is at stage 0; advance only moves forward"),
    ],
)
def test_advance_to_a_stage_that_cannot_be_reached_is_a_usage_error(
    small: Path, sg: Sg, args: tuple[str, ...], message: str
) -> None:
    result = sg("advance", *args, cwd=small)
    assert result.code == 2
    assert message in result.err


def test_advance_past_the_last_stage_is_refused(small: Path, sg: Sg) -> None:
    (small / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 3"))
    result = sg("advance", cwd=small)
    assert result.code == 1
    assert "already at stage 3, the last stage (The end state)" in result.err


def test_rollback_goes_one_stage_back(small: Path, sg: Sg) -> None:
    (small / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 2"))
    result = sg("rollback", cwd=small)
    assert result.code == 0, result.output
    assert "stage 2 -> stage 1: Narrow the release glob" in result.out
    assert "stage: 1\n" in (small / "migration.yaml").read_text()


def test_rollback_of_an_irreversible_stage_is_refused(small: Path, sg: Sg) -> None:
    (small / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 3"))
    before = (small / "migration.yaml").read_bytes()
    result = sg("rollback", "--dry-run", cwd=small)
    assert result.code == 1
    assert "rollback refused" in result.err
    assert (
        "stage 3 (The end state) is not reversible (stages/03-final.yaml:6: reversible: false)"
        in (result.err)
    )
    assert (small / "migration.yaml").read_bytes() == before


def test_rollback_at_stage_0_is_refused(small: Path, sg: Sg) -> None:
    result = sg("rollback", cwd=small)
    assert result.code == 1
    assert "at stage 0 (before the migration); there is nothing to roll back" in result.err


def test_a_stage_written_as_an_alias_cannot_be_flipped(small: Path, sg: Sg) -> None:
    text = SMALL.replace("version: 1\n", "version: &one 1\n").replace("stage: 0\n", "stage: *one\n")
    (small / "migration.yaml").write_text(text)
    before = (small / "migration.yaml").read_bytes()
    result = sg("advance", cwd=small)
    assert result.code == 2, result.output
    assert "migration.yaml:6:8: $.stage: stage: is not written as a plain number" in result.err
    assert (small / "migration.yaml").read_bytes() == before


def test_pr_body_describes_the_flip(small: Path, sg: Sg) -> None:
    (small / "migration.yaml").write_text(SMALL.replace("stage: 0", "stage: 1"))
    result = sg("advance", "--dry-run", "--pr-body", "body.md", cwd=small)
    assert result.code == 0, result.output
    body = (small / "body.md").read_text()
    assert body.startswith("## small: stage 1 → 2: Extra wheels\n")
    assert "> Extra wheels are built; the release still selects the same names." in body
    assert "- `extra`: false → **true**" in body
    assert "- producer `extras`" in body
    assert "- added `pkg-extra-py{py}`" in body
    assert "| 2 | release-continuity tag=v1.0.0 | pass |" in body
    assert "```mermaid\nflowchart LR" in body
    assert "class p_extras,a1 flipped" in body
    assert "stage: 1\n" in (small / "migration.yaml").read_text()


def test_a_pr_body_that_cannot_be_written_is_refused_before_the_flip(small: Path, sg: Sg) -> None:
    before = (small / "migration.yaml").read_bytes()
    result = sg("advance", "--pr-body", "no-such-folder/body.md", cwd=small)
    assert result.code == 2
    assert "folder no-such-folder does not exist; create it, or name a file elsewhere" in result.err
    assert (small / "migration.yaml").read_bytes() == before


def test_github_format_writes_the_description_to_the_step_summary(
    small: Path, sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = sg("advance", "--dry-run", "--format", "github", cwd=small)
    assert result.code == 0
    assert "## small: stage 0 → 1: Narrow the release glob" in summary.read_text()


def test_the_example_advances_by_one_line(tmp_path: Path, sg: Sg) -> None:
    write_example(tmp_path)
    before = (tmp_path / "migration.yaml").read_bytes()
    result = sg("advance", "--dry-run", cwd=tmp_path)
    assert result.code == 0, result.output
    diff = [
        line
        for line in result.out.splitlines()
        if line.startswith(("+", "-")) and not line.startswith(("---", "+++"))
    ]
    assert diff == ["-stage: 0", "+stage: 1"]
    assert sg("advance", cwd=tmp_path).code == 0
    after = (tmp_path / "migration.yaml").read_bytes()
    assert after == _stage_line_swapped(before, 0, 1)
