"""Shared argument handling of the consumer checks."""

from __future__ import annotations

from stagegate.errors import Problem
from stagegate.model import Check, Migration
from stagegate.words import suggest

ARGS = {
    "consumer": {
        "type": "string",
        "minLength": 1,
        "description": "Only this consumer (default: all).",
    }
}


def validate(migration: Migration, check: Check) -> list[Problem]:
    name = check.args.get("consumer")
    if name is not None and name not in migration.consumers:
        hint = suggest(name, migration.consumers)
        return [
            Problem(check.loc, f"{check.kind}: unknown consumer {name!r}{hint or '; check its id'}")
        ]
    return []
