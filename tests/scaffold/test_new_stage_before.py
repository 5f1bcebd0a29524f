"""`new-stage TITLE --before N` (issue 25): the later stage files, their `stage:` lines,
the `since:` that name them and their pytest folders move one up, all or nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import Result

Sg = Callable[..., Result]


def _three(sg: Sg, root: Path) -> None:
    root.mkdir()
    assert sg("init", cwd=root).code == 0
    for title in ("Alpha", "Beta", "Gamma"):
        assert sg("new-stage", title, cwd=root).code == 0
    gamma = root / "stages" / "03-gamma.yaml"
    gamma.write_text(
        gamma.read_text().replace(
            "acceptance: []\n",
            "acceptance:\n  - check: release-continuity\n    tag: v1\n    since: 2\n"
            "  - {check: inputs-satisfied}\n",
        )
    )
    (root / "stages" / "02-beta").mkdir()
    (root / "stages" / "02-beta" / "test_beta.py").write_text("def test_x():\n    pass\n")


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text() if p.is_file() else "/"
        for p in sorted(root.rglob("*"))
    }


def test_insert_before_renumbers_files_stage_lines_since_and_folders(
    sg: Sg, tmp_path: Path
) -> None:
    root = tmp_path / "m"
    _three(sg, root)
    result = sg("new-stage", "Inserted", "--before", "2", cwd=root)
    assert result.code == 0, result.output
    assert result.out == (
        "wrote stages/02-inserted.yaml; set its flags, then: stagegate check --stage 2\n"
    )
    stages = root / "stages"
    assert sorted(p.name for p in stages.iterdir()) == [
        "01-alpha.yaml",
        "02-inserted.yaml",
        "03-beta",
        "03-beta.yaml",
        "04-gamma.yaml",
    ]
    assert "\nstage: 3\n" in (stages / "03-beta.yaml").read_text()
    gamma = (stages / "04-gamma.yaml").read_text()
    assert "\nstage: 4\n" in gamma and "    since: 3\n" in gamma
    assert "# Stage 3: Gamma" in gamma  # comments are left as they were
    assert (stages / "03-beta" / "test_beta.py").is_file()
    assert sg("validate", cwd=root).out.startswith("migration.yaml: valid: 4 stage files")


def test_insert_refused_at_or_below_the_current_stage_and_beyond_the_last(
    sg: Sg, tmp_path: Path
) -> None:
    root = tmp_path / "m"
    _three(sg, root)
    (root / "migration.yaml").write_text(
        (root / "migration.yaml").read_text().replace("stage: 0 ", "stage: 1 ")
    )
    before = _tree(root)
    result = sg("new-stage", "Late", "--before", "1", cwd=root)
    assert result.code == 1
    assert result.err.startswith(
        "--before 1: stage 1 is current, and stages up to it have been flipped through; a "
        "stage can only be inserted ahead of the current one (--before 2 or later)."
    )
    result = sg("new-stage", "Late", "--before", "4", cwd=root)
    assert result.code == 2
    assert "the last stage is 3; to add a stage after it, run new-stage without --before" in (
        result.err
    )
    assert _tree(root) == before
    # control: ahead of the current stage it goes in
    assert sg("new-stage", "Fine", "--before", "2", cwd=root).code == 0


def test_a_taken_target_leaves_the_tree_untouched(sg: Sg, tmp_path: Path) -> None:
    """Attack: a file where a renumbered folder must go (another process's, or a stray
    one) is found before anything is written; nothing moves."""
    root = tmp_path / "m"
    _three(sg, root)
    (root / "stages" / "03-beta").write_text("not a folder\n")
    before = _tree(root)
    result = sg("new-stage", "Inserted", "--before", "2", cwd=root)
    assert result.code == 2
    assert "03-beta exists and is not a stage being renumbered; move it away first." in result.err
    assert _tree(root) == before


def test_a_failure_midway_undoes_every_step(sg: Sg, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Attack: the folder rename fails after the files moved (a concurrent process, a
    full disk): every file is back as it was."""
    import os

    root = tmp_path / "m"
    _three(sg, root)
    before = _tree(root)

    def broken(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "rename", broken)
    result = sg("new-stage", "Inserted", "--before", "2", cwd=root)
    monkeypatch.undo()
    assert result.code == 2
    assert "cannot renumber the stages" in result.err and "nothing was changed" in result.err
    assert _tree(root) == before


def test_pytest_paths_and_invariant_since_follow_the_stages(sg: Sg, tmp_path: Path) -> None:
    """A pytest check naming a moved folder, and an invariant's `since:`, are moved too;
    a `since:` below N and a path elsewhere are left alone (control)."""
    root = tmp_path / "m"
    _three(sg, root)
    alpha = root / "stages" / "01-alpha.yaml"
    alpha.write_text(
        alpha.read_text().replace(
            "acceptance: []\n",
            "acceptance:\n  - check: pytest\n    path: stages/02-beta/test_beta.py\n"
            "  - check: pytest\n    path: tests/other\n",
        )
    )
    (root / "tests" / "other").mkdir(parents=True)
    main = root / "migration.yaml"
    main.write_text(
        main.read_text().replace(
            "invariants: []",
            "invariants:\n  - {check: release-continuity, tag: v1, since: 1}\n"
            "  - check: release-continuity\n    tag: v2\n    since: 3\n",
        )
    )
    assert sg("validate", cwd=root).code == 0
    assert sg("new-stage", "Inserted", "--before", "2", cwd=root).code == 0
    assert "    path: stages/03-beta/test_beta.py\n    path: tests/other\n" in (
        alpha.read_text().replace("  - check: pytest\n", "")
    )
    text = main.read_text()
    assert "tag: v1, since: 1}" in text and "    since: 4\n" in text
    assert sg("validate", cwd=root).code == 0
