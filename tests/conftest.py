from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _plain_imports(*packages: str) -> None:
    """Import ``packages`` as Python compiles them, not rewritten for pytest's assertion
    messages. pytest rewrites every module of a distribution that registers a plugin
    (stagegate's own, hypothesis), not only the tests: on a clean clone (CI) each module
    of theirs the session imports is parsed, rewritten and compiled once more than the
    processes the tests start compile it, ~1.3 CPU-s. Their ``assert`` statements still
    raise; only the message is Python's. What was imported before this conftest (the
    plugin modules) stays as it was. No effect if pytest's hook keeps no such set."""
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if isinstance(marked, set):
            marked.difference_update(packages)


_plain_imports("stagegate", "hypothesis")

from stagegate.cli import run  # noqa: E402 (imported as compiled, not rewritten)

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
CASES = TESTS / "cases"
FIXTURES = TESTS / "fixtures"


def story_twin(story: str, variant: str, root: Path) -> Path:
    """The ``variant`` twin (``broken``/``fixed``) of a story under tests/cases/stories/,
    copied to ``root`` without its ``expected.txt``."""
    shutil.copytree(
        CASES / "stories" / story / variant, root, ignore=shutil.ignore_patterns("expected.txt")
    )
    return root


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fuzz-long", action="store_true", help="run thousands of fuzz cases")


FUZZ_LONG = False


FULL_PASS_EVERY = 1_000
"""Young-generation passes between the collector's full passes in the session (Python's
default: 10)."""


def pytest_configure(config: pytest.Config) -> None:
    global FUZZ_LONG
    FUZZ_LONG = bool(config.getoption("--fuzz-long"))
    # The session keeps what it makes (modules, test items, module fixtures, memoized
    # readings): hundreds of thousands of objects that the cyclic collector's full passes
    # walk again and again as the session grows (a full pass of a late session takes a
    # third of a second; 3.5 of the 82 CPU-s of tests/example and tests/unit). Young
    # garbage is still collected as often as Python's defaults say; only the full passes
    # are rarer. The commands the tests start as processes keep Python's defaults.
    young, middle, _full = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_PASS_EVERY)


def examples(normal: int, long: int | None = None) -> int:
    """A hypothesis test's ``max_examples``: ``normal`` in the suite, ``long`` (else ten
    times as many) with ``--fuzz-long`` (read when a test module is collected, after the
    options)."""
    if not FUZZ_LONG:
        return normal
    return long if long is not None else normal * 10


@pytest.fixture(scope="session")
def _validation_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The validation and parse cache of the session, outside the user's own. Its keys
    hold every byte of the files and stagegate's modules, and it keeps only what passed,
    so a hit is what a miss decides (load/cache.py): a test's verdict does not depend on
    which tests ran before it, only how much validating it repeats (the example's files
    alone were validated afresh in hundreds of tests). The tests of the cache itself set
    their own folder or STAGEGATE_NO_CACHE."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(_validation_cache: Path) -> Iterator[None]:
    """Every test runs in the same environment, whatever the shell running pytest sets:
    set once for the session, before any fixture of a module or a test runs (a test's own
    ``monkeypatch`` changes are undone after it; per test, these settings cost ~0.3 ms
    each, ~1 CPU-s of the suite)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch, _validation_cache)
        yield


def _isolate(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    # The Python processes the tests start (stagegate, pytest) read the bytecode this
    # process and pip wrote beside the modules (assertion-rewritten stagegate included):
    # a prefix of the session's own would make each session compile all they import
    # again, hypothesis's 200 modules among them (~5 CPU-s).
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("STAGEGATE_CACHE_DIR", str(cache))
    monkeypatch.delenv("STAGEGATE_TRACEBACK", raising=False)
    # The file and the GitHub context come from the test, never from the shell running it:
    # on a GitHub runner, `--format github` would otherwise append to the runner's own
    # $GITHUB_ENV, $GITHUB_OUTPUT and step summary. CI (set by most CI services) makes the
    # pytest the checks start print its summary lines whole, not cut to the terminal.
    for name in list(os.environ):
        if name.startswith(("GITHUB_", "RUNNER_")) or name in ("CI", "STAGEGATE_FILE"):
            monkeypatch.delenv(name)
    # The pytest processes the pytest check starts load only what a stage test uses (the
    # `stagegate` fixture comes by its `-p stagegate`; snapshots by PYTEST_PLUGINS), not
    # every plugin of this test environment: hypothesis's alone costs ~1.5 CPU-s per start.
    # The tests of loading by entry point (as an installed stagegate does) unset these.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTEST_PLUGINS", "pytest_snapshot.plugin")
    # every `git init` of a test, as scratch.git_env gives it: no sample hooks to copy;
    # every `git commit`: no `git maintenance run --auto` process after it
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "maintenance.auto")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "false")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        return self.out + self.err


@pytest.fixture
def sg(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run the stagegate CLI in-process, as a user would from the shell."""

    def invoke(*args: str, cwd: Path | None = None) -> Result:
        old = os.getcwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            capsys.readouterr()
            code = run(list(args))
            captured = capsys.readouterr()
        finally:
            os.chdir(old)
        assert "Traceback" not in captured.out + captured.err
        return Result(code, captured.out, captured.err)

    return invoke


@contextmanager
def computed_once(module: ModuleType, name: str) -> Iterator[None]:
    """Within the block, ``module.name`` (a command's core, which the command imports when
    it runs) is computed once for equal arguments: a test that runs one command in two
    formats compares the same commits or models twice, and each run still parses its
    options and prints through the command."""
    real = getattr(module, name)
    made: dict[tuple[object, ...], Any] = {}

    def once(*args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(sorted(kwargs.items())))
        if key not in made:
            made[key] = real(*args, **kwargs)
        return made[key]

    setattr(module, name, once)
    try:
        yield
    finally:
        setattr(module, name, real)


def schema_check(builtin: str, path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with one of its vendored schemas (no network) on ``path``: its
    command run in this process (uncoloured, as with NO_COLOR), where a process of its own
    cost ~0.7 CPU-s a file to import what this one imports once."""
    from check_jsonschema.cli.main_command import main
    from click.testing import CliRunner

    argv = ["--builtin-schema", builtin, str(path)]
    done = CliRunner().invoke(main, argv, env={"NO_COLOR": "1"})
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return subprocess.CompletedProcess(
        ["check-jsonschema", *argv], done.exit_code, done.stdout, done.stderr
    )


def load_yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def action_script() -> str:
    """The shell script of action.yml's stagegate step (its last step)."""
    steps = load_yaml(REPO / "action.yml")["runs"]["steps"]
    return str(steps[-1]["run"])


def run_action_step(
    cwd: Path, bin_dir: Path, env: dict[str, str | None]
) -> subprocess.CompletedProcess[str]:
    """That script under ``bash -e`` in ``cwd``, with ``bin_dir`` first on PATH (where its
    `stagegate` is) and ``env`` on top of this environment (None: the variable unset), as
    the runner gives it."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    given = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run(
        ["bash", "-e", "-c", action_script()],
        capture_output=True,
        text=True,
        env={name: value for name, value in given.items() if value is not None},
        check=False,
        cwd=cwd,
    )
