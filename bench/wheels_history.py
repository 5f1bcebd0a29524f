#!/usr/bin/env python3
"""Every commit of a repository's history that changes what decides its wheels, replayed:
the upload contexts whose build identifiers it changes, and what stays unresolved.

    .venv/bin/python bench/wheels_history.py REPO [--since REV] [--limit N]

REPO is a git repository (a clone). Each commit that touches ``.github/``,
``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``Cargo.toml`` is compared with its
first parent, both trees extracted with ``git archive``, with ``ci.wheelsteps.changes``
(the table only; the installed cibuildwheel is not asked). Every upload counts as
one release (``ci.wheelsteps.overall``): a wheel built by another job than before is no
change. Prints one block per commit that changes identifiers or leaves some unresolved,
so that a person can judge each against the project's own history.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from stagegate.ci import wheelsteps  # noqa: E402
from stagegate.ci.wheels import compare  # noqa: E402
from stagegate.errors import StagegateError  # noqa: E402

PATHS = [".github", "pyproject.toml", "setup.cfg", "setup.py", "Cargo.toml"]


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def extract(repo: str, rev: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", repo, "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--since", default="")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    span = [f"{args.since}..HEAD"] if args.since else []
    revs = git(args.repo, "log", "--first-parent", "--format=%H %s", *span, "--", *PATHS).splitlines()
    revs = revs[: args.limit] if args.limit else revs
    changed = unresolved = failed = 0
    for line in reversed(revs):
        rev, _, subject = line.partition(" ")
        parents = git(args.repo, "rev-list", "--parents", "-n1", rev).split()[1:]
        if not parents:
            continue
        with tempfile.TemporaryDirectory() as folder:
            base, head = extract(args.repo, parents[0], Path(folder, "b")), extract(args.repo, rev, Path(folder, "h"))
            try:
                found = wheelsteps.overall(base, head, tool=False)
            except StagegateError as error:
                failed += 1
                print(f"{rev[:10]} {subject}\n  not read: {error}")
                continue
        if found.unresolved:
            unresolved += 1
            shown = sorted({f"{u.loc.at}: {u.reason}" for u in found.unresolved})
            print(f"{rev[:10]} {subject}\n  unresolved: " + "\n  unresolved: ".join(shown[:3]))
        if found.changed:
            changed += 1
            print(f"{rev[:10]} {subject}")
            for text in compare.describe(found):
                print(f"    {text}")
    print(f"{len(revs)} commits, {changed} change wheels, {unresolved} with unresolved contexts, {failed} not read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
