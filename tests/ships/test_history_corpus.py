"""`stagegate continuity` on the shapes of real history (tests/fixtures/history/, README.md there).

Each case is a `base/` and a `head/` tree of our own writing that reproduces one commit
bench/history.py found in a public repository's history (or a shape issue 34 names), and
an `expected.json`. All the trees are committed once per module, in one throwaway
repository (`git fast-import`: a commit per tree, each replacing the whole tree), and
each pair is compared with `continuity --base BASE --head HEAD --format json`, in
process. What is compared, exactly (README.md): the exit code; every release job found
and the artifact names it lost, gained and accepted; where the case says so, the head's
new findings, the names that reach the release at the head, the releases with a blind
spot, the wheel identifiers lost and gained (issue 35), the wheels two uploads
reaching one release both carry, the renames (base name, head name), and the
expressions listed as unresolved where files flow to a release. A case with `accept` runs
again with `--accept FILE`; one with `event` on a pull_request event whose body holds
the Release-Change lines.

Cases the current code gets wrong are in XFAIL with what is wrong (strict: a fix makes
them fail until the mark is removed).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Result
from scratch import AUTHOR, EPOCH, git_env, init, pin_git

CORPUS = FIXTURES / "history"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
Sg = Callable[..., Result]

XFAIL: dict[str, str] = {
    "04-uv-publish-swap": "`uv publish dist/*` unread: read as publishing every download (the docs artifact gained)",
    "12-duplicate-leg-narrowed": "a unique rename within one job and template (same files) reported as lost + gained",
    "15-pin-comment-forms": "pin comments `# tag=vN` and `# pin @vN` unread: the download's version unknown, the release selects nothing",
    "16-ratchet-pin-collision": "`# ratchet:owner/repo@vN` pin comments unread: no collision, nothing lost",
    "23-build-moved-to-remote-reusable": "a flow made unreadable is reported as a loss, not as a blind spot",
}
"""What the current code gets wrong, per case (``NAME`` its plain run, ``NAME:accept`` and
``NAME:event`` its runs with Release-Change lines)."""


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    pin_git(monkeypatch)


def _blob(path: Path) -> bytes:
    data = path.read_bytes()
    return b"data %d\n%s\n" % (len(data), data)


def _stream(cases: list[str]) -> Iterator[bytes]:
    """fast-import commands: a commit per tree (base, then head, for every case), each
    with `deleteall` so that it holds that tree alone."""
    mark = 0
    who = f"{AUTHOR[0]} <{AUTHOR[1]}>".encode()
    for case in cases:
        for side in ("base", "head"):
            mark += 1
            message = f"{case} {side}".encode()
            stamp = b"%d +0000" % (EPOCH + 60 * mark)
            yield b"commit refs/heads/main\nmark :%d\n" % mark
            yield b"author %s %s\ncommitter %s %s\n" % (who, stamp, who, stamp)
            yield b"data %d\n%s\ndeleteall\n" % (len(message), message)
            tree = CORPUS / case / side
            for path in sorted(p for p in tree.rglob("*") if p.is_file()):
                rel = path.relative_to(tree).as_posix().encode()
                yield b"M 100644 inline %s\n" % rel
                yield _blob(path)
            yield b"\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[str, str]]]:
    """One repository holding every case's base and head: its root and, per case, the
    two commits."""
    root = tmp_path_factory.mktemp("history-corpus")
    init(root)
    marks = root / "marks"
    subprocess.run(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=root,
        env=git_env(),
        input=b"".join(_stream(CASES)),
        check=True,
        capture_output=True,
    )
    sha = dict(line.split() for line in marks.read_text(encoding="utf-8").splitlines())
    pairs = {case: (sha[f":{2 * i + 1}"], sha[f":{2 * i + 2}"]) for i, case in enumerate(CASES)}
    return root, pairs


def _expected(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / case / "expected.json").read_text(encoding="utf-8"))
    return data


def _key(release: dict[str, Any]) -> str:
    return f"{release['file']}#{release['job']}"


def _names(contexts: list[dict[str, Any]]) -> list[str]:
    return sorted({str(c["name"]) for c in contexts})


def _wheels(node: Any) -> tuple[set[str], set[str]]:
    """Every `wheels: {lost, gained}` under a release's JSON, unioned (issue 35 puts them
    on the contexts)."""
    lost: set[str] = set()
    gained: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            wheels = item.get("wheels")
            if isinstance(wheels, dict):
                lost.update(wheels.get("lost", []))
                gained.update(wheels.get("gained", []))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return lost, gained


def _compare(data: dict[str, Any], code: int, want: dict[str, Any], whole: dict[str, Any]) -> None:
    assert code == want["exit"], json.dumps(data, indent=1)[:4000]
    found = {
        _key(r): {
            "lost": _names(r["lost"]),
            "gained": _names(r["gained"]),
            "accepted": _names(r.get("accepted", [])),
        }
        for r in data["releases"]
    }
    assert found == want["releases"]
    if "findings" in whole:
        assert sorted(f["kind"] for f in data["findings"]) == whole["findings"]
    if "head_names" in whole:
        heads = {_key(r): _names(r["head"]) for r in data["releases"]}
        assert {k: heads.get(k) for k in whole["head_names"]} == whole["head_names"]
    if "blind" in whole:
        assert sorted(_key(r) for r in data["releases"] if r.get("blind")) == whole["blind"]
    if "duplicates" in whole:
        twice = {
            _key(r): sorted({i for d in r["duplicates"] for i in d["identifiers"]})
            for r in data["releases"]
        }
        assert {k: twice.get(k) for k in whole["duplicates"]} == whole["duplicates"]
    if "renamed" in whole:
        renames = {
            _key(r): sorted([n["from"], n["to"]] for n in r["renamed"]) for r in data["releases"]
        }
        assert {k: renames.get(k) for k in whole["renamed"]} == whole["renamed"]
    if "unresolved" in whole:
        assert sorted(str(u["expression"]) for u in data["unresolved"]) == whole["unresolved"]
    if "moved" in whole:
        moved = {
            _key(r): sorted(
                [m["change"], m["context"]["name"], m["shipped_by"]] for m in r["moved"]
            )
            for r in data["releases"]
        }
        assert {k: moved.get(k) for k in whole["moved"]} == whole["moved"]
    if "wheels" in whole:
        wheels = {}
        for r in data["releases"]:
            lost, gained = _wheels(r)
            wheels[_key(r)] = {"lost": sorted(lost), "gained": sorted(gained)}
        assert {k: wheels.get(k) for k in whole["wheels"]} == whole["wheels"]


def _runs() -> Iterator[Any]:
    for case in CASES:
        want = _expected(case)
        runs = [("", case)] + [(f":{v}", case) for v in ("accept", "event") if v in want]
        for suffix, name in runs:
            reason = XFAIL.get(name + suffix)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, suffix.lstrip(":"), id=name + suffix, marks=marks)


@pytest.mark.parametrize(("case", "variant"), list(_runs()))
def test_history_case(
    sg: Sg,
    corpus: tuple[Path, dict[str, tuple[str, str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    variant: str,
) -> None:
    root, pairs = corpus
    base, head = pairs[case]
    whole = _expected(case)
    want = whole[variant] if variant else whole
    args = ["continuity", "--base", base, "--head", head, "--format", "json"]
    if variant == "accept":
        accept = tmp_path / "accept.txt"
        accept.write_text("\n".join(want["lines"]) + "\n", encoding="utf-8")
        args += ["--accept", str(accept)]
    elif variant == "event":
        event = tmp_path / "event.json"
        event.write_text(json.dumps({"pull_request": {"body": want["body"]}}), encoding="utf-8")
        monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    result = sg(*args, cwd=root)
    assert result.code in (0, 1), result.output
    _compare(json.loads(result.out), result.code, want, whole if not variant else {})


def test_every_case_has_its_trees_and_a_readme_line() -> None:
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for case in CASES:
        assert (CORPUS / case / "base").is_dir() and (CORPUS / case / "head").is_dir(), case
        assert f"| {case} |" in readme, case
        assert _expected(case)["verdict"] in {"false", "true", "intended", "miss", "blind", "pass"}
    assert set(XFAIL) <= set(CASES)
