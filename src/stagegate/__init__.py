"""stagegate: staged-migration feature flags for build, test and release pipelines.

For scripts that CI runs (a planner deciding what to build), one function::

    import stagegate

    values = stagegate.flags("migration.yaml")          # at the current stage
    if values["local-cu12-bindings"]:
        ...

Importing this package is cheap: the loader is imported when ``flags`` is first called.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stagegate._version import __version__
    from stagegate.errors import StagegateError

__all__ = ["StagegateError", "__version__", "flags"]


def __getattr__(name: str) -> Any:
    """``stagegate.StagegateError``, imported on first use: the pytest plugin loads this
    package into every pytest run, which must not import the rest of stagegate."""
    if name == "StagegateError":
        from stagegate.errors import StagegateError

        return StagegateError
    if name == "__version__":
        from stagegate._version import __version__

        return __version__
    raise AttributeError(f"module 'stagegate' has no attribute {name!r}")


def flags(
    file: str | os.PathLike[str] = "migration.yaml", stage: int | None = None
) -> dict[str, bool]:
    """Every flag's value at ``stage`` (default: the migration's current ``stage:``).

    ``file`` is the migration file; its stage files are read from its ``stages_dir``.
    The file is validated in full, as ``stagegate validate`` does. The result maps each
    flag name, in the order the file declares them, to its value: the flag's
    ``default``, then the ``set`` of stages 1..``stage`` in order.

    Raises ``stagegate.StagegateError`` on bad input, with the message the command line
    prints (file, line and column, and what to do) and its exit code in ``exit_code``:
    the subclass ``InvalidInput`` (``stagegate.errors``) for a malformed migration, with
    every problem in ``problems``; ``UsageError`` for a file that cannot be read or a
    ``stage`` that is not one of 0..last.
    """
    from stagegate.engine.resolve import flag_values
    from stagegate.errors import UsageError
    from stagegate.validation import load

    migration = load(os.fspath(file))
    if stage is None:
        stage = migration.stage
    elif isinstance(stage, bool) or not isinstance(stage, int):
        raise UsageError(f"stage must be a whole number 0..{migration.last}, not {stage!r}.")
    elif not 0 <= stage <= migration.last:
        raise UsageError(
            f"stage {stage} does not exist; {migration.file} has stages 0..{migration.last}."
        )
    return flag_values(migration, stage)
