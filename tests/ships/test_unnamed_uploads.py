"""A release that takes another run's artifacts, where that run names its uploads with a
value stagegate cannot work out (NVIDIA/cccl: `name: ${{ steps.parse.outputs.name0 }}`,
the names a script prints inside a container): whether the download's pattern takes
them is decided over every value the unknown piece may have, not over its text. A
release that may take such uploads and nothing else is blind (not compared), not a
release that "selects nothing"; a pattern no value can meet leaves it alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_stream import CI, FROM_RUN, WF, Sg, compare

UNNAMED = CI.replace(
    "wheels-${{ matrix.name }}-${{ github.sha }}", "${{ steps.parse.outputs.name }}"
).replace(
    "    steps:\n",
    '    steps:\n      - id: parse\n        run: echo "name=$(ci/name.sh)" >> "$GITHUB_OUTPUT"\n',
)


@pytest.mark.parametrize("case", ["workflow_run", "gh run list"])
def test_uploads_named_by_a_script_make_a_release_of_their_run_blind(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    assert UNNAMED != CI
    files = {".github/workflows/ci.yml": UNNAMED, WF: FROM_RUN[case]}
    head = UNNAMED.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, files, {".github/workflows/ci.yml": head})
    assert code == 0, lines  # blind at both commits: listed, not failed
    (release,) = data["releases"]
    assert release["compared"] is False and not release.get("selects_nothing"), lines
    (blind,) = release["blind"]
    assert "may take 1 upload step whose names cannot be worked out" in blind["reason"]
    assert "'${{ steps.parse.outputs.name }}'" in blind["reason"]
    assert any("not compared" in line for line in lines)


@pytest.mark.parametrize(
    ("name", "flows"),
    [
        ("docs-${{ steps.parse.outputs.name }}", False),  # no value makes docs-... a wheels-...
        ("${{ steps.parse.outputs.name }}-tests", True),  # wheels-...-tests: some values do
        ("wheels-${{ steps.parse.outputs.name }}", True),  # every value does: taken
    ],
)
def test_only_a_name_the_pattern_may_meet_is_read_as_taken_or_unknown(
    sg: Sg, tmp_path: Path, name: str, flows: bool
) -> None:
    named = (
        "  named:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - id: parse\n"
        '        run: echo "name=$(ci/name.sh)" >> "$GITHUB_OUTPUT"\n'
        "      - uses: actions/upload-artifact@v4\n"
        "        with:\n"
        f"          name: {name}\n"
        "          path: wheelhouse/*.whl\n"
    )
    files = {".github/workflows/ci.yml": CI + named, WF: FROM_RUN["workflow_run"]}
    head = (CI + named).replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, files, {".github/workflows/ci.yml": head})
    (release,) = data["releases"]
    assert release["compared"] is True and release["blind"] == [], lines
    # the known uploads reach the publish step: the loss is seen whatever the other is
    assert code == 1 and [c["name"] for c in release["lost"]] == ["wheels-mac-{sha}"], lines
    taken = [c["name"] for c in release["head"]]
    assert (name in taken) is name.startswith("wheels-"), taken
    listed = [
        line
        for line in lines
        if line.startswith("unresolved where files flow") and "steps.parse.outputs.name" in line
    ]
    assert bool(listed) is flows, lines  # the unknown name, where it may be taken
