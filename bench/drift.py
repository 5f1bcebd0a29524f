#!/usr/bin/env python3
"""`stagegate drift` on a generated repository of 200 workflow files.

    .venv/bin/python bench/drift.py [FILES]

Each file has a build job (a 4 x 3 matrix, names from env, matrix and github.sha,
two uploads) and a test job (a download by name and a `gh run download -p` in a
script); the model is what `stagegate init --from-workflows` writes for it, so drift
reports nothing and does the whole comparison. Figures are ratios, measured in the
same run, to the bare start-up floor (`python -c "import yaml, click"`) and to
`stagegate validate` of the same migration (warm validation cache, as in CI). drift runs
with `--fresh`: each run reads the workflows, none prints a remembered output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Figure, environment, paired

BIN = Path(sys.executable).parent
STAGEGATE = str(BIN / "stagegate")
PYTHON = sys.executable

WORKFLOW = """\
name: Package {i}
on:
  push:
    branches: [main]
env:
  PKG: pkg{i}
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["310", "311", "312", "313"]
        platform: [linux-64, linux-aarch64, win-64]
    env:
      NAME: ${{{{ env.PKG }}}}-python${{{{ matrix.py }}}}-${{{{ matrix.platform }}}}
    steps:
      - uses: actions/checkout@v4
      - run: make wheel
      - uses: actions/upload-artifact@v4
        with:
          name: ${{{{ env.NAME }}}}-${{{{ github.sha }}}}
      - uses: actions/upload-artifact@v4
        if: ${{{{ matrix.platform != 'win-64' }}}}
        with:
          name: ${{{{ env.NAME }}}}-${{{{ github.sha }}}}-tests
  test:
    needs: build
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["310", "311", "312", "313"]
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: pkg{i}-python${{{{ matrix.py }}}}-linux-64-${{{{ github.sha }}}}
      - env:
          GH_TOKEN: ${{{{ github.token }}}}
        run: |
          gh run download "$GITHUB_RUN_ID" -p "pkg{i}-python${{{{ matrix.py }}}}-linux-64-*-tests" -D tests
"""


def generate(root: Path, files: int) -> None:
    workflows = root / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for i in range(files):
        (workflows / f"pkg{i}.yml").write_text(WORKFLOW.format(i=i))
    subprocess.run(
        [STAGEGATE, "init", "--from-workflows"], cwd=root, check=True, capture_output=True
    )


def drift_figures(work: Path, files: int = 200) -> list[Figure]:
    repo = work / "drift-repo"
    repo.mkdir()
    env = environment(work)
    generate(repo, files)
    check = subprocess.run(
        [STAGEGATE, "drift", "--fresh"], cwd=repo, env=env, capture_output=True, text=True
    )
    if check.returncode != 0:
        raise SystemExit(f"drift on the generated repository failed:\n{check.stdout}{check.stderr}")
    runs = 7
    return [
        paired(
            f"drift, {files} workflow files vs import yaml, click",
            [STAGEGATE, "drift", "--fresh"],
            [PYTHON, "-c", "import yaml, click"],
            cwd=repo,
            env=env,
            target=float("inf"),
            runs=runs,
        ),
        paired(
            f"drift, {files} workflow files vs validate",
            [STAGEGATE, "drift", "--fresh"],
            [STAGEGATE, "validate"],
            cwd=repo,
            env=env,
            target=float("inf"),
            runs=runs,
        ),
        paired(
            f"drift, {files} workflow files with every upload renamed (a finding each) vs none",
            [STAGEGATE, "drift", "--fresh"],
            [STAGEGATE, "drift", "--fresh"],
            cwd=renamed(repo, work / "renamed"),
            env=env,
            target=float("inf"),
            runs=max(1, runs // 2),
            baseline_cwd=repo,
        ),
    ]


def renamed(repo: Path, copy: Path) -> Path:
    """``repo`` with every upload's name changed (`pkgN` -> `renamed-pkgN` in the workflows,
    not in the model): each upload is undeclared and each template missing, with their
    consequences for every consumer (what a pull request renaming the artifacts costs)."""
    shutil.copytree(repo, copy)
    for path in (copy / ".github" / "workflows").glob("*.yml"):
        path.write_text(path.read_text().replace("PKG: pkg", "PKG: renamed-pkg"))
    return copy


def main(argv: list[str]) -> int:
    files = int(argv[0]) if argv else 200
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-drift-") as tmp:
        figures = drift_figures(Path(tmp), files)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for f in figures:
        print(
            f"{f.name}: {f.subject * 1000:.1f}ms vs {f.baseline * 1000:.1f}ms = {f.ratio:.2f}x "
            f"(peak {f.peak_mib:.1f} MiB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
