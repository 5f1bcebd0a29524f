#!/usr/bin/env python3
"""`stagegate drift` on a clone of the real cuda-python tree vs parsing its workflow
files with PyYAML's C loader (issue 23: the target is within 3x).

    .venv/bin/python bench/real_tree.py [/path/to/cuda-python] [--runs 7]
    STAGEGATE_REAL_TREE=/path/to/cuda-python .venv/bin/python bench/real_tree.py

The clone (at cb56ab9f, see docs/drift.md) is copied to a temporary folder with the
worked example's migration.yaml and stages/ at its top; nothing in it is changed.
Both sides are whole processes, alternated (A B A B ...): `stagegate drift --stage 0`
(warm validation cache, as in CI; and with STAGEGATE_NO_CACHE=1) against a Python
process that loads every `.github/workflows/*.yml` and `.github/actions/*/action.yml`
with `yaml.CLoader`. Without a tree (argument or STAGEGATE_REAL_TREE) it says so and exits 0: tests and CI
stay offline (the mirror in tests/fixtures/cuda-python-tree is what they read).

Beside each wall-clock pair, the same two commands' CPU time (user + system of the
child, alternated the same way): on a machine shared with other work the wall clock of
a short process is mostly waiting, and the CPU ratio is the one that says what the
code costs.

A third figure (issue 23), in CPU time: `stagegate check --all` on a git copy (the
example runs the check `workflows` at every stage, an invariant: at the current stage and
as readiness at every stage ahead; and `flags-wired` at stages 1 to 6) against one
`stagegate drift` of the same copy, one workflow file changed before each (so that drift
reads too): the workflows are read once for the stages where nothing
the reading takes from the stage differs (reported, not judged: check --all runs every
other check of the example too, its pytest sessions included).

The drift of files unchanged since the last run prints the output it remembered
(cli/remembered.py: every file the reading asked for gets the same answer); the figure
"changed since the last run" appends a comment line to one workflow file before each
timed run, so each is read afresh (the parse cache warm for the other files): what a
pull request that edits one workflow costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Figure, environment, paired

REPO = Path(__file__).resolve().parent.parent
EDITED = ".github/workflows/build-wheel.yml"
STAGEGATE = str(Path(sys.executable).parent / "stagegate")
PARSE = """\
import glob, yaml
for name in sorted(glob.glob('.github/workflows/*.yml') + glob.glob('.github/actions/*/action.yml')):
    with open(name, encoding='utf-8') as f:
        yaml.load(f, Loader=yaml.CLoader)
"""


def cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """User + system seconds of one run of ``argv`` (its children's included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_pair(
    name: str,
    subject: list[str],
    baseline: list[str],
    cwd: Path,
    env: dict[str, str],
    runs: int,
    before: Callable[[], None] | None = None,
) -> str:
    """The CPU time of ``subject`` and ``baseline``, alternated: medians and the median
    of the paired ratios, as a line of the report (after a run of each: the cache, the
    byte-code). ``before``: done (not timed) before each run of either."""
    cpu(subject, cwd, env)
    cpu(baseline, cwd, env)
    ours, theirs = [], []
    for _ in range(runs):
        if before is not None:
            before()
        ours.append(cpu(subject, cwd, env))
        if before is not None:
            before()
        theirs.append(cpu(baseline, cwd, env))
    ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    return (
        f"{name}, CPU time: {statistics.median(ours) * 1000:.0f}ms vs "
        f"{statistics.median(theirs) * 1000:.0f}ms = {ratio:.2f}x"
    )


def figures(tree: Path, work: Path, runs: int) -> tuple[list[Figure], list[str]]:
    copy = work / "cuda-python"
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"))
    shutil.copy2(REPO / "migration.yaml", copy / "migration.yaml")
    shutil.rmtree(copy / "stages", ignore_errors=True)
    shutil.copytree(REPO / "stages", copy / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    env = environment(work)
    cold = {**env, "STAGEGATE_NO_CACHE": "1"}
    parse = [sys.executable, "-c", PARSE]
    drift = [STAGEGATE, "drift", "--stage", "0"]
    gated = work / "cuda-python-gated"
    shutil.copytree(copy, gated)
    committer = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "tree"]):
        subprocess.run(["git", *command], cwd=gated, env=committer, check=True)
    check_all = [STAGEGATE, "check", "--all"]
    edited = copy / EDITED
    text = edited.read_text(encoding="utf-8")
    toggle = iter(range(1_000_000))

    def changed(tree: Path) -> Callable[[], None]:
        def one_file_changed() -> None:  # a pull request's edit: a comment line, new each run
            (tree / EDITED).write_text(f"{text}# edit {next(toggle)}\n", encoding="utf-8")

        return one_file_changed

    cpu_lines = [
        cpu_pair(
            f"check --all vs one drift, {EDITED} changed before each (warm cache)",
            check_all,
            drift,
            gated,
            env,
            runs,
            before=changed(gated),
        ),
        cpu_pair(
            "drift, files unchanged since the last run (remembered) vs CLoader parse",
            drift,
            parse,
            copy,
            env,
            runs,
        ),
        cpu_pair(
            f"drift, {EDITED} changed since the last run (read afresh) vs CLoader parse",
            drift,
            parse,
            copy,
            env,
            runs,
            before=changed(copy),
        ),
        cpu_pair("drift (no cache) vs CLoader parse", drift, parse, copy, cold, runs),
    ]
    edited.write_text(text, encoding="utf-8")
    (gated / EDITED).write_text(text, encoding="utf-8")
    return [
        paired(
            "drift, files unchanged since the last run (remembered) vs CLoader parse",
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
    ], cpu_lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", nargs="?", help="a clone of cuda-python at cb56ab9f")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    where = args.tree or os.environ.get("STAGEGATE_REAL_TREE")
    if not where or not (Path(where) / ".github" / "workflows").is_dir():
        print("skipped: pass a clone of cuda-python or set STAGEGATE_REAL_TREE (docs/drift.md)")
        return 0
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-real-") as tmp:
        found, cpu_lines = figures(Path(where), Path(tmp), args.runs)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for f in found:
        print(
            f"{f.name}: {f.subject * 1000:.0f}ms vs {f.baseline * 1000:.0f}ms = {f.ratio:.2f}x "
            f"(target {f.target_text}; peak {f.peak_mib:.1f} MiB)"
        )
    for line in cpu_lines:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
