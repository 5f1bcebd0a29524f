"""The evaluator: a walk over a parsed script (``ci.shell.syntax``) that follows what
stagegate reads, never running anything. Conditions are decided three-valued, as bash
decides them where their values are known; where they are not, every path is followed
and the paths are joined (``state.join``): what they set apart is unknown.

The walker's state is its own: the current path's ``State``, the script being read
(``Frame``), where printed text goes (``Sink``), and the targets of ``break``,
``continue``, ``return`` and ``exit`` (``Target``). What a simple command means is
``ci.shell.commands``'; the walker carries it out (it is that module's ``Run``).
The walk's depth is bounded (``budget.MAX_DEPTH``), and each step is charged to
the budget.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from typing import Any

from stagegate.ci.budget import MAX_DEPTH, MAX_VALUE, Budget, OverBudget
from stagegate.ci.files import invalid
from stagegate.ci.scopes import Command as Told
from stagegate.ci.scopes import Host, Scope
from stagegate.ci.shell import (
    arrays,
    commands,
    effects,
    memo,
    pipes,
    syntax,
    textops,
    variables,
    words,
)
from stagegate.ci.shell.memo import Inputs
from stagegate.ci.shell.nodes import (
    AndOr,
    ArithCommand,
    Assign,
    Block,
    Case,
    CaseItem,
    CFor,
    Command,
    Declare,
    For,
    Function,
    Group,
    If,
    Lit,
    Loop,
    Node,
    Not,
    Pipeline,
    Redirect,
    Redirected,
    Subshell,
    Subst,
    Test,
    Unread,
    Word,
)
from stagegate.ci.shell.scripts import CALL
from stagegate.ci.shell.state import (
    CWD,
    DIRS,
    MAYBE,
    UNSET,
    Break,
    Dead,
    Exit,
    Return,
    State,
    join,
    replay,
)
from stagegate.ci.shell.tests import decide, match
from stagegate.ci.shell.values import (
    ENV,
    OUTPUT,
    SPECIALS,
    WORKSPACE,
    Array,
    Bounded,
    Failed,
    Glob,
    absolute,
    in_workspace,
    marker,
)
from stagegate.ci.transfers import (
    MAX_CALL_DEPTH,
    MAX_LOOP,
    OUT_FILE,
    THIS_RUN,
    Site,
    Transfer,
    shown,
)
from stagegate.errors import Loc
from stagegate.model.ghexpr import MAX_JSON, Sym, Unknown, Value, concat, unknowns
from stagegate.records import replace

Status = bool | None
"""A command's success: True, False, or None where stagegate cannot tell."""
FIXPOINT = 3
"""Turns of a loop whose end is not known before its state is taken as settled."""


class Target:
    """Where jumps of one ``kind`` ("loop", "function", "frame") land, with the states
    of the paths that jumped there while the walk followed several."""

    __slots__ = ("again", "doubt", "kind", "out")

    def __init__(self, kind: str, doubt: Value | None = None) -> None:
        self.kind = kind
        self.doubt = doubt
        """``MAYBE`` where the construct starts: what it is again where its jumps land."""
        self.out: list[State] = []
        """States that left: ``break``, ``return``, ``exit``."""
        self.again: list[State] = []
        """States that go on with the next turn: ``continue``."""


class Frame:
    """A script being read: its file, where its lines are, its ``${{ }}`` values and
    its lines' text (for messages)."""

    __slots__ = ("expressions", "file", "gh", "lines", "locate", "mark")

    def __init__(
        self,
        file: str,
        locate: Callable[[int], Loc],
        gh: tuple[Value, ...],
        text: str,
        mark: str = "",
        expressions: tuple[str, ...] = (),
    ) -> None:
        self.file = file
        self.locate = locate
        self.gh = gh
        self.lines = text.split("\n")
        self.mark = mark
        """The character the marks of the ``${{ }}`` values kept out of the text are made of."""
        self.expressions = expressions
        """Those ``${{ }}`` as written, in order."""


class Sink:
    """Where printed text goes: ``file`` (ENV_FILE, OUT_FILE, "?" for a file not known),
    or the capture ``key`` (``$(...)``, a pipe)."""

    __slots__ = ("file", "key")

    def __init__(self, file: str = "", key: int = 0) -> None:
        self.file = file
        self.key = key


KEEP = Sink("keep")
"""Redirections that leave standard output where it was."""


class Walker:
    """Reads one ``run:`` step's script (and the scripts it calls) for ``host``."""

    def __init__(self, host: Host, site: Site, scope: Scope, budget: Budget) -> None:
        self.host = host
        self.site = site
        self.scope = scope
        self.inputs = Inputs(host, scope)
        """What the walk asks of its context (``ci.shell.memo``)."""
        self.budget = budget
        self.state = State()
        self.frame: Frame | None = None
        self.line = 0
        self.depth = 0
        self.calls = 0
        self.targets: list[Target] = []
        self.sink: Sink | None = None
        self.stdin: Value | None = None
        self.args: tuple[Value, ...] | None = None
        self.sources: list[str] = []
        """The written form of each word of the command being run (for messages)."""
        self.captures = 0
        self.locals: list[dict[str, Value]] = []
        self.folders: str | None = None
        """The variable of a ``for`` loop over the downloaded artifacts' folders."""
        self.skipped: list[str] = []
        """The patterns of the folders that loop skips (``continue``): exclusions."""
        self.home: Value = WORKSPACE
        """Where the script starts: the step's folder, absolute (``values.WORKSPACE``)."""

    # -- where

    def loc(self, line: int | None = None) -> Loc:
        assert self.frame is not None
        return self.frame.locate(self.line if line is None else line)

    def where(self) -> str:
        loc = self.loc()
        return f"{loc.file}:{loc.line}"

    def line_text(self, line: int) -> str:
        lines = self.frame.lines if self.frame is not None else []
        return lines[line].strip()[:200] if 0 <= line < len(lines) else ""

    def charge(self, units: int) -> None:
        self.budget.charge(units)

    def note(self, value: Value, line: int | None = None) -> None:
        """An unknown value that matters, reported at the line (once the script is read)."""
        if unknowns(value):
            self.state.emit(("note", self.loc(line), value))

    # -- scripts

    def script(self, frame: Frame, body: Block) -> None:
        """Read ``body`` as the script of ``frame``: its ``exit`` ends it; a failing one
        ends this path (a run that succeeds did not take it)."""
        saved, self.frame = self.frame, frame
        target = Target("frame", self.state.vars.get(MAYBE))
        self.targets.append(target)
        where = frame.locate(0)
        try:
            self.block(body)
        except OverBudget as exc:
            if exc.where is None:  # the innermost script says where it stopped
                exc.where = (self.loc(), self.line_text(self.line))
            raise
        except Exit as jump:
            if jump.code not in (0, None):
                raise Dead from None
        except (Break, Return):
            pass  # outside a loop or function: bash goes on after it, here the script ends
        except Dead:
            if not target.out:
                raise
            self.state = target.out.pop()
        finally:
            self.targets.pop()
            self.frame = saved
        if target.out:
            self.state = join(
                [self.state, *target.out], self.state, where, "the exits of the script"
            )
            self.doubt(target.doubt)

    def block(self, block: Block) -> Status:
        status: Status = True
        for node in block.items:
            status = self.statement(node)
        return status

    def statement(self, node: Node) -> Status:
        self.line = getattr(node, "line", self.line)
        self.budget.charge(1)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise OverBudget(f"constructs and calls nested more than {MAX_DEPTH} deep")
            found: Status = _STATEMENTS[type(node)](self, node)
            return found
        finally:
            self.depth -= 1

    # -- paths

    def fork(
        self, runs: list[Callable[[], Status]], line: int, construct: str, doubt: bool = True
    ) -> Status:
        """Follow each of ``runs`` from the current state and join what goes on after
        them; a run that jumps leaves its state at the jump's target. ``doubt``: each
        run may not be the one a run of the step takes (``MAYBE``); where one jumps,
        what goes on after the construct may not run either."""
        base = self.state
        ends: list[State] = []
        statuses: list[Status] = []
        jumped = False
        for run in runs:
            self.state = base.copy()
            if doubt:
                self.state.vars[MAYBE] = "1"
            try:
                statuses.append(run())
                ends.append(self.state)
            except Exit as jump:
                if jump.code in (0, None):
                    self.stash("frame", self.state)
                    jumped = True
            except Break as jump:
                self.stash("loop", self.state, again=jump.again)
                jumped = True
            except Return:
                self.stash("function", self.state)
                jumped = True
            except Dead:
                pass
        if not ends:
            self.state = base
            raise Dead
        self.state = join(ends, base, self.loc(line), construct)
        self.doubt("1" if jumped else base.vars.get(MAYBE))
        return statuses[0] if all(s == statuses[0] for s in statuses) else None

    def doubt(self, value: Value | None) -> None:
        """Set ``MAYBE`` (None: the commands from here run in every run that gets here)."""
        if value is None:
            self.state.vars.pop(MAYBE, None)
        else:
            self.state.vars[MAYBE] = value

    def stash(self, kind: str, state: State, *, again: bool = False) -> None:
        """Leave a path's state at the nearest target of ``kind`` (none past the script)."""
        for target in reversed(self.targets):
            if target.kind == kind:
                (target.again if again else target.out).append(state)
                return
            if target.kind == "frame" and kind != "frame":
                return

    def branch(
        self,
        decided: Status,
        then: Callable[[], Status],
        otherwise: Callable[[], Status],
        line: int,
        construct: str,
        doubt: bool = True,
    ) -> Status:
        """``then`` where ``decided`` is True, ``otherwise`` where it is False, both
        (joined) where it is None."""
        if decided is True:
            return then()
        if decided is False:
            return otherwise()
        return self.fork([then, otherwise], line, construct, doubt)

    def landed(self, target: Target, alive: bool, line: int, construct: str) -> None:
        """The state after a construct that jumps land at: the paths that went on, and
        those that jumped there; Dead where none."""
        ends = ([self.state] if alive else []) + target.out
        if not ends:
            raise Dead
        self.state = join(ends, self.state, self.loc(line), construct)
        self.doubt(target.doubt)

    # -- control flow

    def and_or(self, node: AndOr) -> Status:
        left = self.statement(node.left)
        construct = f"the {node.op} list"
        if _fails(Block((node.right,))):  # `X || exit 1`: a run that succeeds had X succeed
            left = node.op == "||"
        doubt = _command_name(node.left) not in commands.EFFECTS  # `mkdir -p d && cp ...`
        if node.op == "&&":
            return self.branch(
                left, lambda: self.statement(node.right), lambda: False, node.line, construct, doubt
            )
        return self.branch(
            left, lambda: True, lambda: self.statement(node.right), node.line, construct, doubt
        )

    def negate(self, node: Not) -> Status:
        status = self.statement(node.body)
        return None if status is None else not status

    def if_statement(self, node: If) -> Status:
        return self.branches(list(node.branches), node.otherwise, node.line)

    def branches(
        self, branches: list[tuple[Block, Block]], otherwise: Block | None, line: int
    ) -> Status:
        if not branches:
            return self.block(otherwise) if otherwise is not None else True
        condition, body = branches[0]
        if self.skip(condition, body):
            return True
        decided = self.block(condition)
        if _fails(body):
            decided = False  # a run that succeeds did not take it, whatever stagegate decides
        return self.branch(
            decided,
            lambda: self.block(body),
            lambda: self.branches(branches[1:], otherwise, line),
            line,
            "the branches of the if",
        )

    def skip(self, condition: Block, body: Block) -> bool:
        """``if [[ "$dir" == *-tests ]]; then continue; fi`` in a loop over the
        downloaded artifacts' folders (download-wheels): the artifacts it skips are
        excluded from what the downloads keep. Whether the if was one."""
        if self.folders is None or len(condition.items) != 1:
            return False
        test = condition.items[0]
        said = [n for n in body.items if _command_name(n) not in ("echo", "printf", ":")]
        if [_command_name(n) for n in said] != ["continue"] or not isinstance(test, Test):
            return False
        expr = test.expr
        if expr.op not in ("==", "=") or len(expr.operands) != 2:
            return False
        subject, pattern = expr.operands
        if not isinstance(subject, Word) or not isinstance(pattern, Word):
            return False
        if [getattr(p, "name", None) for p in subject.parts] != [self.folders]:
            return False
        text = words.text_of(pattern, self)
        if text is None:
            return False
        self.skipped.append(text)
        return True

    def case_statement(self, node: Case) -> Status:
        subject = words.expand(node.word, self)
        return self.case_items(list(node.items), subject, node.line, False)

    def case_items(self, items: list[CaseItem], subject: Value, line: int, falling: bool) -> Status:
        """The first item whose pattern matches runs; ``;&`` runs the next item's body
        too, ``;;&`` goes on testing the items after it."""
        if not items:
            return True
        item, rest = items[0], items[1:]
        decided: Status = True if falling else self.case_match(item.patterns, subject)

        def then() -> Status:
            status = self.block(item.body)
            if item.end == ";&":
                return self.case_items(rest, subject, line, True)
            if item.end == ";;&":
                return self.case_items(rest, subject, line, False)
            return status

        return self.branch(
            decided,
            then,
            lambda: self.case_items(rest, subject, line, False),
            line,
            "the items of the case",
        )

    def case_match(self, patterns: tuple[Word, ...], subject: Value) -> Status:
        found: Status = False
        for pattern in patterns:
            if not isinstance(subject, str) or isinstance(subject, Glob):
                return None
            matched = match(subject, pattern, self)
            if matched is True:
                return True
            if matched is None:
                found = None
        return found

    def for_statement(self, node: For) -> Status:
        if node.words is None:
            values: list[Value] = (
                list(self.args)
                if self.args is not None
                else [
                    Unknown(
                        f"${node.name}",
                        f"the loop at {self.loc(node.line)} runs over the script's arguments",
                    )
                ]
            )
        else:
            values = [v for w in node.words for v in words.fields(w, self)]
        if len(values) > MAX_LOOP:
            raise invalid(
                self.loc(node.line),
                f"a for loop over {len(values):,} values; stagegate expands at most {MAX_LOOP:,}.",
            )
        saved = self.folders, self.skipped
        if self.state.pending and not self.state.used and any(isinstance(v, Glob) for v in values):
            self.folders, self.skipped = (
                node.name,
                [],
            )  # a loop over the downloaded artifacts' folders
        try:
            status = self.turns(node.name, values, node.body, node.line)
            for text in self.skipped if self.folders == node.name else ():
                self.state.pending = [
                    (
                        transfer
                        if folder is not None or text in transfer.exclude
                        else replace(transfer, exclude=(*transfer.exclude, text)),
                        folder,
                    )
                    for transfer, folder in self.state.pending
                ]
            return status
        finally:
            self.folders, self.skipped = saved

    def turns(self, name: str, values: list[Value], body: Block, line: int) -> Status:
        """The body once per value, in order; ``break`` and ``continue`` land here."""
        target = Target("loop", self.state.vars.get(MAYBE))
        self.targets.append(target)
        status: Status = True
        alive = True
        construct = "the turns of the for loop"
        try:
            for value in values:
                if target.again:  # paths that continued join the one that went on
                    states = ([self.state] if alive else []) + target.again
                    self.state = join(states, self.state, self.loc(line), construct)
                    target.again.clear()
                elif not alive:
                    break
                alive = True
                self.put(name, value)
                self.doubt(target.doubt)  # each turn runs, whatever the last one skipped
                alive, status = self.turn(body, target)
        finally:
            self.targets.pop()
        if target.again:
            target.out += target.again
        self.landed(target, alive, line, construct)
        return status

    def turn(self, body: Block, target: Target) -> tuple[bool, Status]:
        """One turn of a loop's body: whether the walk goes on after it, and its status."""
        try:
            return True, self.block(body)
        except Break as jump:
            if jump.levels > 1:
                raise Break(jump.levels - 1, jump.again) from None
            (target.again if jump.again else target.out).append(self.state)
            return False, None
        except Dead:
            return False, None

    def while_statement(self, node: Loop) -> Status:
        """A ``while``/``until`` loop: turns while its condition holds; where it cannot
        be decided, turns until the state settles (at most FIXPOINT), and it may end
        after any of them."""
        target = Target("loop", self.state.vars.get(MAYBE))
        self.targets.append(target)
        construct = f"the turns of the {'until' if node.until else 'while'} loop"
        doubtful = False
        exits: list[State] = []
        alive = True
        entry = self.state.copy()
        try:
            for turn in range(MAX_LOOP):
                decided = self.block(node.condition)
                if node.until and decided is not None:
                    decided = not decided
                if decided is False:
                    break
                if decided is None:
                    exits.append(self.state.copy())
                    doubtful = True  # this turn, and those after it, may not run
                self.doubt("1" if doubtful else target.doubt)
                before = self.state.copy()
                alive, _status = self.turn(node.body, target)
                if target.again:
                    states = ([self.state] if alive else []) + target.again
                    self.state = join(states, before, self.loc(node.line), construct)
                    target.again.clear()
                    alive = True
                if not alive:
                    break
                if _same(before, self.state) or (decided is None and turn + 1 >= FIXPOINT):
                    break  # settled (or a loop that never ends: read as if it ended here)
            else:  # still turning after MAX_LOOP turns: what the turns change is unknown
                self.state = join(
                    [entry, self.state],
                    entry,
                    self.loc(node.line),
                    construct,
                    f"which stagegate follows for {MAX_LOOP:,} turns",
                )
        finally:
            self.targets.pop()
        target.out += exits
        self.landed(target, alive, node.line, construct)
        return True

    def c_for(self, node: CFor) -> Status:
        """``for (( init; condition; update ))``: a while loop of arithmetic."""
        self.arithmetic(node.init or "0")
        condition = Block((ArithCommand(node.line, node.condition or "1"),))
        body = Block((*node.body.items, ArithCommand(node.line, node.update or "0")))
        return self.while_statement(Loop(node.line, False, condition, body))

    def define(self, node: Function) -> Status:
        self.state.functions[node.name] = node.body
        return True

    def subshell(self, node: Subshell) -> Status:
        return self.apart(lambda: self.block(node.body))

    def apart(self, run: Callable[[], Status]) -> Status:
        """``run`` in a subshell: its variables and functions are its own; what it writes
        to files and downloads is the script's."""
        kept = self.state.vars, self.state.exported, self.state.functions, self.args
        self.state.vars = dict(kept[0])
        self.state.exported = set(kept[1])
        self.state.functions = dict(kept[2])
        target = Target("frame", self.state.vars.get(MAYBE))
        self.targets.append(target)
        status: Status = None
        alive = True
        try:
            status = run()
        except Exit as jump:
            status = None if jump.code is None else jump.code == 0
        except (Break, Return):
            status = None
        except Dead:
            alive = False
        finally:
            self.targets.pop()
        self.landed(target, alive, self.line, "the exits of the subshell")
        self.state.vars, self.state.exported, self.state.functions, self.args = kept
        return status

    def group(self, node: Group) -> Status:
        return self.block(node.body)

    def redirected(self, node: Redirected) -> Status:
        """A compound command with redirections: what it prints goes to their target."""
        sink, stdin = self.redirections(node.redirects)
        saved = self.sink, self.stdin
        if sink is not KEEP:
            self.sink = sink
        if stdin is not None:
            self.stdin = stdin
        try:
            return self.statement(node.body)
        finally:
            self.sink, self.stdin = saved

    def redirections(self, redirects: tuple[Redirect, ...]) -> tuple[Sink | None, Value | None]:
        """Where standard output goes (KEEP: unchanged) and what standard input is."""
        sink: Sink | None = KEEP
        stdin: Value | None = None
        for redirect in redirects:
            op, fd = redirect.op, redirect.fd
            target = words.expand(redirect.target, self) if redirect.target else ""
            if op in ("<<<", "<<"):
                stdin = concat([target, "\n"]) if op == "<<<" else target
            elif op == "<":
                stdin = Unknown("<", "input from a file stagegate does not read")
            elif op in (">", ">>", ">|", "&>", "&>>") and fd in ("", "1"):
                sink = self.file_sink(target, append=op in (">>", "&>>"))
        return sink, stdin

    def file_sink(self, target: Value, *, append: bool) -> Sink | None:
        for which, table in ((ENV, self.state.writes), (OUTPUT, self.state.outputs)):
            if marker(target, which):
                if not append:  # `>` empties the file: this step's earlier lines are gone
                    table.clear()
                return Sink(str(which))
        return None

    def pipeline(self, node: Pipeline) -> Status:
        """Each command in a subshell, what it prints the next one's input."""
        saved = self.sink, self.stdin
        status: Status = True
        try:
            for i, command in enumerate(node.commands):
                last = i == len(node.commands) - 1
                capture = None if last else self.open_capture()
                self.sink = capture if capture is not None else saved[0]

                def run(command: Node = command) -> Status:
                    return self.statement(command)

                status = self.apart(run)
                if capture is not None:
                    self.stdin = self.close_capture(capture, "|")
        finally:
            self.sink, self.stdin = saved
        return status

    def open_capture(self) -> Sink:
        self.captures += 1
        self.state.captured[self.captures] = ()
        return Sink(key=self.captures)

    def close_capture(self, sink: Sink, source: str) -> Value:
        """What a capture received; unknown where something printed there is."""
        found = self.state.captured.pop(sink.key, ())
        if isinstance(found, Unknown):
            return Unknown(source, found.reason)
        if found and all(isinstance(part, Bounded) for part in found):
            joined = "".join(found)  # what jq or yq printed: bounded by MAX_JSON
            if len(joined) > MAX_JSON:
                return Unknown(source, f"{source} prints more than {MAX_JSON:,} characters")
            return Bounded(joined)
        return concat(list(found))

    def test(self, node: Test) -> Status:
        return decide(node.expr, self)

    def arithmetic_command(self, node: ArithCommand) -> Status:
        value = self.arithmetic(node.text)
        return None if not isinstance(value, str) else value.lstrip("-") != "0"

    def arithmetic(self, text: str) -> Value:
        return words.arithmetic(text, f"(( {text.strip()} ))", self)

    def unread(self, node: Unread) -> Status:
        """A statement not read: the variables it may set are unknown; where it may
        download, write the env or call a script, that is unresolved at its line; a
        syntax error ends the script (bash stops there)."""
        for name in node.assigned:
            self.state.vars[name] = Unknown(
                f"${name}",
                f"${name} is set where stagegate does not read ({node.reason}, {self.loc(node.line)})",
            )
        text = node.source
        if not node.fatal and any(tool in text for tool in commands.REPORTED_TOOLS):
            first = text.strip().split("\n", 1)[0][:200]
            why = f"a statement stagegate does not read ({node.reason}) names a build tool"
            self.report([Unknown(first, why)], {})
        calls = any(self.repo_path(m.group(1)) for m in CALL.finditer(text))
        if "gh run download" in text or "GITHUB_ENV" in text or "GITHUB_OUTPUT" in text or calls:
            what = (
                "a gh run download"
                if "gh run download" in text
                else "a write of $GITHUB_ENV"
                if "GITHUB_" in text
                else "a call of a script"
            )
            first = text.strip().split("\n", 1)[0][:200]
            why = "cannot parse" if node.fatal else f"cannot read: {node.reason}"
            self.note(Unknown(first, f"{what} stagegate {why}"), node.line)
        if node.fatal:
            raise Exit(2)
        return None

    # -- simple commands

    def command(self, node: Command) -> Status:
        if not node.words:
            for assign in node.assigns:
                self.assignment(assign, node.line)
            self.redirections(node.redirects)
            return True
        env = {a.name: self.value_of(a) for a in node.assigns}
        argv: list[Value] = []
        sources: list[str] = []
        for word in node.words:
            found = words.fields(word, self)
            argv += found
            if len(found) == 1:
                sources.append(self.written(word.source))
            else:  # a word split in several: each is its own text
                sources += [shown(v) for v in found]
        if not argv:
            for assign in node.assigns:
                self.assignment(assign, node.line)
            return True
        sink, stdin = self.redirections(node.redirects)
        saved = self.sink, self.stdin, self.sources
        if sink is not KEEP:
            self.sink = sink
        if stdin is not None:
            self.stdin = stdin
        self.sources = sources
        try:
            return commands.run(self, argv, env)
        finally:
            self.sink, self.stdin, self.sources = saved

    def value_of(self, assign: Assign) -> Value:
        """The value of a command's prefix assignment (``A=1 cmd``): a scalar."""
        if assign.value is None or assign.index is not None:
            return Unknown(f"${assign.name}", "an array, which stagegate does not compute")
        value = words.expand(assign.value, self)
        if assign.append:
            value = concat([self.lookup(assign.name), value])
        if isinstance(value, Unknown | Sym):
            value = _annotate(value, self.loc(), assign.name)
        return value

    def assignment(self, assign: Assign, line: int) -> None:
        self.line = line
        self.assigned(assign)

    def assigned(self, assign: Assign) -> None:
        """A variable's assignment: a scalar, an array's (``arrays``), or element 0 of
        an array (``A=x`` where A is one, as bash does)."""
        if assign.elements is not None or assign.index is not None:
            self.state.vars[assign.name] = arrays.assigned(assign, self)
        else:
            self.put(assign.name, self.value_of(assign))

    def put(self, name: str, value: Value) -> None:
        """``name`` set to a scalar: element 0 where it is an array."""
        current = self.state.vars.get(name)
        self.state.vars[name] = current.put(0, value) if isinstance(current, Array) else value

    def set_whole(self, name: str, value: Value) -> None:
        self.state.vars[name] = value

    def array(self, name: str) -> Value:
        current = self.state.vars.get(name)
        if isinstance(current, Array | Unknown):
            return current
        if self.is_set(name) is False:
            return None
        value = self.lookup(name)
        if isinstance(value, Unknown):
            return Unknown(
                f"${{{name}[@]}}",
                f"which elements {name} has is not known ({value.expression}: {value.reason})",
            )
        return value

    def declare(self, node: Declare) -> Status:
        """``export``, ``local``, ``declare``, ``readonly``, ``typeset`` and their operands."""
        self.line = node.line
        for item in node.items:
            if isinstance(item, Assign):
                name = item.name
                if node.keyword == "local":
                    self.localize(name)
                if _has_flag(node, "A"):
                    self.state.vars[name] = _associative(name)
                else:
                    self.assigned(item)
            else:
                text = words.text_of(item, self)
                if text is None or text.startswith(("-", "+")):
                    continue
                name = text
                if node.keyword == "local":
                    self.localize(name)
                    self.state.vars.setdefault(name, "")
                if _has_flag(node, "A"):
                    self.state.vars[name] = _associative(name)
                elif _has_flag(node, "a") and not isinstance(self.state.vars.get(name), Array):
                    found = self.state.vars.get(name, UNSET)
                    self.state.vars[name] = Array(() if found in (UNSET, "") else ((0, found),))
            if node.keyword == "export" or (node.keyword == "declare" and _has_flag(node, "x")):
                self.state.exported.add(name)
        return True

    def localize(self, name: str) -> None:
        if self.locals and name not in self.locals[-1]:
            self.locals[-1][name] = self.state.vars.get(name, UNSET)

    # -- commands.Run

    def input(self) -> Value | None:
        return self.stdin

    def print(self, value: Value) -> None:
        sink = self.sink
        if sink is None:
            return
        if sink.key:
            found = self.state.captured.get(sink.key, ())
            if isinstance(found, tuple):
                self.state.captured[sink.key] = (
                    value if isinstance(value, Unknown) else (*found, value)
                )
            return
        self.file_write(sink.file, value)

    def write(self, file: Value, value: Value, *, append: bool) -> None:
        sink = self.file_sink(file, append=append)
        if sink is not None:
            self.file_write(sink.file, value)

    def file_write(self, file: str, text: Value) -> None:
        """Lines written to ``$GITHUB_ENV`` or ``$GITHUB_OUTPUT``: ``NAME=VALUE``, and
        ``NAME<<DELIMITER`` with the lines up to the delimiter."""
        for line in effects.lines(text):
            pending = self.state.heredoc.get(file)
            if pending is not None:
                name, delimiter, got = pending
                if line == delimiter:
                    del self.state.heredoc[file]
                    self.set_value(file, name, concat(_joined(got, "\n")))
                else:
                    self.state.heredoc[file] = (name, delimiter, [*got, line])
                continue
            opened = effects.delimited(line)
            if opened is not None:
                self.state.heredoc[file] = (*opened, [])
                continue
            pair = effects.assignment(line)
            if pair is not None:
                self.set_value(file, *pair)

    def set_value(self, file: str, name: str, value: Value) -> None:
        loc = self.loc()
        if file == OUT_FILE:
            self.state.outputs[name] = value
            return
        if unknowns(value):
            first = unknowns(value)[0]
            why = first.expression
            if first.reason.startswith(f"{first.expression} is set "):
                said = first.reason[len(first.expression) + 1 :]
                why += ", which " + said.removesuffix(f"; bind env.{first.expression[1:]}")
            reason = (
                f"{name} is written to $GITHUB_ENV by the script at {loc.file}:{loc.line} from a "
                f"value stagegate cannot compute ({why}); bind env.{name}"
            )
            self.inputs.write(name, reason)
            value = Unknown(f"env.{name}", reason)
        if self.site.runs:
            self.state.writes[name] = value

    def assign(self, name: str, value: Value) -> None:
        if name.isdigit():
            return
        self.put(name, value)

    def unset(self, name: str) -> None:
        if "[" in name:  # ``unset 'A[I]'``: which element goes is not computed
            array = name.split("[", 1)[0]
            self.state.vars[array] = Unknown(
                f"${{{array}[@]}}", f"an element of {array} is unset at {self.where()}"
            )
            return
        self.state.vars[name] = UNSET
        self.state.functions.pop(name, None)

    def export(self, name: str, value: Value | None) -> None:
        if value is not None:
            self.put(name, value)
        self.state.exported.add(name)

    def arguments(self) -> tuple[Value, ...] | None:
        return self.args

    def set_arguments(self, args: tuple[Value, ...]) -> None:
        self.args = args

    def written(self, source: str) -> str:
        """A word as the script wrote it (its ``${{ }}`` as written, not their marks)."""
        text = _written(source)
        frame = self.frame
        if frame is None or not frame.mark or frame.mark not in text:
            return text
        pieces = text.split(frame.mark)
        return "".join(
            frame.expressions[int(p)]
            if i % 2 and p.isdigit() and int(p) < len(frame.expressions)
            else p
            for i, p in enumerate(pieces)
        )

    def source(self, index: int) -> str:
        return self.sources[index] if index < len(self.sources) else ""

    def download(self, spec: effects.Download, offset: int) -> None:
        """``gh run download``: each name and pattern a download, landing in its folder."""
        loc = self.loc()
        run_id = "this"
        if spec.run is not None and not marker(spec.run, THIS_RUN):
            run_id = self.source(offset + spec.run_index) or shown(spec.run)
            if self.site.runs and unknowns(spec.run):
                # which run it reads decides what it can select: never guessed
                self.state.emit(("run", self.loc(), spec.run))
        selections = [(n, "name") for n in spec.names] + [(p, "pattern") for p in spec.patterns]
        isolate = (
            "1" if spec.patterns or len(spec.names) != 1 else ""
        )  # one folder each, as gh does
        landing: list[Value] = [spec.folder if spec.folder is not None else ".", isolate]
        folder = spec.folder if isinstance(spec.folder, str) else None
        for value, kind in selections or [("*", "pattern")]:
            transfer = self.site.transfer("download", loc, value, kind, run_id)
            self.state.emit(("files", loc, tuple(landing), transfer, self.cwd()))
            if kind == "pattern":
                self.state.pending.append((transfer, folder))
            else:
                self.state.emit(("add", transfer))

    def remove(self, indexes: list[int], values: list[Value]) -> None:
        """``rm`` after a pattern download, before its files are used: an exclusion."""
        if not self.state.pending or self.state.used:
            return
        for index, value in zip(indexes, values, strict=True):
            if unknowns(value):
                self.note(
                    Unknown(
                        f"rm {self.source(index)}",
                        "a script removes a path stagegate cannot compute after a download, so "
                        "what the download keeps is unknown; bind what it removes",
                    )
                )
                continue
            self.state.pending = effects.exclude(self.state.pending, value)

    def files(self, values: list[Value]) -> None:
        self.state.emit(("files", self.loc(), tuple(values), None, self.cwd()))

    def cwd(self) -> Value:
        """Where the script is (``CWD``): from the step's folder, or absolute."""
        return self.state.vars.get(CWD, "") or "."

    def report(self, argv: list[Value], env: dict[str, Value]) -> None:
        """The command, with the variables it sees that the script set (name, value or
        None where unset, whether exported; its own prefix assignments last) and the
        folder it runs in (``CWD``)."""
        self.state.emit(("command", *self.told(argv, env)))

    def identifiers(self, argv: list[Value], env: dict[str, Value]) -> Value:
        """What ``cibuildwheel --print-build-identifiers`` prints (a question to the
        reading: ``memo``)."""
        return self.inputs.identifiers(self.told(argv, env))

    def told(self, argv: list[Value], env: dict[str, Value]) -> Told:
        """The command as ``Host.on_command`` is told of it (``report``)."""
        state = self.state
        seen = [
            (name, None if value is UNSET else value, name in state.exported)
            for name, value in _scalars(state.vars)
            if name not in (CWD, DIRS, MAYBE)
        ]
        seen += [(name, value, True) for name, value in env.items()]
        maybe = MAYBE in state.vars
        return (self.loc(), tuple(argv), tuple(seen), state.vars.get(CWD), maybe)

    def change_dir(self, target: Value | None) -> None:
        self.state.vars[CWD] = self._folder(target)

    def _folder(self, target: Value | None) -> Value:
        """Where ``cd target`` goes from where the script is (unknown: not followed); a
        folder of the workspace named absolutely (``$GITHUB_WORKSPACE/x``) stays so."""
        current = self.state.vars.get(CWD, "")
        if isinstance(target, str) and not isinstance(target, Glob):
            rel = in_workspace(target)
            if rel is None and isinstance(current, str) and not target.startswith("/"):
                base = in_workspace(current)
                if base is None:
                    folder = posixpath.join(current, target)
                    return posixpath.normpath(folder) if folder else ""
                rel = posixpath.join(base, target)
            if rel is not None:
                rel = posixpath.normpath(rel or ".")
                if rel != ".." and not rel.startswith("../"):
                    return absolute(rel)
            elif target.startswith("/"):
                return posixpath.normpath(target)
        written = " ".join(self.sources) or "cd"
        return Unknown(
            written, f"{written} at {self.where()} goes to a folder stagegate does not follow"
        )

    def here(self) -> Value:
        """The absolute folder the script is in: its ``cd`` from the step's folder."""
        current = self.state.vars.get(CWD, "")
        if (
            not isinstance(current, str)
            or current.startswith("/")
            or in_workspace(current) is not None
        ):
            return current
        home = self.home
        if not isinstance(home, str) or not current:
            return home
        base = in_workspace(home)
        rel = posixpath.normpath(posixpath.join(base or ".", current))
        if base is None or rel == ".." or rel.startswith("../"):
            return Unknown("pwd", f"the folder the script is in at {self.where()} is not known")
        return absolute(rel)

    def push_dir(self, target: Value | None) -> None:
        """``pushd``: the folder the script leaves goes on the stack (``DIRS``)."""
        state = self.state
        here = state.vars.get(CWD, "")
        folder = self._folder(target)
        stack = state.vars.get(DIRS)
        if target is None or isinstance(stack, Unknown):
            state.vars[DIRS] = Unknown("pushd", f"{self._written()} is not followed")
        else:
            kept = stack.values() if isinstance(stack, Array) else ()
            state.vars[DIRS] = Array(tuple(enumerate((here, *kept))))
        state.vars[CWD] = folder

    def pop_dir(self, known: bool) -> Status:
        """``popd``: back to the folder on top of the stack, which it leaves."""
        state = self.state
        stack = state.vars.get(DIRS)
        if known and stack is None:
            return False  # bash: "directory stack empty"; the script stays where it is
        if not known or not isinstance(stack, Array):
            why = f"{self._written()} goes to a folder stagegate does not follow"
            state.vars[CWD] = Unknown(" ".join(self.sources) or "popd", why)
            state.vars[DIRS] = Unknown("popd", why)
            return None
        top, *rest = stack.values()
        state.vars[CWD] = top
        if rest:
            state.vars[DIRS] = Array(tuple(enumerate(rest)))
        else:
            del state.vars[DIRS]
        return None

    def _written(self) -> str:
        return f"{' '.join(self.sources) or 'pushd'} at {self.where()}"

    def use(self) -> None:
        if self.state.pending:
            self.state.used = True

    def function(self, name: str) -> bool:
        return name in self.state.functions

    def call_function(self, name: str, args: list[Value]) -> Status:
        body = self.state.functions[name]
        saved, line = self.args, self.line
        self.args = tuple(args)
        self.locals.append({})
        target = Target("function", self.state.vars.get(MAYBE))
        self.targets.append(target)
        status: Status = None
        alive = True
        try:
            status = self.statement(body)
        except Return:
            status = None
        except Dead:
            alive = False
        finally:
            self.targets.pop()
            self.args = saved
            restored = self.locals.pop()
        self.line = line
        self.landed(target, alive, line, f"the returns of {name}")
        for local, old in restored.items():
            self.state.vars[local] = old
        return status

    def call(
        self, rel: str, text: str, args: list[Value], env: dict[str, Value], *, source: bool
    ) -> Status:
        """A repository script: read with its positional parameters; a sourced one in
        this shell, another as a child process that inherits what is exported."""
        if self.calls + 1 > MAX_CALL_DEPTH:
            raise invalid(
                self.loc(),
                f"scripts call each other more than {MAX_CALL_DEPTH} deep; break the chain.",
            )
        tree = syntax.parse(text)
        frame = Frame(rel, _locator(rel), (), text)
        saved_args, line = self.args, self.line
        self.calls += 1
        try:
            if source:
                self.args = tuple(args) if args else self.args
                self.script(frame, tree.body)
                return True
            kept = self.state.vars, self.state.exported, self.state.functions
            given = {  # bash exports no array
                n: kept[0][n] for n in kept[1] if n in kept[0] and not isinstance(kept[0][n], Array)
            }
            for name in (CWD, MAYBE):  # a child process starts where its parent is
                if name in kept[0]:
                    given[name] = kept[0][name]
            given.update(env)  # `A=1 ./x`: the script's environment
            key = self.call_key(rel, text, args, given)
            if key is not None and self.recalled(key):
                return True
            mark = self.mark()
            self.state.vars, self.state.exported, self.state.functions = given, set(given), {}
            self.args = tuple(args)
            try:
                self.script(frame, tree.body)
            finally:
                self.state.vars, self.state.exported, self.state.functions = kept
            if key is not None:
                self.remember(key, mark)
            return True
        finally:
            self.calls -= 1
            self.args, self.line = saved_args, line

    def call_key(
        self, rel: str, text: str, args: list[Value], given: dict[str, Value]
    ) -> tuple[Any, ...] | None:
        """What reading a called script depends on besides its questions (``memo``):
        its path and text, its arguments and environment, how deep it is read, the loop
        over downloaded folders it is in; None where the caller's state takes part (a
        capture, input, pending downloads)."""
        state = self.state
        if self.sink is not None or self.stdin is not None or state.pending or state.heredoc:
            return None
        items = sorted(given.items())
        names = tuple(n for n, _v in items)
        values = memo.strict(v for _n, v in items)
        where = (self.site.runs, self.calls, self.depth, self.folders, tuple(self.skipped))
        key = (rel, text, memo.strict(args), names, values, where, self.host.bind_paths)
        try:
            hash(key)
        except TypeError:  # a list or mapping from fromJSON: read again each time
            return None
        return key

    def mark(self) -> tuple[int, int, Any, dict[str, Value], dict[str, Value], bool, int]:
        state = self.state
        return (
            len(self.inputs.asked),
            len(self.inputs.written),
            state.effects,
            dict(state.writes),
            dict(state.outputs),
            state.used,
            self.budget.left,
        )

    def remember(self, key: tuple[Any, ...], mark: tuple[Any, ...]) -> None:
        """Keep what the call did to this state, to replay for the same answers."""
        asked, written, effects, writes, outputs, used, left = mark
        state = self.state
        new_writes = memo.changed(writes, state.writes)
        new_outputs = memo.changed(outputs, state.outputs)
        if new_writes is None or new_outputs is None or (used != state.used and not state.pending):
            return
        call = memo.Call(
            self.inputs.asked[asked:],
            replay(state.effects, effects),
            list(state.pending),
            new_writes,
            new_outputs,
            self.inputs.written[written:],
            state.used,
            left - self.budget.left,
        )
        memo.CALLS.remember(key, call)

    def recalled(self, key: tuple[Any, ...]) -> bool:
        """Replay a remembered call with the same answers here; whether there was one."""
        call = memo.CALLS.recall(key, self.inputs, self.budget.left)
        if call is None:
            return False
        self.budget.charge(call.cost)  # the work the call takes, as if read again
        state = self.state
        self.inputs.asked += call.asked
        for name, reason in call.written:
            self.inputs.write(name, reason)
        for effect in call.effects:
            moved = tuple(
                memo.moved(e, self.site) if isinstance(e, Transfer) else e for e in effect
            )
            state.emit(moved)
        state.pending += [(memo.moved(t, self.site), f) for t, f in call.pending]
        state.writes.update(call.writes)
        state.outputs.update(call.outputs)
        state.used = state.used or call.used
        return True

    def evaluate(self, text: str) -> Status:
        """``eval TEXT``: the text read as script here (at this line)."""
        line = self.loc()
        tree = syntax.parse(text)
        frame = Frame(line.file, lambda _line: line, (), text)
        saved = self.frame, self.line
        self.frame = frame
        try:
            return self.block(tree.body)
        finally:
            self.frame, self.line = saved

    def tool(self, head: str, argv: list[str], stdin: str) -> Value:
        at = f"{head} at {self.where()}"
        try:
            out = pipes.tool(head, argv, stdin, self, at)
            return Bounded(out) if head in ("jq", "yq") and type(out) is str else out
        except (Failed, textops.Failed) as exc:
            return Unknown(head, f"{at}: {exc}")

    # -- words.Context, pipes.Context

    def lookup(self, name: str) -> Value:
        if name == "PWD" and name not in self.state.vars:
            return self.here()  # bash keeps $PWD where `cd` goes
        file = self.frame.file if self.frame is not None else ""
        return variables.lookup(name, self.state.vars, self.args, file, self.inputs)

    def is_set(self, name: str) -> bool | None:
        return variables.is_set(name, self.state.vars, self.args, self.inputs)

    def gh(self, index: int) -> Value:
        assert self.frame is not None
        value = self.frame.gh[index]
        if type(value) is str and value in SPECIALS:
            return SPECIALS[value]
        return value

    def too_long(self, written: str) -> Unknown:
        written = _written(written)
        limit = MAX_VALUE // 10
        written = self.written(written)
        shown_text = written if len(written) <= limit else written[:limit] + "..."
        unknown = Unknown(
            shown_text,
            f"a value longer than {MAX_VALUE:,} characters (no artifact name or glob is that "
            "long); stagegate does not compute it",
        )
        self.note(unknown)
        return unknown

    def substitute(self, part: Subst) -> Value:
        """``$(...)``: the tools' pipeline computed, or else its commands walked (in a
        subshell) for what they print; their effects are followed either way."""
        try:
            return pipes.substitution(part, self)
        except pipes.Foreign:
            pass
        if self.foreign(part):
            return Unknown(part.source, f"{part.source} runs a command")
        sink = self.open_capture()
        saved = self.sink, self.stdin, self.line
        self.sink, self.stdin = sink, None
        try:
            self.apart(lambda: self.block(part.body))
        except Dead:
            self.state.captured.pop(sink.key, None)
            return Unknown(part.source, f"{part.source} runs a command")
        finally:
            self.sink, self.stdin, self.line = saved
        value = self.close_capture(sink, part.source)
        if unknowns(value):
            return Unknown(part.source, f"{part.source} runs a command")
        if isinstance(value, Bounded):
            return Bounded(value.rstrip("\n"))
        return value.rstrip("\n") if isinstance(value, str) else value

    def foreign(self, part: Subst) -> bool:
        """Whether ``$(...)`` is one command stagegate does not run, and nothing in its
        words runs anything (``$(nproc)``, ``$(realpath "$DIR")``): its output is unknown."""
        items = part.body.items
        if len(items) != 1 or not isinstance(items[0], Command):
            return False
        command = items[0]
        head = _command_name(command)
        if head is None or "/" in head or head in commands.KNOWN or self.function(head):
            return False
        return (
            not any(isinstance(p, Subst) for w in command.words for p in w.parts)
            and not command.redirects
        )

    def in_repository(self, path: str) -> bool:
        return self.repo_path(path) is not None

    def repo_path(self, written: str) -> str | None:
        """The repository file a script names (a question to the reading: ``memo``)."""
        return self.inputs.path(written)

    def repo_script(self, rel: str) -> str | None:
        """The text of the repository's shell script ``rel`` (``Files.script``), its
        bytes a question to the reading (``memo``)."""
        if self.inputs.bytes_of(rel) is None:
            return None
        return self.inputs.files.script(rel)

    def stopped(self, message: str) -> None:
        self.state.emit(("stopped", self.loc(), message))

    def data(self, file: str) -> tuple[bool, Any]:
        """The data of the YAML file ``file`` a ``yq`` reads: which file it is and its
        bytes are questions to the reading (``memo``); parsed once per reading."""
        rel = self.inputs.path(file)
        if rel is not None:
            self.inputs.bytes_of(rel)
        files = self.inputs.files
        found = files.data.get(file)
        if found is None:
            found = files.data[file] = pipes.repository_data(files, rel, file)
        return found


@functools.lru_cache(maxsize=256)
def _locator(rel: str) -> Callable[[int], Loc]:
    """Where a repository script's lines are (their locations made once)."""

    @functools.lru_cache(maxsize=1_024)
    def locate(line: int) -> Loc:
        return Loc(rel, line + 1, 1)

    return locate


def _same(a: State, b: State) -> bool:
    return (
        a.vars == b.vars
        and a.writes == b.writes
        and a.outputs == b.outputs
        and a.pending == b.pending
        and a.captured == b.captured
    )


def _joined(values: list[Value], sep: str) -> list[Value]:
    out: list[Value] = []
    for i, value in enumerate(values):
        if i:
            out.append(sep)
        out.append(value)
    return out


_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]|[#@*])\}(?![A-Za-z0-9_])")


def _written(source: str) -> str:
    """A word as written, without the quotes around all of it, ``${NAME}`` as ``$NAME``."""
    if len(source) > 1 and source[0] == source[-1] and source[0] in "\"'":
        source = source[1:-1]
    return _BRACED.sub(r"$\1", source) if "${" in source else source


def _annotate(value: Value, loc: Loc, name: str) -> Value:
    """An unknown shell value says where it was assigned."""
    if isinstance(value, Unknown):
        return Unknown(
            value.expression,
            f"${name} is assigned at {loc.file}:{loc.line} from {value.expression}: {value.reason}",
        )
    if isinstance(value, Sym):
        return Sym(tuple(_annotate(part, loc, name) for part in value.parts))
    return value


def _fails(body: Block) -> bool:
    """Whether a body ends by failing the run (``exit N``, N a number other than 0)."""
    if not body.items:
        return False
    last = body.items[-1]
    if not isinstance(last, Command) or len(last.words) != 2 or _command_name(last) != "exit":
        return False
    code = last.words[1].parts
    return (
        len(code) == 1
        and isinstance(code[0], Lit)
        and code[0].text.isdigit()
        and code[0].text != "0"
    )


def _command_name(node: Node) -> str | None:
    if isinstance(node, Command) and node.words and len(node.words[0].parts) == 1:
        part = node.words[0].parts[0]
        return part.text if isinstance(part, Lit) else None
    return None


def _associative(name: str) -> Unknown:
    return Unknown(
        f"${{{name}[@]}}", f"{name} is an associative array, which stagegate does not compute"
    )


def _scalars(table: dict[str, Value]) -> list[tuple[str, Value]]:
    """The variables, an array as its element 0 (what ``$A`` is)."""
    out: list[tuple[str, Value]] = []
    for name, value in table.items():
        if isinstance(value, Array):
            first = value.get(0)
            value = UNSET if first is None else first
        out.append((name, value))
    return out


def _has_flag(node: Declare, flag: str) -> bool:
    return any(
        isinstance(i, Word)
        and (syntax_text := "".join(getattr(p, "text", "") for p in i.parts)).startswith("-")
        and flag in syntax_text
        for i in node.items
    )


_STATEMENTS: dict[type, Callable[[Walker, Any], Status]] = {
    Block: Walker.block,
    AndOr: Walker.and_or,
    Not: Walker.negate,
    If: Walker.if_statement,
    Case: Walker.case_statement,
    For: Walker.for_statement,
    CFor: Walker.c_for,
    Loop: Walker.while_statement,
    Function: Walker.define,
    Subshell: Walker.subshell,
    Group: Walker.group,
    Redirected: Walker.redirected,
    Pipeline: Walker.pipeline,
    Test: Walker.test,
    ArithCommand: Walker.arithmetic_command,
    Unread: Walker.unread,
    Command: Walker.command,
    Declare: Walker.declare,
}
