#!/usr/bin/env python3
"""stagegate's benchmarks: every figure is a ratio to a baseline measured in the same run.

    .venv/bin/python bench/run.py            # all comparisons
    .venv/bin/python bench/run.py startup    # one group: startup, scaling, audit

Each comparison alternates the two commands (A B A B ...) so that machine noise
hits both alike, and reports the median of each and the median of the paired
ratios, plus peak memory (max RSS) of the stagegate process. Inputs are made
here, in a temporary directory; nothing in the repository is touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Figure, environment, paired

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
STAGEGATE = str(BIN / "stagegate")
PYTHON = sys.executable


# --------------------------------------------------------------------------- startup


def startup(work: Path) -> list[Figure]:
    """status, validate and --help on the example vs bare `import yaml, click`."""
    example = work / "example"
    example.mkdir()
    shutil.copy(REPO / "migration.yaml", example)
    shutil.copytree(REPO / "stages", example / "stages")
    env = environment(work)
    baseline = [PYTHON, "-c", "import yaml, click"]
    figures = []
    for args in (["status"], ["validate"], ["--help"]):
        figures.append(
            paired(
                f"stagegate {' '.join(args)} (example) / python -c 'import yaml, click'",
                [STAGEGATE, *args],
                baseline,
                cwd=example,
                env=env,
                target=1.3,
                runs=21,
            )
        )
    for args in (["flags"], ["flags", "--format", "github"], ["flag", "legacy-branch-source"]):
        figures.append(  # the commands CI runs to read a flag start as fast as status
            paired(
                f"stagegate {' '.join(args)} (example) / python -c 'import yaml, click'",
                [STAGEGATE, *args],
                baseline,
                cwd=example,
                env=env,
                target=1.3,
                runs=21,
            )
        )
    cold = work / "cold"
    figures.append(
        paired(
            "stagegate validate, empty cache each run / python -c 'import yaml, click'",
            ["sh", "-c", f'rm -rf "{cold}"; exec "{STAGEGATE}" validate'],
            ["sh", "-c", f'rm -rf "{cold}"; exec "{PYTHON}" -c "import yaml, click"'],
            cwd=example,
            env={**env, "STAGEGATE_CACHE_DIR": str(cold)},
            target=float("inf"),
            runs=9,
        )
    )
    return figures


# --------------------------------------------------------------------------- scaling


def synthetic(copies: int, directory: Path) -> None:
    """A migration of ``copies`` independent small migrations, each with its own names.

    Each copy: an old and a new producer (two templates over 6 py x 3 platform x sha),
    a consumer that moves from old to new, a release with exclude and expect, and
    three stages (build new, move consumer, retire old)."""
    lines = [
        "version: 1",
        f"migration: synthetic-{copies}",
        "stage: 0",
        "axes:",
        '  py: ["310", "311", "312", "313", "314", "314t"]',
        "  platform: [linux-64, linux-aarch64, win-64]",
        '  sha: {pattern: "[0-9a-f]{40}"}',
        "flags:",
    ]
    for i in range(copies):
        lines += [
            f"  build-new-{i}: {{}}",
            f"  use-new-{i}: {{}}",
            f"  keep-old-{i}: {{default: true}}",
        ]
    lines.append("producers:")
    for i in range(copies):
        lines += [
            f"  old-{i}:",
            f"    when: keep-old-{i}",
            "    artifacts:",
            f'      - "pkg{i}-python{{py}}-{{platform}}-{{sha}}"',
            f'      - "pkg{i}-python{{py}}-{{platform}}-{{sha}}-tests"',
            f"  new-{i}:",
            f"    when: build-new-{i}",
            "    artifacts:",
            f'      - "pkg{i}-next-python{{py}}-{{platform}}-{{sha}}"',
            f'      - "pkg{i}-next-python{{py}}-{{platform}}-{{sha}}-tests"',
        ]
    lines.append("consumers:")
    for i in range(copies):
        lines += [
            f"  tests-{i}-old:",
            f"    when: not use-new-{i}",
            "    inputs:",
            f'      - select: "pkg{i}-python{{py}}-{{platform}}-*[0-9a-f]"',
            f"        from: [old-{i}]",
            f"  tests-{i}-new:",
            f"    when: use-new-{i}",
            "    inputs:",
            f'      - select: "pkg{i}-next-python{{py}}-{{platform}}-*[0-9a-f]"',
            f"        from: [new-{i}]",
        ]
    lines.append("releases:")
    for i in range(copies):
        lines += [
            f"  release-{i}:",
            f'    tags: ["pkg{i}-v1.*"]',
            f'    select: ["pkg{i}-python*"]',
            '    exclude: ["*-tests"]',
            f"    expect: [old-{i}]",
            "    tooling: control",
        ]
    lines.append("invariants:")
    for i in range(copies):
        lines += ["  - check: release-continuity", f"    tag: pkg{i}-v1.0.0"]
    (directory / "migration.yaml").write_text("\n".join(lines) + "\n")
    stages = directory / "stages"
    stages.mkdir()
    for number, (slug, flag, value) in enumerate(
        [("build-new", "build-new", "true"), ("move-consumers", "use-new", "true")], start=1
    ):
        body = [f"stage: {number}", f"title: {slug}", "set:"]
        body += [f"  {flag}-{i}: {value}" for i in range(copies)]
        body += [
            "acceptance:",
            "  - check: inputs-satisfied",
            "  - check: single-source",
            "  - check: unique-artifacts",
        ]
        (stages / f"{number:02d}-{slug}.yaml").write_text("\n".join(body) + "\n")
    # the last stage retires the old producers: the release must then fail continuity,
    # so it is not part of this benchmark's stages (check --all must pass, exit 0)


def scaling(work: Path) -> list[Figure]:
    """check --all on 100 copies vs 10 copies: near-linear growth means a ratio near 10."""
    small, large = work / "small", work / "large"
    small.mkdir()
    large.mkdir()
    synthetic(10, small)
    synthetic(100, large)
    env = environment(work)
    subprocess.run(
        [STAGEGATE, "validate"], cwd=small, env=env, check=True, stdout=subprocess.DEVNULL
    )
    subprocess.run(
        [STAGEGATE, "validate"], cwd=large, env=env, check=True, stdout=subprocess.DEVNULL
    )
    return [
        paired(
            "check --all, 100 copies / 10 copies",
            [STAGEGATE, "-f", str(large / "migration.yaml"), "check", "--all"],
            [STAGEGATE, "-f", str(small / "migration.yaml"), "check", "--all"],
            cwd=work,
            env=env,
            target=12.0,
            runs=5,
            warmup=1,
        )
    ]


GROUPS: dict[str, Callable[[Path], list[Figure]]] = {"startup": startup, "scaling": scaling}


def main(argv: Sequence[str]) -> int:
    try:
        from audit import audit_figures  # bench/audit.py, when present

        GROUPS["audit"] = audit_figures
    except ImportError:
        pass
    chosen = list(argv) or list(GROUPS)
    unknown = [g for g in chosen if g not in GROUPS]
    if unknown:
        print(
            f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}",
            file=sys.stderr,
        )
        return 2
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-") as tmp:
        for group in chosen:
            directory = Path(tmp) / group
            directory.mkdir()
            figures += GROUPS[group](directory)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    width = max(len(f.name) for f in figures)
    print(
        f"{'comparison':<{width}}  {'subject':>9}  {'baseline':>9}  {'ratio':>6}  {'target':>6}  {'peak MiB':>8}"
    )
    for f in figures:
        target = "-" if f.target == float("inf") else f"{f.target:g}x"
        verdict = "" if f.target == float("inf") else ("ok" if f.ok else "OVER")
        print(
            f"{f.name:<{width}}  {f.subject * 1000:7.1f}ms  {f.baseline * 1000:7.1f}ms  "
            f"{f.ratio:5.2f}x  {target:>6}  {f.peak_mib:8.1f}  {verdict}"
        )
    return 0 if all(f.ok for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
