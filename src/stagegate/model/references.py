"""References the audit searches for: fixed strings and ``{regex: PATTERN}`` expressions.

The audit stays one ``git grep -F`` over the tracked files. A regex reference is
searched there by the fixed texts every match of it must contain (its *literals*,
read off the parsed expression, e.g. ``cuda-python-wheel`` for
``cuda-python-wheel(?!-cuda)``); only the lines git reports are then matched by
Python's ``re``, so the findings are exactly the lines the expression matches. An
expression with no such text (``\\w+\\d``) makes the search report every line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from stagegate.model import Ref, Reference

MAX_LITERALS = 64
"""Most alternative texts a prefilter may have (``(a|b)(c|d)`` has 4)."""


def label(ref: Ref) -> str:
    """How a reference is shown: the string itself, or ``{regex: PATTERN}``."""
    return ref if isinstance(ref, str) else f"{{regex: {ref.regex}}}"


def regex_problem(pattern: str) -> tuple[str, int] | None:
    """Why ``pattern`` cannot be a reference, and the 0-based column of the problem."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return (
            f"invalid regex: {exc.msg}; write a Python regular expression (escape a literal "
            "'(' '[' '?' '*' '+' with a backslash)",
            exc.pos or 0,
        )
    except (OverflowError, RecursionError, ValueError) as exc:
        return f"invalid regex: {exc}", 0
    if compiled.search("") is not None:
        return (
            "this regex matches the empty string, so it would match every line; make every "
            "match hold at least one character (e.g. `+` instead of `*`)",
            0,
        )
    if _nested_repeat(pattern):
        return (
            "this regex repeats a group that itself repeats (like `(a+)+`), which can take "
            "exponential time on a long line; repeat the inner part once (`a+`), or make "
            "the outer repetition possessive (`(a+)++`)",
            0,
        )
    return None


def _nested_repeat(pattern: str) -> bool:
    """Whether a repetition of more than one holds another: the shape whose backtracking
    explodes (possessive and atomic parts never backtrack)."""
    parser, c = _sre()
    try:
        parsed = parser.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return False

    def walk(items: Iterable[Any], inside: bool) -> bool:
        for op, arg in items:
            if op in (c.MAX_REPEAT, c.MIN_REPEAT):
                low, high, body = arg
                if inside and high > low:  # a varying repetition inside a repeated one
                    return True
                if walk(body, inside or high > 1):
                    return True
            elif op is c.SUBPATTERN:
                if walk(arg[3], inside):
                    return True
            elif op is c.BRANCH:
                if any(walk(alt, inside) for alt in arg[1]):
                    return True
            elif op in (c.ASSERT, c.ASSERT_NOT) and walk(arg[1], inside):
                return True
        return False

    try:
        return walk(parsed, False)
    except RecursionError:
        return True


@lru_cache(maxsize=1024)
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# --------------------------------------------------------------------------- literals

_Set = frozenset[str]
_EMPTY: _Set = frozenset({""})


def _product(a: _Set, b: _Set) -> _Set | None:
    if len(a) * len(b) > MAX_LITERALS:
        return None
    return frozenset(x + y for x in a for y in b)


def _score(texts: _Set) -> tuple[int, int]:
    """Longer shortest text first, then fewer alternatives: what git grep narrows best."""
    return min(len(t) for t in texts), -len(texts)


def _best(candidates: Iterable[_Set]) -> _Set | None:
    usable = [c for c in candidates if c and all(c)]
    return max(usable, key=_score) if usable else None


def _sre() -> tuple[Any, Any]:
    """Python's own regex parser and its constants (private modules, hence untyped)."""
    import importlib

    return importlib.import_module("re._parser"), importlib.import_module("re._constants")


def _info(items: Iterable[Any], ignore_case: bool) -> tuple[_Set | None, _Set | None]:
    """Of a parsed sequence: every string it matches (if they are few) and texts one of
    which every match holds; None where it cannot be said."""
    exact: _Set | None = _EMPTY
    run: _Set = _EMPTY  # the exact strings of the run of nodes read so far
    runs: list[_Set] = []
    for op, arg in items:
        node_exact, node_required = _node(op, arg, ignore_case)
        if node_exact is not None:
            joined = _product(run, node_exact)
            if joined is not None:
                run = joined
            else:
                runs.append(run)
                run = node_exact
            exact = _product(exact, node_exact) if exact is not None else None
        else:
            runs.append(run)
            run = _EMPTY
            exact = None
            if node_required is not None:
                runs.append(node_required)
    runs.append(run)
    return exact, _best(runs)


def _node(op: Any, arg: Any, ignore_case: bool) -> tuple[_Set | None, _Set | None]:
    _, c = _sre()
    if op is c.AT or op in (c.ASSERT, c.ASSERT_NOT):
        return _EMPTY, None  # zero width: the texts around it stay adjacent
    if op is c.SUBPATTERN:
        _group, add_flags, del_flags, body = arg
        folded = (ignore_case or bool(add_flags & re.IGNORECASE)) and not (
            del_flags & re.IGNORECASE
        )
        return _info(body, folded)
    if op is c.ATOMIC_GROUP:
        return _info(arg, ignore_case)
    if op is c.BRANCH:
        infos = [_info(alt, ignore_case) for alt in arg[1]]
        exacts = [e for e, _ in infos]
        if all(e is not None for e in exacts):
            union: _Set = frozenset().union(*(e for e in exacts if e is not None))
            if len(union) > MAX_LITERALS:
                return None, None
            return union, _best([union])
        required = [r if r is not None else e for e, r in infos]
        if any(r is None or not all(r) for r in required):
            return None, None
        union = frozenset().union(*(r for r in required if r is not None))
        return None, (union if len(union) <= MAX_LITERALS else None)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, high, body = arg
        if low == 0:
            return None, None
        body_exact, body_required = _info(body, ignore_case)
        if body_exact is not None and low == high and low <= 8:
            total: _Set | None = _EMPTY
            for _ in range(low):
                total = _product(total, body_exact) if total is not None else None
            if total is not None:
                return total, None
        return None, _best([body_exact or frozenset(), body_required or frozenset()])
    if ignore_case:
        return None, None  # a letter stands for its other cases too
    if op is c.LITERAL:
        return frozenset({chr(arg)}), None
    if op is c.IN:
        chars = set()
        for sub_op, sub_arg in arg:
            if sub_op is not c.LITERAL:
                return None, None  # a range, a category or a negation: many characters
            chars.add(chr(sub_arg))
        return (frozenset(chars), None) if len(chars) <= MAX_LITERALS else (None, None)
    return None, None  # any character, a category, a back reference: unknown text


@lru_cache(maxsize=1024)
def literals(pattern: str) -> tuple[str, ...] | None:
    """Fixed texts, one of which is in every line ``pattern`` matches; None if there are none.

    Read off Python's own parse of the expression, so the prefilter and the final match
    can never disagree about what the expression means."""
    parser, _ = _sre()
    try:
        parsed = parser.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    try:
        exact, required = _info(list(parsed), ignore_case)
    except RecursionError:  # groups nested hundreds deep: search every line instead
        return None
    found = _best([exact or frozenset(), required or frozenset()])
    if found is None or any(not text or "\n" in text or "\r" in text for text in found):
        return None
    return tuple(sorted(found))


def fixed_texts(refs: Iterable[Ref]) -> tuple[list[str], bool]:
    """The fixed strings git grep must search for ``refs``, and whether some regex has no
    literal, so that every line must be read."""
    texts: list[str] = []
    every_line = False
    for ref in refs:
        if isinstance(ref, Reference):
            found = literals(ref.regex)
            if found is None:
                every_line = True
            else:
                texts += found
        else:
            texts.append(ref)
    return list(dict.fromkeys(texts)), every_line
