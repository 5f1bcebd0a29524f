"""`validate`: the migration's summary line, or the problems that keep it from loading,
as text, JSON and GitHub annotations."""

from __future__ import annotations

from typing import Any

from stagegate.errors import InvalidInput
from stagegate.model import Migration
from stagegate.records import record
from stagegate.report import Output, Renderers, dumps, github, lines
from stagegate.words import counted


@record
class Validation:
    """`validate`'s result: the migration, or the problems that keep it from loading."""

    migration: Migration | None = None
    error: InvalidInput | None = None

    @property
    def exit_code(self) -> int:
        return self.error.exit_code if self.error is not None else 0


def summary_line(migration: Migration) -> str:

    counts = ", ".join(
        counted(n, noun)
        for n, noun in (
            (len(migration.stages), "stage file"),
            (len(migration.flags), "flag"),
            (len(migration.producers), "producer"),
            (len(migration.consumers), "consumer"),
            (len(migration.releases), "release"),
        )
    )
    return f"{migration.file}: valid: {counts}; at stage {migration.stage} of {migration.last}."


def as_json(result: Validation) -> dict[str, Any]:
    if result.error is not None:
        problems = [
            {
                "file": p.loc.file,
                "line": p.loc.line,
                "col": p.loc.col,
                "path": p.path,
                "message": p.message,
            }
            for p in result.error.problems
        ]
        return {"ok": False, "problems": problems}
    assert result.migration is not None
    migration = result.migration
    return {"ok": True, "problems": [], "stage": migration.stage, "stages": len(migration.stages)}


def _text(result: Validation) -> Output:
    if result.error is not None:
        return Output(err=lines(str(result.error)))
    assert result.migration is not None
    return Output(lines(summary_line(result.migration)))


def _github(result: Validation) -> Output:

    if result.error is not None:
        annotations = github.problem_annotations(result.error.problems, "stagegate validate")
        count = counted(len(result.error.problems), "problem")
        return Output(
            lines(annotations or None),
            _text(result).err,
            f"### stagegate validate\n\n{count} in the migration files.",
        )
    migration = result.migration
    assert migration is not None
    return Output(
        _text(result).out,
        summary=f"### stagegate validate\n\n{github.md_code(migration.file)} is valid "
        f"(stage {migration.stage} of {migration.last}).",
    )


VALIDATE: Renderers[Validation] = {
    "text": _text,
    "json": lambda result: Output(lines(dumps(as_json(result)))),
    "github": _github,
}
