#!/usr/bin/env python3
"""A synthetic migration shaped like the worked example, at any size.

    .venv/bin/python bench/synth.py --producers 100 --stages 50 OUT
    .venv/bin/python bench/synth.py --producers 40 --stages 999 --faults OUT

``--producers N`` producers in N/2 families. The two producers of a family (old-F
and new-F) make the same names, from 2 to 4 templates over py x platform x an open
``sha`` axis, and one flag (move-F) switches a family from old to new. ``N``
consumers, two per family, mix exact names (``{py}`` and ``{platform}`` with
``{sha}``), ``{py}`` globs and broad globs (``pkgF-*``), some with ``from``. About a
third of the families have a release with a broad select (``pkgF-python*``), an
exclude, and ``tooling: control`` for half of them; each release has a
``release-continuity`` invariant. ``--stages S`` stages each flip three families'
flags (cycling through the families, on and back off), declare in release_changes that
the family's release now takes its names from the other producer (a move), and run
inputs-satisfied, single-source and unique-artifacts (every tenth stage also
tags-routed).

Without ``--faults`` every check passes. ``--faults`` breaks a few things on purpose
(a new producer without a template that consumers and a release use; a second
producer of one name; a ``from`` that names only the old producer; an old producer in
another run), so that failing output can be compared too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

TEMPLATES = (
    "pkg{f}-python{{py}}-{{platform}}-{{sha}}",
    "pkg{f}-python{{py}}-{{platform}}-{{sha}}-tests",
    "pkg{f}-python{{py}}-{{platform}}-{{sha}}.zip",
    "pkg{f}-cython-python{{py}}-{{platform}}-{{sha}}",
)
FLIPS = 3


def families(producers: int) -> int:
    return max(1, producers // 2)


def has_release(family: int) -> bool:
    return family % 3 != 2


def header(name: str) -> list[str]:
    """The first lines of a synthetic migration: its id, stage 0, the example's axes."""
    return [
        "version: 1",
        f"migration: {name}",
        "stage: 0",
        "axes:",
        '  py: ["310", "311", "312", "313", "314", "314t"]',
        "  platform: [linux-64, linux-aarch64, win-64]",
        '  sha: {pattern: "[0-9a-f]{40}"}',
        "flags:",
    ]


def migration_text(producers: int, stages: int, *, faults: bool = False) -> str:
    count = families(producers)
    lines = header(f"synthetic-{producers}-{stages}")
    lines += [f"  move-{f}: {{summary: Build family {f} the new way.}}" for f in range(count)]
    lines.append("producers:")
    for j in range(producers):
        f, new = j // 2, j % 2 == 1
        if f >= count:  # an odd producer count: the last one stands alone
            f, new = count - 1, None
        templates = [t.format(f=f) for t in TEMPLATES[: 2 + f % 3]]
        if faults and new and f % 7 == 3:
            templates = templates[1:]  # the new way forgets the wheels
        when = "true" if new is None else (f"move-{f}" if new else f"not move-{f}")
        name = f"solo-{f}" if new is None else f"{'new' if new else 'old'}-{f}"
        if new is None:
            templates = [t.replace(f"pkg{f}-", f"pkg{f}-solo-") for t in templates]
        lines += [f"  {name}:", f"    when: {when}", "    artifacts:"]
        lines += [f'      - "{t}"' for t in templates]
        if faults and new is False and f % 6 == 5:
            lines.append("    run: branch")  # the old way's artifacts come from another run
    if faults:
        lines += [
            "  duplicate:",
            "    when: move-0",
            '    artifacts: ["pkg0-python{py}-{platform}-{sha}-tests"]',
        ]
    lines.append("consumers:")
    for j in range(2 * count):
        f = j // 2
        sources = f"[old-{f}]" if faults and f % 5 == 1 else f"[old-{f}, new-{f}]"
        kind = j % 3
        if kind == 0:  # exact names
            selects = [
                f"pkg{f}-python{{py}}-{{platform}}-{{sha}}",
                f"pkg{f}-python{{py}}-{{platform}}-{{sha}}-tests",
            ]
        elif kind == 1:  # {py} globs
            selects = [
                f"pkg{f}-python{{py}}-{{platform}}-*[0-9a-f]",
                f"pkg{f}-python{{py}}-linux-64-*-tests",
            ]
        else:  # broad
            selects = [f"pkg{f}-*"]
        lines += [f"  use-{j}:", "    inputs:"]
        for k, select in enumerate(selects):
            lines.append(f'      - select: "{select}"')
            if j % 2 == 0:
                lines.append(f"        from: {sources}")
            if kind == 2 and k == 0 and j % 4 == 0:
                lines.append("        required: false")
    lines.append("releases:")
    for f in range(count):
        if not has_release(f):
            continue
        lines += [
            f"  release-{f}:",
            f'    tags: ["pkg{f}-v*"]',
            f'    select: ["pkg{f}-python*"]',
            '    exclude: ["*-tests"]',
            f"    tooling: {'control' if f % 2 == 0 else 'tag'}",
        ]
    lines.append("invariants:")
    for f in range(count):
        if has_release(f):
            lines += ["  - check: release-continuity", f"    tag: pkg{f}-v1.0"]
    return "\n".join(lines) + "\n"


def stage_text(number: int, producers: int, stages: int) -> str:
    count = families(producers)
    body = [f"stage: {number}", f"title: Stage {number}", "set:"]
    seen: list[int] = []
    for t in range(FLIPS):
        k = FLIPS * (number - 1) + t
        f = k % count
        if f in seen:
            continue
        seen.append(f)
        body.append(f"  move-{f}: {'true' if (k // count) % 2 == 0 else 'false'}")
    moved = [f for f in seen if has_release(f)]
    if moved:  # the release takes its names from the other producer of the family now
        body.append("release_changes:")
        for f in moved:
            glob = f'["pkg{f}-python*"]'
            body += [f"  - tag: pkg{f}-v1.0", f"    drop: {glob}", f"    add: {glob}"]
    body += [
        "acceptance:",
        "  - check: inputs-satisfied",
        "  - check: single-source",
        "  - check: unique-artifacts",
    ]
    if number % 10 == 0:
        tags = [f"pkg{f}-v1.0" for f in range(count) if has_release(f)][:5]
        body += ["  - check: tags-routed", f"    tags: [{', '.join(tags)}]"]
    return "\n".join(body) + "\n"


def write(directory: Path, producers: int, stages: int, *, faults: bool = False) -> Path:
    """Write migration.yaml and stages/ into ``directory``; returns the migration file."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "migration.yaml").write_text(migration_text(producers, stages, faults=faults))
    folder = directory / "stages"
    folder.mkdir(exist_ok=True)
    width = max(2, len(str(stages)))
    for number in range(1, stages + 1):
        name = f"{number:0{width}d}-stage-{number}.yaml"
        (folder / name).write_text(stage_text(number, producers, stages))
    return directory / "migration.yaml"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--producers", type=int, default=100, help="N (default 100)")
    parser.add_argument("--stages", type=int, default=7, help="S (default 7)")
    parser.add_argument("--faults", action="store_true", help="break a few checks on purpose")
    parser.add_argument("out", type=Path, help="folder to write (made if missing)")
    args = parser.parse_args(argv)
    if args.producers < 2 or not 1 <= args.stages <= 999:
        parser.error("--producers must be at least 2 and --stages 1..999")
    print(write(args.out, args.producers, args.stages, faults=args.faults))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
