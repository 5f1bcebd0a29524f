"""What the loader is handed besides the files: the rules of the modules that read the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stagegate.errors import Problem
from stagegate.load.yamlsrc import Document
from stagegate.model import (
    Migration,
)
from stagegate.records import record


@record(kw_only=True)
class Located:
    """The migration's files as read: the located data of the migration file and of each
    stage file (in stage order), for a validator to point at the value at fault."""

    migration: Document
    stages: tuple[Document, ...]


Validator = Callable[[Migration, Located], list[Problem]]
"""A meaning check the loader is handed: the problems of a built migration."""


@record(kw_only=True)
class Rules:
    """What the loader checks beyond its own schemas and meaning checks, handed to it.

    They belong to the modules that read the model (the check kinds, the audit, CI's
    flags), which import the loader: handed in (by ``validation``), they are checked
    without the loader importing any of them. The validation cache is keyed by
    stagegate's own modules, not by the rules: every load passes ``validation.RULES``."""

    check_schema: Callable[[], dict[str, Any]]
    """The JSON Schema of one check, each kind's arguments: ``$defs.check`` of both files."""
    validators: tuple[Validator, ...] = ()
    """Run on input not known valid, in order; a validation-cache hit skips them."""
    uncached: tuple[Validator, ...] = ()
    """Run instead on a cache hit: what they check is more than the files' bytes."""
