"""The splits of ``run:`` scripts with ``${{ }}``, remembered per text and per what
each of their expressions renders to (``Shell.parsed``).

GitHub substitutes ``${{ }}`` before the shell reads the script, so the split of such
a script depends on its expressions' values; it depends on nothing else, and on a
value only through what the shell reader writes into the line for it (``rendering``):
the text of a string or of a number, or a mark for a value it keeps out of band (its
own values, looked up again in each reading's table). A script is read in every
context (matrix row, caller) and most of its expressions render alike in most of
them: a reading evaluates the expressions a remembered split evaluated, in the same
order, and reuses that split where every one renders the same (the split would have
evaluated exactly these, in this order, and made the same words); else it splits the
script, starting from the values already evaluated (each expression is evaluated
once per reading, as without the memo).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stagegate.ci.shellwords import SPECIALS
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Sym, Unknown, Value

if TYPE_CHECKING:
    from stagegate.ci.shell import Shell

Rendering = tuple[str, str]
"""``("text", s)``: a string written into the line (escaped); ``("raw", s)``: the text
of another plain value; ``("mark", "")``: a value kept in the table."""
Command = tuple[int, list[str]]

MAX_TEXTS = 512
MAX_SPLITS = 32
"""Splits remembered per script text (one per set of renderings, e.g. per Python version)."""


def rendering(value: Value) -> Rendering:
    """What the shell reader writes into the line for an expression's ``value``."""
    if isinstance(value, str) and not isinstance(value, ghexpr.Tagged) and value not in SPECIALS:
        return ("text", value)
    if isinstance(value, Sym | Unknown | ghexpr.Tagged):
        return ("mark", "")
    return ("raw", ghexpr.to_text(value))


class Split:
    """One split of a script: the expressions it evaluated (source, parsed, rendering),
    its commands, table (with the table slots of the marked values) and here-documents."""

    __slots__ = ("commands", "expressions", "heredocs", "slots", "table")

    def __init__(
        self,
        expressions: tuple[tuple[str, ghexpr.Node, Rendering], ...],
        commands: list[Command],
        table: tuple[Value, ...],
        slots: tuple[tuple[int, int], ...],
        heredocs: dict[int, list[tuple[int, str]]],
    ) -> None:
        self.expressions = expressions
        self.commands = commands
        self.table = table
        self.slots = slots
        self.heredocs = heredocs


class Evaluated:
    """The expressions one reading of a script evaluated, in order: (source, parsed,
    value, rendering); ``used``: how many of them the split being made has taken."""

    def __init__(self, evaluate: Callable[[str, ghexpr.Node], Value]) -> None:
        self.evaluate = evaluate
        self.values: list[tuple[str, ghexpr.Node, Value, Rendering]] = []
        self.used = 0
        self.slots: list[tuple[int, int]] = []
        """(table slot, expression) of each marked value of the split being made."""

    def same(self, split: Split) -> bool:
        """Whether every expression ``split`` evaluated renders the same here (each
        evaluated once, at its position, as the split of the script would)."""
        values = self.values
        for i, (source, node, rendered) in enumerate(split.expressions):
            if i == len(values):
                value = self.evaluate(source, node)
                values.append((source, node, value, rendering(value)))
            if values[i][0] != source or values[i][3] != rendered:
                return False
        return len(values) == len(split.expressions)

    def take(self, source: str, parse: Callable[[], ghexpr.Node]) -> tuple[Value, Rendering]:
        """The value of the next expression of the split being made, ``source``."""
        position = self.used
        self.used += 1
        if position < len(self.values) and self.values[position][0] == source:
            _source, _node, value, rendered = self.values[position]
            return value, rendered
        del self.values[position:]
        node = parse()
        value = self.evaluate(source, node)
        rendered = rendering(value)
        self.values.append((source, node, value, rendered))
        return value, rendered

    def split(self, commands: list[Command], table: list[Value], heredocs: Any) -> Split:
        return Split(
            tuple((source, node, rendered) for source, node, _value, rendered in self.values),
            commands,
            tuple(table),
            tuple(self.slots),
            heredocs,
        )

    def table(self, split: Split) -> list[Value]:
        """``split``'s table with this reading's marked values in their slots."""
        table = list(split.table)
        for slot, i in split.slots:
            table[slot] = self.values[i][2]
        return table


SPLITS: dict[str, list[Split]] = {}
"""A script text with ``${{ }}`` -> its splits, the most recent last."""


def remember(text: str, split: Split) -> None:
    splits = SPLITS.get(text)
    if splits is None:
        if len(SPLITS) >= MAX_TEXTS:
            SPLITS.pop(next(iter(SPLITS)))
        splits = SPLITS[text] = []
    if len(splits) >= MAX_SPLITS:
        splits.pop(0)
    splits.append(split)


def parsed(shell: Shell) -> list[Command]:
    """The commands of ``shell``'s script (a text with ``${{ }}``): a remembered split
    where its expressions render the same, else a new one (remembered unless splitting
    reported something, which a reused split would not report again)."""
    evaluated = shell.evaluated = Evaluated(shell.expression)
    for split in SPLITS.get(shell.text, ()):
        if evaluated.same(split):
            shell.table = evaluated.table(split)
            shell.heredocs = split.heredocs
            return split.commands
    shell.noted = False
    commands = list(shell.commands())
    if not shell.noted:
        remember(shell.text, evaluated.split(commands, shell.table, shell.heredocs))
    return commands
