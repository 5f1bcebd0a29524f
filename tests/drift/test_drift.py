"""`stagegate drift`, `init` and `new-stage` on a fixture tree of workflows.

tests/fixtures/drift/repo holds workflows that use every form the reader evaluates
(matrix with include/exclude, env at three levels, inputs through a reusable-workflow
call and a composite action, shell variables and loops, `$GITHUB_ENV` writes, a bind,
flags read through `stagegate flags` outputs) and a hand-written model on which
drift passes at every stage. Each test copies the tree and breaks one side.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, Result

FIXTURE = FIXTURES / "drift" / "repo"
CI = ".github/workflows/ci.yml"
BUILD = ".github/workflows/build.yml"

Sg = Callable[..., Result]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, needle: str, *, exact: bool = False) -> int:
    lines = path.read_text().splitlines()
    return next(
        i for i, line in enumerate(lines, 1) if (line == needle if exact else needle in line)
    )


def findings(sg: Sg, root: Path, *args: str) -> tuple[int, dict[str, object]]:
    result = sg("drift", "--format", "json", *args, cwd=root)
    return result.code, json.loads(result.out)


def only(data: dict[str, object], kind: str) -> dict[str, object]:
    found = [f for f in data["findings"] if f["kind"] == kind]  # type: ignore[union-attr,index]
    assert len(found) == 1, data["findings"]
    return found[0]  # type: ignore[no-any-return]


def failing(sg: Sg, root: Path, kind: str, *args: str) -> dict[str, object]:
    """The one finding of ``kind`` of a drift that fails (exit 1)."""
    code, data = findings(sg, root, *args)
    assert code == 1
    return only(data, kind)


# --------------------------------------------------------------------------- the fixture


@pytest.mark.parametrize("stage", ["0", "1", "2"])
def test_the_fixture_has_no_drift_at_any_stage(sg: Sg, repo: Path, stage: str) -> None:
    result = sg("drift", "--stage", stage, cwd=repo)
    assert result.code == 0, result.output
    assert "no drift" in result.out


def test_json_has_the_spec_keys(sg: Sg, repo: Path) -> None:
    code, data = findings(sg, repo)
    assert code == 0
    assert {"stage", "ok", "uploads", "downloads", "findings", "unresolved"} <= set(data)
    upload = data["uploads"][0]  # type: ignore[index]
    assert {"file", "line", "job", "name", "resolved"} <= set(upload)
    download = data["downloads"][0]  # type: ignore[index]
    assert {"file", "line", "job", "select", "kind", "resolved"} <= set(download)
    assert {d["kind"] for d in data["downloads"]} == {"name", "pattern"}  # type: ignore[union-attr,index]


def test_every_expression_form_is_evaluated(sg: Sg, repo: Path) -> None:
    code, data = findings(sg, repo, "--stage", "1")
    assert code == 0
    uploads = {(u["file"], u["name"]) for u in data["uploads"]}  # type: ignore[union-attr,index]
    # env (job env from workflow env, matrix with exclude) + inputs from the caller's matrix
    assert (BUILD, "demo-python312-win-64-{sha}") in uploads
    assert not any("python311" in name for _f, name in uploads)  # excluded
    # include merged into one row only, and the step's if: on it
    assert (BUILD, "demo-python312-linux-64-{sha}-tests") in uploads
    assert (BUILD, "demo-python313-linux-64-{sha}-tests") not in uploads
    # a shell variable written to $GITHUB_ENV and read by a later step
    assert (BUILD, "demo-docs-win-64") in uploads
    # a bind
    assert (BUILD, "demo-meta-{sha}") in uploads
    # a flag read with fromJSON(inputs.flags)[...] passed through the reusable call
    assert (BUILD, "demo-new-linux-64") in uploads
    downloads = {(d["file"], d["select"], d["kind"], d["run"]) for d in data["downloads"]}  # type: ignore[union-attr,index]
    action = ".github/actions/fetch/action.yml"
    # a composite action's inputs, a shell loop, --name and -p
    assert (action, "demo-docs-linux-64", "name", "this") in downloads
    assert (action, "demo-python313-linux-64-*-tests", "pattern", "this") in downloads
    # another run (a run id computed by a command) is kept apart
    assert (CI, "old-wheel", "name", "$PRIOR_RUN") in downloads
    assert data["unresolved"] == []


def test_flag_gated_job_follows_the_stage(sg: Sg, repo: Path) -> None:
    _code, before = findings(sg, repo, "--stage", "1")
    _code, after = findings(sg, repo, "--stage", "2")
    names = lambda data: {u["name"] for u in data["uploads"]}  # noqa: E731
    assert "demo-extra-docs" not in names(before)
    assert "demo-extra-docs" in names(after)


# --------------------------------------------------------------------------- findings


def test_undeclared_upload_names_both_sides(sg: Sg, repo: Path) -> None:
    edit(
        repo / BUILD,
        "      - name: Upload the docs\n",
        "      - uses: actions/upload-artifact@v4\n"
        "        with:\n"
        "          name: demo-sbom-${{ inputs.platform }}\n"
        "      - name: Upload the docs\n",
    )
    found = failing(sg, repo, "undeclared-upload")
    assert (found["file"], found["line"]) == (BUILD, line_of(repo / BUILD, "demo-sbom-"))
    assert found["other"]["file"] == "migration.yaml"  # type: ignore[index]
    assert "demo-sbom-linux-64" in found["message"]  # type: ignore[operator]
    assert "migration.yaml:" in found["message"]  # type: ignore[operator]


def test_missing_upload_names_both_sides(sg: Sg, repo: Path) -> None:
    edit(repo / BUILD, "          name: ${{ env.DOCS_NAME }}\n", "          name: docs-renamed\n")
    code, data = findings(sg, repo)
    assert code == 1
    found = only(data, "missing-upload")
    assert found["item"] == "docs"
    assert (found["file"], found["line"]) == (
        "migration.yaml",
        line_of(repo / "migration.yaml", '"demo-docs-{platform}"'),
    )
    assert found["other"] == {"file": BUILD, "line": line_of(repo / BUILD, "  wheels:", exact=True)}
    assert "demo-docs-linux-64" in found["message"]  # type: ignore[operator]
    undeclared = only(data, "undeclared-upload")
    assert "docs-renamed" in undeclared["message"]  # type: ignore[operator]


def test_flag_gated_step_off_at_the_stage_is_a_missing_upload(sg: Sg, repo: Path) -> None:
    edit(repo / "migration.yaml", "    when: new-layout\n", "    when: true\n")
    found = failing(sg, repo, "missing-upload", "--stage", "0")
    assert found["item"] == "new-layout"
    step = line_of(repo / BUILD, "name: demo-new-")
    assert found["other"] == {"file": BUILD, "line": step}
    assert "is false at stage 0" in found["message"]  # type: ignore[operator]
    assert sg("drift", "--stage", "1", cwd=repo).code == 0


def test_select_differs_names_the_rows(sg: Sg, repo: Path) -> None:
    edit(
        repo / "migration.yaml",
        '      - select: "demo-python{py}-linux-64-{sha}"\n',
        '      - select: "demo-python{py}-*-{sha}"\n',
    )
    found = failing(sg, repo, "select-differs")
    assert found["item"] == "test"
    assert found["file"] == "migration.yaml"
    assert found["other"]["file"] in (CI, ".github/actions/fetch/action.yml")  # type: ignore[index]
    message = str(found["message"])
    assert "the model also selects demo-python312-win-64-{sha} (wheels)" in message
    assert "linux-64-{sha} (" not in message.split("the model also selects")[1].split(";")[0]


def test_select_differs_for_a_glob_the_workflow_narrows(sg: Sg, repo: Path) -> None:
    """The release's real pattern selects the -tests row; a model that excludes it differs."""
    edit(
        repo / "migration.yaml",
        '    select: ["demo-python*-linux-64-*"]\n',
        '    select: ["demo-python*-linux-64-*"]\n    exclude: ["*-tests"]\n',
    )
    found = failing(sg, repo, "select-differs")
    assert "the workflows also select demo-python312-linux-64-{sha}-tests" in str(found["message"])
    assert found["other"] == {"file": ".github/workflows/release.yml", "line": 17}


def test_unknown_job_suggests_the_closest(sg: Sg, repo: Path) -> None:
    edit(
        repo / "migration.yaml",
        '[".github/workflows/ci.yml#extra-docs"]',
        '[".github/workflows/ci.yml#extra-doc"]',
    )
    code, data = findings(sg, repo, "--stage", "2")
    assert code == 1
    found = [f for f in data["findings"] if f["kind"] == "unknown-job"]  # type: ignore[union-attr,index]
    assert len(found) == 1
    assert found[0]["line"] == line_of(repo / "migration.yaml", "ci.yml#extra-doc")
    assert found[0]["other"] == {
        "file": CI,
        "line": line_of(repo / CI, "  extra-docs:", exact=True),
    }
    # stage 2 is ahead of the current one: the entry may name a job its flip adds
    assert "(or, if you meant '.github/workflows/ci.yml#extra-docs' (" in found[0]["message"]


def test_text_and_github_formats(
    sg: Sg, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit(repo / BUILD, "          name: ${{ env.DOCS_NAME }}\n", "          name: docs-renamed\n")
    text = sg("drift", cwd=repo)
    assert text.code == 1
    assert (
        f"migration.yaml:{line_of(repo / 'migration.yaml', 'demo-docs-{platform}')}: missing-upload"
        in text.out
    )
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    gh = sg("drift", "--format", "github", cwd=repo)
    assert gh.code == 1
    assert f"::error file={BUILD.replace(':', '%3A')},line=" in gh.out
    assert "stagegate drift" in summary.read_text()


def test_unresolved_fails_only_with_strict(sg: Sg, repo: Path) -> None:
    edit(repo / "migration.yaml", '    steps.meta.outputs.name: "demo-meta-{sha}"\n', "")
    edit(
        repo / "migration.yaml",
        '    artifacts: ["demo-meta-{sha}"]\n',
        '    artifacts: ["demo-meta-{sha}"]\n    when: false\n',
    )
    code, data = findings(sg, repo)
    assert code == 0
    assert data["unresolved"] == [
        {
            "file": BUILD,
            "line": line_of(repo / BUILD, "steps.meta.outputs.name"),
            "expression": "${{ steps.meta.outputs.name }}",
            "reason": "steps.meta.outputs.name: a step's output is not known from the YAML; bind it",
        }
    ]
    assert sg("drift", "--strict", cwd=repo).code == 1


def test_check_kind_workflows(sg: Sg, repo: Path) -> None:
    edit(
        repo / "migration.yaml",
        "  - check: inputs-satisfied\n",
        "  - check: inputs-satisfied\n  - check: workflows\n",
    )
    assert sg("check", "--all", cwd=repo).code == 0
    edit(repo / BUILD, "          name: ${{ env.DOCS_NAME }}\n", "          name: docs-renamed\n")
    result = sg("check", cwd=repo)
    assert result.code == 1
    assert "missing-upload" in result.out and "undeclared-upload" in result.out


# --------------------------------------------------------------------------- schema


@pytest.mark.parametrize(
    ("old", "new", "pattern"),
    [
        (
            '[".github/workflows/ci.yml#test"]',
            '["ci.yml"]',
            r"migration\.yaml:\d+:\d+: .*is not a job: write PATH#JOB",
        ),
        (
            '    steps.meta.outputs.name: "demo-meta-{sha}"\n',
            '    steps.meta.outputs.name: "demo-{nope}"\n',
            r"unknown axis \{nope\}",
        ),
        (
            '    steps.meta.outputs.name: "demo-meta-{sha}"\n',
            "    steps.meta.outputs.name: {when: nope}\n",
            r"unknown flag 'nope'",
        ),
        (
            '    steps.meta.outputs.name: "demo-meta-{sha}"\n',
            '    "not a path": x\n',
            r"is not an expression stagegate can bind",
        ),
        ("workflows:\n", "workflows:\n  paths: ['../x/*.yml']\n", r"leads outside the repository"),
        ("workflows:\n", "workflows:\n  unknown: 1\n", r"unknown key 'unknown'"),
    ],
)
def test_bad_settings_are_located_errors(
    sg: Sg, repo: Path, old: str, new: str, pattern: str
) -> None:
    import re

    edit(repo / "migration.yaml", old, new)
    result = sg("validate", cwd=repo)
    assert result.code == 2, result.output
    assert re.search(pattern, result.err), result.err


# --------------------------------------------------------------------------- init, new-stage


def _generated(root: Path) -> None:
    """The fixture with build.yml's matrix computed by a script in another job."""
    build = (root / BUILD).read_text()
    start, end = build.index("    strategy:\n"), build.index("    env:\n      NAME")
    build = (
        build[:start]
        + "    strategy:\n      matrix: ${{ fromJSON(inputs.matrix) }}\n"
        + build[end:]
    )
    build = build.replace(
        "      flags:\n        type: string",
        "      matrix:\n        type: string\n        required: true\n      flags:\n        type: string",
    )
    (root / BUILD).write_text(build)
    edit(
        root / CI,
        "  build:\n    needs: gate\n",
        "  plan:\n    runs-on: ubuntu-latest\n    outputs:\n      matrix: ${{ steps.m.outputs.matrix }}\n"
        '    steps:\n      - id: m\n        run: echo "matrix=$(yq -o json .build m.yml)" >> "$GITHUB_OUTPUT"\n\n'
        "  build:\n    needs: [gate, plan]\n",
    )
    edit(
        root / CI,
        "      flags: ${{ needs.gate.outputs.flags }}\n",
        "      flags: ${{ needs.gate.outputs.flags }}\n      matrix: ${{ needs.plan.outputs.matrix }}\n",
    )


@pytest.mark.parametrize("generated", [False, True])
def test_init_from_workflows_then_drift_passes(sg: Sg, repo: Path, generated: bool) -> None:
    (repo / "migration.yaml").unlink()
    shutil.rmtree(repo / "stages")
    if generated:
        _generated(repo)
        assert "unresolved ${{ matrix.py }}" not in sg("drift", cwd=repo).output  # no model yet
    result = sg("init", "--from-workflows", cwd=repo)
    assert result.code == 0, result.output
    assert (repo / "stages").is_dir()
    assert sg("validate", cwd=repo).code == 0
    drift = sg("drift", cwd=repo)
    assert drift.code == 0, drift.output + (repo / "migration.yaml").read_text()
    assert "no drift" in drift.out
    text = (repo / "migration.yaml").read_text()
    assert ".github/workflows/build.yml#wheels" in text
    assert '"demo-python{py}-{platform}-{sha}"' in text
    if generated:
        assert 'matrix.py: "{py}"' in text
        assert "py: {pattern:" in text
    else:
        assert 'py: ["312", "313"]' in text
        # the include's one row: its one value written in the name, not a one-value axis
        assert '"demo-python312-{platform}-{sha}-tests"' in text
        assert "py-2" not in text
    assert sg("check", cwd=repo).code == 0


def test_init_never_overwrites_without_force(sg: Sg, repo: Path) -> None:
    before = (repo / "migration.yaml").read_bytes()
    result = sg("init", cwd=repo)
    assert result.code == 2
    assert "migration.yaml exists" in result.err and "--force" in result.err
    assert (repo / "migration.yaml").read_bytes() == before
    result = sg("init", "--force", cwd=repo)
    assert result.code == 2 and "stage files" in result.err
    shutil.rmtree(repo / "stages")
    assert sg("init", "--force", "--from-workflows", cwd=repo).code == 0
    assert (repo / "migration.yaml").read_bytes() != before


def test_init_skeleton_and_new_stage(sg: Sg, tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    assert sg("init", cwd=root).code == 0
    assert sg("validate", cwd=root).code == 0
    text = (root / "migration.yaml").read_text()
    assert text.count("\n#") >= 10  # commented
    result = sg("new-stage", "Build the new wheels!", cwd=root)
    assert result.code == 0, result.output
    stage = root / "stages" / "01-build-the-new-wheels.yaml"
    assert stage.is_file()
    assert 'title: "Build the new wheels!"' in stage.read_text()
    assert sg("new-stage", "Second", cwd=root).code == 0
    assert (root / "stages" / "02-second.yaml").is_file()
    assert sg("validate", cwd=root).out.startswith("migration.yaml: valid: 2 stage files")
    assert sg("new-stage", "  ", cwd=root).code == 2
    assert sg("init", "--from-workflows", cwd=tmp_path).code == 2  # no workflows there


def test_new_stage_in_the_fixture_keeps_it_valid(sg: Sg, repo: Path) -> None:
    assert sg("new-stage", "Retire the old wheel", cwd=repo).code == 0
    assert (repo / "stages" / "03-retire-the-old-wheel.yaml").is_file()
    assert sg("validate", cwd=repo).code == 0


# --------------------------------------------------------------------------- real-world shapes

SHAPES = FIXTURES / "drift" / "shapes"


def test_real_world_shapes(sg: Sg, tmp_path: Path) -> None:
    """Folded if:, here-strings, pwsh, arrays, `while read` loops, `inputs.run-id || github.run_id`,
    typed inputs, `strategy.job-index`, generated matrices and a name from `$GITHUB_ENV`."""
    root = tmp_path / "shapes"
    shutil.copytree(SHAPES, root)
    code, data = findings(sg, root)
    assert code == 0, data
    assert {(d["select"], d["run"]) for d in data["downloads"]} == {  # type: ignore[union-attr]
        ("cuda-pathfinder-wheel", "this"),
        ("cuda-core-python{py}-linux-64-{sha}", "this"),
    }
    assert data["unresolved"] == []
    (root / "migration.yaml").unlink()
    shutil.rmtree(root / "stages", ignore_errors=True)
    assert sg("init", "--from-workflows", cwd=root).code == 0
    # the script's `tr -d '.'` is computed per row (3.10 unquoted is 3.1: "31"), so init
    # writes the name with an axis of its results and drift has nothing unresolved
    text = (root / "migration.yaml").read_text(encoding="utf-8")
    assert '  python-version-tr: ["312", "31"]\n' in text
    assert '"cuda-core-python{python-version-tr}-linux-64-{sha}"' in text  # one platform: inlined
    assert sg("drift", "--strict", cwd=root).code == 0


def test_env_values_are_text(sg: Sg, tmp_path: Path) -> None:
    """`X: ${{ a || b }}` yields true; in env it is the text 'true', as GitHub has it."""
    root = tmp_path / "shapes"
    shutil.copytree(SHAPES, root)
    edit(
        root / BUILD.replace("build.yml", "build-wheel.yml"),
        "          name: ${{ env.CORE_NAME }}\n",
        "          name: core-${{ env.BUILD_CORE }}\n",
    )
    code, data = findings(sg, root)
    assert "core-true" in {u["name"] for u in data["uploads"]}  # type: ignore[union-attr]
    assert code == 1


def test_verify_pr_refuses_an_undeclared_upload(sg: Sg, repo: Path) -> None:
    """The check kind in the gate: a pull request that adds an upload nobody declared fails,
    judged on the head's workflows."""
    from fuzzkit import git

    edit(
        repo / "migration.yaml",
        "  - check: inputs-satisfied\n",
        "  - check: inputs-satisfied\n  - check: workflows\n",
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "base")
    edit(
        repo / BUILD,
        "      - name: Upload the docs\n",
        "      - uses: actions/upload-artifact@v4\n        with:\n          name: demo-sbom\n"
        "      - name: Upload the docs\n",
    )
    git(repo, "commit", "-qam", "an upload nobody declared")
    result = sg("verify-pr", "--base", "base", cwd=repo)
    assert result.code == 1, result.output
    assert "undeclared-upload" in result.out and "demo-sbom" in result.out
    git(repo, "checkout", "-q", "base")
    assert sg("verify-pr", "--base", "base", "--head", "base", cwd=repo).code == 0


def test_a_download_glob_then_rm_of_what_it_should_not_keep(sg: Sg, repo: Path) -> None:
    """`gh run download -p GLOB -D dist` then `rm -rf dist/*-tests`: the effective selection
    is the glob minus what is removed, not the glob's text."""
    release = repo / ".github/workflows/release.yml"
    edit(release, "-D dist\n", "-D dist\n          rm -rf dist/*-tests\n")
    code, data = findings(sg, repo)
    assert code == 1
    found = only(data, "select-differs")
    assert "the model also selects demo-python312-linux-64-{sha}-tests (tests)" in str(
        found["message"]
    )
    assert [
        d["exclude"] for d in data["downloads"] if d["file"] == ".github/workflows/release.yml"
    ] == [["*-tests"]]  # type: ignore[union-attr,index]
    edit(
        repo / "migration.yaml",
        '    select: ["demo-python*-linux-64-*"]\n',
        '    select: ["demo-python*-linux-64-*"]\n    exclude: ["*-tests"]\n',
    )
    assert sg("drift", cwd=repo).code == 0
    # a removal elsewhere (another folder) keeps nothing out
    edit(release, "rm -rf dist/*-tests", "rm -rf build/*-tests")
    assert sg("drift", cwd=repo).code == 1
    # and init writes the rows it keeps, so that drift passes at once
    edit(release, "rm -rf build/*-tests", "rm -rf dist/*-tests")
    (repo / "migration.yaml").unlink()
    shutil.rmtree(repo / "stages")
    assert sg("init", "--from-workflows", cwd=repo).code == 0
    assert sg("drift", cwd=repo).code == 0


SBOM_UPLOAD = (  # one row of one platform: upload-artifact v4 refuses a second "demo-sbom"
    "      - if: matrix.py == '313' && inputs.platform == 'linux-64'\n"
    "        uses: actions/upload-artifact@v4\n        with:\n          name: demo-sbom\n"
    "      - name: Upload the docs\n"
)


SBOM_WORKFLOW = """\
name: SBOM
on: [push]
jobs:
  sbom:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: demo-sbom
"""


def _workflows_gated(repo: Path) -> None:
    """The fixture under git with check `workflows` as an invariant, tagged `base`."""
    from fuzzkit import git

    edit(
        repo / "migration.yaml",
        "  - check: inputs-satisfied\n",
        "  - check: inputs-satisfied\n  - check: workflows\n",
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "base")


WORKFLOW_SETTING_ATTACKS = {
    # the new workflow holding the upload is not read
    "workflows.paths narrowed": (
        "workflows:\n  bind:\n",
        "workflows:\n  paths:\n"
        + "".join(f"    - .github/workflows/{n}.yml\n" for n in ("build", "ci", "release"))
        + '    - ".github/actions/*/action.yml"\n  bind:\n',
    ),
    # the upload's name is bound to a declared one
    "workflows.bind": (
        "workflows:\n  bind:\n",
        'workflows:\n  bind:\n    ".github/workflows/build.yml#wheels env.SBOM": "demo-docs-{platform}"\n',
    ),
}


@pytest.mark.parametrize("attack", WORKFLOW_SETTING_ATTACKS)
def test_verify_pr_reads_the_workflow_settings_of_the_base(sg: Sg, repo: Path, attack: str) -> None:
    """Issue #24, item 4: the pull request that adds an upload cannot also narrow
    `workflows.paths` or bind the value away; the gate reads the base's settings."""
    from fuzzkit import git

    _workflows_gated(repo)
    upload = SBOM_UPLOAD
    if attack == "workflows.bind":
        upload = upload.replace("name: demo-sbom", "name: ${{ env.SBOM }}")
        edit(repo / BUILD, "      NAME: ", "      SBOM: demo-sbom\n      NAME: ")
    if attack == "workflows.paths narrowed":
        (repo / ".github/workflows/sbom.yml").write_text(SBOM_WORKFLOW)
    else:
        edit(repo / BUILD, "      - name: Upload the docs\n", upload)
    edit(repo / "migration.yaml", *WORKFLOW_SETTING_ATTACKS[attack])
    git(repo, "add", "-A")
    git(repo, "commit", "-qam", f"an upload nobody declared, and {attack}")
    assert sg("check", cwd=repo).code == 0, attack  # the head's own check is fooled
    result = sg("verify-pr", "--base", "base", cwd=repo)
    assert result.code == 1, result.output
    assert "FAIL  workflows: 1 problem" in result.out
    assert "undeclared-upload: " in result.out and "demo-sbom" in result.out


def test_verify_pr_with_the_base_workflow_settings_accepts_a_declared_upload(
    sg: Sg, repo: Path
) -> None:
    """The control: the same upload, declared, with the settings changed in the same pull
    request (they take effect once merged)."""
    from fuzzkit import git

    _workflows_gated(repo)
    edit(repo / BUILD, "      - name: Upload the docs\n", SBOM_UPLOAD)
    edit(
        repo / "migration.yaml",
        "  old-wheel:\n",
        '  sbom:\n    artifacts: [demo-sbom]\n    jobs: [".github/workflows/build.yml#wheels"]\n  old-wheel:\n',
    )
    edit(repo / "migration.yaml", *WORKFLOW_SETTING_ATTACKS["workflows.bind"])
    git(repo, "commit", "-qam", "a declared upload, and a bind not used yet")
    result = sg("verify-pr", "--base", "base", cwd=repo)
    assert result.code == 0, result.output
    assert "ok    workflows" in result.out


def test_a_base_bind_naming_a_flag_the_head_removed_is_left_out(sg: Sg, repo: Path) -> None:
    """The base's bind reads flag extra-docs, which the pull request removes: the gate
    refuses the removal, and the workflows check runs without that bind (no crash)."""
    from fuzzkit import git

    edit(
        repo / "migration.yaml",
        "workflows:\n  bind:\n",
        "workflows:\n  bind:\n    env.BASENAME: {when: extra-docs, then: demo, else: demo}\n",
    )
    _workflows_gated(repo)
    edit(
        repo / "migration.yaml",
        "  extra-docs:\n    summary: Build and upload the extra docs.\n",
        "",
    )
    edit(
        repo / "migration.yaml",
        "    env.BASENAME: {when: extra-docs, then: demo, else: demo}\n",
        "",
    )
    edit(repo / "migration.yaml", "    when: extra-docs\n", "    when: false\n")
    (repo / "stages/02-extra-docs.yaml").write_text("stage: 2\ntitle: Extra docs\n")
    git(repo, "commit", "-qam", "no extra-docs flag")
    result = sg("verify-pr", "--base", "base", cwd=repo)
    assert result.code == 1, result.output
    assert "FAIL  flag-values-unchanged" in result.out
    assert "flag extra-docs is removed at the head" in result.out
    assert "FAIL  workflows: 1 problem" in result.out  # it ran: the extra docs' upload
    assert "names demo-extra-docs; no active producer" in result.out
