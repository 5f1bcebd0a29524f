"""The ``stagegate`` pytest fixture: the resolved stage under test, for a stage's own tests.

The ``pytest`` check runs a stage's folder in a subprocess with ``STAGEGATE_FILE``
(the absolute path of migration.yaml) and ``STAGEGATE_STAGE`` set. By hand, the same
tests run with ``--stagegate-file PATH --stagegate-stage N``; without either, the
fixture reads ``migration.yaml`` in the folder pytest was started in, at its current
stage. An option beats the environment variable.

``check --all`` runs the pytest folders of all its stages in one session when it can
(``checks/_pytest_session.py``): ``STAGEGATE_STAGES`` then maps each folder (absolute
path) to its stage, the fixture is made once per test module for the stage of the
folder the module is in (``STAGEGATE_STAGE`` is set to it while each test runs), and
``STAGEGATE_REPORT`` names a file that receives each folder's outcome counts.

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
    from stagegate.testing import StageUnderTest

FIXTURE = "stagegate"
_LOADED = pytest.StashKey["StageUnderTest"]()
STAGES = "STAGEGATE_STAGES"
REPORT = "STAGEGATE_REPORT"
_BY_FOLDER = pytest.StashKey[dict[Path, int]]()
_TALLY = pytest.StashKey[dict[str, dict[str, float]]]()
_TALLY_FOLDER = pytest.StashKey[dict[str, str | None]]()


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
    from stagegate.testing import usage_error

    cached = config.stash.get(_LOADED, None)
    if cached is not None:
        return cached
    from stagegate.errors import StagegateError
    from stagegate.testing import StageUnderTest
    from stagegate.validation import load

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
    folders = _folders(config)
    bad = sorted(str(f) for f, n in folders.items() if not 0 <= n <= migration.last)
    if bad:
        raise usage_error(f"${STAGES}: {', '.join(bad)}: not a stage of {path}")
    config.stash[_LOADED] = loaded
    return loaded


def _folders(config: pytest.Config) -> dict[Path, int]:
    """``$STAGEGATE_STAGES``: folder -> stage, when one session runs several stages."""
    from stagegate.testing import usage_error

    found = config.stash.get(_BY_FOLDER, None)
    if found is None:
        import json

        raw = os.environ.get(STAGES, "")
        try:
            data = json.loads(raw) if raw else {}
            found = {Path(folder): int(stage) for folder, stage in data.items()}
        except (ValueError, TypeError, AttributeError):
            raise usage_error(f"${STAGES} is not a JSON object of folder -> stage") from None
        config.stash[_BY_FOLDER] = found
    return found


def _stage_of(config: pytest.Config, path: Path) -> int | None:
    """The stage of the folder holding ``path`` (the innermost one), in a several-stage run."""
    best: tuple[int, int] | None = None
    for folder, stage in _folders(config).items():
        if path == folder or folder in path.parents:
            depth = len(folder.parts)
            if best is None or depth > best[0]:
                best = (depth, stage)
    return None if best is None else best[1]


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
    if isinstance(error, pytest.UsageError):
        from stagegate.testing import PREFIX

        if str(error).startswith(PREFIX):
            report.longrepr = str(error)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """In a several-stage run, ``$STAGEGATE_STAGE`` is the stage of the test that runs."""
    stage = _stage_of(item.config, item.path) if os.environ.get(STAGES) else None
    if stage is None:
        return (yield)
    before = os.environ.get("STAGEGATE_STAGE")
    os.environ["STAGEGATE_STAGE"] = str(stage)
    try:
        return (yield)
    finally:
        if before is None:
            os.environ.pop("STAGEGATE_STAGE", None)
        else:
            os.environ["STAGEGATE_STAGE"] = before


def _tally_folder(config: pytest.Config, file: str) -> str | None:
    """The innermost stage folder holding ``file`` (a node id's path), once per file: every
    test of a file reports three times."""
    known = config.stash.setdefault(_TALLY_FOLDER, {})
    if file not in known:
        path = config.rootpath / file
        folders = [f for f in _folders(config) if path == f or f in path.parents]
        known[file] = str(max(folders, key=lambda f: len(f.parts))) if folders else None
    return known[file]


def _tally(config: pytest.Config, nodeid: str, category: str, seconds: float = 0.0) -> None:
    if not os.environ.get(REPORT):
        return
    folder = _tally_folder(config, nodeid.split("::")[0])
    if folder is None:
        return
    counts = config.stash.setdefault(_TALLY, {}).setdefault(folder, {"seconds": 0.0})
    counts["seconds"] += seconds
    if category:
        counts[category] = counts.get(category, 0) + 1


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed and os.environ.get(REPORT):
        config = _CONFIG[0] if _CONFIG else None
        if config is not None:
            _tally(config, report.nodeid, "error")


_CONFIG: list[pytest.Config] = []


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(REPORT):
        _CONFIG[:] = [config]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _CONFIG and _CONFIG[0] is config:
        _CONFIG.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each folder's counts as pytest's own summary counts them (its teststatus hook)."""
    config = _CONFIG[0] if _CONFIG else None
    if config is None:
        return
    category, _letter, _word = config.hook.pytest_report_teststatus(report=report, config=config)
    _tally(config, report.nodeid, category, report.duration)


def pytest_warning_recorded(nodeid: str) -> None:
    config = _CONFIG[0] if _CONFIG else None
    if config is not None and nodeid:
        _tally(config, nodeid, "warnings")


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(REPORT)
    if not target:
        return
    import json

    tally = session.config.stash.get(_TALLY, {})
    Path(target).write_text(json.dumps(tally, sort_keys=True), encoding="utf-8")


def _scope(fixture_name: str, config: pytest.Config) -> str:
    """Once per session; once per test module when one session runs several stages."""
    return "module" if os.environ.get(STAGES) else "session"


@pytest.fixture(scope=_scope)  # type: ignore[arg-type]
def stagegate(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> StageUnderTest:
    """The stage under test: flags, active items, artifact rows and selections."""
    loaded = _load(pytestconfig)
    if not os.environ.get(STAGES):
        return loaded
    stage = _stage_of(pytestconfig, Path(request.path))
    if stage is None or stage == loaded.stage:
        return loaded
    return type(loaded)(loaded.migration, stage)
