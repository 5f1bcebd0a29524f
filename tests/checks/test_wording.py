"""The wording items of issue 25: what a message says, exactly."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import CASES, Result
from scratch import init, pin_git
from stagegate.load.loader import stage_file_name
from stagegate.report.flipdoc import markdown
from stagegate.validation import load
from stagegate.words import quoted

Sg = Callable[..., Result]


@pytest.mark.parametrize(
    ("name", "suggested"),
    [
        ("1-switch.yml", "01-switch.yaml"),
        ("1_Build Wheels.yml", "01-build-wheels.yaml"),
        ("003-Drop_py310.yaml", "03-drop-py310.yaml"),
        ("12_.yaml", "12-stage.yaml"),
    ],
)
def test_a_misnamed_stage_file_gets_a_name_that_would_do(name: str, suggested: str) -> None:
    assert stage_file_name(name) == suggested


def test_a_regex_reference_is_shown_as_written(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_git(monkeypatch)
    repo = init(tmp_path / "project")
    shutil.copytree(CASES / "lifecycle" / "python-versions", repo.root, dirs_exist_ok=True)
    repo.edit(
        "migration.yaml",
        'references: ["python3.10", "build-py310"]',
        r"references: [{regex: 'python3\.10\b'}]",
    )
    repo.edit("migration.yaml", "\nstage: 0\n", "\nstage: 3\n")
    repo.commit("a regex reference")
    result = sg("check", cwd=repo.root)
    assert result.code == 1
    assert (
        "        - producer wheel-py310 (retired at stage 3): '{regex: python3\\.10\\b}' is still in "
        ".github/workflows/ci.yml:37: - run: python3.10 -m build --wheel"
    ) in result.out.splitlines()
    # the place is in the message: no `at` line repeats it
    assert "          at .github/workflows/ci.yml:37" not in result.out


def test_quoted_keeps_backslashes_and_picks_quotes() -> None:
    assert quoted(r"a\b") == r"'a\b'"
    assert quoted("it's") == '"it\'s"'
    assert quoted("""'"both""") == repr("""'"both""")


def test_a_description_of_no_flip_says_the_stage_stays() -> None:
    migration = load(str(CASES / "lifecycle" / "python-versions" / "migration.yaml"))
    text = markdown(migration, 0, 0, None)
    assert f"- **Flip**: none: `stage: 0` stays in `{migration.file}`" in text.splitlines()
    assert "no flip" not in text
