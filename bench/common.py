"""What the benchmarks share: one figure type, timing of a whole process, paired runs."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Figure:
    """One comparison: medians of each side and the median of the paired ratios."""

    name: str
    subject: float  # median seconds
    baseline: float
    ratio: float
    target: float
    peak_mib: float  # of the subject
    peak_target: float = float("inf")  # MiB the subject's peak memory must stay under
    seconds_target: float = float("inf")  # seconds the subject's median must stay under

    @property
    def ok(self) -> bool:
        return (
            self.ratio <= self.target
            and self.peak_mib < self.peak_target
            and self.subject < self.seconds_target
        )

    @property
    def target_text(self) -> str:
        shown = [f"{self.target:.3g}x"] if self.target != float("inf") else []
        if self.peak_target != float("inf"):
            shown.append(f"<{self.peak_target:g}MiB")
        if self.seconds_target != float("inf"):
            shown.append(f"<{self.seconds_target:g}s")
        return " ".join(shown) or "-"

    @property
    def judged(self) -> bool:
        return self.target_text != "-"


def environment(work: Path) -> dict[str, str]:
    """The environment of measured runs: a private stagegate cache, and byte-code cached
    as in any installed copy (pip compiles on install), kept out of the source tree."""
    env = {**os.environ, "STAGEGATE_CACHE_DIR": str(work / "cache")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall time, peak RSS (MiB) and output of one run of ``argv`` (output to a file, so
    that neither side waits on a pipe). Exit 0 and 1 are results; anything else fails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code not in (0, 1):
            message = err.read().decode("utf-8", "replace")
            raise SystemExit(f"benchmark command failed ({code}): {' '.join(argv)}\n{message}")
        return elapsed, usage.ru_maxrss / 1024, out.read()


@dataclass
class Case:
    """One command measured in rounds beside others: its times and peak memory."""

    name: str
    argv: Sequence[str]
    times: list[float]
    peaks: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def peak(self) -> float:
        return max(self.peaks)


def rounds(
    cases: Sequence[tuple[str, Sequence[str]]],
    *,
    cwd: Path,
    env: dict[str, str],
    runs: int,
    warmup: int = 1,
) -> list[Case]:
    """Run every case once per round, round after round (A B C A B C ...), so that machine
    noise hits all of them alike; ``ratio`` then pairs two cases round by round."""
    measured = [Case(name, argv, [], []) for name, argv in cases]
    for number in range(warmup + runs):
        for case in measured:
            elapsed, peak, _ = timed(case.argv, cwd, env)
            if number >= warmup:
                case.times.append(elapsed)
                case.peaks.append(peak)
    return measured


def ratio(subject: Case, baseline: Case) -> float:
    """The median of the per-round ratios."""
    return statistics.median(s / b for s, b in zip(subject.times, baseline.times, strict=True))


def paired(
    name: str,
    subject: Sequence[str],
    baseline: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    target: float,
    runs: int,
    warmup: int = 2,
    baseline_cwd: Path | None = None,
) -> Figure:
    """Alternate the two commands (A B A B ...) so that machine noise hits both alike
    (``baseline_cwd``: where the baseline runs, if not in ``cwd``)."""
    there = baseline_cwd or cwd
    for _ in range(warmup):
        timed(subject, cwd, env)
        timed(baseline, there, env)
    ours, theirs, ratios, peaks = [], [], [], []
    for _ in range(runs):
        s, peak, _ = timed(subject, cwd, env)
        b, _, _ = timed(baseline, there, env)
        ours.append(s)
        theirs.append(b)
        ratios.append(s / b)
        peaks.append(peak)
    return Figure(
        name,
        statistics.median(ours),
        statistics.median(theirs),
        statistics.median(ratios),
        target,
        max(peaks),
    )
