"""advance and rollback are a compare-and-swap of migration.yaml.

Issue #11, items 8 and 9: two flips started together both said "written" while only
one write survived; an edit saved while advance was writing was overwritten; and
--pr-body replaced a named pipe or a device node with a regular file.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Result
from scratch import SMALL, write_small
from stagegate import fs
from stagegate.commands import flip

Sg = Callable[..., Result]
ROUNDS = 20
"""Races per run: the barrier makes every round a race; more rounds only sample more
orders of the two writes (``--fuzz-long`` runs LONG_ROUNDS)."""
LONG_ROUNDS = 200


def _flip_in_a_child(command: str, folder: str, barrier: Any, codes: Any, slot: int) -> None:
    """Run ``stagegate COMMAND`` in this (forked) process; both children have read and
    checked the file before either writes (the barrier), so they always race."""
    import io
    import sys

    from stagegate import cli

    real = flip._run

    def checked_then_wait(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        barrier.wait(timeout=30)
        return out

    flip._run = checked_then_wait  # type: ignore[assignment]
    os.chdir(folder)
    sys.stdout = sys.stderr = io.StringIO()
    codes[slot] = cli.run([command])
    os._exit(0)


def test_two_flips_started_together_never_both_succeed(
    tmp_path: Path, request: pytest.FixtureRequest, sg: Sg
) -> None:
    rounds = LONG_ROUNDS if request.config.getoption("--fuzz-long") else ROUNDS
    # The racers are forks of this process: what a flip imports is imported here, once,
    # not in each of the 2 x rounds children (about 0.1 s CPU each).
    write_small(tmp_path / "alone")
    assert sg("advance", "--dry-run", cwd=tmp_path / "alone").code == 0
    context = multiprocessing.get_context("fork")
    winners: dict[str, int] = {"advance": 0, "rollback": 0}
    for round_ in range(rounds):
        folder = tmp_path / f"r{round_}"
        write_small(folder)
        path = folder / "migration.yaml"
        path.write_text(SMALL.replace("stage: 0\n", "stage: 1\n"))
        barrier = context.Barrier(2)
        codes = context.Array("i", [-1, -1])
        children = [
            context.Process(
                target=_flip_in_a_child, args=(command, str(folder), barrier, codes, slot)
            )
            for slot, command in enumerate(("advance", "rollback"))
        ]
        for child in children:
            child.start()
        for child in children:
            child.join(60)
            assert child.exitcode == 0
        assert sorted(codes[:]) == [0, 1], (round_, codes[:])
        winner = "advance" if codes[0] == 0 else "rollback"
        winners[winner] += 1
        expected = "stage: 2\n" if winner == "advance" else "stage: 0\n"
        assert path.read_text() == SMALL.replace("stage: 0\n", expected), round_
        assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []
    assert sum(winners.values()) == rounds


EDIT = b"# an edit saved meanwhile\n"


def _edit_in_place(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(EDIT)


def _edit_by_rename(path: Path) -> None:
    """As editors save: a new file renamed over the old one."""
    new = path.with_name(".editor-swap")
    new.write_bytes(path.read_bytes() + EDIT)
    os.replace(new, path)


EDITORS = {"in place": _edit_in_place, "by rename": _edit_by_rename}


@pytest.mark.parametrize(
    ("editor", "when"),
    [
        ("in place", "while syncing"),
        ("by rename", "while syncing"),
        ("in place", "at the swap"),
        ("by rename", "at the swap"),
        ("in place", "after the swap"),  # the old file, still open, edited right after
    ],
)
def test_an_edit_made_during_the_write_is_never_lost(
    editor: str, when: str, tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_small(tmp_path)
    path = tmp_path / "migration.yaml"
    before = path.read_bytes()
    edit = EDITORS[editor]
    done: list[bool] = []

    def once() -> None:
        if not done:
            done.append(True)
            edit(path)

    if when == "while syncing":
        real_fsync = fs.os.fsync

        def slow_fsync(fd: int) -> None:
            once()
            real_fsync(fd)

        monkeypatch.setattr(fs.os, "fsync", slow_fsync)
    else:
        real_swap = fs._swap

        def swap(temp: Path, target: Path) -> bool:
            if when == "at the swap":
                once()
            swapped = real_swap(temp, target)
            if when == "after the swap":
                _edit_in_place(temp if swapped else path)
                done.append(True)
            return swapped

        monkeypatch.setattr(fs, "_swap", swap)
    result = sg("advance", cwd=tmp_path)
    assert done, "the edit was made"
    assert result.code == 1, result.output
    assert "changed on disk while stagegate was writing it; nothing was written" in result.err
    assert path.read_bytes() == before + EDIT
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_flip_waits_for_the_lock_and_says_so(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    write_small(tmp_path)
    path = tmp_path / "migration.yaml"
    before = path.read_bytes()
    monkeypatch.setattr(fs, "LOCK_WAIT", 0.2)
    with path.open("rb") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        result = sg("advance", cwd=tmp_path)
    assert result.code == 1, result.output
    assert "is being written by another process (locked for more than 0.2 s)" in result.err
    assert path.read_bytes() == before


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # like /dev/null


def _link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("pipe"))
    path.symlink_to("pipe")


SPECIAL = {"a named pipe": _fifo, "a device node": _device, "a link to a pipe": _link_to_fifo}


@pytest.mark.parametrize("kind", SPECIAL)
def test_pr_body_writes_only_regular_files(kind: str, tmp_path: Path, sg: Sg) -> None:
    write_small(tmp_path / "m")
    body = tmp_path / "body.md"
    SPECIAL[kind](body)
    real = Path(os.path.realpath(body))
    mode = os.lstat(real).st_mode
    result = sg("advance", "--pr-body", str(body), cwd=tmp_path / "m")
    assert result.code == 2, result.output
    assert "is not a regular file" in result.err
    assert os.lstat(real).st_mode == mode  # left alone
    assert "stage: 0\n" in (tmp_path / "m" / "migration.yaml").read_text()  # no flip either


@pytest.mark.parametrize("kind", ["a named pipe", "a folder"])
def test_write_atomic_refuses_what_is_not_a_regular_file(kind: str, tmp_path: Path) -> None:
    from stagegate.errors import UsageError

    target = tmp_path / "x"
    if kind == "a folder":
        target.mkdir()
    else:
        os.mkfifo(target)
    with pytest.raises(UsageError, match="is not a regular file"):
        fs.write_atomic(target, b"data")
    assert not stat.S_ISREG(os.lstat(target).st_mode)
