"""The contexts a dispatched workflow is read in: one per combination of the values its
finite `workflow_dispatch` inputs offer.

A `type: choice` input may take each of its `options` (in the order written; `default`
is one of them) and a `type: boolean` input `true` or `false`: each is a finite axis,
read once per value like the rows of a matrix. Any other input (`string`, `number`,
`environment`) is chosen freely and stays unresolved unless ``workflows.bind`` binds it.
An input bound in ``workflows.bind`` (bare ``inputs.NAME`` or for the file or one of its
jobs) is not expanded: the bind says what it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import product
from typing import Any

from stagegate.model.ghexpr import Unknown, Value

MAX_DISPATCH_CONTEXTS = 64
"""Most contexts one workflow's dispatch inputs are expanded into; beyond, they stay open."""

Context = tuple[tuple[str, str], ...]
"""The values the dispatcher chose: (input, value) pairs, in the order the inputs are declared."""


def dispatch_inputs(data: Mapping[str, Any]) -> dict[str, Any]:
    """The `on.workflow_dispatch.inputs` of a workflow ({} if it has none)."""
    on = data.get("on")
    dispatch = on.get("workflow_dispatch") if isinstance(on, dict) else None
    inputs = dispatch.get("inputs") if isinstance(dispatch, dict) else None
    return inputs if isinstance(inputs, dict) else {}


def input_values(spec: Any) -> tuple[str, ...] | None:
    """The values a dispatch input may take, as text (None: any value, an open input)."""
    if not isinstance(spec, dict):
        return None
    kind = spec.get("type")
    if kind == "boolean":
        return ("true", "false")
    if kind == "choice":
        options = spec.get("options")
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, str | int | float) and not isinstance(o, bool) for o in options)
        ):
            return tuple(dict.fromkeys(str(o) for o in options))
    return None


def finite_inputs(data: Mapping[str, Any], bound: set[str]) -> dict[str, tuple[str, ...]]:
    """The dispatch inputs read as finite axes: choice and boolean inputs not in ``bound``
    (lower-case names of inputs a bind says the value of)."""
    out: dict[str, tuple[str, ...]] = {}
    for name, spec in dispatch_inputs(data).items():
        values = input_values(spec)
        if values is not None and str(name).lower() not in bound:
            out[str(name)] = values
    return out


def contexts(
    rel: str, data: Mapping[str, Any], bound: set[str]
) -> Iterator[tuple[Context, Mapping[str, Value] | Unknown]]:
    """Each context of a dispatched workflow with the `inputs` it sees; none for a workflow
    without finite dispatch inputs (or with more than MAX_DISPATCH_CONTEXTS combinations)."""
    finite = finite_inputs(data, bound)
    if not finite:
        return
    count = 1
    for values in finite.values():
        count *= len(values)
    if count > MAX_DISPATCH_CONTEXTS:
        return
    declared = dispatch_inputs(data)
    names = list(finite)
    for combo in product(*(finite[n] for n in names)):
        chosen = dict(zip(names, combo, strict=True))
        inputs: dict[str, Value] = {}
        for name, spec in declared.items():
            name = str(name)
            if name in chosen:
                text = chosen[name]
                kind = spec.get("type") if isinstance(spec, dict) else None
                inputs[name] = (text == "true") if kind == "boolean" else text
            else:
                inputs[name] = Unknown(
                    f"inputs.{name}",
                    f"{rel} is started by workflow_dispatch, whose input {name!r} is chosen "
                    f"then; bind inputs.{name}",
                )
        yield tuple(chosen.items()), inputs


def matches(want: Mapping[str, str], contexts_of: tuple[Context, ...]) -> bool:
    """Whether a transfer read in ``contexts_of`` runs when the dispatcher chooses ``want``
    (a transfer read outside any dispatch context runs whatever is chosen)."""
    if not want or not contexts_of:
        return True
    return any(all(dict(ctx).get(k) == v for k, v in want.items()) for ctx in contexts_of)


def problems(
    dispatch: Mapping[str, str],
    locs: Mapping[str, Any],
    roots: Sequence[str],
    offered: Mapping[str, Mapping[str, tuple[str, ...]]],
) -> Iterator[tuple[str, Any, str]]:
    """What is wrong with a release's `dispatch` values against the workflows that start
    its jobs (``roots``; ``offered``: each workflow's inputs read as finite axes): for each
    value no such workflow offers, (input, its loc, why)."""
    shown = ", ".join(roots[:3]) + (f" and {len(roots) - 3} more" if len(roots) > 3 else "")
    for name, value in dispatch.items():
        having = [(rel, offered[rel][name]) for rel in roots if name in offered.get(rel, {})]
        if not having:
            yield (
                name,
                locs.get(name),
                f"dispatch {name}: {value!r}: no workflow that starts its jobs "
                f"({shown or 'none read'}) is dispatched with a choice or boolean input "
                f"{name!r} that stagegate reads as an axis (an input bound in workflows.bind "
                "is not): remove the dispatch entry, fix its name, or drop the bind.",
            )
        elif not any(value in values for _, values in having):
            rel, values = having[0]
            yield (
                name,
                locs.get(name),
                f"dispatch {name}: {value!r} is not among the options of {rel}'s input "
                f"{name!r} ({', '.join(values)}): write one of them.",
            )
