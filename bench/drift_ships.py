#!/usr/bin/env python3
"""What reading the artifact actions costs `stagegate drift` (issue 22).

    .venv/bin/python bench/drift_ships.py [FILES]

In one process, alternating rounds, the median of: the comparison drift made before
issue 22 (the plain workflow reader, names against the model) and drift as it is (the
same reading by ``ci.ships.ShipReader``, which also keeps upload contexts, downloads,
publish steps and remote actions, then follows the files of every run and names each
finding's consequence). On the example's fixture tree (tests/fixtures/cuda-python-tree
with the worked example's model) and on FILES (default 200) generated workflow files
(bench/drift.py's, with the model `init --from-workflows` writes). The figure is the
ratio of the two medians.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drift import generate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "fixtures" / "cuda-python-tree"


def _median(
    fn: Callable[[], object], other: Callable[[], object], rounds: int
) -> tuple[float, float]:
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        for run, into in ((fn, mine), (other, theirs)):
            start = time.perf_counter()
            run()
            into.append(time.perf_counter() - start)
    return statistics.median(mine), statistics.median(theirs)


def measure(root: Path, rounds: int = 5) -> tuple[float, float]:
    from stagegate.ci import drift as drift_module
    from stagegate.ci.workflows import Files, read
    from stagegate.engine import globs
    from stagegate.engine.budget import work_limit
    from stagegate.validation import load

    migration = load(root / "migration.yaml")

    def before() -> object:  # the names alone: what drift compared before issue 22
        reading = read(migration, migration.stage, Files(root))
        with globs.budget(work_limit(migration)):
            return drift_module._Compare(migration, migration.stage, reading).run()

    def now() -> object:
        return drift_module.drift(migration, migration.stage, files=Files(root))

    now()  # warm imports and caches alike
    before()
    return _median(now, before, rounds)


def main(argv: list[str]) -> int:
    files = int(argv[0]) if argv else 200
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-ships-") as tmp:
        example = Path(tmp) / "example"
        shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("migration.yaml", "stages"))
        shutil.copy2(ROOT / "migration.yaml", example / "migration.yaml")
        shutil.copytree(ROOT / "stages", example / "stages")
        generated = Path(tmp) / "generated"
        generated.mkdir()
        generate(generated, files)
        for name, root in (
            ("example fixture tree", example),
            (f"{files} workflow files", generated),
        ):
            now, before = measure(root)
            print(
                f"drift with the artifact actions vs names alone, {name}: {now * 1000:.0f}ms vs "
                f"{before * 1000:.0f}ms = {now / before:.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
