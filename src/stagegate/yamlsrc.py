"""Read YAML into plain data plus the location of every value.

We build the data ourselves from the parser's event stream instead of using
``yaml.safe_load`` so that, in one iterative pass, we can:

* remember where each value (and each mapping key) starts, for error messages
  that name ``FILE:LINE:COL``;
* resolve plain scalars by the YAML 1.2 core schema: only ``true``/``false`` are
  booleans, so ids such as ``on``, ``no`` or ``yes`` stay strings, and dates stay
  strings;
* refuse duplicate keys (naming both lines), tags other than the core ones
  (``!!python/...`` is never constructed), and more than one document;
* bound nesting depth and alias expansion, so a billion-laughs file fails
  after reading its events instead of after exhausting memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from .errors import InvalidInput, Loc, Problem

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

Path = tuple[str | int, ...]

_NULL = frozenset({"~", "null", "Null", "NULL", ""})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
_FLOAT = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"


@cache
def _numbers() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Compiled only when a file is parsed, not on every start-up."""
    return re.compile(_INT), re.compile(_FLOAT)


_CORE = "tag:yaml.org,2002:"


class Document:
    """Plain data read from one YAML file, with where each part of it starts."""

    __slots__ = ("data", "file", "key_marks", "marks", "quoted")

    def __init__(
        self,
        file: str,
        data: Any = None,
        marks: dict[Path, tuple[int, int]] | None = None,
        key_marks: dict[Path, tuple[int, int]] | None = None,
        quoted: set[Path] | None = None,
    ) -> None:
        self.file = file
        self.data = data
        self.marks = marks if marks is not None else {}
        self.key_marks = key_marks if key_marks is not None else {}
        self.quoted = quoted if quoted is not None else set()

    def loc(self, path: Path) -> Loc:
        """Where the value at ``path`` starts; the nearest enclosing value if unknown."""
        path = tuple(path)
        while path not in self.marks and path:
            path = path[:-1]
        line, col = self.marks.get(path, (1, 1))
        return Loc(self.file, line, col)

    def key_loc(self, path: Path) -> Loc:
        """Where the key of the mapping entry at ``path`` starts (the value if no key)."""
        mark = self.key_marks.get(tuple(path))
        return Loc(self.file, *mark) if mark else self.loc(path)

    def text_loc(self, path: Path, offset: int) -> Loc:
        """The column of character ``offset`` inside a one-line scalar (for expressions)."""
        base = self.loc(path)
        quote = 1 if tuple(path) in self.quoted else 0
        return base.shifted(quote + max(offset, 0))


def json_path(path: Path) -> str:
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif len(part) > 60:  # a hostile key may be megabytes long: never echo it whole
            out += "[" + repr(part[:57]) + "...]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += f".{part}"
        else:
            out += "[" + repr(part) + "]"
    return out


def decode(raw: bytes, file: str) -> str:
    """UTF-8 text of a file, with a located error for anything else."""
    if len(raw) > MAX_BYTES:
        raise InvalidInput(
            [
                Problem(
                    Loc(file, 1, 1),
                    f"file is larger than {MAX_BYTES:,} bytes, the limit. "
                    "Split the migration or remove generated content.",
                )
            ]
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = len(before) - (before.rfind(b"\n") + 1) + 1
        raise InvalidInput(
            [
                Problem(
                    Loc(file, line, col),
                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8.",
                )
            ]
        ) from None


class _Frame:
    __slots__ = ("container", "key", "key_mark", "path", "seen", "weight")

    def __init__(self, container: dict[str, Any] | list[Any], path: Path) -> None:
        self.container = container
        self.path = path
        self.key: str | None = None
        self.key_mark: tuple[int, int] = (1, 1)
        self.seen: dict[str, int] = {}
        self.weight = 1


def _mark(event: Any) -> tuple[int, int]:
    return (event.start_mark.line + 1, event.start_mark.column + 1)


def parse(text: str, file: str) -> Document:
    """Compose one YAML document from ``text`` into plain data and locations."""
    import yaml

    try:  # the C parser is several times faster; fall back where libyaml is missing
        from yaml import CSafeLoader as loader
    except ImportError:  # pragma: no cover - depends on how PyYAML was built
        from yaml import SafeLoader as loader  # type: ignore[assignment]

    doc = Document(file)
    problems: list[Problem] = []

    def fail(mark: tuple[int, int], message: str) -> InvalidInput:
        problems.append(Problem(Loc(file, *mark), message))
        return InvalidInput(problems)

    stack: list[_Frame] = []
    anchors: dict[str, tuple[Any, int]] = {}
    pending_anchor: list[tuple[str, _Frame]] = []
    total = 0
    documents = 0
    root_set = False

    aliased = False

    def count(weight: int, mark: tuple[int, int]) -> None:
        nonlocal total
        total += weight
        if total > MAX_NODES:
            raise fail(
                mark,
                f"more than {MAX_NODES:,} values after expanding aliases; "
                "this looks like an alias bomb; write the values out or use fewer aliases."
                if aliased
                else f"more than {MAX_NODES:,} values, the limit for one file; "
                "split the migration or remove generated content.",
            )

    def place(value: Any, mark: tuple[int, int], weight: int, is_key_ok: bool) -> None:
        nonlocal root_set
        if not stack:
            doc.data = value
            doc.marks[()] = mark
            root_set = True
            return
        frame = stack[-1]
        frame.weight += weight
        if isinstance(frame.container, list):
            path = (*frame.path, len(frame.container))
            frame.container.append(value)
            doc.marks[path] = mark
            return
        if frame.key is None:
            if not is_key_ok:
                raise fail(
                    mark, "a mapping key must be a plain value (a name), not a list or mapping."
                )
            key = value
            if key in frame.seen:
                raise fail(
                    mark,
                    f"duplicate key {key[:60]!r} (first at line {frame.seen[key]}); "
                    "remove one of them.",
                )
            frame.seen[key] = mark[0]
            frame.key = key
            frame.key_mark = mark
            return
        path = (*frame.path, frame.key)
        frame.container[frame.key] = value
        doc.marks[path] = mark
        doc.key_marks[path] = frame.key_mark
        frame.key = None

    def child_path() -> Path:
        if not stack:
            return ()
        frame = stack[-1]
        if isinstance(frame.container, list):
            return (*frame.path, len(frame.container))
        return (*frame.path, frame.key if frame.key is not None else "?")

    try:
        events: Iterator[Any] = yaml.parse(text, Loader=loader)
        for event in events:
            kind = type(event).__name__
            if kind == "ScalarEvent":
                mark = _mark(event)
                is_key = (
                    bool(stack) and isinstance(stack[-1].container, dict) and stack[-1].key is None
                )
                if is_key:
                    value: Any = event.value
                    _check_tag(event.tag, ("str",), mark, fail)
                    if event.value in _NULL and not event.style and event.tag in (None, ""):
                        raise fail(
                            mark,
                            f"the key {event.value or '(empty)'!r} is YAML's null, not a name; "
                            "quote it if you mean the text, or remove the entry.",
                        )
                else:
                    value = _scalar(event, mark, fail)
                    if event.style in ("'", '"'):
                        doc.quoted.add(child_path())
                if event.anchor:
                    anchors[event.anchor] = (value, 1)
                count(1, mark)
                place(value, mark, 1, True)
            elif kind in ("MappingStartEvent", "SequenceStartEvent"):
                mark = _mark(event)
                if len(stack) >= MAX_DEPTH:
                    raise fail(
                        mark, f"nested more than {MAX_DEPTH} levels deep; flatten the structure."
                    )
                if stack and isinstance(stack[-1].container, dict) and stack[-1].key is None:
                    raise fail(
                        mark, "a mapping key must be a plain value (a name), not a list or mapping."
                    )
                is_map = kind == "MappingStartEvent"
                _check_tag(event.tag, ("map",) if is_map else ("seq",), mark, fail)
                count(1, mark)
                container: dict[str, Any] | list[Any] = {} if is_map else []
                frame = _Frame(container, child_path())
                frame.key_mark = mark
                if event.anchor:
                    pending_anchor.append((event.anchor, frame))
                stack.append(frame)
                doc.marks.setdefault(frame.path, mark)
            elif kind in ("MappingEndEvent", "SequenceEndEvent"):
                frame = stack.pop()
                for name, anchored in list(pending_anchor):
                    if anchored is frame:
                        anchors[name] = (frame.container, frame.weight)
                        pending_anchor.remove((name, anchored))
                place(frame.container, doc.marks.get(frame.path, (1, 1)), frame.weight, False)
            elif kind == "AliasEvent":
                mark = _mark(event)
                if event.anchor not in anchors:
                    raise fail(
                        mark,
                        f"alias *{event.anchor} refers to an anchor that is not defined before it "
                        "(or to the collection that contains it); define &"
                        f"{event.anchor} first.",
                    )
                value, weight = anchors[event.anchor]
                aliased = True
                count(weight, mark)
                is_key = (
                    bool(stack) and isinstance(stack[-1].container, dict) and stack[-1].key is None
                )
                if is_key and not isinstance(value, str):
                    raise fail(
                        mark, "a mapping key must be a plain value (a name), not a list or mapping."
                    )
                place(value, mark, weight, True)
            elif kind == "DocumentStartEvent":
                documents += 1
                if documents > 1:
                    raise fail(
                        _mark(event),
                        "a second YAML document (---) in this file; stagegate reads one document "
                        "per file: remove the separator or split the file.",
                    )
    except yaml.MarkedYAMLError as exc:
        where = exc.problem_mark or exc.context_mark
        line, col = (where.line + 1, where.column + 1) if where else (1, 1)
        what = exc.problem or exc.context or "invalid YAML"
        raise InvalidInput(
            [Problem(Loc(file, line, col), f"invalid YAML: {what}; fix the syntax at this place.")]
        ) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line, col = (where.line + 1, where.column + 1) if where else (1, 1)
        detail = " ".join(str(exc).split())
        position = getattr(exc, "position", None)  # a ReaderError: a character not allowed
        if where is None and isinstance(position, int) and 0 <= position <= len(text):
            line = text.count("\n", 0, position) + 1
            col = position - (text.rfind("\n", 0, position) + 1) + 1
            char = getattr(exc, "character", None)
            if isinstance(char, str | int):
                code = ord(char) if isinstance(char, str) else char
                detail = f"the character U+{code:04X} (a control character) is not allowed in YAML"
        raise InvalidInput(
            [
                Problem(
                    Loc(file, line, col), f"invalid YAML: {detail}; fix the syntax at this place."
                )
            ]
        ) from None
    if not root_set or doc.data is None:
        raise InvalidInput(
            [Problem(Loc(file, 1, 1), "the file is empty; it must hold a YAML mapping.")]
        )
    if not isinstance(doc.data, dict):
        kind = "a list" if isinstance(doc.data, list) else f"a single value ({doc.data!r:.40})"
        raise InvalidInput(
            [
                Problem(
                    doc.loc(()), f"the file holds {kind}; it must hold a YAML mapping (key: value)."
                )
            ]
        )
    return doc


def _check_tag(tag: str | None, allowed: tuple[str, ...], mark: tuple[int, int], fail: Any) -> None:
    if tag is None or tag == "!":
        return
    if tag.startswith(_CORE) and tag[len(_CORE) :] in allowed:
        return
    shown = "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag
    raise fail(
        mark,
        f"YAML tag {shown} is not allowed here; stagegate reads plain YAML only "
        "(no Python objects, binary or custom types): remove the tag.",
    )


def _scalar(event: Any, mark: tuple[int, int], fail: Any) -> Any:
    """Resolve a scalar by the YAML 1.2 core schema (or its explicit core tag)."""
    value: str = event.value
    tag: str | None = event.tag
    if tag not in (None, "!"):
        _check_tag(tag, ("str", "int", "float", "bool", "null"), mark, fail)
        kind = (tag or "")[len(_CORE) :]
        if kind == "str":
            return value
        resolved = _bounded(value, mark, fail)
        wanted = {"int": int, "float": float, "bool": bool, "null": type(None)}[kind]
        if kind == "float" and isinstance(resolved, int) and not isinstance(resolved, bool):
            return float(resolved)
        if type(resolved) is not wanted:
            raise fail(
                mark, f"{value[:60]!r} is not a valid !!{kind}; remove the tag or fix the value."
            )
        return resolved
    if (
        event.style or tag == "!"
    ):  # quoted or block scalars are always strings (C parser: '' = plain)
        return value
    return _bounded(value, mark, fail)


MAX_INT_BITS = 64


def _bounded(value: str, mark: tuple[int, int], fail: Any) -> Any:
    """``_plain``, refusing integers no stage number, count or timeout needs.

    Python refuses to convert more than 4,300 digits, and a huge int fails again
    where a message shows it or a float is made from it."""
    try:
        resolved = _plain(value)
    except ValueError:
        resolved = None
        huge = True
    else:
        huge = type(resolved) is int and resolved.bit_length() > MAX_INT_BITS
    if huge:
        shown = value if len(value) <= 24 else f"{value[:20]}... ({len(value):,} characters)"
        raise fail(
            mark,
            f"the number {shown} is too large (the limit is {MAX_INT_BITS} bits); "
            "write a smaller number, or quote it if you mean text.",
        )
    return resolved


def _plain(value: str) -> Any:
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    integer, floating = _numbers()
    if integer.fullmatch(value):
        if value.startswith("0o"):
            return int(value[2:], 8)
        if value.startswith("0x"):
            return int(value[2:], 16)
        return int(value)
    if floating.fullmatch(value):
        lowered = value.lower()
        return float(lowered.replace(".inf", "inf").replace(".nan", "nan"))
    return value
