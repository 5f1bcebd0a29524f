"""Exact decisions about artifact-name languages: templates, globs and open-axis regexes.

A language is the concatenation of pieces: literal text (finite axis values), fnmatch
globs (download and tag selectors) and regexes (open axes such as a commit sha). The
checks ask whether languages share a string, possibly minus excluded languages, and
must answer exactly: no sample values. Every piece is compiled to a Thompson NFA whose
edges carry code-point intervals (the alphabet is all of Unicode), and an intersection
is a breadth-first search over the product of lazily determinized DFAs, so a witness is
a shortest one.

Rows of one template differ only in their literal text, so a language is held as its
leading literal text plus the automaton of the rest of its pieces, which every language
with the same rest shares (``pkg1-python310-linux-64-`` + ``[0-9a-f]{40}-tests`` and
its 17 siblings have one). A question first reads the fixed text all its answers start
with through each automaton (a derivative: the state reached), then searches the
product from those states; searches are cached by automata and start states, so the
many (glob, row) questions whose derivatives meet share one search.

Regexes are parsed by a small parser of our own (the stdlib's is private API), which
also gives the columns that error messages point at. Globs follow
``fnmatch.fnmatchcase`` to the letter, including its treatment of odd classes.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeAlias

from stagegate.errors import LocatedError
from stagegate.records import record

__all__ = [
    "Glob",
    "Language",
    "Lit",
    "PatternError",
    "Piece",
    "Rx",
    "TooMuchWork",
    "budget",
    "charge",
    "check_glob",
    "check_regex",
    "intersects",
    "language",
    "literal_prefix",
    "matches",
    "witness",
]

MAX_TEXT = 1000
"""Longest glob or regex text accepted."""
MAX_REPEAT = 1000
"""Largest repetition count accepted in ``{n,m}``."""
MAX_SIZE = 5000
"""Most character positions one regex may expand to (``(a{100}){100}`` is 10000)."""
MAX_DEPTH = 100
"""Deepest group nesting accepted; keeps the recursive parser far from Python's limit."""
MAX_DFA_STATES = 20_000
"""Most determinized states one automaton (a language's pieces after its literal text)
may grow before a question is refused."""
MAX_PRODUCT_STATES = 200_000
"""Most product states one intersection search may visit before it is refused."""
MAX_WORK = 8_000_000
"""Most work one budgeted task (a command's checks) may do: each language look-up costs
1, each automaton state built or product state explored costs 5 (about 10 microseconds),
and each question not answered from the cache costs 1 plus 1 for every 8 characters its
automata read before the search. The worked example's ``check --all`` uses about 40,000;
what exceeds this would otherwise run for minutes or hours (``{sha}-{py}-{platform}``
with 10,000 rows makes unique-artifacts ask 50 million questions, each with a search of
its own since no two rows share fixed text in front)."""
_STATE = 5
_STEPS = 8

_MAX_CP = 0x10FFFF

Intervals: TypeAlias = tuple[tuple[int, int], ...]
"""Sorted, disjoint, non-adjacent inclusive code-point ranges."""

_ANY: Intervals = ((0, _MAX_CP),)
_DOT: Intervals = ((0, 9), (11, _MAX_CP))  # `.` without DOTALL: everything but "\n"
_DIGIT: Intervals = ((0x30, 0x39),)
_WORD: Intervals = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE: Intervals = ((0x09, 0x0D), (0x20, 0x20))
_SIMPLE_ESCAPES = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 0x5C}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_INLINE_FLAGS = frozenset("aiLmsux-")


# --------------------------------------------------------------------------- public types


@record
class Lit:
    """Literal text: every character stands for itself (a finite axis value)."""

    text: str


@record
class Glob:
    """fnmatch-style text, matched exactly as ``fnmatch.fnmatchcase`` does."""

    text: str


@record
class Rx:
    """A regex in the supported subset of Python syntax, full match, ASCII semantics."""

    pattern: str


Piece: TypeAlias = Lit | Glob | Rx


class PatternError(LocatedError):
    """A glob or regex that cannot be used, or a question too complex to decide.

    Its own class because the callers that run checks (``checks.runner``, ``match``,
    ``testing``) tell the engine's refusals apart from other errors."""


class TooMuchWork(PatternError):
    """A budgeted task asked more questions than its budget allows: the input as a whole
    (not one pattern) is too large to decide exactly in bounded time."""


class _Budget:
    """The work a budgeted task may do and has done (the one mutable state here)."""

    __slots__ = ("limit", "spent")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0


_budget: ContextVar[_Budget | None] = ContextVar("stagegate_globs_budget", default=None)


@contextmanager
def budget(limit: int | None = None) -> Iterator[None]:
    """Bound the work of the questions asked inside the block (default ``MAX_WORK``).

    A nested block joins the outer one. Exceeding the budget raises TooMuchWork, and so
    does every later charge in the block. Only work done is charged (cached answers are
    free), so in one process a task that ran before fits more easily; a command is one
    process, so its verdict is deterministic."""
    if _budget.get() is not None:
        yield
        return
    token = _budget.set(_Budget(MAX_WORK if limit is None else limit))
    try:
        yield
    finally:
        _budget.reset(token)


def charge(units: int) -> None:
    """Charge work done around the engine (answers looked up again, stage after stage)
    to the running budget, so that the ceiling bounds a whole command however much of
    its work the caches make cheap."""
    _charge(units)


def _charge(units: int) -> None:
    work = _budget.get()
    if work is None:
        return
    work.spent += units
    if work.spent > work.limit:
        raise TooMuchWork(
            f"deciding the selections exactly needs more than {work.limit:,} units of work "
            "(glob/row comparisons and automaton states); the migration is too large to check "
            "in bounded time: start artifact templates and globs with distinct fixed text "
            "(e.g. the package name), or use fewer axis values"
        )


# --------------------------------------------------------------------------- intervals


def _normalize(ranges: Iterable[tuple[int, int]]) -> Intervals:
    """Sort and merge overlapping or adjacent ranges."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _complement(ivs: Intervals) -> Intervals:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ivs:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= _MAX_CP:
        out.append((nxt, _MAX_CP))
    return tuple(out)


_CATEGORIES = {
    "d": _DIGIT,
    "D": _complement(_DIGIT),
    "w": _WORD,
    "W": _complement(_WORD),
    "s": _SPACE,
    "S": _complement(_SPACE),
}


# --------------------------------------------------------------------------- syntax tree


@record
class _Chars:
    ivs: Intervals
    size: int = 1


@record
class _Cat:
    items: tuple[_Node, ...]
    size: int


@record
class _Alt:
    items: tuple[_Node, ...]
    size: int


@record
class _Rep:
    item: _Node
    lo: int
    hi: int | None  # None: unbounded
    size: int


_Node: TypeAlias = _Chars | _Cat | _Alt | _Rep
_EMPTY = _Cat((), 0)


def _cat(items: Sequence[_Node]) -> _Node:
    if len(items) == 1:
        return items[0]
    return _Cat(tuple(items), sum(i.size for i in items))


def _copies(lo: int, hi: int | None) -> int:
    """How many copies of its item the NFA of a repetition holds (see ``_Builder``)."""
    return hi if hi is not None else max(lo, 1)


# --------------------------------------------------------------------------- regex parser


class _RegexParser:
    """Recursive descent over the supported subset of Python's ``re`` syntax.

    It mirrors ``re``'s own decisions where they shape the language (``{`` that is
    not a quantifier is literal, ``]`` first in a class is literal, ...) and rejects
    what ``re`` rejects, with a column.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        self._depth = 0
        self._names: set[str] = set()

    def parse(self) -> _Node:
        text = self._text
        if len(text) > MAX_TEXT:
            raise PatternError(
                f"regex is {len(text)} characters long, over the limit of {MAX_TEXT}; shorten it",
                MAX_TEXT,
            )
        if text.startswith("^"):
            self._pos = 1
        elif text.startswith("\\A"):
            self._pos = 2
        node = self._alternation()
        if self._pos < len(text):
            raise PatternError(
                "unbalanced parenthesis: this ')' closes no group; remove it or write '\\)'",
                self._pos,
            )
        return node

    # -- helpers

    def _peek(self, ahead: int = 0) -> str | None:
        i = self._pos + ahead
        return self._text[i] if i < len(self._text) else None

    @staticmethod
    def _check_size(size: int, column: int) -> None:
        if size > MAX_SIZE:
            raise PatternError(
                f"regex too complex: it expands to {size} automaton states, over the "
                f"limit of {MAX_SIZE}; use smaller repetition counts or fewer nested "
                "repetitions",
                column,
            )

    # -- structure

    def _alternation(self) -> _Node:
        start = self._pos
        branches = [self._sequence()]
        while self._peek() == "|":
            self._pos += 1
            branches.append(self._sequence())
        if len(branches) == 1:
            return branches[0]
        size = sum(b.size for b in branches)
        self._check_size(size, start)
        return _Alt(tuple(branches), size)

    def _sequence(self) -> _Node:
        items: list[_Node] = []
        last_quantified = False
        size = 0
        while (c := self._peek()) is not None and c not in "|)":
            start = self._pos
            quant = self._quantifier()
            if quant is None:
                atom = self._atom()
                if atom is None:  # a trailing `$` or `\Z`
                    continue
                items.append(atom)
                last_quantified = False
                size += atom.size
                self._check_size(size, start)
                continue
            if not items:
                raise PatternError(
                    f"nothing to repeat: '{self._text[start : self._pos]}' must follow "
                    "something; escape it (e.g. '\\*') to match it literally",
                    start,
                )
            if last_quantified:
                raise PatternError(
                    "multiple repeat: a quantifier cannot follow a quantifier; group the "
                    "first one, e.g. '(?:a{2})*'",
                    start,
                )
            if self._peek() == "?":
                self._pos += 1  # lazy: the same language
            elif self._peek() == "+":
                raise PatternError(
                    "possessive quantifiers are not supported; remove the trailing '+'",
                    self._pos,
                )
            lo, hi = quant
            item = items.pop()
            rep = _Rep(item, lo, hi, item.size * _copies(lo, hi))
            self._check_size(rep.size, start)
            items.append(rep)
            last_quantified = True
            size += rep.size - item.size
            self._check_size(size, start)
        return _cat(items) if items else _EMPTY

    def _quantifier(self) -> tuple[int, int | None] | None:
        """Consume a quantifier and return its bounds, or None if there is none here."""
        text, start = self._text, self._pos
        c = text[start]
        if c in "*+?":
            self._pos += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        if c != "{" or self._peek(1) == "}":
            return None
        j = start + 1
        while j < len(text) and text[j] in _DIGITS:
            j += 1
        lo_text = text[start + 1 : j]
        hi_text: str | None = lo_text
        if j < len(text) and text[j] == ",":
            k = j + 1
            while k < len(text) and text[k] in _DIGITS:
                k += 1
            hi_text = text[j + 1 : k]
            j = k
        if j >= len(text) or text[j] != "}":
            return None  # not a quantifier: `{` is a literal, as in `re`
        self._pos = j + 1
        lo = int(lo_text) if lo_text else 0
        hi = int(hi_text) if hi_text else None
        for count in (lo, hi):
            if count is not None and count > MAX_REPEAT:
                raise PatternError(
                    f"repetition count {count} is over the limit of {MAX_REPEAT}; use a "
                    "smaller count or '*' / '+'",
                    start,
                )
        if hi is not None and hi < lo:
            raise PatternError(
                f"min repeat greater than max repeat in '{text[start : j + 1]}'; swap them",
                start,
            )
        return lo, hi

    def _atom(self) -> _Node | None:
        text, start = self._text, self._pos
        c = text[start]
        if c == "(":
            return self._group()
        if c == "[":
            return self.char_class()
        if c == ".":
            self._pos += 1
            return _Chars(_DOT)
        if c == "\\":
            return self._escape()
        if c == "^":
            raise self._anchor_error(start)
        if c == "$":
            if start + 1 == len(text):
                self._pos += 1
                return None
            raise self._anchor_error(start)
        self._pos += 1
        return _Chars(((ord(c), ord(c)),))

    @staticmethod
    def _anchor_error(column: int) -> PatternError:
        return PatternError(
            "anchors are only allowed at the very start ('^') or the very end ('$', "
            "'\\Z'); a pattern always matches the whole name, so remove it",
            column,
        )

    def _group(self) -> _Node:
        text, start = self._text, self._pos
        self._pos += 1
        if self._peek() == "?":
            self._pos += 1
            self._group_extension(start)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise PatternError(
                f"groups nested more than {MAX_DEPTH} deep; flatten the regex", start
            )
        node = self._alternation()
        if self._pos >= len(text):
            raise PatternError(
                "missing ')': this group is never closed; add ')' or write '\\('", start
            )
        self._pos += 1
        self._depth -= 1
        return node

    def _group_extension(self, start: int) -> None:
        """Accept `(?:` and `(?P<name>`; reject every other `(?...` form."""
        c = self._peek()
        if c is None:
            raise PatternError("unexpected end of pattern after '(?'; close the group", start)
        if c == ":":
            self._pos += 1
            return
        if c == "P":
            nxt = self._peek(1)
            if nxt == "<":
                self._pos += 2
                self._group_name(start)
                return
            if nxt == "=":
                raise PatternError(
                    "backreferences are not supported (the language would not be regular); "
                    "repeat the group's pattern instead",
                    start,
                )
            raise PatternError(
                f"unknown extension '(?P{nxt or ''}'; use '(?P<name>...)' or '(?:...)'",
                start,
            )
        if c in "=!" or (c == "<" and self._peek(1) in ("=", "!")):
            raise PatternError(
                "lookaround assertions are not supported; express the constraint with "
                "classes and alternation",
                start,
            )
        messages = {
            "#": "comments '(?#...)' are not supported; remove the comment",
            "(": "conditional groups '(?(...)...)' are not supported; use alternation '|'",
            ">": "atomic groups '(?>...)' are not supported; use '(?:...)'",
        }
        if c in messages:
            raise PatternError(messages[c], start)
        if c in _INLINE_FLAGS:
            raise PatternError(
                "inline flags such as '(?i)' are not supported; spell the cases out, "
                "e.g. '[Aa]' instead of '(?i)a'",
                start,
            )
        raise PatternError(f"unknown extension '(?{c}'; use '(?:...)' for a group", start)

    def _group_name(self, start: int) -> None:
        text = self._text
        end = text.find(">", self._pos)
        if end < 0:
            raise PatternError("missing '>': unterminated group name; add '>'", self._pos)
        name = text[self._pos : end]
        if not name:
            raise PatternError("missing group name in '(?P<>'; name the group", self._pos)
        if not name.isidentifier():
            raise PatternError(
                f"bad character in group name {name!r}; use a Python identifier", self._pos
            )
        if name in self._names:
            raise PatternError(
                f"redefinition of group name {name!r}; use each name once", self._pos
            )
        self._names.add(name)
        self._pos = end + 1

    def char_class(self) -> _Chars:
        text, start = self._text, self._pos
        self._pos += 1
        negate = self._peek() == "^"
        if negate:
            self._pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            c = self._peek()
            if c is None:
                raise self._unterminated_class(start)
            if c == "]" and not first:
                self._pos += 1
                break
            first = False
            item_start = self._pos
            lo_item = self._class_item()
            if self._peek() != "-":
                ranges.extend(lo_item if isinstance(lo_item, tuple) else ((lo_item, lo_item),))
                continue
            self._pos += 1
            if self._peek() is None:
                raise self._unterminated_class(start)
            if self._peek() == "]":
                self._pos += 1
                ranges.extend(lo_item if isinstance(lo_item, tuple) else ((lo_item, lo_item),))
                ranges.append((0x2D, 0x2D))
                break
            hi_item = self._class_item()
            if isinstance(lo_item, tuple) or isinstance(hi_item, tuple) or hi_item < lo_item:
                raise PatternError(
                    f"bad character range '{text[item_start : self._pos]}'; a range needs "
                    "two single characters, the lower one first",
                    item_start,
                )
            ranges.append((lo_item, hi_item))
        ivs = _normalize(ranges)
        return _Chars(_complement(ivs) if negate else ivs)

    @staticmethod
    def _unterminated_class(start: int) -> PatternError:
        return PatternError(
            "unterminated character set: '[' is never closed; add ']' or write '\\['", start
        )

    def _class_item(self) -> int | Intervals:
        c = self._text[self._pos]
        if c == "\\":
            return self._escape_code(in_class=True)
        self._pos += 1
        return ord(c)

    def _escape(self) -> _Node | None:
        start = self._pos
        nxt = self._peek(1)
        if nxt == "Z":
            if start + 2 == len(self._text):
                self._pos += 2
                return None
            raise self._anchor_error(start)
        if nxt == "A":
            raise self._anchor_error(start)
        if nxt in ("b", "B"):
            raise PatternError(
                "word boundaries ('\\b', '\\B') are not supported; use explicit classes "
                "such as '[^0-9A-Za-z_]'",
                start,
            )
        code = self._escape_code(in_class=False)
        return _Chars(code if isinstance(code, tuple) else ((code, code),))

    def _escape_code(self, *, in_class: bool) -> int | Intervals:
        """A backslash escape: one code point, or a category's intervals."""
        text, start = self._text, self._pos
        if start + 1 >= len(text):
            raise PatternError("bad escape: the pattern ends with '\\'; write '\\\\'", start)
        c = text[start + 1]
        self._pos = start + 2
        if c in _CATEGORIES:
            return _CATEGORIES[c]
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c]
        if c == "b" and in_class:
            return 8
        if c in _HEX_ESCAPES:
            return self._hex_escape(start, _HEX_ESCAPES[c])
        if c == "N":
            raise PatternError("named escapes '\\N{...}' are not supported; use '\\uHHHH'", start)
        if c in "01234567" and (c == "0" or in_class):
            raise PatternError("octal escapes are not supported; use '\\xHH'", start)
        if c in _DIGITS and not in_class and c != "0":
            raise PatternError(
                "backreferences are not supported (the language would not be regular); "
                "repeat the group's pattern instead",
                start,
            )
        if c in _DIGITS or c in _ASCII_LETTERS:
            raise PatternError(
                f"bad escape '\\{c}'; write '\\\\{c}' for a backslash followed by '{c}'",
                start,
            )
        return ord(c)

    def _hex_escape(self, start: int, width: int) -> int:
        text = self._text
        end = self._pos
        while end < len(text) and end - self._pos < width and text[end] in _HEX_DIGITS:
            end += 1
        escape = text[start:end]
        if end - self._pos != width:
            raise PatternError(
                f"incomplete escape '{escape}'; it needs exactly {width} hex digits", start
            )
        self._pos = end
        value = int(text[start + 2 : end], 16)
        if value > _MAX_CP:
            raise PatternError(f"bad escape '{escape}': no such code point", start)
        return value


# --------------------------------------------------------------------------- glob parser


def _fnmatch_class_body(pat: str, i: int, j: int) -> str:
    """The regex class body ``fnmatch.translate`` builds for ``pat[i:j]`` (between ``[]``).

    Copied step by step from CPython 3.11 so that odd classes (``[z-a]``, ``[a-]``,
    ``[--0]``) mean exactly what they mean to the release tooling.
    """
    stuff = pat[i:j]
    if "-" not in stuff:
        stuff = stuff.replace("\\", r"\\")
    else:
        chunks: list[str] = []
        k = i + 2 if pat[i] == "!" else i + 1
        while True:
            k = pat.find("-", k, j)
            if k < 0:
                break
            chunks.append(pat[i:k])
            i = k + 1
            k = k + 3
        chunk = pat[i:j]
        if chunk:
            chunks.append(chunk)
        else:
            chunks[-1] += "-"
        for k in range(len(chunks) - 1, 0, -1):
            if chunks[k - 1][-1] > chunks[k][0]:  # empty range: fnmatch drops it
                chunks[k - 1] = chunks[k - 1][:-1] + chunks[k][1:]
                del chunks[k]
        stuff = "-".join(s.replace("\\", r"\\").replace("-", r"\-") for s in chunks)
    return "".join("\\" + c if c in "&~|" else c for c in stuff)


def _glob_class(body: str, column: int) -> _Chars:
    if not body:
        return _Chars(())
    if body == "!":
        return _Chars(_ANY)
    if body[0] == "!":
        body = "^" + body[1:]
    elif body[0] in "^[":
        body = "\\" + body
    try:
        return _RegexParser(f"[{body}]").char_class()
    except PatternError as err:  # fnmatch itself would fail here
        raise PatternError(f"invalid class in glob: {err.message}", column) from None


def _parse_glob(text: str) -> _Node:
    if len(text) > MAX_TEXT:
        raise PatternError(
            f"glob is {len(text)} characters long, over the limit of {MAX_TEXT}; shorten it",
            MAX_TEXT,
        )
    star = _Rep(_Chars(_ANY), 0, None, 1)
    items: list[_Node] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        i += 1
        if c == "*":
            if not items or items[-1] is not star:
                items.append(star)
        elif c == "?":
            items.append(_Chars(_ANY))
        elif c == "[":
            j = i
            if j < n and text[j] == "!":
                j += 1
            if j < n and text[j] == "]":
                j += 1
            while j < n and text[j] != "]":
                j += 1
            if j >= n:
                items.append(_Chars(((0x5B, 0x5B),)))
            else:
                items.append(_glob_class(_fnmatch_class_body(text, i, j), i - 1))
                i = j + 1
        else:
            items.append(_Chars(((ord(c), ord(c)),)))
    return _cat(items) if items else _EMPTY


@functools.cache  # bounded by the input's own limits; a CLI run is short-lived
def _piece_node(piece: Piece) -> _Node:
    if isinstance(piece, Lit):
        return _cat([_Chars(((ord(c), ord(c)),)) for c in piece.text]) if piece.text else _EMPTY
    if isinstance(piece, Glob):
        return _parse_glob(piece.text)
    if isinstance(piece, Rx):
        return _RegexParser(piece.pattern).parse()
    raise TypeError(f"not a Lit, Glob or Rx piece: {piece!r}")


def check_regex(pattern: str) -> None:
    """Raise PatternError if ``pattern`` is unsupported, invalid, too long or too complex."""
    _piece_node(Rx(pattern))


def check_glob(text: str) -> None:
    """Raise PatternError if the glob ``text`` is too long or too complex."""
    _piece_node(Glob(text))


# --------------------------------------------------------------------------- automata


@record
class _Nfa:
    """Thompson NFA; ``out[s]`` holds (lo, hi, target) edges, trimmed to live states."""

    start: int
    final: int
    out: tuple[tuple[tuple[int, int, int], ...], ...]
    eps: tuple[tuple[int, ...], ...]
    live: tuple[bool, ...]  # can reach `final`: dead ends are removed


class _Builder:
    """Builds fragments in place: ``build(node, entry)`` returns the fragment's exit.

    Entries never get edges from inside their own fragment and exits never get edges
    out of it, so fragments chain without epsilon glue.
    """

    def __init__(self) -> None:
        self.out: list[list[tuple[int, int, int]]] = []
        self.eps: list[list[int]] = []

    def state(self) -> int:
        self.out.append([])
        self.eps.append([])
        return len(self.out) - 1

    def build(self, node: _Node, entry: int) -> int:
        if isinstance(node, _Chars):
            exit_ = self.state()
            self.out[entry].extend((lo, hi, exit_) for lo, hi in node.ivs)
            return exit_
        if isinstance(node, _Cat):
            for item in node.items:
                entry = self.build(item, entry)
            return entry
        if isinstance(node, _Alt):
            exit_ = self.state()
            for item in node.items:
                branch = self.state()
                self.eps[entry].append(branch)
                self.eps[self.build(item, branch)].append(exit_)
            return exit_
        return self._repeat(node, entry)

    def _repeat(self, node: _Rep, entry: int) -> int:
        item, lo, hi = node.item, node.lo, node.hi
        cur = entry
        for _ in range(lo - 1 if hi is None and lo > 0 else lo):
            cur = self.build(item, cur)
        if hi is None:  # a loop: `x*` when lo == 0, else the last copy as `x+`
            loop = self.state()
            self.eps[cur].append(loop)
            body_end = self.build(item, loop)
            self.eps[body_end].append(loop)
            exit_ = self.state()
            self.eps[body_end if lo > 0 else loop].append(exit_)
            return exit_
        if hi == lo:
            return cur
        skips = []
        for _ in range(hi - lo):
            skips.append(cur)
            cur = self.build(item, cur)
        exit_ = self.state()
        for s in (*skips, cur):
            self.eps[s].append(exit_)
        return exit_


def _compile(node: _Node) -> _Nfa:
    builder = _Builder()
    start = builder.state()
    final = builder.build(node, start)
    count = len(builder.out)
    back: list[list[int]] = [[] for _ in range(count)]
    for s in range(count):
        for _, _, t in builder.out[s]:
            back[t].append(s)
        for t in builder.eps[s]:
            back[t].append(s)
    live = [False] * count
    live[final] = True
    stack = [final]
    while stack:
        for s in back[stack.pop()]:
            if not live[s]:
                live[s] = True
                stack.append(s)
    out = tuple(tuple(e for e in builder.out[s] if live[e[2]]) for s in range(count))
    eps = tuple(tuple(t for t in builder.eps[s] if live[t]) for s in range(count))
    return _Nfa(start, final, out, eps, tuple(live))


def _closure(nfa: _Nfa, seeds: Iterable[int]) -> frozenset[int]:
    """The live states reachable by epsilon moves that matter: those with character
    edges, and the final state. Dropping pure epsilon states makes equal DFA states equal."""
    stack = [s for s in seeds if nfa.live[s]]
    seen = set(stack)
    keep: list[int] = []
    while stack:
        s = stack.pop()
        if nfa.out[s] or s == nfa.final:
            keep.append(s)
        for t in nfa.eps[s]:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return frozenset(keep)


_Row: TypeAlias = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
"""A DFA state's transitions: parallel (los, his, targets), sorted; gaps are dead."""


def _too_complex(what: str) -> PatternError:
    return PatternError(
        f"too complex to decide: {what}; simplify the globs or regexes involved "
        "(a '*' followed by many '?' or classes is the usual cause)"
    )


class _Dfa:
    """Subset construction done lazily and kept, so repeated questions reuse it.

    State ids are ints; -1 is the dead state. Every live state has a non-empty
    language because the NFA is trimmed.
    """

    __slots__ = ("_index", "_nfa", "_rows", "_sets", "accepting", "start")

    def __init__(self, nfa: _Nfa) -> None:
        self._nfa = nfa
        self._index: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._rows: list[_Row | None] = []
        self.accepting: list[bool] = []
        self.start = self._intern(_closure(nfa, (nfa.start,)))

    def _intern(self, key: frozenset[int]) -> int:
        if not key:
            return -1
        found = self._index.get(key)
        if found is not None:
            return found
        if len(self._sets) >= MAX_DFA_STATES:
            raise _too_complex(f"a pattern needs more than {MAX_DFA_STATES} automaton states")
        self._index[key] = len(self._sets)
        self._sets.append(key)
        self._rows.append(None)
        self.accepting.append(self._nfa.final in key)
        return len(self._sets) - 1

    def row(self, state: int) -> _Row:
        row = self._rows[state]
        if row is None:
            row = self._rows[state] = self._expand(self._sets[state])
        return row

    def _expand(self, key: frozenset[int]) -> _Row:
        """Split the alphabet at every edge boundary and follow each piece."""
        _charge(_STATE)
        edges = [e for s in key for e in self._nfa.out[s]]
        if not edges:
            return (), (), ()
        points = sorted({e[0] for e in edges} | {e[1] + 1 for e in edges})
        by_lo = sorted(edges, key=lambda e: e[0])
        by_hi = sorted(edges, key=lambda e: e[1])
        active: dict[int, int] = {}
        closed: dict[frozenset[int], int] = {}
        los: list[int] = []
        his: list[int] = []
        tgts: list[int] = []
        i = j = 0
        for k in range(len(points) - 1):
            p = points[k]
            while i < len(by_lo) and by_lo[i][0] == p:
                t = by_lo[i][2]
                active[t] = active.get(t, 0) + 1
                i += 1
            while j < len(by_hi) and by_hi[j][1] < p:
                t = by_hi[j][2]
                active[t] -= 1
                if not active[t]:
                    del active[t]
                j += 1
            if not active:
                continue
            targets = frozenset(active)
            target = closed.get(targets)
            if target is None:
                target = closed[targets] = self._intern(_closure(self._nfa, targets))
            hi = points[k + 1] - 1
            if tgts and tgts[-1] == target and his[-1] + 1 == p:
                his[-1] = hi
            else:
                los.append(p)
                his.append(hi)
                tgts.append(target)
        return tuple(los), tuple(his), tuple(tgts)

    def universal(self, state: int) -> bool:
        """True if every continuation from ``state`` is accepted (a trailing ``*``)."""
        return self.accepting[state] and self.row(state) == ((0,), (_MAX_CP,), (state,))

    def step(self, state: int, cp: int) -> int:
        los, his, tgts = self.row(state)
        i = bisect.bisect_right(los, cp) - 1
        return tgts[i] if i >= 0 and cp <= his[i] else -1

    def walk(self, state: int, text: str) -> int:
        """The state reached from ``state`` by reading ``text`` (-1: dead): the derivative."""
        for ch in text:
            if state < 0:
                break
            state = self.step(state, ord(ch))
        return state


# --------------------------------------------------------------------------- languages

_GLOB_SPECIAL = frozenset("*?[")


def _literal(piece: Glob) -> int:
    """How many leading characters of a glob stand for themselves."""
    for k, c in enumerate(piece.text):
        if c in _GLOB_SPECIAL:
            return k
    return len(piece.text)


def _tidy(pieces: Iterable[Piece]) -> tuple[Piece, ...]:
    """The same language, spelled one way: literal globs as text, adjacent texts merged."""
    out: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, Glob) and _literal(piece) == len(piece.text):
            piece = Lit(piece.text)
        if isinstance(piece, Lit):
            if not piece.text:
                continue
            if out and isinstance(out[-1], Lit):
                piece = Lit(out[-1].text + piece.text)
                out.pop()
        out.append(piece)
    return tuple(out)


def _split(pieces: tuple[Piece, ...]) -> tuple[str, tuple[Piece, ...]]:
    """The literal text the pieces start with, and the rest.

    A glob is cut before its first ``*``, ``?`` or ``[``: fnmatch reads a glob left to
    right, one item at a time, so the two halves concatenated mean the same. Rows of one
    template differ only in their finite axis values, which are literal text, so their
    rests are equal wherever the rows differ only before the first open axis."""
    text: list[str] = []
    for i, piece in enumerate(pieces):
        if isinstance(piece, Lit):
            text.append(piece.text)
            continue
        if isinstance(piece, Glob):
            cut = _literal(piece)
            text.append(piece.text[:cut])
            if cut == len(piece.text):
                continue
            piece = Glob(piece.text[cut:])
        return "".join(text), _tidy((piece, *pieces[i + 1 :]))
    return "".join(text), ()


_serials = itertools.count()


class _Automaton:
    """The automata of a rest of pieces, shared by every language that ends in it."""

    __slots__ = ("_prefix", "dfa", "nfa", "pieces", "serial")

    def __init__(self, pieces: tuple[Piece, ...]) -> None:
        self.pieces = pieces
        self.nfa = _compile(_cat([_piece_node(p) for p in pieces]))
        _charge(_STATE * len(self.nfa.out))
        self.dfa = _Dfa(self.nfa)
        self.serial = next(_serials)
        self._prefix: str | None = None

    def prefix(self) -> str:
        if self._prefix is None:
            self._prefix = _dfa_prefix(self.dfa)
        return self._prefix


_Part: TypeAlias = tuple[_Automaton, int]
"""A component of a question: an automaton and the (live) state the search starts it in."""


@functools.cache  # one per template shape and glob tail: few, and each keeps its DFA
def _automaton(pieces: tuple[Piece, ...]) -> _Automaton:
    return _Automaton(pieces)


class Language:
    """The concatenation of its pieces; immutable, hashed by its pieces.

    Build it with ``language()``. It is held as its leading literal text and the
    automaton of the rest, which languages with the same rest share (all rows of a
    template whose open axes come after its finite ones); the automata are built once
    and grow lazily as questions explore them.
    """

    __slots__ = ("_hash", "_pieces", "_prefix", "_rest", "_text")

    def __init__(self, pieces: Sequence[Piece]) -> None:
        self._pieces = tuple(pieces)
        self._hash = hash(self._pieces)
        for piece in self._pieces:
            if not isinstance(piece, Lit):
                _piece_node(piece)  # a bad piece is reported in its own text's columns
        self._text, rest = _split(self._pieces)
        self._rest = _automaton(rest)
        self._prefix: str | None = None

    @property
    def pieces(self) -> tuple[Piece, ...]:
        return self._pieces

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Language):
            return NotImplemented
        return self._hash == other._hash and self._pieces == other._pieces

    def __repr__(self) -> str:
        return f"language({list(self._pieces)!r})"

    def prefix(self) -> str:
        """The longest text every string of the language starts with."""
        if self._prefix is None:
            rest = self._rest
            self._prefix = "" if rest.dfa.start < 0 else self._text + rest.prefix()
        return self._prefix

    def contains(self, s: str) -> bool:
        """Whether ``s`` is in the language."""
        text = self._text
        if not s.startswith(text):
            return False
        rest = self._rest
        tail = s[len(text) :]
        try:
            state = rest.dfa.walk(rest.dfa.start, tail)
        except TooMuchWork:
            raise
        except PatternError:
            return _nfa_accepts(rest.nfa, tail)
        return state >= 0 and rest.dfa.accepting[state]

    def derivative(self, head: str) -> _Part | None:
        """What is left of the language after ``head``: an automaton and its state.

        None if no string of the language starts with ``head``, or ``head`` with a
        string of it. When ``head`` ends inside the literal text, the rest of that text
        goes in front of the automaton."""
        text, rest = self._text, self._rest
        if rest.dfa.start < 0:  # the empty language
            return None
        if head.startswith(text):
            state = rest.dfa.walk(rest.dfa.start, head[len(text) :])
        elif text.startswith(head):
            rest = _automaton(_tidy((Lit(text[len(head) :]), *rest.pieces)))
            state = rest.dfa.start
        else:
            return None
        return (rest, state) if state >= 0 else None


def _dfa_prefix(dfa: _Dfa) -> str:
    chars: list[str] = []
    state = dfa.start
    try:
        while state >= 0 and not dfa.accepting[state]:
            los, his, tgts = dfa.row(state)
            if len(los) != 1 or los[0] != his[0]:
                break
            chars.append(chr(los[0]))
            state = tgts[0]
    except TooMuchWork:
        raise
    except PatternError:
        pass  # what we have is still a common prefix, just not the longest
    return "".join(chars)


@functools.cache  # evicting a language would throw away its built automaton
def _language(pieces: tuple[Piece, ...]) -> Language:
    return Language(pieces)


def language(pieces: Sequence[Piece]) -> Language:
    """The language of ``pieces`` concatenated; raises PatternError for a bad piece."""
    _charge(1)
    return _language(tuple(pieces))


def literal_prefix(pieces: Sequence[Piece]) -> str:
    """The fixed text every string of the pieces' language starts with, for indexing."""
    return language(pieces).prefix()


def matches(lang: Language, s: str) -> bool:
    """Whether ``s`` is in ``lang``."""
    return lang.contains(s)


def _nfa_accepts(nfa: _Nfa, s: str) -> bool:
    """Membership without determinizing, for languages whose DFA is too large."""
    current = _closure(nfa, (nfa.start,))
    for ch in s:
        cp = ord(ch)
        current = _closure(
            nfa, {t for st in current for lo, hi, t in nfa.out[st] if lo <= cp <= hi}
        )
        if not current:
            return False
    return nfa.final in current


# --------------------------------------------------------------------------- intersection

_Seg: TypeAlias = tuple[int, int, tuple[int, ...]]


def _meet(segs: list[_Seg], row: _Row) -> list[_Seg]:
    """Intersect segments with a positive component's row: its gaps are dead."""
    los, his, tgts = row
    out: list[_Seg] = []
    i = j = 0
    while i < len(segs) and j < len(los):
        a_lo, a_hi, a_t = segs[i]
        lo, hi = max(a_lo, los[j]), min(a_hi, his[j])
        if lo <= hi:
            out.append((lo, hi, (*a_t, tgts[j])))
        if a_hi < his[j]:
            i += 1
        else:
            j += 1
    return out


def _refine(segs: list[_Seg], row: _Row) -> list[_Seg]:
    """Split segments by an excluded component's row: its gaps mean "escaped" (-1)."""
    los, his, tgts = row
    out: list[_Seg] = []
    j = 0
    for lo, hi, t in segs:
        while j < len(los) and his[j] < lo:
            j += 1
        cur = lo
        while cur <= hi:
            if j < len(los) and los[j] <= cur:
                end = min(hi, his[j])
                out.append((cur, end, (*t, tgts[j])))
                if end == his[j]:
                    j += 1
            else:
                end = min(hi, los[j] - 1 if j < len(los) else _MAX_CP)
                out.append((cur, end, (*t, -1)))
            cur = end + 1
    return out


def _readable(lo: int, hi: int) -> tuple[int, int]:
    """(rank, code point) of the most readable character in ``lo..hi``; lower is better."""
    if lo <= 0x30 <= hi:
        return 0, 0x30
    if lo <= 0x61 <= hi:
        return 1, 0x61
    if lo <= 0x7E and hi >= 0x21:
        return 2, max(lo, 0x21)
    if lo <= 0x20 <= hi:
        return 3, 0x20
    return 4, lo


def _successors(
    dfas: Sequence[_Dfa], positives: int, state: tuple[int, ...]
) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
    """Each distinct next product state with the most readable character leading there."""
    los, his, tgts = dfas[0].row(state[0])
    segs: list[_Seg] = [(lo, hi, (t,)) for lo, hi, t in zip(los, his, tgts, strict=True)]
    for k in range(1, len(dfas)):
        if not segs:
            return []
        s = state[k]
        if k < positives:
            segs = _meet(segs, dfas[k].row(s))
        elif s < 0:
            segs = [(lo, hi, (*t, -1)) for lo, hi, t in segs]
        else:
            segs = _refine(segs, dfas[k].row(s))
    best: dict[tuple[int, ...], tuple[int, int]] = {}
    for lo, hi, t in segs:
        char = _readable(lo, hi)
        if t not in best or char < best[t]:
            best[t] = char
    return sorted(zip(best.values(), best.keys(), strict=True))


def _search(
    positive: Sequence[tuple[_Dfa, int]], excluded: Sequence[tuple[_Dfa, int]]
) -> str | None:
    """Breadth-first search of the product automaton from the given states.

    Successors are visited in order of readability, so the string found is the shortest
    and, among the shortest, the first in that order: a property of the languages
    alone, not of how their automata happen to be built."""
    dfas = [d for d, _ in (*positive, *excluded)]
    k = len(positive)
    start = tuple(s for _, s in (*positive, *excluded))
    if any(s < 0 for s in start[:k]):
        return None
    accepting = [d.accepting for d in dfas]  # grows in place as the DFAs do
    negatives = range(k, len(dfas))

    def accepted(state: tuple[int, ...]) -> bool:
        for i in range(k):
            if not accepting[i][state[i]]:
                return False
        return not any(state[i] >= 0 and accepting[i][state[i]] for i in negatives)

    def hopeless(state: tuple[int, ...]) -> bool:
        return any(state[i] >= 0 and dfas[i].universal(state[i]) for i in negatives)

    if hopeless(start):
        return None
    parent: dict[tuple[int, ...], tuple[tuple[int, ...], int] | None] = {start: None}
    frontier = deque([start])
    while frontier:
        state = frontier.popleft()
        _charge(_STATE)
        if accepted(state):
            return _spell(parent, state)
        for (_, cp), nxt in _successors(dfas, k, state):
            if nxt not in parent and not (excluded and hopeless(nxt)):
                parent[nxt] = (state, cp)
                frontier.append(nxt)
        if len(parent) > MAX_PRODUCT_STATES:
            raise _too_complex(f"the intersection has more than {MAX_PRODUCT_STATES} states")
    return None


def _spell(
    parent: dict[tuple[int, ...], tuple[tuple[int, ...], int] | None], state: tuple[int, ...]
) -> str:
    chars: list[str] = []
    link = parent[state]
    while link is not None:
        state, cp = link
        chars.append(chr(cp))
        link = parent[state]
    return "".join(reversed(chars))


@functools.lru_cache(maxsize=1 << 18)
def _search_from(
    positive: tuple[_Part, ...], excluded: tuple[_Part, ...]
) -> str | PatternError | None:
    """The search's answer, shared by every question whose derivatives meet here.

    A refusal is cached too, since finding it again would be slow."""
    try:
        return _search([(a.dfa, s) for a, s in positive], [(a.dfa, s) for a, s in excluded])
    except TooMuchWork:
        raise  # the task's budget ran out, not this question's: never cache it
    except PatternError as err:
        return err


def _order(part: _Part) -> tuple[int, int]:
    return part[0].serial, part[1]


def _derive(
    head: str, langs: Sequence[Language], excluding: Sequence[Language]
) -> tuple[tuple[_Part, ...], tuple[_Part, ...]] | None:
    """Every language's automaton after reading ``head``, the text all answers start with.

    None if a positive language cannot start with it. An excluded language that cannot
    start with it excludes nothing here and is dropped; one whose own text goes on past
    ``head`` keeps that text in front of its rest."""
    positive: set[_Part] = set()
    for lang in langs:
        part = lang.derivative(head)  # ``head`` starts with each one's literal text
        if part is None:
            return None
        positive.add(part)
    excluded = {part for lang in excluding if (part := lang.derivative(head)) is not None}
    return tuple(sorted(positive, key=_order)), tuple(sorted(excluded, key=_order))


@functools.lru_cache(maxsize=1 << 20)
def _witness(
    langs: tuple[Language, ...], excluding: tuple[Language, ...]
) -> str | PatternError | None:
    """Cached answer: the common literal text, then what the shared search finds after it.

    Every answer starts with the longest of the positive languages' fixed prefixes, and
    two of those that disagree prove the answer empty. Each language's automaton reads
    the part of that text past its own literal text (a derivative: the state set
    reached), and the product search starts from there over the rests, which the many
    rows of a template share: their questions mostly meet in one search."""
    if any(lang in excluding for lang in langs):
        return None
    prefixes = [lang.prefix() for lang in langs]
    head = max(prefixes, key=len)
    if any(not head.startswith(p) for p in prefixes):
        return None
    _charge(1 + len(head) * len(langs + excluding) // _STEPS)
    try:
        parts = _derive(head, langs, excluding)
        if parts is None or any(p in parts[1] for p in parts[0]):
            return None
        found = _search_from(*parts)
    except TooMuchWork:
        raise
    except PatternError as err:
        return err
    return head + found if isinstance(found, str) else found


def witness(*langs: Language, excluding: Sequence[Language] = ()) -> str | None:
    """A shortest string in every one of ``langs`` and in none of ``excluding``.

    None if there is none. With no ``langs`` the intersection is every string.
    Raises PatternError if the question is too complex to decide.
    """
    positive: tuple[Language, ...]
    if len(langs) == 2 and langs[0] != langs[1]:  # the checks' question: one glob, one row
        positive = langs
    else:
        positive = tuple(dict.fromkeys(langs)) or (language([Glob("*")]),)
    result = _witness(positive, tuple(dict.fromkeys(excluding)) if excluding else ())
    if isinstance(result, PatternError):
        raise PatternError(result.message, result.column)
    return result


def intersects(*langs: Language, excluding: Sequence[Language] = ()) -> bool:
    """Whether some string is in every one of ``langs`` and in none of ``excluding``."""
    return witness(*langs, excluding=excluding) is not None
