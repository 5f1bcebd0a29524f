#!/usr/bin/env python3
"""The audit's speed: the whole `stagegate audit` process vs `git grep -F` for the same strings.

    .venv/bin/python bench/audit.py [--files 20000] [--runs 11]
    .venv/bin/python bench/run.py audit          # the same, beside the other benchmarks

Makes a synthetic repository in a temporary folder (source-like text files of mixed
sizes in nested folders, a few binary files, release notes that `audit.ignore`
covers, legacy strings sprinkled in about one file in two hundred), with the worked
example's migration.yaml and stages at its top, and commits it once. Then it runs,
alternately, `stagegate audit --stage 7` (every legacy item retired, every flag
stale: every string searched) and the one `git grep -F --text` that searches the same
files for the same strings, and reports the median of each and the median of the
paired ratios. Before timing it checks that the audit's findings are exactly the
lines git grep reports.

The second figure is the audit with `{regex: ...}` references (a small migration in
`regex/` of the same kind of repository, whose one retired item has only regex
references) against `git grep -P` for the same expressions: git's own regex engine
doing the same search. The audit searches by the expressions' fixed texts with
`git grep -F` and confirms each candidate line with Python's `re`; its findings must
equal the lines git grep -P reports, attributed to each expression.

    .venv/bin/python bench/audit.py --only regex
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Figure, environment, paired, timed

REPO = Path(__file__).resolve().parent.parent
STAGEGATE = str(Path(sys.executable).parent / "stagegate")
STAGE = 7
TARGET = 1.5
BLAME_TARGET = 2.0
ATTRIBUTES_TARGET = 2.0
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
WORDS = [
    "self",
    "value",
    "config",
    "build",
    "release",
    "wheel",
    "artifact",
    "download",
    "upload",
    "matrix",
    "python",
    "cuda",
    "bindings",
    "core",
    "test",
    "return",
    "import",
    "def",
    "class",
    "if",
    "else",
    "for",
    "while",
    "with",
    "yield",
    "async",
    "await",
    "version",
    "toolkit",
    "platform",
    "linux",
    "win",
    "runner",
    "job",
    "step",
    "name",
    "run",
    "uses",
    "env",
    "path",
    "select",
]


def _text_file(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        indent = " " * rng.choice((0, 4, 4, 8, 8, 12))
        out.append(indent + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 11))))
    return "\n".join(out) + "\n"


def _fixed_only(path: Path) -> str:
    """The migration at ``path`` without its ``{regex: ...}`` references."""
    import yaml

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: [r for r in v if isinstance(r, str)] if k == "references" else strip(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return yaml.safe_dump(strip(data), sort_keys=False, allow_unicode=True)


def make_repository(top: Path, files: int, strings: Sequence[str], seed: int = 7) -> None:
    """``files`` tracked files under ``top``, the example migration at the top, one commit."""
    rng = random.Random(seed)
    # the fixed-string figure compares with one `git grep -F`: the example's `{regex: ...}`
    # references are left out of its copy (the regex figure measures those on their own)
    (top / "migration.yaml").write_text(_fixed_only(REPO / "migration.yaml"), encoding="utf-8")
    shutil.copytree(REPO / "stages", top / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    notes = top / "cuda_bindings" / "docs" / "source" / "release"
    notes.mkdir(parents=True)
    made = 0
    for n in range(20):
        (notes / f"12.9.{n}-notes.rst").write_text(f"Released from the 12.9.x branch ({n}).\n")
        made += 1
    index = 0
    while made < files:
        package = f"pkg{index % 40:02d}"
        folder = top / package / f"sub{(index // 40) % 12:02d}" / f"mod{(index // 480) % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if index % 97 == 0:
            (folder / f"blob{index}.bin").write_bytes(
                bytes(rng.randrange(256) for _ in range(2048)) + b"\0" + strings[0].encode()
            )
        else:
            lines = int(rng.lognormvariate(4.2, 0.9)) + 3  # median ~70 lines, a long tail
            body = _text_file(rng, min(lines, 3000))
            if index % 200 == 0:
                rows = body.split("\n")
                for _ in range(rng.randint(1, 4)):
                    at = rng.randrange(len(rows))
                    rows[at] += f"  # {rng.choice(strings)}"
                body = "\n".join(rows)
            suffix = rng.choice((".py", ".py", ".py", ".yml", ".sh", ".md", ".pyx"))
            (folder / f"file{index}{suffix}").write_text(body)
        made += 1
        index += 1
    env = {**os.environ, **GIT_ENV}
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "gc.auto=0", "commit", "-q", "-m", "synthetic"],
    ):
        subprocess.run(["git", *args], cwd=top, env=env, check=True)


def searched_strings() -> tuple[list[str], list[str]]:
    """The strings `stagegate audit --stage 7` searches for, and the pathspecs that say
    where, taken from the example through stagegate's own functions."""
    from stagegate import audit
    from stagegate.git.search import WHOLE_TREE
    from stagegate.validation import load

    migration = load(REPO / "migration.yaml")
    fixed = [s for s in audit.searched(migration, STAGE) if isinstance(s, str)]
    return fixed, [*audit.exclusions(migration), WHOLE_TREE]


def grep_lines(out: bytes, strings: Sequence[str]) -> set[tuple[str, int, str]]:
    """(file, line, string) for every string in every line of `git grep -z -n` output."""
    found = set()
    for record in out.split(b"\n"):
        if not record:
            continue
        path, number, text = record.split(b"\0", 2)
        for s in strings:
            if s.encode() in text:
                found.add((path.decode("utf-8", "backslashreplace"), int(number), s))
    return found


def text_only(top: Path, found: set[tuple[str, int, str]]) -> set[tuple[str, int, str]]:
    """``found`` without the lines of files that are binary by content (a NUL in their
    first 8,000 bytes): the audit searches every file as text, whatever .gitattributes
    says, and then leaves those out, as git itself does when no attribute decides."""
    binary: dict[str, bool] = {}
    for file, _, _ in found:
        if file not in binary:
            binary[file] = b"\0" in (top / file).read_bytes()[:8000]
    return {entry for entry in found if not binary[entry[0]]}


def audit_lines(out: bytes) -> set[tuple[str, int, str]]:
    report = json.loads(out)
    found = {(f["file"], f["line"], f["reference"]) for f in report["findings"] if f["line"]}
    for flag in report["stale_flags"]:
        found |= {(r["file"], r["line"], r["reference"]) for r in flag["references"]}
    return found


def same_findings(ours: set[Any], theirs: set[Any], baseline: str, what: str) -> None:
    """Stop unless the audit found exactly what ``baseline`` found: a timing of two
    searches that disagree would compare different work."""
    if ours != theirs:
        raise SystemExit(
            f"the audit's findings differ from {baseline}'s: {len(ours - theirs)} only in the "
            f"audit, {len(theirs - ours)} only in {baseline}"
        )
    print(f"findings equal {baseline}'s: {len(ours)} {what}", file=sys.stderr)


def audit_figures(work: Path, files: int = 20000, runs: int = 11) -> list[Figure]:
    top = work / "repo"
    top.mkdir()
    strings, skip = searched_strings()
    make_repository(top, files, strings)
    env = environment(work)
    subject = [STAGEGATE, "audit", "--stage", str(STAGE)]
    patterns = [a for s in strings for a in ("-e", s)]
    # the same search as the audit's: every file as text, whatever .gitattributes says
    baseline = ["git", "grep", "-F", "-n", "-z", "--text", "--no-color", *patterns, "--", *skip]

    _, _, json_out = timed([*subject, "--format", "json"], top, env)
    _, _, grep_out = timed(baseline, top, env)
    ours, theirs = audit_lines(json_out), text_only(top, grep_lines(grep_out, strings))
    same_findings(ours, theirs, "git grep", "(file, line, string) triples")

    figures = [
        paired(
            f"stagegate audit / git grep -F, {files:,} files",
            subject,
            baseline,
            cwd=top,
            env=env,
            target=TARGET,
            runs=runs,
        ),
        paired(
            f"stagegate audit --blame / audit, {files:,} files",
            [*subject, "--blame"],
            subject,
            cwd=top,
            env=env,
            target=BLAME_TARGET,
            runs=runs,
        ),
    ]
    # issue #24: files an attribute converts (here every *.yml, about one in seven) are
    # searched in their committed blobs too; the same findings, at what cost
    (top / ".gitattributes").write_text("*.yml ident\n")
    git_env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", ".gitattributes"], cwd=top, env=git_env, check=True)
    subprocess.run(
        ["git", "-c", "gc.auto=0", "commit", "-q", "-m", "attributes"],
        cwd=top,
        env=git_env,
        check=True,
    )
    _, _, json_out = timed([*subject, "--format", "json"], top, env)
    same_findings(audit_lines(json_out), theirs, "git grep", "(file, line, string) triples")
    figures.append(
        paired(
            f"stagegate audit / git grep -F, {files:,} files, *.yml ident (blobs searched too)",
            subject,
            baseline,
            cwd=top,
            env=env,
            target=ATTRIBUTES_TARGET,
            runs=runs,
        )
    )
    return figures


REGEX_TARGET = 1.2
REGEXES = [
    "cuda-python-wheel(?!-cuda)",
    "LATEST_PRIOR_RUN_ID\\b",
    "backport_?branch",
    "12\\.9\\.x(?!-notes)",
]
REGEX_SPRINKLED = [
    "cuda-python-wheel",
    "cuda-python-wheel-cuda13.4.1",
    "LATEST_PRIOR_RUN_ID",
    "LATEST_PRIOR_RUN_IDS",
    "backport_branch",
    "backportbranch",
    "12.9.x",
    "12.9.x-notes",
]
REGEX_MIGRATION = """\
version: 1
migration: regex-bench
stage: 0
flags:
  retired:
    summary: The legacy item is gone.
producers:
  legacy:
    when: not retired
    artifacts: [legacy-wheel]
    legacy:
      references:
{references}
  current:
    artifacts: [current-wheel]
"""
REGEX_STAGE = "stage: 1\ntitle: Retire the legacy item\nset:\n  retired: true\n"


def pcre_available(work: Path) -> bool:
    """Whether this git was built with PCRE (``git grep -P``)."""
    probe = work / "pcre-probe"
    probe.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=probe, check=True)
    done = subprocess.run(["git", "grep", "-P", "x(?!y)"], cwd=probe, capture_output=True)
    return done.returncode in (0, 1)


def regex_lines(out: bytes, patterns: Sequence[str]) -> set[tuple[str, int, str]]:
    """(file, line, reference label) for every expression in every line git grep printed."""
    import re

    found = set()
    compiled = [(p, re.compile(p)) for p in patterns]
    for record in out.split(b"\n"):
        if not record:
            continue
        path, number, text = record.split(b"\0", 2)
        line = text.removesuffix(b"\r").decode("utf-8", "surrogateescape")
        for pattern, expression in compiled:
            if expression.search(line):
                name = path.decode("utf-8", "backslashreplace")
                found.add((name, int(number), f"{{regex: {pattern}}}"))
    return found


def regex_figures(work: Path, files: int = 20000, runs: int = 11) -> list[Figure]:
    """The audit with regex references against git grep -P for the same expressions."""
    from stagegate import audit
    from stagegate.git.search import WHOLE_TREE
    from stagegate.validation import load

    if not pcre_available(work):
        print("git grep -P is unavailable (git without PCRE): no regex figure", file=sys.stderr)
        return []
    top = work / "regex-repo"
    top.mkdir()
    make_repository(top, files, REGEX_SPRINKLED, seed=11)
    folder = top / "regex"
    (folder / "stages").mkdir(parents=True)
    references = "\n".join(f"        - {{regex: '{p}'}}" for p in REGEXES)
    (folder / "migration.yaml").write_text(REGEX_MIGRATION.format(references=references))
    (folder / "stages" / "01-retire.yaml").write_text(REGEX_STAGE)
    env = environment(work)
    git_env = {**os.environ, **GIT_ENV}
    for args in (["add", "-A"], ["-c", "gc.auto=0", "commit", "-q", "-m", "regex migration"]):
        subprocess.run(["git", *args], cwd=top, env=git_env, check=True)
    migration = load(folder / "migration.yaml")
    skip = [*audit.exclusions(migration), WHOLE_TREE]
    subject = [STAGEGATE, "audit", "--stage", "1"]
    patterns = [a for p in REGEXES for a in ("-e", p)]
    baseline = ["git", "grep", "-P", "-n", "-z", "--text", "--no-color", "--full-name", *patterns]
    baseline += ["--", *skip]

    _, _, json_out = timed([*subject, "--format", "json"], folder, env)
    _, _, grep_out = timed(baseline, folder, env)
    findings = json.loads(json_out)["findings"]
    ours = {(f["file"], f["line"], f["reference"]) for f in findings if f["line"]}
    theirs = text_only(top, regex_lines(grep_out, REGEXES))
    same_findings(ours, theirs, "git grep -P", "(file, line, regex) triples")
    return [
        search_only(migration, folder, baseline, env, runs),
        paired(
            f"stagegate audit, {len(REGEXES)} regex references / git grep -P, {files:,} files",
            subject,
            baseline,
            cwd=folder,
            env=env,
            target=REGEX_TARGET,
            runs=runs,
        ),
    ]


def search_only(
    migration: Any, folder: Path, baseline: Sequence[str], env: dict[str, str], runs: int
) -> Figure:
    """The search itself, without the start-up of a process: ``audit.search`` in this
    process (the migration loaded once) against the git grep -P process, paired."""
    import statistics
    import time

    from stagegate import audit

    ours, theirs, ratios = [], [], []
    for _ in range(runs + 2):
        start = time.perf_counter()
        audit.search(migration, 1, root=folder)
        s = time.perf_counter() - start
        b, _, _ = timed(baseline, folder, env)
        ours.append(s)
        theirs.append(b)
        ratios.append(s / b)
    ours, theirs, ratios = ours[2:], theirs[2:], ratios[2:]  # the first two warm up
    return Figure(
        "  the search alone (audit.search in-process) / git grep -P",
        statistics.median(ours),
        statistics.median(theirs),
        statistics.median(ratios),
        REGEX_TARGET,
        0.0,
    )


def _show(figure: Figure, runs: int, ours: str, theirs: str) -> None:
    print(figure.name)
    print(f"  {ours:<16} {figure.subject * 1000:7.1f} ms (median of {runs})")
    print(f"  {theirs:<16} {figure.baseline * 1000:7.1f} ms")
    print(
        f"  ratio            {figure.ratio:7.2f}x (median of paired runs; target "
        f"{figure.target:g}x: {'ok' if figure.ok else 'OVER'})   peak RSS "
        f"{figure.peak_mib:.1f} MiB"
    )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--only", choices=("strings", "regex"), help="run one figure only")
    args = parser.parse_args(argv)
    figures: list[tuple[Figure, str, str]] = []
    # ignore_cleanup_errors: a `git gc --auto` that a commit left running may still write
    with tempfile.TemporaryDirectory(
        prefix="stagegate-bench-audit-", ignore_cleanup_errors=True
    ) as tmp:
        if args.only != "regex":
            plain, blame, attributed = audit_figures(Path(tmp), args.files, args.runs)
            figures += [
                (plain, "stagegate audit", "git grep -F"),
                (blame, "audit --blame", "audit"),
                (attributed, "stagegate audit", "git grep -F"),
            ]
        if args.only != "strings":
            figures += [
                (f, "stagegate audit", "git grep -P")
                for f in regex_figures(Path(tmp), args.files, args.runs)
            ]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    for figure, ours, theirs in figures:
        _show(figure, args.runs, ours, theirs)
    return 0 if all(f.ok for f, _, _ in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
