"""A migration loaded and validated in full: the loader handed the rules of the modules
that read the model.

``load.py`` knows the files, the schemas and what the files' declarations mean. What
the check kinds make of their arguments, the audit of its references, CI of flag
names, and the checks of the stages' planned release changes belong to those modules;
``RULES`` hands them to the loader, so that data flows one way (the loader imports none
of them) and each is imported only when a load runs it. Every command loads through
``load`` here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stagegate.errors import Problem
from stagegate.load import loader
from stagegate.load import schema as schemas
from stagegate.load.rules import Located, Rules
from stagegate.load.sources import Source
from stagegate.model import Migration


def _check_schema() -> dict[str, Any]:
    from stagegate.checks import check_schema

    return check_schema()


def _check_arguments(migration: Migration, _files: Located) -> list[Problem]:
    from stagegate.checks import argument_problems

    return argument_problems(migration)


def _release_changes(migration: Migration, files: Located) -> list[Problem]:
    from stagegate.checks._release_changes import problems

    return problems(migration, files)


def _audit_entries(migration: Migration, _files: Located) -> list[Problem]:
    from stagegate.audit import problems

    return problems(migration)


def _ci_names(migration: Migration, files: Located) -> list[Problem]:
    from stagegate.ci.ciflags import problems

    return problems(migration, files.migration)


def _links_on_disk(migration: Migration, _files: Located) -> list[Problem]:
    from stagegate.checks import argument_problems

    return argument_problems(migration, uncached_only=True)


RULES = Rules(
    check_schema=_check_schema,
    validators=(_check_arguments, _release_changes, _audit_entries, _ci_names),
    uncached=(_links_on_disk,),
)
"""Everything ``stagegate validate`` checks beyond the loader's own meaning checks."""


def load(path: str | Path = "migration.yaml", *, source: Source | None = None) -> Migration:
    """Load and fully validate a migration from the work tree (or another source)."""
    return loader.load(path, source=source, rules=RULES)


def load_at(file: str, source: Source, label: str) -> Migration | None:
    """The migration ``file`` at a commit (``source``, a ``git.objects.GitSource``); None
    where the commit has no such file. ``label`` names the commit in errors ("the base")."""
    from stagegate.errors import InvalidInput, UsageError

    commit = str(getattr(source, "commit", ""))[:12]
    try:
        source.read(Path(file).name)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        return load(file, source=source)
    except InvalidInput as error:
        raise UsageError(f"{file} at {label} ({commit}) is not valid:\n{error.message}") from None
    except UsageError as error:
        raise UsageError(f"at {label} ({commit}): {error.message}") from None


def schema(kind: str) -> dict[str, Any]:
    """The full JSON Schema of ``migration`` or ``stage`` files, check kinds included."""
    return schemas.schema(kind, RULES)
