"""`runner.os` and `runner.arch` in an artifact's name (pypa/hatch names its staged
binaries `staged-${{ runner.os }}-...`): GitHub sets them from the runner, so where a
job's `runs-on` is one GitHub-hosted label stagegate knows (ci/wheels/runners.py) they
are read from it, in the job's steps and in a local composite action it uses; a
self-hosted or custom label is not guessed: the name stays unresolved at its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_stream import Sg, compare

WF = ".github/workflows/release.yml"
RELEASE = """\
name: release
on:
  push:
    tags: ["v*"]
jobs:
  build:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-24.04, ubuntu-24.04-arm, windows-2025, windows-11-arm, macos-15-intel, macos-15]
    steps:
      - run: make dist
      - uses: actions/upload-artifact@v4
        with:
          name: dist-${{ runner.os }}-${{ runner.arch }}
          path: dist/*
  publish:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: dist-*
          path: dist
          merge-multiple: true
      - run: gh release upload "$TAG" dist/*
"""
ACTION = """\
name: upload
runs:
  using: composite
  steps:
    - uses: actions/upload-artifact@v4
      with:
        name: dist-${{ runner.os }}-${{ runner.arch }}
        path: dist/*
"""


def _names(data: dict[str, Any]) -> list[str]:
    (release,) = data["releases"]
    return sorted(c["name"] for c in release["head"])


EXPECTED = [
    "dist-Linux-ARM64",
    "dist-Linux-X64",
    "dist-Windows-ARM64",
    "dist-Windows-X64",
    "dist-macOS-ARM64",
    "dist-macOS-X64",
]


@pytest.mark.parametrize("in_action", [False, True])
def test_runner_os_and_arch_are_read_from_a_hosted_label(
    sg: Sg, tmp_path: Path, in_action: bool
) -> None:
    files = {WF: RELEASE}
    if in_action:
        upload = RELEASE.split("      - uses: actions/upload-artifact@v4\n")[1].split("  publish:")[
            0
        ]
        files = {
            WF: RELEASE.replace(
                "      - uses: actions/upload-artifact@v4\n" + upload,
                "      - uses: actions/checkout@v4\n      - uses: ./.github/actions/upload\n",
            ),
            ".github/actions/upload/action.yml": ACTION,
        }
    head = {WF: files[WF].replace("macos-15-intel, macos-15]", "macos-13, macos-14]")}
    code, data, lines = compare(sg, tmp_path, files, head)
    assert code == 0, lines  # the same runner.os and runner.arch: nothing changed
    assert _names(data) == EXPECTED
    assert data["unresolved"] == []


def test_a_label_stagegate_does_not_know_leaves_the_name_unresolved(sg: Sg, tmp_path: Path) -> None:
    files = {WF: RELEASE.replace("macos-15]", "self-hosted-mac]")}
    code, data, lines = compare(sg, tmp_path, files, files)
    assert code == 0, lines
    assert [(u["line"], u["expression"], u["reason"]) for u in data["unresolved"]] == [
        (
            15,
            "${{ runner.arch }}",
            "runner.arch is not known from the YAML; bind it if a name uses it",
        ),
        (15, "${{ runner.os }}", "runner.os is not known from the YAML; bind it if a name uses it"),
    ]
    assert _names(data) == ["dist-${{ runner.os }}-${{ runner.arch }}", *EXPECTED[:4], EXPECTED[5]]
