"""The work budget of the readers of scripts: ``run:`` scripts read as shell
(``ci.shell``), the jq and yq expressions they run (``ci.jq``) and PowerShell
(``ci.pwsh``) share one, so that no script can make a reading slow or large.

Three limits, one for each way a few bytes of script can ask for unbounded work:

- ``MAX_VALUE``: a value longer than this (characters) is not built; it is unknown,
  and reported at its line (doubling assignments ``A="$A$A"``, a jq ``.+.`` chain).
- ``MAX_WORK``: the units of work one step's script may use (each command, loop turn,
  word and jq value built, each step of a pattern match); past it the script is read no
  further, and what it would still do is unresolved at the line it stopped at (three
  nested loops of a hundred words each). ``MAX_READING`` bounds all the scripts of one
  reading together.
- ``MAX_DEPTH``: constructs nested deeper than this (``$(...)`` in ``$(...)``, ``if``
  in ``if``, jq's pipes and parentheses) are not read, so every walk over them is shallow.

``OverBudget`` is raised where work passes the budget; the reader of the script turns
it into an unresolved value at its line: a command never stops on it, and never with
exit 70.
"""

from __future__ import annotations

from stagegate.errors import Loc

MAX_VALUE = 1_000
"""Longest value a script reader builds (characters; the glob limit)."""
MAX_WORK = 50_000
"""Units of work one step's script may use, with the scripts it calls and the jq it runs."""
MAX_READING = 1_000_000
"""Units of work all the scripts of one reading of the workflows may use together."""
MAX_DEPTH = 40
"""Deepest nesting of constructs a script reader follows."""


class OverBudget(Exception):
    """The work of a reading passed its budget: ``why``, in the user's words."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why
        self.where: tuple[Loc, str] | None = None
        """Where the reader stopped: the location and the text of the line."""


class Budget:
    """Units of work left: ``charge`` takes them, and raises OverBudget when none are
    left. A ``child`` budget is at most what its parent has left; ``settle`` takes what
    the child used from the parent (one counter per reader: charging is one subtraction)."""

    __slots__ = ("left", "limit", "parent", "what")

    def __init__(self, limit: int, what: str = "", parent: Budget | None = None) -> None:
        self.limit = limit
        self.left = limit
        self.what = what or f"more than {limit:,} units of work"
        self.parent = parent

    def charge(self, units: int = 1) -> None:
        self.left -= units
        if self.left < 0:
            raise OverBudget(self.what)

    def child(self, limit: int, what: str = "") -> Budget:
        """A budget of at most ``limit`` units, and no more than this one has left."""
        if self.left < limit:
            made = Budget(max(self.left, 0), self.what, self)
        else:
            made = Budget(limit, what, self)
        return made

    def settle(self) -> None:
        """Take what this budget used from its parent."""
        if self.parent is not None:
            self.parent.left -= self.limit - max(self.left, 0)
