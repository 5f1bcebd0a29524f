"""`stagegate continuity` as a user sees it: the text report, the GitHub annotations, and
bad input (unknown refs, unreadable workflows, versions that cannot be read, names that
cannot be evaluated), each beside a harmless control."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, Result
from scratch import WHEELS_LINUX_ONLY, WHEELS_RELEASE, Repo, dedent, init, pin_git, tree_pair

CORPUS = FIXTURES / "continuity"
Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def two_trees(root: Path, case: str, head: str) -> tuple[Repo, str, str]:
    return tree_pair(root, CORPUS / case, head)


RELEASE = WHEELS_RELEASE


def small(root: Path, head: str) -> tuple[Repo, str]:
    """A repository whose base is RELEASE and whose HEAD is ``head``."""
    repo = init(root)
    repo.write(WF, RELEASE)
    base = repo.commit("base")
    repo.write(WF, head)
    repo.commit("head")
    return repo, base


def test_text_names_each_release_and_what_it_lost(sg: Sg, tmp_path: Path) -> None:
    repo, base, head = two_trees(tmp_path / "r", "r01-starlark-sdist-only", "after")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1
    lost = [
        f"  lost: wheels{{os={os}, py={py}}} ('artifact', .github/workflows/wheels.yml:22)"
        for os in ("macos-latest", "ubuntu-latest")
        for py in ("cp311", "cp312")
    ]
    assert result.out.splitlines() == [
        "release job gh_release (.github/workflows/wheels.yml:26; runs on push-tag): "
        "1 upload context reaches its publish step, 5 at the base",
        *lost,
        "release job pypi (.github/workflows/wheels.yml:38; runs on push-tag): "
        "1 upload context reaches its publish step, 5 at the base",
        *lost,
        f"continuity {base[:12]} -> HEAD ({head[:12]}): 2 release jobs, 8 lost, 0 gained, "
        "0 renamed, 0 new findings: FAILED",
    ]


def test_the_usual_v4_migration_is_information(sg: Sg, tmp_path: Path) -> None:
    repo, base, head = two_trees(tmp_path / "r", "s06-v4-migration-no-alarm", "after")
    result = sg("continuity", "--base", base, "--head", head, cwd=repo.root)
    assert result.code == 0, result.out
    assert result.out.splitlines()[0] == (
        "release job publish (.github/workflows/release.yml:26; runs on push-tag): "
        "7 upload contexts reach its publish step, 7 at the base"
    )
    assert "  renamed: sdist: 'dist' -> 'dist-sdist'" in result.out.splitlines()
    assert result.out.splitlines()[-1].endswith(
        "1 release job, 0 lost, 0 gained, 7 renamed, 0 new findings: ok"
    )


def test_json_keys(sg: Sg, tmp_path: Path) -> None:
    repo, base, head = two_trees(tmp_path / "r", "r11-socs-reusable-adds-artifacts", "after")
    data = json.loads(sg("continuity", "--base", base, "--format", "json", cwd=repo.root).out)
    assert set(data) == {
        "ok", "base", "head", "releases", "findings", "resolved", "unresolved", "unreadable"
    }  # fmt: skip
    assert (data["base"], data["head"]) == (base, head)
    (release,) = data["releases"]
    assert release["file"] == ".github/workflows/deploy.yml"
    assert release["job"] == "pypi-publish"
    assert release["events"] == ["push-tag", "release"]
    assert release["lost"] == [
        {
            "file": ".github/workflows/deploy.yml",
            "job": "wheel",
            "caller": None,
            "matrix": {},
            "name": "artifact",
            "path": "./dist/",
        }
    ]
    assert release["head"] == [] and release["selects_nothing"] is True


def test_github_annotations_sit_on_the_heads_changed_lines(sg: Sg, tmp_path: Path) -> None:
    repo, base, _head = two_trees(tmp_path / "r", "s01-class1-two-jobs-one-name", "after")
    changed = repo.git("diff", "-U0", base, "HEAD")
    result = sg("continuity", "--base", base, "--format", "github", cwd=repo.root)
    assert result.code == 1
    (line,) = [x for x in result.out.splitlines() if x.startswith("::error")]
    assert line.startswith(
        "::error file=.github/workflows/release.yml,line=10,col=15,"
        "title=stagegate continuity%3A upload-collision::2 upload contexts make the artifact 'dist'"
    )
    assert "@@ -10 +10 @@" in changed  # the line the annotation sits on is one the diff shows
    assert "release job publish (.github/workflows/release.yml) would ship 1 of its 2" in line


def test_a_loss_caused_in_another_file_is_annotated_where_the_diff_is(
    sg: Sg, tmp_path: Path
) -> None:
    """r11: deploy.yml is unchanged; pytest.yml (a reusable workflow its test job calls) now
    uploads coverage, so the release's download-all takes three artifacts, one folder each,
    and the wheel no longer lands in dist/. The annotation sits on pytest.yml's new upload."""
    repo, base, _head = two_trees(tmp_path / "r", "r11-socs-reusable-adds-artifacts", "after")
    changed = repo.git("diff", "-U0", base, "HEAD", "--", ".github/workflows/pytest.yml")
    result = sg("continuity", "--base", base, "--format", "github", cwd=repo.root)
    assert result.code == 1
    (line,) = [x for x in result.out.splitlines() if x.startswith("::error")]
    assert line == (
        "::error file=.github/workflows/pytest.yml,line=17,col=15,title=stagegate continuity%3A "
        "lost::release job pypi-publish no longer ships the upload of wheel ('artifact' at the "
        "base); its download now also takes test{python=3.10} ('coverage-3.10', "
        ".github/workflows/pytest.yml:17), test{python=3.13} ('coverage-3.13', "
        ".github/workflows/pytest.yml:17), and the files no longer land where the publish step "
        "reads them"
    )
    assert "@@ -13,0 +14,6 @@" in changed  # lines 14-19 of pytest.yml are new
    # the control: the fix names the artifact; nothing is lost, nothing annotated
    repo, base, _head = two_trees(tmp_path / "f", "r11-socs-reusable-adds-artifacts", "fix")
    result = sg("continuity", "--base", base, "--format", "github", cwd=repo.root)
    assert result.code == 0
    assert not [x for x in result.out.splitlines() if x.startswith("::error")]


DECLARED = dedent(
    """\
    on:
      push:
        tags: ["v*"]
    jobs:
      wheels:
        runs-on: ubuntu-latest
        strategy:
          matrix:
            os: [linux, windows]
        steps:
          - uses: actions/upload-artifact@v4
            with:
              name: wheels-${{ matrix.os }}
      publish:
        needs: wheels
        runs-on: ubuntu-latest
        steps:
          - uses: example/release-wheels@v1
            with:
              select: wheels-*
    """
)
DECLARING_MODEL = dedent(
    """\
    version: 1
    migration: declared
    stage: 0
    producers:
      wheels:
        artifacts: [wheels-linux, wheels-windows]
    workflows:
      actions:
        example/release-wheels@v1:
          downloads: ["${{ inputs.select }}"]
    """
)


def test_the_base_migration_declares_what_a_remote_action_downloads(sg: Sg, tmp_path: Path) -> None:
    """With the base's workflows.actions, the release job that downloads through a remote
    action is read, and renaming the wheels loses both its contexts; without a migration
    the action is unread and the job is no release job (nothing to compare)."""
    for declared in (True, False):
        repo = init(tmp_path / str(declared))
        repo.write(WF, DECLARED)
        if declared:
            repo.write("migration.yaml", DECLARING_MODEL)
        base = repo.commit("base")
        repo.write(WF, DECLARED.replace("name: wheels-", "name: wheel-"))
        repo.commit("head")
        result = sg("continuity", "--base", base, cwd=repo.root)
        if declared:
            assert result.code == 1, result.out
            assert (
                "  lost: wheels{os=linux} ('wheels-linux', .github/workflows/release.yml:13)"
                in (result.out.splitlines())
            )
        else:  # the job may publish what the run made: blind at both commits, not failed
            assert result.code == 0, result.out
            assert result.out.splitlines()[:2] == [
                "release job publish (.github/workflows/release.yml:14; runs on push-tag): "
                "not compared",
                "  blind: its publish step is not read: example/release-wheels@v1; declare what "
                "it publishes under workflows.publishers (.github/workflows/release.yml:18)",
            ]


def test_unknown_ref_is_a_git_error_saying_how_to_fetch(sg: Sg, tmp_path: Path) -> None:
    repo, _base = small(tmp_path / "r", RELEASE)
    result = sg("continuity", "--base", "origin/main", cwd=repo.root)
    assert result.code == 3
    assert "unknown git ref 'origin/main'" in result.err
    assert "git fetch origin main:refs/remotes/origin/main" in result.err
    assert sg("continuity", "--base", "HEAD~1", cwd=repo.root).code == 0  # control


def test_outside_a_repository(sg: Sg, tmp_path: Path) -> None:
    result = sg("continuity", "--base", "main", cwd=tmp_path)
    assert result.code == 3
    assert "is not in a git repository" in result.err


BROKEN_ACTION = dedent(
    """\
    runs:
      using: composite
      steps:
        - uses: actions/setup-python@v5
          with: ${{ inputs }}
    """
)
"""A local action GitHub refuses (`with:` is not a mapping: PyO3/maturin-action 083eb89)."""
TESTS = "on: pull_request\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n"


def test_a_workflow_unreadable_at_both_commits_is_listed_and_the_rest_compared(
    sg: Sg, tmp_path: Path
) -> None:
    """PyO3/maturin-action f4e8c67: the tests use the repository's own action, which
    cannot be read at the base nor at the head; the release is compared without them,
    and the broken workflow is listed with each commit. `--strict` fails it; the
    control: the same pull request also drops the Windows leg, which is lost."""
    repo = init(tmp_path / "r")
    repo.write(WF, RELEASE)
    repo.write("action.yml", BROKEN_ACTION)
    repo.write(".github/workflows/tests.yml", TESTS)
    base = repo.commit("base")
    repo.write(".github/workflows/tests.yml", TESTS.replace("ubuntu-latest", "ubuntu-24.04"))
    head = repo.commit("head")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
    lines = result.out.splitlines()
    assert lines[1:3] == [
        f"./action.yml:5:13: .github/workflows/tests.yml is not read, its jobs are not "
        f"compared: at {ref} ({sha[:12]}): with must be a mapping (key: value); fix the workflow."
        for ref, sha in ((base, base), ("HEAD", head))
    ]
    assert lines[-1].endswith("1 release job, 0 lost, 0 gained, 0 renamed, 0 new findings: ok")
    data = json.loads(sg("continuity", "--base", base, "--format", "json", cwd=repo.root).out)
    assert [(u["workflow"], u["file"], u["line"]) for u in data["unreadable"]] == [
        (".github/workflows/tests.yml", "./action.yml", 5)
    ] * 2
    assert sg("continuity", "--base", base, "--strict", cwd=repo.root).code == 1
    repo.write(WF, WHEELS_LINUX_ONLY)
    repo.commit("drop windows")
    lost = sg("continuity", "--base", base, cwd=repo.root)
    assert lost.code == 1 and "0 lost" not in lost.out.splitlines()[-1], lost.output


def test_a_pull_request_that_fixes_an_unreadable_workflow_is_compared(
    sg: Sg, tmp_path: Path
) -> None:
    """NVIDIA/cccl a9ec272: the base's broken workflow is listed, the head reads; a pull
    request that breaks one stays exit 2 (below)."""
    repo = init(tmp_path / "r")
    repo.write(WF, RELEASE)
    repo.write("action.yml", BROKEN_ACTION)
    repo.write(".github/workflows/tests.yml", TESTS)
    base = repo.commit("base")
    repo.write("action.yml", BROKEN_ACTION.replace("${{ inputs }}", "{python-version: '3.12'}"))
    repo.commit("fix")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
    assert [line.split(": at ")[1][: len(base)] for line in result.out.splitlines()[1:2]] == [base]
    assert "is not read" not in result.out.splitlines()[2]
    again = sg("continuity", "--base", "HEAD", "--head", base, cwd=repo.root)
    assert again.code == 2 and "at " + base in again.err, again.output


def test_a_publish_step_that_gets_nothing_while_another_takes_everything_fails(
    sg: Sg, tmp_path: Path
) -> None:
    """aio-libs/aiohttp d54b3e2 (tests/fixtures/history/46-...): the v4 download without
    merge-multiple leaves the PyPI step nothing while softprops still uploads every file.
    The control (47, merge-multiple) passes with the same renames."""
    trees = FIXTURES / "history" / "46-v4-pattern-without-merge-second-publisher"
    repo, base, _ = tree_pair(tmp_path / "r", trees, "head", "base")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert result.out.splitlines()[1] == (
        "  pypa/gh-action-pypi-publish publishes nothing: no upload of the run lands where it "
        "reads (5 upload contexts at the base; another publish step still takes them)"
    )
    data = json.loads(sg("continuity", "--base", base, "--format", "json", cwd=repo.root).out)
    (release,) = data["releases"]
    assert release["publishes_nothing"] == [{"publisher": "pypa/gh-action-pypi-publish", "base": 5}]
    assert (release["lost"], release["gained"], len(release["renamed"])) == ([], [], 5)
    control = FIXTURES / "history" / "47-v4-pattern-merged-second-publisher"
    repo, base, _ = tree_pair(tmp_path / "c", control, "head", "base")
    data = json.loads(sg("continuity", "--base", base, "--format", "json", cwd=repo.root).out)
    assert data["ok"] and data["releases"][0]["publishes_nothing"] == []


def test_unreadable_head_workflow_names_commit_file_and_line(sg: Sg, tmp_path: Path) -> None:
    repo, base = small(
        tmp_path / "r", RELEASE.replace("    needs: wheels\n", "    needs: [wheels\n")
    )
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 2
    assert result.err.startswith(".github/workflows/release.yml:")
    assert "at HEAD (" in result.err
    assert "Traceback" not in result.err


def test_a_commit_pin_reads_its_version_comment_or_is_unresolved(sg: Sg, tmp_path: Path) -> None:
    sha = "0" * 39 + "1"
    pinned = RELEASE.replace(
        "actions/upload-artifact@v4", f"actions/upload-artifact@{sha} # v4.6.2"
    ).replace("actions/download-artifact@v4", f"actions/download-artifact@{sha} # v4.3.0")
    repo, base = small(tmp_path / "r", pinned)
    data = json.loads(sg("continuity", "--base", base, "--format", "json", cwd=repo.root).out)
    assert data["ok"] is True and data["unresolved"] == []  # control: the comments are read
    repo.write(WF, pinned.replace(" # v4.6.2", ""))
    repo.commit("no comment")
    result = sg("continuity", "--base", base, "--format", "json", cwd=repo.root)
    data = json.loads(result.out)
    assert data["unresolved"] == [
        {
            "file": WF,
            "line": 11,
            "expression": f"actions/upload-artifact@{sha}",
            "reason": "the major version of this action is not in its ref (pin a tag, or keep "
            "the tag in a `# vN` comment after a commit pin)",
        }
    ]
    # never guessed to be v3 (no mismatch invented); a release path the base could read
    # and the head cannot fails: the release is not compared, and says why
    assert result.code == 1, result.out
    (release,) = data["releases"]
    assert (release["compared"], release["lost"], release["blind"]) == (
        False,
        [],
        [
            {
                "file": WF,
                "line": 11,
                "reason": "the version of the upload-artifact step of job wheels cannot be read "
                "(pin a tag, or keep it in a `# vN` comment after a commit pin): which downloads "
                "see it is not known",
            },
        ],
    )


def test_matrix_value_without_a_matrix_is_unresolved(sg: Sg, tmp_path: Path) -> None:
    head = RELEASE.replace(
        "    strategy:\n      matrix:\n        os: [ubuntu-latest, windows-latest]\n", ""
    ).replace("runs-on: ${{ matrix.os }}", "runs-on: ubuntu-latest")
    repo, base = small(tmp_path / "r", head)
    data = json.loads(sg("continuity", "--base", base, "--format", "json", cwd=repo.root).out)
    assert [(u["file"], u["line"], u["expression"]) for u in data["unresolved"]] == [
        (WF, 10, "${{ matrix.os }}")
    ]
    (release,) = data["releases"]
    assert [c["name"] for c in release["head"]] == ["wheels-${{ matrix.os }}"]


def test_a_needs_edge_dropped_loses_the_context(sg: Sg, tmp_path: Path) -> None:
    repo, base = small(tmp_path / "r", RELEASE.replace("    needs: wheels\n", ""))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1
    assert (
        "  lost: wheels{os=ubuntu-latest} ('wheels-ubuntu-latest', .github/workflows/release.yml:13)"
        in result.out
    )


def test_an_unknown_publisher_is_unread_not_guessed(sg: Sg, tmp_path: Path) -> None:
    head = RELEASE.replace("pypa/gh-action-pypi-publish@release/v1", "example/publish-anything@v2")
    repo, base = small(tmp_path / "r", head)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1, result.out  # the base's publisher was read; the head's is not
    assert result.out.splitlines()[:2] == [
        "release job publish (.github/workflows/release.yml:15; runs on push-tag): not compared",
        "  newly blind: its publish step is not read: example/publish-anything@v2; declare what "
        "it publishes under workflows.publishers (.github/workflows/release.yml:24)",
    ]


def test_no_workflows_at_all(sg: Sg, tmp_path: Path) -> None:
    repo = init(tmp_path / "r")
    repo.write("README", "x\n")
    base = repo.commit("one")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0
    assert result.out.splitlines()[0] == (
        "no release job (tag push, release or workflow_dispatch) at either commit"
    )


def test_a_symlinked_workflow_leading_out_is_not_read(sg: Sg, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_text(RELEASE)
    repo = init(tmp_path / "r")
    repo.write(WF, RELEASE)
    base = repo.commit("base")
    (repo.root / WF).unlink()
    (repo.root / WF).symlink_to(outside)
    repo.commit("link")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1  # the release is gone at the head: nothing is read from outside
    assert "gone at the head" in result.out


SCRIPTED = dedent(
    """\
    on: workflow_dispatch
    jobs:
      publish:
        runs-on: ubuntu-latest
        steps:
          - run: ./ci/tools/download-wheels "$RUN_ID" dist
          - uses: pypa/gh-action-pypi-publish@release/v1
    """
)


def test_a_release_fed_by_an_unread_script_is_information_while_unchanged(
    sg: Sg, tmp_path: Path
) -> None:
    repo = init(tmp_path / "r")
    repo.write(".github/workflows/publish.yml", SCRIPTED)
    base = repo.commit("base")
    repo.write("README", "x\n")
    repo.commit("head")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0
    assert result.out.splitlines()[1] == (
        "  selects nothing at either commit: no upload of the run reaches what it publishes "
        "(its files come from a script or another run stagegate does not read)"
    )
    # control: the same release losing what it shipped fails
    repo2, base2 = small(tmp_path / "r2", RELEASE.replace("pattern: wheels-*", "pattern: whl-*"))
    assert sg("continuity", "--base", base2, cwd=repo2.root).code == 1


HOSTILE = {
    "on-list": "on: [push]\njobs:\n  p:\n    runs-on: x\n    steps:\n      - uses: actions/download-artifact@v4\n      - uses: pypa/gh-action-pypi-publish@v1\n",
    "on-none": "jobs:\n  p:\n    steps: []\n",
    "with-list": "on: release\njobs:\n  p:\n    steps:\n      - uses: actions/upload-artifact@v4\n        with: [1,2]\n",
    "with-int-name": "on: release\njobs:\n  p:\n    steps:\n      - uses: actions/upload-artifact@v4\n        with:\n          name: 5\n          path: 7\n          overwrite: true\n      - uses: actions/download-artifact@v4\n        with:\n          name: 5\n          merge-multiple: 1\n      - uses: softprops/action-gh-release@v2\n        with:\n          files: 9\n",
    "needs-weird": "on: release\njobs:\n  p:\n    needs: {a: 1}\n    steps:\n      - uses: actions/download-artifact@v4\n      - run: twine upload\n",
    "if-bool": "on: release\njobs:\n  p:\n    if: false\n    steps:\n      - uses: actions/download-artifact@v4\n      - run: twine upload\n",
    "run-weird": "on: release\njobs:\n  p:\n    steps:\n      - run: \"gh release upload 'unterminated\\ncp\\nmv a\\ntwine upload -r\"\n      - uses: actions/download-artifact@v4\n        with:\n          pattern: '{a,b'\n",
    "uses-empty": "on: release\njobs:\n  p:\n    steps:\n      - uses: '@'\n      - uses: 'actions/upload-artifact@'\n      - uses: actions/download-artifact@vv\n",
    "push-none": "on:\n  push:\n  release:\njobs:\n  p:\n    steps:\n      - uses: actions/download-artifact@v4\n        with:\n          path: ../../etc\n      - run: mv ../../etc/* dist/ && twine upload dist/*\n",
    "merge": "on: release\njobs:\n  a:\n    steps:\n      - uses: actions/upload-artifact/merge@v4\n        with:\n          pattern: '[!'\n  p:\n    needs: a\n    steps:\n      - uses: actions/download-artifact@v4\n        with: {name: merged-artifacts}\n      - run: twine upload '*'\n",
    "maturin": "on: release\njobs:\n  p:\n    steps:\n      - uses: PyO3/maturin-action@v1\n        with:\n          command: upload\n          args: --skip-existing '\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_workflows_never_trace_back(sg: Sg, tmp_path: Path, name: str) -> None:
    """Odd shapes (wrong types, unterminated quotes, empty refs, paths out of the
    workspace, broken globs) are read, refused with their place, or left unresolved."""
    repo = init(tmp_path / "r")
    repo.write("README", "x\n")
    base = repo.commit("base")
    repo.write(".github/workflows/x.yml", HOSTILE[name])
    repo.commit("head")
    result = sg("continuity", "--base", base, cwd=repo.root)
    if name == "with-list":
        assert result.code == 2
        assert result.err.startswith(".github/workflows/x.yml:6:15: at HEAD ("), result.err
        assert "with must be a mapping (key: value); fix the workflow." in result.err
    elif name == "with-int-name":  # a new release that ships an upload
        assert result.code == 1, result.out
        assert "0 lost, 1 gained" in result.out.splitlines()[-1]
    else:
        assert result.code == 0, result.out  # nothing shipped at the base; nothing new lost
        assert result.out.splitlines()[-1].endswith(": ok")
