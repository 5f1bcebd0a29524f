#!/usr/bin/env python3
"""The cost of the wheels a release ships, against what reading the workflows costs.

    .venv/bin/python bench/wheels.py [ROUNDS]

Two trees (base and head), each with two workflows of real shapes, written here:
- ``ci.yml``, pydantic-core's build: ``PyO3/maturin-action`` over 16 matrix rows (os x
  target x manylinux, interpreter lists per row), an upload per row, and a tag-push release
  job that downloads ``pypi_files_*`` and publishes with ``pypa/gh-action-pypi-publish``;
- ``wheels.yml``, multidict's: ``pypa/cibuildwheel@v3.1.4`` over os x QEMU architecture,
  ``CIBW_*`` on the step, ``[tool.cibuildwheel]`` and ``requires-python`` in pyproject.toml.
The head drops Python 3.9 from one interpreter list and skips cp310 in CIBW_SKIP.

Figures (medians of ROUNDS, default 15, the sides alternating in each round):
- identifiers / C loader: computing every upload context's identifiers at both commits
  from their build steps (``ci.wheels.shipped`` and ``compare``), against parsing the
  same workflow files with PyYAML's C loader;
- continuity with identifiers / without: ``ci.ships.ships`` at both commits (what
  continuity reads), with the identifiers added as they would be in the same reading
  (target: at most 3x; the exit code), and with the adapter's separate reading
  (``ci.wheelsteps``, until continuity's own reading makes the build steps) for
  information.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from stagegate.ci import wheelsteps  # noqa: E402
from stagegate.ci.ships import ships  # noqa: E402
from stagegate.ci.wheels import compare, forget, shipped  # noqa: E402

ROWS = [
    ("linux", "i686", "auto", ""),
    ("linux", "armv7", "auto", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t"),
    ("linux", "ppc64le", "auto", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t"),
    ("linux", "s390x", "auto", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t"),
    ("linux", "x86_64", "auto", "pypy3.10 pypy3.11"),
    ("linux", "aarch64", "auto", "pypy3.10 pypy3.11"),
    ("linux", "x86_64", "musllinux_1_1", ""),
    ("linux", "aarch64", "musllinux_1_1", ""),
    ("linux", "armv7", "musllinux_1_1", ""),
    ("linux", "x86_64", "auto", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t"),
    ("linux", "aarch64", "auto", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t"),
    ("macos", "x86_64", "", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t pypy3.10 pypy3.11"),
    ("macos", "aarch64", "", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t pypy3.10 pypy3.11"),
    ("windows", "x86_64", "", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t pypy3.10 pypy3.11"),
    ("windows", "i686", "", "3.9 3.10 3.11 3.12 3.13 3.14 3.14t"),
    ("windows", "aarch64", "", "3.11 3.12 3.13 3.14 3.14t"),
]
ALL = "3.9 3.10 3.11 3.12 3.13 3.14 3.14t pypy3.10 pypy3.11"


def ci_yml(head: bool) -> str:
    rows = []
    for os_name, target, manylinux, interpreter in ROWS:
        if head and interpreter.startswith("3.9 "):
            interpreter = interpreter[4:]
        row = f"          - os: {os_name}\n            target: {target}\n"
        row += f"            manylinux: {manylinux or 'auto'}\n" if os_name == "linux" else ""
        row += f"            interpreter: {interpreter}\n" if interpreter else ""
        row += "            runs-on: windows-11-arm\n" if (os_name, target) == ("windows", "aarch64") else ""
        rows.append(row)
    return f"""\
name: ci
on:
  push:
    branches: [main]
    tags: ["**"]
  pull_request: {{}}
jobs:
  build:
    name: build on ${{{{ matrix.os }}}} (${{{{ matrix.target }}}})
    strategy:
      fail-fast: false
      matrix:
        include:
{"".join(rows)}
    runs-on: ${{{{ matrix.runs-on || format('{{0}}-latest', (matrix.os == 'linux' && 'ubuntu') || matrix.os) }}}}
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-python@v6
        with:
          python-version: "3.13"
      - run: pip install -U twine
      - name: build wheels
        uses: PyO3/maturin-action@v1
        with:
          target: ${{{{ matrix.target }}}}
          manylinux: ${{{{ matrix.manylinux }}}}
          args: --release --out dist --interpreter ${{{{ matrix.interpreter || '{ALL}' }}}}
          rust-toolchain: stable
      - run: twine check --strict dist/*
      - uses: actions/upload-artifact@v5
        with:
          name: pypi_files_${{{{ matrix.os }}}}_${{{{ matrix.target }}}}_${{{{ matrix.interpreter || 'all' }}}}_${{{{ matrix.manylinux }}}}
          path: dist
  release:
    needs: [build]
    if: startsWith(github.ref, 'refs/tags/')
    runs-on: ubuntu-latest
    environment: release
    permissions:
      id-token: write
    steps:
      - uses: actions/download-artifact@v5
        with:
          pattern: pypi_files_*
          merge-multiple: true
          path: dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


def wheels_yml(head: bool) -> str:
    skip = "pp* *-musllinux_ppc64le" + (" cp310-*" if head else "")
    return f"""\
name: Wheels
on:
  push:
    tags: ["v*"]
jobs:
  build-wheels:
    name: Build wheels on ${{{{ matrix.os }}}} ${{{{ matrix.qemu }}}}
    runs-on: ${{{{ matrix.os }}}}-latest
    strategy:
      matrix:
        os: [ubuntu, windows, macos]
        qemu: ['']
        include:
          - os: ubuntu
            qemu: aarch64
          - os: ubuntu
            qemu: ppc64le
          - os: ubuntu
            qemu: s390x
    steps:
      - uses: actions/checkout@v5
      - name: Set up QEMU
        if: matrix.qemu
        uses: docker/setup-qemu-action@v3
        with:
          platforms: all
      - name: Build wheels
        uses: pypa/cibuildwheel@v3.1.4
        env:
          CIBW_ARCHS_LINUX: ${{{{ matrix.qemu || 'auto' }}}}
          CIBW_ARCHS_MACOS: x86_64 arm64 universal2
          CIBW_SKIP: "{skip}"
      - uses: actions/upload-artifact@v5
        with:
          name: wheels-${{{{ matrix.os }}}}-${{{{ matrix.qemu }}}}
          path: ./wheelhouse/*.whl
  deploy:
    needs: [build-wheels]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v5
        with:
          pattern: wheels-*
          merge-multiple: true
          path: dist
      - uses: pypa/gh-action-pypi-publish@release/v1
"""


PYPROJECT = """\
[project]
name = "pkg"
requires-python = ">=3.9"

[tool.cibuildwheel]
test-command = "pytest {project}/tests"
enable = ["cpython-freethreading"]

[tool.maturin]
module-name = "pkg._core"
"""


def tree(root: Path, head: bool) -> Path:
    (root / ".github/workflows").mkdir(parents=True)
    (root / ".github/workflows/ci.yml").write_text(ci_yml(head))
    (root / ".github/workflows/wheels.yml").write_text(wheels_yml(head))
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "Cargo.toml").write_text('[package]\nname = "pkg"\n\n[dependencies]\npyo3 = "0.26"\n')
    return root


def median_of(rounds: int, sides: dict[str, Callable[[], object]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, run in sides.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with tempfile.TemporaryDirectory() as folder:
        base, head = tree(Path(folder, "base"), False), tree(Path(folder, "head"), True)
        texts = [p.read_bytes() for r in (base, head) for p in sorted((r / ".github/workflows").iterdir())]
        steps = {r: wheelsteps.uploads(r) for r in (base, head)}

        def parse() -> None:
            for text in texts:
                yaml.load(text, Loader=yaml.CSafeLoader)

        def identifiers() -> int:
            forget()  # cold, as in one continuity run
            files = {r: wheelsteps.TreeFiles(r) for r in (base, head)}
            found = {}
            for r in (base, head):
                found[r] = {u.place: [shipped(s, files[r], tool=False) for s in u.steps] for u in steps[r] if u.steps}
            changed = 0
            for place in found[base].keys() | found[head].keys():
                change = compare.compare(found[base].get(place, []), found[head].get(place, []), tool=False)
                changed += change.changed
            return changed

        def without() -> None:
            ships(base)
            ships(head)

        def adapter() -> None:
            wheelsteps.uploads(base)
            wheelsteps.uploads(head)

        changed = identifiers()
        contexts = sum(1 for r in (base, head) for u in steps[r] if u.steps)
        times = median_of(rounds, {"parse": parse, "identifiers": identifiers, "without": without, "adapter": adapter})
    ids, cont = times["identifiers"], times["without"]
    print(f"{contexts} upload contexts with build steps (both commits), {changed} changed")
    print(f"C loader parse of the 4 workflow files:   {times['parse'] * 1e3:8.2f} ms")
    print(f"identifiers and comparison:              {ids * 1e3:8.2f} ms  ({ids / times['parse']:.1f}x the parse)")
    print(f"continuity's reading (ships, 2 commits): {cont * 1e3:8.2f} ms")
    print(f"  + identifiers, in the same reading:     {(cont + ids) * 1e3:8.2f} ms  ({(cont + ids) / cont:.2f}x, target 3x)")
    print(f"  + identifiers, adapter's own reading:   {(cont + ids + times['adapter']) * 1e3:8.2f} ms  "
          f"({(cont + ids + times['adapter']) / cont:.2f}x)")
    return 0 if (cont + ids) / cont <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
