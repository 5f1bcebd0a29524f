"""Remote actions whose inputs say they move no artifact and publish no file
(``ci.actions.INERT``): GitHub's archived `actions/create-release` makes a release from
`tag_name`, `release_name`, `body`/`body_path`, `draft` and `prerelease` (pdm-project/pdm
runs it after `pdm publish`, in the job that uploads the wheel its binaries embed);
it is not listed as unread in a job whose upload reaches a release. An action stagegate
does not know that is named for releasing, in the same place, still is."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_stream import Sg, compare

WF = ".github/workflows/release.yml"
RELEASE = """\
name: release
on:
  push:
    tags: ["*"]
jobs:
  release-pypi:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pipx run build
      - uses: actions/upload-artifact@v4
        with:
          name: app-wheel
          path: dist/*.whl
      - run: pdm publish --no-build
      - uses: ACTION
        with:
          tag_name: ${{ github.ref }}
          release_name: v${{ github.ref }}
          body_path: .changelog.md
  assets:
    needs: release-pypi
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: app-wheel
          path: dist
      - run: gh release upload "$TAG" dist/*.whl
"""


@pytest.mark.parametrize(
    ("action", "unread"),
    [("actions/create-release@v1", []), ("someone/make-release@v1", ["someone/make-release@v1"])],
)
def test_create_release_moves_nothing(
    sg: Sg, tmp_path: Path, action: str, unread: list[str]
) -> None:
    files = {WF: RELEASE.replace("ACTION", action)}
    head = {WF: files[WF].replace("pipx run build", "python -m build")}
    code, data, lines = compare(sg, tmp_path, files, head)
    assert code == 0, lines
    assert [u["expression"] for u in data["unresolved"]] == unread
    assets = next(r for r in data["releases"] if r["job"] == "assets")
    assert [c["name"] for c in assets["head"]] == ["app-wheel"]


DOCKER = """\
name: wheels
on:
  push:
    tags: ["*"]
jobs:
  linux:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Build the image the wheels are built in
        uses: docker/build-push-action@v7
        with:
          context: .
          file: ci/Dockerfile
          push: false
          load: true
          tags: builder:latest
          OUTPUTS
      - run: docker run --rm -v $PWD:/src builder:latest make wheels
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-linux
          path: dist/*.whl
  publish:
    needs: linux
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: wheels-linux
          path: dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


@pytest.mark.parametrize(
    ("outputs", "unread"),
    [("", []), ("outputs: type=local,dest=dist", ["docker/build-push-action@v7"])],
)
def test_docker_build_writes_workspace_files_only_with_outputs(
    sg: Sg, tmp_path: Path, outputs: str, unread: list[str]
) -> None:
    """docker/build-push-action builds an image (loaded, pushed); only ``outputs:`` can
    export files into the workspace, and which is not read."""
    files = {WF: DOCKER.replace("OUTPUTS", outputs)}
    head = {WF: files[WF].replace("make wheels", "make all-wheels")}
    code, data, lines = compare(sg, tmp_path, files, head)
    assert code == 0, lines
    assert [u["expression"] for u in data["unresolved"]] == unread
