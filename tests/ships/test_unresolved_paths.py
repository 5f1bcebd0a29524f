"""An upload's ``path`` stagegate cannot compute is listed only where the files it takes
could reach a release's publish step (mdboom/cuda-python build-wheel.yml: the Cython test
artifacts' ``path: ${{ env.CUDA_CORE_CYTHON_TESTS_DIR }}/test_*${{ env.PY_EXT_SUFFIX }}``,
which the release downloads with ``-p "cuda-*"`` and skips as ``*-tests``): whatever
files such an upload took, none reach it. The wheels' own path stays listed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scripts import FETCH, RELEASE, Sg, pair

REACH = "2 upload contexts reach its publish step, 2 at the base"

UNKNOWN = '      - run: echo "D=$(date)" >> "$GITHUB_ENV"\n        shell: bash\n'
"""A step that writes ``env.D`` with a value stagegate cannot compute."""


def release(upload: str) -> str:
    """RELEASE with ``env.D`` written first in the wheels job and ``upload`` (``tests``
    or ``wheels``) taking its files from ``${{ env.D }}``."""
    text = RELEASE.replace("    steps:\n", "    steps:\n" + UNKNOWN, 1)
    old = "tests/*.whl" if upload == "tests" else "wheelhouse/*.whl"
    assert old in text
    return text.replace(old, "${{ env.D }}/*.whl")


def unresolved(out: str) -> list[str]:
    return [line for line in out.splitlines() if "${{ env.D }}" in line]


@pytest.mark.parametrize(
    ("upload", "listed"),
    [
        pytest.param("tests", False, id="a test artifact the release skips"),
        pytest.param("wheels", True, id="control: the wheels the release publishes"),
    ],
)
def test_an_unknown_upload_path_is_listed_where_its_files_may_ship(
    sg: Sg, tmp_path: Path, upload: str, listed: bool
) -> None:
    repo, base = pair(tmp_path / "r", FETCH, release(upload))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0].endswith(REACH), result.out
    assert bool(unresolved(result.out)) is listed, result.out


def test_without_the_skip_the_test_artifact_s_path_is_listed(sg: Sg, tmp_path: Path) -> None:
    """The control on the release's side: where the release no longer skips ``-tests``,
    the test artifact's files reach its publish step, and its path is listed."""
    without = FETCH.replace('  if [[ "$p" == *-tests ]]; then\n    continue\n  fi\n', "")
    repo, base = pair(tmp_path / "r", without, release("tests"))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert unresolved(result.out), result.out
