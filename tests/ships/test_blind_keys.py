"""A blind spot is the same blind spot at both commits wherever its line moves: a pull
request that adds lines above an unreadable move (mdboom/cuda-python c23833b, lines added
to build-docs.yml above `pushd "${COMPONENT}/docs"`) or above a download from a run
stagegate cannot name must not make the release "newly blind"; a new one still is."""

from __future__ import annotations

from pathlib import Path

from test_stream import WF, Sg, compare

RELEASE = """\
on:
  push:
    tags: ["v*"]
jobs:
  wheels:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with: {name: wheels-linux, path: wheelhouse/*.whl}
  publish:
    needs: wheels
    runs-on: ubuntu-latest
    steps:
STEPS      - uses: pypa/gh-action-pypi-publish@release/v1
"""

ARRAY_MOVE = (
    "      - uses: actions/download-artifact@v4\n"
    "        with: {pattern: wheels-*, path: artifacts}\n"
    "      - run: |\n"
    "          wheels=( $(cat wheels.txt) )\n"
    '          mv "${wheels[@]}" dist/\n'
)
"""A move through a shell array of a file's lines: stagegate cannot work out its words
(an array of globs it can: the shell reader reads the script)."""

FROM_SOMEWHERE = '      - run: gh run download "$RUN" -p "wheels-*" -D dist\n'
"""A download from a run nothing here names."""

SHIFT = "      - run: echo one\n      - run: echo two\n"


def test_a_blind_spot_whose_line_moves_is_not_new(sg: Sg, tmp_path: Path) -> None:
    for name, step in (("move", ARRAY_MOVE), ("run", FROM_SOMEWHERE)):
        base = RELEASE.replace("STEPS", step)
        head = RELEASE.replace("STEPS", SHIFT + step)  # the same steps, two lines down
        code, data, lines = compare(sg, tmp_path / name, {WF: base}, {WF: head})
        assert code == 0, lines  # blind at both commits: listed, not failed
        (release,) = data["releases"]
        assert release["compared"] is False, lines
        reasons = [[b["reason"] for b in release[k]] for k in ("blind", "base_blind")]
        assert reasons[0] == reasons[1] and reasons[0], lines
        assert release["blind"][0]["line"] == release["base_blind"][0]["line"] + 2, lines
        assert not any("newly blind" in line for line in lines), lines


def test_a_new_blind_spot_still_fails(sg: Sg, tmp_path: Path) -> None:
    for name, step in (("move", ARRAY_MOVE), ("run", FROM_SOMEWHERE)):
        base = RELEASE.replace(
            "STEPS",
            "      - uses: actions/download-artifact@v4\n"
            "        with: {pattern: wheels-*, path: dist, merge-multiple: true}\n",
        )
        head = RELEASE.replace("STEPS", step)
        code, _, lines = compare(sg, tmp_path / name, {WF: base}, {WF: head})
        assert code == 1, lines
        assert any("newly blind" in line for line in lines), lines
