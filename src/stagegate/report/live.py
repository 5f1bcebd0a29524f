"""``check`` as it runs: stage headers, each check's lines with its duration, a live line.

``Live`` is an ``checks.runner.Observer``. It writes through the ``write`` callback the
command line gives it (nothing here opens a stream): on a terminal, a line redrawn in
place while a check runs; elsewhere (a CI log), a line every ``heartbeat`` seconds, so
that a job running a long pytest or command check never looks hung.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from stagegate.checks.base import Result
from stagegate.model import Check, Migration
from stagegate.records import record, replace
from stagegate.report import printable
from stagegate.report import results as render
from stagegate.words import one_line

HEARTBEAT_SECONDS = 30.0
"""In a log that is not a terminal: a "still running" line this often during a long check."""
LIVE_AFTER_SECONDS = 1.0
"""On a terminal: a check shows its live line once it has run this long (no flicker)."""
CLEAR = "\r\x1b[K"
SPINNER = "|/-\\"


@record
class _Running:
    stage: int
    label: str
    began: float
    beats: int = 0  # the heartbeat lines written for it so far


class Live:
    """Streams the results of ``check`` through ``write`` as they come.

    ``show_results`` False: only the live line and the heartbeat (for ``--format json``,
    whose one object comes at the end, on standard output). ``quiet``: only failures
    (with their stage's header) and the closing line."""

    def __init__(
        self,
        migration: Migration | None,
        write: Callable[[str], None],
        *,
        tty: bool,
        quiet: bool = False,
        show_results: bool = True,
        heartbeat: float | None = None,
        header: Callable[[int], str] | None = None,
    ) -> None:
        self.migration = migration
        self.header = header
        """A stage's header line (default: ``stage N: title`` of ``migration``)."""
        self.stages_started = 0
        self._write = write
        self.tty = tty
        self.quiet = quiet
        self.show_results = show_results
        self.heartbeat = HEARTBEAT_SECONDS if heartbeat is None else heartbeat
        self.results: list[Result] = []
        self.seconds: list[float] = []
        self.checks_run = 0
        self.skipped: list[tuple[int, str, str]] = []
        self._header_due: int | None = None
        self._running: _Running | None = None
        self._drawn = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the observer

    def stage_started(self, stage: int) -> None:
        with self._lock:
            self.stages_started += 1
            self._header_due = stage
            if self.show_results and not self.quiet:
                self._emit(self._header(stage))
                self._header_due = None

    def _header(self, stage: int) -> str:
        if self.header is not None:
            return self.header(stage)
        return render.stage_header(self.migration, stage) if self.migration else f"stage {stage}"

    def check_started(self, stage: int, check: Check) -> None:
        with self._lock:
            self._running = _Running(stage, check.describe(), time.monotonic())
        if self._thread is None:
            self._thread = threading.Thread(target=self._tick, name="stagegate-live", daemon=True)
            self._thread.start()

    def check_finished(
        self, stage: int, check: Check, results: Sequence[Result], seconds: float
    ) -> None:
        with self._lock:
            self._running = None
            self._clear()
            self.checks_run += 1
            for item in results:
                self.results.append(item)
                self.seconds.append(seconds)
                if not self.show_results or (self.quiet and item.ok):
                    continue
                if self._header_due is not None:
                    self._emit(self._header(self._header_due))
                    self._header_due = None
                for line in render.result_lines(item, seconds):
                    self._emit(line)

    def check_skipped(self, stage: int, check: Check, reason: str) -> None:
        with self._lock:
            self.skipped.append((stage, check.describe(), reason))
            if self.show_results and not self.quiet:
                self._emit(render.skipped_line(check.describe(), reason))

    # -- the end

    def stop(self) -> None:
        """Stop the live line and erase it (also when a check raised)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            self._clear()

    def __enter__(self) -> Live:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def close(self, *, stopped: int | None = None) -> None:
        """Stop the live line; print the closing line (when results are shown)."""
        self.stop()
        if self.show_results:
            with self._lock:
                self._emit(render.closing(self.results, stopped=stopped))

    # -- drawing

    def _emit(self, line: str) -> None:
        self._write(printable(one_line(line)) + "\n")

    def _clear(self) -> None:
        if self._drawn:
            self._write(CLEAR)
            self._drawn = False

    def _tick(self) -> None:
        frame = 0
        while not self._done.wait(0.25 if self.tty else min(1.0, self.heartbeat / 4)):
            with self._lock:
                running = self._running
                if running is None:
                    continue
                spent = time.monotonic() - running.began
                if self.tty:
                    if spent >= LIVE_AFTER_SECONDS:
                        frame += 1
                        self._write(
                            f"{CLEAR}  {SPINNER[frame % len(SPINNER)]}     stage {running.stage}: "
                            f"{printable(one_line(running.label))}: running, {render.duration(spent)}"
                        )
                        self._drawn = True
                elif spent >= self.heartbeat * (running.beats + 1):
                    self._running = running = replace(running, beats=running.beats + 1)
                    self._emit(
                        f"  ..    stage {running.stage}: {running.label}: still running after "
                        f"{render.duration(self.heartbeat * running.beats)}"
                    )
