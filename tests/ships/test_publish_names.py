"""A command is taken for an unread publish step by its program's name, not by the folder
it sits in: NVIDIA/cccl's Windows job action runs `ci/util/artifacts/upload/print_matrix.sh`
(a script that prints a list), which made six CI jobs "release jobs, not compared"; a
`scripts/release/publish.sh` is still an unread publisher, and the release it runs in is
blind, not quiet."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_stream import PER_OS, PUBLISH_STEP, WF, Sg, compare


@pytest.mark.parametrize(
    "run",
    [
        'if artifacts=$(cd repo && ci/util/artifacts/upload/print_matrix.sh); then echo "$artifacts"; fi',
        "./tools/deploy/list-files.sh dist",
        "make -C release/notes check",
    ],
)
def test_a_program_in_a_folder_named_for_publishing_is_not_a_publisher(
    sg: Sg, tmp_path: Path, run: str
) -> None:
    report = f"  report:\n    needs: wheels\n    runs-on: ubuntu-latest\n    steps:\n      - run: {run}\n"
    base = PER_OS + report
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert code == 1, lines  # compared, and the loss is seen
    (release,) = data["releases"]  # the job that runs the script is no release job
    assert release["job"] == "publish" and release["compared"] is True and release["blind"] == []
    assert [c["name"] for c in release["lost"]] == ["wheels-mac"]


@pytest.mark.parametrize(
    "run", ["./scripts/release/publish.sh --index prod", "ci/upload_wheels.sh dist", "make release"]
)
def test_a_program_named_for_publishing_is_an_unread_publisher(
    sg: Sg, tmp_path: Path, run: str
) -> None:
    base = PER_OS.replace(PUBLISH_STEP, f"      - run: {run}\n")  # the only publish step
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert code == 0, lines  # blind at both commits: listed, not failed (--strict fails it)
    (release,) = data["releases"]
    assert release["compared"] is False and release["blind"], lines
    assert "publish step is not read" in release["blind"][0]["reason"]
