#!/usr/bin/env python3
"""`stagegate continuity` over two commits against one `stagegate drift` of the head.

    .venv/bin/python bench/continuity.py [FILES]

Two trees, each a git repository of two commits whose head renames every upload:
- the example's fixture tree (tests/fixtures/cuda-python-tree: the worked example's
  workflows and model);
- FILES (default 200) generated release workflows: a 4 x 3 wheel matrix uploading
  per-row names, an sdist job, and a tag-push release job that downloads them with
  `pattern:` + `merge-multiple: true` and publishes with pypa/gh-action-pypi-publish;
  the model is what `init --from-workflows` writes, so drift does the whole comparison.

continuity reads and follows the workflows of both commits; drift reads one (`--fresh`:
drift would otherwise print the output it remembered from the round before). The
figure is the ratio of their median times, measured in the same run, rounds
alternating (target: at most 2x).
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

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
STAGEGATE = str(BIN / "stagegate")
EXAMPLE = ROOT / "tests" / "fixtures" / "cuda-python-tree"

WORKFLOW = """\
name: Package {i}
on:
  push:
    branches: [main]
    tags: ["v*"]
jobs:
  sdist:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m build --sdist
      - uses: actions/upload-artifact@v4
        with:
          name: {prefix}pkg{i}-sdist
          path: dist/*.tar.gz
  wheels:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["310", "311", "312", "313"]
        platform: [linux-64, linux-aarch64, win-64]
    steps:
      - uses: actions/checkout@v4
      - run: cibuildwheel --output-dir wheelhouse
      - uses: actions/upload-artifact@v4
        with:
          name: {prefix}pkg{i}-python${{{{ matrix.py }}}}-${{{{ matrix.platform }}}}
          path: wheelhouse/*.whl
  publish:
    if: startsWith(github.ref, 'refs/tags/')
    needs: [sdist, wheels]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
        with:
          pattern: {prefix}pkg{i}-*
          path: dist
          merge-multiple: true
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def git(root: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def two_commits(root: Path, env: dict[str, str]) -> None:
    """Commit the tree, rename the generated artifacts (`name:`/`pattern: pkg...` -> `renamed-pkg...`;
    the example tree is committed twice unchanged), commit."""
    git(root, env, "init", "-q", "-b", "main")
    git(root, env, "add", "-A")
    git(root, env, "commit", "-qm", "base")
    for path in sorted((root / ".github").rglob("*.y*ml")):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(": pkg", ": renamed-pkg"), encoding="utf-8")
    git(root, env, "commit", "-q", "--allow-empty", "-am", "head")


def generate(root: Path, files: int) -> None:
    workflows = root / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for i in range(files):
        (workflows / f"pkg{i}.yml").write_text(WORKFLOW.format(i=i, prefix=""))
    subprocess.run(
        [STAGEGATE, "init", "--from-workflows"], cwd=root, check=True, capture_output=True
    )


def figure(name: str, repo: Path, env: dict[str, str], runs: int) -> Figure:
    return paired(
        name,
        [STAGEGATE, "continuity", "--base", "HEAD~1"],
        [STAGEGATE, "drift", "--fresh"],
        cwd=repo,
        env=env,
        target=2.0,
        runs=runs,
    )


def continuity_figures(work: Path, files: int = 200, runs: int = 7) -> list[Figure]:
    env = {
        **environment(work),
        "GIT_AUTHOR_NAME": "Ada Flipper",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Flipper",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    example = work / "example"
    shutil.copytree(EXAMPLE, example)
    two_commits(example, env)
    generated = work / "generated"
    generated.mkdir()
    generate(generated, files)
    two_commits(generated, env)
    done = subprocess.run(
        [STAGEGATE, "continuity", "--base", "HEAD~1"],
        cwd=generated,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or f"{files} release jobs, 0 lost" not in done.stdout:
        raise SystemExit(f"continuity on the generated repository:\n{done.stdout}{done.stderr}")
    return [
        figure("continuity over two commits vs drift, example fixture tree", example, env, runs),
        figure(
            f"continuity over two commits vs drift, {files} workflow files", generated, env, runs
        ),
    ]


def main(argv: list[str]) -> int:
    files = int(argv[0]) if argv else 200
    with tempfile.TemporaryDirectory(prefix="stagegate-bench-continuity-") as tmp:
        figures = continuity_figures(Path(tmp), files)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for f in figures:
        print(
            f"{f.name}: {f.subject * 1000:.1f}ms vs {f.baseline * 1000:.1f}ms = {f.ratio:.2f}x "
            f"(target {f.target_text}; peak {f.peak_mib:.1f} MiB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
