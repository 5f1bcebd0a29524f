"""The fuzz corpus and its runner: seeds, seeded mutations, running every command on a case.

Shared by the fuzz tests and by the tests that replay its seeds on other commands
(drift, the limits).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from conftest import CASES, REPO
from stagegate.cli import run

Project = dict[str, bytes]

NORMAL_CASES = 75
LONG_CASES = 4125
"""``--fuzz-long`` runs the seeds after the suite's: NORMAL_CASES to NORMAL_CASES + LONG_CASES,
to 4,199. The suite's slice makes every text mutation (test_fuzz.py checks it)."""
CHUNK = 25
COMMAND_SECONDS = 20.0
"""A single command on a mutated input may take this long (in-process, 2 shared cores)."""
OK_CODES = frozenset({0, 1, 2})
SKIPPED_KINDS = ("pytest", "command")


# --------------------------------------------------------------------------- seeds

MEDIUM = {
    "migration.yaml": """\
version: 1
migration: medium
summary: Every cheap check kind over two runs, an open axis and an exclusion.
stage: 1
axes:
  py: ["311", "312", "313t"]
  platform: [linux-64, win-64]
  sha: {pattern: "[0-9a-f]{40}"}
  build: {pattern: "(?:dev|rc)[0-9]+|[0-9]+"}
flags:
  new-build:
    summary: Build the new wheels in this run.
    references: [NEW_BUILD]
  drop-old:
    default: false
    references: ["old-job"]
producers:
  old:
    summary: The old wheels, from the branch's run.
    when: not drop-old
    run: branch
    artifacts: ["pkg-old-python{py}-{platform}-{sha}"]
    legacy: {references: [OLD_WHEELS], paths: [ci/old.yml]}
  new:
    when: new-build or not drop-old
    artifacts:
      - "pkg-python{py}-{platform}-{sha}"
      - "pkg-python{py}-{platform}-{sha}-tests"
      - "docs-{build}"
consumers:
  tests:
    when: true
    inputs:
      - select: "pkg-python{py}-{platform}-*[0-9a-f]"
        from: [new]
      - select: "pkg-old-python{py}-{platform}-*"
        required: false
        from: [old]
  docs:
    when: new-build
    inputs:
      - select: "docs-*"
releases:
  pkg:
    when: true
    tags: ["v1.*", "v2.[0-9]*"]
    select: ["pkg-python*", "pkg-old-*"]
    exclude: ["*-tests"]
    expect: [new]
    tooling: control
  docs:
    when: new-build
    tags: ["docs-v*"]
    select: ["docs-[!x]*"]
invariants:
  - check: tags-routed
    tags: [v1.0, v2.5]
  - check: unique-artifacts
audit:
  ignore: ["docs/*.rst"]
""",
    "stages/01-new-build.yaml": """\
stage: 1
title: New build beside the old one
outcome: Both wheels exist; the release selects both.
set:
  new-build: true
acceptance:
  - check: inputs-satisfied
  - check: single-source
    consumer: tests
  - check: release-continuity
    tag: v1.0
  - check: pytest
""",
    "stages/02-drop-old.yaml": """\
stage: 2
title: Drop the old build
set:
  drop-old: true
reversible: false
acceptance:
  - check: inputs-satisfied
  - check: release-continuity
    tag: v2.5
    since: 1
  - check: command
    run: [python, -c, "print('hi')"]
""",
}


def _registered_kinds() -> frozenset[str]:
    from stagegate.checks import kinds

    return frozenset(kinds())


_CHECK_ITEM = re.compile(r"^(?P<indent>\s*)- check:\s*(?P<kind>[A-Za-z0-9_-]+)\s*$")


def without_checks(text: str, drop: Callable[[str], bool]) -> str:
    """``text`` with the list items ``- check: KIND`` (and their argument lines) removed."""
    out: list[str] = []
    skipping: int | None = None
    for line in text.splitlines(keepends=True):
        if skipping is not None:
            indent = len(line) - len(line.lstrip(" "))
            if line.strip() and indent > skipping:
                continue
            skipping = None
        match = _CHECK_ITEM.match(line)
        if match and drop(match["kind"]):
            skipping = len(match["indent"])
            continue
        out.append(line)
    return "".join(out)


def _project_from(folder: Path) -> Project:
    files: Project = {}
    if (folder / "migration.yaml").is_file():
        files["migration.yaml"] = (folder / "migration.yaml").read_bytes()
    stages = folder / "stages"
    if stages.is_dir():
        for path in sorted(stages.iterdir()):
            if path.is_file() and path.suffix == ".yaml":
                files[f"stages/{path.name}"] = path.read_bytes()
    return files


def _cleaned(project: Project) -> Project:
    """Seeds without checks that start processes, or whose kind is not built yet."""
    known = _registered_kinds()

    def drop(kind: str) -> bool:
        return kind in SKIPPED_KINDS or (kind not in known and kind in {"retired"})

    out: Project = {}
    for rel, raw in project.items():
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            out[rel] = raw
            continue
        out[rel] = without_checks(text, drop).encode("utf-8")
    return out


@functools.cache
def seeds() -> dict[str, Project]:
    """Name -> files: the example, the medium migration and every case under tests/cases."""
    found: dict[str, Project] = {
        "example": _cleaned(_project_from(REPO)),
        "medium": _cleaned({k: v.encode() for k, v in MEDIUM.items()}),
    }
    for group in ("valid", "invalid"):
        for case in sorted((CASES / group).iterdir()):
            if case.is_dir():
                found[f"{group}/{case.name}"] = _cleaned(_project_from(case))
    return found


# --------------------------------------------------------------------------- mutations

ODD_VALUES: tuple[str, ...] = (
    "~",
    "null",
    '""',
    "''",
    ".inf",
    "-.inf",
    ".nan",
    "0x1F",
    "0o17",
    "0b101",
    "1_000",
    "1e400",
    "-0",
    "007",
    "123456789012345678901234567890",
    "-1",
    "3.5",
    "2024-01-01",
    "2001-12-14t21:59:43.10-05:00",
    "12:30:45",
    "!!binary aGVsbG8gd29ybGQ=",
    "!!timestamp 2024-01-01",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!!str 12",
    "!!int '12'",
    "!!int x",
    "!!float abc",
    "!!float 1",
    "!!bool yes",
    "!!null ''",
    "!!map [1]",
    "!!seq {a: 1}",
    '!!python/object/apply:os.system ["touch PWNED"]',
    "!!python/name:os.system",
    "!!python/object:builtins.dict {}",
    "!custom x",
    "!<tag:example.com,2024:x> y",
    "!",
    "on",
    "off",
    "yes",
    "no",
    "y",
    "n",
    "Yes",
    "NO",
    "True",
    "FALSE",
    "[]",
    "{}",
    "[[]]",
    "{a: b}",
    "[a, [b, [c]]]",
    "{? [a]: b}",
    "[a: b, c]",
    "*undefined",
    "&lone value",
    '"\\0"',
    '"\\x00-\\x1b[31m"',
    '"\\e]52;c;dG91Y2ggUFdORUQ=\\a"',  # issue #24: an OSC 52 clipboard write
    '"\\e[2J\\e[H"',  # a screen clear
    '"\\x9b31m"',  # an 8-bit CSI
    '"ok\\rFAIL"',  # a bare carriage return
    '"\\x7f"',
    "BASH_ENV",  # an env name the shell reads
    "LD_PRELOAD",
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"\\U0010FFFF"',
    '"\\u2028\\u0085"',
    '"line\\nbreak"',
    '"\\t"',
    "|\n  block\n  text",
    ">-",
    "|+",
    '"{"',
    '"}"',
    '"{py"',
    '"{nope}"',
    '"{{}}"',
    '"{py}{py}{platform}{platform}"',
    '"{sha}{sha}"',
    '"{sha}-{build}-{sha}"',
    '"*"',
    '"**"',
    '"["',
    '"[!"',
    '"[]"',
    '"[!]"',
    '"[]]"',
    '"[z-a]"',
    '"[--0]"',
    '"?*?*?*?*?*?*?*?*?*?*?*x"',
    '"' + "*[0-9a-f]" * 40 + '"',
    '"' + "*?" * 200 + '"',
    '"(a*)*b"',
    '"(a|aa)*c"',
    '"(x+x+)+y"',
    '"a{1000}{1000}"',
    '"(a{1000}){1000}"',
    '"(?:a{30}){30}"',
    '"[0-9a-f]{1000}"',
    '"(?i)a"',
    '"*a' + "?" * 16 + '"',
    '"*[ab]' + "[!c]" * 15 + '"',
    '"[ab]*a[ab]{20}"',
    '"(?:[0-9a-f]*a){3}[0-9a-f]{14}"',
    "9" * 5000,
    "0x" + "f" * 5000,
    "-" + "1" * 400,
    "1" * 300 + ".5e3",
    '"(a)\\\\1"',
    '"(?=a)"',
    '"' + "(" * 150 + '"',
    '"' + "(" * 150 + "a" + ")" * 150 + '"',
    '"' + "(?:a|b)" * 400 + '"',
    "not",
    "and",
    "or",
    "not not not new-build",
    '"' + "(" * 120 + "x" + ")" * 120 + '"',
    '"' + "not " * 200 + 'x"',
    '"' + " or ".join(["new-build"] * 300) + '"',
    "a and",
    "__import__('os').system('touch PWNED')",
    "os.system('touch PWNED')",
    "1 + 1",
    '"$(touch PWNED)"',
    "../../etc/passwd",
    "/etc",
    "..",
    '"C:\\\\Windows"',
    '"a b\\nc"',
    "99999999999",
    "v13.*",
    "cuda-bindings*",
    "@",
    "`",
    "%TAG ! tag:x,2024:",
    "- a",
    "a: b: c",
    "'unterminated",
    '"unterminated',
)

STRAY_BYTES: tuple[bytes, ...] = (
    b"\x00",
    b"\xff",
    b"\xfe\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xef\xbb\xbf",
    b"\r",
    b"\r\n",
    b"\t",
    b"\x0b",
    b"\x0c",
    b"\x1b[31m",
    b"\x7f",
    b"\xc2\x85",
    b"\xe2\x80\xa8",
    b"\x85",
    b"\xf4\x90\x80\x80",
    b"\xf0\x9f\x98\x80",
    b"---\n",
    b"...\n",
    b"%YAML 1.1\n",
    b"#",
    b"&",
    b"*",
    b"!",
    b"|",
    b"{",
    b"[",
    b"]",
    b"}",
    b'"',
    b"'",
    b"? ",
    b": ",
    b"- ",
)

_VALUE_LINE = re.compile(rb"^(?P<head>\s*(?:-\s+)?(?:[^\s:#'\"][^:#]*:\s+|-\s+))(?P<value>\S.*)$")
_QUOTED = re.compile(rb'"[^"\n]*"')


def _deep(rng: random.Random) -> str:
    depth = rng.choice((63, 64, 65, 100, 1000, 20000))
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return "{a: " * depth + "1" + "}" * depth


def _huge(rng: random.Random) -> str:
    size = rng.choice((5_000, 100_000, 1_100_000))
    return '"' + rng.choice("xa-*?") * size + '"'


def _odd_value(rng: random.Random) -> bytes:
    pick = rng.random()
    if pick < 0.05:
        return _deep(rng).encode()
    if pick < 0.08:
        return _huge(rng).encode()
    return rng.choice(ODD_VALUES).encode("utf-8", "surrogatepass")


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True) or [b""]


def _value_lines(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if _VALUE_LINE.match(line.rstrip(b"\r\n"))]


def _replace_value(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    candidates = _value_lines(lines)
    if not candidates:
        return raw + _odd_value(rng)
    i = rng.choice(candidates)
    body = lines[i].rstrip(b"\r\n")
    ending = lines[i][len(body) :]
    match = _VALUE_LINE.match(body)
    assert match is not None
    lines[i] = match["head"] + _odd_value(rng) + ending
    return b"".join(lines)


def _replace_quoted(rng: random.Random, raw: bytes) -> bytes:
    spans = list(_QUOTED.finditer(raw))
    if not spans:
        return _replace_value(rng, raw)
    span = rng.choice(spans)
    return raw[: span.start()] + _odd_value(rng) + raw[span.end() :]


def _borrow_value(rng: random.Random, raw: bytes) -> bytes:
    """Replace a value with another value of the same file: plausible, so it reaches the checks."""
    lines = _lines(raw)
    candidates = _value_lines(lines)
    if len(candidates) < 2:
        return _replace_value(rng, raw)
    i, j = rng.sample(candidates, 2)
    target = _VALUE_LINE.match(lines[i].rstrip(b"\r\n"))
    donor = _VALUE_LINE.match(lines[j].rstrip(b"\r\n"))
    assert target is not None and donor is not None
    lines[i] = target["head"] + donor["value"] + b"\n"
    return b"".join(lines)


def _borrow_quoted(rng: random.Random, raw: bytes) -> bytes:
    spans = list(_QUOTED.finditer(raw))
    if len(spans) < 2:
        return _borrow_value(rng, raw)
    target, donor = rng.sample(spans, 2)
    return raw[: target.start()] + donor.group() + raw[target.end() :]


def _flip(rng: random.Random, raw: bytes) -> bytes:
    """Flip a boolean or nudge a number: the stage, a flag, `required`, `since`."""
    spots = list(re.finditer(rb"(?<=: )(true|false|[0-9]+)$", raw, re.MULTILINE))
    if not spots:
        return _replace_value(rng, raw)
    spot = rng.choice(spots)
    word = spot.group()
    if word in (b"true", b"false"):
        new = b"false" if word == b"true" else b"true"
    else:
        new = str(max(0, int(word) + rng.choice((-2, -1, 1, 2, 5)))).encode()
    return raw[: spot.start()] + new + raw[spot.end() :]


def _delete_line(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def _duplicate_line(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"".join(lines)


def _swap_lines(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def _reindent(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    i = rng.randrange(len(lines))
    shift = rng.choice((-4, -2, -1, 1, 2, 3, 8))
    stripped = lines[i].lstrip(b" ")
    indent = len(lines[i]) - len(stripped)
    prefix = b"\t" if rng.random() < 0.1 else b" " * max(0, indent + shift)
    lines[i] = prefix + stripped
    return b"".join(lines)


def _truncate(rng: random.Random, raw: bytes) -> bytes:
    if not raw:
        return raw
    if rng.random() < 0.5:
        lines = _lines(raw)
        return b"".join(lines[: rng.randrange(len(lines) + 1)])
    return raw[: rng.randrange(len(raw))]


def _stray_bytes(rng: random.Random, raw: bytes) -> bytes:
    at = rng.randrange(len(raw) + 1)
    junk = rng.choice(STRAY_BYTES)
    if rng.random() < 0.3 and at < len(raw):
        return raw[:at] + junk + raw[at + 1 :]
    return raw[:at] + junk + raw[at:]


def _alias(rng: random.Random, raw: bytes) -> bytes:
    """Anchor one value and refer to it elsewhere (or before it is defined, or as a key)."""
    lines = _lines(raw)
    candidates = _value_lines(lines)
    if len(candidates) < 2:
        return _replace_value(rng, raw)
    i, j = rng.sample(candidates, 2)
    name = rng.choice((b"fz", b"a", b"x1"))
    first = _VALUE_LINE.match(lines[i].rstrip(b"\r\n"))
    second = _VALUE_LINE.match(lines[j].rstrip(b"\r\n"))
    assert first is not None and second is not None
    lines[i] = first["head"] + b"&" + name + b" " + first["value"] + b"\n"
    form = rng.random()
    if form < 0.6:
        lines[j] = second["head"] + b"*" + name + b"\n"
    elif form < 0.8:
        indent = len(lines[j]) - len(lines[j].lstrip(b" "))
        lines[j] = b" " * indent + b"<<: *" + name + b"\n"
    else:
        indent = len(lines[j]) - len(lines[j].lstrip(b" "))
        lines[j] = b" " * indent + b"*" + name + b" : " + second["value"] + b"\n"
    return b"".join(lines)


def _alias_bomb(rng: random.Random, raw: bytes) -> bytes:
    width = rng.choice((3, 10, 30))
    levels = rng.choice((3, 6, 9))
    bomb = [b"b0: &b0 [" + b", ".join([b"lol"] * width) + b"]\n"]
    for k in range(1, levels):
        refs = b", ".join([b"*b%d" % (k - 1)] * width)
        bomb.append(b"b%d: &b%d [%s]\n" % (k, k, refs))
    lines = _lines(raw)
    at = rng.randrange(len(lines) + 1)
    return b"".join(lines[:at] + bomb + lines[at:])


def _join_lines(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    if len(lines) < 2:
        return raw
    i = rng.randrange(len(lines) - 1)
    lines[i] = lines[i].rstrip(b"\r\n") + b" " + lines.pop(i + 1)
    return b"".join(lines)


def _comment_line(rng: random.Random, raw: bytes) -> bytes:
    lines = _lines(raw)
    i = rng.randrange(len(lines))
    stripped = lines[i].lstrip(b" ")
    indent = lines[i][: len(lines[i]) - len(stripped)]
    lines[i] = indent + (stripped[1:] if stripped.startswith(b"#") else b"# " + stripped)
    return b"".join(lines)


def _crlf(rng: random.Random, raw: bytes) -> bytes:
    return raw.replace(b"\n", b"\r\n") if rng.random() < 0.5 else raw.replace(b"\n", b"\r")


TEXT_MUTATIONS: tuple[Callable[[random.Random, bytes], bytes], ...] = (
    _borrow_value,
    _borrow_value,
    _borrow_quoted,
    _borrow_quoted,
    _borrow_quoted,
    _flip,
    _flip,
    _replace_value,
    _replace_value,
    _replace_value,
    _replace_quoted,
    _replace_quoted,
    _delete_line,
    _delete_line,
    _duplicate_line,
    _duplicate_line,
    _swap_lines,
    _swap_lines,
    _reindent,
    _reindent,
    _truncate,
    _stray_bytes,
    _stray_bytes,
    _alias,
    _alias_bomb,
    _join_lines,
    _comment_line,
    _crlf,
)


def _file_mutation(rng: random.Random, project: Project) -> str:
    """Change the set of files: remove, rename, duplicate, empty, bloat. Returns a label."""
    stages = [rel for rel in project if rel.startswith("stages/")]
    choice = rng.randrange(7)
    if choice == 0 and stages:
        del project[rng.choice(stages)]
        return "remove a stage file"
    if choice == 1 and stages:
        rel = rng.choice(stages)
        new = rng.choice(
            (
                "stages/1-x.yaml",
                "stages/00-zero.yaml",
                "stages/99-far.yaml",
                "stages/01-Upper.yaml",
                "stages/03-a.yml",
                "stages/010-long.yaml",
            )
        )
        project[new] = project.pop(rel)
        return f"rename {rel} to {new}"
    if choice == 2 and stages:
        rel = rng.choice(stages)
        project[f"stages/{len(stages) + 1:02d}-copy.yaml"] = project[rel]
        return f"copy {rel} as a new last stage"
    if choice == 3:
        rel = rng.choice(list(project) or ["migration.yaml"])
        project[rel] = rng.choice((b"", b"\n", b"# only a comment\n", b"---\n", b"\xef\xbb\xbf"))
        return f"empty {rel}"
    if choice == 4:
        project["migration.yaml"] = project.get("migration.yaml", b"") + b"#" * (4 * 1024 * 1024)
        return "bloat migration.yaml past the size limit"
    if choice == 5 and "migration.yaml" in project:
        project["migration.yaml"] += rng.choice(
            (
                b"\nstages_dir: ../outside\n",
                b"\nstages_dir: /etc\n",
                b"\nstages_dir: ''\n",
                b"\nstages_dir: stages/01-x.yaml\n",
                b"\nstages_dir: migration.yaml\n",
            )
        )
        return "odd stages_dir"
    project.pop("migration.yaml", None)
    return "remove migration.yaml"


@dataclass(frozen=True)
class Case:
    seed: int
    base: str
    steps: tuple[str, ...]
    files: Project

    def describe(self) -> str:
        return f"seed {self.seed} from {self.base}: " + "; ".join(self.steps)


def mutate(seed: int, corpus: dict[str, Project]) -> Case:
    """One reproducible mutated project: 1-4 mutations of one seed project."""
    rng = random.Random(seed)
    names = sorted(corpus)
    heavy = ("example", "medium", "valid/valid-minimal", "valid/flag-named-on")
    base = rng.choice(heavy) if rng.random() < 0.7 else rng.choice(names)
    files = dict(corpus[base])
    steps: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 1, 2, 2, 3))):
        if rng.random() < 0.06:
            steps.append(_file_mutation(rng, files))
            continue
        targets = sorted(files)
        if not targets:
            break
        weights = [4 if rel == "migration.yaml" else 1 for rel in targets]
        rel = rng.choices(targets, weights)[0]
        mutation = rng.choice(TEXT_MUTATIONS)
        files[rel] = mutation(rng, files[rel])
        steps.append(f"{mutation.__name__.lstrip('_')} in {rel}")
    return Case(seed, base, tuple(steps), files)


# --------------------------------------------------------------------------- running


class CommandTimeout(BaseException):
    """Raised by the alarm in the middle of a command; not an Exception so `run` lets it pass."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise CommandTimeout(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    argv: tuple[str, ...]
    code: int
    out: str
    err: str
    seconds: float


def _stream() -> io.TextIOWrapper:
    """A strict UTF-8 stream, as a terminal is: writing a lone surrogate fails as it would."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "replace")


def run_in_process(argv: list[str], seconds: float = COMMAND_SECONDS) -> Outcome:
    out, err = _stream(), _stream()
    start = time.monotonic()
    with deadline(seconds), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return Outcome(tuple(argv), code, _text(out), _text(err), time.monotonic() - start)


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fuzz",
    "GIT_AUTHOR_EMAIL": "fuzz@example.com",
    "GIT_COMMITTER_NAME": "Fuzz",
    "GIT_COMMITTER_EMAIL": "fuzz@example.com",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )


def write_project(root: Path, files: Project, *, track: bool = True) -> None:
    """Write ``files`` under ``root`` as the only files git tracks there.

    The case folder is a git work tree because the ``retired`` check and ``audit``
    search the files git tracks; the repository is kept from case to case (only the
    files change), so a case costs one ``git add``, not a ``git init``. ``track``
    False leaves the ``git add`` to the caller (``exercise``: ``validate`` reads the
    files alone, and refuses most cases before any command reads the index)."""
    if not (root / ".git").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q")
    for entry in root.iterdir():
        if entry.name == ".git":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (root / "stages").mkdir()
    for rel, raw in files.items():
        (root / rel).write_bytes(raw)
    if track:
        git(root, "add", "-A")


COMMANDS: tuple[tuple[str, ...], ...] = (
    ("validate",),
    ("plan",),
    ("check", "--all"),
    ("audit",),
)


def commands() -> tuple[tuple[str, ...], ...]:
    return COMMANDS


RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters but line feed and tab: printed only shown (``report.printable``)."""


def problems_of(outcome: Outcome) -> list[str]:
    """What is wrong with how a command ended: empty when it ended cleanly."""
    found = []
    shown = " ".join(outcome.argv)
    if outcome.code not in OK_CODES:
        found.append(f"`{shown}` exited {outcome.code}: {outcome.err[-2000:]}")
    if "Traceback" in outcome.out + outcome.err:
        found.append(f"`{shown}` printed a traceback: {outcome.err[-2000:]}")
    if outcome.code == 2 and not outcome.err.strip():
        found.append(f"`{shown}` exited 2 without saying why")
    raw = RAW_CONTROL.search(outcome.out + outcome.err)
    if raw is not None:  # issue #24: escape sequences from the files must not reach a terminal
        at = raw.start()
        context = (outcome.out + outcome.err)[max(0, at - 200) : at + 50]
        found.append(f"`{shown}` printed the control character {raw.group()!r} raw: {context!r}")
    return found


def exercise(
    root: Path, files: Project, runner: Callable[[list[str]], Outcome], *, every: bool = False
) -> list[str]:
    """How the commands end on ``files``. Input that ``validate`` refuses (exit 2) is
    refused alike by the others, which load it the same way first (one exit code, one
    message: test_fuzz.py checks it on the corpus), so they run only on input it accepts,
    unless ``every``. The files are added to git's index before the first command that
    may read it (every command but ``validate``, which reads the files alone), so a
    refused case starts no git process."""
    write_project(root, files, track=False)
    migration = str(root / "migration.yaml")
    found: list[str] = []
    tracked = False
    for command in commands():
        if command != ("validate",) and not tracked:
            git(root, "add", "-A")
            tracked = True
        try:
            outcome = runner(["-f", migration, *command])
        except CommandTimeout as exc:
            found.append(f"`{' '.join(command)}` {exc}")
            continue
        found.extend(problems_of(outcome))
        if command == ("validate",) and outcome.code == 2 and not every:
            break
    return found


def _keep(case: Case, root: Path) -> Path:
    keep = Path(os.environ.get("STAGEGATE_FUZZ_KEEP", root.parent / "kept"))
    target = keep / f"seed-{case.seed}"
    write_project(target, case.files)
    (target / "CASE.txt").write_text(case.describe() + "\n")
    return target


def run_cases(seeds_: range, tmp_path: Path) -> None:
    corpus = seeds()
    failures: list[str] = []
    for seed in seeds_:
        case = mutate(seed, corpus)
        root = tmp_path / "case"
        found = exercise(root, case.files, run_in_process)
        if found:
            kept = _keep(case, tmp_path)
            failures.append(f"{case.describe()} (kept in {kept}):\n  " + "\n  ".join(found))
    assert not failures, f"{len(failures)} of {len(seeds_)} cases misbehaved:\n" + "\n".join(
        failures
    )


# --------------------------------------------------------------------------- the tests
