"""A ``run:`` script read as bash would run it, never running it: parsed with
tree-sitter-bash (``syntax``), walked by stagegate's own evaluator (``walker``) over
symbolic values (``words``, ``patterns``, ``arith``, ``textops``, ``pipes``), its
effects (``commands``, ``effects``) told to the reading that asked (``scopes.Host``).

GitHub substitutes ``${{ }}`` into the text before bash reads it, and so does
``Shell``: known text is written in; a value stagegate keeps symbolic (unknown,
a placeholder, the run's id) is written as a mark the parse hands back as a word
piece of that value.
"""

from __future__ import annotations

import functools
import posixpath
from typing import Any

from stagegate.ci.budget import MAX_WORK, OverBudget
from stagegate.ci.files import invalid
from stagegate.ci.scopes import Host, Scope
from stagegate.ci.shell import memo, syntax
from stagegate.ci.shell.scripts import worth_reading
from stagegate.ci.shell.state import Dead, replay
from stagegate.ci.shell.values import SPECIALS, absolute
from stagegate.ci.shell.walker import Frame, Walker
from stagegate.ci.transfers import MAX_SCRIPT, Site
from stagegate.errors import Loc, LocatedError
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Unknown, Value

__all__ = ["Shell", "interpolated"]

MARKS = range(0xE010, 0xF8FF)
"""Where the mark of a ``${{ }}`` value kept out of the text is chosen from."""


class Shell:
    """A ``run:`` script read as bash: assignments, control flow, loops, functions,
    the text tools, downloads, moves and env writes."""

    def __init__(
        self,
        reader: Host,
        site: Site,
        path: DocPath,
        text: str,
        scope: Scope,
        *,
        script: tuple[str, list[Value], int] | None = None,
        for_outputs: bool = False,
        folder: str | None = None,
    ) -> None:
        """``script``: a repository script a ``run:`` calls, as (its path, the values of
        its positional parameters, how deep the calls go); else the step's ``run:`` at
        ``path`` of the site's document. ``for_outputs``: read for its ``$GITHUB_OUTPUT``
        writes (``outputs``), however little else it does."""
        self.reader = reader
        self.site = site
        self.folder = folder
        """The step's ``working-directory`` as written (None: the job's default)."""
        self.path = path
        self.text = text
        self.scope = scope
        self.script = script
        self.for_outputs = for_outputs
        self.outputs: dict[str, Value] = {}
        """What this step writes to ``$GITHUB_OUTPUT`` (its ``steps.ID.outputs``)."""
        self.writes: dict[str, Value] = {}
        """What this step writes to ``$GITHUB_ENV``: the later steps' env, not its own."""
        self.first = 0
        self.col = 1
        self.locs: dict[int, Loc] = {}
        self.rows: list[int] | None = None
        """Rendered line -> the script's line, where ``${{ }}`` wrote line breaks."""
        self.complete = False
        """Whether the script was read to its end (not: not worth reading, too long, or
        the work budget stopped the reading)."""
        self.quiet = False
        """Read only for the commands the reading wants (``Host.wants_script``): what it
        leaves unresolved moves no artifact, and is not noted."""

    def loc(self, row: int) -> Loc:
        """Where the rendered script's line ``row`` (from 0) is written (made once)."""
        found = self.locs.get(row)
        if found is None:
            found = self.locs[row] = self.locate(row)
        return found

    def locate(self, row: int) -> Loc:
        line = self.rows[row] if self.rows is not None and row < len(self.rows) else row
        if self.script is not None:
            return Loc(self.script[0], line + 1, 1)
        if not self.first:
            base = self.site.doc.loc(self.path)
            block = self.reader.files.block_offset(self.site.doc, self.path)
            self.first = base.line + block
            self.col = 1 if block else base.col
        return Loc(self.site.doc.file, self.first + line, self.col if line == 0 else 1)

    def run(self) -> None:
        if not (self.for_outputs or worth_reading(self.reader.files, self.text)):
            if not self.reader.wants_script(self.site, self.text):
                return
            self.quiet = True
        if len(self.text) > MAX_SCRIPT:
            if "gh run download" in self.text or "GITHUB_ENV" in self.text:
                self.reader.note_unresolved(
                    self.loc(0),
                    Unknown(
                        "run:",
                        f"a script of {len(self.text):,} characters; stagegate reads "
                        f"at most {MAX_SCRIPT:,}: move it to a file and bind what it computes",
                    ),
                )
            return
        rendered, mark, values, expressions = self.render()
        key = self.key(rendered, mark, values)
        budget = self.reader.work.child(MAX_WORK)
        walker = Walker(self.reader, self.site, self.scope, budget)
        walker.home = self.home()
        outcome = memo.READINGS.recall(key, walker.inputs, budget.left) if key is not None else None
        if outcome is not None:
            budget.charge(outcome.cost)  # the work the walk takes, as if walked again
            budget.settle()
            memo.replay(self.reader, self.site, outcome, notes=not self.quiet)
            self.done(dict(outcome.writes), dict(outcome.outputs))
            self.complete = True
            return
        tree = syntax.parse(rendered, mark)
        file = self.script[0] if self.script is not None else self.site.doc.file
        if self.script is not None:
            walker.args = tuple(self.script[1])
            walker.calls = self.script[2]
        frame = Frame(file, self.loc, values, rendered, mark, expressions)
        stopped = False
        try:
            walker.script(frame, tree.body)
        except Dead:
            pass  # every path fails: what was done before stays
        except OverBudget as exc:
            self.stopped(walker, exc)
            stopped = True
        finally:
            budget.settle()
        outcome = self.finish(walker, budget.limit - budget.left)
        self.complete = not stopped
        if not stopped and key is not None:  # a reading the budget stopped depends on
            memo.READINGS.remember(key, outcome)  # what was left of it

    def key(self, rendered: str, mark: str, values: tuple[Value, ...]) -> tuple[object, ...] | None:
        """What a reading depends on besides its questions to the context (``memo``):
        the text as written and rendered, and where it is shown (its first line's
        location: every location the walk makes follows from it and the text)."""
        strict = memo.strict(values)
        if self.script is None:
            start = self.loc(0)
            place: tuple[object, ...] = (
                self.site.doc.file,
                self.path,
                start.file,
                start.line,
                start.col,
            )
        else:
            place = (self.script[0], memo.strict(self.script[1]), self.script[2])
        home = self.home()
        key = (
            self.text,
            rendered,
            mark,
            strict,
            place,
            self.site.runs,
            self.for_outputs,
            home,
            self.reader.bind_paths,
        )
        try:
            hash(key)
        except TypeError:  # a value that cannot be a key: read again each time
            return None
        return key

    def home(self) -> Value:
        """The folder the script starts in, absolute (``values.WORKSPACE`` and below):
        the step's ``working-directory``, else the job's default; unknown where it holds
        an expression or leaves the workspace."""
        written = self.folder if self.folder is not None else self.site.folder
        if written and "${{" in written:
            if self.folder is None:
                return Unknown("working-directory", "the job's working-directory is not known")
            written = self.scope.evaluate(written, (*self.path[:-1], "working-directory"))
            if not isinstance(written, str):
                return Unknown("working-directory", "the step's working-directory is not known")
        rel = posixpath.normpath(written or ".")
        if rel.startswith("/"):
            return rel
        if rel == ".." or rel.startswith("../"):
            return Unknown(
                "working-directory", f"the working-directory {written} is outside the workspace"
            )
        return absolute(rel)

    def stopped(self, walker: Walker, exc: OverBudget) -> None:
        """The script is read no further: what it would still do is unknown."""
        where, written = exc.where or (self.loc(walker.line), "")
        reason = (
            f"reading this script takes {exc.why}; stagegate stops reading it here, so what it "
            "does from here on is not known"
        )
        state = walker.state
        state.emit(("note", where, Unknown(written or "run:", reason)))
        for table, prefix in ((state.writes, "env."), (state.outputs, "steps.*.outputs.")):
            for name in table:
                table[name] = Unknown(f"{prefix}{name}", reason)

    def finish(self, walker: Walker, cost: int) -> memo.Outcome:
        """Tell the reading what the script did, each thing once, in order (``cost``:
        the work the walk took)."""
        state = walker.state
        done = _once(replay(state.effects))
        pending = [transfer for transfer, _folder in state.pending]
        outcome = memo.Outcome(
            walker.inputs.asked,
            done,
            pending,
            state.writes,
            state.outputs,
            walker.inputs.written,
            cost,
        )
        for effect in done:
            memo.deliver(self.reader, self.site, effect, notes=not self.quiet)
        for transfer in pending:
            self.reader.add(transfer)
        self.done(dict(state.writes), dict(state.outputs))
        return outcome

    def done(self, writes: dict[str, Value], outputs: dict[str, Value]) -> None:
        self.writes, self.outputs = writes, outputs
        if self.script is None:
            self.site.written.update(writes)

    # -- ${{ }}

    def render(self) -> tuple[str, str, tuple[Value, ...], tuple[str, ...]]:
        """The text bash reads: each ``${{ }}`` evaluated and written in where it is
        known text, else marked (the mark, and the values of the marks in order)."""
        if "${{" not in self.text:
            return self.text, "", (), ()
        try:
            pieces = ghexpr.split_text(self.text)
        except LocatedError as exc:
            row = self.text.count("\n", 0, exc.column)
            raise invalid(self.loc(row), f"invalid expression: {exc.message}") from None
        texts: list[str | None] = []
        values: list[Value] = []
        expressions: list[str] = []
        for piece, offset in pieces:
            if not piece.startswith("${{"):
                texts.append(piece)
                continue
            value = self.expression(piece, self.text.count("\n", 0, offset))
            if type(value) is str and value not in _SPECIAL_TEXT:
                texts.append(value)
            elif value is None or isinstance(value, bool | int | float | list | dict):
                texts.append(ghexpr.to_text(value))
            else:
                texts.append(None)
                values.append(value)
                expressions.append(piece)
        mark = _mark(texts)
        rendered: list[str] = []
        index = 0
        for text in texts:
            if text is None:
                rendered.append(f"{mark}{index}{mark}")
                index += 1
            else:
                rendered.append(text)
        self.rows = _rows(pieces, texts)
        return "".join(rendered), mark, tuple(values), tuple(expressions)

    def expression(self, piece: str, row: int) -> Value:
        """The value of the script's ``${{ }}`` ``piece`` (on the script's line ``row``)."""
        try:
            node = _parse(piece[3:-2])
        except LocatedError as exc:
            raise invalid(self.loc(row), f"invalid expression: {exc.message}") from None
        value = ghexpr.Evaluator(self.scope.lookup)(node)
        return Unknown(piece.strip(), value.reason) if isinstance(value, Unknown) else value


_SPECIAL_TEXT = frozenset(SPECIALS)
"""The texts of the run's own markers: kept out of the script's text, as values."""


def _once(effects: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each effect once, in order (a value from ``fromJSON`` may be a list: compared,
    not hashed)."""
    seen: set[tuple[Any, ...]] = set()
    kept: list[tuple[Any, ...]] = []
    odd: list[tuple[Any, ...]] = []
    for effect in effects:
        try:
            if effect in seen:
                continue
            seen.add(effect)
        except TypeError:
            if effect in odd:
                continue
            odd.append(effect)
        kept.append(effect)
    return kept


@functools.lru_cache(maxsize=4_096)
def _parse(inner: str) -> ghexpr.Node:
    return ghexpr.parse(inner)


def interpolated(text: str, scope: Scope) -> Value:
    """``text`` with its ``${{ }}`` evaluated in ``scope``, as one value (LocatedError
    for an invalid expression)."""
    pieces: list[Value] = []
    for piece, _offset in ghexpr.split_text(text):
        if not piece.startswith("${{"):
            pieces.append(piece)
            continue
        value = ghexpr.Evaluator(scope.lookup)(_parse(piece[3:-2]))
        pieces.append(Unknown(piece.strip(), value.reason) if isinstance(value, Unknown) else value)
    return ghexpr.concat(pieces)


def _mark(texts: list[str | None]) -> str:
    """A character none of the script's text has."""
    first = chr(MARKS[0])
    if not any(t and first in t for t in texts):
        return first  # the common case, without a set of every character
    used = set().union(*(set(t) for t in texts if t))
    return next((chr(c) for c in MARKS if chr(c) not in used), "\U000f0000")


def _rows(pieces: list[tuple[str, int]], texts: list[str | None]) -> list[int] | None:
    """The script's line of each rendered line, where a value wrote line breaks."""
    if not any(
        t and "\n" in t for (p, _o), t in zip(pieces, texts, strict=True) if p.startswith("${{")
    ):
        return None
    rows: list[int] = [0]
    line = 0
    for (piece, _offset), text in zip(pieces, texts, strict=True):
        if not piece.startswith("${{"):
            for _ in range(piece.count("\n")):
                line += 1
                rows.append(line)
            continue
        rows += [line] * (text.count("\n") if text else 0)  # the value's lines: the expression's
        line += piece.count("\n")
    return rows
