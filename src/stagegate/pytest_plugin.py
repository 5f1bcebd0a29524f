"""The ``stagegate`` pytest fixture: the resolved stage under test, for a stage's own tests.

The ``pytest`` check runs a stage's folder in a subprocess with ``STAGEGATE_FILE``
(the absolute path of migration.yaml) and ``STAGEGATE_STAGE`` set. By hand, the same
tests run with ``--stagegate-file PATH --stagegate-stage N``; without either, the
fixture reads ``migration.yaml`` in the folder pytest was started in, at its current
stage. An option beats the environment variable.

pytest loads this module into every run in an environment where stagegate is
installed, so it imports nothing of stagegate until a collected test asks for the
fixture. The migration is loaded once, right after collection: a broken file or a
stage that does not exist stops the run with pytest's usage error (exit 4) and the
stagegate message, before any test runs and without a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .testing import StageUnderTest

FIXTURE = "stagegate"
_LOADED = pytest.StashKey["StageUnderTest"]()


PREFIX = "stagegate fixture: "


def usage_error(message: str) -> pytest.UsageError:
    """The migration cannot be read, or a test asked about something it does not have.

    (``pytest.UsageError`` is final, so the prefix is what marks these as ours.)"""
    return pytest.UsageError(PREFIX + message)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stagegate", "stagegate: the stage under test")
    group.addoption(
        "--stagegate-file",
        metavar="PATH",
        default=None,
        help="migration.yaml for the `stagegate` fixture "
        "(default: $STAGEGATE_FILE, else ./migration.yaml).",
    )
    group.addoption(
        "--stagegate-stage",
        metavar="N",
        default=None,
        help="The stage under test (default: $STAGEGATE_STAGE, else the file's current stage).",
    )


def _setting(config: pytest.Config, option: str, variable: str) -> tuple[str | None, str]:
    """The value and where it came from (for messages)."""
    given = config.getoption(option)
    if given is not None:
        return str(given), f"--{option.replace('_', '-')}"
    from_env = os.environ.get(variable)
    if from_env:
        return from_env, f"${variable}"
    return None, ""


def _load(config: pytest.Config) -> StageUnderTest:
    cached = config.stash.get(_LOADED, None)
    if cached is not None:
        return cached
    from .errors import StagegateError
    from .load import load
    from .testing import StageUnderTest

    raw_file, file_source = _setting(config, "stagegate_file", "STAGEGATE_FILE")
    path = Path(raw_file or "migration.yaml")
    if not path.is_absolute():
        path = Path(config.invocation_params.dir) / path
    if not path.is_file():
        source = f" (from {file_source})" if file_source else ""
        raise usage_error(
            f"{path}{source}: no such file; pass --stagegate-file PATH or set "
            "STAGEGATE_FILE (default: migration.yaml in the folder pytest runs in)."
        )
    try:
        migration = load(path)
    except StagegateError as error:
        raise usage_error(f"{error}") from None
    raw_stage, stage_source = _setting(config, "stagegate_stage", "STAGEGATE_STAGE")
    if raw_stage is None:
        stage = migration.stage
    else:
        try:
            stage = int(raw_stage.strip())
        except ValueError:
            stage = -1
        if not 0 <= stage <= migration.last:
            raise usage_error(
                f"{stage_source} {raw_stage!r} is not a stage of {path}; use 0..{migration.last}."
            )
    loaded = StageUnderTest(migration, stage)
    config.stash[_LOADED] = loaded
    return loaded


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any(FIXTURE in getattr(item, "fixturenames", ()) for item in items):
        _load(config)


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    loaded = config.stash.get(_LOADED, None)
    if loaded is None:
        return None
    return f"stagegate: {loaded.migration.file} at stage {loaded.stage} ({loaded.title})"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test's mistaken question about the migration shows as its message, not a traceback."""
    report = yield
    error = call.excinfo.value if call.excinfo is not None else None
    if isinstance(error, pytest.UsageError) and str(error).startswith(PREFIX):
        report.longrepr = str(error)
    return report


@pytest.fixture(scope="session")
def stagegate(pytestconfig: pytest.Config) -> StageUnderTest:
    """The stage under test: flags, active items, artifact rows and selections."""
    return _load(pytestconfig)
