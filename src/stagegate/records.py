"""Small immutable records: the part of ``dataclasses`` stagegate uses, made cheap to import.

``dataclasses`` writes each class's ``__init__``, ``__eq__``, ``__hash__`` and friends
as source code and ``exec``s it at import time, about 0.8 ms a class. stagegate runs
in pre-commit hooks and on every pull request, and declares a few dozen record types
on its start-up path, so records here get their methods as closures over their field
names (no source written, nothing ``exec``ed at import): slot setters for ``__init__``,
one ``attrgetter`` for equality, hashing and order. They are the one record style of
the package, the glob engine's cache keys included. A type built more than
``COMPILE_AFTER`` times in a process (a reading builds its values, locations and sites
tens of thousands of times) then gets an ``__init__`` written for its fields, twice as
fast as the closure; start-up builds too few of any to pay for one.
``typing.dataclass_transform`` tells type checkers they behave like frozen dataclasses.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

_MISSING: Any = object()
T = TypeVar("T")


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a record."""


class _Field:
    __slots__ = ("compare", "default", "factory")

    def __init__(self, default: Any, factory: Any, compare: bool) -> None:
        self.default = default
        self.factory = factory
        self.compare = compare


def field(*, default: Any = _MISSING, default_factory: Any = _MISSING, compare: bool = True) -> Any:
    """A field with a default factory, or one left out of equality and hashing."""
    return _Field(default, default_factory, compare)


GENERATED = "<stagegate.records>"
"""The file name the ``__init__`` written for a busy record type is compiled under."""
COMPILE_AFTER = 256
"""Constructions of a record type through the closure ``__init__`` after which the type
gets one written for its fields (``_compiled_init``): the hot types of a reading (a
value, a location, a site) are built tens of thousands of times, and the written one
takes half the time; a command that builds few (start-up) compiles nothing."""


def _fast_init(cls: type[Any]) -> Callable[..., None]:
    """``__init__`` for ``cls``: every field given in order is stored through its slot's
    own setter; keywords and defaults take a second loop over the fields not given in
    order, through the same setters. After ``COMPILE_AFTER`` constructions the class
    gets ``_compiled_init``'s (the same fields, defaults and errors)."""
    spec = cls.__record_fields__
    setters = tuple(getattr(cls, name).__set__ for name, *_ in spec)
    rest = tuple(
        (name, store, default, factory)
        for (name, default, factory, _compare), store in zip(spec, setters, strict=True)
    )
    count = len(setters)
    title = cls.__name__
    built = 0

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        if built == COMPILE_AFTER:
            compiled = _compiled_init(title, spec, setters)
            if compiled is not None:
                cls.__init__ = compiled
        given = len(args)
        if given == count and not kwargs:
            for store, value in zip(setters, args):  # noqa: B905 (lengths checked; a keyword costs)
                store(self, value)
            return
        if given > count:
            raise TypeError(f"{title}() takes {count} fields, got {given}")
        for store, value in zip(setters, args):  # noqa: B905 (the first ``given`` fields)
            store(self, value)
        for name, store, default, factory in rest[given:] if given else rest:
            value = kwargs.pop(name, _MISSING) if kwargs else _MISSING
            if value is _MISSING:
                if default is not _MISSING:
                    value = default
                elif factory is not _MISSING:
                    value = factory()
                else:
                    raise TypeError(f"{title}() missing field {name!r}")
            store(self, value)
        if kwargs:
            raise TypeError(f"{title}() got unknown fields {sorted(kwargs)}")

    return init


def _compiled_init(
    title: str, spec: tuple[tuple[str, Any, Any, bool], ...], setters: tuple[Any, ...]
) -> Callable[..., None] | None:
    """The ``__init__`` ``_fast_init``'s stands for, written for the fields of one record
    type and compiled (the fields as parameters, stored through the same slot setters;
    the same errors for a missing field, unknown fields, too many values); None where a
    field's name is not a plain parameter name here."""
    names = [name for name, *_ in spec]
    if any(not name.isidentifier() or name.startswith("_") or name == "self" for name in names):
        return None
    scope: dict[str, Any] = {"_M": _MISSING, "_title": title, "_count": len(names)}
    params, checks, stores = [], [], []
    for i, (name, default, factory, _compare) in enumerate(spec):
        scope[f"_s{i}"] = setters[i]
        if default is not _MISSING:
            scope[f"_d{i}"] = default
            params.append(f"{name}=_d{i}")
        else:
            params.append(f"{name}=_M")
            if factory is not _MISSING:
                scope[f"_f{i}"] = factory
                checks.append(f"    if {name} is _M:\n        {name} = _f{i}()")
            else:
                checks.append(
                    f"    if {name} is _M:\n"
                    f'        raise TypeError(f"{{_title}}() missing field {name!r}")'
                )
        stores.append(f"    _s{i}(self, {name})")
    source = (
        f"def __init__(self, {''.join(f'{param}, ' for param in params)}*_rest, **_kw):\n"
        "    if _rest:\n"
        "        raise TypeError(f'{_title}() takes {_count} fields, got {_count + len(_rest)}')\n"
        + "".join(f"{check}\n" for check in checks)
        + "    if _kw:\n"
        "        raise TypeError(f'{_title}() got unknown fields {sorted(_kw)}')\n"
        + "\n".join(stores)
        + "\n"
    )
    # text made here of the record's own field names, nothing else; compiled under a
    # name of its own, which tests/drift/test_no_execution.py lets through
    exec(compile(source, GENERATED, "exec"), scope)
    made: Callable[..., None] = scope["__init__"]
    return made


def _comparisons(names: tuple[str, ...], order: bool) -> dict[str, Any]:
    """``__eq__`` and ``__hash__`` (and the order) on the values of ``names``, read at C
    speed by one ``attrgetter``: records are the glob engine's dictionary keys."""
    key: Callable[[Any], Any] = attrgetter(*names) if names else lambda obj: ()
    # one name: the bare value stands for the 1-tuple (same equality and order)

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine, theirs = key(self), key(other)
        return mine is theirs or mine == theirs

    def __hash__(self: Any) -> int:
        return hash(key(self))

    methods: dict[str, Any] = {"__eq__": __eq__, "__hash__": __hash__}
    if order:
        for name, compare in (
            ("__lt__", operator.lt),
            ("__le__", operator.le),
            ("__gt__", operator.gt),
            ("__ge__", operator.ge),
        ):
            methods[name] = _ordering(key, compare)
    return methods


def _ordering(
    key: Callable[[Any], Any], compare: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return compare(key(self), key(other))

    return method


def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{name}={getattr(self, name)!r}" for name, *_ in type(self).__record_fields__
    )
    return f"{type(self).__name__}({shown})"


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r} of a {type(self).__name__}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r} of a {type(self).__name__}")


def _reduce(self: Any) -> tuple[Any, tuple[Any, ...]]:
    return (type(self), tuple(getattr(self, name) for name, *_ in type(self).__record_fields__))


def _build(cls: type[T], eq: bool, order: bool) -> type[T]:
    namespace = dict(cls.__dict__)
    annotations = namespace.get("__annotations__", {})
    inherited = getattr(cls, "__record_fields__", ())  # a record base's fields come first
    spec = list(inherited)
    names = [name for name, *_ in spec]
    for name in annotations:
        value = namespace.pop(name, _MISSING)
        if isinstance(value, _Field):
            entry = (name, value.default, value.factory, value.compare)
        else:
            entry = (name, value, _MISSING, True)
        if name in names:  # a new default for an inherited field, in its place
            spec[names.index(name)] = entry
        else:
            spec.append(entry)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(name for name in annotations if name not in names)
    namespace["__record_fields__"] = tuple(spec)
    namespace["__record_names__"] = tuple(name for name, *_ in spec)
    namespace["__record_name_set__"] = frozenset(name for name, *_ in spec)
    namespace.setdefault("__repr__", _repr)  # a class may show itself its own way
    namespace.update(
        __setattr__=_setattr,
        __delattr__=_delattr,
        __reduce__=_reduce,
    )
    if eq:
        namespace.update(_comparisons(tuple(n for n, _d, _f, compare in spec if compare), order))
    elif inherited:  # identity again, whatever the base compares
        namespace.setdefault("__eq__", object.__eq__)
        namespace.setdefault("__hash__", object.__hash__)
    made = type(cls.__name__, cls.__bases__, namespace)
    made.__init__ = _fast_init(made)  # type: ignore[misc]  # it needs the class's slots
    return made


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(
    *, kw_only: bool = False, eq: bool = True, order: bool = False
) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(
    cls: type[T] | None = None, /, *, kw_only: bool = False, eq: bool = True, order: bool = False
) -> type[T] | Callable[[type[T]], type[T]]:
    """Make ``cls`` a frozen record of its annotated fields (slots, eq, hash, repr).

    A record may extend another record: the base's fields come first, and a field
    declared again keeps its place with its new default. ``kw_only`` is for type
    checkers (callers name every field); ``eq=False`` keeps identity equality and
    hashing; ``order=True`` sorts by the fields in order."""
    del kw_only  # enforced by the type checker only, as construction cost matters here

    def wrap(inner: type[T]) -> type[T]:
        return _build(inner, eq, order)

    return wrap(cls) if cls is not None else wrap


def replace(obj: T, **changes: Any) -> T:
    """A copy of ``obj`` with some fields changed (built from every field in order: the
    fast way into ``__init__``; readers copy their sites in every step of every row)."""
    cls = type(obj)
    names = cls.__record_names__  # type: ignore[attr-defined]
    if not changes.keys() <= cls.__record_name_set__:  # type: ignore[attr-defined]
        unknown = sorted(set(changes) - cls.__record_name_set__)  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__}() got unknown fields {unknown}")
    return cls(*[changes[name] if name in changes else getattr(obj, name) for name in names])


def field_names(cls: type[Any]) -> tuple[str, ...]:
    """The names of a record type's fields, in order."""
    return tuple(name for name, *_ in cls.__record_fields__)
