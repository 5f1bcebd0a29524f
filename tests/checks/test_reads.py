"""Each check kind declares what it reads (its ``READS``), which decides where
``check --all`` holds it; docs/checks.md's table says the same."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import CASES, REPO
from scratch import SMALL, write_small
from stagegate import checks
from stagegate.checks import runner
from stagegate.errors import Loc
from stagegate.model import Check
from stagegate.records import replace
from stagegate.validation import load

TABLE = {
    "the model": "model",
    "the user's commands": "commands",
    "today's repository": "repository",
}


def test_every_kind_declares_what_it_reads_and_the_docs_table_agrees() -> None:
    doc = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    listed: dict[str, set[str]] = {}
    for reads, kinds in re.findall(
        r"^\| (the model|the user's commands|today's repository) \| ([^|]+) \|", doc, re.M
    ):
        listed[TABLE[reads]] = set(re.findall(r"`([a-z-]+)`", kinds))
    assert listed == {what: set(checks.reading(what)) for what in checks.READS}
    assert set().union(*listed.values()) == set(checks.kinds())
    assert checks.reading("repository") == {"retired", "flags-wired", "workflows", "reuse-safe"}


def test_what_status_knows_of_each_kind_is_what_its_module_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``declared()`` is read from each module's source, exactly what the module declares
    when imported, and is not stored: nothing is written to the cache folder for it."""
    modules = checks.kinds()
    expected = {
        kind: (m.__name__.rpartition(".")[2], m.READS, getattr(m, "VALIDATE_EVERY_LOAD", False))
        for kind, m in modules.items()
    }
    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(tmp_path))
    checks.declared.cache_clear()
    try:
        found = checks.declared()
    finally:
        checks.declared.cache_clear()
    assert {k: (d.module, d.reads, d.every_load) for k, d in found.items()} == expected
    assert checks._scanned() == checks._declared()  # the source answered, not an import
    assert expected["pytest"] == ("pytest_check", "commands", True)
    assert expected["retired"] == ("retired", "repository", False)
    assert list(tmp_path.iterdir()) == []


def test_without_a_cache_folder_the_modules_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAGEGATE_NO_CACHE", "1")
    checks.declared.cache_clear()
    try:
        assert {k: d.reads for k, d in checks.declared().items()} == {
            kind: module.READS for kind, module in checks.kinds().items()
        }
    finally:
        checks.declared.cache_clear()


LEFT_BEHIND = """\
from stagegate.checks.base import Finding, result
from stagegate.errors import Problem

KIND = "left-behind"
SUMMARY = "Fails while `file` is still in the work tree."
ARGS = {"file": {"type": "string"}}
REQUIRED = ["file"]
READS = "repository"
VALIDATE_EVERY_LOAD = True


def validate(migration, check):
    if (migration.root / check.args["file"]).is_symlink():
        return [Problem(check.loc, f"{check.args['file']} is a link; name the file itself.")]
    return []


def run(ctx, check):
    left = (ctx.root / check.args["file"]).exists()
    findings = [Finding(f"{check.args['file']} is still here; delete it.", check.loc)] if left else []
    return [result(ctx, check, findings, f"{check.args['file']} is gone")]
"""

STAGE_1 = """\
stage: 1
title: Switch to the new path
outcome: New artifacts replace the old ones.
set:
  new-path: true
acceptance:
  - check: left-behind
    file: old-build.sh
"""


def test_adding_a_kind_is_adding_a_module(tmp_path: Path) -> None:
    """A module in the checks package is a kind: its arguments are in the schema, status
    runs it as readiness because it declares it reads the repository, and its ``validate``
    runs on a load the validation cache knows valid because it declares it must. No list
    is edited (the module comes on the package's path, as if added to the folder)."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "left_behind.py").write_text(LEFT_BEHIND)
    root = tmp_path / "repo"
    shutil.copytree(CASES / "valid" / "valid-minimal", root, ignore=shutil.ignore_patterns("*.txt"))
    (root / "stages" / "01-switch.yaml").write_text(STAGE_1)
    (root / "old-build.sh").write_text("make old\n")
    script = (
        "import sys, stagegate.checks as c; c.__path__.append(sys.argv[1]); "
        "from stagegate.cli import run; sys.exit(run(sys.argv[2:]))"
    )

    def stagegate(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "STAGEGATE_CACHE_DIR": str(tmp_path / "cache")}
        argv = [sys.executable, "-c", script, str(extra), *args]
        return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)

    schema = stagegate("schema", "--stage-file")
    assert '"left-behind"' in schema.stdout, schema.stderr
    for _run in ("derived", "read back"):
        status = stagegate("status")
        assert status.returncode == 0, status.stderr
        assert "readiness: not ready (1 repository check, 1 not met)" in status.stdout, (
            status.stdout
        )
        assert "old-build.sh is still here; delete it." in status.stdout
    (root / "old-build.sh").unlink()
    (root / "old-build.sh").symlink_to("new-build.sh")
    refused = stagegate("validate")
    assert refused.returncode == 2, refused.stderr
    assert "01-switch.yaml:7:5: old-build.sh is a link; name the file itself." in refused.stderr


def test_repository_checks_of_a_stage_without_importing_a_kind() -> None:
    migration = load(str(CASES / "valid" / "valid-minimal" / "migration.yaml"))
    retired = Check(kind="retired", loc=Loc("m.yaml", 1, 1))
    model = replace(retired, kind="unique-artifacts")
    stage = replace(migration, invariants=(model, retired))
    assert checks.repository_checks(stage, 0) == [retired]
    assert checks.repository_checks(replace(stage, invariants=(model,)), 0) == []


@pytest.mark.parametrize(
    ("kind", "stage", "ahead_fail", "held"),
    [
        ("retired", 2, False, "check"),  # the current stage
        ("retired", 3, False, "readiness"),
        ("retired", 3, True, "check"),
        ("workflows", 1, False, "past"),
        ("flags-wired", 0, True, "past"),
        ("unique-artifacts", 0, False, "check"),  # the model's checks: every stage
        ("unique-artifacts", 3, False, "check"),
        ("pytest", 0, False, "check"),
    ],
)
def test_where_check_all_holds_each_check(
    kind: str, stage: int, ahead_fail: bool, held: str
) -> None:
    migration = replace(
        load(str(CASES / "lifecycle" / "python-versions" / "migration.yaml")), stage=2
    )
    check = Check(kind=kind, loc=Loc("migration.yaml", 1, 1))
    assert runner.role(migration, stage, check, ahead_fail=ahead_fail) == held


def test_status_with_no_repository_check_ahead_imports_no_other_kind(tmp_path: Path) -> None:
    """On the example at stage 0 without its `workflows` and `flags-wired` checks (stage 1
    then reads only the model), ``status`` reads what it needs of the kinds from their
    modules' source: of the kinds, it imports only ``pytest``'s module, whose ``validate``
    runs on every load, the first time as the second (when the validation cache knows the
    files)."""
    example = tmp_path / "example"
    example.mkdir()
    repository = re.compile(r"^  - check: (workflows|flags-wired)\n(?:    [^\n]*\n)*", re.M)
    for rel in [
        "migration.yaml",
        *(p.relative_to(REPO).as_posix() for p in (REPO / "stages").rglob("*")),
    ]:
        source, target = REPO / rel, example / rel
        if source.is_dir() or "__pycache__" in rel:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        target.write_text(repository.sub("", text) if rel.endswith(".yaml") else text)
    script = (
        "import sys; from stagegate.cli import run; code = run(['status']); "
        "print(sorted(m for m in sys.modules if m.startswith('stagegate.checks.')), "
        "file=sys.stderr); sys.exit(code)"
    )
    env = {**os.environ, "STAGEGATE_CACHE_DIR": str(tmp_path / "cache")}
    imported = []
    for _run in ("first", "second"):
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=example, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert "readiness: stage 1 has no check that reads the repository" in done.stdout
        imported.append(set(ast.literal_eval(done.stderr.strip().splitlines()[-1])))
    assert imported[1] == {"stagegate.checks.base", "stagegate.checks.pytest_check"}
    assert not (tmp_path / "cache" / "kinds").exists()


ODD = """\
KIND = "odd" + "-one"
SUMMARY = "Declares its kind through an expression."
ARGS: dict = {}
REQUIRED: list = []
READS = "repository"


def run(ctx, check):
    return []
"""


def test_a_module_that_declares_otherwise_is_asked_by_importing_it(tmp_path: Path) -> None:
    """A kind whose module writes its declarations other than as plain literals cannot be
    read from its source: then every module is imported, and the answer is exact."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "odd_one.py").write_text(ODD)
    script = (
        "import sys, json, stagegate.checks as c; c.__path__.append(sys.argv[1]); "
        "print(json.dumps([c._scanned() is None, "
        "{k: [d.module, d.reads, d.every_load] for k, d in c.declared().items()}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(extra)], capture_output=True, text=True, check=True
    )
    unread, found = json.loads(done.stdout)
    assert unread is True
    assert found["odd-one"] == ["odd_one", "repository", False]
    assert found["pytest"] == ["pytest_check", "commands", True]


def _link_case(root: Path) -> None:
    """The small migration with a pytest check whose `path` is a link inside the
    repository (valid), as the validation cache will know it."""
    write_small(root)
    (root / "checks").mkdir()
    (root / "checks" / "test_x.py").write_text("def test_x():\n    pass\n")
    (root / "tests_link").symlink_to("checks")
    (root / "migration.yaml").write_text(SMALL + "  - check: pytest\n    path: tests_link\n")


def _forge_declarations(cache: Path) -> None:
    """What a hostile pull request writes into the cache folder: the kinds' declarations,
    with the real module names, where stagegate kept them, but pytest's validation no
    longer run on every load (and every check said to read only the model)."""
    from stagegate.load.cache import fingerprint
    from stagegate.load.digest import blake2b

    forged = {k: [d.module, "model", False] for k, d in checks._declared().items()}
    key = blake2b(f"{fingerprint()}\0{list(checks.__path__)}".encode()).hexdigest()
    folder = cache / "kinds"
    folder.mkdir(parents=True, exist_ok=True)
    for path in {folder / f"{key}.json", *folder.glob("*.json")}:
        path.write_text(json.dumps(forged))


@pytest.mark.parametrize("pointed", ["outside", "inside"])
def test_a_tampered_cache_cannot_turn_off_a_validation(
    pointed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sg: Callable[..., Any]
) -> None:
    """The pytest path is a link the validation cache knew valid; a forged declarations
    entry says pytest's validation need not run on every load; the link now leads outside
    the repository: `validate` still refuses it (control: the link still inside passes,
    tampered cache and all)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(cache))
    root = tmp_path / "m"
    _link_case(root)
    assert sg("validate", cwd=root).code == 0  # validated, and remembered as valid
    _forge_declarations(cache)
    checks.declared.cache_clear()  # as a new process would start
    if pointed == "outside":
        (tmp_path / "outside").mkdir()
        (root / "tests_link").unlink()
        (root / "tests_link").symlink_to(tmp_path / "outside")
    try:
        result = sg("validate", cwd=root)
        forged_view = checks.declared()
    finally:
        checks.declared.cache_clear()
    if pointed == "outside":
        assert result.code == 2, result.output
        assert "pytest path 'tests_link' leads outside the repository" in result.err
    else:
        assert result.code == 0, result.output
    assert forged_view == checks._declared()  # the modules' own declarations
