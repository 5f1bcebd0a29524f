#!/usr/bin/env python3
"""`stagegate drift` on a clone of the real cuda-python tree vs parsing its workflow
files with PyYAML's C loader (issue 23: the target is within 3x).

    STAGEGATE_REAL_TREE=/path/to/cuda-python .venv/bin/python bench/real_tree.py [--runs 7]

The clone (at cb56ab9f, see docs/drift.md) is copied to a temporary folder with the
worked example's migration.yaml and stages/ at its top; nothing in it is changed.
Both sides are whole processes, alternated (A B A B ...): `stagegate drift --stage 0`
(warm validation cache, as in CI; and with STAGEGATE_NO_CACHE=1) against a Python
process that loads every `.github/workflows/*.yml` and `.github/actions/*/action.yml`
with `yaml.CLoader`. Without STAGEGATE_REAL_TREE it says so and exits 0: tests and CI
stay offline (the mirror in tests/fixtures/cuda-python-tree is what they read).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Figure, environment, paired

REPO = Path(__file__).resolve().parent.parent
STAGEGATE = str(Path(sys.executable).parent / "stagegate")
PARSE = """\
import glob, yaml
for name in sorted(glob.glob('.github/workflows/*.yml') + glob.glob('.github/actions/*/action.yml')):
    with open(name, encoding='utf-8') as f:
        yaml.load(f, Loader=yaml.CLoader)
"""


def figures(tree: Path, work: Path, runs: int) -> list[Figure]:
    copy = work / "cuda-python"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    shutil.copy2(REPO / "migration.yaml", copy / "migration.yaml")
    shutil.rmtree(copy / "stages", ignore_errors=True)
    shutil.copytree(REPO / "stages", copy / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    env = environment(work)
    cold = {**env, "STAGEGATE_NO_CACHE": "1"}
    parse = [sys.executable, "-c", PARSE]
    drift = [STAGEGATE, "drift", "--stage", "0"]
    return [
        paired(
            "drift (warm cache) vs CLoader parse",
            drift,
            parse,
            cwd=copy,
            env=env,
            target=3.0,
            runs=runs,
        ),
        paired(
            "drift (no cache) vs CLoader parse",
            drift,
            parse,
            cwd=copy,
            env=cold,
            target=3.0,
            runs=runs,
        ),
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    where = os.environ.get("STAGEGATE_REAL_TREE")
    if not where or not (Path(where) / ".github" / "workflows").is_dir():
        print("skipped: set STAGEGATE_REAL_TREE to a clone of cuda-python (docs/drift.md)")
        return 0
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-real-") as tmp:
        found = figures(Path(where), Path(tmp), args.runs)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for f in found:
        print(
            f"{f.name}: {f.subject * 1000:.0f}ms vs {f.baseline * 1000:.0f}ms = {f.ratio:.2f}x "
            f"(target {f.target_text}; peak {f.peak_mib:.1f} MiB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
