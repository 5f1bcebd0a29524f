"""GitHub's ``strategy.matrix``: the product of the lists, minus ``exclude``, with
``include`` merged (into product rows where it agrees on their keys, else added), in
GitHub's order; at most as many rows as GitHub runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stagegate.ci.files import as_list, invalid
from stagegate.ci.scopes import Scope
from stagegate.ci.transfers import MAX_MATRIX, MAX_MATRIX_PRODUCT
from stagegate.load.yamlsrc import Document
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Sym, Unknown, Value


def expand(
    doc: Document, path: DocPath, matrix: Mapping[str, Any], scope: Scope
) -> list[dict[str, Any]] | Unknown:
    """GitHub's matrix: the product of the lists, minus `exclude`, with `include` merged."""

    def evaluated(key: str, what: str, bind: str) -> Value:
        """``matrix[key]`` evaluated; an Unknown saying where, if it is generated."""
        raw = matrix.get(key)
        value = scope.evaluate(raw, (*path, key)) if isinstance(raw, str) else raw
        if isinstance(value, Unknown | Sym):
            loc = doc.loc((*path, key))
            return Unknown(
                str(raw).strip(), f"{what} is generated ({loc.file}:{loc.line}); bind {bind}"
            )
        return value

    axes: list[tuple[str, list[Any]]] = []
    product = 1
    for key in matrix:
        if key in ("include", "exclude"):
            continue
        value = evaluated(key, f"matrix.{key}", f"matrix.{key}")
        if isinstance(value, Unknown):
            return value
        values = value if isinstance(value, list) else [value]
        product *= max(len(values), 1)
        if product > MAX_MATRIX_PRODUCT:
            raise invalid(
                doc.loc((*path, key)),
                f"this matrix has more than {MAX_MATRIX_PRODUCT:,} combinations; GitHub runs "
                f"at most {MAX_MATRIX} jobs per matrix: use fewer values.",
            )
        axes.append((key, values))
    rows: list[dict[str, Any]] = [{}]
    for key, values in axes:
        rows = [{**row, key: v} for row in rows for v in values]
    if not axes:
        rows = []
    extras: list[Any] = []
    for key in ("exclude", "include"):
        value = evaluated(key, f"matrix {key}", "the matrix.KEY a name uses")
        if isinstance(value, Unknown):
            return value
        entries = as_list(doc, (*path, key), value, f"matrix {key}")
        if key == "exclude":
            for entry in entries:
                if isinstance(entry, dict):
                    rows = [r for r in rows if not _partial_match(r, entry)]
        else:
            extras = entries
    originals = {k for k, _ in axes}
    product_rows = list(rows)  # includes merge into these only, never into added rows
    for entry in extras:
        if not isinstance(entry, dict):
            raise invalid(doc.loc((*path, "include")), "each matrix include must be a mapping.")
        merged = False
        for row in product_rows:
            if all(_same(row.get(k), v) for k, v in entry.items() if k in originals):
                row.update({k: v for k, v in entry.items() if k not in originals or k not in row})
                merged = True
        if not merged:
            rows.append(dict(entry))
    if len(rows) > MAX_MATRIX:
        raise invalid(
            doc.loc(path),
            f"this matrix makes {len(rows):,} jobs; GitHub runs at most {MAX_MATRIX} per matrix: "
            "use fewer values.",
        )
    return rows or [{}]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return bool(a == b)
    return ghexpr.to_text(a) == ghexpr.to_text(b) if a is not None else b is None


def _partial_match(row: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    for key, value in entry.items():
        if key not in row:
            return False
        have = row[key]
        if isinstance(value, dict) and isinstance(have, dict):
            if not _partial_match(have, value):
                return False
        elif not _same(have, value):
            return False
    return True
