"""One pytest session for the pytest checks of every stage of ``check --all``.

Starting pytest costs about half a second before the first test runs, and ``check
--all`` on the worked example ran seven pytest processes one after the other. Inside
``shared_session`` (``acceptance.run_all``) the first pytest check runs every stage's
folder in one process instead: the ``stagegate`` fixture gives each test module the
stage of its folder (``pytest_plugin``: ``$STAGEGATE_STAGES``) and the plugin writes
each folder's counts, as pytest's own summary counts them, to a report file.

A folder that passed there passes with that summary. Anything else is run again on
its own, exactly as before, so a failure reads as it always has: a folder whose tests
failed, errored or were not collected; a session that did not finish; and folders
that cannot share a process safely, which never join it: a folder run at two
stages, one holding an ``__init__.py`` or a pytest configuration file (its own
rootdir and ini), or two folders holding Python files of one name (each would
import the other's ``helpers``, ``conftest`` or test module). verify-pr runs one
stage's checks with the base's test files (``Context.tests``) and never shares.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from ..model import Check, Migration
from ._base import Context

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
ORDER = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warnings", "error")
"""pytest's own order of the counts in its summary line."""


@dataclass
class Shared:
    migration: Migration
    root: Path
    summaries: dict[tuple[int, str], str] | None = None


_shared: ContextVar[Shared | None] = ContextVar("stagegate_pytest_session", default=None)


@contextmanager
def shared_session(migration: Migration, root: Path) -> Iterator[None]:
    """Let the pytest checks of ``migration``'s stages, run from ``root``, share a session."""
    token = _shared.set(Shared(migration, root))
    try:
        yield
    finally:
        _shared.reset(token)


def summary(ctx: Context, check: Check, rel: str) -> str | None:
    """The summary line of ``rel``'s tests where they passed in the shared session; None
    where the check must run pytest on its own (not shared, or anything but a pass)."""
    shared = _shared.get()
    if shared is None or shared.migration is not ctx.migration or shared.root != ctx.root:
        return None
    if getattr(ctx, "tests", None) is not None:
        return None  # verify-pr's checks run the base's copies, isolated
    if shared.summaries is None:
        shared.summaries = _run(shared, float(check.args.get("timeout", ctx.timeout)))
    return shared.summaries.get((ctx.stage, rel))


def _python_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.py") if p.is_file()]


def _eligible(shared: Shared) -> dict[tuple[int, str], Path]:
    from ..acceptance import checks_at
    from .pytest_check import _escapes, target

    wanted: dict[str, list[int]] = {}
    for stage in range(shared.migration.last + 1):
        ctx = Context(shared.migration, stage, shared.root)
        for check in checks_at(shared.migration, stage):
            if check.kind != "pytest":
                continue
            rel = target(ctx, check)
            if rel is not None and not _escapes(shared.root, rel):
                wanted.setdefault(rel, []).append(stage)
    chosen: dict[tuple[int, str], Path] = {}
    names: dict[str, list[tuple[int, str]]] = {}
    for rel, stages in wanted.items():
        folder = (shared.root / rel).resolve()
        if len(stages) != 1 or not folder.is_dir():
            continue
        files = _python_files(folder)
        if any(p.name == "__init__.py" for p in files) or any(
            (d / name).exists()
            for d in (folder, *[p.parent for p in files])
            for name in CONFIG_FILES
        ):
            continue
        chosen[(stages[0], rel)] = folder
        for name in {p.name for p in files}:
            names.setdefault(name, []).append((stages[0], rel))
    for sharing in names.values():
        if len(sharing) > 1:
            for key in sharing:
                chosen.pop(key, None)
    return chosen


def _run(shared: Shared, timeout: float) -> dict[tuple[int, str], str]:
    """Run the shareable folders in one session: the summary of each folder that passed."""
    from .command import bounded

    chosen = _eligible(shared)
    if len(chosen) < 2:
        return {}
    env = dict(os.environ)
    env["STAGEGATE_FILE"] = str((shared.root / Path(shared.migration.file).name).resolve())
    env["STAGEGATE_STAGES"] = json.dumps({str(f): stage for (stage, _), f in chosen.items()})
    env.pop("STAGEGATE_STAGE", None)
    with tempfile.TemporaryDirectory(prefix="stagegate-pytest-") as tmp:
        report = Path(tmp) / "report.json"
        env["STAGEGATE_REPORT"] = str(report)
        argv = [
            *(sys.executable, "-m", "pytest", "-q", "--no-header"),
            *("-p", "no:cacheprovider", "-p", "stagegate"),
            *(f"./{rel}" if rel.startswith("-") else rel for _, rel in chosen),
        ]
        code, _output = bounded(argv, cwd=shared.root, env=env, timeout=timeout * len(chosen))
        if code not in (0, 1) or not report.is_file():
            return {}
        try:
            tally = json.loads(report.read_text(encoding="utf-8"))
        except ValueError:
            return {}
    passed = {}
    for key, folder in chosen.items():
        counts = tally.get(str(folder))
        if counts is None or counts.get("failed") or counts.get("error"):
            continue
        ran = sum(int(counts.get(k, 0)) for k in ("passed", "skipped", "xfailed", "xpassed"))
        if ran:
            passed[key] = _line(counts)
    return passed


def _line(counts: dict[str, float]) -> str:
    """pytest's summary line: ``5 passed, 1 warning in 0.45s``."""
    parts = []
    for key in (*ORDER, *sorted(k for k in counts if k not in ORDER and k != "seconds")):
        n = int(counts.get(key, 0))
        if not n:
            continue
        noun = {
            "warnings": "warning" if n == 1 else "warnings",
            "error": "error" if n == 1 else "errors",
        }
        parts.append(f"{n} {noun.get(key, key)}")
    seconds = float(counts.get("seconds", 0.0))
    shown = f"{seconds:.2f}s"
    if seconds >= 60:
        import datetime

        shown += f" ({datetime.timedelta(seconds=int(seconds))})"
    return f"{', '.join(parts)} in {shown}"
