"""The example's releases on the mirror of cuda-python's CI (issue 23): each says its
dispatched component (`dispatch`) and release.yml's publish jobs, so drift compares it
with what ci/tools/download-wheels selects for that component, and for no other."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from conftest import FIXTURES, REPO, Result

Sg = Callable[..., Result]
DOWNLOAD = (
    './ci/tools/download-wheels "${{ needs.determine-run-id.outputs.run-id }}" '
    '"${{ inputs.component }}" "${{ github.repository }}" "dist"'
)


def mirror(root: Path) -> Path:
    shutil.copytree(
        FIXTURES / "cuda-python-tree",
        root,
        ignore=shutil.ignore_patterns("migration.yaml", "stages"),
    )
    shutil.copy2(REPO / "migration.yaml", root / "migration.yaml")
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def drift(sg: Sg, root: Path) -> tuple[int, list[dict[str, str]]]:
    result = sg("drift", "--stage", "0", "--strict", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)["findings"]


def test_a_wrong_download_for_one_component_is_reported_for_its_release_alone(
    sg: Sg, tmp_path: Path
) -> None:
    """The control, the example as shipped passing on the mirror, is tests/example's
    test_drift_passes_on_cuda_pythons_ci_at_stage_0 (a drift of the mirror is not cheap)."""
    root = mirror(tmp_path / "mirror")
    release = root / ".github" / "workflows" / "release.yml"
    text = release.read_text()
    assert text.count(DOWNLOAD) == 2  # publish-testpypi and publish-pypi
    wrong = DOWNLOAD.replace(
        "${{ inputs.component }}",
        "${{ inputs.component == 'cuda-python' && 'cuda-' || inputs.component }}",
    )
    release.write_text(text.replace(DOWNLOAD, wrong))
    code, findings = drift(sg, root)
    assert code == 1
    assert [(f["kind"], f["item"]) for f in findings] == [("select-differs", "cuda-python-13")]
    message = findings[0]["message"]
    assert (
        "at stage 0: the workflows also select cuda-source-linux (coverage-data, by "
        "ci/tools/download-wheels:15), cuda-pathfinder-wheel (pathfinder, by "
        "ci/tools/download-wheels:15), cuda-bindings-python310-cuda13.3.0-linux-64-{sha} "
        "(bindings-cu13, by ci/tools/download-wheels:15)"
    ) in message
    assert "(.github/workflows/release.yml#publish-testpypi, " in message
