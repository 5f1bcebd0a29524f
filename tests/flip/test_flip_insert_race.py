"""A flip and `new-stage --before` in two processes at once: the stage files are
compared-and-swapped with the stage line.

`advance` from stage 0 checks stage 1 (stages/01-narrow.yaml); `new-stage --before 1`
meanwhile moves it to 02-narrow.yaml and writes a new, never checked, 01-inserted.yaml.
Before the fix both said they succeeded: the migration landed on the inserted stage and
advance printed the old stage's title. Now the second to write is refused (exit 1), says
why, and writes nothing; the first's work is whole. Each interleaving is made certain
by pausing one real process (a fork of this one) at the point named, in the test only.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import SMALL, write_small
from stagegate.commands import flip, insert

Sg = Callable[..., Result]
CONTEXT = multiprocessing.get_context("fork")

BEFORE = ["01-narrow.yaml", "02-extra.yaml", "03-final.yaml"]
AFTER = ["01-inserted.yaml", "02-narrow.yaml", "03-extra.yaml", "04-final.yaml"]


def _child(argv: list[str], folder: Path, slot: str, pause: str | None, events: Any) -> None:
    """``stagegate ARGV`` in this forked process, its output and exit code in files;
    ``pause``: where to stop until the test lets it go on (``events``: reached, go)."""
    from stagegate import cli, fs

    reached, go = events
    if pause == "advance checked":  # the checks of stage 1 ran; the write is next
        real_run = flip._run

        def checked(*args: Any, **kwargs: Any) -> Any:
            out = real_run(*args, **kwargs)
            reached.set()
            go.wait(30)
            return out

        flip._run = checked  # type: ignore[assignment]
    elif pause in ("insert read", "insert holding"):
        real_holding = fs.holding

        def held(*args: Any, **kwargs: Any) -> Any:
            if pause == "insert read":  # loaded at stage 0, before the lock
                reached.set()
                go.wait(30)
            return real_holding(*args, **kwargs)

        insert.holding = held  # type: ignore[assignment]
        if pause == "insert holding":  # under the lock, checked, before any rename
            real_apply = insert._apply

            def applying(*args: Any, **kwargs: Any) -> Any:
                reached.set()
                go.wait(30)
                return real_apply(*args, **kwargs)

            insert._apply = applying  # type: ignore[assignment]
    os.chdir(folder)
    out = io.StringIO()
    sys.stdout = sys.stderr = out
    code = cli.run(argv)
    (folder.parent / f"{slot}.out").write_text(out.getvalue())
    (folder.parent / f"{slot}.code").write_text(str(code))
    os._exit(0)


def _start(argv: list[str], folder: Path, slot: str, pause: str | None = None) -> Any:
    events = (CONTEXT.Event(), CONTEXT.Event())
    process = CONTEXT.Process(target=_child, args=(argv, folder, slot, pause, events))
    process.start()
    return process, events


def _end(process: Any, folder: Path, slot: str) -> tuple[int, str]:
    process.join(60)
    assert process.exitcode == 0
    return (
        int((folder.parent / f"{slot}.code").read_text()),
        (folder.parent / f"{slot}.out").read_text(),
    )


def _stages(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "stages").iterdir())


@pytest.fixture
def folder(tmp_path: Path, sg: Sg) -> Path:
    root = tmp_path / "m"
    write_small(root)
    assert sg("advance", "--dry-run", cwd=root).code == 0  # imported here, once, not per fork
    return root


ADVANCE = ["advance"]
INSERT = ["new-stage", "Inserted", "--before", "1"]


def test_a_stage_inserted_while_advance_checks_refuses_the_flip(folder: Path) -> None:
    """advance has checked stage 1 when new-stage renumbers it to 2: advance is refused."""
    racer, (checked, go) = _start(ADVANCE, folder, "advance", "advance checked")
    assert checked.wait(30)
    inserter, _ = _start(INSERT, folder, "insert")
    code, out = _end(inserter, folder, "insert")
    assert (code, out) == (
        0,
        "wrote stages/01-inserted.yaml; set its flags, then: stagegate check --stage 1\n",
    )
    go.set()
    code, out = _end(racer, folder, "advance")
    assert code == 1, out
    assert out.endswith(
        "migration.yaml: the stage files changed on disk while stagegate was running the "
        "checks (a stage inserted, renumbered or edited meanwhile); the stage checked is not "
        "the one the flip would reach, so nothing was written. Run the command again on the "
        "new stages.\n"
        "  - stages/ (gone: 01-narrow.yaml, 02-extra.yaml, 03-final.yaml; new: "
        "01-inserted.yaml, 02-narrow.yaml, 03-extra.yaml, 04-final.yaml)\n"
        "  - stages/01-narrow.yaml (gone)\n"
        "  - stages/02-extra.yaml (gone)\n"
        "  - stages/03-final.yaml (gone)\n"
    ), out
    assert "stage 0 -> stage 1" not in out
    assert (folder / "migration.yaml").read_text() == SMALL  # still at stage 0
    assert _stages(folder) == AFTER  # the insertion is whole
    assert (folder / "stages" / "02-narrow.yaml").read_text().startswith("stage: 2\n")


def test_a_flip_written_while_new_stage_reads_refuses_the_insertion(folder: Path) -> None:
    """new-stage read stage 0 as current; advance flips to 1 before new-stage renumbers:
    new-stage is refused and changes nothing; the flip stands, with its own title."""
    inserter, (read, go) = _start(INSERT, folder, "insert", "insert read")
    assert read.wait(30)
    racer, _ = _start(ADVANCE, folder, "advance")
    code, out = _end(racer, folder, "advance")
    assert code == 0, out
    assert out.endswith(
        "\nmigration.yaml: stage 0 -> stage 1: Narrow the release glob. Commit this one-line "
        "change and open a pull request; `stagegate verify-pr` checks it.\n"
    ), out
    go.set()
    code, out = _end(inserter, folder, "insert")
    assert (code, out) == (
        1,
        "migration.yaml changed on disk since new-stage read it (its stage is 1 now, not 0); "
        "nothing was changed. Run new-stage again on the new content.\n",
    )
    assert (folder / "migration.yaml").read_text() == SMALL.replace("stage: 0\n", "stage: 1\n")
    assert _stages(folder) == BEFORE


def test_a_flip_that_reaches_the_lock_while_stages_move_waits_and_is_refused(
    folder: Path,
) -> None:
    """new-stage holds the lock, about to rename; advance, checked, waits for it and then
    finds the stages moved: refused, the insertion whole, no temporary file left."""
    inserter, (holding, go) = _start(INSERT, folder, "insert", "insert holding")
    assert holding.wait(30)
    racer, (checked, go_on) = _start(ADVANCE, folder, "advance", "advance checked")
    assert checked.wait(30)
    go_on.set()  # advance now takes the lock new-stage holds, and waits
    go.set()
    code, out = _end(inserter, folder, "insert")
    assert code == 0, out
    code, out = _end(racer, folder, "advance")
    assert code == 1, out
    assert "the stage files changed on disk while stagegate was running the checks" in out
    assert (folder / "migration.yaml").read_text() == SMALL
    assert _stages(folder) == AFTER
    leftovers = [p.name for p in folder.rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_each_alone_succeeds(folder: Path, sg: Sg) -> None:
    """Control: one after the other, each does its work (the flip then checks and reaches
    the inserted stage, by its own title)."""
    assert sg(*INSERT, cwd=folder).code == 0
    result = sg(*ADVANCE, cwd=folder)
    assert result.code == 0, result.output
    assert "stage 0 -> stage 1: Inserted" in result.out
    assert (folder / "migration.yaml").read_text() == SMALL.replace("stage: 0\n", "stage: 1\n")
