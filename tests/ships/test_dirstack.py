"""``pushd``/``popd`` in a release's ``run:`` block (mdboom/cuda-python build-docs.yml:
``pushd cuda_python/docs/ ... popd`` then ``mv cuda_python/docs/build/html/* ...``): popd
goes back to the folder the last pushd left, so a move after it is read from there; a
rotation of the stack (``popd +1``) or ``popd -n`` is not followed (the release is
blind, not guessed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scripts import FETCH, HEADLINE, RELEASE, Sg, pair

DOWNLOAD = './ci/fetch-wheels "${{ github.run_id }}" dist'


def block(*lines: str) -> str:
    """RELEASE with its download step a ``run:`` block of ``lines``."""
    body = "".join(f"\n          {line}" for line in lines)
    return RELEASE.replace(DOWNLOAD, "|" + body)


GOT = 'gh run download -p "wheels-*" -D got'
MOVE = "mkdir -p dist && mv got/*/*.whl dist/"


@pytest.mark.parametrize(
    ("lines", "reach"),
    [
        pytest.param(
            (GOT, "pushd got > /dev/null", "ls", "popd > /dev/null", MOVE),
            4,
            id="back where it was",
        ),
        pytest.param(
            (GOT, "pushd got", "pushd sub", "popd", "popd", MOVE), 4, id="two deep, both popped"
        ),
        pytest.param((GOT, "pushd got", "popd", "cd got", "mv */*.whl ../dist/"), 4, id="then cd"),
        # controls: where popd does not go back to the workspace, the move takes nothing
        pytest.param(
            (GOT, "pushd got", "pushd sub", "popd", MOVE), 0, id="control: one popd of two"
        ),
        pytest.param((GOT, "pushd got", MOVE), 0, id="control: no popd"),
    ],
)
def test_popd_goes_back_to_where_pushd_left(
    sg: Sg, tmp_path: Path, lines: tuple[str, ...], reach: int
) -> None:
    repo, base = pair(tmp_path / "r", FETCH, block(*lines))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == (
        HEADLINE + f"{reach} upload contexts reach its publish step, 2 at the base"
    ), result.out


@pytest.mark.parametrize("popd", ["popd +1", "popd -n", "cd -"])
def test_a_stack_rotation_is_not_followed(sg: Sg, tmp_path: Path, popd: str) -> None:
    repo, base = pair(tmp_path / "r", FETCH, block(GOT, "pushd got", "pushd sub", popd, MOVE))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out
    assert result.out.splitlines()[0] == (
        "release job publish (.github/workflows/release.yml:19; runs on push-tag): not compared"
    ), result.out
    assert "newly blind: a script moves the downloaded files" in result.out


def action_block(*lines: str) -> str:
    """RELEASE with the artifact action's download into got/, then a ``run:`` block of
    ``lines`` without ``gh`` or ``$GITHUB_ENV`` (read by ``publish.read_script``, not
    walked)."""
    download = "uses: actions/download-artifact@v4\n        with: {pattern: wheels-*, path: got}"
    body = "".join(f"\n          {line}" for line in lines)
    return RELEASE.replace("run: " + DOWNLOAD, download + "\n      - run: |" + body)


@pytest.mark.parametrize(
    ("lines", "reach"),
    [
        pytest.param(("pushd got > /dev/null", "ls", "popd > /dev/null", MOVE), 4, id="popd"),
        pytest.param(('pushd "$X"/docs', "make", "popd", MOVE), 4, id="from a folder not known"),
        pytest.param(("pushd a", "pushd b", "popd", "popd 2>&1", MOVE), 4, id="two deep"),
        pytest.param(("pushd got", "pushd b", "popd", MOVE), 0, id="control: one popd of two"),
    ],
)
def test_popd_in_a_script_read_for_its_moves(
    sg: Sg, tmp_path: Path, lines: tuple[str, ...], reach: int
) -> None:
    workflow = action_block(*lines)
    assert "download-artifact" in workflow and "gh run" not in workflow, workflow
    repo, base = pair(tmp_path / "r", FETCH, workflow)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == (
        HEADLINE + f"{reach} upload contexts reach its publish step, 2 at the base"
    ), result.out


def test_a_folder_not_known_after_pushd_is_still_blind(sg: Sg, tmp_path: Path) -> None:
    """The control: the move runs inside the folder pushd went to, which is not known."""
    lines = ('pushd "$X"/docs', "mv ../got/*/*.whl ../dist/", "popd")
    workflow = action_block(*lines)
    repo, base = pair(tmp_path / "r", FETCH, workflow)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0].endswith("not compared"), result.out


@pytest.mark.parametrize(
    ("lines", "first"),
    [
        pytest.param(
            ("D=$(echo \"g-t\" | tr '-' 'o')", 'mkdir -p dist && mv "$D"/*/*.whl dist/'),
            HEADLINE + "4 upload contexts reach its publish step, 2 at the base",
            id="a folder made by echo | tr",
        ),
        pytest.param(
            ("w=( got/*/*.whl )", 'mkdir -p dist && mv "${w[@]}" dist/'),
            HEADLINE + "4 upload contexts reach its publish step, 2 at the base",
            id="an array of globs",
        ),
        pytest.param(
            ("D=$(cat where)", 'mkdir -p dist && mv "$D"/*/*.whl dist/'),
            "release job publish (.github/workflows/release.yml:19; runs on push-tag): "
            "not compared",
            id="control: a file's text",
        ),
    ],
)
def test_a_move_only_the_shell_works_out_is_read_by_it(
    sg: Sg, tmp_path: Path, lines: tuple[str, ...], first: str
) -> None:
    """A ``run:`` block without ``gh`` or ``$GITHUB_ENV`` whose move has ``$`` in it,
    after a download of its job (mdboom/cuda-python build-docs.yml: ``COMPONENT=$(echo
    "${{ inputs.component }}" | tr '-' '_')``, then ``mv ${COMPONENT}/docs/...``)."""
    repo, base = pair(tmp_path / "r", FETCH, action_block(*lines))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == first, result.out
