"""advance and rollback never lose data: a failed or interrupted write leaves the old file.

Failures are planted where the write can fail (the rename, the fsync, a signal in
the middle) and the tests assert the file holds exactly its old bytes and no
temporary file is left behind; rollback keeps every byte but the stage, as
advance does, through a chain of links and with the file's mode.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import write_small
from stagegate import fs
from stagegate.checks import runner

Sg = Callable[..., Result]


@pytest.fixture
def small(tmp_path: Path) -> Path:
    root = tmp_path / "small"
    write_small(root)
    return root


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def fail_with(error: BaseException) -> Callable[..., None]:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise error

    return broken


@pytest.mark.parametrize("command", ["advance", "rollback"])
def test_a_failed_rename_leaves_the_old_file(
    command: str, small: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = small / "migration.yaml"
    if command == "rollback":
        path.write_bytes(path.read_bytes().replace(b"stage: 0\n", b"stage: 1\n"))
    before = path.read_bytes()
    monkeypatch.setattr(fs, "_swap", fail_with(OSError(errno.EIO, "Input/output error")))
    result = sg(command, cwd=small)
    assert result.code == 2, result.output
    assert "migration.yaml: cannot write: Input/output error" in result.err
    assert path.read_bytes() == before
    assert leftovers(small) == []


def test_a_full_disk_leaves_the_old_file(
    small: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (small / "migration.yaml").read_bytes()
    monkeypatch.setattr(
        fs.os, "fsync", fail_with(OSError(errno.ENOSPC, "No space left on device"))
    )
    result = sg("advance", cwd=small)
    assert result.code == 2, result.output
    assert "cannot write: No space left on device" in result.err
    assert (small / "migration.yaml").read_bytes() == before
    assert leftovers(small) == []


def test_an_interrupt_during_the_write_leaves_the_old_file(
    small: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (small / "migration.yaml").read_bytes()
    monkeypatch.setattr(fs, "_swap", fail_with(KeyboardInterrupt()))
    result = sg("advance", cwd=small)
    assert result.code == 130
    assert "stagegate: aborted." in result.err
    assert (small / "migration.yaml").read_bytes() == before
    assert leftovers(small) == []


def test_a_process_killed_before_the_rename_leaves_the_old_file(small: Path) -> None:
    """SIGKILL cannot be caught: the temporary file may stay, the old file is whole."""
    program = textwrap.dedent(
        """
        import os, signal
        import stagegate.fs as fs
        def die(*args):
            os.kill(os.getpid(), signal.SIGKILL)
        fs._swap = die
        from stagegate.cli import main
        main()
        """
    )
    before = (small / "migration.yaml").read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", program, "advance"],
        cwd=small,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -9
    assert (small / "migration.yaml").read_bytes() == before
    assert all(name.startswith(".migration.yaml.") for name in leftovers(small))


def test_rollback_refuses_when_the_file_changed_while_checking(
    small: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = small / "migration.yaml"
    path.write_bytes(path.read_bytes().replace(b"stage: 0\n", b"stage: 2\n"))
    real = runner.run_checks

    def edit_meanwhile(*args: object, **kwargs: object) -> object:
        with path.open("ab") as handle:
            handle.write(b"# someone else's edit\n")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    before = path.read_bytes()
    monkeypatch.setattr(runner, "run_checks", edit_meanwhile)
    result = sg("rollback", cwd=small)
    assert result.code == 1, result.output
    assert "changed on disk while stagegate was running its checks" in result.err
    assert "nothing was written" in result.err
    assert path.read_bytes() == before + b"# someone else's edit\n"
    assert leftovers(small) == []


def test_a_file_replaced_by_another_while_checking_is_not_overwritten(
    small: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another tool rewrites the file with a new stage: its content wins, nothing is written."""
    path = small / "migration.yaml"
    real = runner.run_checks

    def replace_meanwhile(*args: object, **kwargs: object) -> object:
        other = small / "other.yaml"
        other.write_bytes(path.read_bytes().replace(b"stage: 0\n", b"stage: 3\n"))
        os.replace(other, path)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "run_checks", replace_meanwhile)
    result = sg("advance", cwd=small)
    assert result.code == 1, result.output
    assert b"stage: 3\n" in path.read_bytes()


@pytest.mark.parametrize("command", ["advance", "rollback"])
def test_every_byte_but_the_stage_is_kept_through_a_chain_of_links(
    command: str, tmp_path: Path, sg: Sg
) -> None:
    """CRLF, a byte-order mark, no final newline and the mode, via link -> link -> file."""
    real = tmp_path / "real"
    write_small(real)
    start, end = (b"0", b"1") if command == "advance" else (b"1", b"0")
    raw = (real / "migration.yaml").read_bytes().replace(b"stage: 0\n", b"stage: " + start + b"\n")
    raw = b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n").rstrip(b"\r\n")
    (real / "migration.yaml").write_bytes(raw)
    os.chmod(real / "migration.yaml", 0o604)
    (tmp_path / "middle.yaml").symlink_to(real / "migration.yaml")
    (real / "link.yaml").symlink_to(tmp_path / "middle.yaml")
    result = sg("-f", "link.yaml", command, cwd=real)
    assert result.code == 0, result.output
    assert (real / "link.yaml").is_symlink()
    assert (tmp_path / "middle.yaml").is_symlink()
    after = (real / "migration.yaml").read_bytes()
    assert after == raw.replace(b"stage: " + start + b"\r\n", b"stage: " + end + b"\r\n", 1)
    assert os.stat(real / "migration.yaml").st_mode & 0o7777 == 0o604
    assert leftovers(real) == [] and leftovers(tmp_path) == []


def test_a_dangling_link_is_a_missing_file(tmp_path: Path, sg: Sg) -> None:
    (tmp_path / "migration.yaml").symlink_to(tmp_path / "gone.yaml")
    result = sg("advance", cwd=tmp_path)
    assert result.code == 2
    assert "migration.yaml: no such file" in result.err
    assert not (tmp_path / "gone.yaml").exists()
