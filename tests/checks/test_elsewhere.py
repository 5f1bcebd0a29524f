"""`requires` on the checks that read the workflows (`workflows`, `flags-wired`): a model
read in another repository than the one it describes is said so, not compared; and the
tags the checks name hold no space (a git tag holds none).

The worked example at the top of stagegate's own repository is the case: stagegate's
workflows are not cuda-python's. Each test writes a small repository: a model whose
producer stands for `build.yml#build`, and a `ci.yml` of another project.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result

Sg = Callable[..., Result]

MODEL = """\
version: 1
migration: elsewhere
summary: A model of a project whose CI uploads one wheel.
stage: 0
flags:
  next:
    summary: The next step.
    env: NEXT_STEP
producers:
  wheel:
    summary: The wheel.
    jobs: [".github/workflows/build.yml#build"]
    artifacts: [wheel]
invariants:
  - check: workflows
    strict: true
    requires: [pkg/pyproject.toml]
"""

STAGE = """\
stage: 1
title: Next
set:
  next: true
acceptance:
  - check: flags-wired
    requires: [pkg/pyproject.toml]
"""

BUILD = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo "$NEXT_STEP"
      - uses: actions/upload-artifact@v4
        with:
          name: wheel
          path: dist/*.whl
"""

OTHER = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: make test
"""


def repository(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for rel, text in {"migration.yaml": MODEL, "stages/01-next.yaml": STAGE, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def results(sg: Sg, root: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = sg("check", *args, "--format", "json", cwd=root)
    assert result.code in (0, 1), result.output
    return result.code, json.loads(result.out)["results"]


NOT_RUN = (
    "not run: this repository has no pkg/pyproject.toml (the check's requires, "
    "{file}) and none of the 1 jobs the model's `jobs` entries name: it is not the "
    "repository the model describes"
)


@pytest.mark.parametrize(
    "files",
    [{".github/workflows/ci.yml": OTHER}, {}],
    ids=["another project's workflows", "no workflow at all"],
)
def test_in_another_repository_the_checks_say_they_did_not_run(
    tmp_path: Path, sg: Sg, files: dict[str, str]
) -> None:
    root = repository(tmp_path, files)
    code, found = results(sg, root, "--all")
    assert code == 0, found
    shown = {(r["check"], r["stage"]): r["message"] for r in found}
    assert shown["workflows", 0] == "workflows strict=True at stage 0: " + NOT_RUN.format(
        file="migration.yaml:15"
    )
    assert shown["flags-wired", 1] == "flags-wired at stage 1: " + NOT_RUN.format(
        file="stages/01-next.yaml:6"
    )
    # drift itself is not told: there, the model's job is unknown (or nothing is found)
    assert sg("drift", cwd=root).code in (1, 2)


def test_a_missing_marker_does_not_turn_the_check_off_where_the_jobs_are(
    tmp_path: Path, sg: Sg
) -> None:
    """In the described repository, deleting the listed file hides nothing: its jobs are
    there, so the checks run and compare (here the upload was renamed)."""
    renamed = BUILD.replace("name: wheel", "name: wheels")
    root = repository(tmp_path, {".github/workflows/build.yml": renamed})
    code, found = results(sg, root, "--stage", "0")
    assert code == 1
    (now,) = [r for r in found if r["check"] == "workflows"]
    assert "undeclared-upload" in now["findings"][0]["message"]


def test_with_the_marker_the_checks_run(tmp_path: Path, sg: Sg) -> None:
    root = repository(
        tmp_path, {".github/workflows/build.yml": BUILD, "pkg/pyproject.toml": "[project]\n"}
    )
    code, found = results(sg, root, "--all")
    assert code == 0, found
    shown = {(r["check"], r["stage"]): r["message"] for r in found}
    assert shown["workflows", 0].startswith("workflows strict=True at stage 0: 1 workflow file, ")
    assert "not run" not in shown["flags-wired", 1]


@pytest.mark.parametrize("path", ["../outside", "/etc/passwd", "pkg/"])
def test_requires_names_a_file_inside_the_repository(tmp_path: Path, sg: Sg, path: str) -> None:
    root = repository(tmp_path, {})
    (root / "migration.yaml").write_text(
        MODEL.replace("requires: [pkg/pyproject.toml]", f"requires: [{path!r}]")
    )
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert result.err.startswith(
        f"migration.yaml:15:5: workflows requires: {path!r} is not a file inside the "
        "repository; name one from its top, such as cuda_python/pyproject.toml."
    )


TAGGED = """\
version: 1
migration: tags
summary: One release.
stage: 0
producers:
  wheel:
    summary: The wheel.
    artifacts: [wheel]
releases:
  pypi:
    summary: Publishes the wheel.
    tags: ["v*"]
    select: [wheel]
invariants:
  - check: release-continuity
    tag: v1.0
"""


@pytest.mark.parametrize(
    ("where", "old", "new", "message"),
    [
        (
            "migration.yaml:15:5",
            "    tag: v1.0\n",
            "    tag: the releases select the same\n",
            "release-continuity tag: 'the releases select the same' holds a space, which no "
            "git tag does; name a concrete tag, such as v13.4.2.",
        ),
        (
            "migration.yaml:15:5",
            "  - check: release-continuity\n    tag: v1.0\n",
            "  - check: tags-routed\n    tags: [v1.0, 'v1 .1']\n",
            "tags-routed tags: 'v1 .1' holds a space, which no git tag does; name concrete "
            "tags, such as v13.4.2.",
        ),
    ],
)
def test_a_tag_holding_a_space_is_invalid(
    tmp_path: Path, sg: Sg, where: str, old: str, new: str, message: str
) -> None:
    """A tag with a space was read as a tag and dispatch values (exit 70: issue 36's fuzz)."""
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(TAGGED.replace(old, new))
    result = sg("check", "--all", cwd=root)
    assert result.code == 2
    assert result.err.startswith(f"{where}: {message}")


def test_a_release_change_tag_holding_a_space_is_invalid(tmp_path: Path, sg: Sg) -> None:
    root = tmp_path / "repo"
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(TAGGED)
    (root / "stages" / "01-step.yaml").write_text(
        "stage: 1\ntitle: Step\nrelease_changes:\n  - tag: v1 .1\n    add: ['x*']\n"
    )
    result = sg("validate", cwd=root)
    assert result.code == 2
    assert (
        "stages/01-step.yaml:4:10: $.release_changes[0].tag: release_changes tag 'v1 .1' holds a space, which no git tag "
        "does; name a concrete tag, such as v13.4.2." in result.err
    )
