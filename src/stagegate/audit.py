"""The retirement audit: what retired legacy items left behind, stale flags, the burndown.

An item is *retired at stage S* when its ``when`` is false at S and at every later
stage; from then on none of its ``legacy.references`` may be left in the files git
tracks, and none of its ``legacy.paths`` may exist. A flag is *stale at S* when its
value no longer changes from S to the last stage, so the conditionals that read it
(its ``references``) can go. Items that later stages retire make up the burndown.

The search is one ``git grep`` for every string at once (``start_grep``);
``compute`` then attributes each matching line to every string it contains, so the
findings are exactly what ``git grep -F`` reports. A ``{regex: ...}`` reference is
searched in the same ``git grep`` by the fixed texts its every match holds
(``references.literals``) and confirmed by ``re`` on those lines only. Paths are matched by git too
(``git ls-files`` with glob pathspecs, see ``glob_pathspecs``), so ``audit.ignore``
and ``legacy.paths`` mean the same thing everywhere. Reported paths are relative to
the top of the work tree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from stagegate.engine.paths import refused
from stagegate.engine.resolve import flag_table, retired_at
from stagegate.errors import Loc, Problem
from stagegate.git.run import Pending
from stagegate.git.search import (
    WHOLE_TREE,
    BlameLine,
    GrepHit,
    Worktree,
    blame_many,
    committed_hits,
    pathspec,
    start_grep,
    start_ls_files,
    start_worktree,
    text_hits,
)
from stagegate.model import Flag, Item, Migration, Ref, Reference
from stagegate.model.references import compiled, fixed_texts, label, literals
from stagegate.records import record, replace

Kind = Literal["reference", "path"]


@record
class Place:
    """A line of a tracked file (``line``/``col``/``text`` None for a whole file)."""

    file: str  # for people: the path from the top folder, undecodable bytes as \\xNN
    raw: bytes  # the same path exactly as git names it (for further git calls)
    line: int | None = None
    col: int | None = None
    text: str | None = None

    @property
    def loc(self) -> Loc:
        """Where an annotation points: the match, else the file's first line."""
        return Loc(self.file, self.line or 1, self.col or 1)

    def excerpt(self, reference: str | None = None, width: int = 160) -> str:
        """The line, stripped, cut to ``width`` around ``reference`` when it is long."""
        text = (self.text or "").strip()
        if len(text) <= width:
            return text
        at = text.find(reference) if reference else -1
        if at < 0 and self.col:  # a regex reference: around where it matched
            at = max(0, self.col - 1 - (len(self.text or "") - len((self.text or "").lstrip())))
        start = max(0, min(at - width // 3, len(text) - width)) if at >= 0 else 0
        cut = text[start : start + width]
        return ("..." if start else "") + cut + ("..." if start + width < len(text) else "")


@record
class Leftover:
    """One string or file a legacy item left behind."""

    item: Item
    retired_at: int
    kind: Kind
    reference: str  # the references string (a regex as {regex: ...}), or the legacy.paths entry
    place: Place
    blame: BlameLine | None = None


@record
class StaleFlag:
    """A flag whose value is fixed from ``since`` on, and where CI still reads it."""

    flag: Flag
    value: bool
    since: int
    places: tuple[tuple[str, Place], ...]  # (references string, where it is)


@record
class Retirement:
    """An item with legacy entries, the stage that retires it, and what of it is left."""

    item: Item
    retired_at: int
    leftovers: tuple[Leftover, ...]

    def files(self) -> list[tuple[str, int]]:
        """(file, number of leftovers in it), in order of first appearance."""
        counts: dict[str, int] = {}
        for leftover in self.leftovers:
            counts[leftover.place.file] = counts.get(leftover.place.file, 0) + 1
        return list(counts.items())


@record
class Report:
    migration: Migration
    stage: int
    top: Path  # the work tree searched
    retired: tuple[Retirement, ...]  # retired at or before the stage, clean ones included
    stale_flags: tuple[StaleFlag, ...]
    burndown: tuple[Retirement, ...]  # retired by later stages
    excluded: tuple[str, ...]  # the migration's own files, never searched

    @property
    def findings(self) -> tuple[Leftover, ...]:
        """The leftovers of the retired items: what fails the audit."""
        return tuple(x for r in self.retired for x in r.leftovers)

    @property
    def ok(self) -> bool:
        return not any(r.leftovers for r in self.retired)


# --------------------------------------------------------------------------- what to audit


def has_legacy(item: Item) -> bool:
    return bool(item.legacy.references or item.legacy.paths)


def retirements(migration: Migration) -> list[tuple[Item, int]]:
    """Every item with legacy entries that some stage retires, with that stage (in order of
    the stage, then of declaration)."""
    found = []
    for item in migration.items():
        if has_legacy(item):
            stage = retired_at(migration, item.when)
            if stage is not None:
                found.append((item, stage))
    found.sort(key=lambda entry: entry[1])
    return found


def stale_since(migration: Migration, flag: str) -> int:
    """The first stage from which ``flag`` keeps its last-stage value."""
    table = flag_table(migration)
    start = migration.last
    while start > 0 and table[start - 1][flag] == table[migration.last][flag]:
        start -= 1
    return start


def stale_flags(migration: Migration, stage: int) -> list[tuple[Flag, bool, int]]:
    """(flag, its value, the stage it is fixed from) for each flag stale at ``stage``."""
    table = flag_table(migration)
    out = []
    for name, flag in migration.flags.items():
        since = stale_since(migration, name)
        if since <= stage:
            out.append((flag, table[stage][name], since))
    return out


def flag_references(flag: Flag) -> tuple[Ref, ...]:
    """Where CI reads ``flag``: its ``references`` and its ``env``, each once."""
    return tuple(dict.fromkeys((*flag.references, *((flag.env,) if flag.env else ()))))


def own_files(migration: Migration) -> list[str]:
    """The migration's own files, relative to its folder: they name the references on
    purpose. migration.yaml, each stage file and each stage's pytest folder."""
    stages_dir = PurePosixPath(migration.stages_dir).as_posix()
    own = [Path(migration.file).name]
    for stage in migration.stages:
        own.append(f"{stages_dir}/{Path(stage.file).name}")
        own.append(f"{stages_dir}/{stage.dirname}")
    return own


# --------------------------------------------------------------------------- validation


def _breaks_lines(text: str) -> bool:
    return any(c in text for c in "\n\r\0")


def _bad_path(text: str) -> str | None:
    posix = PurePosixPath(text)
    if posix.is_absolute() or os.path.isabs(text):
        return "is absolute"
    if ".." in posix.parts:
        return "leads outside the repository ('..')"
    if _breaks_lines(text):
        return "holds a line break or NUL"
    return None


def _bad_references(loc: Loc, owner: str, texts: Iterable[Ref]) -> list[Problem]:
    return [
        Problem(
            loc,
            f"{owner} reference {text!r} holds a line break or NUL; the audit matches one "
            "line at a time, so split it into one string per line.",
        )
        for text in texts
        if isinstance(text, str) and _breaks_lines(text)
    ]


def problems(migration: Migration) -> list[Problem]:
    """Legacy entries and flag references the search cannot honour, where they are declared."""
    found: list[Problem] = []
    for flag in migration.flags.values():
        found += _bad_references(flag.loc, f"flag {flag.id}:", flag.references)
    for item in migration.items():
        found += _bad_references(item.loc, f"{item.kind} {item.id}: legacy", item.legacy.references)
        for text in item.legacy.paths:
            why = _bad_path(text)
            if why:
                found.append(
                    Problem(
                        item.loc,
                        f"{item.kind} {item.id}: legacy path {text!r} {why}; write it relative "
                        "to the top of the repository, e.g. .github/workflows/backport.yml.",
                    )
                )
    for text, loc, why in refused(migration.audit_ignore, migration.audit_ignore_locs, _bad_path):
        found.append(
            Problem(
                loc,
                f"audit.ignore entry {text!r} {why}; write globs relative to the top "
                "of the repository, e.g. docs/release/*-notes.rst.",
            )
        )
    return found


# --------------------------------------------------------------------------- the pure part


def display(raw: bytes) -> str:
    """A path or line for people and JSON: UTF-8, undecodable bytes shown as \\xNN."""
    return raw.decode("utf-8", "backslashreplace")


def attribute(hits: Iterable[GrepHit], strings: Iterable[Ref]) -> dict[Ref, list[Place]]:
    """Each reference -> the lines containing it (a regex: the lines it matches somewhere
    in). A line holding two references counts for both; a line holding one twice counts
    once (git grep reports lines)."""
    refs = list(dict.fromkeys(strings))
    wanted = [(s, s.encode("utf-8")) for s in refs if isinstance(s, str)]
    patterns = [
        (r, compiled(r.regex), [t.encode("utf-8") for t in literals(r.regex) or ()])
        for r in refs
        if isinstance(r, Reference)
    ]
    found: dict[Ref, list[Place]] = {s: [] for s in refs}
    for hit in hits:
        body = hit.text.removesuffix(b"\r")
        file = display(hit.path)
        text: str | None = None
        for string, needle in wanted:
            at = body.find(needle)
            if at < 0:
                continue
            if text is None:
                text = display(body)
            col = len(display(body[:at])) + 1
            found[string].append(Place(file, hit.path, hit.line, col, text))
        for ref, expression, needles in patterns:
            if needles and not any(n in body for n in needles):
                continue  # git found this line for another text; the regex cannot match here
            decoded = body.decode("utf-8", "surrogateescape")
            match = expression.search(decoded)
            if match is None:
                continue
            if text is None:
                text = display(body)
            start = len(decoded[: match.start()].encode("utf-8", "surrogateescape"))
            col = len(display(body[:start])) + 1
            found[ref].append(Place(file, hit.path, hit.line, col, text))
    return found


def compute(
    migration: Migration,
    stage: int,
    *,
    top: Path,
    hits: Sequence[GrepHit],
    paths: Mapping[str, Sequence[bytes]],
    excluded: Sequence[str] = (),
) -> Report:
    """The report from search results: ``hits`` of every searched string, and for each
    legacy.paths entry the tracked files it matches (ignored and own files left out)."""
    found = attribute(hits, searched(migration, stage))

    def leftovers(item: Item, when: int) -> tuple[Leftover, ...]:
        out = [
            Leftover(item, when, "reference", label(string), place)
            for string in dict.fromkeys(item.legacy.references)
            for place in found[string]
        ]
        out += [
            Leftover(item, when, "path", entry, Place(display(raw), raw))
            for entry in dict.fromkeys(item.legacy.paths)
            for raw in paths.get(entry, ())
        ]
        out.sort(key=lambda x: (x.place.file, x.place.line or 0, x.kind))
        return tuple(out)

    every = [Retirement(item, when, leftovers(item, when)) for item, when in retirements(migration)]
    flags = tuple(
        StaleFlag(
            flag,
            value,
            since,
            tuple(
                sorted(
                    ((label(s), p) for s in flag_references(flag) for p in found[s]),
                    key=lambda sp: (sp[1].file, sp[1].line or 0),
                )
            ),
        )
        for flag, value, since in stale_flags(migration, stage)
    )
    return Report(
        migration=migration,
        stage=stage,
        top=top,
        retired=tuple(r for r in every if r.retired_at <= stage),
        stale_flags=flags,
        burndown=tuple(r for r in every if r.retired_at > stage),
        excluded=tuple(excluded),
    )


# --------------------------------------------------------------------------- the search


def glob_pathspecs(pattern: str, *, exclude: bool = False) -> list[str]:
    """The git pathspecs of an ``audit.ignore`` or ``legacy.paths`` glob.

    Git's glob syntax (``*`` and ``?`` within one path component, ``**`` across
    folders), read as in ``.gitignore``: a pattern with a ``/`` before its end is
    relative to the top of the repository, one without (``*.md``, ``backport.yml``)
    matches at any depth, and a folder it matches covers everything under it. Git
    itself extends a match to a folder's contents only for a literal folder at the
    top, not for ``**/vendor`` nor ``ci/ol*``: hence the second, ``/**`` pathspec."""
    anchored = "/" in pattern.rstrip("/")
    first = pattern if anchored else f"**/{pattern}"
    return [
        pathspec(p, glob=True, exclude=exclude, top=True)
        for p in (first, first.rstrip("/") + "/**")
    ]


def exclusions(migration: Migration) -> list[str]:
    """The pathspecs of what is never searched: the migration's own files (relative to
    its folder, where git runs) and the ``audit.ignore`` globs."""
    own = [pathspec(p, exclude=True) for p in own_files(migration)]
    return own + [p for g in migration.audit_ignore for p in glob_pathspecs(g, exclude=True)]


def searched(migration: Migration, stage: int) -> list[Ref]:
    """Every reference the audit at ``stage`` looks for: the references of every item some
    stage retires (findings and burndown) and of every stale flag."""
    strings = [s for item, _ in retirements(migration) for s in item.legacy.references]
    strings += [s for flag, _, _ in stale_flags(migration, stage) for s in flag_references(flag)]
    return list(dict.fromkeys(strings))


def search(
    migration: Migration,
    stage: int,
    *,
    root: Path | None = None,
    blame: bool = False,
    exclude: Sequence[str] = (),
) -> Report:
    """Audit the work tree holding ``root`` (default: the migration's folder) at ``stage``.

    One ``git grep`` for every string, one ``git ls-files`` per legacy.paths entry and
    the ``git rev-parse`` that finds the top folder, all running side by side.
    ``blame``: add who last changed each finding's line (``git blame``). ``exclude``:
    more files (relative to the folder) never searched."""
    folder = root if root is not None else migration.root
    skip = exclusions(migration) + [pathspec(p, exclude=True) for p in exclude]
    strings = searched(migration, stage)
    entries = list(
        dict.fromkeys(p for item, _ in retirements(migration) for p in item.legacy.paths)
    )
    started: list[Pending[Any]] = []
    try:
        grep = None
        texts, every_line = fixed_texts(strings)
        if texts or every_line:  # first: it is the long one, and it may use every core
            grep = start_grep(folder, texts, [*skip, WHOLE_TREE], every_line=every_line)
            started.append(grep)
        where = start_worktree(folder)
        started.append(where)
        listings = {}
        for entry in entries:
            include = [pathspec(entry, top=True), *glob_pathspecs(entry)]
            listings[entry] = start_ls_files(folder, include, skip)
            started.append(listings[entry])
        tree = where.result()
        hits = text_hits(tree.top, grep.result()) if grep is not None else []
        if grep is not None:
            hits = committed_hits(
                folder, tree.top, texts, [*skip, WHOLE_TREE], hits, every_line=every_line
            )
        paths = {
            entry: [raw for raw in pending.result() if os.path.lexists(tree.top / os.fsdecode(raw))]
            for entry, pending in listings.items()
        }
    except BaseException:
        for pending in started:
            pending.cancel()
        raise
    excluded = [tree.rel(p) for p in own_files(migration)]
    report = compute(migration, stage, top=tree.top, hits=hits, paths=paths, excluded=excluded)
    return with_blame(report, tree) if blame else report


def with_blame(report: Report, tree: Worktree) -> Report:
    """The report with each finding's line blamed (one ``git blame`` per file)."""
    wanted: dict[bytes, set[int]] = {}
    for leftover in report.findings:
        if leftover.place.line is not None:
            wanted.setdefault(leftover.place.raw, set()).add(leftover.place.line)
    blamed = blame_many(tree, wanted)

    def blame(x: Leftover) -> Leftover:
        return (
            x if x.place.line is None else replace(x, blame=blamed.get((x.place.raw, x.place.line)))
        )

    retired = tuple(
        replace(r, leftovers=tuple(blame(x) for x in r.leftovers)) for r in report.retired
    )
    return replace(report, retired=retired)


def reference_hits(
    migration: Migration,
    folder: Path,
    top: Path,
    references: Sequence[Ref],
    hits: Sequence[GrepHit],
) -> list[GrepHit]:
    """The hits of ``start_reference_search`` (``text_hits`` of them) with those in the
    committed content of files whose checkout an attribute converts (``committed_hits``)."""
    texts, every_line = fixed_texts(references)
    if not texts and not every_line:
        return list(hits)
    return committed_hits(
        folder, top, texts, [*exclusions(migration), WHOLE_TREE], hits, every_line=every_line
    )


def start_reference_search(
    migration: Migration, folder: Path, references: Sequence[Ref]
) -> Pending[list[GrepHit]] | None:
    """The audit's search for ``references`` alone: one ``git grep`` over the files git
    tracks, outside the migration's own files and ``audit.ignore``; None when there is
    nothing to search for. ``attribute`` turns its hits into places (flags-wired)."""
    texts, every_line = fixed_texts(references)
    if not texts and not every_line:
        return None
    return start_grep(folder, texts, [*exclusions(migration), WHOLE_TREE], every_line=every_line)
