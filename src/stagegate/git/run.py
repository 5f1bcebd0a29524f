"""The one runner of git: every git command stagegate performs starts here.

``spawn`` runs the ``git`` executable with one environment (``git_env``: git's messages
in English, no optional locks, none of the caller's ``GIT_DIR``-like variables) and
stdout/stderr as bytes. Commands that can run side by side are started as ``Pending``
and collected with ``result()``; a command whose exit code is an answer
(``merge-base --is-ancestor``) uses ``status``. One translator, ``command_failure``,
turns git's own failures (it could not start, or exited with a code the caller did not
expect) into a ``GitError`` (exit 3) whose message says what to do: run inside a work
tree, fetch the missing ref, deepen a shallow clone. Nothing else is caught here, so a
bug in our own parsing surfaces as an internal error (exit 70), never as a git error.

GitPython is not used (nor a dependency): its ``Repo`` reads the caller's ``GIT_DIR``,
``GIT_WORK_TREE`` and ``GIT_OBJECT_DIRECTORY`` while it discovers a repository, and its
``Git.execute`` starts every process from a copy of ``os.environ`` that can be added to
but not taken from, so it cannot give the one environment above.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from stagegate.errors import GitError

if TYPE_CHECKING:
    from subprocess import Popen


T = TypeVar("T")

FETCH_HINT = (
    "in GitHub Actions, give actions/checkout `fetch-depth: 0` "
    "(or fetch the base: `git fetch origin <base>`)"
)

# --------------------------------------------------------------------------- the one runner

KEPT_GIT_VARIABLES = frozenset(
    {
        # where git and its configuration are: the user chose them for every git command
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_COUNT",
        # how far up git may look for a repository
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        # reaching a remote (a `git fetch` in a worktree's hooks is none of ours, but
        # credentials and certificates are the user's settings, not repository state)
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
    }
)
"""The caller's ``GIT_*`` variables that reach git; every other one is dropped."""


def git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git command stagegate runs.

    The caller's, without the ``GIT_*`` variables that say which repository, work
    tree or index to use (a git hook exports ``GIT_DIR``, ``GIT_WORK_TREE`` and
    ``GIT_INDEX_FILE``: stagegate must answer for the repository holding the
    migration file, as pre-commit does); with git's messages in English (some are
    read below) and no optional locks, so a concurrent ``git commit`` never trips
    over a ``git status`` of ours."""
    source = os.environ if environ is None else environ
    env = {
        key: value
        for key, value in source.items()
        if not key.startswith("GIT_")
        or key in KEPT_GIT_VARIABLES
        or key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def git_said(raw: bytes) -> str:
    lines = raw.decode("utf-8", "replace").strip().splitlines()
    return "; ".join(line.strip() for line in lines[-3:] if line.strip())


def command_failure(
    args: Sequence[str | bytes], cwd: Path, code: int, err: bytes, *, action: str = ""
) -> GitError:
    """The one translation of a failed git command into what the user should do.

    ``action`` (``"read the history of x"``) phrases the message as "cannot ...";
    without it the message names the command."""
    said = git_said(err)
    cwd = Path(os.path.abspath(cwd))
    if "not a git repository" in said.lower():
        return GitError(
            f"{cwd} is not in a git repository (git said: {said}). stagegate searches the "
            "files git tracks: run it inside a clone of your repository (cd into it, or pass "
            "-f path/to/migration.yaml), or create one with `git init` and commit the files."
        )
    if "must be run in a work tree" in said:
        return GitError(
            f"{cwd}: this git repository has no work tree (a bare clone?); run stagegate "
            "inside a work tree (a clone with its files checked out)."
        )
    if "dubious ownership" in said:
        return GitError(
            f"{cwd}: git refuses to work in this repository: {said}. Follow git's advice "
            "(`git config --global --add safe.directory ...`) and run stagegate again."
        )
    if action:
        return GitError(f"cannot {action}: {said or f'git exited with {code}'}"[:400])
    shown = " ".join(os.fsdecode(a) for a in args)
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return GitError(
        f"`git {shown}` failed in {cwd} (exit {code})" + (f": {said}" if said else "") + "."
    )


def spawn(args: Sequence[str | bytes], cwd: Path, *, stdin: bool = False) -> Popen[bytes]:
    """Start ``git ARGS`` in ``cwd``: the one place a git process is started."""
    import subprocess

    argv: list[str | bytes] = ["git", *args]
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except FileNotFoundError:
        if not cwd.is_dir():
            raise GitError(
                f"{cwd}: no such folder; pass -f with the path of migration.yaml."
            ) from None
        raise GitError("the `git` program is not installed or not on PATH; install git.") from None
    except OSError as exc:
        raise GitError(f"cannot run git in {cwd}: {exc.strerror or exc}.") from None


class Pending(Generic[T]):
    """A running git command; ``result()`` waits for it and parses its output.

    An exit code outside ``ok`` is git's failure, translated by ``command_failure``
    (phrased with ``action`` when given); whatever ``parse`` raises is ours and passes
    through untouched."""

    def __init__(
        self,
        args: Sequence[str | bytes],
        cwd: Path,
        parse: Callable[[bytes], T],
        *,
        ok: tuple[int, ...] = (0,),
        stdin: bytes | None = None,
        action: str = "",
    ) -> None:
        self._proc = spawn(args, cwd, stdin=stdin is not None)
        self._args, self._cwd, self._parse, self._ok = args, cwd, parse, ok
        self._action = action
        if stdin is not None and self._proc.stdin is not None:
            # Written now, so that git starts working while we start the next command.
            try:
                self._proc.stdin.write(stdin)
                self._proc.stdin.close()
            except BrokenPipeError:
                pass  # git stopped early; result() reports why
            self._proc.stdin = None

    def result(self) -> T:
        out, err = self._proc.communicate()
        if self._proc.returncode not in self._ok:
            raise command_failure(
                self._args, self._cwd, self._proc.returncode, err, action=self._action
            )
        return self._parse(out)

    def cancel(self) -> None:
        """Stop the command (when another one failed and its result is not wanted)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def _text(out: bytes) -> str:
    """A command's output as text, without the final line break (names keep any byte)."""
    return os.fsdecode(out.removesuffix(b"\n"))


def run(args: Sequence[str | bytes], cwd: Path, *, action: str = "") -> str:
    """``git ARGS`` in ``cwd``, waited for: its output as text; GitError if it fails."""
    return Pending(args, cwd, _text, action=action).result()


def status(args: Sequence[str | bytes], cwd: Path) -> tuple[int, str, bytes]:
    """``git ARGS`` whose exit code is an answer: (exit code, output, stderr)."""
    proc = spawn(args, cwd)
    out, err = proc.communicate()
    return proc.returncode, _text(out), err
