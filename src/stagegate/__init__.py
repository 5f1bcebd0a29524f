"""stagegate: staged-migration feature flags for build, test and release pipelines.

For scripts that CI runs (a planner deciding what to build)::

    import stagegate

    values = stagegate.flags("migration.yaml")          # at the current stage
    if values["local-cu12-bindings"]:
        ...
    rows = stagegate.matrix("bindings-cu12")            # {"include": [{...}, ...]}
    active = stagegate.plan(stage=3)["producers"]       # what `plan --format json` prints

Importing this package is cheap: the loader is imported when a function is first called.
Every error a caller can cause is a ``stagegate.StagegateError``, whose message says what
is wrong, where (file, line and column) and what to do.
"""

import os as _os
import typing as _typing

if _typing.TYPE_CHECKING:
    from stagegate._version import __version__
    from stagegate.errors import StagegateError
    from stagegate.model import Migration as _Migration

__all__ = ["StagegateError", "__version__", "flags", "matrix", "plan"]

_PathLike = _typing.Union[str, "_os.PathLike[str]"]


def __getattr__(name: str) -> _typing.Any:
    """``stagegate.StagegateError``, imported on first use: the pytest plugin loads this
    package into every pytest run, which must not import the rest of stagegate."""
    if name == "StagegateError":
        from stagegate.errors import StagegateError

        return StagegateError
    if name == "__version__":
        from stagegate._version import __version__

        return __version__
    raise AttributeError(f"module 'stagegate' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What the package offers, and nothing of how it is written."""
    return sorted(__all__)


def _load(file: _PathLike, stage: int | None) -> tuple["_Migration", int]:
    """The migration in ``file``, validated in full, and the stage asked for (default: the
    current one); a ``UsageError`` for a stage that is not one of 0..last."""
    from stagegate.errors import UsageError
    from stagegate.validation import load

    path = _os.fspath(file)
    if not _os.path.isfile(path):
        what = "is a folder" if _os.path.isdir(path) else "no such file"
        raise UsageError(
            f"{path}: {what}; give the path of the migration file, e.g. "
            f"stagegate.flags({_os.path.join(path, 'migration.yaml') if what == 'is a folder' else 'ci/migration.yaml'!r})."
        )
    migration = load(path)
    if stage is None:
        return migration, migration.stage
    if isinstance(stage, bool) or not isinstance(stage, int):
        raise UsageError(f"stage must be a whole number 0..{migration.last}, not {stage!r}.")
    if not 0 <= stage <= migration.last:
        raise UsageError(
            f"stage {stage} does not exist; {migration.file} has stages 0..{migration.last}."
        )
    return migration, stage


def flags(file: _PathLike = "migration.yaml", stage: int | None = None) -> dict[str, bool]:
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

    migration, at = _load(file, stage)
    return flag_values(migration, at)


def plan(file: _PathLike = "migration.yaml", stage: int | None = None) -> dict[str, _typing.Any]:
    """What is active at ``stage`` (default: the current one): the object ``stagegate plan
    --format json`` prints, with at least ``stage``, ``flags`` (name -> bool) and
    ``producers``, ``consumers``, ``releases``. Errors as for ``flags``."""
    from stagegate.engine.resolve import resolve
    from stagegate.report.plans import plan_json

    migration, at = _load(file, stage)
    return plan_json(resolve(migration, at))


def matrix(
    producer: str, file: _PathLike = "migration.yaml", stage: int | None = None
) -> dict[str, list[dict[str, str]]]:
    """The build rows of ``producer`` at ``stage`` (default: the current one) as a GitHub
    ``strategy.matrix``: ``{"include": [{axis: value, ...}, ...]}``, no rows when it is
    inactive there; what ``stagegate matrix PRODUCER --format json`` prints. An unknown
    producer is a ``StagegateError`` whose message suggests the closest declared one.
    Errors as for ``flags``."""
    from stagegate.ci.ciflags import matrix as rows

    migration, at = _load(file, stage)
    return rows(migration, producer, at)
