#!/usr/bin/env python3
"""Where the test suite spends its CPU time: per test, per file, and the processes it starts.

    PYTHONPATH=bench SUITE_CPU=/tmp/cpu.json .venv/bin/python -m pytest -q -p suite_cpu
    .venv/bin/python bench/suite_cpu.py /tmp/cpu.json              # the 40 costliest of each
    .venv/bin/python bench/suite_cpu.py /tmp/cpu.json --top 20 --base /tmp/before.json

Loaded as a pytest plugin (``-p suite_cpu``), it records for every test (setup, call and
teardown) the CPU seconds of the pytest process and of the child processes it waited
for (``RUSAGE_CHILDREN``: git, stagegate, the pytest runs of the ``pytest`` check), and
how many processes it started, by program: ``git``, ``python`` (any Python, the
console script ``stagegate`` included) and others. Run as a script, it prints the
totals, the costliest files and tests, and with ``--base`` the same figures of another
run beside them. CPU time, not wall time: the machine is shared, and CPU seconds are
what the suite's budget (issue 21: 240 s, children included) counts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

_ROWS: dict[str, dict[str, float]] = {}


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _program(args: Any) -> str:
    first = args[0] if isinstance(args, (list, tuple)) else str(args).split()[0]
    name = os.path.basename(os.fsdecode(first))
    if name == "git":
        return "git"
    return "python" if name.startswith("python") or name == "stagegate" else "other"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    started = {"git": 0, "python": 0, "other": 0}
    real = subprocess.Popen.__init__

    def counted(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        started[_program(args)] += 1
        real(self, args, *rest, **kwargs)

    own, children = _cpu()
    subprocess.Popen.__init__ = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = real  # type: ignore[method-assign]
    own_after, children_after = _cpu()
    _ROWS[item.nodeid] = {"self": own_after - own, "child": children_after - children, **started}


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("SUITE_CPU")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(_ROWS, f)


# --------------------------------------------------------------------------- the report


def _cost(row: dict[str, float]) -> float:
    return row["self"] + row["child"]


def _files(rows: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    files: dict[str, dict[str, float]] = defaultdict(
        lambda: {"cpu": 0.0, "tests": 0, "git": 0, "python": 0}
    )
    for test, row in rows.items():
        f = files[test.split("::")[0]]
        f["cpu"] += _cost(row)
        f["tests"] += 1
        f["git"] += row["git"]
        f["python"] += row["python"]
    return files


def report(rows: dict[str, dict[str, float]], top: int, base: dict[str, Any] | None) -> None:
    def total(of: dict[str, dict[str, float]]) -> str:
        return (
            f"{len(of)} tests, {sum(map(_cost, of.values())):.1f} CPU-s "
            f"({sum(r['child'] for r in of.values()):.1f} in child processes), "
            f"{sum(r['git'] for r in of.values()):.0f} git and "
            f"{sum(r['python'] for r in of.values()):.0f} Python processes"
        )

    print("this run:", total(rows))
    if base is not None:
        print("base run:", total(base))
    files = _files(rows)
    before = _files(base) if base is not None else {}
    print(f"\nthe {top} costliest files (CPU-s, tests, git, python[, base CPU-s])")
    for name, f in sorted(files.items(), key=lambda kv: -kv[1]["cpu"])[:top]:
        was = f"  (base {before[name]['cpu']:.1f})" if name in before else ""
        print(f"{f['cpu']:7.1f} {f['tests']:5.0f} {f['git']:6.0f} {f['python']:4.0f}  {name}{was}")
    print(f"\nthe {top} costliest tests (CPU-s: own + children)")
    for name, row in sorted(rows.items(), key=lambda kv: -_cost(kv[1]))[:top]:
        print(f"{_cost(row):6.2f} = {row['self']:5.2f} + {row['child']:5.2f}  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="the JSON file a run with -p suite_cpu wrote")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--base", help="another run's JSON file, to compare")
    args = parser.parse_args(argv)
    with open(args.run, encoding="utf-8") as f:
        rows = json.load(f)
    base = None
    if args.base:
        with open(args.base, encoding="utf-8") as f:
            base = json.load(f)
    report(rows, args.top, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
