"""A migration's whole life, green on main at every commit (issue 25).

A small project of its own (tests/cases/lifecycle/python-versions) adds Python 3.14
(stage 1), releases it (stage 2) and drops Python 3.10 (stage 3), each flip made by
`advance` and accepted by `verify-pr`, then removes the conditionals its flags made
stale. Its invariants include `workflows` and its stages `flags-wired` and `retired`:
the checks that read the repository as it is today. `check --all` on main must pass
after every commit (SPEC "Checking main"), and still say what is left to do before a
flip (readiness), and what it does not run (past stages).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import CASES, Result
from scratch import Repo, init, pin_git

Sg = Callable[..., Result]
CI = ".github/workflows/ci.yml"


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _project(root: Path) -> Repo:
    repo = init(root)
    shutil.copytree(CASES / "lifecycle" / "python-versions", root, dirs_exist_ok=True)
    repo.commit("Plan the Python versions migration")
    return repo


def _date(line: str) -> str:
    """The committer date of a ``%H %cI`` line."""
    return line.split()[1]


def _green(sg: Sg, repo: Repo) -> list[str]:
    """``check --all`` passes; its lines."""
    result = sg("check", "--all", cwd=repo.root)
    assert result.code == 0, result.output
    return result.out.splitlines()


def _flip(sg: Sg, repo: Repo, to: int, message: str) -> None:
    """Advance (the stage's checks pass on the work tree), commit, and verify-pr the
    commit against the one before, as the pull request's gate does."""
    base = repo.git("rev-parse", "HEAD").strip()
    advanced = sg("advance", cwd=repo.root)
    assert advanced.code == 0, advanced.output
    assert f"\nstage: {to}\n" in repo.read("migration.yaml")
    repo.commit(message)
    verified = sg("verify-pr", "--base", base, cwd=repo.root)
    assert verified.code == 0, verified.output


def test_every_commit_of_the_migration_is_green_on_main(tmp_path: Path, sg: Sg) -> None:
    repo = _project(tmp_path / "project")

    # stage 0: the Python 3.10 job must stay until stage 3; check --all says so, and passes
    lines = _green(sg, repo)
    assert lines[-1] == (
        "15 checks at 4 stages: all passed; 1 readiness check not met yet at stage 3 "
        "(to do before that flip; --ahead=fail fails on them)"
    )
    stage3 = lines.index("stage 3: Drop Python 3.10")
    todo = stage3 + 4
    assert lines[todo].startswith(
        "  todo  retired: 3 leftovers of retired items; remove them, or list files that "
        "mention them on purpose in audit.ignore; to do before the flip to stage 3 ("
    )
    assert lines[todo + 1] == (
        "        - producer wheel-py310 (retired at stage 3): 'build-py310' is still in "
        f"{CI}:31: build-py310:"
    )
    # the same repository with the stages ahead held to today's files fails
    strict = sg("check", "--all", "--ahead=fail", cwd=repo.root)
    assert strict.code == 1
    assert strict.out.splitlines()[-1] == "15 checks at 4 stages: 1 failed"
    assert "  FAIL  retired: 3 leftovers of retired items" in strict.out

    _flip(sg, repo, 1, "Build Python 3.14")
    _green(sg, repo)
    _flip(sg, repo, 2, "Release Python 3.14")
    _green(sg, repo)

    # history: every stage, how it was reached, what blocks the one ahead
    start, one, two = repo.git("log", "--reverse", "--format=%H %cI").splitlines()
    assert sg("history", cwd=repo.root).out.splitlines() == [
        "python-versions: stage 2 of 3",
        f"  done      0  before the migration  since {start[:12]} ({_date(start)})",
        f"  done      1  Build Python 3.14     flipped in {one[:12]} ({_date(one)})",
        f"> current   2  Release Python 3.14   flipped in {two[:12]} ({_date(two)})",
        "  ahead     3  Drop Python 3.10      not ready: retired: 3 leftovers of retired "
        "items (stagegate check --stage 3 lists them)",
    ]
    stages = json.loads(sg("history", "--format", "json", cwd=repo.root).out)["stages"]
    assert [(s["stage"], s["state"]) for s in stages] == [
        (0, "done"),
        (1, "done"),
        (2, "current"),
        (3, "ahead"),
    ]
    assert stages[1]["flip"] == {
        "commit": one.split()[0],
        "date": _date(one),
        "author": "Ada Flipper",
        "subject": "Build Python 3.14",
        "from": 0,
    }
    assert stages[3]["readiness"]["ready"] is False
    assert [c["check"] for c in stages[3]["readiness"]["checks"]] == ["workflows", "retired"]

    # stage 2: status shows what still blocks the flip to stage 3
    status = sg("status", cwd=repo.root).out.splitlines()
    start = status.index("  readiness: not ready (2 repository checks, 1 not met)")
    assert status[start + 1 : start + 4] == [
        "    ok    workflows: 1 workflow file, 4 uploads and 1 download agree with the model",
        "    todo  retired: 3 leftovers of retired items; remove them, or list files that "
        "mention them on purpose in audit.ignore; to do before the flip to stage 3",
        "          - producer wheel-py310 (retired at stage 3): 'build-py310' is still in "
        f"{CI}:31: build-py310:",
    ]

    # the flip to stage 3 removes the 3.10 job in the same pull request
    text = repo.read(CI)
    job = text[text.index("  build-py310:\n") : text.index("  build-py314:\n")]
    repo.write(
        CI, text.replace(job, "").replace("build, build-py310, build-py314", "build, build-py314")
    )
    _flip(sg, repo, 3, "Drop Python 3.10")
    assert _green(sg, repo)[-1] == "10 checks at 4 stages: all passed"
    status = sg("status", cwd=repo.root).out
    assert "this is the last stage" in status

    # after the migration: the conditionals of the flags that no longer change can go
    text = repo.read(CI)
    text = text.replace("    if: fromJSON(needs.gate.outputs.flags)['py314']\n", "")
    old_download = text[
        text.index("      - uses: actions/download-artifact@v4\n") : text.index(
            "      - uses: actions/download-artifact@v4\n        if: fromJSON"
        )
    ]
    text = text.replace(old_download, "").replace(
        "        if: fromJSON(needs.gate.outputs.flags)['py314-release']\n", ""
    )
    repo.write(CI, text)
    base = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Remove the conditionals of settled flags")
    assert sg("verify-pr", "--base", base, cwd=repo.root).code == 0

    lines = _green(sg, repo)
    assert lines[-1] == "10 checks at 4 stages: all passed"
    reason = (
        "not run at a past stage: it reads today's files, and the stage was checked "
        "against those of its time when verify-pr let it in"
    )
    assert lines[:4] == [
        "stage 0: before the migration",
        lines[1],  # release-continuity: ok
        lines[2],  # unique-artifacts: ok
        f"  --    workflows: {reason}",
    ]
    assert lines[1].startswith("  ok    release-continuity") and lines[2].startswith(
        "  ok    unique-artifacts"
    )
    assert lines.count(f"  --    workflows: {reason}") == 3
    assert lines.count(f"  --    flags-wired: {reason}") == 2
    report = json.loads(sg("check", "--all", "--format", "json", cwd=repo.root).out)
    assert report["ok"] is True
    assert [(s["stage"], s["label"]) for s in report["skipped"]] == [
        (0, "workflows"),
        (1, "workflows"),
        (1, "flags-wired"),
        (2, "workflows"),
        (2, "flags-wired"),
    ]
    # the control: those stages compared with today's workflows do fail, which is why
    # check --all leaves them out (and check --stage N, asked for one, still runs them)
    past = sg("check", "--stage", "0", cwd=repo.root)
    assert past.code == 1
    assert "  FAIL  workflows: " in past.out
    assert "undeclared-upload" in past.out


def test_readiness_in_a_ci_log_is_a_warning(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On GitHub, a stage ahead that is not ready is a warning on the line to remove, and
    the step summary lists it apart from the failures; the run passes."""
    repo = _project(tmp_path / "project")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = sg("check", "--all", "--format", "github", cwd=repo.root)
    assert result.code == 0, result.output
    commands = [line for line in result.out.splitlines() if line.startswith("::")]
    assert commands[0] == (
        f"::warning file={CI},line=31,col=3,title=stagegate retired (stage 3%2C readiness)::"
        f"producer wheel-py310 (retired at stage 3): 'build-py310' is still in {CI}:31: "
        "build-py310:"
    )
    assert len(commands) == 3 and all(c.startswith("::warning ") for c in commands)
    text = summary.read_text()
    assert "python-versions: 15 checks, all passed, 1 not ready yet at a stage ahead." in text
    assert "Stages ahead, not ready yet (1 readiness check; to do before their flips):" in text
    assert "| 3 | retired | not ready | producer wheel-py310" in text


def test_one_matrix_for_several_producers(tmp_path: Path, sg: Sg) -> None:
    """A job that builds every wheel takes the union of the producers' rows, each naming
    its producer; an inactive producer adds none; one producer's rows are as before."""
    repo = _project(tmp_path / "project")
    both = sg("matrix", "wheels", "wheel-py314", "--stage", "1", cwd=repo.root)
    assert both.code == 0, both.output
    assert json.loads(both.out) == {
        "include": [
            {"producer": "wheels", "py": "311"},
            {"producer": "wheels", "py": "312"},
            {"producer": "wheels", "py": "313"},
            {"producer": "wheel-py314"},
        ]
    }
    before = sg("matrix", "wheels", "wheel-py314", cwd=repo.root)
    assert [r["producer"] for r in json.loads(before.out)["include"]] == ["wheels"] * 3
    assert sg("matrix", "wheels", cwd=repo.root).out == (
        '{"include":[{"py":"311"},{"py":"312"},{"py":"313"}]}\n'
    )
    unknown = sg("matrix", "wheels", "wheel-py31", cwd=repo.root)
    assert unknown.code == 2
    assert "no producer 'wheel-py31' is declared; did you mean 'wheel-py314'" in unknown.err
