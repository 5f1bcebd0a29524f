"""stagegate's own steps in the workflows: a step that runs `stagegate flags` or
`stagegate matrix P` (as a command or through the action), and the outputs it writes at
a stage, which the reader gives the jobs that need them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stagegate.model.ghexpr import Unknown, Value

if TYPE_CHECKING:
    from stagegate.model import Migration

_OPTIONS_WITH_VALUES = frozenset({"-f", "--file", "--format", "--stage"})


def _command_words(words: list[str]) -> list[str] | None:
    """``flags`` / ``matrix P`` from the words after ``stagegate`` (its options skipped)."""
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _OPTIONS_WITH_VALUES:
            i += 2
            continue
        if word.startswith("-") or word in (">>", ">", "|", "&&", ";"):
            if word in (">>", ">", "|", "&&", ";"):
                break
            i += 1
            continue
        out.append(word.strip("\"'"))
        i += 1
    return out if out and out[0] in ("flags", "matrix") else None


def stagegate_command(step: Mapping[str, Any]) -> list[str] | None:
    """The command of a step that runs `stagegate flags` or `stagegate matrix P` (else None)."""
    run = step.get("run")
    if isinstance(run, str) and "stagegate" in run:
        for line in run.splitlines():
            words = line.split()
            for i, word in enumerate(words):
                if word in ("stagegate", "stagegate-ci") or word.endswith("/stagegate"):
                    found = _command_words(words[i + 1 :])
                    if found:
                        return found
    uses = step.get("uses")
    if isinstance(uses, str) and "stagegate" in uses.lower():
        given = step.get("with")
        command = given.get("command") if isinstance(given, dict) else None
        if isinstance(command, str):
            return _command_words(command.split())
    return None


def outputs_at(migration: Migration, stage: int, command: list[str]) -> dict[str, Value]:
    """The step outputs a `stagegate flags` or `stagegate matrix P` step writes at ``stage``."""
    from stagegate.ci import ciflags
    from stagegate.engine.resolve import resolve
    from stagegate.errors import StagegateError

    plan = resolve(migration, stage)
    if command[0] == "flags":
        try:
            return dict(ciflags.github_outputs(plan))
        except StagegateError:
            return {}
    if command[0] == "matrix" and len(command) > 1:
        try:
            found = ciflags.matrices(migration, command[1:], stage)
        except StagegateError as error:
            return {
                "matrix": Unknown(
                    f"stagegate matrix {' '.join(command[1:])}",
                    f"{error}; fix the step's command",
                )
            }
        return {"matrix": ciflags.compact(found)}
    return {}
