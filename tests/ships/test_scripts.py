"""What ships through a repository script a ``run:`` calls (issue 23): its ``gh run
download``, the folders its loops skip, and the files it moves to the publish step's
folder, read with the call's positional parameters; each beside a control."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import WHEELS_RELEASE, Repo, dedent, init, pin_git

Sg = Callable[..., Result]
WF = ".github/workflows/release.yml"
SCRIPT = "ci/fetch-wheels"

DOWNLOAD = """\
      - uses: actions/download-artifact@v4
        with:
          pattern: wheels-*
          path: dist
          merge-multiple: true
"""
TESTS = """\
          path: wheelhouse/*.whl
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-${{ matrix.os }}-tests
          path: tests/*.whl
"""
RELEASE = WHEELS_RELEASE.replace(
    DOWNLOAD,
    """\
      - run: ./ci/fetch-wheels "${{ github.run_id }}" dist
        env:
          GH_TOKEN: ${{ github.token }}
""",
).replace("          path: wheelhouse/*.whl\n", TESTS)
"""scratch.WHEELS_RELEASE with a -tests artifact per leg, downloaded by a script."""
assert "ci/fetch-wheels" in RELEASE and "-tests" in RELEASE


FETCH = dedent(
    """
    #!/usr/bin/env bash
    set -euo pipefail
    gh run download "$1" -p "wheels-*"
    mkdir -p "$2"
    for p in wheels-*; do
      if [[ "$p" == *-tests ]]; then
        continue
      fi
      find "$p" -name "*.whl" -exec mv {} "$2"/ \\;
    done
    """
)


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def pair(root: Path, script: str, workflow: str = RELEASE) -> tuple[Repo, str]:
    """A repository with RELEASE and FETCH at the base, ``workflow`` and ``script`` at HEAD."""
    repo = init(root)
    repo.write(WF, RELEASE)
    repo.write(SCRIPT, FETCH)
    base = repo.commit("base")
    repo.write(WF, workflow)
    repo.write(SCRIPT, script)
    repo.commit("head")
    return repo, base


HEADLINE = "release job publish (.github/workflows/release.yml:19; runs on push-tag): "


def test_the_scripts_download_and_move_reach_the_publish_step(sg: Sg, tmp_path: Path) -> None:
    repo, base = pair(tmp_path / "r", FETCH.replace("set -euo", "set -eu -o"))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0, result.out
    assert result.out.splitlines()[0] == (
        HEADLINE + "2 upload contexts reach its publish step, 2 at the base"
    )


def test_a_pattern_that_no_longer_matches_loses_both(sg: Sg, tmp_path: Path) -> None:
    repo, base = pair(tmp_path / "r", FETCH.replace('"wheels-*"', '"whl-*"'))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1
    assert result.out.splitlines()[:4] == [
        HEADLINE + "0 upload contexts reach its publish step, 2 at the base",
        "  selects nothing: no upload of the run reaches what it publishes",
        "  lost: wheels{os=ubuntu-latest} ('wheels-ubuntu-latest', .github/workflows/release.yml:13)",
        "  lost: wheels{os=windows-latest} ('wheels-windows-latest', .github/workflows/release.yml:13)",
    ]


def test_dropping_the_tests_skip_gains_the_test_wheels(sg: Sg, tmp_path: Path) -> None:
    without = FETCH.replace('  if [[ "$p" == *-tests ]]; then\n    continue\n  fi\n', "")
    assert without != FETCH
    repo, base = pair(tmp_path / "r", without)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == (
        HEADLINE + "4 upload contexts reach its publish step, 2 at the base"
    )
    assert "  gained: wheels{os=ubuntu-latest} ('wheels-ubuntu-latest-tests', " in result.out


def test_moving_to_another_folder_than_the_publish_step_reads(sg: Sg, tmp_path: Path) -> None:
    repo, base = pair(tmp_path / "r", FETCH, RELEASE.replace('" dist', '" out'))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1
    assert result.out.splitlines()[0] == (
        HEADLINE + "0 upload contexts reach its publish step, 2 at the base"
    )


def test_a_move_into_the_folder_in_the_run_block_itself(sg: Sg, tmp_path: Path) -> None:
    """``gh run download -D`` in the ``run:`` block, each artifact in its own folder, and
    ``mv DIR/*/*.whl dist/``; the control leaves the files in their folders."""
    moved = RELEASE.replace(
        './ci/fetch-wheels "${{ github.run_id }}" dist',
        '|\n          gh run download -p "wheels-*" -D got\n'
        "          mkdir -p dist && mv got/*/*.whl dist/",
    )
    repo, base = pair(tmp_path / "r", FETCH, moved)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == (
        HEADLINE + "4 upload contexts reach its publish step, 2 at the base"
    ), result.out
    stays = moved.replace("mv got/*/*.whl dist/", "ls got")
    repo, base = pair(tmp_path / "s", FETCH, stays)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == (
        HEADLINE + "0 upload contexts reach its publish step, 2 at the base"
    ), result.out


def test_a_move_to_a_folder_not_known_is_unresolved(sg: Sg, tmp_path: Path) -> None:
    repo, base = pair(tmp_path / "r", FETCH.replace('"$2"/', '"$(cat where)"/'))
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 1  # the base's files were followed; the head's move cannot be
    assert result.out.splitlines()[:2] == [
        "release job publish (.github/workflows/release.yml:19; runs on push-tag): not compared",
        "  newly blind: a script moves the downloaded files with words stagegate cannot work "
        "out (an array, a command's output): whether they reach the publish step is not known "
        "(ci/fetch-wheels:9)",
    ]
    assert (
        "unresolved where files flow to a release: 1 command output (ci/fetch-wheels:9: "
        "$(cat where): $(cat where) at ci/fetch-wheels:9: cat reads a file, which stagegate does not read)"
    ) in result.out.splitlines(), result.out


def test_a_script_reading_another_run_says_so_where(sg: Sg, tmp_path: Path) -> None:
    """The run id is a step's output and nothing says which workflow's run it is: the
    release is blind (listed, not compared, not failed while the base was blind too), and
    the report names the download (the unknown id is not listed a second time as
    unresolved); the control reads this run."""
    other = RELEASE.replace("${{ github.run_id }}", "${{ steps.find.outputs.run }}")
    repo = init(tmp_path / "r")
    repo.write(WF, other)
    repo.write(SCRIPT, FETCH)
    base = repo.commit("base")
    repo.write(SCRIPT, FETCH.replace("set -euo", "set -eu -o"))
    repo.commit("head")
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.code == 0, result.out
    assert result.out.splitlines()[:3] == [
        "release job publish (.github/workflows/release.yml:19; runs on push-tag): not compared",
        "  blind: its files come from another run ($1) and nothing "
        "read here says which workflow's run it is; declare it under workflows.runs "
        "(ci/fetch-wheels:3)",
        "continuity 30f74631c0da -> HEAD (22827242464d): 1 release job, 0 lost, 0 gained, "
        "0 renamed, 1 not compared, 0 new findings: ok",
    ]  # the run id itself is no unresolved line: the blind spot names the download


@pytest.mark.parametrize(
    ("names", "reach"),
    [
        ("-n wheels-ubuntu-latest", 1),  # one name: its files go into the folder itself
        ("-n wheels-ubuntu-latest -n wheels-windows-latest", 0),  # each in dist/NAME/
        ('-p "wheels-*-latest"', 0),  # a pattern: each in its own folder, however many
    ],
)
def test_gh_puts_each_artifact_in_its_own_folder_unless_one_name(
    sg: Sg, tmp_path: Path, names: str, reach: int
) -> None:
    script = f'#!/bin/sh\ngh run download "$1" {names} -D "$2"\n'
    repo, base = pair(tmp_path / "r", script)
    result = sg("continuity", "--base", base, cwd=repo.root)
    assert result.out.splitlines()[0] == (
        HEADLINE + f"{reach} upload context{'' if reach == 1 else 's'} "
        f"{'reaches' if reach == 1 else 'reach'} its publish step, 2 at the base"
    ), result.out


def test_files_moved_where_the_publish_step_does_not_read_are_named(sg: Sg, tmp_path: Path) -> None:
    repo = init(tmp_path / "r")
    repo.write(WF, RELEASE.replace('" dist', '" out'))
    repo.write(SCRIPT, FETCH)
    base = repo.commit("base")
    result = sg("continuity", "--base", base, "--head", base, cwd=repo.root)
    assert result.code == 0, result.out
    assert result.out.splitlines()[:2] == [
        HEADLINE + "0 upload contexts reach its publish step, 0 at the base",
        "  selects nothing at either commit: what its downloads take lands where its publish "
        "step does not read: wheels{os=ubuntu-latest} ('wheels-ubuntu-latest', "
        ".github/workflows/release.yml:13), wheels{os=windows-latest} ('wheels-windows-latest', "
        ".github/workflows/release.yml:13)",
    ]


def test_a_commit_whose_files_were_read_before_is_not_read_again(
    sg: Sg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reading depends on the files given to the reader and the declared actions alone:
    a head whose workflows and scripts are the base's, byte for byte, is read once; a head
    whose script alone changed is read again (the control)."""
    from stagegate.ci import continuity

    reads: list[str] = []
    real = continuity._read

    def counted(files: Any, commit: str, shown: str, settings: Any) -> Any:
        reads.append(shown)
        return real(files, commit, shown, settings)

    monkeypatch.setattr(continuity, "_READ", [])
    monkeypatch.setattr(continuity, "_read", counted)
    repo, base = pair(tmp_path / "same", FETCH)
    repo.write("README.md", "only the readme changed\n")
    repo.commit("docs")
    assert sg("continuity", "--base", base, cwd=repo.root).code == 0
    assert reads == [base]
    first = base
    repo, base = pair(tmp_path / "changed", FETCH.replace('"wheels-*"', '"whl-*"'))
    assert sg("continuity", "--base", base, cwd=repo.root).code == 1
    assert reads == [first, "HEAD"]  # this base's files are the first base's: not read again


def _missing(repo: Repo, rel: str) -> None:
    """Takes the blob of ``rel`` out of git's object store (a mirror or a partial clone
    without its largest files)."""
    sha = repo.git("rev-parse", f"HEAD:{rel}").strip()
    (repo.root / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


EXTRACT = WHEELS_RELEASE.replace(
    "    steps:\n      - uses: actions/upload-artifact@v4\n",
    "    steps:\n      - run: RUN\n      - uses: actions/upload-artifact@v4\n",
)
assert "RUN" in EXTRACT


def test_an_archive_a_run_names_is_not_read(sg: Sg, tmp_path: Path) -> None:
    """pyca/pynacl's Windows legs `Expand-Archive src/libsodium-...-msvc.zip`: whether the
    archive is a script to read is decided by its name; its bytes, absent from a mirror
    that leaves out large files, are not read (every run was exit 3)."""
    repo = init(tmp_path / "r")
    repo.write(WF, WHEELS_RELEASE)
    repo.write("src/libsodium-msvc.zip", b"PK\x03\x04" + bytes(64))
    base = repo.commit("base")
    repo.write(
        WF, EXTRACT.replace("RUN", "Expand-Archive src/libsodium-msvc.zip -DestinationPath c:/")
    )
    repo.commit("head")
    _missing(repo, "src/libsodium-msvc.zip")
    result = sg("continuity", "--base", base, "--head", "HEAD", cwd=repo.root)
    assert result.code == 0, result.out + result.err
    assert result.out.splitlines()[0] == (
        HEADLINE.replace(":19;", ":16;") + "2 upload contexts reach its publish step, 2 at the base"
    )


def test_a_script_a_run_names_whose_blob_is_missing_is_a_git_error(sg: Sg, tmp_path: Path) -> None:
    """The control: a shell script the run calls is read (for the runs it looks up); where
    git has not its blob, that is said (exit 3), not passed over."""
    repo = init(tmp_path / "r")
    repo.write(WF, WHEELS_RELEASE)
    repo.write("ci/fetch.sh", "#!/bin/bash\ngh run download 1 -p 'x-*'\n")
    base = repo.commit("base")
    repo.write(WF, EXTRACT.replace("RUN", "bash ci/fetch.sh"))
    repo.commit("head")
    _missing(repo, "ci/fetch.sh")
    result = sg("continuity", "--base", base, "--head", "HEAD", cwd=repo.root)
    assert result.code == 3, result.out + result.err
    assert "git has no such object" in result.err
