"""Assignments to bash indexed arrays: ``A=(WORDS)``, ``A+=(WORDS)``, ``A[I]=V`` and
``A[I]+=V``, computed as bash does on known values (their expansions are in
``ci.shell.words``). The words between the parentheses are expanded as a command's
are: unquoted values split, a file pattern kept as one (``Glob``). Where the array it
changes is not known, or an index is not known, the array is unknown, saying why."""

from __future__ import annotations

from stagegate.ci.budget import MAX_VALUE
from stagegate.ci.shell import arith, words
from stagegate.ci.shell.nodes import Assign, Lit, Word
from stagegate.ci.shell.values import Array, Failed, Glob, known, size
from stagegate.model.ghexpr import Unknown, Value, concat, unknowns


def assigned(assign: Assign, ctx: words.Context) -> Value:
    """The array's value after ``assign`` (which has ``elements`` or an ``index``)."""
    name = assign.name
    current = ctx.array(name)
    written = f"${{{name}[@]}}"
    if assign.elements is not None:
        values: list[Value] = []
        for word in assign.elements:
            found = words.fields(word, ctx)
            if _splits(word) and any(not isinstance(v, str) for v in found):
                return Unknown(
                    written,
                    f"how many elements {name} has is not known: {word.source} at {ctx.where()} "
                    f"may split into several words ({_why(found)})",
                )
            values += found
        ctx.charge(len(values))
        if not assign.append:
            return _bounded(Array(()).then(values), written, ctx)
        if isinstance(current, Unknown):
            return current
        return _bounded(_as_array(current).then(values), written, ctx)
    assert assign.index is not None and assign.value is not None
    if isinstance(current, Unknown):
        return current
    array = _as_array(current)
    pattern = next((v for v in array.values() if isinstance(v, Glob)), None)
    if pattern is not None:
        return Unknown(
            written,
            f"{name}[{assign.index}] is assigned at {ctx.where()}, where {name} holds {pattern}, "
            "a pattern whose files stagegate does not know (which element is which)",
        )
    try:
        index = arith.evaluate(assign.index, lambda n: known(ctx.lookup(n)).text, _no_write)
    except (arith.Failed, Failed) as exc:
        return Unknown(
            written, f"{name}[{assign.index}] is assigned at {ctx.where()}: its index: {exc}"
        )
    if index < 0:
        index += array.items[-1][0] + 1 if array.items else 0
        if index < 0:
            return Unknown(
                written,
                f"{name}[{assign.index}] at {ctx.where()}: a negative index before the first element (bash fails)",
            )
    value = words.expand(assign.value, ctx)
    if assign.append:
        value = concat([array.get(index) or "", value])
    return _bounded(array.put(index, value), written, ctx)


def _splits(word: Word) -> bool:
    """Whether the word has an unquoted expansion (its value is split at blanks)."""
    return any(not isinstance(p, Lit) and not getattr(p, "quoted", False) for p in word.parts)


def _why(found: list[Value]) -> str:
    first = next((u for v in found for u in unknowns(v)), None)
    return f"{first.expression}: {first.reason}" if first is not None else "a value not known"


def _as_array(current: Value) -> Array:
    if isinstance(current, Array):
        return current
    return Array(()) if current is None else Array(((0, current),))


def _bounded(array: Array, written: str, ctx: words.Context) -> Value:
    """The array, where its elements written with a blank between them (``"${A[*]}"``)
    are at most MAX_VALUE characters long."""
    if sum(size(v) + 1 for v in array.values()) > MAX_VALUE + 1:
        return ctx.too_long(written)
    return array


def _no_write(name: str, value: int) -> None:
    raise Failed(f"an assignment to {name} inside an index")
