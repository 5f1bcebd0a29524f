"""`init` and `new-stage`: what was written, and what to run next."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stagegate.records import record
from stagegate.report import Renderers, echo_text


@record
class NewStage:
    """`new-stage`'s result: the stage file written, and the number of its stage."""

    path: Path
    stage: int


def _written(paths: Sequence[Path]) -> str:
    return f"wrote {paths[0]} (stage 0) and {paths[1]}/; next: stagegate validate"


def _new_stage(result: NewStage) -> str:
    return f"wrote {result.path}; set its flags, then: stagegate check --stage {result.stage}"


INIT: Renderers[Sequence[Path]] = {"text": echo_text(_written)}
NEW_STAGE: Renderers[NewStage] = {"text": echo_text(_new_stage)}
