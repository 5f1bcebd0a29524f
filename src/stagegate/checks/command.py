"""Run a command (an argv list, no shell) and pass when it exits 0."""

from __future__ import annotations

import subprocess

from ..model import Check
from ._base import Context, Finding, Result, result

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
TAIL_LINES = 20


def tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run(ctx: Context, check: Check) -> list[Result]:
    argv = [str(a) for a in check.args["run"]]
    timeout = float(check.args.get("timeout", ctx.timeout))
    shown = " ".join(argv)
    try:
        proc = subprocess.run(
            argv,
            cwd=ctx.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        finding = Finding(f"command {argv[0]!r} not found; install it or fix `run`.", check.loc)
        return [result(ctx, check, [finding], "")]
    except PermissionError:
        finding = Finding(
            f"command {argv[0]!r} is not executable; fix its mode or `run`.", check.loc
        )
        return [result(ctx, check, [finding], "")]
    except subprocess.TimeoutExpired:
        finding = Finding(
            f"`{shown}` did not finish within {timeout:g} s; it was stopped.", check.loc
        )
        return [result(ctx, check, [finding], "")]
    output = tail((proc.stdout or "") + (proc.stderr or ""))
    if proc.returncode == 0:
        outcome = result(ctx, check, [], f"`{shown}` exited 0")
    else:
        finding = Finding(
            f"`{shown}` exited {proc.returncode}" + (f":\n{output}" if output else ""), check.loc
        )
        outcome = result(ctx, check, [finding], "")
    return [outcome]
