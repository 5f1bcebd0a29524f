"""`init --from-workflows` finds releases as `continuity` does (issue 22) and writes the
invariants `release-continuity`, `unique-artifacts` and `inputs-satisfied`, so that `check`
(which runs `workflows`, i.e. drift) passes at once on what it wrote."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, Result

Sg = Callable[..., Result]
CORPUS = FIXTURES / "continuity"
BEFORE = sorted(p.parent.name for p in CORPUS.glob("*/before"))


def _tree(tmp_path: Path, source: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(source / ".github", root / ".github")
    if (source / "ci").is_dir():
        shutil.copytree(source / "ci", root / "ci")
    return root


def _init(sg: Sg, root: Path) -> str:
    result = sg("init", "--from-workflows", cwd=root)
    assert result.code == 0, result.output
    return (root / "migration.yaml").read_text()


def _section(text: str, start: str) -> str:
    """From the line ``start`` to the end of the file."""
    return text[text.index(f"\n{start}") + 1 :]


@pytest.mark.parametrize("case", BEFORE)
def test_init_on_each_corpus_before_finds_the_release_and_check_passes(
    sg: Sg, tmp_path: Path, case: str
) -> None:
    root = _tree(tmp_path, CORPUS / case / "before")
    text = _init(sg, root)
    assert len(re.findall(r"^    tags: ", text, re.M)) == 1, text
    assert re.search(r'^  - check: release-continuity .*\n    tag: "[^"]+"$', text, re.M), text
    check = sg("check", cwd=root)
    assert check.code == 0, check.output + text
    # The before trees whose workflows already break a release leave out, saying why, the
    # checks that would fail on that at stage 0 (drift still reports it).
    left_out = dict(
        re.findall(r"^# - check: ([\w-]+)   # fails at stage 0, so left out: (.*)$", text, re.M)
    )
    assert {k: v.split(":")[0] for k, v in left_out.items()} == LEFT_OUT.get(case, {}), text
    assert check.out.splitlines()[-1] == f"{4 - len(left_out)} checks at stage 0: all passed"
    if left_out:
        assert sg("drift", cwd=root).code == 1  # the finding is not hidden


LEFT_OUT = {
    "r02-ubldc-dispatch-sdist-only": {
        "workflows": "upload-overwrite",
        "unique-artifacts": "artifact names collide",
    },
    "r15-tsl-v4-migration-ok": {"workflows": "backend-mismatch"},
    "s04-class6-release-triggers": {"workflows": "upload-collision"},
}
"""The before trees whose uploads collide or cross backends, and the first finding's kind."""


def test_two_release_jobs_of_one_trigger_are_one_release(sg: Sg, tmp_path: Path) -> None:
    """r01: one job publishes to PyPI, one to the GitHub release, on the same tags; the v3
    uploads of one name by two jobs are one artifact, so one producer."""
    root = _tree(tmp_path, CORPUS / "r01-starlark-sdist-only" / "before")
    text = _init(sg, root)
    assert _section(text, "producers:") == (
        "producers:\n"
        "  sdist:\n"
        '    summary: "The uploads of .github/workflows/wheels.yml#sdist, '
        ".github/workflows/wheels.yml#wheels: one producer, as they upload one name (in "
        "different workflows' runs, or merged into one artifact by upload-artifact v3).\"\n"
        "    artifacts:\n"
        '      - "artifact"   # .github/workflows/wheels.yml:11\n'
        '    jobs: [".github/workflows/wheels.yml#sdist", ".github/workflows/wheels.yml#wheels"]\n'
        "\n"
        "consumers: {}\n"
        "\n"
        "releases:\n"
        "  wheels:\n"
        '    summary: "The downloads of .github/workflows/wheels.yml#gh_release, '
        ".github/workflows/wheels.yml#pypi: one release, as their triggers accept the same "
        'tags (on.push.tags v*)."\n'
        '    tags: ["v*"]\n'
        "    select:\n"
        '      - "artifact"   # .github/workflows/wheels.yml:32\n'
        '    jobs: [".github/workflows/wheels.yml#gh_release", ".github/workflows/wheels.yml#pypi"]\n'
        "\n"
        "invariants:\n"
        "  - check: workflows   # the model against the workflows (stagegate drift)\n"
        "  - check: release-continuity   # release wheels: v0.0.0, a tag its trigger accepts "
        "(on.push.tags v*)\n"
        '    tag: "v0.0.0"\n'
        "  - check: unique-artifacts   # no two producer rows make one name\n"
        "  - check: inputs-satisfied   # each consumer's inputs are made by an active producer\n"
    )


def test_release_event_dispatch_and_tag_if_are_releases(sg: Sg, tmp_path: Path) -> None:
    """s04: `on: release`, `workflow_dispatch` and `if: startsWith(github.ref,
    'refs/tags/')` are releases; the pull-request test job stays a consumer."""
    root = _tree(tmp_path, CORPUS / "s04-class6-release-triggers" / "before")
    text = _init(sg, root)
    releases = _section(text, "releases:")
    assert releases.splitlines()[:2] == ["releases:", "  ci-dispatch-on-release:"]
    assert (
        '    jobs: [".github/workflows/ci.yml#publish", ".github/workflows/dispatch.yml#gh-release", '
        '".github/workflows/on-release.yml#pypi"]\n' in releases
    )
    assert (
        "(on.push.tags *; workflow_dispatch (any tag it is given); a release event (any tag))"
        in releases
    )
    assert "consumers:\n  test:\n" in text
    assert sg("check", cwd=root).code == 0


def test_a_name_with_glob_characters_is_written_as_the_exact_name(sg: Sg, tmp_path: Path) -> None:
    """s03 after: `name: dist-*` selects nothing; the model says the same, not a glob."""
    root = _tree(tmp_path, CORPUS / "s03-class5-name-glob" / "after")
    text = _init(sg, root)
    assert (
        '      - "dist-[*]"   # .github/workflows/release.yml:23: an exact name (name:), not a '
        "glob: no artifact name holds * or ?, so it selects nothing\n" in text
    )
    plan = sg("plan", "--format", "json", cwd=root)
    assert plan.code == 0 and sg("check", cwd=root).code == 0
    # control: the before tree's exact name without glob characters carries no such note
    before = _init(sg, _tree(tmp_path / "b", CORPUS / "s03-class5-name-glob" / "before"))
    assert "not a glob" not in before


RELEASE = """\
name: {name}
on:
{on}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: {name}-wheels
          path: dist
  publish:
    needs: build
{cond}    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: {name}-wheels
          path: dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def _workflow(root: Path, name: str, on: str, cond: str = "") -> None:
    folder = root / ".github" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yml").write_text(RELEASE.format(name=name, on=on, cond=cond))


def _tags(text: str) -> list[tuple[str, str]]:
    return re.findall(r"- check: release-continuity   # release (\S+): .*\n    tag: \"(.*)\"", text)


def test_each_release_gets_a_tag_no_other_release_claims(sg: Sg, tmp_path: Path) -> None:
    root = tmp_path / "tags"
    _workflow(root, "stable", "  push:\n    tags: ['v*']")
    _workflow(
        root, "beta", "  push:\n    tags: ['*']", "    if: startsWith(github.ref, 'refs/tags/b')\n"
    )
    text = _init(sg, root)
    assert _tags(text) == [("publish", "b0.0.0"), ("publish-2", "v0.0.0")]
    assert '    tags: ["b*"]\n' in text and '    tags: ["v*"]\n' in text
    assert sg("check", cwd=root).code == 0


def test_no_tag_claimed_by_one_release_alone_is_said_not_guessed(sg: Sg, tmp_path: Path) -> None:
    """Every tag `v1.*` accepts, `v*` accepts too: no release-continuity for that release,
    and a note that says why; the other release keeps its check (at a tag `v1.*` does not
    accept). A dispatch (any tag) leaves no tag to the others."""
    root = tmp_path / "tags"
    _workflow(root, "all", "  push:\n    tags: ['v*']")
    _workflow(root, "one", "  push:\n    tags: ['v1.*']")
    text = _init(sg, root)
    assert _tags(text) == [("publish", "v0.0.0")]
    assert (
        "#   release publish-2: no release-continuity; no tag its trigger accepts (on.push.tags "
        "v1.*) is claimed by it alone: add the check with a tag of yours\n" in text
    )
    assert sg("check", cwd=root).code == 0
    (root / "migration.yaml").unlink()
    _workflow(root, "nightly", "  workflow_dispatch:")
    text = _init(sg, root)
    assert _tags(text) == [("publish-2", "0.0.0")]
    assert text.count("no release-continuity;") == 2
    assert sg("check", cwd=root).code == 0


def test_a_download_job_on_branches_too_is_a_consumer_not_a_release(sg: Sg, tmp_path: Path) -> None:
    """Control: a job that downloads on every push (branches and tags) and publishes
    nothing is not a release; the same job publishing on tags only is."""
    root = tmp_path / "ci"
    _workflow(root, "ci", "  push:")
    text = (root / ".github/workflows/ci.yml").read_text()
    (root / ".github/workflows/ci.yml").write_text(
        text.replace("      - uses: pypa/gh-action-pypi-publish@release/v1\n", "")
    )
    written = _init(sg, root)
    assert "releases: {}" in written and "consumers:\n  publish:\n" in written
    assert "release-continuity" not in written
    (root / "migration.yaml").unlink()
    (root / ".github/workflows/ci.yml").write_text(text)
    written = _init(sg, root)
    assert "releases:\n  publish:\n" in written and _tags(written) == [("publish", "v0.0.0")]


def test_the_cuda_python_mirror(sg: Sg, tmp_path: Path) -> None:
    """The mirror's releases (workflow_dispatch, downloads through ci/tools/download-wheels):
    release.yml's choice input `component` makes one release per option (issue 23);
    release-cuda-pathfinder.yml downloads the same names for the same tags in a run of its
    own, so it joins the cuda-pathfinder one."""
    root = _tree(tmp_path, FIXTURES / "cuda-python-tree")
    text = _init(sg, root)
    release = (
        '".github/workflows/release.yml#upload-archive", '
        '".github/workflows/release.yml#publish-pypi", '
        '".github/workflows/release.yml#publish-testpypi"'
    )
    assert f"    jobs: [{release}]\n" in text
    assert (
        f"    jobs: [{release}, "
        '".github/workflows/release-cuda-pathfinder.yml#publish-testpypi", '
        '".github/workflows/release-cuda-pathfinder.yml#publish-pypi", '
        '".github/workflows/release-cuda-pathfinder.yml#upload-assets"]\n' in text
    )
    assert re.findall(r"(?m)^  (\S+):\n    summary: .*\n    tags: \[\"\*\"\]\n", text) == [
        "cuda-core",  # in the order of the input's options
        "cuda-bindings",
        "cuda-pathfinder",
        "cuda-python",
    ]
    assert '    select:\n      - "cuda-core*"   # ci/tools/download-wheels:15\n' in text
    assert '    exclude: ["*-tests", "*python315*"]\n' in text
    # the bindings and core wheels' names come from ci/tools/env-vars, which init reads
    # (issue 23): each of the four releases selects what a producer makes, so each has its
    # check, and every check passes
    assert "left out" not in text
    assert _tags(text) == [
        ("cuda-core", "v0.0.0"),
        ("cuda-bindings", "v0.0.0"),
        ("cuda-pathfinder", "v0.0.0"),
        ("cuda-python", "v0.0.0"),
    ]
    assert '      - "cuda-core-python{python-version-tr}-{host-platform}-{sha}"' in text
    check = sg("check", cwd=root)
    assert check.code == 0, check.output
    assert check.out.splitlines()[-1] == "7 checks at stage 0: all passed"
