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
from collections.abc import Iterable
from functools import cache
from typing import Any

from stagegate.errors import InvalidInput, Loc, Problem
from stagegate.load.digest import blake2b
from stagegate.model.document import Document as Document

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

Path = tuple[str | int, ...]
"""Where a value is in a document: the keys and indexes from its top."""

_NULL = frozenset({"~", "null", "Null", "NULL", ""})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
_FLOAT = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"


@cache
def _pyyaml() -> tuple[Any, Any]:
    """PyYAML's parser (the C one where libyaml is there: several times faster) and the
    module that holds the classes of its events and errors, imported once per process.

    The classes are the parser's own: the C extension keeps the classes of its first
    import even when ``yaml`` is imported again (pytester's in-process runs delete and
    re-import modules), so ``yaml.ScalarEvent`` may not be the class its events have."""
    try:
        from yaml import CSafeLoader, _yaml
    except ImportError:  # pragma: no cover - depends on how PyYAML was built
        import yaml
        from yaml import SafeLoader

        return SafeLoader, yaml
    return CSafeLoader, _yaml


@cache
def _numbers() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Compiled only when a file is parsed, not on every start-up."""
    return re.compile(_INT), re.compile(_FLOAT)


_CORE = "tag:yaml.org,2002:"
_BOM = b"\xef\xbb\xbf"


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
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
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
    """An open mapping or sequence: what is read into it so far."""

    __slots__ = ("anchor", "container", "key", "key_mark", "path", "seen", "weight")

    def __init__(self, container: dict[str, Any] | list[Any], path: Path) -> None:
        self.container = container
        self.path = path
        self.key: str | None = None
        self.key_mark: tuple[int, int] = (1, 1)
        self.seen: dict[str, int] = {}
        self.weight = 1
        self.anchor: str | None = None


def _mark(event: Any) -> tuple[int, int]:
    return (event.start_mark.line + 1, event.start_mark.column + 1)


_NOT_A_KEY = "a mapping key must be a plain value (a name), not a list or mapping."


class _Reader:
    """One pass over the parser's events, building the data and its locations.

    Iterative (an explicit stack of open collections), so no nesting depth reaches
    Python's recursion limit; every value is counted, an alias by the values it
    stands for, so an alias bomb fails after its few events are read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.doc = Document(file)
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.total = 0
        self.documents = 0
        self.root_set = False
        self.aliased = False
        self.plain_top: dict[Path, tuple[int, int]] = {}  # character offsets, for ``spans``

    def fail(self, mark: tuple[int, int], message: str) -> InvalidInput:
        return InvalidInput([Problem(Loc(self.file, *mark), message)])

    def read(self, events: Iterable[Any]) -> None:
        yaml = _pyyaml()[1]
        handlers = {
            yaml.ScalarEvent: self.scalar,
            yaml.MappingStartEvent: self.start,
            yaml.SequenceStartEvent: self.start,
            yaml.MappingEndEvent: self.end,
            yaml.SequenceEndEvent: self.end,
            yaml.AliasEvent: self.alias,
            yaml.DocumentStartEvent: self.document_start,
        }
        for event in events:
            handler = handlers.get(type(event))
            if handler is not None:
                handler(event)

    def count(self, weight: int, mark: tuple[int, int]) -> None:
        self.total += weight
        if self.total > MAX_NODES:
            raise self.fail(
                mark,
                f"more than {MAX_NODES:,} values after expanding aliases; "
                "this looks like an alias bomb; write the values out or use fewer aliases."
                if self.aliased
                else f"more than {MAX_NODES:,} values, the limit for one file; "
                "split the migration or remove generated content.",
            )

    def at_key(self) -> bool:
        """The next node is a mapping key."""
        stack = self.stack
        return bool(stack) and isinstance(stack[-1].container, dict) and stack[-1].key is None

    def child_path(self) -> Path:
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if isinstance(frame.container, list):
            return (*frame.path, len(frame.container))
        return (*frame.path, frame.key if frame.key is not None else "?")

    def place(self, value: Any, mark: tuple[int, int], weight: int, is_key_ok: bool) -> None:
        doc = self.doc
        if not self.stack:
            doc.data = value
            doc.marks[()] = mark
            self.root_set = True
            return
        frame = self.stack[-1]
        frame.weight += weight
        if isinstance(frame.container, list):
            path = (*frame.path, len(frame.container))
            frame.container.append(value)
            doc.marks[path] = mark
            return
        if frame.key is None:
            if not is_key_ok:
                raise self.fail(mark, _NOT_A_KEY)
            key = value
            if key in frame.seen:
                raise self.fail(
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

    def scalar(self, event: Any) -> None:
        mark = (event.start_mark.line + 1, event.start_mark.column + 1)
        stack = self.stack
        if stack and stack[-1].key is None and isinstance(stack[-1].container, dict):  # a key
            value: Any = event.value
            if event.tag is not None:
                _check_tag(event.tag, ("str",), mark, self.fail)
            if event.value in _NULL and not event.style and event.tag in (None, ""):
                raise self.fail(
                    mark,
                    f"the key {event.value or '(empty)'!r} is YAML's null, not a name; "
                    "quote it if you mean the text, or remove the entry.",
                )
        else:
            value = _scalar(event, mark, self.fail)
            if event.style in ("'", '"'):
                self.doc.quoted.add(self.child_path())
            elif not event.style and len(stack) == 1:  # a top-level plain value
                end = event.end_mark.index
                self.plain_top[self.child_path()] = (end - len(event.value), end)
        if event.anchor:
            self.anchors[event.anchor] = (value, 1)
        self.total += 1
        if self.total > MAX_NODES:
            self.count(0, mark)
        self.place(value, mark, 1, True)

    def start(self, event: Any) -> None:
        mark = _mark(event)
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(
                mark, f"nested more than {MAX_DEPTH} levels deep; flatten the structure."
            )
        if self.at_key():
            raise self.fail(mark, _NOT_A_KEY)
        is_map = isinstance(event, _pyyaml()[1].MappingStartEvent)
        _check_tag(event.tag, ("map",) if is_map else ("seq",), mark, self.fail)
        self.count(1, mark)
        frame = _Frame({} if is_map else [], self.child_path())
        frame.key_mark = mark
        frame.anchor = event.anchor
        self.stack.append(frame)
        self.doc.marks.setdefault(frame.path, mark)

    def end(self, _event: Any) -> None:
        frame = self.stack.pop()
        if frame.anchor:
            self.anchors[frame.anchor] = (frame.container, frame.weight)
        self.place(frame.container, self.doc.marks.get(frame.path, (1, 1)), frame.weight, False)

    def alias(self, event: Any) -> None:
        mark = _mark(event)
        if event.anchor not in self.anchors:
            raise self.fail(
                mark,
                f"alias *{event.anchor} refers to an anchor that is not defined before it "
                "(or to the collection that contains it); define &"
                f"{event.anchor} first.",
            )
        value, weight = self.anchors[event.anchor]
        self.aliased = True
        self.count(weight, mark)
        if self.at_key() and not isinstance(value, str):
            raise self.fail(mark, _NOT_A_KEY)
        self.place(value, mark, weight, True)

    def document_start(self, event: Any) -> None:
        self.documents += 1
        if self.documents > 1:
            raise self.fail(
                _mark(event),
                "a second YAML document (---) in this file; stagegate reads one document "
                "per file: remove the separator or split the file.",
            )


def _syntax_error(exc: Exception, text: str, file: str) -> InvalidInput:
    """PyYAML's own error as a located problem."""
    if hasattr(exc, "context_mark"):  # a MarkedYAMLError: the scanner's, parser's or composer's
        marked: Any = exc
        where = marked.problem_mark or marked.context_mark
        line, col = (where.line + 1, where.column + 1) if where else (1, 1)
        what = marked.problem or marked.context or "invalid YAML"
        return InvalidInput(
            [Problem(Loc(file, line, col), f"invalid YAML: {what}; fix the syntax at this place.")]
        )
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
    return InvalidInput(
        [Problem(Loc(file, line, col), f"invalid YAML: {detail}; fix the syntax at this place.")]
    )


def _byte_spans(
    text: str, spans: dict[Path, tuple[int, int]], offset: int
) -> dict[Path, tuple[int, int]]:
    """Character offsets in ``text`` as byte offsets in the file (``offset``: its BOM)."""
    if text.isascii():
        return {path: (offset + start, offset + end) for path, (start, end) in spans.items()}
    out: dict[Path, tuple[int, int]] = {}
    for path, (start, end) in spans.items():
        before = offset + len(text[:start].encode("utf-8"))
        out[path] = (before, before + len(text[start:end].encode("utf-8")))
    return out


def parse(text: str, file: str, *, offset: int = 0) -> Document:
    """Compose one YAML document from ``text`` into plain data and locations.

    ``offset``: the bytes of the file before ``text`` (a byte-order mark), for ``spans``."""
    loader, yaml = _pyyaml()
    reader = _Reader(file)
    try:
        parser = loader(text)
        try:
            reader.read(iter(parser.get_event, None))  # None: after the end of the stream
        finally:
            parser.dispose()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text, file) from None
    doc = reader.doc
    if not reader.root_set or doc.data is None:
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
    doc.spans = _byte_spans(text, reader.plain_top, offset)
    return doc


MEMO_ENTRIES = 64
"""Documents ``read`` keeps; when it is full, the one read longest ago goes."""
_recent: dict[tuple[str, bytes], Document | InvalidInput] = {}


def _memo_key(raw: bytes, file: str) -> tuple[str, bytes]:
    return (file, blake2b(raw, digest_size=16).digest())


def _keep(key: tuple[str, bytes], known: Document | InvalidInput) -> None:
    if len(_recent) >= MEMO_ENTRIES:
        del _recent[next(iter(_recent))]
    _recent[key] = known


def keep(raw: bytes, file: str, doc: Document) -> None:
    """Remember ``doc`` as the document of these bytes under this name (one the loader
    restored from its cache: the parse ``read`` would make)."""
    _keep(_memo_key(raw, file), doc)


def remembered(raw: bytes, file: str) -> Document | None:
    """The document ``read`` made of these bytes under this name, if it still keeps it
    (None: not read lately, or not a document: ``read`` raises its problems again)."""
    known = _recent.get(_memo_key(raw, file))
    return known if isinstance(known, Document) else None


def read(raw: bytes, file: str) -> Document:
    """The located document of a file's bytes: ``decode`` then ``parse``.

    The same bytes under the same name are parsed once: a command that reads a file at
    several commits (``verify-pr``'s base, merge base and head; ``log``'s versions and
    their parents) gets the document already read where the file did not change. A
    document is never changed after it is read, so one can be shared."""
    key = _memo_key(raw, file)
    known = _recent.get(key)
    if known is None:
        try:
            offset = len(_BOM) if raw.startswith(_BOM) else 0
            known = parse(decode(raw, file), file, offset=offset)
        except InvalidInput as error:
            known = error
        _keep(key, known)
    if isinstance(known, InvalidInput):
        raise InvalidInput(known.problems)
    return known


def whole_number(text: str) -> bool:
    """``text`` is an integer as YAML 1.2's core schema writes one (``3``, ``-1``, ``0x1f``)."""
    return _numbers()[0].fullmatch(text) is not None


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
