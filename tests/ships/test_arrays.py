"""A release whose ``run:`` block moves the downloaded wheels through a bash array
(``wheels=(got/*/*.whl)``, then ``mv "${wheels[@]}" dist/``): the array is read as bash
builds it, so the release is compared, not blind; the control, an array of a
command's output, stays blind at its line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_scripts import DOWNLOAD

from conftest import Result
from scratch import WHEELS_RELEASE, init, pin_git

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"
assert DOWNLOAD in WHEELS_RELEASE
STEP = """\
      - run: |
          gh run download -p "wheels-*" -D got
          mkdir -p dist
{move}
        env:
          GH_TOKEN: ${{ github.token }}
"""
HEADLINE = "release job publish (.github/workflows/release.yml:15; runs on push-tag): "


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def release(move: str) -> str:
    """WHEELS_RELEASE downloading by ``gh run download`` and moving with ``move``."""
    lines = "".join(" " * 10 + line + "\n" for line in move.split("\n"))
    return WHEELS_RELEASE.replace(DOWNLOAD, STEP.replace("{move}\n", lines))


def continuity(sg: Sg, root: Path, head: str) -> Result:
    """The base moves the wheels with a plain glob; the head with ``head``."""
    repo = init(root)
    repo.write(WF, release("mv got/*/*.whl dist/"))
    base = repo.commit("base")
    repo.write(WF, release(head))
    repo.commit("head")
    return sg("continuity", "--base", base, cwd=repo.root)


def test_a_move_through_an_array_is_compared(sg: Sg, tmp_path: Path) -> None:
    head = 'wheels=(got/*/*.whl)\nif (( ${#wheels[@]} > 0 )); then\n  mv "${wheels[@]}" dist/\nfi'
    result = continuity(sg, tmp_path / "r", head)
    assert result.code == 0, result.out
    assert result.out.splitlines()[0] == (
        HEADLINE + "2 upload contexts reach its publish step, 2 at the base"
    )
    assert "blind" not in result.out


@pytest.mark.parametrize(
    "head",
    [
        'for d in got/*; do\n  w=( "$d"/**/*.whl )\n  mv "${w[@]}" dist/\ndone',
        'for d in got/*; do\n  mv "$d"/**/*.whl dist/\ndone',  # the same without an array
    ],
)
def test_a_move_through_globstar_in_each_artifact_folder(sg: Sg, tmp_path: Path, head: str) -> None:
    """cuda-python's shape: ``**`` after the artifact's folder takes the files directly
    in it too (none or any number of folders between)."""
    result = continuity(sg, tmp_path / "r", "shopt -s nullglob globstar\n" + head)
    assert result.code == 0, result.out
    assert result.out.splitlines()[0] == (
        HEADLINE + "2 upload contexts reach its publish step, 2 at the base"
    )


def test_an_array_of_a_command_s_output_stays_blind(sg: Sg, tmp_path: Path) -> None:
    result = continuity(sg, tmp_path / "r", 'wheels=($(ls got/*/*.whl))\nmv "${wheels[@]}" dist/')
    assert result.code == 1
    assert result.out.splitlines()[:2] == [
        HEADLINE + "not compared",
        "  newly blind: a script moves the downloaded files with words stagegate cannot work "
        "out (an array, a command's output): whether they reach the publish step is not known "
        "(.github/workflows/release.yml:23)",
    ]
