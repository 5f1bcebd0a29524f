"""The retirement audit and the `retired` check, on a copy of the cuda-python fixture tree.

Each test copies tests/fixtures/cuda-python-tree/ into a throwaway git repository
(pinned identity and dates, no global or system git configuration) and runs the CLI
there, as a user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from stagegate.git import search
from stagegate.git.search import parse_grep

FIXTURE = FIXTURES / "cuda-python-tree"
AUTHOR = ("Ada Builder", "ada@example.com")
DATE = "2025-03-04T05:06:07Z"

# Every leftover of the fixture at its retirement stage (2): (item, file, line, string);
# a path leftover has line 0 and its legacy.paths entry. The tree has the structure of
# cuda-python's CI at main cb56ab9f: the branch is read in build-wheel.yml, both wheel
# test workflows, backport.yml, dependabot.yml and ci/versions.yml. The metapackage's
# unversioned name is written unquoted there, so its quoted references find nothing.
BEFORE = {
    ("core-build-cu12-half-branch", ".github/workflows/build-wheel.yml", 179, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/build-wheel.yml", 181, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/test-wheel-linux.yml", 128, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/test-wheel-linux.yml", 130, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/test-wheel-linux.yml", 136, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/test-wheel-windows.yml", 131, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/test-wheel-windows.yml", 133, "LATEST_PRIOR_RUN_ID"),
    ("core-build-cu12-half-branch", ".github/workflows/test-wheel-windows.yml", 139, "LATEST_PRIOR_RUN_ID"),
    ("bindings-cu12-branch", ".github/dependabot.yml", 9, "12.9.x"),
    ("bindings-cu12-branch", ".github/dependabot.yml", 12, "12.9.x"),
    ("bindings-cu12-branch", ".github/dependabot.yml", 12, "backport_branch"),
    ("bindings-cu12-branch", ".github/workflows/backport.yml", 0, ".github/workflows/backport.yml"),
    ("bindings-cu12-branch", ".github/workflows/backport.yml", 32, "backport_branch"),
    ("bindings-cu12-branch", ".github/workflows/backport.yml", 48, "BACKPORT_BRANCH"),
    ("bindings-cu12-branch", ".github/workflows/backport.yml", 48, "backport_branch"),
    ("bindings-cu12-branch", ".github/workflows/backport.yml", 52, "BACKPORT_BRANCH"),
    ("bindings-cu12-branch", ".github/workflows/backport.yml", 57, "BACKPORT_BRANCH"),
    ("bindings-cu12-branch", ".github/workflows/build-wheel.yml", 177, "backport_branch"),
    ("bindings-cu12-branch", ".github/workflows/ci.yml", 10, "12.9.x"),
    ("bindings-cu12-branch", ".github/workflows/test-wheel-linux.yml", 70, "backport_branch"),
    ("bindings-cu12-branch", ".github/workflows/test-wheel-windows.yml", 129, "backport_branch"),
    ("bindings-cu12-branch", "ci/versions.yml", 5, "12.9.x"),
    ("bindings-cu12-branch", "ci/versions.yml", 5, "backport_branch"),
}  # fmt: skip


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "surrogateescape")


@pytest.fixture(autouse=True)
def _pinned_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same git for every test: no user or system configuration, a fixed identity."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", AUTHOR[0])
        monkeypatch.setenv(f"GIT_{role}_EMAIL", AUTHOR[1])
        monkeypatch.setenv(f"GIT_{role}_DATE", DATE)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """The fixture tree, committed once in a fresh repository."""
    top = tmp_path / "cuda-python"
    shutil.copytree(FIXTURE, top)
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "The fixture tree")
    yield top


def commit_all(top: Path, message: str) -> None:
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", message)


def cut(path: Path, start: str, end: str) -> None:
    """Delete the lines from the one starting with ``start`` up to (not including) ``end``."""
    text = path.read_text()
    path.write_text(text[: text.index(start)] + text[text.index(end) :])


def clean_up(top: Path) -> None:
    """What stage 2's pull request does: remove every leftover of the retired items."""
    (top / ".github/workflows/backport.yml").unlink()
    versions = top / "ci/versions.yml"
    versions.write_text(
        "\n".join(
            line for line in versions.read_text().splitlines() if "backport_branch" not in line
        )
        + "\n"
    )
    dependabot = top / ".github/dependabot.yml"
    dependabot.write_text(dependabot.read_text().split("\n  # The same updates")[0] + "\n")
    ci = top / ".github/workflows/ci.yml"
    ci.write_text(
        ci.read_text().replace(
            " whether it targets main or a\n      # backport branch such as 12.9.x,", ""
        )
    )
    workflows = top / ".github/workflows"
    cut(
        workflows / "build-wheel.yml",
        "      # Core's CUDA 12 half needs CUDA 12 bindings",
        "      # Core's CUDA 12 half, against",
    )
    for name in ("test-wheel-linux.yml", "test-wheel-windows.yml"):
        cut(
            workflows / name,
            "      # A row testing another CUDA major",
            "      - name: Download cuda.bindings Cython tests",
        )
    linux = workflows / "test-wheel-linux.yml"
    cut(linux, "      OLD_BRANCH: ", "    steps:")
    cut(linux, "\n          OLD_BRANCH=$(yq", "\n\n  test:")


def audit_json(sg: Callable[..., Any], top: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = sg("audit", "--format", "json", *args, cwd=top)
    return result.code, json.loads(result.out)


def triples(report: dict[str, Any]) -> set[tuple[str, str, int, str]]:
    return {(f["item"], f["file"], f["line"] or 0, f["reference"]) for f in report["findings"]}


# --------------------------------------------------------------------------- before and after


def test_leftovers_fail_the_audit_with_file_and_line(sg: Callable[..., Any], repo: Path) -> None:
    result = sg("audit", "--stage", "2", cwd=repo)
    assert result.code == 1
    for _item, file, line, _string in BEFORE:
        assert (f"{file}:{line}:" if line else f"{file}  (file") in result.out
    assert "FAIL: 23 leftovers of retired items" in result.out
    assert (
        "consumer core-build-cu12-half-branch  (retired at stage 1; migration.yaml:" in result.out
    )


def test_json_lists_each_leftover_and_has_the_documented_keys(
    sg: Callable[..., Any], repo: Path
) -> None:
    code, report = audit_json(sg, repo, "--stage", "2")
    assert code == 1
    assert {"stage", "ok", "findings", "stale_flags", "burndown"} <= set(report)
    assert report["stage"] == 2 and report["ok"] is False
    assert triples(report) == BEFORE
    for finding in report["findings"]:
        assert {"item", "kind", "file", "line", "text"} <= set(finding)
        if finding["kind"] == "path":
            assert finding["line"] is None and finding["text"] is None
        else:
            assert finding["kind"] == "reference"
            assert finding["reference"] in finding["text"]
    for stale in report["stale_flags"]:
        assert {"flag", "references"} <= set(stale)
        for place in stale["references"]:
            assert {"file", "line", "text"} <= set(place)
    assert report["burndown"] == []


def test_a_line_holding_two_references_counts_for_each(sg: Callable[..., Any], repo: Path) -> None:
    _, report = audit_json(sg, repo, "--stage", "2")
    on_line = [
        f["reference"]
        for f in report["findings"]
        if (f["file"], f["line"]) == ("ci/versions.yml", 5)
    ]
    assert sorted(on_line) == ["12.9.x", "backport_branch"]


def test_ignored_paths_and_the_migrations_own_files_never_appear(
    sg: Callable[..., Any], repo: Path
) -> None:
    own = ("migration.yaml", "stages/01-same-run-bindings.yaml", "stages/02-legacy-retirement.yaml")
    ignored = "cuda_bindings/docs/source/release/12.9.x-notes.rst"
    for stage in ("0", "1", "2"):
        for fmt in ("text", "github", "markdown"):
            out = sg("audit", "--stage", stage, "--format", fmt, cwd=repo).out
            assert ignored not in out
            assert not any(f"{name}:" in out.replace("; migration.yaml:", "") for name in own)
        _, report = audit_json(sg, repo, "--stage", stage)
        places = [f["file"] for f in report["findings"]]
        places += [r["file"] for s in report["stale_flags"] for r in s["references"]]
        places += [f["file"] for b in report["burndown"] for f in b["files"]]
        assert places and ignored not in places and not set(own) & set(places)
        assert report["excluded"] == [
            "migration.yaml",
            "stages/01-same-run-bindings.yaml",
            "stages/01-same-run-bindings",
            "stages/02-legacy-retirement.yaml",
            "stages/02-legacy-retirement",
        ]


def test_stale_flags_are_listed_with_their_references(sg: Callable[..., Any], repo: Path) -> None:
    _, report = audit_json(sg, repo, "--stage", "2")
    stale = {s["flag"]: s for s in report["stale_flags"]}
    assert set(stale) == {"same-run-cu12", "legacy-branch-source", "unversioned-metapackage-name"}
    assert stale["same-run-cu12"]["value"] is True and stale["same-run-cu12"]["since"] == 1
    assert [(r["file"], r["line"]) for r in stale["legacy-branch-source"]["references"]] == [
        (".github/workflows/build-wheel.yml", 25),
    ]
    assert stale["unversioned-metapackage-name"]["references"] == []
    text = sg("audit", "--stage", "2", cwd=repo).out
    assert "legacy-branch-source = false from stage 2 on (USE_PRIOR_BRANCH_ARTIFACTS)" in text
    assert '.github/workflows/build-wheel.yml:25: USE_PRIOR_BRANCH_ARTIFACTS: "true"' in text


def test_after_the_cleanup_audit_and_check_pass(sg: Callable[..., Any], repo: Path) -> None:
    assert sg("check", "--stage", "2", cwd=repo).code == 1
    clean_up(repo)
    commit_all(repo, "Stage 2: remove the 12.9.x branch plumbing")
    result = sg("audit", "--stage", "2", cwd=repo)
    assert result.code == 0, result.output
    assert "ok: nothing retired at or before stage 2 is left." in result.out
    # stale flags are information, and still listed
    assert "same-run-cu12 = true from stage 1 on (CU12_BINDINGS_SOURCE): 1 place left" in result.out
    checked = sg("check", "--stage", "2", cwd=repo)
    assert checked.code == 0, checked.output
    assert "retired: nothing retired at or before stage 2 is left" in checked.out
    assert sg("check", "--all", cwd=repo).code == 0


def test_the_retired_check_reports_each_leftover_where_it_is(
    sg: Callable[..., Any], repo: Path
) -> None:
    result = sg("check", "--stage", "2", "--format", "json", cwd=repo)
    assert result.code == 1
    (retired,) = [r for r in json.loads(result.out)["results"] if r["check"] == "retired"]
    assert retired["ok"] is False
    assert retired["file"].endswith("02-legacy-retirement.yaml")
    places = {(f["file"], f["line"]) for f in retired["findings"]}
    assert places == {(file, line or 1) for _item, file, line, _s in BEFORE}
    assert any(
        "producer bindings-cu12-branch (retired at stage 2): 'backport_branch' is still in "
        "ci/versions.yml:5" in f["message"]
        for f in retired["findings"]
    )


def test_the_retired_check_shows_the_reference_on_a_long_line(
    sg: Callable[..., Any], repo: Path
) -> None:
    (repo / "ci/long.sh").write_text("echo " + "x" * 250 + " 12.9.x\n")
    commit_all(repo, "a long line")
    result = sg("check", "--stage", "2", "--format", "json", cwd=repo)
    (retired,) = [r for r in json.loads(result.out)["results"] if r["check"] == "retired"]
    (message,) = [f["message"] for f in retired["findings"] if f["file"] == "ci/long.sh"]
    assert message.startswith("producer bindings-cu12-branch (retired at stage 2): '12.9.x'")
    assert message.endswith("xxx 12.9.x")


def test_an_earlier_stage_fails_only_for_what_it_retired(
    sg: Callable[..., Any], repo: Path
) -> None:
    code, report = audit_json(sg, repo, "--stage", "1")
    assert code == 1
    assert {f["item"] for f in report["findings"]} == {"core-build-cu12-half-branch"}
    burndown = {b["item"]: b for b in report["burndown"]}
    assert set(burndown) == {"bindings-cu12-branch", "metapackage-unversioned"}
    assert burndown["bindings-cu12-branch"]["retired_at"] == 2
    assert burndown["bindings-cu12-branch"]["remaining"] == 15
    assert burndown["bindings-cu12-branch"]["files"] == [
        {"file": ".github/dependabot.yml", "count": 3},
        {"file": ".github/workflows/backport.yml", "count": 6},
        {"file": ".github/workflows/build-wheel.yml", "count": 1},
        {"file": ".github/workflows/ci.yml", "count": 1},
        {"file": ".github/workflows/test-wheel-linux.yml", "count": 1},
        {"file": ".github/workflows/test-wheel-windows.yml", "count": 1},
        {"file": "ci/versions.yml", "count": 2},
    ]
    assert [s["flag"] for s in report["stale_flags"]] == ["same-run-cu12"]


def test_before_any_retirement_the_burndown_is_information(
    sg: Callable[..., Any], repo: Path
) -> None:
    result = sg("audit", cwd=repo)  # the current stage: 0
    assert result.code == 0
    assert "stage 1  consumer core-build-cu12-half-branch: 8 left in 3 files" in result.out
    # The 12 unquoted cuda-python-wheel lines escape the quoted references.
    assert "stage 2  producer metapackage-unversioned: nothing left" in result.out


# --------------------------------------------------------------------------- exactly git grep


def grep_oracle(top: Path, strings: list[str], pathspecs: list[str]) -> set[tuple[str, int, str]]:
    """(file, line, string) from one plain `git grep -F` per string."""
    found = set()
    for string in strings:
        done = subprocess.run(
            ["git", "grep", "-F", "-n", "-z", "-I", "-e", string, "--", *pathspecs],
            cwd=top,
            capture_output=True,
            check=False,
        )
        assert done.returncode in (0, 1), done.stderr
        for record in done.stdout.split(b"\n"):
            if record:
                path, number, _text = record.split(b"\0", 2)
                found.add((path.decode("utf-8", "backslashreplace"), int(number), string))
    return found


def test_findings_equal_what_git_grep_reports(sg: Callable[..., Any], repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs/notes.md").write_text(
        "We left 12.9.x here\nand BACKPORT_BRANCH and backport_branch together\n"
    )
    (repo / "ci/crlf.sh").write_bytes(b"a\r\nexport LATEST_PRIOR_RUN_ID=1\r\nb\r\n")
    commit_all(repo, "more")
    _, report = audit_json(sg, repo, "--stage", "2")
    ours = {(f["file"], f["line"], f["reference"]) for f in report["findings"] if f["line"]}
    ours |= {
        (r["file"], r["line"], r["reference"])
        for s in report["stale_flags"]
        for r in s["references"]
    }
    strings = ["LATEST_PRIOR_RUN_ID", "backport_branch", "BACKPORT_BRANCH", "12.9.x"]
    strings += ['cuda-python-wheel"', "cuda-python-wheel'", "CU12_BINDINGS_SOURCE"]
    strings += ["USE_PRIOR_BRANCH_ARTIFACTS", "UPLOAD_UNVERSIONED_METAPACKAGE"]
    theirs = grep_oracle(
        repo,
        strings,
        [
            ":(exclude)migration.yaml",
            ":(exclude)stages",
            ":(exclude,glob)cuda_bindings/docs/source/release/*-notes.rst",
        ],
    )
    assert ours == theirs
    assert ("docs/notes.md", 2, "backport_branch") in ours


def test_crlf_lines_are_numbered_and_shown_without_the_carriage_return(
    sg: Callable[..., Any], repo: Path
) -> None:
    (repo / "ci/windows.ps1").write_bytes(
        b"# one\r\n# two\r\n$env:BACKPORT_BRANCH = '12.9.x'\r\n# four\r\n"
    )
    commit_all(repo, "a CRLF file")
    _, report = audit_json(sg, repo, "--stage", "2")
    found = [f for f in report["findings"] if f["file"] == "ci/windows.ps1"]
    assert {(f["line"], f["reference"]) for f in found} == {(3, "BACKPORT_BRANCH"), (3, "12.9.x")}
    assert all(f["text"] == "$env:BACKPORT_BRANCH = '12.9.x'" for f in found)
    assert found[0]["col"] == 6 or found[1]["col"] == 6


def test_paths_with_spaces_newlines_and_non_ascii_come_back_exactly(
    sg: Callable[..., Any], repo: Path
) -> None:
    git(repo, "config", "core.quotePath", "true")  # irrelevant with -z: names stay raw
    names = ["ci/tools/outils de publication é.sh", "ci/tools/two\nlines.sh", "docs/日本語.md"]
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x\ny\nLATEST_PRIOR_RUN_ID=$(lookup)\n")
    commit_all(repo, "awkward names")
    _, report = audit_json(sg, repo, "--stage", "2")
    found = {(f["file"], f["line"]) for f in report["findings"]}
    for name in names:
        assert (name, 3) in found


def test_binary_files_are_skipped(sg: Callable[..., Any], repo: Path) -> None:
    (repo / "ci/cache.bin").write_bytes(b"\0\1\2backport_branch: 12.9.x\n\0")
    commit_all(repo, "a binary file")
    _, report = audit_json(sg, repo, "--stage", "2")
    assert all(f["file"] != "ci/cache.bin" for f in report["findings"])
    assert triples(report) == BEFORE


def test_only_tracked_files_in_the_work_tree_count(sg: Callable[..., Any], repo: Path) -> None:
    (repo / "untracked.txt").write_text("backport_branch\n")
    (repo / ".github/workflows/backport.yml").unlink()  # deleted, not yet committed
    _, report = audit_json(sg, repo, "--stage", "2")
    files = {f["file"] for f in report["findings"]}
    assert "untracked.txt" not in files
    assert ".github/workflows/backport.yml" not in files
    edited = repo / "ci/versions.yml"
    edited.write_text(edited.read_text().replace('backport_branch: "12.9.x"', "# gone"))
    _, report = audit_json(sg, repo, "--stage", "2")
    assert all(f["file"] != "ci/versions.yml" for f in report["findings"])


def test_legacy_paths_take_globs_and_ignore_applies_to_them(
    sg: Callable[..., Any], repo: Path
) -> None:
    migration = repo / "migration.yaml"
    text = migration.read_text()
    text = text.replace(
        "paths: [.github/workflows/backport.yml]",
        'paths: [".github/workflows/backport*.yml", "ci/old/**", "lookup-run-id-by-branch"]',
    )
    text = text.replace(
        '    - "cuda_bindings/docs/source/release/*-notes.rst"',
        '    - "cuda_bindings/docs/source/release/*-notes.rst"\n    - "ci/old/keep/**"\n'
        '    - "*.md"',
    )
    migration.write_text(text)
    for name in (
        ".github/workflows/backport-labels.yml",
        ".github/workflows/sub/backport-x.yml",  # `*` stays within one folder
        "ci/old/a/b.txt",
        "ci/old/keep/c.txt",  # ignored
        "lookup-run-id-by-branch",  # no `/`: any depth
        "ci/tools/lookup-run-id-by-branch",
        "docs/ci/branches.md",  # `*.md`: any depth, ignored
    ):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("nothing to see, or 12.9.x\n")
    commit_all(repo, "more legacy files")
    _, report = audit_json(sg, repo, "--stage", "2")
    paths = {(f["file"], f["reference"]) for f in report["findings"] if f["kind"] == "path"}
    assert paths == {
        (".github/workflows/backport.yml", ".github/workflows/backport*.yml"),
        (".github/workflows/backport-labels.yml", ".github/workflows/backport*.yml"),
        ("ci/old/a/b.txt", "ci/old/**"),
        ("lookup-run-id-by-branch", "lookup-run-id-by-branch"),
        ("ci/tools/lookup-run-id-by-branch", "lookup-run-id-by-branch"),
    }
    referenced = {f["file"] for f in report["findings"] if f["reference"] == "12.9.x"}
    assert "docs/ci/branches.md" not in referenced and "ci/old/keep/c.txt" not in referenced
    assert ".github/workflows/sub/backport-x.yml" in referenced


def test_a_glob_matching_a_folder_covers_everything_under_it(
    sg: Callable[..., Any], repo: Path
) -> None:
    """As in .gitignore: `vendor` is that folder at any depth, `ci/ol*` any folder it matches."""
    migration = repo / "migration.yaml"
    text = migration.read_text()
    text = text.replace(
        "paths: [.github/workflows/backport.yml]", 'paths: ["backport-tools", "ci/ol*"]'
    )
    text = text.replace(
        '    - "cuda_bindings/docs/source/release/*-notes.rst"',
        '    - "cuda_bindings/docs/source/release/*-notes.rst"\n    - "vendor"',
    )
    migration.write_text(text)
    for name in (
        "backport-tools/run.sh",
        ".github/backport-tools/sub/open-pr.sh",
        "ci/old/label.sh",
        "vendor/lib.sh",  # ignored
        "third_party/vendor/deep/lib.sh",  # ignored
    ):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("branch=12.9.x\n")
    commit_all(repo, "legacy folders")
    _, report = audit_json(sg, repo, "--stage", "2")
    paths = {f["file"] for f in report["findings"] if f["kind"] == "path"}
    assert paths == {
        "backport-tools/run.sh",
        ".github/backport-tools/sub/open-pr.sh",
        "ci/old/label.sh",
    }
    referenced = {f["file"] for f in report["findings"] if f["reference"] == "12.9.x"}
    assert "vendor/lib.sh" not in referenced
    assert "third_party/vendor/deep/lib.sh" not in referenced
    assert "ci/old/label.sh" in referenced


def test_a_file_two_legacy_paths_match_names_both_in_the_text(
    sg: Callable[..., Any], repo: Path
) -> None:
    migration = repo / "migration.yaml"
    migration.write_text(
        migration.read_text().replace(
            "paths: [.github/workflows/backport.yml]",
            'paths: [.github/workflows/backport.yml, "backport*.yml"]',
        )
    )
    result = sg("audit", "--stage", "2", cwd=repo)
    assert (
        ".github/workflows/backport.yml  (file; legacy paths .github/workflows/backport.yml, "
        "backport*.yml)" in result.out
    )


def test_a_migration_in_a_subfolder_searches_the_whole_repository(
    sg: Callable[..., Any], repo: Path
) -> None:
    sub = repo / "ci" / "migration"
    sub.mkdir()
    git(repo, "mv", "migration.yaml", "stages", "ci/migration/")
    git(repo, "commit", "-q", "-m", "move the migration")
    code, report = audit_json(sg, sub, "--stage", "2")
    assert code == 1
    assert triples(report) == BEFORE
    assert "ci/migration/migration.yaml" in report["excluded"]


# --------------------------------------------------------------------------- formats and blame


def test_github_format_annotates_each_leftover_and_writes_a_summary(
    sg: Callable[..., Any], repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = sg("audit", "--stage", "2", "--format", "github", cwd=repo)
    assert result.code == 1
    errors = [line for line in result.out.splitlines() if line.startswith("::error ")]
    assert len(errors) == len(BEFORE)
    assert any(
        line.startswith("::error file=ci/versions.yml,line=5,col=1,")
        and "'backport_branch'" in line
        for line in errors
    )
    assert any(
        line.startswith("::error file=.github/workflows/backport.yml,line=1,") for line in errors
    )
    notices = [line for line in result.out.splitlines() if line.startswith("::notice ")]
    assert any("file=.github/workflows/build-wheel.yml,line=25," in n for n in notices)
    written = summary.read_text()
    assert "### stagegate audit (stage 2 of 2: Legacy retirement)" in written
    assert "| producer bindings-cu12-branch | 2 | `ci/versions.yml:5` | `12.9.x` |" in written


def test_markdown_format_prints_the_tables(sg: Callable[..., Any], repo: Path) -> None:
    result = sg("audit", "--format", "markdown", cwd=repo)
    assert result.code == 0
    assert "**Burndown**" in result.out
    assert "| consumer core-build-cu12-half-branch | 1 | 8 |" in result.out


def test_blame_names_the_commit_author_and_age(sg: Callable[..., Any], repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    edited = repo / "ci/tools/download-wheels"
    edited.write_text(edited.read_text().replace('"all"', '"everything"'))  # not committed
    (repo / "ci/new.sh").write_text("echo 12.9.x\n")
    git(repo, "add", "ci/new.sh")  # staged, never committed
    code, report = audit_json(sg, repo, "--stage", "2", "--blame")
    assert code == 1
    blamed = {(f["file"], f["line"]): f.get("blame") for f in report["findings"]}
    committed = blamed[("ci/versions.yml", 5)]
    assert committed is not None
    assert committed["commit"] == head
    assert committed["author"] == AUTHOR[0] and committed["email"] == AUTHOR[1]
    assert committed["date"] == DATE
    assert committed["age_days"] >= 0
    assert blamed[("ci/new.sh", 1)] == {
        "commit": None,
        "author": None,
        "email": None,
        "date": None,
        "age_days": None,
    }
    assert blamed[(".github/workflows/backport.yml", None)] is None
    text = sg("audit", "--stage", "2", "--blame", cwd=repo).out
    assert f"last changed: {head[:10]} {AUTHOR[0]} <{AUTHOR[1]}>, " in text
    assert "last changed: not committed yet" in text


def test_blame_of_files_changed_since_head_follows_the_work_tree(
    sg: Callable[..., Any], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files unchanged since HEAD are blamed at HEAD (no index to load); a file edited in
    the work tree, or staged, is blamed as it is, so its line numbers and its new lines
    stay right. HEAD's blobs and the work-tree files' hashes tell which is which."""

    head = git(repo, "rev-parse", "HEAD").strip()

    def line_of(path: Path, text: str) -> int:
        return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)

    versions = repo / "ci/versions.yml"
    staged = repo / ".github/workflows/backport.yml"
    unchanged = repo / ".github/workflows/build-wheel.yml"
    old = {path: line_of(path, "backport_branch") for path in (versions, staged, unchanged)}
    versions.write_text("# 12.9.x, new\n" + versions.read_text())  # each line moves down one
    staged.write_text("# backport_branch, staged\n" + staged.read_text())
    git(repo, "add", str(staged))
    spawned: list[list[str]] = []
    spawn = search.spawn

    def recording(args: Any, cwd: Path, *, stdin: bool = False) -> Any:
        spawned.append([a if isinstance(a, str) else os.fsdecode(a) for a in args])
        return spawn(args, cwd, stdin=stdin)

    monkeypatch.setattr(search, "spawn", recording)
    code, report = audit_json(sg, repo, "--stage", "2", "--blame")
    assert code == 1
    blamed = {(f["file"], f["line"]): f["blame"] for f in report["findings"] if f["line"]}
    assert blamed[("ci/versions.yml", 1)]["commit"] is None
    assert blamed[("ci/versions.yml", old[versions] + 1)]["commit"] == head
    assert blamed[(".github/workflows/backport.yml", 1)]["commit"] is None
    assert blamed[(".github/workflows/backport.yml", old[staged] + 1)]["commit"] == head
    assert blamed[(".github/workflows/build-wheel.yml", old[unchanged])]["commit"] == head
    assert sum(args[0] == "hash-object" for args in spawned) == 1
    blames = {args[-1]: args for args in spawned if args[0] == "blame"}
    assert "HEAD" in blames[".github/workflows/build-wheel.yml"]
    assert "HEAD" not in blames["ci/versions.yml"]
    assert "HEAD" not in blames[".github/workflows/backport.yml"]


def test_blame_in_a_repository_without_commits(sg: Callable[..., Any], tmp_path: Path) -> None:
    top = tmp_path / "fresh"
    shutil.copytree(FIXTURE, top)
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    code, report = audit_json(sg, top, "--stage", "2", "--blame")
    assert code == 1
    lines = [f for f in report["findings"] if f["line"]]
    assert lines and all(f["blame"]["commit"] is None for f in lines)


# --------------------------------------------------------------------------- errors


def test_outside_a_repository_is_a_git_error(sg: Callable[..., Any], tmp_path: Path) -> None:
    plain = tmp_path / "not-a-repo"
    shutil.copytree(FIXTURE, plain)
    for args in (("audit",), ("check", "--stage", "2")):
        result = sg(*args, cwd=plain)
        assert result.code == 3
        assert f"{plain} is not in a git repository" in result.err
        assert "git init" in result.err


def test_a_legacy_path_outside_the_repository_is_invalid_input(
    sg: Callable[..., Any], repo: Path
) -> None:
    migration = repo / "migration.yaml"
    migration.write_text(
        migration.read_text().replace(
            "paths: [.github/workflows/backport.yml]", "paths: [../elsewhere.yml]"
        )
    )
    for args in (("audit",), ("validate",)):
        result = sg(*args, cwd=repo)
        assert result.code == 2
        assert (
            "migration.yaml:37:3: producer bindings-cu12-branch: legacy path '../elsewhere.yml'"
            in result.err
        )


def test_an_ignore_glob_outside_the_repository_is_invalid_input(
    sg: Callable[..., Any], repo: Path
) -> None:
    migration = repo / "migration.yaml"
    migration.write_text(migration.read_text() + '    - "/etc/**"\n')
    stages = repo / "stages/01-same-run-bindings.yaml"
    stages.write_text(stages.read_text() + "  - check: retired\n")  # a second one
    line = migration.read_text().splitlines().index('    - "/etc/**"') + 1
    for args in (("audit",), ("validate",)):
        result = sg(*args, cwd=repo)
        assert result.code == 2
        assert f"migration.yaml:{line}:8: audit.ignore entry '/etc/**' is absolute" in result.err
        assert result.err.count("/etc/**") == 1


def test_parse_grep_reads_any_file_name() -> None:
    out = b"a\nb c\x003\x00x\0y\ndir/\xff.txt\x0012\x00tail"
    hits = parse_grep(out)
    assert [(h.path, h.line, h.text) for h in hits] == [
        (b"a\nb c", 3, b"x\0y"),
        (b"dir/\xff.txt", 12, b"tail"),
    ]


def test_a_flag_reference_holding_a_line_break_is_invalid_input(
    sg: Callable[..., Any], repo: Path
) -> None:
    """Not searched silently as two strings that no line can match as one."""
    migration = repo / "migration.yaml"
    text = migration.read_text()
    assert "references: [USE_PRIOR_BRANCH_ARTIFACTS]" in text
    migration.write_text(
        text.replace(
            "references: [USE_PRIOR_BRANCH_ARTIFACTS]", 'references: ["USE_PRIOR\\nBRANCH"]'
        )
    )
    line = next(n for n, s in enumerate(text.splitlines(), 1) if s == "  legacy-branch-source:")
    result = sg("audit", "--stage", "2", cwd=repo)
    assert result.code == 2
    assert (
        f"migration.yaml:{line}:3: flag legacy-branch-source: reference 'USE_PRIOR\\nBRANCH' "
        "holds a line break" in result.err
    )


# --------------------------------------------------------------------------- issue #24, item 2


def _encoded_repo(root: Path) -> Path:
    """The small migration with broad's legacy string in ci/release.yml, which every
    checkout writes in UTF-16 (``working-tree-encoding``): the blob is UTF-8."""
    from scratch import init, write_small

    repo = init(root)
    write_small(repo.root)
    repo.edit(
        "migration.yaml",
        '    select: ["pkg-*"]\n',
        '    select: ["pkg-*"]\n    legacy:\n      references: ["pkg-* # broad"]\n',
    )
    repo.write(".gitattributes", "ci/*.yml working-tree-encoding=UTF-16LE\n")
    repo.write("ci/release.yml", "name: release\ndownload: pkg-* # broad\n".encode("utf-16-le"))
    repo.write("ci/other.yml", "\0pkg-* # broad\n".encode("utf-16-le"))  # binary blob
    repo.commit("A leftover in a file checked out as UTF-16")
    return root


Sg = Callable[..., Any]


def _found(sg: Sg, root: Path) -> tuple[int, list[tuple[str, int]]]:
    result = sg("audit", "--stage", "1", "--format", "json", cwd=root)
    found = json.loads(result.out)["findings"]
    return result.code, [(f["file"], f["line"]) for f in found]


def test_the_audit_searches_the_committed_text_of_a_re_encoded_file(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scratch import pin_git

    pin_git(monkeypatch)
    root = _encoded_repo(tmp_path / "repo")
    assert (
        subprocess.run(  # git itself finds nothing in the work tree
            ["git", "grep", "-F", "pkg-* # broad", "--", "ci"],
            cwd=root,
            capture_output=True,
            check=False,
        ).returncode
        == 1
    )
    assert _found(sg, root) == (1, [("ci/release.yml", 2)])


def test_a_re_encoded_file_edited_in_the_work_tree_is_read_there(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the work tree's content counts where it differs from the commit, as
    for any file (the leftover removed, not committed yet: nothing is found)."""
    from scratch import pin_git

    pin_git(monkeypatch)
    root = _encoded_repo(tmp_path / "repo")
    (root / "ci/release.yml").write_bytes("name: release\ndownload: pkg-py*\n".encode("utf-16-le"))
    assert _found(sg, root) == (0, [])
