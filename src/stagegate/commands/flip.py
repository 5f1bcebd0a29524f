"""advance and rollback: the one-line edit of ``stage:`` in migration.yaml.

Only the characters of the ``stage`` value change; every other byte of the file
stays as it was (comments, CRLF line endings, a byte-order mark, a missing final
newline, anchors and tags). The target stage's checks run first and the file is
written only if they pass, atomically (temporary file in the same folder, fsync,
rename) with its mode kept, through a symbolic link to its target, and only if the
file on disk still holds the bytes that were read.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from stagegate.checks import runner
from stagegate.checks.base import Result
from stagegate.errors import InvalidInput, Problem, Refused, UsageError
from stagegate.fs import write_atomic
from stagegate.load.sources import STAGE_FILE, FileSource, Source, read_limited
from stagegate.load.yamlsrc import read, whole_number
from stagegate.model import Migration
from stagegate.records import record
from stagegate.validation import load
from stagegate.words import one_line

MAX_SHOWN = 10
"""Changed stage files named when a flip is refused for them, at the most."""


@record
class Pinned:
    """The files of ``files``, except that ``name`` holds ``raw``.

    ``flip`` loads the migration from the bytes it already read, so the model that the
    checks judge is exactly the text that will be edited; ``init`` loads what it is
    about to write, before writing it."""

    files: Source
    name: str
    raw: bytes

    def read(self, rel: str) -> bytes:
        return self.raw if rel == self.name else self.files.read(rel)

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        return self.files.listdir(rel)

    def escapes(self, rel: str) -> bool:
        return self.files.escapes(rel)


class Recorded:
    """The work tree's files as ``load`` reads them, remembered: the stage files and the
    stages folder's listing that a flip's checks judged. ``changed`` reads them again, so
    that the flip is written only if they are still what was checked (a stage inserted
    or renumbered meanwhile would otherwise take the place of the one checked)."""

    def __init__(self, files: FileSource) -> None:
        self.files = files
        self.reads: dict[str, bytes | None] = {}
        self.lists: dict[str, frozenset[tuple[str, bool]] | None] = {}

    def read(self, rel: str) -> bytes:
        try:
            data = self.files.read(rel)
        except FileNotFoundError:
            self.reads[rel] = None
            raise
        self.reads[rel] = data
        return data

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        try:
            entries = self.files.listdir(rel)
        except FileNotFoundError:
            self.lists[rel] = None
            raise
        self.lists[rel] = _stage_files(entries)
        return entries

    def escapes(self, rel: str) -> bool:
        return self.files.escapes(rel)

    def changed(self) -> list[str]:
        """What differs now from what was read: each file and folder listing, in words."""
        out: list[str] = []
        for rel, listed in self.lists.items():
            try:
                now: frozenset[tuple[str, bool]] | None = _stage_files(self.files.listdir(rel))
            except OSError:
                now = None
            if now != listed:
                gone = sorted(n for n, _ in (listed or set()) - (now or set()))
                new = sorted(n for n, _ in (now or set()) - (listed or set()))
                parts = ([f"gone: {', '.join(gone)}"] if gone else []) + (
                    [f"new: {', '.join(new)}"] if new else []
                )
                out.append(one_line(f"{rel or '.'}/ ({'; '.join(parts) or 'changed'})"))
        for rel, data in self.reads.items():
            try:
                now_data: bytes | None = self.files.read(rel)
            except OSError:
                now_data = None
            if now_data != data:
                out.append(one_line(f"{rel} ({'gone' if now_data is None else 'changed'})"))
        return out


def _stage_files(entries: list[tuple[str, bool]]) -> frozenset[tuple[str, bool]]:
    """The entries of a listing that are stage files (``NN-slug.yaml``): what a check
    leaves beside them (pytest's ``__pycache__``) is no change of the stages."""
    return frozenset(e for e in entries if STAGE_FILE.fullmatch(e[0]))


def read_recorded(path: str | Path) -> tuple[Migration, bytes, Recorded]:
    """Load the migration; the exact bytes of the file, and every other file the load
    read (the stage files), as read."""
    file = Path(path)
    try:
        raw = read_limited(file)
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such file; run stagegate in the folder that holds migration.yaml "
            "or pass -f PATH."
        ) from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory; pass the migration file with -f PATH.") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    files = Recorded(FileSource(file.parent))
    return load(path, source=Pinned(files, file.name, raw)), raw, files


# --------------------------------------------------------------------------- the edit


def stage_span(migration: Migration, raw: bytes) -> tuple[int, int]:
    """The byte offsets of the text of the top-level ``stage`` value in ``raw``.

    Taken from the located document ``load`` read (``Migration.stage_span``), which
    keeps the span of a value written in place as a plain scalar; anchors and tags
    before the number are outside the span and stay."""
    span = migration.stage_span
    if span is None:
        raise InvalidInput(
            [
                Problem(
                    migration.stage_loc,
                    "stage: is not written as a plain number (an alias, a quoted value "
                    "or a collection); write the number itself, e.g. `stage: 3`, so "
                    "that stagegate can flip it.",
                    "$.stage",
                )
            ]
        )
    start, end = span
    if not whole_number(raw[start:end].decode("utf-8", errors="replace")):
        raise InvalidInput(
            [
                Problem(
                    migration.stage_loc,
                    "stage: must be a whole number on one line to be flipped; write e.g. `stage: 3`.",
                    "$.stage",
                )
            ]
        )
    return start, end


def with_stage(migration: Migration, raw: bytes, new: int) -> bytes:
    """``raw`` with the stage value replaced by ``new``; nothing else differs.

    The edited bytes are read back (the one new text this command parses) and
    compared with the document ``load`` read."""
    file = migration.file
    start, end = stage_span(migration, raw)
    after = raw[:start] + str(new).encode("ascii") + raw[end:]
    old_doc = migration.document.data if migration.document is not None else None
    new_doc = read(after, file).data
    if not isinstance(new_doc, dict) or new_doc.get("stage") != new:
        raise RuntimeError(f"the edited {file} does not read back as stage {new}")
    if not isinstance(old_doc, dict) or {k: v for k, v in old_doc.items() if k != "stage"} != {
        k: v for k, v in new_doc.items() if k != "stage"
    }:
        raise RuntimeError(f"the edit of {file} changed more than the stage")
    return after


def _display_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.split("\n")
    ended = lines[-1] == ""
    if ended:
        lines.pop()
    shown = [line.removesuffix("\r") for line in lines]
    if not ended and shown:
        shown[-1] += "\n\\ No newline at end of file"
    return shown


def unified_diff(file: str, before: bytes, after: bytes) -> str:
    """The edit as ``git diff`` would show it (line endings shown as plain lines)."""
    lines = difflib.unified_diff(
        _display_lines(before),
        _display_lines(after),
        fromfile=f"a/{file}",
        tofile=f"b/{file}",
        lineterm="",
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- commands


@record(kw_only=True)
class Flip:
    """What advance or rollback did (or, with --dry-run, would do)."""

    migration: Migration
    path: str
    old: int
    new: int
    before: bytes
    after: bytes
    results: tuple[Result, ...]
    checked: tuple[int, ...]  # the stages whose checks ran, in order
    dry_run: bool
    failed_stage: int | None = None  # the first stage whose checks failed

    @property
    def ok(self) -> bool:
        return self.failed_stage is None

    @property
    def written(self) -> bool:
        return self.ok and not self.dry_run

    @property
    def diff(self) -> str:
        return unified_diff(self.path, self.before, self.after)


def _run(migration: Migration, stages: Sequence[int]) -> tuple[list[Result], list[int], int | None]:
    """Each stage's checks in order, stopping at the first stage that fails."""
    results: list[Result] = []
    checked: list[int] = []
    for stage in stages:
        found = runner.run_checks(migration, stage)
        results.extend(found)
        checked.append(stage)
        if not all(r.ok for r in found):
            return results, checked, stage
    return results, checked, None


def _finish(
    path: str,
    loaded: tuple[Migration, bytes, Recorded],
    new: int,
    stages: Sequence[int],
    *,
    dry_run: bool,
) -> Flip:
    migration, raw, files = loaded
    after = with_stage(migration, raw, new)
    results, checked, failed = _run(migration, stages)
    flip = Flip(
        migration=migration,
        path=path,
        old=migration.stage,
        new=new,
        before=raw,
        after=after,
        results=tuple(results),
        checked=tuple(checked),
        dry_run=dry_run,
        failed_stage=failed,
    )
    if flip.written:

        def same_stages() -> None:
            changed = files.changed()
            if changed:
                raise Refused(
                    f"{path}: the stage files changed on disk while stagegate was running the "
                    f"checks (a stage inserted, renumbered or edited meanwhile); the stage "
                    f"checked is not the one the flip would reach, so nothing was written. Run "
                    "the command again on the new stages.",
                    changed[:MAX_SHOWN],
                )

        write_atomic(Path(path), after, expected=raw, verify=same_stages)
    return flip


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def refuse_own_file(migration: Migration, path: str, pr_body: str | None) -> None:
    """Refuse a ``--pr-body`` that is the migration file, a stage file, or anything in
    the stages folder, also through a symbolic or hard link: the description would
    replace the migration it describes."""
    if pr_body is None:
        return
    target = Path(pr_body)
    resolved = target.resolve()
    stages = (migration.root / migration.stages_dir).resolve()
    own: list[tuple[str, Path]] = [(f"the migration file {path}", Path(path))]
    own += [
        (f"the stage file {d.file}", migration.root / migration.stages_dir / Path(d.file).name)
        for d in migration.stages
    ]
    what = next(
        (name for name, file in own if resolved == file.resolve() or _same_file(target, file)),
        None,
    )
    if what is None and resolved.is_relative_to(stages):
        what = f"in the stages folder {migration.stages_dir}/"
    if what is not None:
        raise UsageError(
            f"--pr-body {pr_body}: that is {what}; the description would overwrite the "
            "migration. Name a file outside it (e.g. pr.md at the top of the repository); "
            "nothing was written."
        )


def advance(
    path: str, *, to: int | None = None, dry_run: bool = False, pr_body: str | None = None
) -> Flip:
    """Move to the next stage (or ``to``) after its checks, and those of every stage
    in between, pass. ``pr_body``: where the description will go, refused up front
    when it is one of the migration's own files."""
    loaded = read_recorded(path)
    migration = loaded[0]
    refuse_own_file(migration, path, pr_body)
    current, last = migration.stage, migration.last
    if to is None:
        if current >= last:
            raise Refused(
                f"{path}: already at stage {current}, the last stage ({migration.title(current)}); "
                "there is nothing to advance to. Run `stagegate audit` to find what the retired "
                "items left behind."
            )
        target = current + 1
    else:
        if not 0 <= to <= last:
            raise UsageError(f"--to {to}: {path} has stages 0..{last}; pick one of them.")
        if to <= current:
            raise UsageError(
                f"--to {to}: the migration is at stage {current}; advance only moves forward "
                "(`stagegate rollback` goes back one stage)."
            )
        target = to
    return _finish(path, loaded, target, range(current + 1, target + 1), dry_run=dry_run)


def irreversible_reason(migration: Migration, stage: int) -> str | None:
    """Why leaving ``stage`` downwards is refused (its ``reversible: false``), or None."""
    definition = migration.stage_def(stage)
    if definition is None or definition.reversible:
        return None
    line = (definition.reversible_loc or definition.loc).line
    return (
        f"stage {stage} ({definition.title}) is not reversible "
        f"({definition.file}:{line}: reversible: false), so the migration cannot go back "
        f"below it; fix forward instead (a change in a new stage)."
    )


def rollback(path: str, *, dry_run: bool = False, pr_body: str | None = None) -> Flip:
    """Move one stage back, unless the current stage is not reversible; the stage
    rolled back to must pass its checks. ``pr_body`` as for ``advance``."""
    loaded = read_recorded(path)
    migration = loaded[0]
    refuse_own_file(migration, path, pr_body)
    current = migration.stage
    if current == 0:
        raise Refused(f"{path}: at stage 0 (before the migration); there is nothing to roll back.")
    reason = irreversible_reason(migration, current)
    if reason is not None:
        raise Refused(f"{path}: rollback refused.", [reason])
    return _finish(path, loaded, current - 1, [current - 1], dry_run=dry_run)
