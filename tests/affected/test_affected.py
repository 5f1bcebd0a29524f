"""`stagegate affected` on a small migration: the rules, the outputs, bad input, and the
check `reuse-safe`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, dedent, init, pin_git
from stagegate.engine.paths import Index, aliases, compile_glob, link_target, never_matches

Sg = Callable[..., Result]

SMALL = dedent(
    """
    version: 1
    migration: small-plan
    stage: 0
    axes:
      py: ["311", "312"]
      sha: {pattern: "[0-9a-f]{40}"}
    producers:
      lib:
        artifacts: ["lib-py{py}-{sha}"]
        paths: ["lib/**"]
      app:
        artifacts: ["app-py{py}-{sha}"]
        paths: ["app/src/**", "app/pyproject.toml"]
    consumers:
      app-build:
        feeds: [app]
        inputs:
          - select: "lib-py{py}-{sha}"
            run: baseline
      app-tests:
        paths: ["app/tests/**"]
        inputs:
          - select: "app-py{py}-{sha}"
            run: baseline
          - select: "lib-py{py}-{sha}"
            run: baseline
      docs:
        paths: ["*.md"]
        inputs: []
    releases:
      app:
        tags: ["v*"]
        select: ["app-py*"]
        ships_reused: true
    """
)


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _repo(root: Path, text: str = SMALL) -> Repo:
    repo = init(root)
    repo.write("migration.yaml", text)
    (root / "stages").mkdir()
    repo.write("lib/core.py", "x = 1\n")
    repo.write("app/src/main.py", "print()\n")
    repo.write("app/tests/test_main.py", "def test(): ...\n")
    repo.write("README.md", "# small\n")
    repo.commit("start")
    repo.git("checkout", "-q", "-b", "topic")
    return repo


def _baseline(repo: Repo, sha: str, names: list[str] | None = None) -> str:
    every = [f"{p}-py{v}-{sha}" for p in ("lib", "app") for v in ("311", "312")]
    path = repo.root.parent / "baseline.json"
    path.write_text(json.dumps({"sha": sha, "artifacts": every if names is None else names}))
    return str(path)


def _plan(sg: Sg, repo: Repo, *args: str) -> dict[str, object]:
    if "--base" not in args:
        args = ("--base", "main", *args)
    result = sg("affected", *args, "--format", "json", cwd=repo.root)
    assert result.code == 0, result.output
    data: dict[str, object] = json.loads(result.out)
    return data


# --------------------------------------------------------------------------- the rules


def test_a_library_edit_rebuilds_what_is_built_from_it_and_reuses_nothing_else(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _repo(tmp_path / "r")
    base = repo.git("rev-parse", "main").strip()
    repo.write("lib/core.py", "x = 2\n")
    repo.commit("lib")
    data = _plan(sg, repo, "--baseline", _baseline(repo, base))
    assert data == {
        "stage": 0,
        "changed": ["lib/core.py"],
        "rebuild": ["lib", "app"],
        "retest": ["app-build", "app-tests"],
        "reuse": [],
        "releases": ["app"],
        "reasons": [
            {"item": "lib", "because": "lib/core.py matches its paths glob 'lib/**'"},
            {"item": "app", "because": "it is built by app-build, which must run"},
            {
                "item": "app-build",
                "because": "it takes lib-py{py}-{sha} from lib, which rebuilds",
            },
            {
                "item": "app-tests",
                "because": "it takes lib-py{py}-{sha} from lib, which rebuilds",
            },
            {"item": "app", "because": "it ships rows of app, which rebuild"},
        ],
    }


def test_a_test_only_edit_reruns_the_tests_on_reused_wheels(tmp_path: Path, sg: Sg) -> None:
    repo = _repo(tmp_path / "r")
    base = repo.git("rev-parse", "main").strip()
    repo.write("app/tests/test_main.py", "def test(): assert 1\n")
    repo.commit("tests")
    data = _plan(sg, repo, "--baseline", _baseline(repo, base))
    assert (data["rebuild"], data["retest"], data["reuse"]) == ([], ["app-tests"], ["lib", "app"])
    # Without a baseline run the same edit rebuilds everything, and says why.
    full = _plan(sg, repo)
    assert (full["rebuild"], full["retest"], full["reuse"]) == (
        ["lib", "app"],
        ["app-build", "app-tests", "docs"],
        [],
    )
    assert full["reasons"][0] == {
        "item": "lib",
        "because": "full rebuild: no baseline run was given (--baseline), so lib cannot be reused",
    }


def test_renames_and_deletions_count_under_every_name(tmp_path: Path, sg: Sg) -> None:
    repo = _repo(tmp_path / "r")
    repo.git("mv", "app/tests/test_main.py", "app/tests/test_renamed.py")
    repo.commit("rename")
    data = _plan(sg, repo, "--baseline", _baseline(repo, repo.git("rev-parse", "main").strip()))
    assert data["changed"] == ["app/tests/test_main.py", "app/tests/test_renamed.py"]
    assert data["retest"] == ["app-tests"]
    # A file moved out of a producer's sources changes that producer too.
    repo.git("mv", "lib/core.py", "app/tests/core.py")
    repo.commit("move")
    moved = _plan(sg, repo, "--baseline", _baseline(repo, repo.git("rev-parse", "main").strip()))
    assert moved["rebuild"] == ["lib", "app"]
    repo.git("rm", "-q", "README.md")
    repo.commit("delete")
    deleted = _plan(sg, repo, "--baseline", _baseline(repo, repo.git("rev-parse", "main").strip()))
    assert "README.md" in deleted["changed"]
    assert "docs" in deleted["retest"]


def test_always_runs_on_every_change_but_not_on_none(tmp_path: Path, sg: Sg) -> None:
    text = SMALL.replace("  docs:\n", "  docs:\n    always: true\n")
    repo = _repo(tmp_path / "r", text)
    base = repo.git("rev-parse", "main").strip()
    assert _plan(sg, repo)["retest"] == []  # nothing changed: nothing runs
    repo.write("app/tests/test_main.py", "def test(): assert 1\n")
    repo.commit("tests")
    data = _plan(sg, repo, "--baseline", _baseline(repo, base))
    assert data["retest"] == ["app-tests", "docs"]
    assert {"item": "docs", "because": "always: true"} in data["reasons"]


def test_a_link_leading_out_of_the_repository_or_round_in_a_loop_is_not_followed(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _repo(tmp_path / "r")
    os.symlink("/etc", repo.root / "app" / "tests" / "etc")
    os.symlink("../../..", repo.root / "app" / "tests" / "up")
    os.symlink("b", repo.root / "lib" / "a")
    os.symlink("a", repo.root / "lib" / "b")
    repo.commit("links")
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("README.md", "# small, edited\n")
    repo.commit("readme")
    data = _plan(sg, repo, "--base", base, "--baseline", _baseline(repo, base))
    # README.md is no test's source even though app/tests/up leads above it.
    assert (data["changed"], data["retest"], data["rebuild"]) == (["README.md"], ["docs"], [])


def test_a_change_outside_every_path_rebuilds_everything_naming_the_file(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _repo(tmp_path / "r")
    repo.write("tools/release.sh", "#!/bin/sh\n")
    repo.write("zz.txt", "\n")
    repo.commit("tools")
    result = sg("affected", "--base", "main", cwd=repo.root)
    assert result.code == 0
    assert result.out.splitlines()[4] == (
        "FULL REBUILD: tools/release.sh (and 1 more) is outside every declared path: no "
        "producer's or consumer's `paths` cover it, so nothing can be proven unaffected"
    )


# --------------------------------------------------------------------------- outputs


def test_text_and_github_outputs(tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "r")
    base = repo.git("rev-parse", "main").strip()
    repo.write("app/src/main.py", "print(1)\n")
    head = repo.commit("app")
    baseline = _baseline(repo, base)
    text = sg("affected", "--base", "main", "--baseline", baseline, cwd=repo.root)
    assert text.out == dedent(
        f"""
        small-plan: stage 0: before the migration
        change: {base[:12]} (merge base) .. {head[:12]}, 1 path
          app/src/main.py
        rebuild (1):
          app: app/src/main.py matches its paths glob 'app/src/**'
        retest (2):
          app-build: it is part of the build of app, which rebuilds
          app-tests: it takes app-py{{py}}-{{sha}} from app, which rebuilds
        reuse from the baseline run (1):
          lib: not rebuilt; app-build, app-tests take its rows from the baseline run
        releases that would ship from the rebuilt producers (1):
          app: it ships rows of app, which rebuild
        """
    )
    outputs = tmp_path / "out"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    gh = sg(
        "affected", "--base", "main", "--baseline", baseline, "--format", "github", cwd=repo.root
    )
    expected = dedent(
        """
        stage=0
        full=false
        rebuild=["app"]
        retest=["app-build","app-tests"]
        reuse=["lib"]
        releases=["app"]
        matrix={"include":[{"producer":"app"}]}
        build-lib=false
        reuse-lib=true
        build-app=true
        reuse-app=false
        test-app-build=true
        test-app-tests=true
        test-docs=false
        """
    )
    assert gh.code == 0
    assert gh.out == expected
    assert outputs.read_text() == expected


# --------------------------------------------------------------------------- bad input


def test_an_unknown_ref_exits_3_saying_how_to_fetch_it(tmp_path: Path, sg: Sg) -> None:
    repo = _repo(tmp_path / "r")
    result = sg("affected", "--base", "origin/release", cwd=repo.root)
    assert result.code == 3
    assert result.err.startswith("unknown git ref 'origin/release': no commit by that name in "), (
        result.err
    )
    assert "`git fetch origin release:refs/remotes/origin/release`" in result.err
    bad_head = sg("affected", "--base", "main", "--head", "nope", cwd=repo.root)
    assert bad_head.code == 3 and "`git fetch origin nope`" in bad_head.err
    assert sg("affected", "--base", "main", cwd=repo.root).code == 0  # the control


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"sha": "abc"', "baseline.json:1:14: not JSON: Expecting ',' delimiter"),
        ('{"sha": "ABC"}', "baseline.json:1:1: sha: 'ABC' is not a 40-hex commit id"),
        ('{"artifacts": "x"}', "baseline.json:1:1: artifacts: not a list of artifact names"),
        ('{"run": 1, "artefacts": []}', "baseline.json:1:1: unknown keys ['artefacts']"),
        ("[]", "baseline.json:1:1: not an object"),
    ],
)
def test_a_bad_baseline_file_exits_2_located(
    tmp_path: Path, sg: Sg, content: str, message: str
) -> None:
    repo = _repo(tmp_path / "r")
    (repo.root / "baseline.json").write_text(content)
    result = sg("affected", "--base", "main", "--baseline", "baseline.json", cwd=repo.root)
    assert result.code == 2
    assert result.err.startswith(message), result.err


def test_a_missing_baseline_file_exits_2(tmp_path: Path, sg: Sg) -> None:
    repo = _repo(tmp_path / "r")
    result = sg("affected", "--base", "main", "--baseline", "gone.json", cwd=repo.root)
    assert result.code == 2
    assert "gone.json:1:1: cannot read the baseline file: No such file or directory" in result.err


def test_a_baseline_commit_missing_from_the_clone_rebuilds_everything(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _repo(tmp_path / "r")
    repo.write("app/tests/test_main.py", "def test(): assert 1\n")
    repo.commit("tests")
    data = _plan(sg, repo, "--baseline", _baseline(repo, "f" * 40))
    assert data["rebuild"] == ["lib", "app"]
    assert data["reasons"][0]["because"] == (
        "full rebuild: the baseline run cannot be used: its commit ffffffffffff is not in "
        f"this clone, so what changed since it is unknown (fetch it: `git fetch origin {'f' * 40}`)"
    )


def test_a_paths_glob_that_can_never_match_is_a_located_warning(tmp_path: Path, sg: Sg) -> None:
    text = SMALL.replace('paths: ["lib/**"]', 'paths: ["lib/**", "../lib/**"]')
    repo = _repo(tmp_path / "r", text)
    result = sg("affected", "--base", "main", "--format", "json", cwd=repo.root)
    assert result.code == 0
    assert result.err == (
        "migration.yaml:10:23: warning: producer lib: paths glob '../lib/**' can never match: "
        "it has a '..' component; `paths` are relative to the repository root and git names "
        "files without '.' or '..'; write it relative to the repository root, such as "
        "'src/pkg/**'\n"
    )
    assert json.loads(result.out)["rebuild"] == []  # still a plan on standard output


# --------------------------------------------------------------------------- reuse-safe

HAZARD = SMALL.replace("    ships_reused: true\n", "")


def _check(sg: Sg, repo: Repo, extra: str = "") -> Result:
    stage = dedent(
        """
        stage: 1
        title: Plan
        acceptance:
          - check: reuse-safe
        """
    )
    repo.write("stages/01-plan.yaml", stage + extra)
    return sg("check", "--stage", "1", cwd=repo.root)


def test_reuse_safe_fails_when_a_release_ships_what_was_built_on_reused_rows(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _repo(tmp_path / "r", HAZARD)
    result = _check(sg, repo)
    assert result.code == 1
    assert (
        "release app ships app, which app-build builds against lib-py{py}-{sha} taken from the "
        "baseline run when it is not rebuilt (migration.yaml:18); build it from this run's "
        "rows (drop `run: baseline`) or say `ships_reused: true` on the release"
    ) in result.out
    # ... and `affected` never plans that reuse: the app edit rebuilds everything.
    base = repo.commit("the stage")
    repo.write("app/src/main.py", "print(2)\n")
    repo.commit("app")
    data = _plan(sg, repo, "--base", base, "--baseline", _baseline(repo, base))
    assert data["reuse"] == []
    assert data["reasons"][0]["because"] == (
        "full rebuild: release app would ship app, built by app-build against lib from the "
        "baseline run; a release ships reused artifacts only where it says `ships_reused: true`"
    )
    # The control: the release that says so passes.
    ok = _repo(tmp_path / "ok")
    assert _check(sg, ok).code == 0


def test_reuse_safe_judges_one_change_against_the_baseline_file(tmp_path: Path, sg: Sg) -> None:
    repo = _repo(tmp_path / "r")
    base = repo.git("rev-parse", "main").strip()
    repo.write("app/src/main.py", "print(3)\n")
    repo.commit("app")
    names = [f"lib-py311-{base}"]  # lib-py312 is missing
    (repo.root / "baseline.json").write_text(json.dumps({"sha": base, "artifacts": names}))
    args = "    base: main\n    baseline: baseline.json\n"
    result = _check(sg, repo, args)
    assert result.code == 1
    assert (
        "the planned reuse is unsafe: the baseline run holds no lib-py312-{sha} (py=312) of lib, "
        "which app-build requires (migration.yaml:18)"
    ) in result.out
    (repo.root / "baseline.json").write_text(
        json.dumps({"sha": base, "artifacts": [*names, f"lib-py312-{base}"]})
    )
    assert _check(sg, repo, args).code == 0


def test_reuse_safe_refuses_a_baseline_input_from_another_run(tmp_path: Path, sg: Sg) -> None:
    text = SMALL.replace(
        "producers:\n",
        'producers:\n  branch-lib:\n    run: old\n    artifacts: ["old-lib-py{py}"]\n',
    ).replace(
        "  docs:\n",
        "  old-tests:\n    inputs:\n      - select: old-lib-py311\n"
        "        from: [branch-lib]\n        run: baseline\n  docs:\n",
    )
    repo = _repo(tmp_path / "r", text)
    result = _check(sg, repo)
    assert result.code == 1
    assert (
        "consumer old-tests: input old-lib-py311 has `run: baseline` but takes rows of "
        "branch-lib, which run old makes, not this repository's runs"
    ) in result.out


# --------------------------------------------------------------------------- path globs


@pytest.mark.parametrize(
    ("glob", "yes", "no"),
    [
        ("lib/**", ["lib/a.py", "lib/x/y/z"], ["lib", "libx/a", "src/lib/a"]),
        ("lib", ["lib", "lib/a", "src/lib", "src/lib/a"], ["libx", "src/libx"]),
        ("/lib", ["lib", "lib/a"], ["src/lib"]),
        ("*.md", ["README.md", "docs/a/b.md"], ["README.mdx", "md"]),
        ("docs/", ["docs/a", "x/docs/a"], ["docs"]),
        ("a/*/c", ["a/b/c", "a/b/c/d"], ["a/c", "a/b/x/c"]),
        ("a/**/c", ["a/c", "a/b/c", "a/b/x/c/d"], ["a/bc"]),
        ("a/[bc]?.py", ["a/bx.py", "a/cy.py"], ["a/dx.py", "a/b/x.py"]),
        ("a/[!b]*", ["a/c"], ["a/b", "a/"]),
    ],
)
def test_paths_globs_read_as_gitignore(glob: str, yes: list[str], no: list[str]) -> None:
    compiled = compile_glob(glob)
    index = Index([("item", glob)])
    for path in yes:
        assert compiled.regex.fullmatch(path) and index.matches(path), (glob, path)
    for path in no:
        assert not compiled.regex.fullmatch(path) and not index.matches(path), (glob, path)


def test_never_matching_globs() -> None:
    assert never_matches("src/**") is None
    assert never_matches("*.md") is None
    assert "'..' component" in (never_matches("../src/**") or "")
    assert "empty path component" in (never_matches("src//x") or "")
    assert "inside .git" in (never_matches(".git/hooks/*") or "")
    assert "not a valid glob" in (never_matches("src/[z-a]") or "")
    assert "names no file" in (never_matches("/") or "")


def test_links_resolve_inside_the_repository_and_chain() -> None:
    assert link_target("a/b/link", "../shared") == "a/shared"
    assert link_target("a/link", "../../out") is None
    assert link_target("link", "/etc") is None
    links = [("x/helpers", "shared"), ("y/more", "x")]
    assert aliases("shared/h.py", links) == [
        ("x/helpers/h.py", "x/helpers"),
        ("y/more/helpers/h.py", "y/more"),
    ]
    assert aliases("sharedx/h.py", links) == []
    loop = [("a", "b"), ("b", "a")]
    assert aliases("a/f", loop) == [("b/f", "b")]


def test_a_change_that_rewrites_the_model_is_not_planned_by_it(tmp_path: Path, sg: Sg) -> None:
    repo = _repo(tmp_path / "r")
    base = repo.git("rev-parse", "main").strip()
    # A hostile pull request: it edits lib and moves lib's sources under the docs job,
    # which runs nothing, so that its own model would plan no build at all.
    repo.write("lib/core.py", "x = 3\n")
    repo.edit("migration.yaml", 'paths: ["lib/**"]', 'paths: ["nothing/**"]')
    repo.edit("migration.yaml", 'paths: ["*.md"]', 'paths: ["*.md", "lib/**", "migration.yaml"]')
    repo.commit("hostile")
    data = _plan(sg, repo, "--baseline", _baseline(repo, base))
    assert (data["rebuild"], data["reuse"]) == (["lib", "app"], [])
    assert data["reasons"][0]["because"] == (
        "full rebuild: migration.yaml is part of the migration itself: a change to the model "
        "that plans it is never planned by that model"
    )
    # A stage file counts too; the control: the same edit of lib alone is planned.
    repo.git("checkout", "-q", "-b", "plain", "main")
    repo.write("stages/01-next.yaml", "stage: 1\ntitle: Next\n")
    repo.commit("a stage")
    staged = _plan(sg, repo, "--baseline", _baseline(repo, base))
    assert staged["reasons"][0]["because"].startswith("full rebuild: stages/01-next.yaml is part")
    repo.git("checkout", "-q", "-b", "lib-only", "main")
    repo.write("lib/core.py", "x = 3\n")
    repo.commit("lib")
    assert _plan(sg, repo, "--baseline", _baseline(repo, base))["rebuild"] == ["lib", "app"]
    assert not _plan(sg, repo, "--baseline", _baseline(repo, base))["reasons"][0][
        "because"
    ].startswith("full rebuild")


@pytest.mark.parametrize("stage", ["1", "-1"])
def test_a_stage_out_of_range_exits_2(tmp_path: Path, sg: Sg, stage: str) -> None:
    repo = _repo(tmp_path / "r")
    result = sg("affected", "--base", "main", "--stage", stage, cwd=repo.root)
    assert result.code == 2
    assert f"stage {stage} does not exist; migration.yaml has stages 0..0." in result.err


# --------------------------------------------------------------------------- changed links

LINKED = dedent(
    """
    version: 1
    migration: linked-plan
    stage: 0
    axes:
      py: ["312"]
      sha: {pattern: "[0-9a-f]{40}"}
    producers:
      gen:
        artifacts: ["gen-py{py}-{sha}"]
        paths: ["gen/src/**", "gen/helpers/*.py"]
      other:
        artifacts: ["other-py{py}-{sha}"]
        paths: ["other/**"]
    consumers:
      tidy:
        paths: ["gen/*", "shared/**"]
        inputs: []
    """
)


def _linked(root: Path) -> Repo:
    repo = init(root)
    repo.write("migration.yaml", LINKED)
    (root / "stages").mkdir()
    repo.write("gen/src/main.py", "x = 1\n")
    repo.write("other/o.py", "y = 1\n")
    repo.write("shared/h.py", "HELPER = 1\n")
    repo.write("shared/notes.txt", "notes\n")
    os.symlink("../shared", root / "gen" / "helpers")  # gen's build reads shared/*.py
    os.symlink("../shared", root / "gen" / "docs")  # reaches the same files: not gen's sources
    repo.commit("start")
    repo.git("checkout", "-q", "-b", "topic")
    return repo


def test_deleting_a_link_into_a_producers_paths_rebuilds_that_producer(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _linked(tmp_path / "r")
    (repo.root / "gen" / "helpers").unlink()  # shared/h.py is no longer gen/helpers/h.py
    repo.commit("drop the link")
    data = _plan(sg, repo)
    assert (data["changed"], data["rebuild"], data["retest"]) == (
        ["gen/helpers"],
        ["gen"],
        ["tidy"],
    )
    assert data["reasons"] == [
        {
            "item": "gen",
            "because": "gen/helpers/h.py (through the symbolic link gen/helpers, which the "
            "change deletes) matches its paths glob 'gen/helpers/*.py'",
        },
        {"item": "tidy", "because": "gen/helpers matches its paths glob 'gen/*'"},
    ]


def test_deleting_a_link_that_led_to_nobodys_sources_rebuilds_nothing(
    tmp_path: Path, sg: Sg
) -> None:
    # The control: the same files through another name are no producer's sources.
    repo = _linked(tmp_path / "r")
    (repo.root / "gen" / "docs").unlink()
    repo.commit("drop the docs link")
    data = _plan(sg, repo)
    assert (data["changed"], data["rebuild"], data["retest"]) == (["gen/docs"], [], ["tidy"])


def test_adding_or_retargeting_a_link_into_a_producers_paths_rebuilds_that_producer(
    tmp_path: Path, sg: Sg
) -> None:
    repo = _linked(tmp_path / "r")
    (repo.root / "gen" / "helpers").unlink()
    os.symlink("../other", repo.root / "gen" / "helpers")  # other/o.py: gen/helpers/o.py
    repo.commit("retarget")
    data = _plan(sg, repo)
    assert (data["changed"], data["rebuild"]) == (["gen/helpers"], ["gen"])
    assert data["reasons"][0] == {
        "item": "gen",
        "because": "gen/helpers/h.py (through the symbolic link gen/helpers, which the "
        "change retargets) matches its paths glob 'gen/helpers/*.py'",
    }
    (repo.root / "gen" / "docs").unlink()
    repo.commit("drop the docs link")
    os.symlink("../other", repo.root / "gen" / "more")
    os.symlink("../shared", repo.root / "gen" / "helpers2")
    repo.commit("add links")
    data = _plan(sg, repo, "--base", "HEAD~1")  # only the additions: nobody's sources
    assert (data["changed"], data["rebuild"]) == (["gen/helpers2", "gen/more"], [])
    repo.git("rm", "-q", "gen/helpers")
    repo.commit("drop the link")
    os.symlink("../shared", repo.root / "gen" / "helpers")
    repo.commit("add it back")
    data = _plan(sg, repo, "--base", "HEAD~1")
    assert (data["changed"], data["rebuild"]) == (["gen/helpers"], ["gen"])
    assert data["reasons"][0]["because"] == (
        "gen/helpers/h.py (through the symbolic link gen/helpers, which the change adds) "
        "matches its paths glob 'gen/helpers/*.py'"
    )


def test_the_whole_producer_shortcut_gives_what_matching_the_globs_gives(tmp_path: Path) -> None:
    """An input whose select is its `from` producer's only template takes every row of it
    without a glob being matched: the same producers and rows as matching, where the
    shortcut applies and where it must not (an exclude, narrower axes on the consumer, a
    glob character, two templates)."""
    from stagegate.engine.affected import _Planner
    from stagegate.engine.resolve import resolve
    from stagegate.validation import load

    odd = tmp_path / "migration.yaml"
    (tmp_path / "stages").mkdir()
    odd.write_text(
        dedent(
            """
            version: 1
            migration: shortcut
            stage: 0
            axes:
              py: ["311", "312"]
              sha: {pattern: "[0-9a-f]{40}"}
            producers:
              one:
                artifacts: ["one-py{py}-{sha}"]
              two:
                artifacts: ["two-py{py}-{sha}", "two-extra-py{py}"]
              narrow:
                axes: {py: ["312"]}
                artifacts: ["narrow-py{py}"]
            consumers:
              c:
                inputs:
                  - select: "one-py{py}-{sha}"
                    from: [one]
                  - select: "one-py{py}-{sha}"
                    from: [one]
                    exclude: ["one-py311-*"]
                  - select: "one-py3?1-{sha}"
                    from: [one]
                  - select: "two-py{py}-{sha}"
                    from: [two]
                  - select: "narrow-py{py}"
                    from: [narrow]
              d:
                axes: {py: ["311"]}
                inputs:
                  - select: "one-py{py}-{sha}"
                    from: [one]
                  - select: "narrow-py{py}"
                    from: [narrow]
            """
        ),
        encoding="utf-8",
    )
    used = 0
    for migration in (load(odd),):
        for stage in range(migration.last + 1):
            plan = resolve(migration, stage)
            planner = _Planner(plan, ())
            for consumer in plan.consumers:
                for item in consumer.inputs:
                    matched = planner._selected(item)
                    assert planner.sources(item) == tuple(
                        dict.fromkeys(r.producer for r in matched)
                    ), item.loc
                    for pid in planner.sources(item):
                        assert planner.rows_from(item, pid) == [
                            r for r in matched if r.producer == pid
                        ], item.loc
                    used += planner._whole(item) is not None
    assert used == 2  # taken for c's first and narrow inputs; refused for the others
