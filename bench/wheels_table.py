#!/usr/bin/env python3
"""The cibuildwheel table (src/stagegate/ci/wheels/table.py) against cibuildwheel itself.

    .venv/bin/python bench/wheels_table.py CIBUILDWHEEL_GIT_DIR PYTHON [TAG...]

For each release tag (default: every release the table knows), the tag's sources are
taken from the git directory (``git archive``) and run with PYTHON (an interpreter that
has cibuildwheel's dependencies installed, e.g. a venv with ``pip install cibuildwheel``)
as ``python -m cibuildwheel --print-build-identifiers`` over a grid of settings: build,
skip, archs (``auto`` left to the tool on this Linux x86_64 machine), enable groups,
``requires-python``, the older free-threaded and prerelease switches. Each answer is
compared with what stagegate computes from the table for a runner of that platform.
Releases before 2.10.2 answer only for the machine they run on (no Windows or macOS
answers on Linux): for them only the Linux rows are asked. Prints the mismatches and a
count; exit 1 on any.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from stagegate.ci.wheels import cibw, table  # noqa: E402
from stagegate.ci.wheels.model import Setting  # noqa: E402
from stagegate.ci.wheels.settings import Stop  # noqa: E402
from stagegate.errors import Loc  # noqa: E402

AT = Loc("grid", 1, 1)
RUNNERS = {"linux": "ubuntu-latest", "macos": "macos-13", "windows": "windows-latest"}
ENVS: list[dict[str, str]] = [
    {},
    {"CIBW_BUILD": "cp3{8,12}-* pp*"},
    {"CIBW_SKIP": "pp* cp38-*", "CIBW_ARCHS": "auto64"},
    {"CIBW_ARCHS": "all"},
    {"CIBW_ARCHS": "auto32"},
    {"CIBW_ENABLE": "cpython-freethreading"},
    {"CIBW_ENABLE": "pypy graalpy cpython-prerelease"},
    {"CIBW_FREE_THREADED_SUPPORT": "1"},
    {"CIBW_PRERELEASE_PYTHONS": "1"},
    {"CIBW_PROJECT_REQUIRES_PYTHON": ">=3.10"},
]


def ours(version: str, platform: str, env: dict[str, str]) -> set[str] | str:
    found = {
        "version": Setting(name="version", value=version, loc=AT),
        "runner": Setting(name="runs-on", value=RUNNERS[platform], loc=AT),
        **{f"env.{k}": Setting(name=k, value=v, loc=AT) for k, v in env.items()},
    }
    try:
        return set(cibw.select(found)[0])
    except Stop as stop:
        return f"unresolved: {stop.unresolved.reason}"


def theirs(python: str, src: Path, platform: str, env: dict[str, str], project: Path) -> set[str] | str:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    command = [python, "-m", "cibuildwheel", "--print-build-identifiers", "--platform", platform]
    if platform == "macos" and "CIBW_ARCHS" not in env:
        command += ["--archs", "x86_64"]  # a macos-13 runner; this machine is Linux
    done = subprocess.run(
        [*command, str(project)], env={**base, **env, "PYTHONPATH": str(src)},
        capture_output=True, text=True, check=False,
    )
    if done.returncode:
        return f"error: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
    return {line for line in done.stdout.split() if "-" in line}


def main() -> int:
    git_dir, python, *tags = sys.argv[1:]
    versions = tags or sorted(".".join(map(str, v)) for v in table.KNOWN)
    bad = total = 0
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder, "project")
        project.mkdir()
        (project / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
        for version in versions:
            src = Path(folder, version)
            src.mkdir()
            archive = subprocess.run(["git", "-C", git_dir, "archive", f"v{version}", "cibuildwheel"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
            for platform, env in itertools.product(RUNNERS, ENVS):
                if platform == "macos" and env.get("CIBW_ARCHS") in ("all", "auto32"):
                    continue  # needs the runner's own arch: covered by the linux rows
                if platform != "linux" and table.v(version) < table.v("2.10.2"):
                    continue  # it cannot answer for another platform than this machine's
                total += 1
                mine, real = ours(version, platform, env), theirs(python, src, platform, env, project)
                if isinstance(mine, set) and isinstance(real, set) and mine == real:
                    continue
                if isinstance(mine, str) and isinstance(real, str):
                    continue  # both refuse
                if isinstance(mine, str) and "is set (use enable)" in mine:
                    continue  # refused after the identifiers are chosen: the print does not show it
                bad += 1
                print(f"{version} {platform} {env}:")
                if isinstance(mine, set) and isinstance(real, set):
                    print(f"  table only: {sorted(mine - real)}\n  tool only:  {sorted(real - mine)}")
                else:
                    print(f"  table: {mine if isinstance(mine, str) else sorted(mine)}\n  tool:  {real if isinstance(real, str) else sorted(real)}")
    print(f"{bad} mismatches in {total} answers of {len(versions)} releases")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
