"""Dispatched releases (issue 23): a `workflow_dispatch` input of `type: choice` or
`boolean` is read once per value; a release says the values that start it (`dispatch`),
drift compares its jobs only where they are these, and its claims are told apart by them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import Result

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: dispatch
stage: 0
axes:
  sha: {{pattern: "[0-9a-f]{{40}}"}}
flags: {{}}
{workflows}producers:
  build:
    jobs: [".github/workflows/ci.yml#build"]
    artifacts: [core-wheel, bindings-wheel]
  archive:
    jobs: [".github/workflows/release.yml#archive"]
    artifacts: [archive-dry, archive-real]
releases:
  core:
    tags: ["*"]
    dispatch: {{component: {core}}}
    select: ["core*"]
    jobs: [".github/workflows/release.yml#publish"]
  bindings:
    tags: ["*"]
    dispatch: {{component: bindings}}
    select: ["bindings*"]
    jobs: [{bindings_job}]
{invariants}"""

CI = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with: {name: core-wheel, path: core}
      - uses: actions/upload-artifact@v4
        with: {name: bindings-wheel, path: bindings}
"""

RELEASE = """\
on:
  workflow_dispatch:
    inputs:
      component:
        type: choice
        options: [core, bindings]
      dry-run:
        type: boolean
      tag:
        type: string
jobs:
  archive:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: archive-${{ inputs.dry-run && 'dry' || 'real' }}
          path: dist
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: "PATTERN"
          path: dist
      - run: twine upload dist/*
"""

GOOD = "${{ inputs.component }}*"


def repo(
    tmp_path: Path,
    *,
    pattern: str = GOOD,
    core: str = "core",
    bindings_job: str = '".github/workflows/release.yml#publish"',
    workflows: str = "",
    invariants: str = "",
) -> Path:
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "stages").mkdir()
    (root / "migration.yaml").write_text(
        MODEL.format(
            workflows=workflows, core=core, bindings_job=bindings_job, invariants=invariants
        )
    )
    (root / ".github" / "workflows" / "ci.yml").write_text(CI)
    (root / ".github" / "workflows" / "release.yml").write_text(RELEASE.replace("PATTERN", pattern))
    return root


def line_of(root: Path, text: str) -> int:
    lines = (root / "migration.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def said(sg: Sg, root: Path, command: str, text: str) -> tuple[int, int, str]:
    """The exit code of ``command``, the model's line holding ``text``, and the first line
    the command wrote."""
    result = sg(command, cwd=root)
    return result.code, line_of(root, text), (result.out + result.err).splitlines()[0]


def drift(sg: Sg, root: Path) -> tuple[int, dict[str, object]]:
    result = sg("drift", "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)


def findings(report: dict[str, object]) -> list[tuple[str, str]]:
    return [(f["kind"], f["item"]) for f in report["findings"]]  # type: ignore[attr-defined,index]


def test_each_option_is_read_and_each_release_compared_in_its_own_contexts(
    sg: Sg, tmp_path: Path
) -> None:
    code, report = drift(sg, repo(tmp_path))
    assert code == 0 and findings(report) == []
    selects = sorted(d["select"] for d in report["downloads"])  # type: ignore[attr-defined,index]
    assert selects == ["bindings*", "core*"]
    # the boolean input: both of its values, each its own name
    names = sorted(u["name"] for u in report["uploads"])  # type: ignore[attr-defined,index]
    assert names == ["archive-dry", "archive-real", "bindings-wheel", "core-wheel"]


def test_a_wrong_download_for_one_component_is_reported_for_that_release_only(
    sg: Sg, tmp_path: Path
) -> None:
    wrong = "${{ inputs.component == 'core' && 'bindings' || inputs.component }}*"
    code, report = drift(sg, repo(tmp_path, pattern=wrong))
    assert code == 1 and findings(report) == [("select-differs", "core")]
    message = report["findings"][0]["message"]  # type: ignore[index]
    assert "the workflows also select bindings-wheel (build" in message
    assert "the model also selects core-wheel (build)" in message


def test_a_value_not_among_the_options_is_reported_at_the_value(sg: Sg, tmp_path: Path) -> None:
    code, line, first = said(sg, repo(tmp_path, core="cor"), "drift", "{component: cor}")
    assert code == 1
    assert first == (
        f"migration.yaml:{line}: unknown-dispatch: release core: dispatch component: 'cor' is "
        "not among the options of .github/workflows/release.yml's input 'component' (core, "
        "bindings): write one of them."
    )


def test_dispatch_values_on_a_workflow_without_workflow_dispatch_are_a_finding(
    sg: Sg, tmp_path: Path
) -> None:
    root = repo(tmp_path, bindings_job='".github/workflows/ci.yml#build"')
    code, report = drift(sg, root)
    assert code == 1 and ("unknown-dispatch", "bindings") in findings(report)
    message = next(
        f["message"]
        for f in report["findings"]  # type: ignore[attr-defined]
        if f["kind"] == "unknown-dispatch"
    )
    assert message.startswith(
        "release bindings: dispatch component: 'bindings': no workflow that starts its jobs "
        "(.github/workflows/ci.yml) is dispatched with a choice or boolean input 'component'"
    )


def test_a_bound_choice_input_wins_over_the_expansion(sg: Sg, tmp_path: Path) -> None:
    bind = 'workflows:\n  bind:\n    ".github/workflows/release.yml inputs.component": core\n'
    code, report = drift(sg, repo(tmp_path, workflows=bind))
    assert code == 1
    selects = [d["select"] for d in report["downloads"]]  # type: ignore[attr-defined,index]
    assert selects == ["core*"]
    # the bound input is not an axis: releases naming its values are reported (and not
    # compared: which of their downloads run is not known)
    assert findings(report) == [("unknown-dispatch", "core"), ("unknown-dispatch", "bindings")]


def test_a_dispatch_value_of_another_form_is_a_located_error(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, core="[core, bindings]")
    code, line, first = said(sg, root, "validate", "{component: [core")
    assert code == 2
    assert first == (
        f"migration.yaml:{line}:27: $.releases.core.dispatch.component: must be a string or "
        "true or false, not a list"
    )


ROUTED = """\
invariants:
  - check: tags-routed
    tags: [v1.0]
"""


def test_releases_apart_by_dispatch_route_one_tag_and_a_check_names_its_values(
    sg: Sg, tmp_path: Path
) -> None:
    check = "  - check: release-continuity\n    tag: v1.0\n"
    root = repo(tmp_path, invariants=ROUTED + check + "    dispatch: {component: core}\n")
    result = sg("check", cwd=root)
    assert result.code == 0, result.output
    assert (
        "  ok    release-continuity tag=v1.0 dispatch.component=core: release core selects "
        "the same 1 artifact name as at stage 0"
    ) in result.out
    # without the values, the tag is claimed twice: said, with what to do
    bare = repo(tmp_path / "bare", invariants=ROUTED + check)
    result = sg("check", cwd=bare)
    assert result.code == 1
    core, bindings = line_of(bare, "  core:"), line_of(bare, "  bindings:")
    assert (
        f"2 active releases claim v1.0 at stage 0 (core (migration.yaml:{core}), bindings "
        f"(migration.yaml:{bindings})); exactly one must: fix the releases' tags or their `when`, or "
        "name the check's dispatch values (they differ in `dispatch`)."
    ) in " ".join(result.out.split())


def test_releases_with_one_dispatch_value_claim_the_tag_twice(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path, core="bindings", invariants=ROUTED)
    result = sg("check", cwd=root)
    assert result.code == 1
    assert "tag v1.0 is claimed by 2 active releases" in result.out
    assert "narrow their tags (or their `dispatch` values)." in " ".join(result.out.split())


def test_a_check_naming_a_value_no_release_says_is_invalid(sg: Sg, tmp_path: Path) -> None:
    check = "  - check: release-continuity\n    tag: v1.0\n    dispatch: {component: cor}\n"
    result = sg("validate", cwd=repo(tmp_path, invariants="invariants:\n" + check))
    assert result.code == 2
    assert (
        "release-continuity dispatch: 'component=cor': no release says dispatch component: "
        "cor (they say bindings, core); name the values of the release the check is about."
    ) in " ".join(result.err.split())


def test_init_writes_one_release_per_component_and_check_passes(sg: Sg, tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "migration.yaml").unlink()
    (root / "stages").rmdir()
    assert sg("init", "--from-workflows", cwd=root).code == 0
    text = (root / "migration.yaml").read_text()
    releases = text[text.index("\nreleases:\n") + 1 : text.index("\ninvariants:\n")]
    assert [line for line in releases.splitlines() if "summary" not in line] == [
        "releases:",
        "  core:",
        '    tags: ["*"]',
        '    dispatch: {component: "core"}',
        "    select:",
        '      - "core*"   # .github/workflows/release.yml:24',
        '    jobs: [".github/workflows/release.yml#publish"]',
        "  bindings:",
        '    tags: ["*"]',
        '    dispatch: {component: "bindings"}',
        "    select:",
        '      - "bindings*"   # .github/workflows/release.yml:24',
        '    jobs: [".github/workflows/release.yml#publish"]',
    ]
    assert '    tag: "v0.0.0"\n    dispatch: {component: "bindings"}\n' in text
    result = sg("check", cwd=root)
    assert result.code == 0, result.output
    assert "release-continuity tag=v0.0.0 dispatch.component=core: release core" in result.out


def test_more_combinations_than_the_limit_stay_unresolved(sg: Sg, tmp_path: Path) -> None:
    """Three more choice inputs of five options: 500 contexts with component and dry-run,
    over the 64 read; the inputs stay unresolved (and bindable) rather than multiply the
    reading. Control: one of them (20 contexts) is read."""
    choices = "".join(
        f"      {n}:\n        type: choice\n        options: [a, b, c, d, e]\n" for n in "xyz"
    )
    for inputs, unresolved in ((choices, True), (choices.split("      y:", 1)[0], False)):
        root = repo(tmp_path / str(unresolved))
        release = root / ".github" / "workflows" / "release.yml"
        text = release.read_text().replace("      component:\n", inputs + "      component:\n", 1)
        release.write_text(text.replace("PATTERN", GOOD))
        code, report = drift(sg, root)
        expressions = [u["expression"] for u in report["unresolved"]]  # type: ignore[attr-defined,index]
        assert ("${{ inputs.component }}" in expressions) is unresolved, expressions
        assert (code == 0) is not unresolved
