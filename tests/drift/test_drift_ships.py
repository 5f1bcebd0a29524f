"""drift with what the artifact actions do (issue 22): collisions, backends, exact names,
where files land, unread and declared remote actions (`workflows.actions`), run kinds
(`events:` on items), and the consequence every finding names for the active releases
and consumers. One tiny model and one release workflow, changed one way per test; the
unchanged pair is the control that passes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Result

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"

MODEL = """\
version: 1
migration: tiny
stage: 0
axes:
  os: [linux, windows]
producers:
  wheels:
    artifacts: ["wheels-{os}"]
    jobs: [".github/workflows/release.yml#build"]
  sdist:
    artifacts: [sdist]
    jobs: [".github/workflows/release.yml#sdist"]
consumers:
  smoke:
    inputs:
      - select: "wheels-linux"
    jobs: [".github/workflows/release.yml#smoke"]
releases:
  pypi:
    tags: ["v*"]
    select: ["wheels-*", "sdist"]
    jobs: [".github/workflows/release.yml#publish"]
"""

RELEASE = """\
on:
  push:
    tags: ["v*"]
jobs:
  build:
    runs-on: ${{ matrix.os }}-latest
    strategy:
      matrix:
        os: [linux, windows]
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-${{ matrix.os }}
          path: wheelhouse/*.whl
  sdist:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: sdist
          path: dist/*.tar.gz
  smoke:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: wheels-linux
  publish:
    needs: [build, sdist]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: "*"
          path: dist
          merge-multiple: true
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def repo(tmp_path: Path, *changes: tuple[str, str], model: str = MODEL) -> Path:
    """The tiny model and the release workflow with ``changes`` (old, new) made to it."""
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "stages").mkdir()
    (root / "migration.yaml").write_text(model)
    text = RELEASE
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    (root / WF).write_text(text)
    return root


def drift(sg: Sg, root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = sg("drift", "--format", "json", *args, cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)


def only(data: dict[str, Any]) -> dict[str, Any]:
    (finding,) = data["findings"]
    return finding  # type: ignore[no-any-return]


def test_the_control_has_no_finding(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path)
    result = sg("drift", cwd=root)
    assert (result.code, result.out) == (
        0,
        "drift at stage 0: 1 workflow file, 3 uploads, 2 downloads: no drift\n",
    )


def test_two_rows_uploading_one_name_is_a_collision_with_its_consequence(
    sg: Sg, tmp_path: Path
) -> None:
    root = repo(tmp_path, ("name: wheels-${{ matrix.os }}", "name: wheels-linux"))
    result = sg("drift", cwd=root)
    assert result.code == 1
    assert result.out.splitlines()[1] == (
        f"{WF}:13: upload-collision: 2 upload contexts make the artifact 'wheels-linux': "
        f"build{{os=linux}} ({WF}:13), build{{os=windows}} ({WF}:13); upload-artifact v4+ "
        "refuses the second upload of a name (409 Conflict): only one of them exists. "
        "Consequence: release pypi would ship 1 of its 2 uploads of 'wheels-linux': lost "
        "build{os=windows}; consumer smoke would take 1 of its 2 uploads of 'wheels-linux': "
        "lost build{os=windows}."
    )
    _, data = drift(sg, root)
    collision = next(f for f in data["findings"] if f["kind"] == "upload-collision")
    assert collision["consequences"] == [
        {"item": "pypi", "kind": "release", "lost": ["build{os=windows}"], "gained": []},
        {"item": "smoke", "kind": "consumer", "lost": ["build{os=windows}"], "gained": []},
    ]


def test_overwrite_true_is_its_own_finding(sg: Sg, tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        ("name: wheels-${{ matrix.os }}", "name: wheels-linux\n          overwrite: true"),
    )
    _, data = drift(sg, root)
    kinds = [f["kind"] for f in data["findings"]]
    assert kinds == ["missing-upload", "upload-overwrite"]
    assert data["findings"][1]["consequences"][0]["lost"] == ["build{os=linux}"]


def test_a_v3_upload_a_v4_download_cannot_see(sg: Sg, tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        (
            "      - uses: actions/upload-artifact@v4\n        with:\n          name: sdist",
            "      - uses: actions/upload-artifact@v3\n        with:\n          name: sdist",
        ),
    )
    code, data = drift(sg, root)
    assert code == 1
    finding = only(data)
    assert (finding["kind"], finding["file"], finding["line"]) == ("backend-mismatch", WF, 35)
    assert finding["message"].startswith(
        "release job publish: download-artifact v4 cannot see '*', uploaded with the other "
        f"artifact backend by sdist ({WF}:20, v3)"
    )
    assert finding["message"].endswith(
        "Consequence: release pypi would ship 2 of its 3 artifacts: lost sdist."
    )
    assert finding["consequences"] == [
        {"item": "pypi", "kind": "release", "lost": ["sdist"], "gained": []}
    ]


def test_a_name_holding_a_glob_selects_nothing(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, ("          name: wheels-linux", "          name: wheels-*"))
    code, data = drift(sg, root)
    assert code == 1
    found = {f["kind"]: f for f in data["findings"]}
    assert set(found) == {"select-differs", "exact-name-glob"}
    assert found["exact-name-glob"]["line"] == 28
    assert found["exact-name-glob"]["consequences"] == [
        {"item": "smoke", "kind": "consumer", "lost": ["wheels-linux"], "gained": []}
    ]


def test_several_artifacts_without_merge_multiple_land_one_folder_each(
    sg: Sg, tmp_path: Path
) -> None:
    root = repo(tmp_path, ("          merge-multiple: true\n", ""))
    result = sg("drift", cwd=root)
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        f"{WF}:35: where-files-land: release job publish: the download at {WF}:35 lands "
        "build{os=linux} ('wheels-linux') in dist/wheels-linux/*.whl, build{os=windows} "
        "('wheels-windows') in dist/wheels-windows/*.whl, sdist ('sdist') in "
        "dist/sdist/*.tar.gz; it takes several artifacts without merge-multiple: true, so each "
        "lands in its own folder, and the publish step pypa/gh-action-pypi-publish "
        f"({WF}:37) reads dist/*: those files are not published; add merge-multiple: true (or "
        "name: one artifact). Consequence: release pypi would ship 0 of its 3 artifacts: lost "
        "wheels-linux, wheels-windows, sdist."
    )


def test_a_download_without_path_lands_outside_the_publish_folder(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, ("          path: dist\n", ""))
    _, data = drift(sg, root)
    finding = only(data)
    assert finding["kind"] == "where-files-land"
    assert "it has no path:, so the files land in the workspace" in finding["message"]
    assert finding["consequences"][0]["lost"] == ["wheels-linux", "wheels-windows", "sdist"]


def test_a_download_below_the_publish_folder_is_named_as_such(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, ("          path: dist\n", "          path: dist/all\n"))
    _, data = drift(sg, root)
    finding = only(data)
    assert finding["kind"] == "where-files-land"
    assert (
        "its path: dist/all is not the folder the publish step reads, and the publish step "
        "pypa/gh-action-pypi-publish (.github/workflows/release.yml:38) reads dist/*: those "
        "files are not published; download into that folder." in finding["message"]
    )


SIGN = """\
      - uses: pypa/gh-action-pypi-publish@release/v1
      - uses: example/sign-and-upload@v2
        with:
          artifact: signatures
"""


def test_an_unknown_remote_action_where_artifacts_flow_is_unread(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, ("      - uses: pypa/gh-action-pypi-publish@release/v1\n", SIGN))
    result = sg("drift", cwd=root)
    assert result.code == 0  # information without --strict
    assert result.out.splitlines()[:2] == [
        "1 step where artifacts flow is not read (declare remote actions under "
        "workflows.actions, bind what an if: reads; --strict fails on them)",
        f"  {WF}:39: unread example/sign-and-upload@v2: a remote action stagegate does not "
        "know: what it uploads, downloads or publishes is not read",
    ]
    code, data = drift(sg, root, "--strict")
    assert code == 1 and data["ok"] is True
    assert [(u["line"], u["expression"]) for u in data["unread"]] == [
        (39, "example/sign-and-upload@v2")
    ]


def test_a_publish_command_stagegate_does_not_read_is_unread(sg: Sg, tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        ("      - uses: pypa/gh-action-pypi-publish@release/v1\n", "      - run: npm publish\n"),
    )
    code, data = drift(sg, root, "--strict")
    assert code == 1
    assert [(u["line"], u["expression"], u["reason"]) for u in data["unread"]] == [
        (38, "npm publish", "a publish command stagegate does not read: which files it "
         "publishes is not known; declare it under workflows.publishers")
    ]  # fmt: skip
    assert drift(sg, repo(tmp_path / "control"), "--strict")[0] == 0
    # uv publish is read (its files: dist/*), as the pypa action is
    read = repo(
        tmp_path / "uv",
        ("      - uses: pypa/gh-action-pypi-publish@release/v1\n", "      - run: uv publish\n"),
    )
    assert drift(sg, read, "--strict") == drift(sg, repo(tmp_path / "control2"), "--strict")


def test_an_unknown_remote_action_where_no_artifact_flows_is_not_listed(
    sg: Sg, tmp_path: Path
) -> None:
    root = repo(tmp_path)
    (root / ".github/workflows/lint.yml").write_text(
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: example/lint@v1\n"
    )
    code, data = drift(sg, root, "--strict")
    assert (code, data["unread"]) == (0, [])  # in a job that publishes: the test above


def test_a_declared_remote_action_is_read(sg: Sg, tmp_path: Path) -> None:
    declared = (
        MODEL + "workflows:\n  actions:\n    example/sign-and-upload@v2:\n"
        '      uploads: ["${{ inputs.artifact }}-${{ inputs.missing }}x"]\n'
    )
    root = repo(
        tmp_path, ("      - uses: pypa/gh-action-pypi-publish@release/v1\n", SIGN), model=declared
    )
    code, data = drift(sg, root, "--strict")
    assert code == 1 and data["unread"] == []
    finding = only(data)
    assert (finding["kind"], finding["line"]) == ("undeclared-upload", 39)
    assert "names signatures-x;" in finding["message"]  # an input not given is empty
    # the control: declared by a producer (whose rows the publish job's "*" selects too)
    model = declared.replace(
        "consumers:",
        '  signatures:\n    artifacts: [signatures-x]\n    jobs: [".github/workflows/release.yml#publish"]\nconsumers:',
    ).replace('select: ["wheels-*", "sdist"]', 'select: ["wheels-*", "sdist", "signatures-x"]')
    (root / "migration.yaml").write_text(model)
    assert drift(sg, root, "--strict")[0] == 0


def test_a_declared_action_text_that_does_not_parse_is_invalid_input(
    sg: Sg, tmp_path: Path
) -> None:
    bad = MODEL + "workflows:\n  actions:\n    example/a@v1:\n      downloads: ['${{ inputs. }}']\n"
    root = repo(tmp_path, model=bad)
    result = sg("drift", cwd=root)
    assert result.code == 2
    assert result.err.startswith("migration.yaml:26:32: "), result.err
    assert "invalid expression: expected a property name after '.'" in result.err
    for key, says in (
        ("./.github/actions/local@v1", "is not a remote action"),
        ("actions/upload-artifact@v4", "is read by stagegate itself"),
    ):
        text = MODEL + f"workflows:\n  actions:\n    {key}:\n      uploads: [x]\n"
        (root / "migration.yaml").write_text(text)
        result = sg("drift", cwd=root)
        assert result.code == 2 and says in result.err, result.err
    wrong = MODEL + "workflows:\n  actions:\n    not-an-action:\n      uploads: [x]\n"
    (root / "migration.yaml").write_text(wrong)
    result = sg("drift", cwd=root)
    assert result.code == 2
    assert result.err.startswith(
        "migration.yaml:25:5: $.workflows.actions.not-an-action: 'not-an-action' is not a "
        "remote action as a workflow's uses: "
        "names it: write owner/name@ref"
    ), result.err


def test_an_undeclared_upload_names_who_would_take_it(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, ("name: wheels-${{ matrix.os }}", "name: wheel-${{ matrix.os }}"))
    _, data = drift(sg, root)
    undeclared = next(f for f in data["findings"] if f["kind"] == "undeclared-upload")
    assert undeclared["consequences"] == [
        {"item": "pypi", "kind": "release", "lost": [], "gained": ["wheel-linux", "wheel-windows"]}
    ]
    missing = next(f for f in data["findings"] if f["kind"] == "missing-upload")
    assert missing["consequences"] == [
        {
            "item": "pypi",
            "kind": "release",
            "lost": ["wheels-linux", "wheels-windows"],
            "gained": [],
        },
        {"item": "smoke", "kind": "consumer", "lost": ["wheels-linux"], "gained": []},
    ]
    assert missing["message"].endswith(
        "Consequence: release pypi would ship 1 of its 3 artifacts: lost wheels-linux, "
        "wheels-windows; consumer smoke would take 0 of its 1 artifact: lost wheels-linux."
    )


EVENTS = MODEL.replace(
    '    jobs: [".github/workflows/release.yml#publish"]\n',
    '    jobs: [".github/workflows/release.yml#publish"]\n    events: [push-tag, workflow_dispatch]\n',
)


def test_events_are_compared_each_apart(sg: Sg, tmp_path: Path) -> None:
    dispatch = ('    tags: ["v*"]\n', '    tags: ["v*"]\n  workflow_dispatch:\n')
    only_dispatch = (
        "  publish:\n",
        "  publish:\n    if: github.event_name == 'workflow_dispatch'\n",
    )
    root = repo(tmp_path, dispatch, only_dispatch, model=EVENTS)
    _, data = drift(sg, root)
    finding = only(data)
    assert finding["kind"] == "select-differs"
    assert (
        "(.github/workflows/release.yml#publish; no download found) at stage 0 in a run "
        "on push-tag (its events): the model also selects" in finding["message"]
    )
    # the control: the job runs on both events
    root = repo(tmp_path / "control", dispatch, model=EVENTS)
    code, data = drift(sg, root)
    assert (code, data["findings"]) == (0, [])


def test_an_event_the_workflow_never_runs_on_is_named(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, model=EVENTS)  # the workflow runs on tag pushes only
    _, data = drift(sg, root)
    assert "in a run on workflow_dispatch (its events)" in only(data)["message"]


def test_an_unknown_event_is_invalid_input(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, model=EVENTS.replace("events: [push-tag,", "events: [tag-push,"))
    result = sg("drift", cwd=root)
    assert result.code == 2
    assert result.err.startswith("migration.yaml:23:14: $.releases.pypi.events[0]: must be "), (
        result.err
    )


META_STEP = """\
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-${{ matrix.os }}
          path: wheelhouse/*.whl
      - uses: actions/upload-artifact@v4
        if: ${{ strategy.job-index == 0 }}
        with:
          name: build-metadata
          path: meta.json
"""
META_MODEL = MODEL.replace(
    'select: ["wheels-*", "sdist"]', 'select: ["wheels-*", "sdist", "build-metadata"]'
).replace(
    "  sdist:\n",
    '  meta:\n    artifacts: [build-metadata]\n    jobs: [".github/workflows/release.yml#build"]\n  sdist:\n',
)
WHEEL_STEP = """\
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-${{ matrix.os }}
          path: wheelhouse/*.whl
"""


def test_an_upload_behind_strategy_job_index_runs_in_one_row(sg: Sg, tmp_path: Path) -> None:
    """GitHub numbers a job's matrix rows from 0 (``strategy.job-index``): an upload only
    row 0 makes is one upload, decided, not an `if:` left unread."""
    root = repo(tmp_path, (WHEEL_STEP, META_STEP), model=META_MODEL)
    code, data = drift(sg, root, "--strict")
    assert (code, data["findings"], data["unresolved"], data["unread"]) == (0, [], [], [])
    # controls: an `if:` every row passes makes two uploads of the name: a collision
    every_row = repo(
        tmp_path / "every",
        (WHEEL_STEP, META_STEP.replace("strategy.job-index == 0", "strategy.job-index < 2")),
        model=META_MODEL,
    )
    assert [f["kind"] for f in drift(sg, every_row)[1]["findings"]] == ["upload-collision"]
    # and the other row alone (`job-index == 1` of two) is one upload too
    other_row = repo(
        tmp_path / "other",
        (WHEEL_STEP, META_STEP.replace("strategy.job-index == 0", "strategy.job-index == 1")),
        model=META_MODEL,
    )
    assert drift(sg, other_row, "--strict")[0] == 0


def test_the_pages_upload_is_an_upload_and_the_cache_actions_move_nothing(
    sg: Sg, tmp_path: Path
) -> None:
    pages = (
        "          name: sdist\n          path: dist/*.tar.gz\n",
        "          name: sdist\n          path: dist/*.tar.gz\n"
        "      - uses: actions/cache/restore@v4\n        with:\n          path: ~/.cache\n"
        "          key: docs\n"
        "      - uses: actions/upload-pages-artifact@v3\n        with:\n          path: site/\n",
    )
    root = repo(tmp_path, pages)
    code, data = drift(sg, root, "--strict")
    assert code == 1
    step = (
        (root / WF).read_text().splitlines().index("      - uses: actions/upload-pages-artifact@v3")
    )
    assert [(f["kind"], f["line"]) for f in data["findings"]] == [("undeclared-upload", step + 1)]
    assert "names github-pages" in data["findings"][0]["message"]
    assert data["unread"] == []  # neither the pages upload nor actions/cache/restore
    declared = MODEL.replace(
        "  sdist:\n    artifacts: [sdist]\n",
        "  sdist:\n    artifacts: [sdist, github-pages]\n",
    ).replace('select: ["wheels-*", "sdist"]', 'select: ["wheels-*", "sdist", "github-pages"]')
    assert drift(sg, repo(tmp_path / "declared", pages, model=declared), "--strict")[0] == 0
    # control: a remote action stagegate does not know, where artifacts flow, is unread
    unknown = (pages[0], pages[1].replace("actions/cache/restore@v4", "someone/cache-it@v1"))
    code, data = drift(sg, repo(tmp_path / "unknown", unknown, model=declared), "--strict")
    assert code == 1
    assert [u["expression"] for u in data["unread"]] == ["someone/cache-it@v1"]


CHECKS = """\
      - run: |
          notes="docs/release/${GITHUB_REF_NAME}-notes.md"
          draft=$(gh release view "$GITHUB_REF_NAME" --json isDraft --jq '.isDraft')
          cat > body.md <<BODY
          release notes: see the docs
          BODY
          ./scripts/sign-release dist
          ./scripts/validate-release dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def test_a_command_named_for_releasing_is_unread_until_declared(sg: Sg, tmp_path: Path) -> None:
    """cuda-python's release jobs: a command named for releasing is unread (the job may
    publish through it) until `workflows.publishers` says it publishes nothing
    (`files: []`); a program named for checking (`validate-release`) publishes nothing
    and is not listed; a variable holding "release", a command substitution's words and a
    here-document's text are not commands."""
    changes = ("      - uses: pypa/gh-action-pypi-publish@release/v1\n", CHECKS)
    code, data = drift(sg, repo(tmp_path / "unread", changes), "--strict")
    assert code == 1
    assert [u["expression"] for u in data["unread"]] == ["./scripts/sign-release"]
    declared = MODEL + "workflows:\n  publishers:\n    ./scripts/sign-release: {files: []}\n"
    code, data = drift(sg, repo(tmp_path / "declared", changes, model=declared), "--strict")
    assert (code, data["findings"], data["unread"]) == (0, [], [])
