"""Run a stage's pytest folder with the ``stagegate`` fixture bound to the stage under test."""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from stagegate.errors import Problem
from stagegate.fs import escapes
from stagegate.model import Check, Migration
from stagegate.words import one_line

if TYPE_CHECKING:
    from stagegate.checks.base import Context, Result

KIND = "pytest"
SUMMARY = (
    "Runs pytest on `path` (default: the stage's folder stages/NN-slug/); passes when it exits 0."
)
ARGS = {
    "path": {
        "type": "string",
        "minLength": 1,
        "description": "Folder or file, relative to the migration file.",
    },
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Seconds (default 600)."},
    "host-conftest": {
        "type": "boolean",
        "description": "Load the repository's own pytest configuration and conftest.py files "
        "above the stages folder (default false: the stage tests run isolated from them).",
    },
}
REQUIRED: list[str] = []
READS = "commands"
"""Runs the user's commands: a model check to `check --all` (it must pass at every stage),
but not model-only (it runs a process)."""


VALIDATE_EVERY_LOAD = True
"""``validate`` asks where ``path`` leads on disk (a link may have changed since the
validation cache learned these files valid)."""


def validate(migration: Migration, check: Check) -> list[Problem]:
    rel = check.args.get("path")
    if rel is not None and escapes(migration.root, rel):
        return [
            Problem(
                check.loc,
                f"pytest path {rel!r} leads outside the repository; use a path inside it.",
            )
        ]
    return []


def _argv(rel: str, where: Path | None, isolate: list[str] | None = None) -> list[str]:
    """``python -m pytest`` on ``rel``; with ``where`` (the base's test copy), on the copy,
    in safe-path mode (``-P``: neither the working folder nor a script's folder is put
    first on ``sys.path``, so a ``pytest.py`` of the head is not what runs)."""
    # `-p stagegate` loads the fixture even where PYTEST_DISABLE_PLUGIN_AUTOLOAD is set;
    # a path starting with '-' must not read as an option.
    shown = f"./{rel}" if rel.startswith("-") else rel
    python = [sys.executable, "-P"] if where is not None else [sys.executable]
    return [
        *python,
        *("-m", "pytest", "-q", "--no-header"),
        *("-p", "no:cacheprovider", "-p", "stagegate"),
        *(isolate or ()),
        str(where / rel) if where is not None else shown,
    ]


def run(ctx: Context, check: Check) -> list[Result]:
    # imported here: ``validate`` runs on every load (it follows links on disk, which the cache key does not cover) and must stay
    # cheap to import, for the commands that start fast
    from stagegate.checks._pytest_session import isolation, target  # not at load time
    from stagegate.checks._pytest_session import summary as shared_summary
    from stagegate.checks.base import Finding, result
    from stagegate.checks.command import bounded, tail

    rel = target(ctx, check)
    if rel is None:
        return [result(ctx, check, [], "stage 0 has no stage folder; nothing to run")]
    name = one_line(rel)  # as messages show it
    files = ctx.tests if ctx.tests is not None else ctx.root
    if escapes(files, rel):
        finding = Finding(f"pytest path {rel!r} leads outside the repository; refused.", check.loc)
        return [result(ctx, check, [finding], "")]
    if not (files / rel).exists():
        where = " at the base" if ctx.tests is not None else ""
        finding = Finding(
            f"{name}/ does not exist{where}; create it with the stage's tests (test_*.py) or "
            "give `path`.",
            check.loc,
        )
        return [result(ctx, check, [finding], "")]
    missing = [name for name in ("pytest", "pytest_snapshot") if find_spec(name) is None]
    if missing:
        finding = Finding(
            f"{' and '.join(missing)} not installed beside stagegate ({sys.executable}), so "
            f"{name}/ cannot run: reinstall stagegate (pip install stagegate-ci brings both), "
            "or pip install pytest pytest-snapshot into that Python.",
            check.loc,
        )
        return [result(ctx, check, [finding], "")]
    shared = shared_summary(ctx, rel)  # check --all: passed in the stages' one session
    if shared is not None:
        return [result(ctx, check, [], f"pytest {name}: {shared}")]
    timeout = float(check.args.get("timeout", ctx.timeout))
    env = dict(os.environ)
    if ctx.tests is not None:
        from stagegate.checks.command import safe_path_env

        env = safe_path_env(env)
    env["STAGEGATE_FILE"] = str((ctx.root / Path(ctx.migration.file).name).resolve())
    env["STAGEGATE_STAGE"] = str(ctx.stage)
    host = check.args.get("host-conftest") is True
    if not host:
        env.pop("PYTEST_ADDOPTS", None)  # a CI job may set it, as the host's ini does
    isolate = isolation(files, ctx.reference.stages_dir, rel, host=host)
    code, output = bounded(_argv(rel, ctx.tests, isolate), cwd=ctx.root, env=env, timeout=timeout)
    if code is None:
        finding = Finding(
            f"pytest {name} did not finish within {timeout:g} s; it was stopped:\n{tail(output)}",
            check.loc,
        )
        return [result(ctx, check, [finding], "")]
    summary = tail(output, 1) or f"exit {code}"
    if code == 0:
        return [result(ctx, check, [], f"pytest {name}: {summary}")]
    reason = "no tests were collected" if code == 5 else summary
    finding = Finding(f"pytest {name} failed ({reason}):\n{tail(output)}", check.loc)
    return [result(ctx, check, [finding], "")]
