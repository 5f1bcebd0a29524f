"""The POSIX regular expressions of ``sed`` (basic, and extended with ``-E``/``-r``),
matched as POSIX says: the leftmost match, and of those the longest; each
quantified atom and group, left to right, as long as the whole match allows.

The subset read is what names are built with: characters, ``.``, bracket expressions
(ranges, ``[:classes:]``), ``^`` and ``$`` at the ends, ``*``, ``+``, ``?``,
``{m,n}`` on a single atom, and groups (``\\(...\\)``, ``(...)``) that are not
repeated, for ``\\1``...``\\9``. Alternation, repeated groups, back-references in the
pattern and GNU's ``\\w``-style escapes are ``Unread``: the value is then unknown,
never matched another way. Matching takes time proportional to the text's length
squared times the pattern's, every step charged to the reading's budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from stagegate.ci.shell.patterns import CLASSES
from stagegate.records import record


class Unread(Exception):
    """A regular expression, or a part of one, stagegate does not read."""


@record
class Slot:
    """A single-character atom repeated ``low`` to ``high`` (None: unbounded) times:
    ``chars``/``ranges``/``classes`` it matches (``negate``: all but those; ``any``: ``.``)."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    classes: tuple[str, ...]
    negate: bool
    any: bool
    low: int
    high: int | None

    def has(self, char: str, fold: bool) -> bool:
        if self.any:
            return char != "\n"
        found = self._has(char) or (fold and (self._has(char.lower()) or self._has(char.upper())))
        return found != self.negate

    def _has(self, char: str) -> bool:
        return (
            char in self.chars
            or any(low <= char <= high for low, high in self.ranges)
            or any(CLASSES[name](char) for name in self.classes)
        )


@record
class Regex:
    """The slots in order; ``groups[i]``: the slots of group ``i + 1`` (start, end)."""

    slots: tuple[Slot, ...]
    groups: tuple[tuple[int, int], ...]
    start: bool  # anchored with ^
    end: bool  # anchored with $


def parse(text: str, extended: bool) -> Regex:
    """A ``sed`` regular expression; Unread for what is not read here."""
    return _Parser(text, extended).regex()


_SPECIAL_ERE = frozenset("()|{}+?")


class _Parser:
    def __init__(self, text: str, extended: bool) -> None:
        self.text = text
        self.extended = extended
        self.i = 0
        self.slots: list[Slot] = []
        self.groups: list[tuple[int, int]] = []
        self.open: list[int] = []

    def regex(self) -> Regex:
        start = self.text.startswith("^")
        if start:
            self.i = 1
        end = False
        while self.i < len(self.text):
            if self.at_end_anchor():
                end = True
                self.i += 1
                break
            self.item()
        if self.open:
            raise Unread("an unclosed group")
        return Regex(tuple(self.slots), tuple(self.groups), start, end)

    def at_end_anchor(self) -> bool:
        if self.text[self.i] != "$":
            return False
        return self.i == len(self.text) - 1

    def item(self) -> None:
        char = self.text[self.i]
        if (self.extended and char in _SPECIAL_ERE) or (char == "\\" and self.group_escape()):
            self.structure()
            return
        if char == "^" and (self.extended or self.i == 0):
            raise Unread("^ inside the expression")
        if char == "$" and self.extended:
            raise Unread("$ inside the expression")
        if char == "*" and not self.slots_since_group():
            if self.extended:
                raise Unread("* with nothing before it")
            self.i += 1
            self.add(Slot(frozenset("*"), (), (), False, False, 1, 1))
            return
        slot = self.atom()
        self.add(self.quantified(slot))

    def slots_since_group(self) -> bool:
        """Whether an atom stands before, in the current group (a ``*`` there repeats it)."""
        start = self.open[-1] if self.open else 0
        return len(self.slots) > start

    def group_escape(self) -> bool:
        nxt = self.text[self.i + 1 : self.i + 2]
        return not self.extended and nxt in ("(", ")", "|")

    def structure(self) -> None:
        char = self.text[self.i]
        if char == "\\":
            char = self.text[self.i + 1]
            self.i += 1
        self.i += 1
        if char == "(":
            self.open.append(len(self.slots))
            self.groups.append((len(self.slots), -1))
        elif char == ")":
            if not self.open:
                raise Unread("an unmatched )")
            start = self.open.pop()
            index = max(i for i, g in enumerate(self.groups) if g == (start, -1))
            self.groups[index] = (start, len(self.slots))
            if self.i < len(self.text) and self.quantifier_here():
                raise Unread("a repeated group")
        elif char == "|":
            raise Unread("alternation (|)")
        else:
            raise Unread(f"{char} in this place")

    def quantifier_here(self) -> bool:
        rest = self.text[self.i :]
        if self.extended:
            return rest[:1] in ("*", "+", "?", "{")
        return rest[:1] == "*" or rest[:2] in ("\\+", "\\?", "\\{")

    def add(self, slot: Slot) -> None:
        self.slots.append(slot)

    def atom(self) -> Slot:
        char = self.text[self.i]
        if char == ".":
            self.i += 1
            return Slot(frozenset(), (), (), False, True, 1, 1)
        if char == "[":
            return self.bracket()
        if char == "\\":
            if self.i + 1 == len(self.text):
                raise Unread("a trailing backslash")
            nxt = self.text[self.i + 1]
            self.i += 2
            if nxt.isdigit():
                raise Unread(f"the back-reference \\{nxt} in a pattern")
            if nxt in "nt":
                return _one("\n" if nxt == "n" else "\t")
            if nxt.isalpha() or nxt in "<>`'":
                raise Unread(f"the escape \\{nxt}")
            if not self.extended and nxt in "+?{}":
                raise Unread(f"\\{nxt} in this place")
            return _one(nxt)
        self.i += 1
        return _one(char)

    def bracket(self) -> Slot:
        i = self.i + 1
        negate = self.text[i : i + 1] == "^"
        if negate:
            i += 1
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        classes: list[str] = []
        first = True
        while i < len(self.text):
            char = self.text[i]
            if char == "]" and not first:
                self.i = i + 1
                return Slot(frozenset(chars), tuple(ranges), tuple(classes), negate, False, 1, 1)
            first = False
            if char == "\\":
                raise Unread("a backslash in a bracket expression, which sed versions read apart")
            if self.text.startswith("[:", i):
                end = self.text.find(":]", i + 2)
                name = self.text[i + 2 : end] if end > 0 else ""
                if name not in CLASSES:
                    raise Unread(f"the class [:{name}:]")
                classes.append(name)
                i = end + 2
                continue
            if self.text.startswith(("[=", "[."), i):
                raise Unread("an equivalence or collating class")
            if i + 2 < len(self.text) and self.text[i + 1] == "-" and self.text[i + 2] != "]":
                if self.text[i + 2] < char:
                    raise Unread(f"the reversed range {char}-{self.text[i + 2]}")
                ranges.append((char, self.text[i + 2]))
                i += 3
                continue
            chars.add(char)
            i += 1
        raise Unread("an unclosed bracket expression")

    def quantified(self, slot: Slot) -> Slot:
        low: int = 1
        high: int | None = 1
        found: tuple[int, int | None]
        while self.i < len(self.text):
            rest = self.text[self.i :]
            if rest[:1] == "*":
                step, found = 1, (0, None)
            elif self.extended and rest[:1] in ("+", "?"):
                step, found = 1, (1, None) if rest[0] == "+" else (0, 1)
            elif not self.extended and rest[:2] in ("\\+", "\\?"):
                step, found = 2, (1, None) if rest[1] == "+" else (0, 1)
            elif (self.extended and rest[:1] == "{") or (not self.extended and rest[:2] == "\\{"):
                step, found = self.interval(rest)
            else:
                break
            if (low, high) != (1, 1):
                raise Unread("a repeated repetition")
            self.i += step
            low, high = found
        return Slot(slot.chars, slot.ranges, slot.classes, slot.negate, slot.any, low, high)

    def interval(self, rest: str) -> tuple[int, tuple[int, int | None]]:
        close = "}" if self.extended else "\\}"
        opener = 1 if self.extended else 2
        end = rest.find(close)
        if end < 0:
            raise Unread("an unclosed interval")
        body = rest[opener:end]
        low_text, comma, high_text = body.partition(",")
        if not low_text.isdigit() or (high_text and not high_text.isdigit()):
            raise Unread(f"the interval {{{body}}}")
        low = int(low_text)
        high = None if comma and not high_text else int(high_text) if high_text else low
        if (high is not None and high < low) or low > 255 or (high or 0) > 255:
            raise Unread(f"the interval {{{body}}}")
        return end + len(close), (low, high)


def _one(char: str) -> Slot:
    return Slot(frozenset(char), (), (), False, False, 1, 1)


class Matcher:
    """A parsed expression run over lines, charging ``charge`` for each step."""

    def __init__(self, regex: Regex, fold: bool, charge: Callable[[int], None]) -> None:
        self.regex = regex
        self.fold = fold
        self.charge = charge
        self.line = ""
        self.runs: list[list[int]] = []
        self.begins: bytearray | None = None
        """Where a match of ``line`` can start (``starts``), once per line."""
        self.needed = [
            next(iter(s.chars))
            for s in regex.slots
            if s.low >= 1
            and not s.any
            and not s.negate
            and len(s.chars) == 1
            and not s.ranges
            and not s.classes
            and not fold
        ]
        """Characters every match has: a line without one of them has no match."""
        plain = all(
            s.low == s.high == 1
            and len(s.chars) == 1
            and not (s.any or s.negate or s.ranges or s.classes)
            for s in regex.slots
        )
        self.literal = (
            "".join(next(iter(s.chars)) for s in regex.slots) if plain and not fold else None
        )
        """The text the expression matches, where it is plain characters (no search needed)."""
        dotted = all(
            s.low == s.high == 1
            and (s.any or (len(s.chars) == 1 and not (s.negate or s.ranges or s.classes)))
            for s in regex.slots
        )
        self.dotted = (
            re.compile("".join("." if s.any else re.escape(next(iter(s.chars))) for s in regex.slots))
            if dotted and self.literal is None and not fold and regex.slots
            else None
        )
        """Plain characters and ``.`` (``ubuntu-22.04``): every match has the pattern's
        length, so the leftmost is the only one to find, as Python finds it (no
        repetition: no backtracking), charged as a literal's search is."""

    def prepare(self, line: str) -> None:
        """``runs[k][p]``: how many characters from ``p`` slot ``k``'s atom matches in a
        row (at most its high), for each slot, once per line."""
        if line is self.line and self.runs:
            return
        self.line = line
        self.begins = None
        self.runs = []
        for slot in self.regex.slots:
            self.charge(len(line) + 1)
            run = [0] * (len(line) + 1)
            for p in range(len(line) - 1, -1, -1):
                run[p] = run[p + 1] + 1 if slot.has(line[p], self.fold) else 0
            if slot.high is not None:
                run = [min(r, slot.high) for r in run]
            self.runs.append(run)

    def exists(self, line: str) -> bool:
        """Whether ``line`` holds a match anywhere (a sed address, grep): every start at
        once, in time proportional to the line's length times the pattern's."""
        if self.literal is not None or self.dotted is not None:
            return self.search(line, 0) is not None
        if any(c not in line for c in self.needed):
            return False
        self.prepare(line)
        size = len(line) + 1
        first = bytearray(size)
        first[0] = 1
        if not self.regex.start:
            first = bytearray(b"\x01" * size)
        levels = self.reach(line, 0, first)
        if len(levels) <= len(self.regex.slots):
            return False
        return bool(levels[-1][len(line)]) if self.regex.end else any(levels[-1])

    def reach(self, line: str, start: int, first: bytearray | None = None) -> list[bytearray]:
        """``reach[k][p]``: whether the first ``k`` slots can end at ``p``, from ``start``
        (or from each position ``first`` marks)."""
        size = len(line) + 1
        if first is None:
            first = bytearray(size)
            first[start] = 1
        levels = [first]
        for k, slot in enumerate(self.regex.slots):
            self.charge(size)
            marks = [0] * (size + 1)
            run = self.runs[k]
            previous = levels[-1]
            for p in range(start, size):
                if previous[p] and run[p] >= slot.low:
                    marks[p + slot.low] += 1
                    marks[p + run[p] + 1] -= 1
            level = bytearray(size)
            depth = 0
            for p in range(size):
                depth += marks[p]
                if depth:
                    level[p] = 1
            levels.append(level)
            if not any(level):
                break
        return levels

    def match(self, line: str, start: int) -> tuple[int, list[int]] | None:
        """The longest match starting at ``start``: its end, and each slot's end (in order)."""
        levels = self.reach(line, start)
        if len(levels) <= len(self.regex.slots):
            return None
        last = levels[-1]
        ends = [len(line)] if self.regex.end else range(len(line), -1, -1)
        end = next((e for e in ends if last[e]), None)
        if end is None:
            return None
        return end, self.split(start, end, levels)

    def split(self, start: int, end: int, levels: list[bytearray]) -> list[int]:
        """Each slot's end: left to right, each as long as the match from ``start`` to
        ``end`` allows (POSIX's rule for subexpressions)."""
        slots = self.regex.slots
        # back[k]: the positions from which slots k... can end exactly at ``end``
        back: list[set[int]] = [set() for _ in range(len(slots) + 1)]
        back[len(slots)] = {end}
        for k in range(len(slots) - 1, -1, -1):
            slot, run, after = slots[k], self.runs[k], back[k + 1]
            self.charge(end - start + 1)
            back[k] = {
                p
                for p in range(start, end + 1)
                if levels[k][p] and any(p + n in after for n in range(slot.low, run[p] + 1))
            }
        out: list[int] = []
        pos = start
        for k, slot in enumerate(slots):
            most = self.runs[k][pos]
            pos = next(pos + n for n in range(most, slot.low - 1, -1) if pos + n in back[k + 1])
            out.append(pos)
        return out

    def search(self, line: str, pos: int) -> tuple[int, int, list[int]] | None:
        """The leftmost-longest match at or after ``pos``: (start, end, slot ends)."""
        if self.literal is not None:
            return self._find(self.literal, line, pos)
        if self.dotted is not None:
            return self._find_dotted(self.dotted, line, pos)
        if any(c not in line for c in self.needed):
            return None
        self.prepare(line)
        begins = self.starts(line)
        for start in range(pos, len(line) + 1):
            if self.regex.start and start:
                return None
            if not begins[start]:
                continue
            found = self.match(line, start)
            if found is not None:
                return start, found[0], found[1]
        return None

    def _find(self, text: str, line: str, pos: int) -> tuple[int, int, list[int]] | None:
        """The first ``text`` at or after ``pos`` (the only match there is), as anchored."""
        self.charge(len(line) // 16 + 1)
        if self.regex.start:
            start = 0 if pos == 0 and line.startswith(text) else -1
        elif self.regex.end:
            start = len(line) - len(text) if line.endswith(text) else -1
            start = start if start >= pos else -1
        else:
            start = line.find(text, pos)
        if start < 0:
            return None
        if self.regex.start and self.regex.end and len(text) != len(line):
            return None
        return start, start + len(text), [start + i + 1 for i in range(len(text))]

    def _find_dotted(
        self, pattern: re.Pattern[str], line: str, pos: int
    ) -> tuple[int, int, list[int]] | None:
        """The first match of a fixed-length ``pattern`` at or after ``pos``, as anchored."""
        self.charge(len(line) // 16 + 1)
        width = len(self.regex.slots)
        if self.regex.end:
            start = len(line) - width
            if start < pos or (self.regex.start and start != 0):
                return None
            found = pattern.fullmatch(line, start) is not None
        elif self.regex.start:
            start, found = 0, pos == 0 and pattern.match(line) is not None
        else:
            hit = pattern.search(line, pos)
            start, found = (hit.start(), True) if hit else (-1, False)
        if not found:
            return None
        return start, start + width, [start + i + 1 for i in range(width)]

    def starts(self, line: str) -> bytearray:
        """``starts[p]``: whether a match can start at ``p`` (one pass from the end, in
        time proportional to the line's length times the pattern's), so that ``search``
        matches at no other start."""
        if self.begins is not None:
            return self.begins
        size = len(line) + 1
        after = bytearray(size)
        after[len(line)] = 1
        if not self.regex.end:
            after = bytearray(b"\x01" * size)
        for slot, run in zip(reversed(self.regex.slots), reversed(self.runs), strict=True):
            self.charge(size)
            total = [0] * (size + 1)
            for p in range(size):
                total[p + 1] = total[p] + after[p]
            level = bytearray(size)
            for p in range(size):
                low, high = p + slot.low, p + run[p]
                if run[p] >= slot.low and total[high + 1] > total[low]:
                    level[p] = 1
            after = level
        self.begins = after
        return after

    def group(self, line: str, start: int, ends: list[int], index: int) -> str:
        """The text group ``index`` (1-based) matched."""
        first, last = self.regex.groups[index - 1]
        begin = ends[first - 1] if first else start
        finish = ends[last - 1] if last else start
        return line[begin:finish]
