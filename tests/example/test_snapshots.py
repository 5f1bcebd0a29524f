"""What every command prints, in every format, pinned as snapshots (tests/snapshots/commands/).

The read-only commands run on the worked example placed on the fixture tree (cuda-python's
CI at main cb56ab9f, as tests/example/test_example.py places it), at the example's stage;
the commands that read git history or write files run on the small migration of
tests/scratch.py, whose commits have a pinned author and clock. Each snapshot holds the
exit code, standard output and error, and what a ``github`` format appended to the files
the runner names; the path of the throwaway repository is written ``<root>`` and timings
``N.NN``. The plans of every stage are pinned by test_example.py (snapshots/plan/).

A deliberate change of output: record it with ``pytest --snapshot-update`` and review the
diff of tests/snapshots/commands/ like code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
from pytest_snapshot.plugin import Snapshot

from conftest import FIXTURES, REPO, TESTS, Result
from scratch import git_env, pin_git, small_repo

if TYPE_CHECKING:  # imported when a drift test runs, not when the module is collected
    from stagegate.model import Migration

SNAPSHOTS = TESTS / "snapshots" / "commands"
RUNNER_FILES = ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY")

Sg = Callable[..., Result]

FORMATS3 = ("text", "json", "github")

# (name, arguments, formats); None: the command has no --format
ON_THE_EXAMPLE: list[tuple[str, tuple[str, ...], tuple[str, ...] | None]] = [
    ("validate", ("validate",), FORMATS3),
    ("status", ("status",), FORMATS3),
    ("plan", ("plan",), ("github",)),
    ("diff", ("diff", "3"), FORMATS3),
    ("diff-back", ("diff", "5", "2"), ("text",)),
    ("flags", ("flags",), (*FORMATS3, "env")),
    ("flags-stage", ("flags", "--stage", "7"), ("text",)),
    ("flag", ("flag", "legacy-branch-source"), None),
    ("flag-off", ("flag", "same-run-cu12"), None),
    ("matrix", ("matrix", "bindings-cu13"), ("json", "github")),
    ("graph", ("graph",), ("mermaid", "dot")),
    ("graph-producer", ("graph", "--producer", "bindings-cu12", "--stage", "3"), ("mermaid",)),
    ("check", ("check",), FORMATS3),
    ("audit", ("audit",), (*FORMATS3, "markdown")),
    ("drift", ("drift",), FORMATS3),
    ("schema", ("schema",), None),
    ("schema-stage-file", ("schema", "--stage-file"), None),
    ("history", ("history",), FORMATS3),
    ("affected", ("affected", "--base", "main", "--stage", "6"), FORMATS3),
    ("continuity", ("continuity", "--base", "main"), FORMATS3),
]


def cases(table: list[tuple[str, tuple[str, ...], tuple[str, ...] | None]]) -> list[object]:
    out: list[object] = []
    for name, args, formats in table:
        for fmt in formats or (None,):
            argv = args if fmt is None else (*args, "--format", fmt)
            out.append(pytest.param(argv, f"{name}.{fmt or 'out'}", id=f"{name}-{fmt or 'out'}"))
    return out


@pytest.fixture(scope="module")
def example_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example (migration.yaml, stages/) on the fixture tree, one commit; read only."""
    root = tmp_path_factory.mktemp("snapshots") / "cuda-python"
    tree = FIXTURES / "cuda-python-tree"
    shutil.copytree(tree, root, ignore=shutil.ignore_patterns("migration.yaml", "stages"))
    shutil.copy2(REPO / "migration.yaml", root / "migration.yaml")
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**git_env(), "GIT_AUTHOR_DATE": "@1700000000 +0000"}
    env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"]
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "tree"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)
    return root


@pytest.fixture
def runner_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """The files a GitHub runner names, empty, in ``tmp_path``."""
    files = {}
    for name in RUNNER_FILES:
        files[name] = tmp_path / name.lower()
        files[name].write_text("", encoding="utf-8")
        monkeypatch.setenv(name, str(files[name]))
    yield files


def rendered(result: Result, files: dict[str, Path], root: Path) -> str:
    """One text for the snapshot: exit code, stdout, stderr, and the runner files written."""
    parts = [f"exit {result.code}\n", "--- stdout\n", result.out]
    if result.err:
        parts += ["--- stderr\n", result.err]
    for name, path in files.items():
        written = path.read_text(encoding="utf-8")
        if written:
            parts += [f"--- ${name}\n", written]
    text = "".join(parts)
    text = text.replace(str(root.resolve()), "<root>").replace(str(root), "<root>")
    text = re.sub(r"\b[0-9]+\.[0-9]+ ?s\b", "N.NN s", text)
    return text


_MADE: dict[tuple[object, ...], Any] = {}
"""A command core's result on the example tree (read only), by its arguments: made once."""


def core_once(
    monkeypatch: pytest.MonkeyPatch,
    module: ModuleType,
    name: str,
    key: Callable[..., tuple[object, ...]],
) -> None:
    """``module.name`` (a command's core, which the command imports when it runs) made once
    per ``key`` of its arguments: ``drift`` and ``continuity`` compare the same commits and
    models, and ``history`` reads the same log and readiness, in each format (each run still
    parses its options, loads the migration and prints through the command)."""
    real = getattr(module, name)

    def once(*args: Any, **kwargs: Any) -> Any:
        made = (module.__name__, name, *key(*args, **kwargs))
        if made not in _MADE:
            _MADE[made] = real(*args, **kwargs)
        return _MADE[made]

    monkeypatch.setattr(module, name, once)


def drift_key(migration: Migration, stage: int, *args: Any, **kwargs: Any) -> tuple[object, ...]:
    return (migration.file, stage, args, tuple(sorted(kwargs.items())))


def continuity_key(file: str, *args: Any, **kwargs: Any) -> tuple[object, ...]:
    """Its arguments, and the event it reads a pull request's description from."""
    event = kwargs.get("environ", os.environ)
    pull_request = (event.get("GITHUB_EVENT_NAME"), event.get("GITHUB_EVENT_PATH"))
    rest = sorted((k, v) for k, v in kwargs.items() if k != "environ")
    return (file, args, tuple(rest), pull_request)


def compare_once(monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    from stagegate.ci import drift
    from stagegate.commands import continuity, history

    if command == "drift":
        core_once(monkeypatch, drift, "drift", drift_key)
    elif command == "continuity":
        core_once(monkeypatch, continuity, "continuity", continuity_key)
    elif command == "history":
        core_once(monkeypatch, history, "history", lambda migration: (migration.file,))


_READ: dict[tuple[object, ...], tuple[Any, Any, dict[Any, Any]]] = {}
"""The check `workflows`' reading of the example tree (read only) at a stage: made once."""


def read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``status``, ``history`` and ``check`` run the check `workflows` (the example's
    invariant) on the same tree and model at the same stages: each stage's reading of the
    workflows is made once for the module (with what it took from its stage)."""
    from stagegate.ci import ships

    real = ships.read_model

    def once(migration: Migration, stage: int, files: Any, **kwargs: Any) -> Any:
        key = (migration.file, str(migration.root), stage, str(files.root))
        if key not in _READ:
            took: dict[Any, Any] = {}
            reading, side = real(migration, stage, files, stage_reads=took)
            _READ[key] = (reading, side, took)
        reading, side, took = _READ[key]
        if kwargs.get("stage_reads") is not None:
            kwargs["stage_reads"].update(took)
        return reading, side

    monkeypatch.setattr(ships, "read_model", once)


@pytest.mark.parametrize(("argv", "name"), cases(ON_THE_EXAMPLE))
def test_output_on_the_example(
    example_tree: Path,
    runner_files: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    sg: Sg,
    snapshot: Snapshot,
    argv: tuple[str, ...],
    name: str,
) -> None:
    compare_once(monkeypatch, argv[0])
    read_once(monkeypatch)
    result = sg(*argv, cwd=example_tree)
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(rendered(result, runner_files, example_tree), f"{name}.txt")


# --------------------------------------------------------------------------- history and writes


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small migration flipped 0 -> 1 -> 2, then a commit that is not a flip, then
    flipped back to 1: a history to read, on a pinned clock."""
    repo = small_repo(tmp_path_factory.mktemp("history") / "small")
    for old, new, message in ((0, 1, "Narrow the release glob"), (1, 2, "Extra wheels")):
        repo.edit("migration.yaml", f"\nstage: {old}\n", f"\nstage: {new}\n")
        repo.commit(message)
    repo.write("README.md", "unrelated\n")
    repo.commit("Docs")
    repo.edit("migration.yaml", "\nstage: 2\n", "\nstage: 1\n")
    repo.commit("Roll back: the extras broke the docs build")
    return repo.root


@pytest.mark.parametrize(
    ("argv", "name"),
    cases(
        [
            ("log", ("log",), ("text", "json")),
            ("verify-pr", ("verify-pr", "--base", "HEAD~1"), FORMATS3),
            (
                "verify-pr-two-steps",
                ("verify-pr", "--base", "HEAD~4", "--head", "HEAD~2"),
                FORMATS3,
            ),
        ]
    ),
)
def test_output_on_a_history(
    history: Path,
    runner_files: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    sg: Sg,
    snapshot: Snapshot,
    argv: tuple[str, ...],
    name: str,
) -> None:
    pin_git(monkeypatch)
    result = sg(*argv, cwd=history)
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(rendered(result, runner_files, history), f"{name}.txt")


@pytest.mark.parametrize(
    ("argv", "name"),
    cases(
        [
            ("advance", ("advance",), FORMATS3),
            ("advance-dry-run", ("advance", "--dry-run"), ("text",)),
            ("advance-to", ("advance", "--to", "3"), ("text",)),
            ("rollback", ("rollback",), FORMATS3),
            ("new-stage", ("new-stage", "Drop the old wheels"), None),
        ]
    ),
)
def test_output_of_the_writers(
    tmp_path: Path,
    runner_files: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    sg: Sg,
    snapshot: Snapshot,
    argv: tuple[str, ...],
    name: str,
) -> None:
    """On a fresh copy each: the small migration at stage 1 (rollback), else stage 0."""
    pin_git(monkeypatch)
    repo = small_repo(tmp_path / "small")
    if argv[0] == "rollback":
        repo.edit("migration.yaml", "\nstage: 0\n", "\nstage: 1\n")
        repo.commit("Narrow the release glob")
    result = sg(*argv, cwd=repo.root)
    text = rendered(result, runner_files, repo.root)
    text += "--- git status\n" + repo.status()
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(text, f"{name}.txt")


def test_output_of_init(tmp_path: Path, sg: Sg, snapshot: Snapshot) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    result = sg("init", cwd=root)
    listing = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    text = rendered(result, {}, root) + "--- files\n" + "\n".join(listing) + "\n"
    text += "--- migration.yaml\n" + (root / "migration.yaml").read_text(encoding="utf-8")
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(text, "init.out.txt")


def test_every_command_is_pinned() -> None:
    """A new command gets a snapshot: the ones here are the CLI's commands."""
    from stagegate.cli import cli

    pinned = {args[0] for _name, args, _formats in ON_THE_EXAMPLE} | {
        "log",
        "verify-pr",
        "advance",
        "rollback",
        "new-stage",
        "init",
    }
    assert pinned == set(cli.commands)
