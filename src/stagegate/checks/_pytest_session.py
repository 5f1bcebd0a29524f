"""One pytest session for the pytest checks of every stage of ``check --all``.

Starting pytest costs about half a second before the first test runs, and ``check
--all`` on the worked example ran seven pytest processes one after the other. Inside
``shared_session`` (``runner.run_all``) the first pytest check runs every stage's
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
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from stagegate.checks.base import Context
from stagegate.model import Check, Migration
from stagegate.records import record

if TYPE_CHECKING:
    import subprocess

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
ORDER = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warnings", "error")
"""pytest's own order of the counts in its summary line."""


@record(eq=False)
class Shared:
    migration: Migration
    root: Path
    running: Running | None
    """None: fewer than two folders can share a session, so every pytest check runs alone."""


_shared: ContextVar[Shared | None] = ContextVar("stagegate_pytest_session", default=None)


@contextmanager
def shared_session(migration: Migration, root: Path) -> Iterator[None]:
    """Let the pytest checks of ``migration``'s stages, run from ``root``, share a session.

    The session starts at once and runs while the model checks do (two cores: the model
    checks cost about what pytest's start does); the first pytest check waits for it."""
    running = _start(migration, root)
    token = _shared.set(Shared(migration, root, running))
    try:
        yield
    finally:
        _shared.reset(token)
        if running is not None:
            running.stop()


def pending() -> bool:
    """Whether a shared session still runs: a pytest check would wait for it."""
    shared = _shared.get()
    running = shared.running if shared is not None else None
    return running is not None and running.passed is None and running.proc.poll() is None


def summary(ctx: Context, rel: str) -> str | None:
    """The summary line of ``rel``'s tests where they passed in the shared session; None
    where the check must run pytest on its own (not shared, or anything but a pass)."""
    shared = _shared.get()
    if shared is None or shared.migration is not ctx.migration or shared.root != ctx.root:
        return None
    if getattr(ctx, "tests", None) is not None:
        return None  # verify-pr's checks run the base's copies, isolated
    if shared.running is None:
        return None
    return shared.running.finish().get((ctx.stage, rel))


class Running:
    """The shared session's process: its output goes to a file, so that it never waits
    on a pipe while stagegate runs the other checks."""

    def __init__(
        self,
        chosen: dict[tuple[int, str], Path],
        argv: list[str],
        env: dict[str, str],
        root: Path,
        timeout: float,
    ) -> None:
        import subprocess
        import tempfile
        import time

        self.chosen = chosen
        self.passed: dict[tuple[int, str], str] | None = None
        self.folder = tempfile.TemporaryDirectory(prefix="stagegate-pytest-")
        self.report = Path(self.folder.name) / "report.json"
        env["STAGEGATE_REPORT"] = str(self.report)
        self.output = open(Path(self.folder.name) / "output.txt", "wb")  # noqa: SIM115
        self.deadline = time.monotonic() + timeout
        self.proc = subprocess.Popen(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def finish(self) -> dict[tuple[int, str], str]:
        """Wait for the session (to its deadline), once: the summary of each folder that passed."""
        if self.passed is None:
            self.passed = self._wait()
        return self.passed

    def _wait(self) -> dict[tuple[int, str], str]:
        code = _exit_code(self.proc, self.deadline)
        if code is None:
            self.stop()
            return {}
        try:
            tally = json.loads(self.report.read_text(encoding="utf-8")) if code in (0, 1) else {}
        except (OSError, ValueError):
            tally = {}
        self.stop()
        passed = {}
        for key, folder in self.chosen.items():
            counts = tally.get(str(folder)) if isinstance(tally, dict) else None
            if not isinstance(counts, dict) or counts.get("failed") or counts.get("error"):
                continue
            ran = sum(int(counts.get(k, 0)) for k in ("passed", "skipped", "xfailed", "xpassed"))
            if ran:
                passed[key] = _line(counts)
        return passed

    def stop(self) -> None:
        """Stop the session if it still runs (its whole process group), and clean up."""
        import signal

        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()
        self.output.close()
        self.folder.cleanup()


def _exit_code(proc: subprocess.Popen[bytes], deadline: float) -> int | None:
    """``proc``'s exit code, or None when it still runs at ``deadline`` (``time.monotonic``).

    Where the system has process file descriptors (Linux), the wait blocks until the exit
    or the deadline: ``Popen.wait(timeout)`` sleeps in steps growing to 50 ms, and so saw
    the session end up to 50 ms late, a tenth of the example's whole ``check --all``."""
    import math
    import select
    import subprocess
    import time

    remaining = max(0.0, deadline - time.monotonic())
    try:
        handle = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, or already collected
        try:
            return proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            return None
    try:
        waiting = select.poll()  # not select(): a descriptor past 1023 is fine
        waiting.register(handle, select.POLLIN)
        ready = waiting.poll(math.ceil(remaining * 1000))
    finally:
        os.close(handle)
    return proc.wait() if ready else proc.poll()


def _python_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.py") if p.is_file()]


def _eligible(migration: Migration, root: Path) -> dict[tuple[int, str], Path]:
    from stagegate.fs import escapes

    wanted: dict[str, list[int]] = {}
    for stage in range(migration.last + 1):
        ctx = Context(migration, stage, root)
        for check in migration.checks_at(stage):
            if check.kind != "pytest":
                continue
            rel = target(ctx, check)
            if rel is None or escapes(root, rel):
                continue
            if check.args.get("host-conftest") is True or not _in_stages(migration, root, rel):
                continue  # runs alone: the session's rootdir and conftests are the stages'
            wanted.setdefault(rel, []).append(stage)
    chosen: dict[tuple[int, str], Path] = {}
    names: dict[str, list[tuple[int, str]]] = {}
    for rel, stages in wanted.items():
        folder = (root / rel).resolve()
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


def isolation(top: Path, stages_dir: str, rel: str, *, host: bool = False) -> list[str]:
    """The options that keep a host repository's pytest set-up out of a stage's tests.

    A repository's root ``pytest.ini`` (its ``addopts``, plugins) and root ``conftest.py``
    (imports of the project's own packages) are the norm, and are not the stage tests'.
    Unless the check says ``host-conftest: true``, pytest runs with the stages folder
    (for a ``path`` outside it, the path's own folder) as its rootdir and as the highest
    folder whose ``conftest.py`` loads, and with the tests' own folder's ``pytest.ini``,
    else that folder's, as its configuration (none when neither has one). ``top``: the migration's folder (in
    verify-pr, the base's test copy)."""
    if host:
        return []
    stages = (top / stages_dir).resolve()
    target = (top / rel).resolve()
    folder = target if target.is_dir() else target.parent
    cut = stages if stages == folder or stages in folder.parents else folder
    ini = next(
        (d / n for d in (folder, cut) for n in ("pytest.ini", ".pytest.ini") if (d / n).is_file()),
        None,
    )
    return [
        *("-c", str(ini) if ini is not None else os.devnull),
        f"--rootdir={cut}",
        f"--confcutdir={cut}",
    ]


def _in_stages(migration: Migration, root: Path, rel: str) -> bool:
    stages = (root / migration.stages_dir).resolve()
    return stages in (root / rel).resolve().parents


def _start(migration: Migration, root: Path) -> Running | None:
    """Start the session of the shareable folders; None when fewer than two can share."""
    from importlib.util import find_spec

    chosen = _eligible(migration, root)
    if len(chosen) < 2 or any(find_spec(n) is None for n in ("pytest", "pytest_snapshot")):
        return None
    timeout = sum(
        float(check.args.get("timeout", 600.0))
        for stage in range(migration.last + 1)
        for check in migration.checks_at(stage)
        if check.kind == "pytest"
    )
    env = dict(os.environ)
    env["STAGEGATE_FILE"] = str((root / Path(migration.file).name).resolve())
    env["STAGEGATE_STAGES"] = json.dumps({str(f): stage for (stage, _), f in chosen.items()})
    env.pop("STAGEGATE_STAGE", None)
    env.pop("PYTEST_ADDOPTS", None)
    (_, first), *_rest = chosen
    argv = [
        *(sys.executable, "-m", "pytest", "-q", "--no-header"),
        *("-p", "no:cacheprovider", "-p", "stagegate"),
        *isolation(root, migration.stages_dir, first),
        *(f"./{rel}" if rel.startswith("-") else rel for _, rel in chosen),
    ]
    return Running(chosen, argv, env, root, timeout)


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


def target(ctx: Context, check: Check) -> str | None:
    """What the check runs: in verify-pr, the base's folder for the stage (``ctx.reference``),
    wherever the head moved its stages."""
    return ctx.reference.pytest_folder(ctx.stage, check)
