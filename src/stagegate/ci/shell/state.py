"""What a script has done so far, as the walker carries it along one path of the
script: variables, functions, what it wrote to ``$GITHUB_ENV`` and ``$GITHUB_OUTPUT``,
its pattern downloads awaiting exclusions, and what it did that the reading is told
(``effects``). Where a condition cannot be decided the walker follows each path with a
copy (``State.copy``) and ``join``s them: a value the paths agree on stays, one they
set apart becomes unknown and says where.
"""

from __future__ import annotations

from typing import Any

from stagegate.ci.transfers import Transfer
from stagegate.errors import Loc
from stagegate.model.ghexpr import Unknown, Value
from stagegate.records import replace

UNSET: Any = object()
"""A variable ``unset`` removed: unset however the environment has it."""
CWD = " cwd"
"""The folder the script is in after a ``cd``, kept with its variables (a name no script
can write): from the step's folder (its ``working-directory``), or absolute; unknown where
paths went to different folders."""
DIRS = " dirs"
"""The folders ``pushd`` left, the latest first (bash's ``DIRSTACK`` past its top): an
``Array`` of ``CWD`` values, where ``popd`` goes back to; unset where empty (a child
process starts with none); unknown where paths pushed different folders."""
MAYBE = " maybe"
"""Set where the commands being read may not run in a run that gets this far: in a path
of a condition stagegate cannot decide, or after a path that jumped past them (``exit 0``,
``return``, ``continue``), up to where the jump lands."""

Effect = tuple[Any, ...]
"""("add", transfer), ("files", loc, words, transfer|None, folder), ("note", loc, value),
("run", loc, value) (the unknown id of the run a ``gh run download`` reads),
("command", loc, words, variables, folder, maybe) (``Host.on_command``) or ("stopped", loc,
message): jq or yq stops with an error there (``Host.stopped``)."""
Chain = tuple[Effect, "Chain"] | None
"""Effects, the latest first, sharing what paths have in common."""


class State:
    """One path's state; cheap to copy (effects are a shared chain)."""

    __slots__ = (
        "captured",
        "effects",
        "exported",
        "functions",
        "heredoc",
        "outputs",
        "pending",
        "used",
        "vars",
        "writes",
    )

    def __init__(self) -> None:
        self.vars: dict[str, Value] = {}
        self.exported: set[str] = set()
        self.functions: dict[str, Any] = {}
        self.writes: dict[str, Value] = {}
        """What the step writes to ``$GITHUB_ENV``: the later steps' env, not its own."""
        self.outputs: dict[str, Value] = {}
        """What the step writes to ``$GITHUB_OUTPUT`` (its ``steps.ID.outputs``)."""
        self.pending: list[tuple[Transfer, str | None]] = []
        """Pattern downloads (with their ``-D`` folder), held until the script's end so
        that a later ``rm -rf`` of a downloaded artifact's folder counts as an exclusion."""
        self.used = False
        """Whether a command used the downloaded files: an ``rm`` after that is clean-up."""
        self.heredoc: dict[str, tuple[str, str, list[str]]] = {}
        """An env or output file -> the ``NAME<<DELIMITER`` value being written to it."""
        self.captured: dict[int, tuple[Value, ...] | Unknown] = {}
        """What each open capture (``$(...)``, a pipe) has received so far."""
        self.effects: Chain = None

    def copy(self) -> State:
        made = State.__new__(State)
        made.vars = dict(self.vars)
        made.exported = set(self.exported)
        made.functions = dict(self.functions)
        made.writes = dict(self.writes)
        made.outputs = dict(self.outputs)
        made.pending = list(self.pending)
        made.used = self.used
        made.heredoc = dict(self.heredoc)
        made.captured = dict(self.captured)
        made.effects = self.effects
        return made

    def emit(self, effect: Effect) -> None:
        self.effects = (effect, self.effects)


def replay(chain: Chain, stop: Chain = None) -> list[Effect]:
    """The effects of ``chain`` after ``stop`` (a chain it extends), in order."""
    out: list[Effect] = []
    while chain is not None and chain is not stop:
        out.append(chain[0])
        chain = chain[1]
    out.reverse()
    return out


UNDECIDED = "whose condition stagegate cannot decide"


def join(
    states: list[State], base: State, where: Loc, construct: str, why: str = UNDECIDED
) -> State:
    """The paths' states as one: values they agree on kept, the others unknown (saying
    ``construct`` at ``where`` set them apart, and ``why``); each path's new effects, in turn."""
    if len(states) == 1:
        return states[0]
    made = states[0].copy()
    made.vars = _merged([s.vars for s in states], where, construct, "$", why)
    made.writes = _merged([s.writes for s in states], where, construct, "env.", why)
    made.outputs = _merged([s.outputs for s in states], where, construct, "steps.*.outputs.", why)
    made.exported = set().union(*(s.exported for s in states))
    made.functions = {
        name: body
        for name, body in states[0].functions.items()
        if all(s.functions.get(name) is body for s in states)
    }
    made.used = any(s.used for s in states)
    made.heredoc = states[0].heredoc if all(s.heredoc == states[0].heredoc for s in states) else {}
    made.pending = _pending(states, where)
    made.captured = {
        key: seen
        if all(s.captured.get(key) == seen for s in states)
        else Unknown(
            "$(...)", f"what is printed depends on {construct} at {where.file}:{where.line}"
        )
        for key, seen in states[0].captured.items()
    }
    chain = base.effects
    for state in states:
        for effect in replay(state.effects, base.effects):
            chain = (effect, chain)
    made.effects = chain
    return made


def _merged(
    tables: list[dict[str, Value]], where: Loc, construct: str, prefix: str, why: str
) -> dict[str, Value]:
    out: dict[str, Value] = {}
    names = dict.fromkeys(name for table in tables for name in table)
    for name in names:
        seen = [table.get(name, UNSET) for table in tables]
        if seen[0] is not UNSET and all(v == seen[0] for v in seen):
            out[name] = seen[0]
            continue
        what = f"{prefix}{name}"
        out[name] = Unknown(
            what,
            f"{what} is set differently by {construct} at {where.file}:{where.line}, {why}; "
            f"bind env.{name}",
        )
    return out


def _pending(states: list[State], where: Loc) -> list[tuple[Transfer, str | None]]:
    """The pattern downloads of every path; where paths exclude different artifacts from
    one, it keeps what all of them exclude, and its selection is noted as unresolved."""
    first = states[0].pending
    if all(s.pending == first for s in states):
        return list(first)
    out: list[tuple[Transfer, str | None]] = []
    seen: dict[tuple[Any, ...], list[tuple[Transfer, str | None]]] = {}
    for state in states:
        for transfer, folder in state.pending:
            key = (transfer.loc, transfer.value, transfer.kind, transfer.run)
            seen.setdefault(key, []).append((transfer, folder))
    for versions in seen.values():
        transfer, folder = versions[0]
        common = tuple(x for x in transfer.exclude if all(x in t.exclude for t, _f in versions))
        if any(t.exclude != transfer.exclude for t, _ in versions):
            states[0].emit(
                (
                    "note",
                    where,
                    Unknown(
                        f"{transfer.text()}",
                        "what this download keeps depends on a condition stagegate cannot "
                        "decide (a removal on one path only); bind what it removes",
                    ),
                )
            )
        out.append((replace(transfer, exclude=common), folder))
    return out


# --------------------------------------------------------------------------- jumps


class Jump(Exception):
    """``break``, ``continue``, ``return``, ``exit``: where the walk goes on."""


class Break(Jump):
    """``break N`` (``again``: ``continue N``)."""

    def __init__(self, levels: int = 1, again: bool = False) -> None:
        super().__init__(levels)
        self.levels, self.again = levels, again


class Exit(Jump):
    """``exit N`` (None: a code stagegate does not know)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(code)
        self.code = code


class Return(Jump):
    """``return`` from a function."""


class Dead(Jump):
    """No path goes on from here (each one jumped elsewhere, or failed)."""
