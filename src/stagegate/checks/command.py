"""Run a command (an argv list, no shell) and pass when it exits 0."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from stagegate.checks.base import Context, Finding, Result, result
from stagegate.model import Check
from stagegate.words import one_line

KIND = "command"
SUMMARY = "Runs `run` (an argv list, no shell) in the migration's folder; passes when it exits 0."
ARGS = {
    "run": {
        "type": "array",
        "minItems": 1,
        "items": {"type": "string"},
        "description": "The command and its arguments; no shell is involved.",
    },
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds (default 600)."},
}
REQUIRED = ["run"]
READS = "commands"
"""Runs the user's commands: a model check to `check --all` (it must pass at every stage),
but not model-only (it runs a process)."""
TAIL_LINES = 20


def tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def bounded(
    argv: Sequence[str], *, cwd: Path, timeout: float, env: Mapping[str, str] | None = None
) -> tuple[int | None, str]:
    """Run ``argv`` (no shell); its exit code (None when stopped at ``timeout``) and output.

    The command gets its own session, so that on timeout its whole process group is
    killed: a script's children would otherwise keep running (and holding the output
    pipe) after the script itself is gone. stdout and stderr are one stream, in the
    order the command wrote them."""
    with _signals_interrupt():
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=timeout)
            return proc.returncode, output or ""
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                output, _ = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # something left the group and kept the pipe
                output = ""
            return None, output or ""
        except BaseException:
            # Interrupted (SIGINT, SIGTERM): the command's own session would outlive us.
            _kill_group(proc)
            with contextlib.suppress(BaseException):
                proc.wait(timeout=5)
            raise


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) arrived while a command ran: stop like Ctrl-C, after the command."""


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM and SIGHUP raise ``Terminated`` (SIGINT already raises
    KeyboardInterrupt), so that the command's process group is killed on the way out
    instead of being left running when stagegate is stopped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise Terminated(signal.Signals(signum).name)

    kept = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            kept[sig] = signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()


def run(ctx: Context, check: Check) -> list[Result]:
    argv = [str(a) for a in check.args["run"]]
    timeout = float(check.args.get("timeout", ctx.timeout))
    shown = one_line(shlex.join(argv))  # pasteable back into a shell; on one line
    env = None
    if ctx.baseline is not None:  # verify-pr: nothing of the head tree may stand in for it
        env = safe_path_env(os.environ)
    try:
        code, output = bounded(argv, cwd=ctx.root, timeout=timeout, env=env)
    except FileNotFoundError:
        finding = Finding(f"command {argv[0]!r} not found; install it or fix `run`.", check.loc)
        return [result(ctx, check, [finding], "")]
    except PermissionError:
        finding = Finding(
            f"command {argv[0]!r} is not executable; fix its mode or `run`.", check.loc
        )
        return [result(ctx, check, [finding], "")]
    last = tail(output)
    if code is None:
        finding = Finding(
            f"`{shown}` did not finish within {timeout:g} s; it was stopped"
            + (f"; its last output:\n{last}" if last else "."),
            check.loc,
        )
        return [result(ctx, check, [finding], "")]
    if code == 0:
        return [result(ctx, check, [], f"`{shown}` exited 0")]
    finding = Finding(f"`{shown}` exited {code}" + (f":\n{last}" if last else ""), check.loc)
    return [result(ctx, check, [finding], "")]


def safe_path_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for a program run in the head tree on the base's behalf.

    Python started by it does not put its working folder or a script's folder first on
    ``sys.path`` (``PYTHONSAFEPATH``), and neither ``PATH`` nor ``PYTHONPATH`` keeps an
    empty or relative entry (one that names the working folder, the head tree): a
    ``git`` or ``yaml.py`` committed there is not what runs. Absolute entries are the
    workflow's own choice and stay."""
    out = dict(env)
    out["PYTHONSAFEPATH"] = "1"
    out["PYTHONDONTWRITEBYTECODE"] = "1"
    for name in ("PATH", "PYTHONPATH"):
        if name in out:
            kept = [e for e in out[name].split(os.pathsep) if e and os.path.isabs(e)]
            out[name] = os.pathsep.join(kept)
    return out
