"""`stagegate continuity` without a model on a release started by `workflow_dispatch`: a
free input (`type: string`, or none) is the one the dispatcher chooses at both commits,
an open value like the run's commit (``{sha}``), so a name holding it is compared, not
left unresolved; a choice input is still read once per option."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import Repo, init, pin_git

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"

RELEASE = """\
name: release
on:
  workflow_dispatch:
    inputs:
      version:
        description: the version to release
        required: true
      channel:
        type: choice
        options: [stable, nightly]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: python -m build --wheel
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-${{ inputs.version }}
          path: dist/*.whl
  publish:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: wheels-${{ inputs.version }}
          path: dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def continuity(sg: Sg, repo: Repo, base: str, head: str) -> tuple[int, dict[str, Any]]:
    repo.write(WF, base)
    first = repo.commit("base")
    repo.write(WF, head)
    second = repo.commit("head")
    done = sg("continuity", "--base", first, "--head", second, "--format", "json", cwd=repo.root)
    return done.code, json.loads(done.out)


def test_a_name_holding_a_free_input_is_compared(
    sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_git(monkeypatch)
    repo = init(tmp_path / "r")
    head = RELEASE.replace("python -m build --wheel", "python -m build --wheel --no-isolation")
    code, data = continuity(sg, repo, RELEASE, head)
    assert (code, data["unresolved"]) == (0, [])
    (release,) = data["releases"]
    names = {c["name"] for c in release["head"]}
    assert names == {"wheels-{inputs-version}"}


def test_another_input_in_the_name_is_another_artifact(
    sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upload named by the choice input instead (read once per option): the
    download of `wheels-{inputs-version}` finds nothing at the head (lost)."""
    pin_git(monkeypatch)
    repo = init(tmp_path / "r")
    head = RELEASE.replace(
        "          name: wheels-${{ inputs.version }}\n          path: dist/*.whl",
        "          name: wheels-${{ inputs.channel }}\n          path: dist/*.whl",
    )
    assert head != RELEASE
    code, data = continuity(sg, repo, RELEASE, head)
    assert code == 1
    (release,) = data["releases"]
    assert sorted(c["name"] for c in release["lost"]) == ["wheels-{inputs-version}"]
    assert data["unresolved"] == []
