"""`new-stage TITLE --before N`: a stage inserted before stage N, the later stages renumbered.

Every stage file numbered N or more moves one up (``NN-slug.yaml`` and its pytest folder
``NN-slug/``), with its ``stage:`` line, and every ``since:`` that names such a stage (in
the stage files and in migration.yaml's invariants) follows it. All of it is computed
first and checked (no target taken, nothing changed meanwhile); then the files are
written and renamed, and the migration is loaded again: on any error every step done is
undone, so the tree is as it was.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path

from stagegate.errors import Refused, StagegateError, UsageError
from stagegate.fs import holding
from stagegate.model import Migration

_STAGE_LINE = re.compile(r"^(stage:[ \t]*)(\d+)(?=[ \t]*(#.*)?$)", re.M)
_SINCE = re.compile(r"((?:^|[{,])[ \t-]*since:[ \t]*)(\d+)\b", re.M)


def _renumbered(text: str, number: int | None, first: int) -> str:
    """``text`` with its ``stage:`` line set to ``number`` and each ``since: K >= first``
    moved to K + 1."""
    if number is not None:
        text = _STAGE_LINE.sub(lambda m: f"{m.group(1)}{number}", text, count=1)
    return _SINCE.sub(
        lambda m: m.group(1) + str(int(m.group(2)) + (int(m.group(2)) >= first)), text
    )


_PATH_ARG = re.compile(r"((?:^|[{,])[ \t-]*path:[ \t]*['\"]?)([^'\",}\s#]+)", re.M)


def _paths_moved(data: bytes, moved: dict[str, str]) -> bytes:
    """``path:`` arguments (of pytest checks) naming a renumbered stage folder, moved too."""
    if not moved:
        return data

    def one(m: re.Match[str]) -> str:
        value = m.group(2)
        for old, new in moved.items():
            if value.rstrip("/") == old or value.startswith(old + "/"):
                return m.group(1) + new + value[len(old) :]
        return m.group(0)

    return _PATH_ARG.sub(one, data.decode("utf-8")).encode("utf-8")


def _path(migration: Migration, file: str) -> Path:
    """A stage file on disk: its name in the stages folder."""
    return migration.root / migration.stages_dir / Path(file).name


def _name(path: Path, number: int, width: int) -> str:
    return f"{number:0{width}d}-{path.name.split('-', 1)[1]}"


def insert_stage(
    migration: Migration, slug: str, before: int, text_for: Callable[[int], str]
) -> Path:
    """Insert a stage before stage ``before``; the new stage file's path.

    ``text_for(number)`` is the new stage file's text. It all happens under the lock a
    flip takes on the migration file (``fs.holding``), which must still hold what was
    loaded: a flip and an insertion never interleave (the flip compares the stage files
    it checked under the same lock)."""
    if before <= migration.stage:
        raise Refused(
            f"--before {before}: stage {migration.stage} is current, and stages up to it have "
            "been flipped through; a stage can only be inserted ahead of the current one "
            f"(--before {migration.stage + 1} or later)."
        )
    if before > migration.last:
        raise UsageError(
            f"--before {before}: the last stage is {migration.last}; to add a stage after it, "
            "run new-stage without --before."
        )
    with holding(Path(migration.file), partial(_as_loaded, migration)):
        return _insert(migration, slug, before, text_for)


def _as_loaded(migration: Migration, data: bytes | None) -> None:
    """Refuse unless the migration file holds what ``migration`` was loaded from: a flip
    written meanwhile moved the stage the insertion was judged against."""
    from stagegate.load.yamlsrc import read

    loaded = migration.document.data if migration.document is not None else None
    now = read(data, migration.file).data if data is not None else None
    if now != loaded:
        stage = now.get("stage") if isinstance(now, dict) else None
        moved = (
            f" (its stage is {stage} now, not {migration.stage})"
            if stage != migration.stage
            else ""
        )
        raise Refused(
            f"{migration.file} changed on disk since new-stage read it{moved}; nothing was "
            "changed. Run new-stage again on the new content."
        )


def _insert(migration: Migration, slug: str, before: int, text_for: Callable[[int], str]) -> Path:
    """``insert_stage`` under the lock on the migration file."""
    from stagegate.validation import load

    folder = migration.root / migration.stages_dir
    later = sorted(
        (s for s in migration.stages if s.number >= before), key=lambda s: s.number, reverse=True
    )
    width = max(
        [
            2,
            len(str(migration.last + 1)),
            *(len(Path(s.file).name.split("-", 1)[0]) for s in migration.stages),
        ]
    )
    # plan: (old path, new path, old bytes, new bytes) for files; (old, new) for folders
    files: list[tuple[Path, Path, bytes, bytes]] = []
    folders: list[tuple[Path, Path]] = []
    for stage in later:
        old = _path(migration, stage.file)
        old_bytes = old.read_bytes()
        new_text = _renumbered(old_bytes.decode("utf-8"), stage.number + 1, before)
        files.append(
            (old, folder / _name(old, stage.number + 1, width), old_bytes, new_text.encode())
        )
        tests = old.with_suffix("")
        if tests.is_dir():
            folders.append((tests, folder / _name(tests, stage.number + 1, width)))
    moved = {
        f"{migration.stages_dir}/{old.name}": f"{migration.stages_dir}/{new.name}"
        for old, new in folders
    }
    files = [(old, new, data, _paths_moved(text, moved)) for old, new, data, text in files]
    earlier = [_path(migration, s.file) for s in migration.stages if s.number < before]
    for path in [*earlier, Path(migration.file)]:
        data = path.read_bytes()
        changed = _paths_moved(_renumbered(data.decode("utf-8"), None, before).encode(), moved)
        if changed != data:
            files.append((path, path, data, changed))
    created = folder / f"{before:0{width}d}-{slug}.yaml"
    moving = {old for old, *_ in files} | {old for old, _ in folders}
    for target in [*(new for _, new, *_ in files), *(new for _, new in folders), created]:
        if target.exists() and target not in moving:
            raise UsageError(
                f"{target} exists and is not a stage being renumbered; move it away first."
            )
    undo: list[Callable[[], None]] = []
    try:
        _apply(files, folders, created, text_for(before).encode(), undo)
        load(migration.file)
    except (OSError, StagegateError) as error:
        for step in reversed(undo):
            step()
        if isinstance(error, StagegateError):
            raise
        raise UsageError(f"cannot renumber the stages: {error}; nothing was changed.") from error
    return created


def _apply(
    files: list[tuple[Path, Path, bytes, bytes]],
    folders: list[tuple[Path, Path]],
    created: Path,
    text: bytes,
    undo: list[Callable[[], None]],
) -> None:
    """Write and rename, recording how to undo each step as it is done."""
    temps: list[tuple[Path, Path]] = []
    for old, new, before_bytes, after in files:
        if old.read_bytes() != before_bytes:
            raise Refused(f"{old} changed while the stages were renumbered; run new-stage again.")
        temp = new.parent / f".{new.name}.stagegate-new"
        with open(temp, "xb") as handle:
            handle.write(after)
        undo.append(partial(temp.unlink, missing_ok=True))
        temps.append((temp, new))
    for (old, new, before_bytes, _after), (temp, _) in zip(files, temps, strict=True):
        os.replace(temp, new)
        if old != new:
            undo.append(partial(new.unlink, missing_ok=True))
            old.unlink()
        undo.append(partial(_restore, old, before_bytes))
    for old, new in folders:
        os.rename(old, new)
        undo.append(partial(os.rename, new, old))
    with open(created, "xb") as handle:
        handle.write(text)
    undo.append(partial(created.unlink, missing_ok=True))


def _restore(path: Path, data: bytes) -> None:
    path.write_bytes(data)
