"""A word of a script with `{a,b}` is the words bash's brace expansion makes of it
(python-poetry/poetry publishes `gh release upload "${TAG_NAME}" dist/*.{tar.gz,whl}`):
in a publish command's files and in a `cp`/`mv` before it alike. Fixtures 106 and 107
(tests/fixtures/history) hold the release's shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_stream import Sg, compare

WF = ".github/workflows/release.yml"
RELEASE = """\
name: release
on:
  release:
    types: [published]
jobs:
  sdist:
    runs-on: ubuntu-latest
    steps:
      - run: pipx run build --sdist
      - uses: actions/upload-artifact@v4
        with:
          name: dist-sdist
          path: dist/*.tar.gz
  wheels:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps:
      - run: make wheels
      - uses: actions/upload-artifact@v4
        with:
          name: dist-${{ matrix.os }}
          path: wheelhouse/*.whl
  upload:
    needs: [sdist, wheels]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: dist-*
          path: dist
          merge-multiple: true
      - run: SCRIPT
"""


@pytest.mark.parametrize(
    ("script", "names"),
    [
        (
            'gh release upload "$TAG" dist/*.{tar.gz,whl}',
            ["dist-sdist", "dist-ubuntu-latest", "dist-windows-latest"],
        ),
        ('gh release upload "$TAG" dist/*.{tar.gz,zip}', ["dist-sdist"]),
        (
            'mkdir up && cp dist/*.{whl,zip} up/ && gh release upload "$TAG" up/*',
            ["dist-ubuntu-latest", "dist-windows-latest"],
        ),
    ],
)
def test_braces_in_a_release_script_are_expanded(
    sg: Sg, tmp_path: Path, script: str, names: list[str]
) -> None:
    files = {WF: RELEASE.replace("SCRIPT", script)}
    head = {WF: files[WF].replace("make wheels", "make all-wheels")}
    code, data, lines = compare(sg, tmp_path, files, head)
    assert code == 0, lines
    (release,) = data["releases"]
    assert sorted(c["name"] for c in release["head"]) == names
