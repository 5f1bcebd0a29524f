"""Shell patterns (``*``, ``?``, ``[...]``), matched as bash matches them, in time
proportional to the text times the pattern (no backtracking), every step charged to
the reading's budget: ``case`` items, ``[[ X == P ]]`` and the trimming and
replacing parameter expansions (``${X%%.*}``, ``${X//a/b}``).

A pattern is written as (character, literal) pairs: a quoted or escaped character is
itself, the others are pattern characters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stagegate.records import record

CLASSES: dict[str, Callable[[str], bool]] = {
    "alnum": lambda c: c.isascii() and c.isalnum(),
    "alpha": lambda c: c.isascii() and c.isalpha(),
    "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
    "digit": lambda c: "0" <= c <= "9",
    "graph": lambda c: 33 <= ord(c) <= 126,
    "lower": lambda c: "a" <= c <= "z",
    "print": lambda c: 32 <= ord(c) <= 126,
    "punct": lambda c: 33 <= ord(c) <= 126 and not c.isalnum(),
    "space": lambda c: c in " \t\n\r\f\v",
    "upper": lambda c: "A" <= c <= "Z",
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}
"""The POSIX character classes, as the C locale has them (ASCII)."""


class Unread(Exception):
    """A pattern stagegate does not read (an extended glob, an equivalence class)."""


@record
class Bracket:
    """A bracket expression: its characters, ranges and classes; ``negate``: ``[!...]``."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    classes: tuple[str, ...]
    negate: bool

    def has(self, char: str) -> bool:
        found = (
            char in self.chars
            or any(low <= char <= high for low, high in self.ranges)
            or any(CLASSES[name](char) for name in self.classes)
        )
        return found != self.negate


Atom = str | Bracket | None
"""A character, a bracket, ``None`` for ``?``; ``*`` is kept apart (``Pattern.stars``)."""


@record
class Pattern:
    """A pattern as atoms; ``stars[i]``: a ``*`` stands before atom ``i`` (and at the
    end for ``i == len(atoms)``)."""

    atoms: tuple[Atom, ...]
    stars: tuple[bool, ...]


def compile_pattern(chars: Sequence[tuple[str, bool]]) -> Pattern:
    """The pattern of ``chars`` (character, literal); Unread for extended globs and
    equivalence or collating classes."""
    atoms: list[Atom] = []
    stars = [False]
    i = 0
    while i < len(chars):
        char, literal = chars[i]
        if literal:
            atoms.append(char)
            stars.append(False)
            i += 1
            continue
        if char in "?*+@!" and i + 1 < len(chars) and chars[i + 1] == ("(", False):
            raise Unread(f"the extended pattern {char}(...)")
        if char == "*":
            stars[-1] = True
            i += 1
            continue
        if char == "\\" and i + 1 < len(chars):
            atoms.append(chars[i + 1][0])
            stars.append(False)
            i += 2
            continue
        if char == "[":
            found = _bracket(chars, i)
            if found is not None:
                bracket, i = found
                atoms.append(bracket)
                stars.append(False)
                continue
        atoms.append(None if char == "?" else char)
        stars.append(False)
        i += 1
    return Pattern(tuple(atoms), tuple(stars))


def _bracket(chars: Sequence[tuple[str, bool]], start: int) -> tuple[Bracket, int] | None:
    """The bracket expression at ``start`` and the index after it; None where no ``]``
    closes it (the ``[`` is then itself)."""
    i = start + 1
    negate = i < len(chars) and chars[i][0] in "!^" and not chars[i][1]
    if negate:
        i += 1
    members: set[str] = set()
    ranges: list[tuple[str, str]] = []
    classes: list[str] = []
    first = True
    while i < len(chars):
        char, literal = chars[i]
        if char == "]" and not literal and not first:
            return Bracket(frozenset(members), tuple(ranges), tuple(classes), negate), i + 1
        first = False
        if char == "[" and not literal and i + 1 < len(chars) and chars[i + 1][0] in ":=.":
            kind = chars[i + 1][0]
            text = "".join(c for c, _ in chars[i + 2 :])
            end = text.find(kind + "]")
            if end < 0:
                members.add(char)
                i += 1
                continue
            name = text[:end]
            if kind != ":" or name not in CLASSES:
                raise Unread(f"the bracket expression [{kind}{name}{kind}]")
            classes.append(name)
            i += 2 + end + 2
            continue
        if char == "\\" and not literal and i + 1 < len(chars):
            i += 1
            char = chars[i][0]
        if i + 2 < len(chars) and chars[i + 1] == ("-", False) and chars[i + 2][0] != "]":
            high = chars[i + 2][0]
            if high < char:
                raise Unread(f"the reversed range {char}-{high}")
            ranges.append((char, high))
            i += 3
            continue
        members.add(char)
        i += 1
    return None


def _step(atom: Atom, char: str) -> bool:
    if atom is None:
        return True
    if isinstance(atom, str):
        return atom == char
    return atom.has(char)


class Matcher:
    """``pattern`` run over texts, charging ``charge`` one unit per state and character."""

    def __init__(self, pattern: Pattern, charge: Callable[[int], None]) -> None:
        self.pattern = pattern
        self.charge = charge

    def ends(self, text: str, start: int = 0, *, backward: bool = False) -> list[int]:
        """Every length ``n`` such that the pattern matches ``text[start:start+n]``
        (``backward``: ``text[len-n:]``, matched from its end), in increasing order."""
        atoms, stars = self.pattern.atoms, self.pattern.stars
        if backward:
            atoms, stars = atoms[::-1], stars[::-1]
            text = text[::-1]
        count = len(atoms)
        states = {0}
        found: list[int] = []
        length = 0
        pos = start
        while True:
            if count in states:
                found.append(length)
            if pos >= len(text) or not states:
                return found
            self.charge(len(states))
            char = text[pos]
            nxt: set[int] = set()
            for state in states:
                if stars[state]:
                    nxt.add(state)
                if state < count and _step(atoms[state], char):
                    nxt.add(state + 1)
            states = nxt
            pos += 1
            length += 1

    def fullmatch(self, text: str) -> bool:
        ends = self.ends(text)
        return bool(ends) and ends[-1] == len(text)


def trim(value: str, op: str, matcher: Matcher) -> str:
    """``${X#P}``, ``${X##P}`` (shortest, longest prefix removed), ``${X%P}``,
    ``${X%%P}`` (shortest, longest suffix removed), as bash computes them."""
    if op in ("#", "##"):
        ends = matcher.ends(value)
        if not ends:
            return value
        return value[(ends[0] if op == "#" else ends[-1]) :]
    ends = matcher.ends(value, backward=True)
    if not ends:
        return value
    cut = ends[0] if op == "%" else ends[-1]
    return value[: len(value) - cut]


def replace(value: str, op: str, matcher: Matcher, new: str) -> str:
    """``${X/P/N}`` (the first longest match), ``${X//P/N}`` (each), ``${X/#P/N}``
    (the longest at the start), ``${X/%P/N}`` (the longest at the end), as bash
    computes them: an empty text is replaced where the pattern matches it."""
    if op == "/#":
        ends = matcher.ends(value)
        return new + value[ends[-1] :] if ends else value
    if op == "/%":
        ends = matcher.ends(value, backward=True)
        return value[: len(value) - ends[-1]] + new if ends else value
    if not matcher.pattern.atoms and not any(matcher.pattern.stars):
        return value  # an empty pattern replaces nothing
    if not value:
        return new if matcher.ends(value) else value
    out: list[str] = []
    pos = 0
    while pos < len(value):
        ends = matcher.ends(value, pos)
        longest = ends[-1] if ends else 0
        if longest:
            out.append(new)
            pos += longest
            if op == "/":
                out.append(value[pos:])
                return "".join(out)
            continue
        out.append(value[pos])
        pos += 1
    return "".join(out)
