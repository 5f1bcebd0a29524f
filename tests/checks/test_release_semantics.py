"""Release semantics of real migrations: planned changes (release_changes), artifact kinds,
`tooling: both` and per-item axes, each passing and failing on small literal migrations."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result, story_twin
from scratch import Repo, pin_git

Sg = Callable[..., Result]

HEAD = """\
version: 1
migration: demo
summary: Release semantics under test.
stage: 0
axes:
  py: ["313", "314"]
  platform: [linux-64, win-64]
  sha: {pattern: "[0-9a-f]{40}"}
flags:
  py315:
    summary: Build Python 3.15 wheels.
  drop313:
    summary: Stop building Python 3.13 wheels.
"""

WHEELS = """\
producers:
  wheels:
    when: not drop313
    artifacts: ["pkg-python{py}-{platform}-{sha}"]
  wheels-no313:
    when: drop313
    axes: {py: ["314"]}
    artifacts: ["pkg-python{py}-{platform}-{sha}"]
  wheels-315:
    when: py315
    artifacts: ["pkg-python315-{platform}-{sha}"]
releases:
  rel:
    tags: ["v1.*"]
    select: ["pkg-python*"]
invariants:
  - check: release-continuity
    tag: v1.0.0
"""


def make(tmp_path: Path, body: str, *stages: str) -> Path:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(HEAD + textwrap.dedent(body))
    for number, text in enumerate(stages, start=1):
        (root / "stages" / f"{number:02d}-step.yaml").write_text(textwrap.dedent(text))
    return root


def results(sg: Sg, root: Path) -> list[dict[str, object]]:
    out = sg("check", "--all", "--format", "json", cwd=root).out
    found: list[dict[str, object]] = json.loads(out)["results"]
    return found


ADD_315 = """\
stage: 1
title: Python 3.15 wheels
set:
  py315: true
release_changes:
  - tag: v1.0.0
    add: ["pkg-python315-*"]
"""
QUIET = "stage: {n}\ntitle: Nothing changes\n"


# --------------------------------------------------------------------- release_changes


def test_a_declared_addition_passes_and_keeps_proving_every_old_name(
    tmp_path: Path, sg: Sg
) -> None:
    root = make(tmp_path, WHEELS, ADD_315, QUIET.format(n=2))
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output
    assert (
        "release rel selects the 6 artifact names planned: 4 of the 4 of stage 0 kept, "
        "2 added and 0 dropped by the release_changes of stages 1..2"
    ) in result.out


def test_an_old_name_lost_after_a_declared_addition_fails_naming_it(tmp_path: Path, sg: Sg) -> None:
    """Restarting the baseline (`since`) would have passed this; release_changes does not."""
    lose = "stage: 2\ntitle: Drop 3.13\nset:\n  drop313: true\n"
    root = make(tmp_path, WHEELS, ADD_315, lose)
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    assert (
        "release rel (migration.yaml:26) no longer selects 2 rows of "
        "pkg-python{py}-{platform}-{sha} (py=313 platform=linux-64; py=313 platform=win-64), "
        "e.g. pkg-python313-linux-64-{sha}, which it selected at stage 0 from producer wheels; "
        "producer wheels (migration.yaml:15) is off since stage 2 (drop313)"
    ) in result.out
    failed = {(r["check"], r["stage"]) for r in results(sg, root) if not r["ok"]}
    assert failed == {("release-continuity", 2)}


def test_a_declared_drop_holds_and_a_dropped_name_may_not_come_back(tmp_path: Path, sg: Sg) -> None:
    drop = (
        "stage: 1\ntitle: Drop 3.13\nset:\n  drop313: true\nrelease_changes:\n"
        "  - tag: v1.0.0\n    drop: ['pkg-python313-*', 'pkg-python314-*']\n"
        "    add: ['pkg-python314-*']\n"  # 3.14 now from wheels-no313: the move
    )
    back = "stage: 2\ntitle: 3.13 is back\nset:\n  drop313: false\n"
    root = make(tmp_path, WHEELS, drop, back)
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    ok = {r["stage"]: r["ok"] for r in results(sg, root)}
    assert ok == {0: True, 1: True, 2: False}
    assert "now also selects 2 rows of pkg-python{py}-{platform}-{sha}" in result.out
    assert "the release_changes of stage 1 dropped this name from the release" in result.out


def test_an_addition_not_declared_fails_and_says_how_to_declare_it(tmp_path: Path, sg: Sg) -> None:
    undeclared = "stage: 1\ntitle: Python 3.15 wheels\nset:\n  py315: true\n"
    root = make(tmp_path, WHEELS, undeclared)
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    assert "now also selects all 2 rows of pkg-python315-{platform}-{sha}" in result.out
    assert "declare it in the stage file's release_changes" in result.out


def test_a_change_that_adds_nothing_fails_at_its_glob(tmp_path: Path, sg: Sg) -> None:
    typo = ADD_315.replace("pkg-python315-*", "pkg-py315-*")
    root = make(tmp_path, WHEELS, typo)
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    assert (
        "stages/01-step.yaml:7:11: release-continuity tag=v1.0.0 at stage 1: stage 1 "
        "(stages/01-step.yaml) release_changes for v1.0.0: add 'pkg-py315-*' adds nothing"
    ) in result.out or "add 'pkg-py315-*' adds nothing: at stage 1 release rel" in result.out


@pytest.mark.parametrize(
    ("title", "change", "said"),
    [
        (
            "Drop",
            "drop: ['pkg-python312-*']",
            "drop 'pkg-python312-*' drops nothing: at stage 0 release rel",
        ),
        ("Again", "add: ['pkg-python313-*']", "add 'pkg-python313-*' adds nothing"),
    ],
    ids=["dropping-what-is-not-selected", "adding-what-is-already-selected"],
)
def test_a_change_that_changes_nothing_fails(
    tmp_path: Path, sg: Sg, title: str, change: str, said: str
) -> None:
    stage = f"stage: 1\ntitle: {title}\nrelease_changes:\n  - tag: v1.0.0\n    {change}\n"
    result = sg("check", "--all", cwd=make(tmp_path, WHEELS, stage))
    assert result.code == 1
    assert said in result.out


def test_a_change_named_by_another_tag_of_the_same_release_applies(tmp_path: Path, sg: Sg) -> None:
    root = make(tmp_path, WHEELS, ADD_315.replace("tag: v1.0.0", "tag: v1.9.9"))
    assert sg("check", "--all", cwd=root).code == 0


NO313 = WHEELS.replace(
    """releases:
  rel:
    tags: ["v1.*"]
    select: ["pkg-python*"]
""",
    """releases:
  rel:
    when: not drop313
    tags: ["v1.*"]
    select: ["pkg-python*"]
    tooling: TOOLING
  rel-no313:
    when: drop313
    tags: ["v1.*"]
    select: ["pkg-python*"]
    exclude: ["*313*"]
    tooling: TOOLING
""",
)
DROP_313 = (
    "stage: 1\ntitle: Drop 3.13\nset:\n  drop313: true\nrelease_changes:\n"
    "  - tag: v1.0.0\n    drop: ['pkg-python313-*', 'pkg-python314-*']\n"
    "    add: ['pkg-python314-*']\n"  # 3.14 now from wheels-no313: the move
)


def test_with_tooling_control_an_old_tag_still_ships_what_was_planned_for_it(
    tmp_path: Path, sg: Sg
) -> None:
    """A drop is planned for new tags; today's tooling releasing a tag cut before the drop
    must still take that run's 3.13 wheels."""
    assert "rel-no313" in NO313
    tag = make(tmp_path / "tag", NO313.replace("TOOLING", "tag"), DROP_313)
    assert sg("check", "--all", cwd=tag).code == 0
    control = make(tmp_path / "control", NO313.replace("TOOLING", "control"), DROP_313)
    result = sg("check", "--all", cwd=control)
    assert result.code == 1
    assert (
        "with tooling: control, today's tooling run on a run built at stage 0: release "
        "rel-no313 (migration.yaml:31) no longer selects 2 rows of pkg-python{py}-{platform}-{sha} "
        "(py=313 platform=linux-64; py=313 platform=win-64), e.g. pkg-python313-linux-64-{sha}, "
        "which it selected at stage 0 from producer wheels; its globs 'pkg-python*' minus "
        "excludes '*313*' do not select it"
    ) in result.out


# --------------------------------------------------------------------- located errors


def test_release_changes_errors_are_located(tmp_path: Path, sg: Sg) -> None:
    bad = (
        "stage: 1\ntitle: Bad\nrelease_changes:\n"
        "  - tag: v2.0.0\n    add: ['pkg-python315-*']\n"
        "  - tag: v1.0.0\n"
        "  - tag: v1.0.0\n    add: ['pkg-python{py}-*']\n"
    )
    root = make(tmp_path, WHEELS, bad)
    result = sg("validate", cwd=root)
    assert result.code == 2
    err = result.err
    assert (
        "stages/01-step.yaml:4:10: $.release_changes[0].tag: unknown tag 'v2.0.0': "
        "no release's `tags` claims it"
    ) in err
    assert (
        "stages/01-step.yaml:6:5: $.release_changes[1]: release_changes for v1.0.0 lists no "
        "`add` and no `drop` glob"
    ) in err
    assert "stages/01-step.yaml:8:11: $.release_changes[2].add[0]: release_changes globs" in err


def test_release_changes_unknown_key_is_located(tmp_path: Path, sg: Sg) -> None:
    bad = "stage: 1\ntitle: Bad\nrelease_changes:\n  - tag: v1.0.0\n    adds: ['x']\n"
    result = sg("validate", cwd=make(tmp_path, WHEELS, bad))
    assert result.code == 2
    assert (
        "stages/01-step.yaml:5:5: $.release_changes[0].adds: unknown key 'adds'; did you mean 'add'?"
        in result.err
    )


# --------------------------------------------------------------------- shown by plan, diff, status


def test_plan_diff_status_and_the_flip_description_show_the_planned_change(
    tmp_path: Path, sg: Sg
) -> None:
    root = make(tmp_path, WHEELS, ADD_315, QUIET.format(n=2))
    planned = "stage 1 changes release rel (v1.0.0): + pkg-python315-*"
    plan = sg("plan", "--stage", "2", cwd=root).out
    assert f"    planned: {planned}" in plan
    assert "planned:" not in sg("plan", "--stage", "0", cwd=root).out
    assert f"  planned release changes\n    {planned}" in sg("diff", "0", "1", cwd=root).out
    back = sg("diff", "2", "0", cwd=root).out
    assert "    stage 1 undoes release rel (v1.0.0): - pkg-python315-*" in back
    assert "planned release changes" not in sg("diff", "1", "2", cwd=root).out
    assert planned in sg("status", cwd=root).out
    data = json.loads(sg("diff", "0", "1", "--format", "json", cwd=root).out)
    assert data["release_changes"] == [
        {
            "stage": 1,
            "tag": "v1.0.0",
            "releases": ["rel"],
            "add": ["pkg-python315-*"],
            "drop": [],
            "undone": False,
        }
    ]
    paths = json.loads(sg("plan", "--stage", "1", "--format", "json", cwd=root).out)
    assert paths["release_paths"]["rel"]["release_changes"][0]["add"] == ["pkg-python315-*"]

    from stagegate.report.flipdoc import markdown
    from stagegate.validation import load

    body = markdown(load(root / "migration.yaml"), 0, 1, None)
    assert "**Planned release changes** (held exactly by `release-continuity`)" in body
    assert "- stage 1 changes release `rel` (tag `v1.0.0`): adds `pkg-python315-*`" in body


# --------------------------------------------------------------------- verify-pr


def _gate_repo(tmp_path: Path) -> Repo:
    root = make(tmp_path, WHEELS, ADD_315, QUIET.format(n=2))
    repo = Repo(root)
    repo.git("init", "-q", "-b", "main")
    repo.commit("The migration")
    return repo


def test_verify_pr_takes_the_targets_release_changes_from_the_base(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_git(monkeypatch)
    repo = _gate_repo(tmp_path)
    repo.git("checkout", "-q", "-b", "honest")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("Flip to stage 1")
    honest = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert honest.code == 0, honest.output

    # a flip that also widens what the target stage may add is judged by the base's plan
    repo.git("checkout", "-q", "-b", "widen", "main")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit("stages/01-step.yaml", '["pkg-python315-*"]', '["pkg-python315-*", "pkg-*"]')
    repo.commit("Flip to stage 1 and widen its planned change")
    widened = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert widened.code == 1
    assert (
        "FAIL  target-unchanged: this pull request flips to stage 1 and also edits" in widened.out
    )
    assert "$.release_changes[0].add[1] added" in widened.out
    # the checks ran with the base's planned change: the head's extra glob, which adds
    # nothing, is not what judged the flip
    assert "ok    checks-pass" in widened.out, widened.out
    assert "adds nothing" not in widened.out

    # once stage 1 is past, its release_changes are part of what was rolled out
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "honest")
    repo.git("checkout", "-q", "-b", "rewrite")
    repo.edit("stages/01-step.yaml", '["pkg-python315-*"]', '["pkg-python31*"]')
    repo.commit("Rewrite a past stage's planned change")
    rewritten = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert rewritten.code == 1
    assert "FAIL  past-stages-unchanged" in rewritten.out
    assert "$.release_changes[0].add[0] changed" in rewritten.out


# --------------------------------------------------------------------- artifact kinds

KINDS = """\
producers:
  core:
    artifacts:
      - {name: "core-python{py}-{platform}-{sha}", kind: wheel}
      - {name: "core-python{py}-{platform}-{sha}-tests", kind: tests}
      - "core-docs-{sha}"
releases:
  rel:
    tags: ["v1.*"]
    select: ["core*"]
    kinds: [wheel]
invariants:
  - check: release-continuity
    tag: v1.0.0
"""


def test_a_release_taking_another_kind_fails_at_the_baseline_naming_template_producer_glob(
    tmp_path: Path, sg: Sg
) -> None:
    root = make(tmp_path, KINDS, "stage: 1\ntitle: Nothing changes\n")
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    assert (
        "release rel (migration.yaml:21) takes only kinds wheel, but at stage 0 selects all 4 "
        "rows of core-python{py}-{platform}-{sha}-tests (e.g. core-python313-linux-64-{sha}-tests) "
        "of kind 'tests' (template core-python{py}-{platform}-{sha}-tests at migration.yaml:18) "
        "from producer core (migration.yaml:15), via glob 'core*'"
    ) in result.out
    assert "selects core-docs-{sha} of kind 'artifact' (template core-docs-{sha}" in result.out
    assert {r["stage"]: r["ok"] for r in results(sg, root)} == {0: False, 1: False}
    fixed = KINDS.replace(
        'select: ["core*"]', 'select: ["core*"]\n    exclude: ["*-tests", "core-docs-*"]'
    )
    (root / "migration.yaml").write_text(HEAD + fixed)
    assert sg("check", "--all", cwd=root).code == 0


def test_a_plain_template_is_of_kind_artifact(tmp_path: Path, sg: Sg) -> None:
    body = KINDS.replace("kinds: [wheel]", "kinds: [wheel, tests, artifact]")
    assert sg("check", "--all", cwd=make(tmp_path, body, QUIET.format(n=1))).code == 0


def test_a_kind_no_template_has_is_a_located_error(tmp_path: Path, sg: Sg) -> None:
    body = KINDS.replace("kinds: [wheel]", "kinds: [wheels, sdist]")
    result = sg("validate", cwd=make(tmp_path, body, QUIET.format(n=1)))
    assert result.code == 2
    assert (
        "migration.yaml:24:13: $.releases.rel.kinds[0]: no artifact template has kind 'wheels': "
        "write a template as {name: TEMPLATE, kind: wheels} to give it that kind; did you mean 'wheel'?"
    ) in result.err
    assert (
        "migration.yaml:24:21: $.releases.rel.kinds[1]: no artifact template has kind 'sdist': "
        "write a template as {name: TEMPLATE, kind: sdist} to give it that kind; kinds in use: "
        "artifact, tests, wheel"
    ) in result.err


def test_a_template_mapping_is_checked_like_a_template(tmp_path: Path, sg: Sg) -> None:
    body = KINDS.replace('{name: "core-docs-{sha}"', '{name: "core-docs-{shaa}"').replace(
        '- "core-docs-{sha}"', '- {name: "core-docs-{shaa}", kindd: docs}'
    )
    result = sg("validate", cwd=make(tmp_path, body, QUIET.format(n=1)))
    assert result.code == 2
    assert "$.producers.core.artifacts[2].kindd: unknown key 'kindd'; did you mean 'kind'?" in (
        result.err
    )


# --------------------------------------------------------------------- per-item axes

AXES = """\
producers:
  main:
    axes: {py: ["313", "314"]}
    artifacts: ["pkg-python{py}-{platform}-{sha}"]
  branch:
    run: branch
    axes: {py: ["39", "313"], platform: [linux-64]}
    artifacts: ["pkg-python{py}-cuda12-{platform}-{sha}"]
consumers:
  branch-tests:
    axes: {py: ["39", "313"], platform: [linux-64]}
    inputs:
      - select: "pkg-python{py}-cuda12-{platform}-*"
        from: [branch]
  main-tests:
    inputs:
      - select: "pkg-python{py}-{platform}-*"
invariants:
  - check: inputs-satisfied
  - check: single-source
  - check: unique-artifacts
"""


def test_a_producer_and_a_consumer_narrow_and_replace_axis_values(tmp_path: Path, sg: Sg) -> None:
    root = make(tmp_path, AXES, QUIET.format(n=1))
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output
    plan = sg("plan", cwd=root).out
    assert "pkg-python{py}-cuda12-{platform}-{sha}  [2 rows: py=39,313 x platform=linux-64]" in plan
    rows = json.loads(sg("plan", "--format", "json", cwd=root).out)["artifacts"]["branch"]
    assert [r["name"] for r in rows] == [
        "pkg-python39-cuda12-linux-64-{sha}",
        "pkg-python313-cuda12-linux-64-{sha}",
    ]


def test_a_consumer_row_the_narrowed_producer_lacks_fails_exactly(tmp_path: Path, sg: Sg) -> None:
    """#1259: the branch's tests still need Python 3.9 after its producer stopped building it."""
    body = AXES.replace(
        'axes: {py: ["39", "313"], platform: [linux-64]}\n    artifacts',
        'axes: {py: ["313"], platform: [linux-64]}\n    artifacts',
    )
    root = make(tmp_path, body, QUIET.format(n=1))
    result = sg("check", "--all", cwd=root)
    assert result.code == 1
    assert "py=39 platform=linux-64" in result.out
    failed = {(r["check"], r["stage"]) for r in results(sg, root) if not r["ok"]}
    assert failed == {(k, s) for k in ("inputs-satisfied", "single-source") for s in (0, 1)}


def test_unknown_and_open_axes_of_an_item_are_located_errors(tmp_path: Path, sg: Sg) -> None:
    body = AXES.replace('axes: {py: ["313", "314"]}', 'axes: {pyy: ["313"], sha: ["x"]}')
    result = sg("validate", cwd=make(tmp_path, body, QUIET.format(n=1)))
    assert result.code == 2
    assert (
        "migration.yaml:16:12: $.producers.main.axes.pyy: unknown axis 'pyy': an item's axes narrow or replace the values of a finite axis declared under axes:; did you mean 'py'?"
    ) in result.err
    assert "migration.yaml:16:26: $.producers.main.axes.sha: axis 'sha' is open (a pattern)" in (
        result.err
    )


# --------------------------------------------------------------------- tooling: both

BOTH = """\
producers:
  wheels:
    artifacts: ["pkg-python{py}-{platform}-{sha}"]
  extras:
    when: drop313
    artifacts: ["pkg-extra-{platform}-{sha}"]
releases:
  broad:
    when: not py315
    tags: ["v1.*"]
    select: ["pkg-*"]
    tooling: TOOLING
  exact:
    when: py315
    tags: ["v1.*"]
    select: ["pkg-python*"]
    tooling: TOOLING
"""
BOTH_STAGES = (
    "stage: 1\ntitle: Extras\nset:\n  drop313: true\n",
    "stage: 2\ntitle: Exact\nset:\n  py315: true\nacceptance:\n"
    "  - check: release-continuity\n    tag: v1.0.0\n",
)


def test_tooling_both_also_runs_the_tagged_trees_own_tooling_of_earlier_stages(
    tmp_path: Path, sg: Sg
) -> None:
    """A tag cut at stage 1 uploads with the tag's own (broad) tooling: both must hold."""
    control = make(tmp_path / "control", BOTH.replace("TOOLING", "control"), *BOTH_STAGES)
    assert sg("check", "--all", cwd=control).code == 0
    both = make(tmp_path / "both", BOTH.replace("TOOLING", "both"), *BOTH_STAGES)
    result = sg("check", "--all", cwd=both)
    assert result.code == 1
    assert (
        "with tooling: both, the tagged tree's own tooling of a tag cut at stage 1: release "
        "broad (migration.yaml:21) now also selects all 2 rows of pkg-extra-{platform}-{sha}"
    ) in result.out
    assert sg("plan", cwd=both).out.count("tooling: both") == 1


def test_tooling_both_holds_todays_tooling_on_older_runs_like_control(
    tmp_path: Path, sg: Sg
) -> None:
    result = sg("check", "--all", cwd=make(tmp_path, NO313.replace("TOOLING", "both"), DROP_313))
    assert result.code == 1
    assert (
        "with tooling: both, today's tooling run on a run built at stage 0: release rel-no313"
        in (result.out)
    )


def test_the_two_toolings_story_passes_when_modelled_with_one_tooling(
    tmp_path: Path, sg: Sg
) -> None:
    """Why the story needs `both`: as the tag's upload alone, the broken twin passes."""
    root = story_twin("release-runs-both-toolings", "broken", tmp_path / "repo")
    text = (root / "migration.yaml").read_text()
    (root / "migration.yaml").write_text(text.replace("tooling: both", "tooling: tag"))
    assert sg("check", "--all", cwd=root).code == 0
    (root / "migration.yaml").write_text(text.replace("tooling: both", "tooling: control"))
    assert sg("check", "--all", cwd=root).code == 1


def test_verify_pr_holds_a_flip_to_the_bases_release_kinds(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_git(monkeypatch)
    fixed = KINDS.replace(
        'select: ["core*"]', 'select: ["core*"]\n    exclude: ["*-tests", "core-docs-*"]'
    )
    root = make(tmp_path, fixed, "stage: 1\ntitle: Nothing changes\n")
    repo = Repo(root)
    repo.git("init", "-q", "-b", "main")
    repo.commit("The migration")
    repo.git("checkout", "-q", "-b", "lift")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    # the same names (continuity holds), but one is no wheel now, and the rule is lifted
    repo.edit(
        "migration.yaml",
        '{py}-{platform}-{sha}", kind: wheel}',
        '{py}-{platform}-{sha}", kind: tests}',
    )
    repo.edit("migration.yaml", "    kinds: [wheel]\n", "")
    repo.commit("Flip, and let the release take every kind")
    verdict = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert verdict.code == 1
    assert "takes only kinds wheel, but at stage 1 selects" in verdict.out


def test_verify_pr_applies_the_bases_tooling_as_well_as_the_heads(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_git(monkeypatch)
    root = make(tmp_path, NO313.replace("TOOLING", "control"), DROP_313)
    repo = Repo(root)
    repo.git("init", "-q", "-b", "main")
    repo.commit("The migration")
    repo.git("checkout", "-q", "-b", "tag-only")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    text = repo.read("migration.yaml").replace("tooling: control", "tooling: tag")
    repo.write("migration.yaml", text)
    repo.commit("Flip, and say the release runs only the tag's tooling")
    verdict = sg("verify-pr", "--base", "main", cwd=repo.root)
    assert verdict.code == 1
    assert "with tooling: both, today's tooling run on a run built at stage 0" in verdict.out
    assert sg("check", cwd=repo.root).code == 0  # the head's own claim alone passes


def test_a_planned_change_no_check_holds_is_a_located_error(tmp_path: Path, sg: Sg) -> None:
    unchecked = WHEELS.replace("invariants:\n  - check: release-continuity\n    tag: v1.0.0\n", "")
    result = sg("validate", cwd=make(tmp_path / "none", unchecked, ADD_315))
    assert result.code == 2
    assert (
        "stages/01-step.yaml:6:10: $.release_changes[0].tag: no release-continuity check holds "
        "this planned change"
    ) in result.err
    # a check from a `since` at or above the stage does not hold it either
    late = WHEELS.replace("    tag: v1.0.0\n", "    tag: v1.0.0\n    since: 1\n")
    assert sg("validate", cwd=make(tmp_path / "late", late, ADD_315)).code == 2
    # a check of another tag of the same release, in the stage's own acceptance, does
    own = ADD_315 + "acceptance:\n  - check: release-continuity\n    tag: v1.2.3\n"
    assert sg("validate", cwd=make(tmp_path / "own", unchecked, own)).code == 0


def _random_migration(seed: int) -> tuple[str, list[dict[str, bool]], list[list[tuple[str, int]]]]:
    """Six producers, each behind a flag; three stages flip random flags. Returns the
    migration body, each stage's `set`, and the planned changes that match it exactly."""
    import random

    rng = random.Random(seed)
    defaults = [rng.random() < 0.5 for _ in range(6)]
    flags = "".join(
        f"  f{i}:\n    summary: Build pkg-v{i}.\n    default: {str(d).lower()}\n"
        for i, d in enumerate(defaults)
    )
    producers = "".join(
        f'  p{i}:\n    when: f{i}\n    artifacts: ["pkg-v{i}-{{sha}}"]\n' for i in range(6)
    )
    body = (
        'version: 1\nmigration: random\nstage: 0\naxes:\n  sha: {pattern: "[0-9a-f]{40}"}\n'
        f"flags:\n{flags}producers:\n{producers}"
        '  always:\n    artifacts: ["pkg-base-{sha}"]\n'
        'releases:\n  rel:\n    tags: ["v1.*"]\n    select: ["pkg-*"]\n'
        "invariants:\n  - check: release-continuity\n    tag: v1.0.0\n"
    )
    values = list(defaults)
    sets, changes = [], []
    for _ in range(3):
        flips = {i: not values[i] for i in rng.sample(range(6), rng.randint(1, 3))}
        sets.append({f"f{i}": v for i, v in flips.items()})
        changes.append([("add" if v else "drop", i) for i, v in sorted(flips.items())])
        for i, v in flips.items():
            values[i] = v
    return body, sets, changes


def _stage_text(number: int, flips: dict[str, bool], changes: list[tuple[str, int]]) -> str:
    text = f"stage: {number}\ntitle: Step {number}\nset:\n"
    text += "".join(f"  {name}: {str(v).lower()}\n" for name, v in flips.items())
    if changes:
        text += "release_changes:\n  - tag: v1.0.0\n"
        for key in ("add", "drop"):
            globs = [f"pkg-v{i}-*" for k, i in changes if k == key]
            if globs:
                text += f"    {key}: {json.dumps(globs)}\n"
    return text


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_planned_changes_pass_and_leaving_any_one_out_fails_at_its_stage(
    tmp_path: Path, sg: Sg, seed: int
) -> None:
    body, sets, changes = _random_migration(seed)
    stages = [_stage_text(n, sets[n - 1], changes[n - 1]) for n in (1, 2, 3)]
    root = tmp_path / "exact"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(body)
    for n, text in enumerate(stages, start=1):
        (root / "stages" / f"{n:02d}-step.yaml").write_text(text)
    result = sg("check", "--all", cwd=root)
    assert result.code == 0, result.output
    for n in (1, 2, 3):
        for left_out in range(len(changes[n - 1])):
            fewer = [c for j, c in enumerate(changes[n - 1]) if j != left_out]
            (root / "stages" / f"{n:02d}-step.yaml").write_text(_stage_text(n, sets[n - 1], fewer))
            report = results(sg, root)
            ok = {r["stage"]: r["ok"] for r in report}
            assert ok[n] is False, (seed, n, left_out)
            assert all(ok[s] for s in range(n)), (seed, n, left_out)
        (root / "stages" / f"{n:02d}-step.yaml").write_text(stages[n - 1])


def test_a_drop_and_add_that_cancel_out_fails_unless_the_name_moves_producer(
    tmp_path: Path, sg: Sg
) -> None:
    """Dropping and re-adding one name was accepted as "0 added and 0 dropped"; it changes
    nothing unless the name now comes from another producer (the way to declare a move)."""
    same = (
        "stage: 1\ntitle: Churn\nrelease_changes:\n  - tag: v1.0.0\n"
        "    drop: ['pkg-python314-*']\n    add: ['pkg-python314-*']\n"
    )
    result = sg("check", "--all", cwd=make(tmp_path / "same", WHEELS, same))
    assert result.code == 1
    assert (
        "        - stage 1 (stages/01-step.yaml:4) release_changes for v1.0.0: drop "
        "'pkg-python314-*' and add 'pkg-python314-*' cancel out: release rel "
        "(migration.yaml:26) takes the names they match from the same producers after this "
        "stage as before it (a drop and an add of one name declare a move only when the name "
        "then comes from another producer); a planned change must change the selection: fix "
        "the glob (or the release's select), or remove the entry.\n"
        "        (check declared at migration.yaml:30)\n"
    ) in result.out
    move = (
        "stage: 1\ntitle: Drop 3.13\nset:\n  drop313: true\nrelease_changes:\n  - tag: v1.0.0\n"
        "    drop: ['pkg-python313-*', 'pkg-python314-*']\n    add: ['pkg-python314-*']\n"
    )
    moved = sg("check", "--all", cwd=make(tmp_path / "move", WHEELS, move))
    assert moved.code == 0, moved.out
