"""GitHub Actions workflow commands and the job step summary, in one place."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from stagegate.errors import Loc, Problem
from stagegate.words import one_line, printable

if TYPE_CHECKING:
    from stagegate.commands.gate import Verdict
    from stagegate.model import Migration

# How the Actions runner finds workflow commands in a step's output (actions/runner,
# ActionCommand.TryParseV2 and TryParse): it reads the output line by line, a line
# ending at "\n", "\r" or "\r\n"; a line is a command when, after every leading
# Unicode white-space character is trimmed, it starts with "::" (and names a command
# before a second "::"), or when it holds the legacy "##[" (and a "]" after it)
# anywhere. The comparisons are .NET's culture-sensitive ones, which may skip
# characters without weight (zero-width spaces, joiners, controls): so stagegate
# treats those as invisible too, and breaks a command with a character that has
# weight of its own.
LINE_BREAK = re.compile(r"(\r\n|\r|\n)")
_SOFT = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Mn", "Me", "Zs", "Zl", "Zp"})
RATIO = "\u2236"  # U+2236 RATIO: looks like a colon; not one to the runner
SHARP = "\u266f"  # U+266F MUSIC SHARP SIGN: looks like a hash; not one to the runner


def soft(char: str) -> bool:
    """Whether the runner may pass over ``char`` (white space, or a character without
    weight in a culture-sensitive comparison)."""
    if char.isspace():
        return True
    if char.isascii():  # in ASCII, only the control characters (category Cc) are soft
        return char < " " or char == "\x7f"
    import unicodedata  # a C module: loaded only when non-ASCII text is printed

    return unicodedata.category(char) in _SOFT


_ASCII_SOFT = re.compile(r"[\x00-\x20\x7f]*")
"""A run of the ASCII characters ``soft`` admits (white space and controls), at once."""


def _skip_soft(text: str, at: int) -> int:
    while True:
        at = _ASCII_SOFT.match(text, at).end()  # type: ignore[union-attr]  # '*' always matches
        if at < len(text) and not text[at].isascii() and soft(text[at]):
            at += 1
        else:
            return at


def _v2_colon(line: str) -> int | None:
    """Where the second colon of a leading ``::`` is (soft characters skipped), if any."""
    first = _skip_soft(line, 0)
    if first >= len(line) or line[first] != ":":
        return None
    second = _skip_soft(line, first + 1)
    return second if second < len(line) and line[second] == ":" else None


def _escape_data(text: str) -> str:
    """The runner's escapes, then the other control characters shown (``printable``):
    the log viewer renders escape sequences."""
    return printable(
        _defuse_legacy(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
    )


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_EMITTED: set[str] = set()
"""Every workflow command this process made: the only lines let through as commands."""


def annotation(level: str, message: str, loc: Loc | None = None, title: str | None = None) -> str:
    """``::error file=F,line=L,col=C,title=T::message`` (level: error, warning or notice)."""
    props = []
    if loc is not None:
        props += [f"file={_escape_property(loc.file)}", f"line={loc.line}", f"col={loc.col}"]
    if title:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    line = f"{head}::{_escape_data(message)}"
    _EMITTED.add(line)
    return line


def _defuse_legacy(text: str) -> str:
    """Every ``##[`` (soft characters between) with its second hash made SHARP."""
    if "#" not in text:
        return text
    chars = list(text)
    at = text.find("#")
    while at >= 0:
        second = _skip_soft(text, at + 1)
        if second < len(text) and text[second] == "#":
            bracket = _skip_soft(text, second + 1)
            if bracket < len(text) and text[bracket] == "[":
                chars[second] = SHARP
        at = text.find("#", at + 1)
    return "".join(chars)


def defuse_line(line: str) -> str:
    """One output line (no line break in it), unable to act as a workflow command
    unless stagegate made it one: the second colon of a leading ``::`` becomes RATIO
    and the second hash of every ``##[`` becomes SHARP; it reads as before."""
    if line in _EMITTED:
        return line
    line = _defuse_legacy(line)
    colon = _v2_colon(line)
    return line if colon is None else line[:colon] + RATIO + line[colon + 1 :]


def defuse(text: str) -> str:
    """``text``, any number of lines, with every line defused (see ``defuse_line``);
    its line breaks are kept as they are."""
    parts = LINE_BREAK.split(text)
    parts[::2] = [defuse_line(part) for part in parts[::2]]
    return "".join(parts)


class GuardedStream:
    """A text stream that defuses, line by line, the workflow commands it did not make."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._partial = ""

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        parts = LINE_BREAK.split(self._partial + text)
        self._partial = parts.pop()
        if parts:
            parts[::2] = [defuse_line(part) for part in parts[::2]]
            self._stream.write("".join(parts))
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self._stream.write(defuse_line(self._partial))
            self._partial = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_output() -> Iterator[None]:
    """Standard output and error guarded by ``GuardedStream`` inside the block."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = GuardedStream(out), GuardedStream(err)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = out, err


def write_summary(markdown: str) -> bool:
    """Append to ``$GITHUB_STEP_SUMMARY`` when set; whether anything was written."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(markdown.rstrip("\n") + "\n\n")
    return True


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A Markdown table; pipes and newlines in cells are escaped."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", "<br>")

    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- places and links


def repo_path(file: str) -> str:
    """``file`` (as shown: relative to the current folder) from the top of the repository
    checked out in GitHub Actions (``$GITHUB_WORKSPACE``), which is where GitHub places
    annotations and what its links name; ``file`` itself elsewhere."""
    top = os.environ.get("GITHUB_WORKSPACE")
    if not top:
        return file
    try:
        return Path(os.path.abspath(file)).relative_to(os.path.abspath(top)).as_posix()
    except ValueError:
        return file


def blob_url(file: str, line: int | None = None) -> str | None:
    """The file at the commit being checked, on GitHub: ``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY
    /blob/$GITHUB_SHA/PATH#LLINE``; None outside GitHub Actions."""
    from urllib.parse import quote

    server, repository, sha = (
        os.environ.get(name) for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA")
    )
    if not (server and repository and sha):
        return None
    anchor = f"#L{line}" if line else ""
    absolute = Path(os.path.abspath(file))
    top = next((f for f in absolute.parents if (f / ".git").exists()), None)
    path = absolute.relative_to(top).as_posix() if top else repo_path(file)
    return f"{server.rstrip('/')}/{repository}/blob/{sha}/{quote(path)}{anchor}"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]~#!])")  # `|`: github.table escapes it


def md_text(text: str) -> str:
    """Repository text, shown as written in Markdown: no code span, emphasis, link or HTML,
    and on one line (``words.one_line``: a line break would start a heading, a list or a
    block of its own)."""
    text = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_code(text: str) -> str:
    """``text`` as Markdown inline code, whatever backticks it holds, on one line."""
    text = one_line(text)
    if not text:
        return ""
    longest = count = 0
    for char in text:
        count = count + 1 if char == "`" else 0
        longest = max(longest, count)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_location(file: str, line: int | None) -> str:
    """``file:line``, linked to the file at the commit when running in GitHub Actions."""
    shown = md_text(f"{file}:{line}" if line else file)
    url = blob_url(file, line)
    return f"[{shown}]({url})" if url else shown


_REFERENCE = re.compile(r"(?:(?<=\()|(?<=\(workflow side: ))([^\s():]+\.ya?ml):(\d+)(?=\))")
"""A ``(file:line)`` a message names (also the ``(workflow side: file:line)`` of the
`workflows` check's findings)."""


def md_message(message: str) -> str:
    """A message in Markdown: its text escaped, its ``(file:line)`` references linked."""
    out, last = [], 0
    for found in _REFERENCE.finditer(message):
        out.append(md_text(message[last : found.start()]))
        out.append(md_location(found[1], int(found[2])))
        last = found.end()
    out.append(md_text(message[last:]))
    return "".join(out)


# --------------------------------------------------------------------------- changed lines


def _span(lines: list[str], start: int) -> range:
    """The lines of the YAML item whose key is on line ``start`` (1-based): it and every
    line after it indented deeper (blank and comment lines included)."""
    if not 1 <= start <= len(lines):
        return range(0)
    first = lines[start - 1]
    indent = len(first) - len(first.lstrip(" -"))
    end = start
    for number in range(start + 1, len(lines) + 1):
        text = lines[number - 1]
        body = text.strip()
        if body and not body.startswith("#") and len(text) - len(text.lstrip(" ")) <= indent:
            break
        end = number
    return range(start, end + 1)


def shown_changes(top: Path, changed: Mapping[str, set[int]]) -> dict[str, set[int]]:
    """Changed lines keyed by the files as stagegate shows them (from the current folder)."""
    return {os.path.normpath(os.path.relpath(top / name)): lines for name, lines in changed.items()}


def pull_request_changes(migration: Migration) -> dict[str, set[int]] | None:
    """In a pull request's job (``$GITHUB_BASE_REF`` set): the lines the work tree changed
    since its merge base with the base branch, so that annotations land where the diff
    shows them. None where that cannot be known (a shallow clone without the base)."""
    return changes_since_base(migration.root)


def changes_since_base(root: Path | None) -> dict[str, set[int]] | None:
    """``pull_request_changes`` of the repository that holds the folder ``root``."""
    base = os.environ.get("GITHUB_BASE_REF")
    if not base:
        return None
    from stagegate.errors import GitError
    from stagegate.git.repo import open_repository

    try:
        repo = open_repository(root if root is not None and str(root) else ".")
        head = repo.head() or "HEAD"
        for ref in (f"origin/{base}", base):
            try:
                start = repo.merge_base(repo.resolve(ref), head, shown=(ref, "HEAD"))
            except GitError:
                continue
            return shown_changes(repo.root, repo.changed_lines(start))
    except GitError:
        return None
    return None


def verdict_changes(verdict: Verdict) -> dict[str, set[int]] | None:
    """The lines the pull request changed, from its base to its head."""
    from stagegate.errors import GitError
    from stagegate.git.repo import open_migration

    try:
        repo, _path = open_migration(verdict.file)
        base, head = verdict.base.commit, verdict.head.commit
        if head != repo.head() or repo.tracked_changes():
            return None  # the lines are read from the work tree: it must be the head
        changed = repo.changed_lines(repo.merge_base(base, head, shown=(base, head)), head)
        return shown_changes(repo.root, changed)
    except GitError:
        return None


def on_changed_line(
    loc: Loc | None,
    message: str,
    changed: Mapping[str, set[int]] | None,
    also: Iterable[Loc | None] = (),
) -> Loc | None:
    """Where a finding's annotation goes: on a line the pull request changed, when the
    culprit (``loc``), the other places it names (``also``: the workflow side of a drift
    finding) or an item the message names (``(file:line)``) has one, so that the diff
    shows it (a widened glob, an edited template, the upload step of a job); else
    ``loc``. ``changed``: the changed lines per file, the files named as locations name
    them (from the current folder; ``shown_changes``)."""
    if not changed or loc is None:
        return loc
    candidates = [
        (loc.file, loc.line),
        *((other.file, other.line) for other in also if other is not None),
        *((f, int(n)) for f, n in _REFERENCE.findall(message)),
    ]
    texts: dict[str, list[str]] = {}
    for file, line in candidates:
        lines_changed = changed.get(os.path.normpath(file))
        if not lines_changed:
            continue
        if file not in texts:
            try:
                texts[file] = Path(file).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                texts[file] = []
        hit = next((n for n in _span(texts[file], line) if n in lines_changed), None)
        if hit is not None:
            text = texts[file][hit - 1]
            return Loc(file, hit, len(text) - len(text.lstrip()) + 1)
    return loc


def problem_annotations(problems: Iterable[Problem], title: str) -> str:
    """One ``::error`` a problem of invalid input, at its place."""
    return "\n".join(
        annotation("error", f"{p.path}: {p.message}" if p.path else p.message, placed(p.loc), title)
        for p in problems
    )


def placed(loc: Loc | None) -> Loc | None:
    """``loc`` with its file named from the top of the repository, as annotations need."""
    return None if loc is None else Loc(repo_path(loc.file), loc.line, loc.col)
