"""``[[ ]]``, ``[ ]`` and ``test``, decided as bash decides them where their values
are known: string and pattern comparisons, ``-n``/``-z``, integer comparisons of
decimal integers, ``!``, ``&&``, ``||``, and ``-f``/``-e`` of a file the repository holds
(it is in the checkout, as yq reads it: build-docs' `[[ -f ci/versions.yml ]]`); any other
test of files, one of a file the repository does not hold (an earlier step may make it),
or one on an unknown value is undecided (None)."""

from __future__ import annotations

import operator
from collections.abc import Callable

from stagegate.ci.shell import words
from stagegate.ci.shell.nodes import TestExpr, Word
from stagegate.ci.shell.patterns import Matcher, Unread, compile_pattern
from stagegate.ci.shell.values import Failed, Glob, opaque
from stagegate.model.ghexpr import Value

Status = bool | None
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "-eq": operator.eq,
    "-ne": operator.ne,
    "-lt": operator.lt,
    "-le": operator.le,
    "-gt": operator.gt,
    "-ge": operator.ge,
}
NUMBER_CHARS = frozenset("0123456789")
PATTERN_CHARS = frozenset("*?[]\\+@!()|")
"""The characters a pattern may read as more than themselves (extended globs too)."""


def decide(expr: TestExpr, ctx: words.Context, plain: bool = False) -> Status:
    """The truth of a ``[[ ]]`` expression (``plain``: of ``[ ]``, where ``==`` is no
    pattern match)."""
    op, operands = expr.op, expr.operands
    if op == "[":
        inner = operands[0]
        assert isinstance(inner, TestExpr)
        return decide(inner, ctx, True)
    if op in ("!", "("):
        inner = operands[0]
        assert isinstance(inner, TestExpr)
        found = decide(inner, ctx, plain)
        return found if op == "(" or found is None else not found
    if op in ("&&", "||"):
        left, right = operands
        assert isinstance(left, TestExpr) and isinstance(right, TestExpr)
        first = decide(left, ctx, plain)
        if first is (op == "||"):
            return first
        second = decide(right, ctx, plain)
        if first is None:
            return None if second is not (op == "||") else second
        return second
    if op == "":
        value = _value(operands[0], ctx)
        return None if value is None else value != ""
    if op in ("-n", "-z"):
        value = _value(operands[0], ctx)
        return None if value is None else (value != "") == (op == "-n")
    if op in ("-f", "-e"):
        value = _value(operands[0], ctx)
        return True if value is not None and ctx.in_repository(value) else None
    if len(operands) == 2:
        return _binary(op, operands[0], operands[1], ctx, plain)
    return None


def _value(operand: Word | TestExpr, ctx: words.Context) -> str | None:
    if not isinstance(operand, Word):
        return None
    value = words.expand(operand, ctx)
    if not isinstance(value, str) or isinstance(value, Glob):
        return None
    return str(value)


def _binary(
    op: str, left: Word | TestExpr, right: Word | TestExpr, ctx: words.Context, plain: bool
) -> Status:
    subject = _value(left, ctx)
    if subject is None or not isinstance(right, Word):
        return None
    if op in ("==", "=", "!="):
        if plain:
            other = _value(right, ctx)
            same: Status = None if other is None else _same(subject, other)
        else:
            same = match(subject, right, ctx)
        return None if same is None else same == (op != "!=")
    if op in COMPARE:
        other = _value(right, ctx)
        if other is None:
            return None
        numbers = [_decimal(t) for t in (subject, other)]
        if numbers[0] is None or numbers[1] is None:
            return None  # bash reads other text as an expression: not decided
        return COMPARE[op](numbers[0], numbers[1])
    if op in ("<", ">"):
        other = _value(right, ctx)
        if other is None or not (subject + other).isascii() or opaque(subject + other):
            return None
        return subject < other if op == "<" else subject > other
    return None


def _decimal(text: str) -> int | None:
    stripped = text.strip()
    digits = stripped.lstrip("-")
    if not digits or not set(digits) <= NUMBER_CHARS or (len(digits) > 1 and digits[0] == "0"):
        return None
    return int(stripped)


def _same(subject: str, other: str) -> Status:
    """Whether two texts are equal; where one holds the workspace's path, which
    stagegate does not know, only the same text is decided (equal)."""
    if subject == other:
        return True
    return None if opaque(subject) or opaque(other) else False


def match(subject: str, pattern: Word, ctx: words.Context) -> Status:
    """Whether ``subject`` matches the pattern word (``[[ == ]]``, ``case``); None where
    the pattern is not read, or the subject holds the workspace's path and the pattern
    is not that very text."""
    try:
        chars = words.pattern_chars(pattern, ctx)
        if opaque(subject) or opaque("".join(c for c, _ in chars)):
            literal = all(quoted or c not in PATTERN_CHARS for c, quoted in chars)
            return _same(subject, "".join(c for c, _ in chars)) if literal else None
        compiled = compile_pattern(chars)
    except (Failed, Unread):
        return None
    return Matcher(compiled, ctx.charge).fullmatch(subject)


def decide_words(argv: list[Value]) -> Status:
    """``test ARGS`` / ``[ ARGS ]`` as a command, on its expanded words."""
    if argv and argv[-1] == "]":
        argv = argv[:-1]
    negate = False
    while argv and argv[0] == "!" and len(argv) > 1:
        negate, argv = not negate, argv[1:]
    if not all(isinstance(a, str) and not isinstance(a, Glob) for a in argv):
        return None
    texts = [str(a) for a in argv]
    found: Status = None
    if len(texts) == 0:
        found = False
    elif len(texts) == 1:
        found = texts[0] != ""
    elif len(texts) == 2 and texts[0] in ("-n", "-z"):
        found = (texts[1] != "") == (texts[0] == "-n")
    elif len(texts) == 3 and texts[1] in ("=", "==", "!="):
        same = _same(texts[0], texts[2])
        found = None if same is None else same == (texts[1] != "!=")
    elif len(texts) == 3 and texts[1] in COMPARE:
        a, b = _decimal(texts[0]), _decimal(texts[2])
        found = None if a is None or b is None else COMPARE[texts[1]](a, b)
    return None if found is None else found != negate
