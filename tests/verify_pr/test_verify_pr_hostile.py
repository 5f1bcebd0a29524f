"""verify-pr cannot be talked into passing the base's stage tests by the pull request.

The base's stage 2 test fails at the head (the switch is off). Each pull request
below flips to stage 2 and also adds or edits a file that pytest reads besides
the tests: a conftest.py hook that reports every test as passed, a plugin loaded
through the pytest configuration, or the helper module the tests import. The
gate runs the tests with the base's version of those files, so the flip is
refused, and says which files it took from the base.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import Repo, copy_repo, pin_git, small_repo

Sg = Callable[..., Result]

PASS_EVERYTHING = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def base_with_a_stage_test(root: Path) -> tuple[Repo, str]:
    """At stage 1; stage 2's test asserts switch.txt says on (through a helper module)."""
    repo = small_repo(root)
    repo.edit("migration.yaml", "stage: 0\n", "stage: 1\n")
    repo.edit("stages/02-extra.yaml", "acceptance:\n", "acceptance:\n  - check: pytest\n")
    repo.write("stages/conftest.py", "import sys\n")
    repo.write(
        "stages/switch.py",
        "from pathlib import Path\n\n\ndef is_on():\n    return Path('switch.txt').read_text() == 'on\\n'\n",
    )
    repo.write(
        "stages/02-extra/test_switch.py",
        "from switch import is_on\n\n\ndef test_switch_is_on():\n    assert is_on()\n",
    )
    repo.write("switch.txt", "on\n")
    base = repo.commit("Stage 2 tests the switch")
    repo.edit("migration.yaml", "stage: 1\n", "stage: 2\n")
    repo.write("switch.txt", "off\n")
    return repo, base


@pytest.fixture(scope="module")
def made_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, str]:
    """``base_with_a_stage_test`` with the honest flip committed (stage 2, the switch off),
    made once for the module: each test judges its own head, made in a copy of it."""
    repo, base = base_with_a_stage_test(tmp_path_factory.mktemp("base") / "repo")
    repo.commit("Flip to stage 2 with the switch off")  # refused: the first test below
    return repo, base


@pytest.fixture
def base(made_once: tuple[Repo, str], tmp_path: Path) -> tuple[Repo, str]:
    """A copy of the module's repository (its head: the honest flip), and the base commit."""
    return copy_repo(made_once[0], tmp_path / "repo"), made_once[1]


HOSTILE = {
    "a conftest.py at the top": {"conftest.py": PASS_EVERYTHING},
    "the stages' conftest.py": {"stages/conftest.py": PASS_EVERYTHING},
    "a plugin in pyproject.toml": {
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p passall'\npythonpath = ['.']\n",
        "passall.py": PASS_EVERYTHING,
    },
    "a plugin in pytest.ini": {
        "pytest.ini": "[pytest]\naddopts = -p passall\npythonpath = .\n",
        "passall.py": PASS_EVERYTHING,
    },
    "the helper module the test imports": {"stages/switch.py": "def is_on():\n    return True\n"},
    "a package shadowing the helper": {
        "stages/switch/__init__.py": "def is_on():\n    return True\n"
    },
}


def test_the_honest_flip_with_the_switch_off_is_refused(base: tuple[Repo, str], sg: Sg) -> None:
    """The pull request each attack below starts from (once here, not once per attack)."""
    repo, base_commit = base
    result = sg("verify-pr", "--base", base_commit, cwd=repo.root)
    assert result.code == 1, result.output
    assert "pytest stages/02-extra failed (1 failed" in result.out
    assert "ran with the base's version" not in result.out


@pytest.mark.parametrize("how", HOSTILE)
def test_a_pull_request_cannot_make_the_base_stage_tests_pass(
    how: str, base: tuple[Repo, str], sg: Sg
) -> None:
    repo, base_commit = base  # the honest flip, refused: the test above
    for rel, text in HOSTILE[how].items():
        repo.write(rel, text)
    if how == "a package shadowing the helper":
        (repo.root / "stages" / "switch.py").unlink()
    repo.commit(f"Quietly pass everything: {how}")
    result = sg("verify-pr", "--base", base_commit, cwd=repo.root)
    assert result.code == 1, result.output
    assert "FAIL  pytest" in result.out
    assert "pytest stages/02-extra failed (1 failed" in result.out
    assert "at the head; the stage tests ran with the base's version" in result.out
    assert "verify-pr: refused" in result.out


def test_an_unchanged_setup_runs_in_place(base: tuple[Repo, str], sg: Sg) -> None:
    """With the switch back on, the honest flip passes and nothing is taken from the base."""
    repo, base_commit = base
    repo.write("switch.txt", "on\n")
    repo.commit("Switch on")
    result = sg("verify-pr", "--base", base_commit, cwd=repo.root)
    assert result.code == 0, result.output
    assert "ran with the base's version" not in result.out
