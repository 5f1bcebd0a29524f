"""docs/file-format.md is the reference for every key: each key the JSON Schemas that
`stagegate schema` prints name (at any depth, the check kinds' arguments included) is
written there as inline code."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conftest import REPO, Result

Sg = Callable[..., Result]
DOC = REPO / "docs" / "file-format.md"


def keys(node: Any, path: str = "$") -> Iterator[tuple[str, str]]:
    """(where, key) for every property a schema declares, under its combinators too."""
    if isinstance(node, list):
        for item in node:
            yield from keys(item, path)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.get("properties", {}).items():
        yield path, key
        yield from keys(value, f"{path}.{key}")
    for word in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "then", "else"):
        if word in node:
            yield from keys(node[word], path)
    for name, value in node.get("$defs", {}).items():
        yield from keys(value, f"$defs.{name}")


def missing(schema: Any, doc: str) -> list[str]:
    """The keys of ``schema`` that ``doc`` does not write as inline code."""
    found = sorted(set(keys(schema)))
    return [f"{where}: {key}" for where, key in found if f"`{key}`" not in doc]


@pytest.mark.parametrize(
    ("args", "least"), [((), 60), (("--stage-file",), 15)], ids=["migration", "stage-file"]
)
def test_every_key_of_the_schema_is_in_file_format_md(
    sg: Sg, args: tuple[str, ...], least: int
) -> None:
    result = sg("schema", *args)
    assert result.code == 0, result.output
    schema = json.loads(result.out)
    assert len(set(keys(schema))) >= least
    left_out = missing(schema, DOC.read_text(encoding="utf-8"))
    assert left_out == [], "keys docs/file-format.md does not name:\n" + "\n".join(left_out)


def test_a_key_left_out_of_the_reference_is_named_with_where_it_is() -> None:
    schema = {
        "properties": {"workflows": {"properties": {"actions": {}}}},
        "$defs": {"artifact": {"anyOf": [{"type": "string"}, {"properties": {"rows": {}}}]}},
    }
    doc = "`workflows` and `rows`; actions are not written as code here"
    assert missing(schema, doc) == ["$.workflows: actions"]
