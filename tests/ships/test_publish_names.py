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


@pytest.mark.parametrize(
    "program",
    [
        "./ci/tools/validate-release-wheels v1.0.0 all dist",
        "tools/verify_release.py dist",
        "scripts/print-release-notes.sh",
    ],
)
def test_a_program_named_for_checking_a_release_is_not_a_publisher(
    sg: Sg, tmp_path: Path, program: str
) -> None:
    """NVIDIA/cuda-python's release job validates the downloaded wheels against the tag
    (`ci/tools/validate-release-wheels TAG COMPONENT DIR`) before its publish step: a
    program whose name starts with a checking verb reads files and publishes none, so it
    is no unread line of the release (its publish step is the pypa action)."""
    validate = f"      - run: {program}\n"
    base = PER_OS.replace(PUBLISH_STEP, validate + PUBLISH_STEP)
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: base + "\n"})
    assert code == 0, lines
    (release,) = data["releases"]
    assert release["compared"] is True and release["blind"] == []
    assert data["unresolved"] == []


@pytest.mark.parametrize(
    "program", ["./ci/tools/check-and-upload dist", "./ci/tools/upload-validated-wheels dist"]
)
def test_a_checking_name_that_also_uploads_is_still_an_unread_publish_step(
    sg: Sg, tmp_path: Path, program: str
) -> None:
    """The control: a name with a publishing verb after the checking one (or first) is two
    actions, one of them publishing: listed where the release's files flow."""
    base = PER_OS.replace(PUBLISH_STEP, f"      - run: {program}\n" + PUBLISH_STEP)
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: base + "\n"})
    assert code == 0, lines
    assert [u["expression"] for u in data["unresolved"]] == [program.split()[0]]
    assert "a publish step stagegate does not read" in data["unresolved"][0]["reason"]
