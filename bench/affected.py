#!/usr/bin/env python3
"""`stagegate affected` on a large repository against `git diff --name-only` plus start-up.

    .venv/bin/python bench/affected.py                   # 100,000 files, 1,000 producers
    .venv/bin/python bench/affected.py --files 20000 --producers 200 --runs 5

Made here, in a temporary directory: a repository of ``--files`` tracked files in one
folder per producer (``pkgNNNN/src/...`` its sources, ``pkgNNNN/tests/...`` its tests),
a shared helper folder that every tenth package's tests reach through a symbolic link,
and a migration with ``--producers`` producers (two Python versions each), one test
consumer per ten producers (its inputs `run: baseline`, its `paths` the tests), and a
release; a second commit changes ``--changed`` files spread over the packages and one
shared helper. The baseline run's file lists every artifact at the first commit.

The figures: ``stagegate affected --base main --head topic --baseline FILE --format
json`` against one shell that runs ``git diff --name-only main topic`` and then
``stagegate validate`` (the diff the planner needs plus stagegate's start-up with the
migration loaded, which every command on it pays; target 1.5x), and the same with
``stagegate --version`` (a bare process start; reported, not judged). Paired round by
round. The plan is checked against what the generator changed before anything is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import environment, paired, timed

BIN = Path(sys.executable).parent
STAGEGATE = str(BIN / "stagegate")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def migration(producers: int) -> str:
    lines = [
        "version: 1",
        "migration: large-plan",
        "stage: 0",
        "axes:",
        '  py: ["312", "313"]',
        '  sha: {pattern: "[0-9a-f]{40}"}',
        "producers:",
    ]
    for n in range(producers):
        lines += [
            f"  pkg{n:04d}:",
            f'    artifacts: ["pkg{n:04d}-py{{py}}-{{sha}}"]',
            f'    paths: ["pkg{n:04d}/src/**", "pkg{n:04d}/pyproject.toml"]',
        ]
    lines.append("consumers:")
    for group in range(0, producers, 10):
        members = range(group, min(group + 10, producers))
        lines += [
            f"  tests{group // 10:03d}:",
            "    paths: [" + ", ".join(f'"pkg{n:04d}/tests/**"' for n in members) + "]",
            "    inputs:",
        ]
        for n in members:
            lines += [
                f'      - select: "pkg{n:04d}-py{{py}}-{{sha}}"',
                f"        from: [pkg{n:04d}]",
                "        run: baseline",
            ]
    lines += [
        "releases:",
        "  everything:",
        '    tags: ["v*"]',
        '    select: ["pkg*"]',
    ]
    return "\n".join(lines) + "\n"


def git(top: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=top,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def make(top: Path, files: int, producers: int, changed: int) -> tuple[str, set[str]]:
    """The repository; returns the base commit and the packages whose sources changed."""
    top.mkdir(parents=True)
    (top / "migration.yaml").write_text(migration(producers), encoding="utf-8")
    (top / "stages").mkdir()
    shared = top / "shared" / "helpers"
    shared.mkdir(parents=True)
    for h in range(10):
        (shared / f"h{h}.py").write_text(f"HELPER = {h}\n")
    per = max(1, (files - 11) // producers)
    for n in range(producers):
        pkg = top / f"pkg{n:04d}"
        (pkg / "src").mkdir(parents=True)
        (pkg / "tests").mkdir()
        (pkg / "pyproject.toml").write_text(f"[project]\nname = 'pkg{n}'\n")
        for i in range(per - 1):
            where = pkg / ("tests" if i % 4 == 3 else "src") / f"m{i:03d}.py"
            where.write_text(f"# {n} {i}\nVALUE = {i}\n")
        if n % 10 == 0:
            os.symlink("../../shared/helpers", pkg / "tests" / "helpers")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "-c", "gc.auto=0", "commit", "-q", "-m", "base")
    base = git(top, "rev-parse", "HEAD").strip()
    git(top, "checkout", "-q", "-b", "topic")
    touched = set()
    step = max(1, producers * (per - 1) // max(1, changed))
    for count, k in enumerate(range(0, producers * (per - 1), step)):
        if count >= changed:
            break
        n, i = divmod(k, per - 1)
        where = top / f"pkg{n:04d}" / ("tests" if i % 4 == 3 else "src") / f"m{i:03d}.py"
        where.write_text(where.read_text() + "VALUE += 1\n")
        if i % 4 != 3:
            touched.add(f"pkg{n:04d}")
    (shared / "h0.py").write_text("HELPER = -1\n")
    git(top, "-c", "gc.auto=0", "commit", "-q", "-am", "topic")
    return base, touched


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--producers", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=300)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-affected-") as tmp:
        work = Path(tmp)
        top = work / "repo"
        base, touched = make(top, args.files, args.producers, args.changed)
        names = [f"pkg{n:04d}-py{v}-{base}" for n in range(args.producers) for v in ("312", "313")]
        baseline = work / "baseline.json"
        baseline.write_text(json.dumps({"sha": base, "artifacts": names}))
        env = environment(work)
        ours = [
            STAGEGATE, "affected", "--base", "main", "--head", "topic",
            "--baseline", str(baseline), "--format", "json",
        ]  # fmt: skip
        bare = f"git diff --name-only main topic >/dev/null && {STAGEGATE} --version >/dev/null"
        loaded = f"git diff --name-only main topic >/dev/null && {STAGEGATE} validate >/dev/null"
        # The answer first: exactly the changed packages rebuild, nothing falls back.
        _, _, out = timed(ours, top, env)
        plan = json.loads(out)
        assert set(plan["rebuild"]) == touched, sorted(set(plan["rebuild"]) ^ touched)[:5]
        assert plan["reuse"], "the tests reached through the links reuse their wheels"
        assert not any(r["because"].startswith("full rebuild") for r in plan["reasons"])
        figures = [
            paired(
                f"stagegate affected ({args.files} files, {args.producers} producers, "
                f"{len(plan['changed'])} changed) / git diff --name-only + stagegate {side}",
                ours,
                ["sh", "-c", command],
                cwd=top,
                env=env,
                target=target,
                runs=args.runs,
            )
            for side, command, target in (
                ("validate (start-up with the model loaded)", loaded, 1.5),
                ("--version (bare process start)", bare, float("inf")),
            )
        ]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for figure in figures:
        print(figure.name)
        print(f"  stagegate affected {figure.subject * 1000:7.1f} ms (median of {args.runs})")
        print(f"  baseline           {figure.baseline * 1000:7.1f} ms")
        print(
            f"  ratio              {figure.ratio:7.2f}x (median of paired runs; target "
            f"{figure.target_text}: {'ok' if figure.ok else 'OVER'})   peak RSS "
            f"{figure.peak_mib:.1f} MiB"
        )
    print(
        f"plan: {len(plan['rebuild'])} rebuild, {len(plan['retest'])} retest, "
        f"{len(plan['reuse'])} reuse"
    )
    return 0 if all(f.ok for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
