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

from collections.abc import Iterable, Iterator, Mapping, Sequence
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


def apart(a: Iterable[tuple[str, str]], b: Iterable[tuple[str, str]]) -> bool:
    """Whether two sets of dispatch values name an input with different values (no
    dispatch starts both)."""
    one, two = dict(a), dict(b)
    return any(one[k] != two[k] for k in one.keys() & two.keys())


def split(
    members: Sequence[str],
    texts: Mapping[str, Sequence[tuple[str, Any]]],
    offered: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> list[tuple[Context, list[str], list[str]]]:
    """The release jobs ``members`` (``texts``: each job's (select text, transfer) pairs)
    split by the dispatch inputs their selections differ by: (values, jobs, jobs merged
    in) per release, in the order of the inputs' options.

    An input splits where the texts read with one of its values differ from those read
    with another. A job read outside any dispatch context (a workflow of its own) joins the
    release whose texts are the same as its own (it publishes the same names for the same
    tags), else stands alone. ``offered``: each workflow's finite inputs and their values
    (``Reading.dispatch``), whose order the releases follow."""
    dispatched = [(text, t) for job in members for text, t in texts[job] if t.dispatch]
    values: dict[str, list[str]] = {}
    for inputs in (offered or {}).values():  # the options' order, where the workflow says it
        for k, options in inputs.items():
            values.setdefault(k, [])
            values[k] += [v for v in options if v not in values[k]]
    for _, t in dispatched:
        for ctx in t.dispatch:
            for k, v in ctx:
                if v not in values.setdefault(k, []):
                    values[k].append(v)
    splitting = []
    present = {k for _, t in dispatched for ctx in t.dispatch for k, _ in ctx}
    for k, options in values.items():
        if k not in present:
            continue
        seen = {
            frozenset(text for text, t in dispatched if matches({k: v}, t.dispatch))
            for v in options
        }
        if len(seen) > 1:
            splitting.append(k)
    if not splitting:
        return [((), list(members), [])]
    keys: list[Context] = []
    for _, t in dispatched:
        for ctx in t.dispatch:
            key = tuple((k, dict(ctx)[k]) for k in splitting if k in dict(ctx))
            if len(key) == len(splitting) and key not in keys:
                keys.append(key)
    keys.sort(key=lambda key: [values[k].index(v) for k, v in key])
    out: list[tuple[Context, list[str], list[str]]] = []
    for key in keys:
        jobs = [
            job
            for job in members
            if any(t.dispatch and matches(dict(key), t.dispatch) for _, t in texts[job])
        ]
        out.append((key, jobs, []))
    for job in members:
        if any(t.dispatch for _, t in texts[job]):
            continue
        own = {text for text, _ in texts[job]}
        into = next(
            (
                entry
                for entry in out
                if entry[0]
                and own
                == {
                    text
                    for j in entry[1]
                    for text, t in texts[j]
                    if t.dispatch and matches(dict(entry[0]), t.dispatch)
                }
            ),
            None,
        )
        if into is None:
            out.append(((), [job], []))
        else:
            into[1].append(job)
            into[2].append(job)
    return out
