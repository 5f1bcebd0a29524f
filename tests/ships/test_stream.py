"""`stagegate continuity` on the shapes of an ordinary stream of pull requests: what ships is
compared by what it is (name and files), every publisher is read, files from outside are
named, blind spots are listed and fail where a pull request makes them, and a pull request
can accept what it means to change. Each case is a base and a head tree, beside a control
where one is needed; the shapes come from the real histories the issue measured (runner
labels, renamed workflow files, `uv publish`, composite actions, another run's artifacts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Result, computed_once
from scratch import COMPOSITE, WHEELS_RELEASE, dedent, init, pin_git

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"

BUILD = WHEELS_RELEASE.replace("windows-latest", "macos-13")
"""Two wheel legs named by their runner, downloaded into dist/ and published."""

PER_OS = BUILD.replace("wheels-${{ matrix.os }}", "wheels-${{ matrix.name }}").replace(
    "os: [ubuntu-latest, macos-13]",
    "include:\n          - {os: ubuntu-latest, name: linux}\n          - {os: macos-13, name: mac}",
)
"""The same, named by a matrix value that is not the runner label."""


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(name, raising=False)


def compare(
    sg: Sg,
    root: Path,
    base: Mapping[str, str],
    head: Mapping[str, str | None],
    *args: str,
) -> tuple[int, dict[str, Any], list[str]]:
    """continuity from a commit of ``base``'s files to one that applies ``head`` (None:
    delete the file): exit code, the JSON, the text lines."""
    repo = init(root)
    for rel, text in base.items():
        repo.write(rel, text)
    first = repo.commit("base")
    for rel, text in head.items():
        if text is None:
            (repo.root / rel).unlink()
        else:
            repo.write(rel, text)
    repo.commit("head")  # adds every change (git add -A)
    from stagegate.commands import continuity

    with computed_once(continuity, "continuity"):  # one comparison, printed in two formats
        data = sg("continuity", "--base", first, "--format", "json", *args, cwd=repo.root)
        text = sg("continuity", "--base", first, *args, cwd=repo.root)
    assert data.code == text.code, (data.out, text.out)
    return text.code, json.loads(data.out), text.out.splitlines()


def names(data: dict[str, Any], key: str) -> list[list[str]]:
    return [sorted(c["name"] for c in r[key]) for r in data["releases"]]


# --------------------------------------------------------------------------- identity


IDENTITY_SAME = {
    # a runner label changes, the names stay: nothing ships differently
    "runner-label": (PER_OS, PER_OS.replace("os: macos-13", "os: macos-15-intel")),
    # macos-latest-xlarge -> macos-latest with the same names
    "xlarge": (
        PER_OS.replace("macos-13", "macos-latest-xlarge"),
        PER_OS.replace("macos-13", "macos-latest"),
    ),
    # the matrix reordered
    "reordered": (
        PER_OS,
        PER_OS.replace(
            "- {os: ubuntu-latest, name: linux}\n          - {os: macos-13, name: mac}",
            "- {os: macos-13, name: mac}\n          - {os: ubuntu-latest, name: linux}",
        ),
    ),
    # the build job renamed, its uploads unchanged
    "job-renamed": (
        PER_OS,
        PER_OS.replace("  wheels:\n", "  build_wheels:\n").replace(
            "needs: wheels", "needs: build_wheels"
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(IDENTITY_SAME))
def test_what_ships_is_the_same_whatever_makes_it(sg: Sg, tmp_path: Path, case: str) -> None:
    base, head = IDENTITY_SAME[case]
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert code == 0, lines
    assert (names(data, "lost"), names(data, "gained")) == ([[]], [[]])
    assert names(data, "head") == [["wheels-linux", "wheels-mac"]]


def test_a_renamed_workflow_file_changes_nothing(sg: Sg, tmp_path: Path) -> None:
    code, data, lines = compare(
        sg, tmp_path, {WF: PER_OS}, {WF: None, ".github/workflows/wheels.yml": PER_OS}
    )
    assert code == 0, lines
    (release,) = data["releases"]
    assert (release["file"], release["lost"], release["gained"]) == (
        ".github/workflows/wheels.yml",
        [],
        [],
    )


def test_a_release_job_renamed_in_its_file_is_the_same_release(sg: Sg, tmp_path: Path) -> None:
    head = PER_OS.replace("  publish:\n", "  release:\n")
    code, data, lines = compare(sg, tmp_path, {WF: PER_OS}, {WF: head})
    assert code == 0, lines
    assert [r["job"] for r in data["releases"]] == ["release"]


def test_a_job_and_its_artifact_renamed_at_once_is_a_rename(sg: Sg, tmp_path: Path) -> None:
    """A fix that renames the build job and its artifacts together: each old name pairs
    uniquely with a new one (the same matrix value in the name, the same files)."""
    head = (
        PER_OS.replace("  wheels:\n", "  dist:\n")
        .replace("needs: wheels", "needs: dist")
        .replace("name: wheels-${{ matrix.name }}", "name: dist-${{ matrix.name }}")
        .replace("pattern: wheels-*", "pattern: dist-*")
    )
    code, data, lines = compare(sg, tmp_path, {WF: PER_OS}, {WF: head})
    assert code == 0, lines
    (release,) = data["releases"]
    assert sorted((r["from"], r["to"]) for r in release["renamed"]) == [
        ("wheels-linux", "dist-linux"),
        ("wheels-mac", "dist-mac"),
    ]


def test_a_leg_dropped_is_lost_and_one_added_gained(sg: Sg, tmp_path: Path) -> None:
    """The control of the identity cases: a row really gone, another really new."""
    head = PER_OS.replace("{os: macos-13, name: mac}", "{os: windows-latest, name: win}")
    code, data, lines = compare(sg, tmp_path, {WF: PER_OS}, {WF: head})
    assert code == 1, lines
    assert (names(data, "lost"), names(data, "gained")) == ([["wheels-mac"]], [["wheels-win"]])




def test_an_upload_moved_into_a_local_composite_action_changes_nothing(
    sg: Sg, tmp_path: Path
) -> None:
    head = PER_OS.replace(
        "      - uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: wheels-${{ matrix.name }}\n"
        "          path: wheelhouse/*.whl\n",
        "      - uses: ./.github/actions/upload\n"
        "        with:\n"
        "          name: wheels-${{ matrix.name }}\n",
    )
    assert head != PER_OS
    code, data, lines = compare(
        sg, tmp_path, {WF: PER_OS}, {WF: head, ".github/actions/upload/action.yml": COMPOSITE}
    )
    assert code == 0, lines
    (release,) = data["releases"]
    assert (release["lost"], release["gained"]) == ([], [])
    assert sorted(c["matrix"]["name"] for c in release["head"]) == ["linux", "mac"]


# --------------------------------------------------------------------------- publishers

PUBLISH_STEP = "      - uses: pypa/gh-action-pypi-publish@release/v1\n"

PUBLISHERS = {
    "uv publish": "      - run: uv publish\n",
    "uv publish --trusted-publishing always dist/*": "      - run: uv publish --trusted-publishing always dist/*\n",
    "poetry publish": "      - run: poetry publish -u __token__ -p x\n",
    "hatch publish": "      - run: hatch publish\n",
    "pdm publish --no-build": "      - run: pdm publish --no-build\n",
    "twine upload dist/*": "      - run: python -m twine upload --skip-existing dist/*\n",
    "gh release create": '      - run: gh release create "$TAG" dist/*.whl --notes x\n',
    "ncipollo": "      - uses: ncipollo/release-action@v1\n        with:\n          artifacts: dist/*.whl\n",
}


@pytest.mark.parametrize("tool", sorted(PUBLISHERS))
def test_every_publisher_is_read(sg: Sg, tmp_path: Path, tool: str) -> None:
    """Each publisher reads the wheels from dist/ as the pypa action does: dropping a leg is
    lost, and the same tree compared with itself is ok (the control)."""
    base = PER_OS.replace(PUBLISH_STEP, PUBLISHERS[tool])
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path / "drop", {WF: base}, {WF: head})
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-mac"]]
    assert names(data, "base") == [["wheels-linux", "wheels-mac"]]


def test_a_publisher_that_builds_what_it_publishes_ships_no_artifact(
    sg: Sg, tmp_path: Path
) -> None:
    base = PER_OS.replace(PUBLISH_STEP, "      - run: flit publish\n")
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert code == 0, lines
    (release,) = data["releases"]
    assert (release["publishers"], release["base"], release["head"]) == (["flit publish"], [], [])


DECLARED = dedent(
    """\
    version: 1
    migration: declared
    stage: 0
    workflows:
      publishers:
        "./scripts/publish.sh": {files: ["dist/*.whl"]}
        "example/upload-to-index@v3": {files: ["dist/*"]}
    """
)


@pytest.mark.parametrize(
    "step",
    [
        "      - run: ./scripts/publish.sh --index prod\n",
        "      - uses: example/upload-to-index@v3\n",
    ],
)
def test_a_publisher_declared_in_one_line_is_read(sg: Sg, tmp_path: Path, step: str) -> None:
    base = PER_OS.replace(PUBLISH_STEP, step)
    head = base.replace("- {os: macos-13, name: mac}", "")
    files = {WF: base, "migration.yaml": DECLARED, "scripts/publish.sh": "#!/bin/sh\n"}
    code, data, lines = compare(sg, tmp_path / "declared", files, {WF: head})
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-mac"]]
    # without the declaration the step is not read: the release is blind at both commits
    files.pop("migration.yaml")
    code, data, lines = compare(sg, tmp_path / "bare", files, {WF: head})
    assert code == 0, lines
    (release,) = data["releases"]
    assert release["compared"] is False and release["blind"][0]["reason"].startswith(
        "its publish step is not read"
    )


# --------------------------------------------------------------------------- attacks


NO_PUBLISH = {
    "deleted": PER_OS.replace(PUBLISH_STEP, ""),
    "if-false": PER_OS.replace(PUBLISH_STEP, PUBLISH_STEP + "        if: false\n"),
    "before-download": PER_OS.replace(PUBLISH_STEP, "").replace(
        "    steps:\n      - uses: actions/download-artifact@v4",
        "    steps:\n" + PUBLISH_STEP + "      - uses: actions/download-artifact@v4",
    ),
    "rm-dist": PER_OS.replace(PUBLISH_STEP, "      - run: rm -rf dist\n" + PUBLISH_STEP),
    "packages-dir-elsewhere": PER_OS.replace(
        PUBLISH_STEP, PUBLISH_STEP + "        with:\n          packages-dir: build/\n"
    ),
}


@pytest.mark.parametrize("case", sorted(NO_PUBLISH))
def test_a_release_that_no_longer_publishes_its_downloads_loses_them(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    head = NO_PUBLISH[case]
    assert head != PER_OS
    code, data, lines = compare(sg, tmp_path, {WF: PER_OS}, {WF: head})
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-linux", "wheels-mac"]]


def test_the_publish_step_reading_from_where_it_runs(sg: Sg, tmp_path: Path) -> None:
    """defaults.run.working-directory moves a run: publisher, not the download."""
    base = PER_OS.replace(PUBLISH_STEP, "      - run: twine upload dist/*\n")
    head = base.replace(
        "  publish:\n", "  publish:\n    defaults:\n      run:\n        working-directory: pkg\n"
    )
    code, data, lines = compare(sg, tmp_path / "moved", {WF: base}, {WF: head})
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-linux", "wheels-mac"]]
    # control: the download lands in pkg/dist too
    fixed = head.replace("path: dist", "path: pkg/dist")
    code, data, lines = compare(sg, tmp_path / "fixed", {WF: base}, {WF: fixed})
    assert code == 0, lines


OUTSIDE = {
    "curl": "      - run: curl -sSL -o dist/extra-1.0.whl https://example.com/extra.whl\n",
    "wget": "      - run: wget -P dist https://example.com/extra.whl\n",
    "another run": (
        "      - run: gh run download 12345 -n more-wheels -D dist\n        env: {GH_TOKEN: x}\n"
    ),
}


@pytest.mark.parametrize("case", sorted(OUTSIDE))
def test_files_from_outside_the_run_are_named_where_a_pull_request_adds_them(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    head = PER_OS.replace(PUBLISH_STEP, OUTSIDE[case] + PUBLISH_STEP)
    code, data, lines = compare(sg, tmp_path / "added", {WF: PER_OS}, {WF: head})
    assert code == 1, lines
    (release,) = data["releases"]
    assert release["foreign"] or release["blind"], lines
    # control: already there at the base, it is listed but does not fail
    code, data, lines = compare(sg, tmp_path / "kept", {WF: head}, {WF: head + "# x\n"})
    assert code == 0, lines


IFS = {
    "label-or-tag": "github.event_name == 'pull_request' && contains(github.event.pull_request.labels.*.name, 'test-publish') || startsWith(github.ref, 'refs/tags/')",
    "double-not": "!!startsWith(github.ref, 'refs/tags/')",
    "ref-type": "${{ github.ref_type == 'tag' }}",
}


@pytest.mark.parametrize("case", sorted(IFS))
def test_a_job_that_can_publish_on_a_tag_is_a_release_whatever_else_its_if_admits(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    base = PER_OS.replace(
        'on:\n  push:\n    tags: ["v*"]\n', "on:\n  push:\n  pull_request:\n"
    ).replace(
        "  publish:\n",
        f'  publish:\n    if: "{IFS[case]}"\n'
        if "'" in IFS[case]
        else f"  publish:\n    if: {IFS[case]}\n",
    )
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-mac"]]


def test_a_job_that_never_runs_on_a_tag_is_no_release(sg: Sg, tmp_path: Path) -> None:
    """The control: a job only a pull request runs publishes no release."""
    base = PER_OS.replace('on:\n  push:\n    tags: ["v*"]\n', "on:\n  push:\n  pull_request:\n")
    base = base.replace("  publish:\n", "  publish:\n    if: github.event_name == 'pull_request'\n")
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert (code, data["releases"]) == (0, []), lines


def test_a_workflow_on_create_releases(sg: Sg, tmp_path: Path) -> None:
    base = PER_OS.replace('on:\n  push:\n    tags: ["v*"]\n', "on: create\n")
    head = base.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, {WF: base}, {WF: head})
    assert code == 1, lines
    assert data["releases"][0]["events"] == ["create"]


SHA = "0" * 39 + "1"


def test_an_unversioned_commit_pin_on_the_release_path_fails_where_a_pull_request_adds_it(
    sg: Sg, tmp_path: Path
) -> None:
    head = PER_OS.replace("actions/upload-artifact@v4", f"actions/upload-artifact@{SHA}")
    code, _data, lines = compare(sg, tmp_path / "added", {WF: PER_OS}, {WF: head})
    assert code == 1, lines
    assert lines[0].endswith("not compared")
    comments = (
        "# v4",
        "# v4.6.2",
        "# tag=v4.6.2",
        "# ratchet:actions/upload-artifact@v4",
        "# pin @v4",
    )
    for i, comment in enumerate(comments):  # the control: each pin comment form is read
        pinned = PER_OS.replace(
            "actions/upload-artifact@v4", f"actions/upload-artifact@{SHA} {comment}"
        )
        code, _data, lines = compare(sg, tmp_path / f"c{i}", {WF: PER_OS}, {WF: pinned})
        assert code == 0, (comment, lines)


# --------------------------------------------------------------------------- another run

CI = dedent(
    """\
    name: CI
    on:
      push:
        tags: ["v*"]
    jobs:
      wheels:
        runs-on: ${{ matrix.os }}
        strategy:
          matrix:
            include:
              - {os: ubuntu-latest, name: linux}
              - {os: macos-13, name: mac}
        steps:
          - uses: actions/upload-artifact@v4
            with:
              name: wheels-${{ matrix.name }}-${{ github.sha }}
              path: wheelhouse/*.whl
    """
)
FROM_RUN = {
    "workflow_run": dedent(
        """\
        on:
          workflow_run:
            workflows: [CI]
            types: [completed]
        jobs:
          publish:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/download-artifact@v4
                with:
                  run-id: ${{ github.event.workflow_run.id }}
                  github-token: ${{ github.token }}
                  pattern: wheels-*
                  path: dist
                  merge-multiple: true
              - uses: pypa/gh-action-pypi-publish@release/v1
        """
    ),
    "gh run list": dedent(
        """\
        on: workflow_dispatch
        jobs:
          find:
            runs-on: ubuntu-latest
            outputs:
              run: ${{ steps.find.outputs.run }}
            steps:
              - id: find
                run: echo "run=$(gh run list --workflow ci.yml -L 1 --json databaseId -q '.[0].databaseId')" >> "$GITHUB_OUTPUT"
          publish:
            needs: find
            runs-on: ubuntu-latest
            steps:
              - run: gh run download "${{ needs.find.outputs.run }}" -p "wheels-*" -D dist
              - run: mv dist/*/*.whl dist/
              - uses: pypa/gh-action-pypi-publish@release/v1
        """
    ),
    "dawidd6": dedent(
        """\
        on: workflow_dispatch
        jobs:
          publish:
            runs-on: ubuntu-latest
            steps:
              - uses: dawidd6/action-download-artifact@v6
                with:
                  workflow: ci.yml
                  name: wheels-.*
                  name_is_regexp: true
                  path: dist
              - run: mv dist/*/*.whl dist/
              - uses: pypa/gh-action-pypi-publish@release/v1
        """
    ),
}


@pytest.mark.parametrize("case", sorted(FROM_RUN))
def test_a_release_from_another_run_compares_that_runs_uploads(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    files = {".github/workflows/ci.yml": CI, WF: FROM_RUN[case]}
    head = CI.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path, files, {".github/workflows/ci.yml": head})
    assert code == 1, lines
    (release,) = data["releases"]
    assert release["sources"] == [".github/workflows/ci.yml", WF]
    assert [c["name"] for c in release["lost"]] == ["wheels-mac-{sha}"]


def test_a_release_from_a_run_stagegate_cannot_name_is_declared_in_one_line(
    sg: Sg, tmp_path: Path
) -> None:
    other = FROM_RUN["gh run list"].replace("--workflow ci.yml ", "")
    files = {".github/workflows/ci.yml": CI, WF: other}
    head = CI.replace("- {os: macos-13, name: mac}", "")
    code, data, lines = compare(sg, tmp_path / "bare", files, {".github/workflows/ci.yml": head})
    assert code == 0, lines  # blind at both commits: listed, not compared
    assert data["releases"][0]["compared"] is False
    declared = 'version: 1\nmigration: m\nstage: 0\nworkflows:\n  runs:\n    ".github/workflows/release.yml#publish": .github/workflows/ci.yml\n'
    files["migration.yaml"] = declared
    code, data, lines = compare(
        sg, tmp_path / "declared", files, {".github/workflows/ci.yml": head}
    )
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-mac-${{ github.sha }}"]]  # the model binds no sha


# --------------------------------------------------------------------------- accepting


def test_a_release_change_line_accepts_what_the_pull_request_means(sg: Sg, tmp_path: Path) -> None:
    head = PER_OS.replace("{os: macos-13, name: mac}", "{os: windows-latest, name: win}")
    accept = tmp_path / "accept.txt"
    accept.write_text(
        "Dropping mac, adding Windows.\n\nRelease-Change: lost wheels-mac\nRelease-Change: gained wheels-win\n"
    )
    code, data, lines = compare(
        sg, tmp_path / "r", {WF: PER_OS}, {WF: head}, "--accept", str(accept)
    )
    assert code == 0, lines
    (release,) = data["releases"]
    assert sorted((a["change"], a["name"], a["declared"]) for a in release["accepted"]) == [
        ("gained", "wheels-win", f"{accept}:4"),
        ("lost", "wheels-mac", f"{accept}:3"),
    ]
    assert (
        "  accepted (lost): mac ('wheels-mac', .github/workflows/release.yml:14), declared by "
        in "\n".join(lines)
        or any(line.startswith("  accepted (lost)") for line in lines)
    )
    # only what is declared: the gain alone still fails on the loss
    accept.write_text("Release-Change: gained wheels-win\n")
    code, data, lines = compare(
        sg, tmp_path / "half", {WF: PER_OS}, {WF: head}, "--accept", str(accept)
    )
    assert code == 1, lines
    assert names(data, "lost") == [["wheels-mac"]]


def test_the_pull_request_description_carries_release_change_lines(
    sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = PER_OS.replace("- {os: macos-13, name: mac}", "")
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "body": "Drop the mac leg.\r\n\r\nRelease-Change: lost wheels-m*\r\n"
                }
            }
        )
    )
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")  # not a pull request: the body is not read
    code, _data, lines = compare(sg, tmp_path / "push", {WF: PER_OS}, {WF: head})
    assert code == 1, lines
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    code, data, lines = compare(sg, tmp_path / "pr", {WF: PER_OS}, {WF: head})
    assert code == 0, lines
    assert (
        data["releases"][0]["accepted"][0]["declared"] == "the pull request's description, line 3"
    )


def test_a_malformed_release_change_line_is_invalid_input(sg: Sg, tmp_path: Path) -> None:
    accept = tmp_path / "accept.txt"
    accept.write_text("Release-Change: moved wheels-*\n")
    repo = init(tmp_path / "r")
    repo.write(WF, PER_OS)
    base = repo.commit("base")
    result = sg("continuity", "--base", base, "--accept", str(accept), cwd=repo.root)
    assert result.code == 2
    assert result.err.startswith(
        f"{accept}:1:17: a Release-Change line says 'gained GLOB' or 'lost GLOB'"
    ), result.err
    assert "this one says 'moved wheels-*'" in result.err
    missing = sg(
        "continuity", "--base", base, "--accept", str(tmp_path / "none.txt"), cwd=repo.root
    )
    assert missing.code == 2 and "cannot read it" in missing.err


# --------------------------------------------------------------------------- wheels

CIBW = dedent(
    """\
    on:
      push:
        tags: ["v*"]
    jobs:
      build_wheels:
        runs-on: ${{ matrix.os }}
        strategy:
          matrix:
            os: [ubuntu-latest, windows-latest]
        steps:
          - uses: pypa/cibuildwheel@v2.23.3
            env:
              CIBW_SKIP: "pp* cp38-macosx_*"
          - uses: actions/upload-artifact@v4
            with:
              name: wheels-${{ matrix.os }}
              path: wheelhouse
      publish:
        needs: build_wheels
        runs-on: ubuntu-latest
        steps:
          - uses: actions/download-artifact@v4
            with:
              pattern: wheels-*
              path: dist
              merge-multiple: true
          - uses: pypa/gh-action-pypi-publish@release/v1
    """
)
PROJECT = {
    "setup.cfg": "[metadata]\nname = pkg\n\n[options]\npython_requires = >=3.8\n",
    "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n',
}


def test_a_release_that_loses_wheels_under_the_same_names_says_which_and_why(
    sg: Sg, tmp_path: Path
) -> None:
    """CIBW_SKIP widened from cp38 on macOS to every cp38: every artifact name stays, the
    cp38 Linux and Windows wheels are gone, and the setting is named."""
    head = CIBW.replace('"pp* cp38-macosx_*"', '"pp* cp38-*"')
    code, data, lines = compare(sg, tmp_path / "skip", {WF: CIBW, **PROJECT}, {WF: head})
    assert code == 1, lines
    (release,) = data["releases"]
    assert (release["lost"], release["gained"]) == ([], [])
    assert release["wheels"]["lost"] == [
        "cp38-manylinux_i686",
        "cp38-manylinux_x86_64",
        "cp38-musllinux_i686",
        "cp38-musllinux_x86_64",
        "cp38-win32",
        "cp38-win_amd64",
    ]
    assert (
        "  wheels: loses cp38-manylinux_i686, cp38-manylinux_x86_64, cp38-musllinux_i686, "
        "cp38-musllinux_x86_64, cp38-win32, cp38-win_amd64 (CIBW_SKIP at "
        ".github/workflows/release.yml:13)"
    ) in lines
    # the pull request says it means it: accepted, identifiers matched by a glob
    accept = tmp_path / "accept.txt"
    accept.write_text("Release-Change: lost cp38-*\n")
    code, data, lines = compare(
        sg, tmp_path / "meant", {WF: CIBW, **PROJECT}, {WF: head}, "--accept", str(accept)
    )
    assert code == 0, lines
    assert len(data["releases"][0]["wheels"]["accepted"]) == 6


def test_a_runner_label_or_a_bump_that_builds_the_same_wheels_changes_nothing(
    sg: Sg, tmp_path: Path
) -> None:
    head = CIBW.replace("ubuntu-latest, windows-latest", "ubuntu-24.04, windows-2022")
    code, data, lines = compare(sg, tmp_path / "label", {WF: CIBW, **PROJECT}, {WF: head})
    (release,) = data["releases"]
    assert (release["wheels"]["lost"], release["wheels"]["gained"]) == ([], [])
    assert sorted((r["from"], r["to"]) for r in release["renamed"]) == [
        ("wheels-ubuntu-latest", "wheels-ubuntu-24.04"),
        ("wheels-windows-latest", "wheels-windows-2022"),
    ]
    bump = CIBW.replace("v2.23.3", "v2.23.2")
    code, data, lines = compare(sg, tmp_path / "bump", {WF: CIBW, **PROJECT}, {WF: bump})
    assert code == 0, lines


def test_wheels_that_depend_on_the_event_are_compared_as_the_tag_run_builds_them(
    sg: Sg, tmp_path: Path
) -> None:
    """Pull requests build fewer wheels than tags (`CIBW_SKIP` from `github.ref`): read
    for no event in particular the wheels are unknown; the release runs on a tag push,
    so they are computed as that run builds them, and the tag run's loss is named."""
    base = CIBW.replace(
        '"pp* cp38-macosx_*"',
        "${{ startsWith(github.ref, 'refs/tags/') && 'pp* cp38-macosx_*' || 'pp* *-win32' }}",
    )
    head = base.replace("'pp* cp38-macosx_*'", "'pp* cp38-*'")
    code, data, lines = compare(sg, tmp_path / "tag", {WF: base, **PROJECT}, {WF: head})
    assert code == 1, lines
    (release,) = data["releases"]
    assert release["wheels"]["run"] == "push-tag"
    assert "cp38-win_amd64" in release["wheels"]["lost"]
    assert "in a push-tag run (the wheels depend on the event)" in lines[0]
    # what pull requests build changes, the tag run's wheels stay: nothing ships otherwise
    same = base.replace("'pp* *-win32'", "'pp* *-win32 *-musllinux_*'")
    code, data, lines = compare(sg, tmp_path / "pr", {WF: base, **PROJECT}, {WF: same})
    assert code == 0, lines


TWICE = dedent(
    """\
    on:
      push:
        tags: ["v*"]
    jobs:
      build_wheels:
        runs-on: ubuntu-latest
        strategy:
          matrix:
            image: [manylinux2014, manylinux_2_28]
        steps:
          - uses: pypa/cibuildwheel@v2.23.3
            env:
              CIBW_BUILD: "cp312-manylinux_x86_64"
              CIBW_MANYLINUX_X86_64_IMAGE: ${{ matrix.image }}
          - uses: actions/upload-artifact@v4
            with:
              name: wheels-${{ matrix.image }}
              path: wheelhouse
      publish:
        needs: build_wheels
        runs-on: ubuntu-latest
        steps:
          - uses: actions/download-artifact@v4
            with:
              pattern: wheels-*
              path: dist
              merge-multiple: true
          - uses: pypa/gh-action-pypi-publish@release/v1
    """
)


def test_one_wheel_from_two_uploads_fails_where_a_pull_request_makes_it(
    sg: Sg, tmp_path: Path
) -> None:
    """Two legs building one wheel of one project into one merged dist/: the same file
    name twice (yarl 43aec69: PyPI refused the torn wheel). Another container image makes
    another file name; a duplicate the base already had is not the pull request's."""
    code, data, lines = compare(sg, tmp_path / "images", {WF: TWICE, **PROJECT}, {WF: TWICE})
    assert code == 0 and data["releases"][0]["duplicates"] == [], lines
    head = TWICE.replace("_IMAGE: ${{ matrix.image }}", "_IMAGE: manylinux2014")
    code, data, lines = compare(sg, tmp_path / "twice", {WF: TWICE, **PROJECT}, {WF: head})
    assert code == 1, lines
    (release,) = data["releases"]
    assert [d["identifiers"] for d in release["duplicates"]] == [["cp312-manylinux_x86_64"]]
    assert any(line.startswith("  one wheel from two uploads: build_wheels{") for line in lines)
    # the same duplicate at both commits is not the pull request's doing
    code, data, lines = compare(sg, tmp_path / "had", {WF: head, **PROJECT}, {WF: head + "\n"})
    assert code == 0, lines


# --------------------------------------------------------------------------- wheels a script builds

MERGED = FIXTURES / "history" / "39-maturin-in-local-action-shell-vars"
ACTION = ".github/actions/manylinux/action.yaml"
ARTIFACT = ".github/workflows/artifact.yaml"


def _side(side: str) -> dict[str, str]:
    root = MERGED / side
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_merged_matrix_that_also_drops_an_interpreter_names_the_lost_wheels(
    sg: Sg, tmp_path: Path
) -> None:
    """history/39's refactor (per-arch jobs into one matrix job, the wheels built by maturin
    in a local action from shell variables) dropping python3.9 as well: the renamed uploads
    pair by their wheels, the 3.9 ones are lost with the identifiers they carried."""
    head = _side("head")
    row = "          { interpreter: 'python3.9', compatibility: \"manylinux_2_17\", publish: true },\n"
    assert row in head[ARTIFACT]
    head[ARTIFACT] = head[ARTIFACT].replace(row, "")
    code, data, lines = compare(sg, tmp_path / "drop", _side("base"), head)
    assert code == 1, lines
    (release,) = data["releases"]
    assert names(data, "lost") == [
        [
            "orjson_manylinux_aarch64_python3.9_manylinux_2_17",
            "orjson_manylinux_amd64_python3.9_manylinux_2_17",
        ]
    ]
    assert names(data, "gained") == [[]]
    assert len(release["renamed"]) == 2
    assert (release["wheels"]["lost"], release["wheels"]["gained"]) == (
        ["cp39-manylinux_aarch64", "cp39-manylinux_x86_64"],
        [],
    )
    assert (
        "  wheels: loses cp39-manylinux_aarch64, cp39-manylinux_x86_64 (no step builds them "
        f"(was {ACTION}:36))"
    ) in lines, lines


def test_an_interpreter_the_script_cannot_compute_leaves_the_wheels_unresolved(
    sg: Sg, tmp_path: Path
) -> None:
    """The same refactor where the action's script takes the interpreter from a command
    (`uv python find`): the identifiers are not known at either commit, each upload says
    why at the build's line, and the uploads renamed are lost and gained."""
    found = 'export PYTHON="$(uv python find ${{ inputs.interpreter }})"'
    base, head = _side("base"), _side("head")
    for tree in (base, head):
        tree[ACTION] = tree[ACTION].replace('export PYTHON="${{ inputs.interpreter }}"', found)
        assert found in tree[ACTION]
    code, data, lines = compare(sg, tmp_path / "unknown", base, head)
    assert code == 1, lines
    (release,) = data["releases"]
    assert [len(n) for n in names(data, "lost") + names(data, "gained")] == [3, 3]
    assert release["renamed"] == []
    wheels = release["wheels"]
    assert (wheels["lost"], wheels["gained"]) == ([], [])
    assert {(u["file"], u["line"], u["expression"], u["reason"]) for u in wheels["unresolved"]} == {
        (
            ACTION,
            36,
            "--interpreter",
            f"--interpreter=$(uv python find python{v}) is not known: $PYTHON is assigned at "
            f"{ACTION}:24 from $(uv python find python{v}): $(uv python find python{v}) runs "
            "a command",
        )
        for v in ("3.9", "3.13", "3.14")
    }
