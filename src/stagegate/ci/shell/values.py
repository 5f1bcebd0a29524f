"""The values the shell reader computes with, beyond ``ghexpr``'s: the run's own files
and id (``Marker``), a word the shell expands to file names (``Glob``), and known
text with the matrix keys it was made from (``known``, for ``init``'s templates)."""

from __future__ import annotations

import posixpath

from stagegate.ci.transfers import ENV_FILE, OUT_FILE, THIS_RUN
from stagegate.model.ghexpr import Ph, Sym, Tagged, Unknown, Value
from stagegate.records import record


class Marker(str):
    """``$GITHUB_ENV``, ``$GITHUB_OUTPUT``, ``$GITHUB_RUN_ID``: what only the runner's
    own variables are (text spelled alike in a script is text, never one of them)."""

    __slots__ = ()


def marker(value: Value, which: str) -> bool:
    """Whether ``value`` is the runner's ``which`` (ENV_FILE, OUT_FILE or THIS_RUN)."""
    return isinstance(value, Marker) and str(value) == which


ENV = Marker(ENV_FILE)
OUTPUT = Marker(OUT_FILE)
RUN = Marker(THIS_RUN)
SPECIALS = {ENV_FILE: ENV, OUT_FILE: OUTPUT, THIS_RUN: RUN}


WORKSPACE = "$GITHUB_WORKSPACE"
"""The workspace's absolute path, which stagegate does not know, as the text every path
reader takes for it (``publish.norm``): what ``$GITHUB_WORKSPACE`` is, and what ``pwd``,
``realpath`` and ``cygpath`` print for a folder in it (``$GITHUB_WORKSPACE/dist``), in any
spelling the runner writes it (``/d/a/r/r``, ``D:\\a\\r\\r``)."""


def opaque(text: str) -> bool:
    """Whether ``text`` holds the workspace's path (``WORKSPACE``), which stagegate does
    not know: such a text is carried and joined, but what a text operation makes of it
    (a length, a trim, ``tr``, a pattern match) is not computed."""
    return WORKSPACE in text


ON_WORKSPACE = "a text operation on the workspace's path, which stagegate does not know"


def in_workspace(path: str) -> str | None:
    """The folder ``path`` is from the workspace ("" the workspace itself), where it is
    ``WORKSPACE`` or under it (None: it is not)."""
    if path == WORKSPACE:
        return ""
    if path.startswith(WORKSPACE + "/"):
        return path[len(WORKSPACE) + 1 :]
    return None


def absolute(folder: str) -> str:
    """The absolute path of a folder from the workspace ("" or "." the workspace)."""
    rel = posixpath.normpath(folder) if folder else "."
    return WORKSPACE if rel == "." else f"{WORKSPACE}/{rel}"


class Glob(str):
    """An unquoted word with ``*``, ``?`` or ``[``: the shell expands it to the names
    of files, which stagegate does not know; it stands for them as a pattern."""

    __slots__ = ()


class Bounded(str):
    """Text jq or yq printed (JSON a matrix is made of): bounded by ghexpr.MAX_JSON,
    what ``fromJSON`` reads, rather than by the shell's MAX_VALUE."""

    __slots__ = ()


class Failed(Exception):
    """Why a value is not computed (the end of its unknown value's reason)."""


class Text:
    """Known text and the matrix keys it was made from (``init``'s tags)."""

    __slots__ = ("keys", "text")

    def __init__(self, text: str, keys: frozenset[str] = frozenset()) -> None:
        self.text, self.keys = text, keys


def known(value: Value) -> Text:
    """A value as known text (Failed if it is not): each placeholder must carry the
    row's value (``init``'s tags), which the text remembers by its key."""
    if isinstance(value, Tagged):
        return Text(str(value), frozenset({value.axis}))
    if isinstance(value, Glob):
        raise Failed(f"it reads {value}, which the shell expands to the names of files")
    if isinstance(value, str):
        return Text(value)
    if isinstance(value, Unknown):
        raise Failed(f"it reads {value.expression}, which stagegate does not know: {value.reason}")
    if isinstance(value, Sym):
        texts: list[str] = []
        keys: set[str] = set()
        for part in value.parts:
            if isinstance(part, Ph) and part.value is not None:
                texts.append(part.value)
                keys.add(part.axis)
            elif isinstance(part, Ph):
                raise Failed(f"it reads {{{part.axis}}}, which stands for many values")
            elif isinstance(part, Unknown):
                raise Failed(
                    f"it reads {part.expression}, which stagegate does not know: {part.reason}"
                )
            else:
                texts.append(part)
        return Text("".join(texts), frozenset(keys))
    raise Failed("it reads a value that is not text")


def result(text: str, keys: frozenset[str], op: str) -> Value:
    """What a command or expansion made of tagged input is tagged with a key of its own
    (``KEY-op``), so that ``init`` can write its rows as one template axis."""
    if not keys:
        return text
    return Tagged(text, "+".join(sorted(keys)) + "-" + op)


def size(value: Value) -> int:
    """How many characters a value is written with (its unknown pieces as written)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Sym):
        return sum(size(p) for p in value.parts)
    if isinstance(value, Unknown):
        return len(value.expression)
    if isinstance(value, Ph):
        return len(value.axis) + 2
    return 8


@record
class Array:
    """A bash indexed array: its elements by index, ascending (``a[5]=x`` leaves the
    ones before unset)."""

    items: tuple[tuple[int, Value], ...]

    def values(self) -> tuple[Value, ...]:
        return tuple(value for _, value in self.items)

    def get(self, index: int) -> Value | None:
        """Element ``index`` (None: unset); negative ones count from after the last."""
        if index < 0 and self.items:
            index += self.items[-1][0] + 1
        for at, value in self.items:
            if at == index:
                return value
        return None

    def put(self, index: int, value: Value) -> Array:
        kept = tuple(item for item in self.items if item[0] != index)
        return Array(tuple(sorted((*kept, (index, value)), key=lambda item: item[0])))

    def then(self, values: list[Value]) -> Array:
        """With ``values`` appended after the last element (``a+=(...)``)."""
        start = self.items[-1][0] + 1 if self.items else 0
        return Array((*self.items, *((start + i, v) for i, v in enumerate(values))))
