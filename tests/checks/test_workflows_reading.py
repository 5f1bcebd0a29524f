"""The check `workflows` in `check --all` reads the workflows once for the stages where
nothing it takes from the stage differs (issue 23): a reading made at one stage is
reused at another only when every bind `when` and `stagegate flags`/`matrix` output it
used has the same value there, and the stage it names is the one checked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import dedent, init, pin_git

Sg = Callable[..., Result]

WORKFLOW = dedent(
    """
    name: build
    on: push
    jobs:
      build:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/upload-artifact@v4
            with:
              name: wheel-${{ env.KIND }}
              path: dist
          - uses: actions/upload-artifact@v4
            if: ${{ 'on' == 'off' }}
            with:
              name: docs
              path: docs
    """
)

MIGRATION = dedent(
    """
    version: 1
    migration: reading-once
    stage: 0
    flags:
      new-kind:
        summary: Upload the new kind of wheel.
      other:
        summary: Nothing the workflows read.
    workflows:
      bind:
        env.KIND: {when: new-kind, then: new, else: old}
    producers:
      old:
        when: not new-kind
        artifacts: [wheel-old]
        jobs: [".github/workflows/build.yml#build"]
      new:
        when: new-kind
        artifacts: [wheel-new]
        jobs: [".github/workflows/build.yml#build"]
      docs:
        artifacts: [docs]
        jobs: [".github/workflows/build.yml#build"]
    invariants:
      - check: workflows
    """
)


def _missing(stage: int) -> str:
    return (
        f"        - missing-upload: producer docs: template 'docs' (migration.yaml:22) is "
        f"active at stage {stage}, but the upload that would make it "
        f"(.github/workflows/build.yml:14) does not run: its if: \"${{{{ 'on' == 'off' }}}}\" "
        f"(.github/workflows/build.yml:12) is false at stage {stage}: rows docs. Upload it, "
        "or turn the producer off at this stage. (workflow side: .github/workflows/build.yml:14)"
    )


def test_check_all_reads_the_workflows_again_only_where_the_stage_changes_the_reading(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stagegate.ci import ships

    pin_git(monkeypatch)
    repo = init(tmp_path / "r")
    repo.write(".github/workflows/build.yml", WORKFLOW)
    repo.write("migration.yaml", MIGRATION)
    repo.write("stages/01-new-kind.yaml", "stage: 1\ntitle: New kind\nset:\n  new-kind: true\n")
    repo.write("stages/02-other.yaml", "stage: 2\ntitle: Other\nset:\n  other: true\n")
    repo.commit("start")
    read = ships.read_model
    stages: list[int] = []

    def counted(migration: Any, stage: int, *args: Any, **kwargs: Any) -> Any:
        stages.append(stage)
        return read(migration, stage, *args, **kwargs)

    monkeypatch.setattr(ships, "read_model", counted)
    result = sg("check", "--all", cwd=repo.root)
    assert result.code == 1, result.output
    # Stage 1 turns the bind's flag on: read again (wheel-new is then what it uploads,
    # which the active producer `new` declares: no undeclared upload at stage 1 or 2).
    # Stage 2 sets a flag the workflows never read: the reading of stage 1 stands.
    assert stages == [0, 1]
    assert result.out == "\n".join(
        [
            "stage 0: before the migration",
            result.out.splitlines()[1],  # FAIL workflows: 1 problem (its time)
            _missing(0),
            "        (check declared at migration.yaml:25)",
            "stage 1: New kind",
            result.out.splitlines()[5],
            _missing(1),
            "stage 2: Other",
            result.out.splitlines()[8],
            _missing(2),
            "3 checks at 3 stages: 1 failed; 2 readiness checks not met yet at stages 1, 2 (to "
            "do before those flips; --ahead=fail fails on them)",
            "",
        ]
    )
    assert result.out.splitlines()[1].startswith("  FAIL  workflows: 1 problem (")
    assert result.out.splitlines()[5].startswith("  todo  workflows: 1 problem; to do before")
    assert result.out.splitlines()[8].startswith("  todo  workflows: 1 problem; to do before")
    # The control: each stage read on its own says the same.
    for stage in (1, 2):
        alone = sg("drift", "--stage", str(stage), cwd=repo.root)
        assert f"is false at stage {stage}: rows docs" in alone.out
        assert "undeclared" not in alone.out
