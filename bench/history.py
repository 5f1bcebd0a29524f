#!/usr/bin/env python3
"""`stagegate continuity` over the real history of repositories (issues 34 and 35).

    .venv/bin/python bench/history.py CLONE [CLONE ...] [--since 2024-12-01] [--json OUT]
        [--drift-ratio] [--triage bench/history/triage.json] [--against OLD.json] [-j 2]
    .venv/bin/python bench/history.py --diff OLD.json NEW.json

CLONE is a local clone of a repository (for a `fetch`ed mirror: `git clone -q -s
/work/.mirror/OWNER+NAME/repo DIR`; `-n` is enough, continuity reads git objects). For
every commit on its main line (first parents from HEAD, or --ref) since --since that
changed what a release may read:

- a file under `.github/workflows/` or `.github/actions/`, or under a local action
  (`uses: ./DIR`) the workflows name;
- a script the workflows name by its path (`bash ci/build.sh`, `python tools/x.py`);
- a build setting (pyproject.toml, setup.cfg, setup.py, Cargo.toml, cibuildwheel.toml,
  or a file the workflows name) whose diff touches what decides the wheels: cibuildwheel,
  `CIBW_`, `requires-python`/`python_requires`, maturin, free-threading, abi3;

it runs `stagegate continuity --base C^ --head C --format json` as a process of the
stagegate next to this Python (--stagegate to choose another), in the clone, with
STAGEGATE_NO_CACHE=1 (each run cold, as on a CI runner), and records the exit code, the
CPU time of the process (user + system, from wait4), the unresolved lines, the new
findings and, per release job (FILE#JOB), the artifact names lost, gained, renamed and
accepted, its blind spots and any wheel identifiers lost or gained (read wherever the
JSON holds a `wheels: {lost, gained}`).

`--drift-ratio` also measures one drift of each head: the head's tree is written to a
temporary folder (`git archive`; `.github/` alone where the clone lacks objects, said in
the drift note), `stagegate init --from-workflows` writes the model
there (not timed), and `stagegate drift --format json` is timed the same way (a process,
STAGEGATE_NO_CACHE=1). The figure is continuity's CPU over drift's, summed over the
commits where both ran, with the median and worst per-commit ratio (target: 2x). Where
init refuses the head, the commit has no drift figure and says why.

`--triage FILE` scores the run against judged verdicts (bench/history/triage.json:
`{"OWNER/NAME": {"SHORT_SHA": {"verdict": V, "shape", "said", "why", "fixture"}}}`, V one of `true`,
`intended`, `miss` (a release changed: exit 1 expected, no Release-Change accepted),
`blind` (the release's flow became unreadable: exit 1 expected), `false`, `pass`
(nothing a release ships changed: exit 0 expected)). The summary then
counts false alarms (exit 1 where 0 is expected), misses (exit 0 where 1 is expected) and
alarms no one has judged. The repository's name comes from the clone's origin
(`.../OWNER+NAME/repo` or a GitHub URL), else --name.

`--json OUT` writes every record; `--against OLD.json` (after a run) and `--diff OLD NEW`
list the commits whose verdict changed between two runs: exit code, per release the
names lost, gained and accepted, the wheels, the blind spots, the unresolved count.
Exit: 0, or 1 when a run errored (exit code other than 0/1, or output that is not JSON:
invalid YAML at a commit is exit 2; a bug is 70).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
HERE = Path(__file__).resolve().parent
DEFAULT_TRIAGE = HERE / "history" / "triage.json"

WORKFLOW_DIRS = (".github/workflows/", ".github/actions/")
SCRIPT = re.compile(r"\.(sh|bash|py|ps1|bat|cmd|pl|rb)$")
BUILD_FILES = re.compile(
    r"(^|/)(pyproject\.toml|setup\.cfg|setup\.py|Cargo\.toml|cibuildwheel\.toml)$"
)
BUILD_KEYS = re.compile(
    r"cibuildwheel|CIBW_|requires-python|python_requires|maturin|free-?threading|abi3",
    re.IGNORECASE,
)
CONFIG = re.compile(r"\.(toml|cfg|ini|txt|json|ya?ml|in)$")
PATHLIKE = re.compile(r"(?<![\w$.-])(?:\./)?((?:[\w.-]+/)*[\w.-]+)")
LOCAL_USES = re.compile(r"uses:\s*['\"]?\./([\w./-]+?)/?['\"]?\s*$", re.MULTILINE)
EXPECT_ALARM = {"true", "intended", "miss", "blind"}
EXPECT_PASS = {"false", "pass"}


# --------------------------------------------------------------------------- git


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {repo}:\n{proc.stderr.decode()}")
    return proc.stdout


def blobs(repo: Path, commit: str, prefixes: Sequence[str]) -> dict[str, str]:
    """The text of every file under ``prefixes`` at ``commit`` (one cat-file process)."""
    listing = git(repo, "ls-tree", "-r", "-z", commit, "--", *prefixes).decode()
    wanted = []
    for entry in listing.split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            if meta.split()[1] == "blob":
                wanted.append((path, meta.split()[2]))
    if not wanted:
        return {}
    out = git(repo, "cat-file", "--batch", data="".join(f"{o}\n" for _, o in wanted).encode())
    texts: dict[str, str] = {}
    at = 0
    for path, _obj in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if header[-1] == b"missing":
            at = end + 1
            continue
        size = int(header[2])
        texts[path] = out[end + 1 : end + 1 + size].decode("utf-8", "replace")
        at = end + 1 + size + 1
    return texts


def repository_name(repo: Path, given: str | None) -> str:
    if given:
        return given
    url = subprocess.run(
        ["git", "config", "--get", "remote.origin.url"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    mirror = re.search(r"([\w.-]+)\+([\w.-]+)/repo/?$", url)
    if mirror:
        return f"{mirror[1]}/{mirror[2]}"
    hub = re.search(r"github\.com[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", url)
    if hub:
        return f"{hub[1]}/{hub[2]}"
    return repo.resolve().name


# --------------------------------------------------------------------------- commits


@dataclass
class Commit:
    sha: str
    date: str
    subject: str
    files: list[str]
    why: list[str] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.sha[:7]


def main_line(repo: Path, ref: str, since: str) -> list[Commit]:
    """First-parent commits since ``since``, oldest first, with the files each changed
    against its first parent (merges included, diffed against that parent)."""
    raw = git(
        repo,
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--reverse",
        f"--since={since}",
        "--name-only",
        "-z",
        "--format=%x01%H%x1f%cs%x1f%s",
        ref,
    ).decode("utf-8", "replace")
    commits = []
    for chunk in raw.split("\x01")[1:]:
        head, _, rest = chunk.partition("\0")
        sha, date, subject = head.split("\x1f", 2)
        files = [f.strip("\n") for f in rest.split("\0") if f.strip("\n")]
        commits.append(Commit(sha, date, subject, files))
    return commits


@dataclass
class References:
    """What the workflows at one commit name: script paths and local action folders."""

    paths: set[str]
    actions: set[str]

    @classmethod
    def of(cls, texts: dict[str, str]) -> References:
        paths: set[str] = set()
        actions: set[str] = set()
        for text in texts.values():
            actions.update(m.rstrip("/") for m in LOCAL_USES.findall(text))
            paths.update(PATHLIKE.findall(text))
        return cls(paths, actions)

    def names(self, path: str) -> bool:
        """The workflows name the file by its path."""
        return path in self.paths

    def in_action(self, path: str) -> bool:
        """The file is part of a local action the workflows use."""
        return any(path.startswith(a + "/") for a in self.actions)


def build_diff_touches(repo: Path, commit: Commit, path: str) -> bool:
    diff = git(repo, "diff", "--no-color", "-U0", f"{commit.sha}^", commit.sha, "--", path)
    for line in diff.decode("utf-8", "replace").splitlines():
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and BUILD_KEYS.search(line):
            return True
    return False


def candidates(repo: Path, ref: str, since: str) -> list[Commit]:
    """The main-line commits that changed the workflows, what they call, or what decides
    the wheels (each with why it was taken)."""
    commits = main_line(repo, ref, since)
    if not commits:
        return []
    parents = git(repo, "rev-list", "--parents", "-n", "1", commits[0].sha).decode().split()
    refs = References.of(blobs(repo, parents[1], [".github"])) if len(parents) > 1 else None
    taken = []
    for commit in commits:
        if refs is None:  # the root commit: nothing to compare with
            refs = References.of(blobs(repo, commit.sha, [".github"]))
            continue
        for path in commit.files:
            if path.startswith(WORKFLOW_DIRS):
                commit.why.append(path)
            elif refs.in_action(path) or (refs.names(path) and SCRIPT.search(path)):
                commit.why.append(f"called:{path}")
            elif (
                BUILD_FILES.search(path) or (refs.names(path) and CONFIG.search(path))
            ) and build_diff_touches(repo, commit, path):
                commit.why.append(f"build:{path}")
        if any(not w.startswith(("called:", "build:")) for w in commit.why):
            refs = References.of(blobs(repo, commit.sha, [".github"]))
        if commit.why:
            taken.append(commit)
    return taken


# --------------------------------------------------------------------------- runs


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.pop("CI", None)
    env["STAGEGATE_NO_CACHE"] = "1"
    return env


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[int, float, str, str]:
    """Exit code, CPU seconds (user + system of the process), stdout and stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            code,
            usage.ru_utime + usage.ru_stime,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )


def label(ctx: dict[str, Any]) -> str:
    """An upload context as the verdicts name it: its artifact name (identity by what
    ships), the producing job after an @."""
    return f"{ctx.get('name')}@{ctx.get('job')}"


def wheel_changes(node: Any) -> tuple[set[str], set[str]]:
    """Every `wheels: {lost, gained}` under ``node``, unioned."""
    lost: set[str] = set()
    gained: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            wheels = item.get("wheels")
            if isinstance(wheels, dict):
                lost.update(str(w) for w in wheels.get("lost", []) or [])
                gained.update(str(w) for w in wheels.get("gained", []) or [])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return lost, gained


def release_record(release: dict[str, Any]) -> dict[str, Any]:
    lost, gained = wheel_changes(release)
    renamed = []
    for item in release.get("renamed", []):
        renamed.append(
            {
                "from": item.get("from"),
                "to": item.get("to"),
                "job": item.get("context", {}).get("job"),
            }
        )
    return {
        "release": f"{release.get('file')}#{release.get('job')}",
        "base": len(release.get("base", [])),
        "head": len(release.get("head", [])),
        "lost": sorted(label(c) for c in release.get("lost", [])),
        "gained": sorted(label(c) for c in release.get("gained", [])),
        "renamed": renamed,
        "accepted": sorted(label(c) for c in release.get("accepted", [])),
        "blind": sorted(
            f"{b.get('file')}:{b.get('line')}: {b.get('reason')}" for b in release.get("blind", [])
        ),
        "selects_nothing": bool(release.get("selects_nothing", False)),
        "wheels_lost": sorted(lost),
        "wheels_gained": sorted(gained),
    }


def run_commit(repo: Path, stagegate: str, commit: Commit, env: dict[str, str]) -> dict[str, Any]:
    argv = [
        stagegate,
        "continuity",
        "--base",
        f"{commit.sha}^",
        "--head",
        commit.sha,
        "--format",
        "json",
    ]
    code, cpu, out, err = timed(argv, repo, env)
    record: dict[str, Any] = {
        "sha": commit.sha,
        "short": commit.short,
        "date": commit.date,
        "subject": commit.subject,
        "why": commit.why,
        "exit": code,
        "cpu": round(cpu, 3),
    }
    try:
        data = json.loads(out) if code in (0, 1) else None
    except json.JSONDecodeError:
        data = None
    if data is None:
        record["error"] = (err or out).strip().splitlines()[-12:]
        record.update(unresolved=0, findings=[], releases=[])
        return record
    record["unresolved"] = len(data.get("unresolved", []))
    record["unresolved_kinds"] = unresolved_kinds(data.get("unresolved", []))
    record["findings"] = sorted(
        f"{f.get('kind')}@{f.get('file')}:{f.get('line')}" for f in data.get("findings", [])
    )
    record["releases"] = [release_record(r) for r in data.get("releases", [])]
    return record


def unresolved_kinds(items: Iterable[dict[str, Any]]) -> dict[str, int]:
    """The unresolved lines grouped by what they say (the reason, its first clause)."""
    counts: dict[str, int] = {}
    for item in items:
        reason = str(item.get("reason") or item.get("expression") or "")
        key = re.split(r"[:(]", reason, maxsplit=1)[0].strip()[:80]
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def drift_of_head(
    repo: Path, stagegate: str, commit: Commit, env: dict[str, str]
) -> dict[str, Any]:
    """One drift of the head: its tree written out, a model from init --from-workflows
    (not timed), then `drift --format json` timed as continuity is. The whole tree, so
    that drift reads what continuity reads, the scripts the workflows call included (a
    drift of `.github/` alone reads none of them: on cuda-python they are 1.7 s of a
    4.7 s continuity); `.github/` alone where the clone cannot write the whole tree (a
    mirror that left large objects out), and the note says so."""
    work = Path(tempfile.mkdtemp(prefix="history-drift-"))
    scope = "tree"
    try:
        try:
            archive = git(repo, "archive", "--format=tar", commit.sha)
        except SystemExit:  # git() ends a failed command so
            archive, scope = git(repo, "archive", "--format=tar", commit.sha, ".github"), ".github"
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        code, _, out, err = timed([stagegate, "init", "--from-workflows"], work, env)
        if code != 0:
            return {
                "drift_cpu": None,
                "drift_note": f"init exit {code}: {(err or out).strip()[-200:]}",
            }
        code, cpu, out, err = timed([stagegate, "drift", "--format", "json"], work, env)
        if code not in (0, 1):
            return {
                "drift_cpu": None,
                "drift_note": f"drift exit {code}: {(err or out).strip()[-200:]}",
            }
        return {"drift_cpu": round(cpu, 3), "drift_note": f"drift exit {code} ({scope})"}
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------- verdicts


def verdict(record: dict[str, Any]) -> dict[str, Any]:
    """What two runs are compared on (CPU and line numbers aside)."""
    return {
        "exit": record["exit"],
        "findings": sorted(f.split("@")[0] for f in record.get("findings", [])),
        "releases": {
            r["release"]: {
                k: r[k]
                for k in (
                    "lost",
                    "gained",
                    "accepted",
                    "wheels_lost",
                    "wheels_gained",
                    "selects_nothing",
                )
            }
            | {"blind": len(r["blind"])}
            for r in record.get("releases", [])
            if r["lost"]
            or r["gained"]
            or r["accepted"]
            or r["blind"]
            or r["wheels_lost"]
            or r["wheels_gained"]
            or r["selects_nothing"]
        },
        "unresolved": record.get("unresolved", 0),
    }


def expected_exit(judged: dict[str, Any] | None) -> int | None:
    if judged is None:
        return None
    if judged["verdict"] in EXPECT_ALARM:
        return 1
    if judged["verdict"] in EXPECT_PASS:
        return 0
    raise SystemExit(f"triage: unknown verdict {judged['verdict']!r}")


def summarize(records: list[dict[str, Any]], triage: dict[str, Any]) -> dict[str, Any]:
    runs = len(records)
    alarms = [r for r in records if r["exit"] == 1]
    errors = [r for r in records if r["exit"] not in (0, 1) or "error" in r]
    false_alarms, misses, unjudged, wrong_reason = [], [], [], []
    for r in records:
        judged = triage.get(r["short"])
        want = expected_exit(judged)
        if want is None:
            if r["exit"] == 1:
                unjudged.append(r["short"])
        elif want == 0 and r["exit"] == 1:
            false_alarms.append(r["short"])
        elif want == 1 and r["exit"] == 0:
            misses.append(r["short"])
        elif want == 1 and judged is not None and not agrees(r, judged):
            wrong_reason.append(r["short"])
    cpu = sum(r["cpu"] for r in records)
    with_drift = [r for r in records if r.get("drift_cpu")]
    summary: dict[str, Any] = {
        "commits": runs,
        "alarms": len(alarms),
        "errors": [r["short"] for r in errors],
        "false_alarms": false_alarms,
        "misses": misses,
        "wrong_reason": wrong_reason,
        "unjudged_alarms": unjudged,
        "unresolved_per_run": round(sum(r.get("unresolved", 0) for r in records) / runs, 2)
        if runs
        else 0.0,
        "cpu_total": round(cpu, 2),
        "cpu_per_run": round(cpu / runs, 3) if runs else 0.0,
    }
    if with_drift:
        ratios = [r["cpu"] / r["drift_cpu"] for r in with_drift]
        summary["drift"] = {
            "commits": len(with_drift),
            "continuity_cpu": round(sum(r["cpu"] for r in with_drift), 2),
            "drift_cpu": round(sum(r["drift_cpu"] for r in with_drift), 2),
            "ratio": round(
                sum(r["cpu"] for r in with_drift) / sum(r["drift_cpu"] for r in with_drift), 2
            ),
            "median": round(statistics.median(ratios), 2),
            "worst": round(max(ratios), 2),
        }
    return summary


def agrees(record: dict[str, Any], judged: dict[str, Any]) -> bool:
    """Where the triage names the artifacts (``lost``/``gained``, globs over names) or the
    wheels a release loses or gains, the run names the same (over all releases)."""
    from fnmatch import fnmatchcase

    for key, found_key in (
        ("lost", "lost"),
        ("gained", "gained"),
        ("wheels_lost", "wheels_lost"),
        ("wheels_gained", "wheels_gained"),
    ):
        if key not in judged:
            continue
        found = {item.split("@")[0] for r in record.get("releases", []) for item in r[found_key]}
        for pattern in judged[key]:
            if not any(fnmatchcase(name, pattern) for name in found):
                return False
    return True


# --------------------------------------------------------------------------- output


def listed(items: Sequence[str], limit: int = 4) -> str:
    names = [i.split("@")[0] for i in items]
    shown = ", ".join(names[:limit])
    return shown + (f", ... (+{len(names) - limit})" if len(names) > limit else "")


def commit_lines(record: dict[str, Any], judged: dict[str, Any] | None) -> Iterator[str]:
    mark = ""
    if judged is not None:
        want = expected_exit(judged)
        ok = want == record["exit"]
        mark = f"  [{judged['verdict']}{'' if ok else ' WRONG'}]"
    drift = f" drift {record['drift_cpu']:.2f}s" if record.get("drift_cpu") else ""
    yield (
        f"  {record['short']} {record['date']} exit {record['exit']} cpu {record['cpu']:.2f}s{drift}"
        f" unres {record.get('unresolved', 0):3d}  {record['subject'][:70]}{mark}"
    )
    extra = [w for w in record.get("why", []) if w.startswith(("called:", "build:"))]
    if extra:
        yield f"      taken for {', '.join(extra)}"
    for line in record.get("error", []):
        yield f"      ! {line}"
    for finding in record.get("findings", []):
        yield f"      finding {finding}"
    for r in record.get("releases", []):
        parts = []
        for key in ("lost", "gained", "accepted", "wheels_lost", "wheels_gained"):
            if r[key]:
                parts.append(f"{key} {len(r[key])} [{listed(r[key])}]")
        if r["renamed"]:
            parts.append(f"renamed {len(r['renamed'])}")
        if r["blind"]:
            parts.append(f"blind {len(r['blind'])} [{r['blind'][0]}]")
        if r["selects_nothing"]:
            parts.append("selects nothing")
        if parts:
            yield f"      {r['release']} ({r['base']}->{r['head']}): " + "; ".join(parts)


def summary_lines(name: str, summary: dict[str, Any]) -> Iterator[str]:
    yield (
        f"{name}: {summary['commits']} commits, {summary['alarms']} alarms"
        f" ({len(summary['false_alarms'])} false, {len(summary['unjudged_alarms'])} unjudged),"
        f" {len(summary['misses'])} missed, {len(summary['wrong_reason'])} for another reason,"
        f" {len(summary['errors'])} errored; {summary['unresolved_per_run']} unresolved per run;"
        f" CPU {summary['cpu_total']:.1f}s ({summary['cpu_per_run']:.2f}s a run)"
    )
    for key in ("false_alarms", "misses", "wrong_reason", "unjudged_alarms", "errors"):
        if summary[key]:
            yield f"  {key.replace('_', ' ')}: {' '.join(summary[key])}"
    if "drift" in summary:
        d = summary["drift"]
        yield (
            f"  continuity / one drift of the head (CPU, {d['commits']} commits):"
            f" {d['ratio']}x overall ({d['continuity_cpu']}s / {d['drift_cpu']}s),"
            f" median {d['median']}x, worst {d['worst']}x (target 2x)"
        )


def diff_runs(old: dict[str, Any], new: dict[str, Any]) -> Iterator[str]:
    """The commits whose verdict changed between two JSON runs."""
    for name, repo in new["repositories"].items():
        before = {r["sha"]: r for r in old.get("repositories", {}).get(name, {}).get("commits", [])}
        for record in repo["commits"]:
            was = before.get(record["sha"])
            if was is None:
                yield f"{name} {record['short']}: new in this run (exit {record['exit']})"
                continue
            a, b = verdict(was), verdict(record)
            if a == b:
                continue
            yield f"{name} {record['short']} {record['subject'][:60]}"
            if a["exit"] != b["exit"]:
                yield f"    exit {a['exit']} -> {b['exit']}"
            if a["findings"] != b["findings"]:
                yield f"    findings {a['findings']} -> {b['findings']}"
            if a["unresolved"] != b["unresolved"]:
                yield f"    unresolved {a['unresolved']} -> {b['unresolved']}"
            for rel in sorted(set(a["releases"]) | set(b["releases"])):
                ra, rb = a["releases"].get(rel, {}), b["releases"].get(rel, {})
                for key in sorted(set(ra) | set(rb)):
                    if ra.get(key) != rb.get(key):
                        yield f"    {rel} {key}: {ra.get(key)} -> {rb.get(key)}"


# --------------------------------------------------------------------------- main


def measure(args: argparse.Namespace, clone: Path, triage: dict[str, Any]) -> dict[str, Any]:
    name = repository_name(clone, args.name if len(args.clones) == 1 else None)
    judged = {sha[:7]: verdict for sha, verdict in triage.get(name, {}).items()}
    commits = candidates(clone, args.ref, args.since)
    if args.commits:
        wanted = tuple(args.commits.split(","))
        commits = [c for c in commits if c.sha.startswith(wanted)]
    env = environment()

    def one(commit: Commit) -> dict[str, Any]:
        record = run_commit(clone, args.stagegate, commit, env)
        if args.drift_ratio:
            record.update(drift_of_head(clone, args.stagegate, commit, env))
        return record

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        records = list(pool.map(one, commits))
    head = git(clone, "rev-parse", args.ref).decode().strip()
    summary = summarize(records, judged)
    print(f"== {name} ({clone}, {args.ref} {head[:10]}, since {args.since})")
    for record in records:
        for line in commit_lines(record, judged.get(record["short"])):
            print(line)
    for line in summary_lines(name, summary):
        print(line)
    print(flush=True)
    return {"name": name, "clone": str(clone), "head": head, "commits": records, "summary": summary}


def totals(repos: dict[str, Any]) -> dict[str, Any]:
    """The summary over every repository (each judged by its own triage)."""
    records = [r for repo in repos.values() for r in repo["commits"]]
    summary = summarize(records, {})
    for key in ("false_alarms", "misses", "wrong_reason", "unjudged_alarms"):
        summary[key] = [
            f"{name}@{sha}" for name, repo in repos.items() for sha in repo["summary"][key]
        ]
    return summary


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", nargs="*", type=Path, help="local clones to measure")
    parser.add_argument(
        "--since", default="2024-12-01", help="first commit date (default 2024-12-01)"
    )
    parser.add_argument("--ref", default="HEAD", help="the main line's tip (default HEAD)")
    parser.add_argument("--name", help="OWNER/NAME of a single clone (default: from its origin)")
    parser.add_argument("--commits", help="only these commits (comma-separated sha prefixes)")
    parser.add_argument("--stagegate", default=str(BIN / "stagegate"), help="the stagegate to run")
    parser.add_argument(
        "--drift-ratio", action="store_true", help="also time one drift of each head"
    )
    parser.add_argument(
        "--triage", type=Path, default=DEFAULT_TRIAGE, help="judged verdicts (JSON)"
    )
    parser.add_argument("--json", type=Path, help="write every record to this file")
    parser.add_argument(
        "--against", type=Path, help="list the verdicts changed since this JSON run"
    )
    parser.add_argument(
        "--diff", nargs=2, type=Path, metavar=("OLD", "NEW"), help="compare two runs"
    )
    parser.add_argument("-j", "--jobs", type=int, default=1, help="runs at once (default 1)")
    args = parser.parse_args(argv)
    if not args.diff and not args.clones:
        parser.error("give at least one clone, or --diff OLD NEW")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if args.diff:
        old, new = (json.loads(p.read_text(encoding="utf-8")) for p in args.diff)
        changed = list(diff_runs(old, new))
        print("\n".join(changed) if changed else "no verdict changed")
        return 0
    triage = json.loads(args.triage.read_text(encoding="utf-8")) if args.triage.is_file() else {}
    repos = {}
    for clone in args.clones:
        result = measure(args, clone, triage)
        repos[result["name"]] = result
    summary = totals(repos)
    if len(repos) > 1:
        for line in summary_lines("all", summary):
            print(line)
    version = subprocess.run(
        [args.stagegate, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    document = {
        "stagegate": version,
        "since": args.since,
        "repositories": repos,
        "summary": summary,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    if args.against:
        old = json.loads(args.against.read_text(encoding="utf-8"))
        changed = list(diff_runs(old, document))
        print("verdicts changed since", args.against)
        print("\n".join(changed) if changed else "no verdict changed")
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
