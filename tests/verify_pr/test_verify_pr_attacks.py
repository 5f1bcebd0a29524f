"""The attacks of issue #11 on verify-pr, each kept as a test.

Every pull request below starts from a migration at stage 0 with its stage tests and
flips to stage 1 while adding a producer ``sneaky``, active from stage 1, that only
stage 1's pytest test refuses (the producers must stay as they were). Honestly made,
that pull request is refused; each attack tries to make the gate accept it anyway, and
must fail with the rule named. The honest flip is made once on the worked example, whose
own stage tests refuse it; the attacks are made on the small migration, whose stage 1
folder has a test of the same kind (a pytest process on the example's costs twice as much).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import (
    Repo,
    copy_repo,
    example_repo,
    init,
    pin_git,
    write_shipped_example,
    write_small,
    write_small_with_tests,
)

Sg = Callable[..., Result]

SNEAKY = """\
  sneaky:
    summary: Built from stage 1 on; nobody asked for it.
    when: {flag}
    artifacts: ["sneaky-wheel-{{py}}"]
"""
EXAMPLE_STAGE1 = "stages/01-version-config-foundations"
STAGE1 = "stages/01-narrow"
"""Stage 1's test folder: the worked example's, and the small migration's."""


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _sneaky_flip(root: Path, *, example: bool = False) -> tuple[Repo, str]:
    """The migration at stage 0 with its stage tests committed (the base), and in the work
    tree the flip to stage 1 with the producer ``sneaky`` added (not committed yet): the
    small migration's, or with ``example`` the worked example's."""
    repo = init(root)
    if example:
        write_shipped_example(repo.root)
    else:
        write_small_with_tests(repo.root)
    base = repo.commit("The migration with its stage tests")
    repo.git("checkout", "-q", "-b", "sneaky")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    flag = "shared-version-reader" if example else "narrow"
    repo.edit("migration.yaml", "\nproducers:\n", "\nproducers:\n" + SNEAKY.format(flag=flag))
    return repo, base


def _refused_by_pytest(result: Result, folder: str = STAGE1) -> None:
    """Refused by the stage 1 test of the producers (the small migration's by its name)."""
    assert result.code == 1, result.output
    assert "FAIL  pytest" in result.out, result.out
    assert f"pytest {folder} failed" in result.out, result.out
    if folder == STAGE1:
        # the summary line ends at the test's name, or goes on with " - " and its message
        # (pytest shows the message in full when CI is set in the environment)
        summary = r"^\s*FAILED \S+::test_the_producers_stay_as_they_were( - |$)"
        assert re.search(summary, result.out, re.MULTILINE), result.out
    assert "verify-pr: refused (rule checks-pass" in result.out, result.out


def test_the_honest_sneaky_flip_is_refused(tmp_path: Path, sg: Sg) -> None:
    """On the worked example: its own stage 1 tests refuse the new producer."""
    repo, base = _sneaky_flip(tmp_path / "repo", example=True)
    repo.commit("Flip to stage 1, and a new producer")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    _refused_by_pytest(result, EXAMPLE_STAGE1)
    assert f"pytest {EXAMPLE_STAGE1} failed (1 failed, 4 passed" in result.out


# --------------------------------------------------------------------------- pytest isolation

FAKE_PYTEST = "import sys\nprint('1 passed')\nsys.exit(0)\n"
EXIT_0_AT_EXIT = "import atexit, os\natexit.register(lambda: os._exit(0))\n"
PASS_AT_THE_END = """\
def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
"""
PASSING_TEST = "def test_ok():\n    assert True\n"


def _move_stages(repo: Repo) -> None:
    repo.git("mv", "stages", "stages2")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 1\nstages_dir: stages2\n")
    repo.write("stages2/conftest.py", repo.read("stages2/conftest.py") + PASS_AT_THE_END)


def _link_stage_folder(repo: Repo, to: str) -> None:
    import shutil

    shutil.rmtree(repo.root / STAGE1)
    (repo.root / STAGE1).symlink_to(to)


def _link_to_the_root(repo: Repo) -> None:
    """Issue #11, item 3: pytest would collect the whole tree, where only test_ok.py is
    left to run (the later stages' folders are the head's to delete)."""
    import shutil

    for folder in (repo.root / "stages").glob("0[2-9]-*"):
        if folder.is_dir():
            shutil.rmtree(folder)
    _link_stage_folder(repo, "..")
    repo.write("test_ok.py", PASSING_TEST)


def _link_to_passing_tests(repo: Repo) -> None:
    repo.write("ok_tests/test_ok.py", PASSING_TEST)
    _link_stage_folder(repo, "../ok_tests")


def _stage_folder_as_a_file(repo: Repo) -> None:
    import shutil

    shutil.rmtree(repo.root / STAGE1)
    repo.write(STAGE1, PASSING_TEST)


def _link_stages_dir(repo: Repo) -> None:
    import shutil

    repo.write(f"stages3/{Path(STAGE1).name}/test_ok.py", PASSING_TEST)
    for stage_file in (repo.root / "stages").glob("*.yaml"):
        shutil.copy(stage_file, repo.root / "stages3" / stage_file.name)
    shutil.rmtree(repo.root / "stages")
    (repo.root / "stages").symlink_to("stages3")


SHADOWS: dict[str, dict[str, str]] = {
    "a pytest.py at the root": {"pytest.py": FAKE_PYTEST},
    "a pytest package at the root": {"pytest/__init__.py": "", "pytest/__main__.py": FAKE_PYTEST},
    "a pytest_snapshot.py that exits 0": {"pytest_snapshot.py": EXIT_0_AT_EXIT},
    "a yaml.py that exits 0": {"yaml.py": EXIT_0_AT_EXIT},
    "a stagegate package that exits 0": {"stagegate/__init__.py": EXIT_0_AT_EXIT},
    "a sitecustomize.py that exits 0": {"sitecustomize.py": EXIT_0_AT_EXIT},
    "a _pytest package at the root": {"_pytest/__init__.py": EXIT_0_AT_EXIT},
    "a helper beside the stage tests": {"stages/pytest.py": FAKE_PYTEST},
}
"""Modules of the head that would stand in for one the pytest process imports. Each makes
the run pass wherever Python imports it (it prints a pass and exits 0, or exits 0 at the
end whatever the tests did), and none can make a run fail, so one pull request holds them
all: if any were imported, that pull request would pass."""

ATTACKS: dict[str, Callable[[Repo], None]] = {
    "a conftest.py in the stage folder": lambda r: r.write(
        f"{STAGE1}/conftest.py", PASS_AT_THE_END
    ),
    "the stages moved, with a hook": _move_stages,
    "the stage folder linked to the root": _link_to_the_root,
    "the stage folder linked to passing tests": _link_to_passing_tests,
    "the stages folder linked elsewhere": _link_stages_dir,
    "the stage folder deleted": lambda r: r.git("rm", "-rq", STAGE1) and None,
    "the stage folder replaced by a file": _stage_folder_as_a_file,
    "a pytest.ini with a plugin at the root": lambda r: (
        r.write("pytest.ini", "[pytest]\naddopts = -p no:stagegate --co\n") and None
    ),
}
"""Changes of the head's files and folders that each stand alone (they touch one path)."""


def _plant_shadows(repo: Repo) -> None:
    for files in SHADOWS.values():
        for rel, text in files.items():
            repo.write(rel, text)


class Verdicts:
    """verify-pr on the sneaky flip with one change of the head, made once for the module
    (several tests read one verdict: a pytest process starts in each): what the head
    commit tracks, and the verdict.

    The pull requests are made one after another in one folder (each removes the last):
    the pytest process of each loads the migration from the same path, so one already
    validated there is not validated again (the validation cache's key holds the stage
    files' paths as loaded, absolute in that process)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.root = factory.mktemp("attack") / "repo"
        self.made: dict[str, tuple[list[str], Result]] = {}

    def __call__(
        self, attack: str, change: Callable[[Repo], None], sg: Sg
    ) -> tuple[list[str], Result]:
        if attack not in self.made:
            shutil.rmtree(self.root, ignore_errors=True)
            repo, base = _sneaky_flip(self.root)
            change(repo)
            repo.commit(f"Flip to stage 1, a new producer, and {attack}")
            tracked = repo.git("ls-tree", "-r", "--name-only", "HEAD").splitlines()
            self.made[attack] = (tracked, sg("verify-pr", "--base", base, cwd=repo.root))
        return self.made[attack]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> Verdicts:
    return Verdicts(tmp_path_factory)


@pytest.mark.parametrize("attack", SHADOWS)
def test_no_module_of_the_head_stands_in_for_one_pytest_imports(
    attack: str, verdicts: Verdicts, sg: Sg
) -> None:
    tracked, result = verdicts("every module that stands in", _plant_shadows, sg)
    assert set(SHADOWS[attack]) <= set(tracked)  # the attack is in the pull request
    _refused_by_pytest(result)
    assert "(1 failed, 2 passed" in result.out  # the base's three tests ran, one refused


@pytest.mark.parametrize("attack", ATTACKS)
def test_nothing_in_the_head_tree_changes_what_pytest_runs(
    attack: str, verdicts: Verdicts, sg: Sg
) -> None:
    _, result = verdicts(attack, ATTACKS[attack], sg)
    _refused_by_pytest(result)
    assert "(1 failed, 2 passed" in result.out  # the base's three tests ran, one refused


def test_the_notes_say_what_ran_when_the_stages_moved(verdicts: Verdicts, sg: Sg) -> None:
    """The pull request of the attack "the stages moved, with a hook" (one verify-pr run)."""
    _, result = verdicts("the stages moved, with a hook", _move_stages, sg)
    _refused_by_pytest(result)
    assert (
        "note: the head moves the stages from stages/ to stages2/; the gate ran the base's "
        "stage tests from stages/." in result.out
    )
    assert f"note: {STAGE1}/ differs at the head; the gate ran the base's version" in result.out


def test_the_work_tree_is_never_what_runs(tmp_path: Path, sg: Sg) -> None:
    """An untracked pytest.py in the runner's work tree does not run either, and the
    base's honest flip (no sneaky producer) still passes with the head tree in place:
    the control of the attacks above, which cannot pass by refusing every flip."""
    repo = init(tmp_path / "repo")
    write_small_with_tests(repo.root)
    base = repo.commit("The small migration with its stage tests")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("Flip to stage 1")
    repo.write("pytest.py", "import sys\nprint('1 failed')\nsys.exit(1)\n")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
    assert f"ok    pytest: pytest {STAGE1}: 3 passed" in result.out
    assert "temporary checkout" not in result.out


# --------------------------------------------------------------------------- the base's data


def test_narrowing_a_release_at_stage_0_and_at_the_target_alike_is_refused(
    tmp_path: Path, sg: Sg
) -> None:
    """Issue #11, item 5: the continuity baseline is the base's stage 0, not the head's."""
    repo = example_repo(tmp_path / "repo")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit(
        "migration.yaml",
        'select: ["cuda-bindings*"]\n    exclude: ["*-tests", "*python315*"]\n    kinds: [wheel]\n'
        "    expect: [bindings-cu13]",
        'select: ["cuda-bindings-python312*"]\n    exclude: ["*-tests", "*python315*"]\n'
        "    kinds: [wheel]\n    expect: [bindings-cu13]",
    )
    repo.edit(
        "migration.yaml",
        'select: ["cuda-bindings-python*-cuda13.3.0-*"]',
        'select: ["cuda-bindings-python312-cuda13.3.0-*"]',
    )
    repo.commit("Flip to stage 1, and ship only Python 3.12 from now on and at stage 0")
    head_check = sg("check", "--stage", "1", cwd=repo.root)
    assert "the same 3 artifact names as at stage 0" in head_check.out  # the head fools itself
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  release-continuity tag=v13.4.2" in result.out
    assert "no longer selects 15 rows of cuda-bindings-python{py}-cuda13.3.0-{platform}-{sha}" in (
        result.out
    )
    assert "verify-pr: refused (rule checks-pass" in result.out


def test_a_stage_the_base_has_not_reached_stays_editable(tmp_path: Path, sg: Sg) -> None:
    """`since` beyond the base's stage compares with the head's own plan."""
    repo = example_repo(tmp_path / "repo")
    repo.edit(
        "stages/02-cu12-developer-workflow.yaml",
        "acceptance:\n",
        "acceptance:\n  - check: release-continuity\n    tag: v13.4.2\n    since: 2\n",
    )
    repo.commit("Stage 2 compares with itself")
    sg("advance", cwd=repo.root)
    repo.commit("Flip to stage 1")
    assert sg("advance", cwd=repo.root).code == 0
    repo.commit("Flip to stage 2")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output


_RETIRING: list[Repo] = []
"""The repository ``_retiring_repo`` copies, made once a process."""


def _retiring_repo(root: Path) -> Repo:
    """The small migration at stage 1, where release `broad` is retired; stage 2 runs the
    `retired` check, and ci/release.yml still names broad's legacy string (a copy of the
    one made the first time a test asked for it)."""
    if not _RETIRING:
        made = Path(tempfile.mkdtemp(prefix="stagegate-retiring-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        _RETIRING.append(_make_retiring_repo(made / "repo"))
    return copy_repo(_RETIRING[0], root)


def _make_retiring_repo(root: Path) -> Repo:
    repo = init(root)
    write_small(repo.root)
    repo.edit(
        "migration.yaml",
        '    select: ["pkg-*"]\n',
        '    select: ["pkg-*"]\n    legacy:\n      references: ["pkg-* # broad"]\n',
    )
    repo.write("migration.yaml", repo.read("migration.yaml") + "audit:\n  ignore: []\n")
    repo.edit("stages/02-extra.yaml", "acceptance:\n", "acceptance:\n  - check: retired\n")
    repo.write("ci/release.yml", "download: pkg-* # broad\n")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.commit("At stage 1, with a leftover of the broad release")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    return repo


def _move_stages_into_ci(repo: Repo) -> None:
    repo.git("mv", "stages", "ci/stages")
    repo.edit("migration.yaml", "stage: 2\n", "stage: 2\nstages_dir: ci/stages\n")


def _attributes(text: str) -> Callable[[Repo], None]:
    return lambda repo: repo.write(".gitattributes", text) and None


def _utf16_checkout(attributes: str) -> Callable[[Repo], None]:
    """Issue #24, item 2: the blob stays UTF-8 (the diff shows the line), every checkout
    of ci/release.yml is UTF-16 (git grep of the work tree skips it as binary)."""

    def attack(repo: Repo) -> None:
        repo.write(".gitattributes", attributes)
        repo.write("ci/release.yml", repo.read("ci/release.yml").encode("utf-16-le"))

    return attack


RETIRED_ATTACKS: dict[str, Callable[[Repo], None]] = {
    "audit.ignore widened": lambda r: r.edit("migration.yaml", "ignore: []", 'ignore: ["ci/**"]'),
    "the legacy entry deleted": lambda r: r.edit(
        "migration.yaml", '    legacy:\n      references: ["pkg-* # broad"]\n', ""
    ),
    "*.yml -diff": _attributes("*.yml -diff\n"),
    "binary": _attributes("ci/release.yml binary\n"),
    "* -text": _attributes("* -text\n"),
    "diff=nothing": _attributes("*.yml diff=nothing\n"),
    "a folder's own attributes": lambda r: r.write("ci/.gitattributes", "* binary\n") and None,
    "the stages moved": _move_stages_into_ci,
    "working-tree-encoding=UTF-16LE": _utf16_checkout(
        "ci/release.yml working-tree-encoding=UTF-16LE\n"
    ),
    "working-tree-encoding with -diff": _utf16_checkout(
        "*.yml working-tree-encoding=UTF-16LE -diff\n"
    ),
}


@pytest.mark.parametrize("attack", RETIRED_ATTACKS)
def test_the_retired_check_reads_the_base_legacy_and_every_text_file(
    attack: str, tmp_path: Path, sg: Sg
) -> None:
    repo = _retiring_repo(tmp_path / "repo")
    RETIRED_ATTACKS[attack](repo)
    repo.commit(f"Flip to stage 2 with {attack}")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  retired: 1 leftover of retired items" in result.out
    assert "release broad (retired at stage 1): 'pkg-* # broad' is still in ci/release.yml:1" in (
        result.out
    )


def test_the_honest_cleanup_passes_the_retired_check(tmp_path: Path, sg: Sg) -> None:
    repo = _retiring_repo(tmp_path / "repo")
    repo.write("ci/release.yml", "download: pkg-py*\n")
    repo.commit("Flip to stage 2, the leftover gone")
    result = sg("verify-pr", "--base", "HEAD~1", cwd=repo.root)
    assert result.code == 0, result.output
    assert "ok    retired" in result.out


# --------------------------------------------------------------------------- --base itself


def test_a_pull_request_from_an_older_weaker_base_is_judged_by_the_base(
    tmp_path: Path, sg: Sg
) -> None:
    """Issue #11, item 6: main made stage 2 check continuity after the pull request
    branched off from the weaker commit; the pull request is judged by main's checks."""
    continuity = "  - check: release-continuity\n    tag: v1.0.0\n"
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit("migration.yaml", "invariants:\n" + continuity, "invariants: []\n")
    repo.edit("stages/02-extra.yaml", continuity, "")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    weak = repo.commit("At stage 1; stage 2 checks only the tags")
    repo.git("checkout", "-q", "-b", "flip")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.edit("migration.yaml", 'select: ["pkg-py*"]', 'select: ["pkg-*"]')
    repo.commit("Flip to stage 2, and release the extra wheels too")
    repo.git("checkout", "-q", "main")
    repo.edit("stages/02-extra.yaml", "acceptance:\n", "acceptance:\n" + continuity)
    repo.commit("main: stage 2 keeps the release as it was")
    result = sg("verify-pr", "--base", "main", "--head", "flip", cwd=repo.root)
    assert result.code == 1, result.output
    assert f"compared with their merge base {weak[:12]}" in result.out
    assert "FAIL  release-continuity tag=v1.0.0" in result.out
    assert "now also selects all 2 rows of pkg-extra-py{py}" in result.out
    assert "ok    target-unchanged" in result.out  # the pull request did not edit stage 2
    assert "verify-pr: refused (rule checks-pass" in result.out


@pytest.mark.parametrize("attributes", ["*.yml -diff\n", "ci/release.yml binary\n", "* -text\n"])
def test_the_audit_searches_text_whatever_the_attributes_say(
    attributes: str, tmp_path: Path, sg: Sg
) -> None:
    """Issue #11, item 4; a file that really is binary (a NUL in it) is still left out."""
    repo = _retiring_repo(tmp_path / "repo")
    repo.write(".gitattributes", attributes)
    repo.write("ci/blob.bin", b"\x00\x01pkg-* # broad\n")
    repo.commit("Attributes")
    result = sg("audit", "--stage", "1", "--format", "json", cwd=repo.root)
    assert result.code == 1, result.output
    found = json.loads(result.out)["findings"]
    assert [(f["file"], f["line"]) for f in found] == [("ci/release.yml", 1)]


# --------------------------------------------------------------------------- command checks


def _guarded_repo(root: Path, run: str) -> tuple[Repo, str]:
    """The small migration with an invariant command check; the head adds forbidden.txt,
    which the check refuses."""
    repo = init(root)
    write_small(repo.root)
    repo.write(
        "migration.yaml", repo.read("migration.yaml") + f"  - check: command\n    run: {run}\n"
    )
    base = repo.commit("Guard against forbidden.txt")
    repo.write("forbidden.txt", "here\n")
    return repo, base


def test_a_module_of_the_head_cannot_stand_in_for_one_a_command_imports(
    tmp_path: Path, sg: Sg
) -> None:
    guard = "import json, os, sys; sys.exit(os.path.exists('forbidden.txt'))"
    repo, base = _guarded_repo(
        tmp_path / "repo", f"[{json.dumps(sys.executable)}, -c, {json.dumps(guard)}]"
    )
    repo.write("json.py", "import os\nos._exit(0)\n")
    repo.commit("The forbidden file, and a json.py that ends every Python started here")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  command: 1 problem" in result.out
    assert "exited 1" in result.out


def test_a_program_of_the_head_cannot_stand_in_for_one_on_a_relative_path(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    tool = tools / "guard-tool"
    tool.write_text("#!/bin/sh\ntest ! -e forbidden.txt\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join(["tools", str(tools), os.environ["PATH"]]))
    repo, base = _guarded_repo(tmp_path / "repo", "[guard-tool]")
    fake = repo.write("tools/guard-tool", "#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    repo.commit("The forbidden file, and a guard-tool of its own on PATH's relative entry")
    assert sg("check", cwd=repo.root).code == 0  # the head's own run is fooled
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  command: 1 problem" in result.out


def test_flags_wired_reads_the_base_references(tmp_path: Path, sg: Sg) -> None:
    """Dropping a flag's references in the pull request does not make its flip wired."""
    repo = init(tmp_path / "repo")
    write_small(repo.root)
    repo.edit(
        "migration.yaml",
        "    summary: Build the extra wheels.\n",
        "    summary: Build the extra wheels.\n    references: [BUILD_EXTRA]\n",
    )
    repo.edit("stages/02-extra.yaml", "acceptance:\n", "acceptance:\n  - check: flags-wired\n")
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    base = repo.commit("At stage 1; stage 2 flips extra, which CI reads as BUILD_EXTRA")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.commit("Flip to stage 2, with nothing reading BUILD_EXTRA")
    honest = sg("verify-pr", "--base", base, cwd=repo.root)
    assert honest.code == 1, honest.output
    assert "FAIL  flags-wired" in honest.out
    repo.edit("migration.yaml", "    references: [BUILD_EXTRA]\n", "")
    repo.commit("... and no references to look for")
    result = sg("verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  flags-wired" in result.out
    assert "BUILD_EXTRA" in result.out


def test_a_migration_in_a_subfolder_runs_its_base_stage_tests(tmp_path: Path, sg: Sg) -> None:
    """The copy keeps the repository's layout: the top's conftest.py still applies to a
    check that asks for it (`host-conftest: true`)."""
    repo = init(tmp_path / "repo")
    write_small(repo.root / "ci")
    repo.edit(
        "ci/stages/01-narrow.yaml",
        "acceptance:\n",
        "acceptance:\n  - check: pytest\n    host-conftest: true\n",
    )
    repo.write("conftest.py", "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n")
    repo.write(
        "ci/stages/01-narrow/test_one.py",
        "from pathlib import Path\n\n\ndef test_one(answer, stagegate):\n"
        "    assert answer == 42 and stagegate.stage == 1\n"
        "    assert Path('ready.txt').read_text() == 'yes\\n'\n",
    )
    base = repo.commit("A migration under ci/ whose stage 1 test reads ci/ready.txt")
    repo.edit("ci/migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.write("ci/ready.txt", "yes\n")
    repo.commit("Flip to stage 1, ready")
    honest = sg("-f", "ci/migration.yaml", "verify-pr", "--base", base, cwd=repo.root)
    assert honest.code == 0, honest.output
    assert "ok    pytest host-conftest=True: pytest stages/01-narrow: 1 passed" in honest.out
    repo.write("ci/ready.txt", "no\n")
    repo.write("ci/pytest.py", FAKE_PYTEST)
    repo.write("pytest.py", FAKE_PYTEST)
    repo.commit("Not ready, and pytest.py beside it")
    result = sg("-f", "ci/migration.yaml", "verify-pr", "--base", base, cwd=repo.root)
    assert result.code == 1, result.output
    assert "pytest stages/01-narrow failed (1 failed" in result.out
