#!/usr/bin/env python3
"""stagegate's benchmarks: every figure is a ratio to a baseline measured in the same run.

    .venv/bin/python bench/run.py            # all comparisons
    .venv/bin/python bench/run.py startup    # one group: startup, example, copies, scaling, audit
    .venv/bin/python bench/run.py scaling --sizes 10,100,1000 --runs 3

Each comparison alternates the two commands (A B A B ...) so that machine noise
hits both alike, and reports the median of each and the median of the paired
ratios, plus peak memory (max RSS) of the stagegate process. Inputs are made
here, in a temporary directory; nothing in the repository is touched.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from common import Case, Figure, environment, paired, ratio, rounds

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
    # status, validate and --help; then the commands CI runs to read a flag, which
    # start as fast as status
    for args in (
        ["status"],
        ["validate"],
        ["--help"],
        ["flags"],
        ["flags", "--format", "github"],
        ["flag", "legacy-branch-source"],
    ):
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
    # the console script imports the CLI with the cyclic collector off (stagegate/_console.py);
    # the same floor without the collector shows what is left once that saving is taken out
    figures.append(
        paired(
            "stagegate status (example) / python -c 'import gc; gc.disable(); import yaml, click'",
            [STAGEGATE, "status"],
            [PYTHON, "-c", "import gc; gc.disable(); import yaml, click"],
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


def example(work: Path) -> list[Figure]:
    """The example's check --all (model checks and seven stage folders of tests) vs one
    `python -m pytest` over all its stage folders: the floor the pytest checks can reach."""
    root = work / "example"
    root.mkdir()
    shutil.copy(REPO / "migration.yaml", root)
    shutil.copytree(REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    env = environment(work)
    git = {**env, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}  # fmt: skip
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "gc.auto=0", "commit", "-q", "-m", "example"],
    ):
        subprocess.run(["git", *args], cwd=root, env=git, check=True, stdout=subprocess.DEVNULL)
    folders = sorted(str(p.relative_to(root)) for p in (root / "stages").iterdir() if p.is_dir())
    floor = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *folders]
    return [
        paired(
            "check --all (example) / python -m pytest over its stage folders",
            [STAGEGATE, "check", "--all"],
            floor,
            cwd=root,
            env=env,
            target=1.3,
            runs=RUNS,
            warmup=1,
        )
    ]


# --------------------------------------------------------------------------- scaling


def synthetic(copies: int, directory: Path) -> None:
    """A migration of ``copies`` independent small migrations, each with its own names.

    Each copy: an old and a new producer (two templates over 6 py x 3 platform x sha),
    a consumer that moves from old to new, a release with exclude and expect, and
    three stages (build new, move consumer, retire old)."""
    lines = synth.header(f"synthetic-{copies}")
    for i in range(copies):
        lines += [
            f"  build-new-{i}: {{}}",
            f"  use-new-{i}: {{}}",
            f"  keep-old-{i}: {{default: true}}",
        ]
    lines.append("producers:")
    for i in range(copies):
        for side, when, infix in (("old", "keep-old", ""), ("new", "build-new", "-next")):
            template = f"pkg{i}{infix}-python{{py}}-{{platform}}-{{sha}}"
            lines += [f"  {side}-{i}:", f"    when: {when}-{i}", "    artifacts:"]
            lines += [f'      - "{template}"', f'      - "{template}-tests"']
    lines.append("consumers:")
    for i in range(copies):
        for side, negation, infix in (("old", "not ", ""), ("new", "", "-next")):
            lines += [
                f"  tests-{i}-{side}:",
                f"    when: {negation}use-new-{i}",
                "    inputs:",
                f'      - select: "pkg{i}{infix}-python{{py}}-{{platform}}-*[0-9a-f]"',
                f"        from: [{side}-{i}]",
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


def copies(work: Path) -> list[Figure]:
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


SIZES = (10, 100, 300, 1000)
"""Producers of the synthetic migrations (bench/synth.py) that ``check --all`` is timed on
at 7 stages; the smallest is the baseline of the growth exponent, the largest that of
the memory target. ``--sizes`` replaces them."""
GROWTH = 1.05  # time may grow at most as N^GROWTH from the smallest N to the largest
PEAK_MIB = 300.0  # at the largest N and 50 stages
LONG_SECONDS = 10.0  # the 999-stage file of 40 producers
TABLE: list[str] = []  # the scaling table, printed after the figures


def scaling(work: Path) -> list[Figure]:
    """check --all on synthetic migrations (bench/synth.py) of several sizes, measured in
    rounds (every case once per round): 7 vs 50 stages at the same N, the growth from the
    smallest N to the largest at 7 stages, peak memory, and the 999-stage file."""
    env = environment(work)
    small, large = SIZES[0], SIZES[-1]
    shapes = [(n, 7) for n in SIZES] + [(n, 50) for n in SIZES if n >= 100] + [(40, 999)]
    cases = []
    for producers, stages in shapes:
        folder = work / f"n{producers}-s{stages}"
        file = synth.write(folder, producers, stages)
        subprocess.run([STAGEGATE, "-f", str(file), "validate"], env=env, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        name = f"{stages} stages, N={producers}" if stages != 999 else "999 stages, 40 producers"
        cases.append((name, [STAGEGATE, "-f", str(file), "check", "--all"]))
    measured = {c.name: c for c in rounds(cases, cwd=work, env=env, runs=RUNS, warmup=1)}
    base = measured[f"7 stages, N={small}"]
    TABLE.append(
        f"{'case':<28}  {'wall (median)':>13}  {'vs 7 stages, N=' + str(small):>18}  {'peak MiB':>8}"
    )
    for case in measured.values():
        TABLE.append(
            f"{case.name:<28}  {case.median:11.2f} s  {ratio(case, base):17.1f}x  {case.peak:8.1f}"
        )
    figures = []
    for n in SIZES:
        if n >= 100:
            s50, s7 = measured[f"50 stages, N={n}"], measured[f"7 stages, N={n}"]
            figures.append(_figure(f"check --all 50 stages / 7 stages, N={n}", s50, s7, target=2.0))
    top = measured[f"7 stages, N={large}"]
    growth = ratio(top, base)
    exponent = math.log(growth) / math.log(large / small)
    figures.append(
        _figure(
            f"7 stages N={large} / N={small} (N^{exponent:.2f}; target N^{GROWTH})",
            top,
            base,
            target=(large / small) ** GROWTH,
        )
    )
    figures.append(
        _figure(
            f"50 stages N={large}: peak memory",
            measured[f"50 stages, N={large}"],
            base,
            target=float("inf"),
            peak_target=PEAK_MIB,
        )
    )
    figures.append(
        _figure(
            "999 stages, 40 producers: wall",
            measured["999 stages, 40 producers"],
            base,
            target=float("inf"),
            seconds_target=LONG_SECONDS,
        )
    )
    return figures


def _figure(name: str, subject: Case, baseline: Case, *, target: float, **limits: float) -> Figure:
    return Figure(
        name,
        subject.median,
        baseline.median,
        ratio(subject, baseline),
        target,
        subject.peak,
        **limits,
    )


RUNS = 5
GROUPS: dict[str, Callable[[Path], list[Figure]]] = {
    "startup": startup,
    "example": example,
    "copies": copies,
    "scaling": scaling,
}


def main(argv: Sequence[str]) -> int:
    global SIZES, RUNS
    argv = list(argv)
    for option in ("--sizes", "--runs"):
        if option in argv:
            at = argv.index(option)
            if at + 1 >= len(argv):
                print(f"{option} needs a value, e.g. {option} 10,100,1000", file=sys.stderr)
                return 2
            value = argv[at + 1]
            del argv[at : at + 2]
            try:
                if option == "--sizes":
                    SIZES = tuple(sorted(int(v) for v in value.split(",")))
                    if len(SIZES) < 2 or SIZES[0] < 2:
                        raise ValueError
                else:
                    RUNS = int(value)
            except ValueError:
                print(f"{option} {value!r}: expected e.g. --sizes 10,100,1000 or --runs 5",
                      file=sys.stderr)  # fmt: skip
                return 2
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
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-", ignore_cleanup_errors=True) as tmp:
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
        verdict = ("ok" if f.ok else "OVER") if f.judged else ""
        print(
            f"{f.name:<{width}}  {_ms(f.subject)}  {_ms(f.baseline)}  "
            f"{f.ratio:5.2f}x  {f.target_text:>6}  {f.peak_mib:8.1f}  {verdict}"
        )
    if TABLE:
        print()
        print("\n".join(TABLE))
    return 0 if all(f.ok for f in figures) else 1


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}ms" if seconds < 10 else f"{seconds:8.2f}s"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
