"""`new-stage TITLE --from-workflows` (issue 25): the next stage declares what drift finds
undeclared at the last stage, behind a flag it sets, so that drift passes at it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from conftest import FIXTURES, Result

Sg = Callable[..., Result]

SBOM = """\
name: SBOM
on: [push]
jobs:
  sbom:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        os: [linux, mac]
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: demo-sbom-${{ matrix.os }}
  scan:
    needs: sbom
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: demo-sbom-*
"""


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "drift" / "repo", root)
    return root


def test_an_added_upload_and_download_become_the_next_stage(sg: Sg, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".github/workflows/sbom.yml").write_text(SBOM)
    assert sg("drift", "--stage", "2", cwd=root).code == 1
    result = sg("new-stage", "Add the SBOM", "--from-workflows", cwd=root)
    assert result.code == 0, result.output
    assert result.out == (
        "wrote stages/03-add-the-sbom.yaml; set its flags, then: stagegate check --stage 3\n"
    )
    assert (root / "stages/03-add-the-sbom.yaml").read_text() == (
        "# Stage 3: Add the SBOM\n"
        "# Written by `stagegate new-stage --from-workflows` from what drift finds at stage 2: "
        "the flag add-the-sbom turns on what the workflows now do.\n"
        "stage: 3\n"
        'title: "Add the SBOM"\n'
        "set:\n"
        "  add-the-sbom: true\n"
        "acceptance:\n"
        "  - check: workflows\n"
    )
    text = (root / "migration.yaml").read_text()
    assert '  sha: {pattern: "[0-9a-f]{40}"}\n  os: ["linux", "mac"]\n' in text
    assert (
        "  sbom:\n"
        '    summary: "The uploads of .github/workflows/sbom.yml#sbom."\n'
        "    when: add-the-sbom\n"
        "    artifacts:\n"
        '      - "demo-sbom-{os}"   # .github/workflows/sbom.yml:12\n'
        '    jobs: [".github/workflows/sbom.yml#sbom"]\n'
        "\n"
        "consumers:\n" in text
    )
    assert (
        "  scan:\n"
        '    summary: "The downloads of .github/workflows/sbom.yml#scan."\n'
        "    when: add-the-sbom\n"
        "    inputs:\n"
        '      - select: "demo-sbom-*"   # .github/workflows/sbom.yml:19\n' in text
    )
    drift = sg("drift", "--stage", "3", cwd=root)
    assert drift.code == 0, drift.output
    assert drift.out.splitlines()[-1] == (
        "drift at stage 3: 5 workflow files, 14 uploads, 8 downloads: no drift"
    )
    assert sg("check", "--stage", "3", cwd=root).code == 0


def test_nothing_undeclared_is_refused_and_nothing_written(sg: Sg, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    before = (root / "migration.yaml").read_bytes()
    result = sg("new-stage", "Nothing", "--from-workflows", cwd=root)
    assert result.code == 1
    assert result.err.startswith(
        "drift finds nothing undeclared at stage 2: the model already says what the workflows "
        "do; add a stage by hand with new-stage TITLE."
    )
    assert (root / "migration.yaml").read_bytes() == before
    assert sorted(p.name for p in (root / "stages").iterdir()) == [
        "01-new-layout.yaml",
        "02-extra-docs.yaml",
    ]
    assert sg("new-stage", "A", "--from-workflows", "--before", "1", cwd=root).code == 2


def test_a_flow_style_section_is_refused_untouched(sg: Sg, tmp_path: Path) -> None:
    """Attack: `flags:` in flow style cannot take a block entry; nothing is written
    (control: the same repository in block style takes it, above)."""
    root = _repo(tmp_path)
    (root / ".github/workflows/sbom.yml").write_text(SBOM)
    main = root / "migration.yaml"
    block = (
        "flags:\n  new-layout:\n    summary: Upload the new-layout wheel beside the old one.\n"
        "  extra-docs:\n    summary: Build and upload the extra docs.\n"
    )
    flow = "flags: {new-layout: {summary: new}, extra-docs: {summary: docs}}\n"
    assert block in main.read_text()
    main.write_text(main.read_text().replace(block, flow))
    assert sg("validate", cwd=root).code == 0
    before = main.read_bytes()
    result = sg("new-stage", "Add the SBOM", "--from-workflows", cwd=root)
    assert result.code == 2, result.output
    assert result.err == (
        "migration.yaml:13:8: flags: is written in flow style; write it as a block mapping "
        "(one item per line) for new-stage --from-workflows to add to it.\n"
    )
    assert not (root / "stages/03-add-the-sbom.yaml").exists()
    assert main.read_bytes() == before


RELEASE = """\
name: release
on:
  push:
    tags: ["v*"]
jobs:
  wheel:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: pkg-wheel
          path: dist/
  publish:
    needs: [wheel]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: pkg-*
          path: dist/
          merge-multiple: true
      - uses: pypa/gh-action-pypi-publish@release/v1
"""

SDIST_JOB = """\
  sdist:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: pkg-sdist
          path: dist/
"""


def test_a_release_that_now_takes_a_new_upload_gets_its_release_change(
    sg: Sg, tmp_path: Path
) -> None:
    from scratch import init

    repo = init(tmp_path / "r")
    repo.write(".github/workflows/release.yml", RELEASE)
    repo.commit("a release of one wheel")
    assert sg("init", "--from-workflows", cwd=repo.root).code == 0
    assert sg("check", cwd=repo.root).code == 0
    # the release job now also publishes an sdist, which its pattern takes
    workflow = repo.root / ".github/workflows/release.yml"
    workflow.write_text(
        RELEASE.replace(
            "  publish:\n    needs: [wheel]", SDIST_JOB + "  publish:\n    needs: [wheel, sdist]"
        )
    )
    result = sg("new-stage", "Ship the sdist", "--from-workflows", cwd=repo.root)
    assert result.code == 0, result.output
    stage = (repo.root / "stages/01-ship-the-sdist.yaml").read_text()
    assert (
        "release_changes:\n"
        '  - tag: "v0.0.0"   # release publish: the new producers\' rows\n'
        '    add: ["pkg-sdist"]\n'
        "acceptance:\n" in stage
    ), stage
    checked = sg("check", "--stage", "1", cwd=repo.root)
    assert checked.code == 0, checked.output
    assert sg("drift", "--stage", "1", cwd=repo.root).code == 0
    # control: without the entry, release-continuity at stage 1 fails on the new name
    (repo.root / "stages/01-ship-the-sdist.yaml").write_text(
        stage.replace('  - tag: "v0.0.0"', "  - tag: nothing").split("release_changes:")[0]
        + "acceptance:\n  - check: workflows\n"
    )
    failed = sg("check", "--stage", "1", cwd=repo.root)
    assert failed.code == 1
    assert "pkg-sdist" in failed.out
