"""verify-pr's `releases-as-declared` on issue 37's attacks 1 and 2, the ways the first
round did not try: a flip that declares dropping the Windows wheels is accepted (the
control); the same flip carrying a publish step no tag run takes, `find dist -delete` or
a `pip download` into dist/ is refused, and `continuity` on the same pull request fails
too (each was accepted by both before)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import (
    COMPOSITE,
    WHEELS_DECLARED,
    WHEELS_LINUX_ONLY,
    WHEELS_MIGRATION,
    WHEELS_RELEASE,
    Repo,
    init,
    pin_git,
)

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"
LINUX_ONLY = WHEELS_LINUX_ONLY
PUBLISH = "      - uses: pypa/gh-action-pypi-publish@release/v1\n"

MIGRATION = WHEELS_MIGRATION
DECLARED = WHEELS_DECLARED
HEADS = {
    "publish step on a branch only": LINUX_ONLY.replace(
        PUBLISH, PUBLISH + "        if: github.ref == 'refs/heads/main'\n"
    ),
    "find dist -delete": LINUX_ONLY.replace(
        PUBLISH, "      - run: find dist -name '*.whl' -delete\n" + PUBLISH
    ),
    "pip download into dist": LINUX_ONLY.replace(
        PUBLISH, "      - run: pip download evil --no-deps -d dist\n" + PUBLISH
    ),
}


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def flipped(root: Path, workflow: str) -> tuple[Repo, str]:
    repo = init(root)
    repo.write("migration.yaml", MIGRATION)
    repo.write("stages/01-step.yaml", DECLARED)
    repo.write(WF, WHEELS_RELEASE)
    base = repo.commit("The migration, at stage 0")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write(WF, workflow)
    repo.commit("Flip to stage 1, and build Linux wheels only")
    return repo, base


@pytest.mark.parametrize("case", sorted(HEADS))
def test_a_flip_cannot_carry_a_release_that_no_longer_ships_what_it_did(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    repo, base = flipped(tmp_path / "attack", HEADS[case])
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out
    assert "  FAIL  releases-as-declared: " in result.out
    assert result.out.endswith("verify-pr: refused (rule releases-as-declared).\n")
    assert sg("continuity", "--base", base, cwd=repo.root).code == 1


def test_the_declared_flip_alone_is_accepted(sg: Sg, tmp_path: Path) -> None:
    repo, base = flipped(tmp_path / "control", LINUX_ONLY)
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 0, result.out
    assert sg("continuity", "--base", base, cwd=repo.root).code == 0


UPLOAD = (
    "      - uses: actions/upload-artifact@v4\n        with:\n          name: wheels-${{ matrix.os }}\n"
    "          path: wheelhouse/*.whl\n"
)
MOVED = LINUX_ONLY.replace(
    UPLOAD,
    "      - uses: ./.github/actions/upload\n        with:\n          name: wheels-${{ matrix.os }}\n",
)


@pytest.mark.parametrize(
    ("path", "code"), [("wheelhouse/*.whl", 0), ("wheelhouse/*.tar.gz", 1)], ids=["same", "other"]
)
def test_a_flip_carrying_the_upload_into_a_composite_action(
    sg: Sg, tmp_path: Path, path: str, code: int
) -> None:
    """Attack 11 in a flip: the upload moved unchanged into a local composite action is
    the same upload (the flip accepted, as it was refused before, when the matrix row was
    dropped inside the action); the same move taking the sdists instead is refused."""
    assert UPLOAD in LINUX_ONLY
    repo, base = flipped(tmp_path / path.replace("*", "x").replace("/", "-"), MOVED)
    repo.write(".github/actions/upload/action.yml", COMPOSITE.replace("wheelhouse/*.whl", path))
    repo.commit("The upload in a composite action")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == code, result.out
    assert sg("continuity", "--base", base, cwd=repo.root).code == code
