"""A ``run:`` script read as POSIX shell: assignments, loops, downloads, env writes.

Nothing is executed: scripts are split into words with ``shlex`` and only the effects
stagegate follows are evaluated; ``$(...)`` and backquotes are unknown values.
"""

from __future__ import annotations

import fnmatch
import functools
import operator
from collections.abc import Callable, Iterator
from typing import Any

from stagegate.ci import splits
from stagegate.ci.files import invalid
from stagegate.ci.scopes import Host, Scope
from stagegate.ci.shellwords import (
    ASSIGN,
    HEREDOC,
    NAME_RE,
    OPERATOR_CHARS,
    PRIVATE,
    REDIRECTS,
    SENTINEL,
    SEPARATORS,
    SPECIALS,
    UNSET,
    USES,
    after_equals,
    annotate,
    branch_bodies,
    fails,
    is_glob,
    is_test,
    loop_end,
    marked_words,
    redirect_target,
    renumbered_words,
    shell_words,
    size,
    strip,
    tee_as_append,
    unmark,
    worth_reading,
)
from stagegate.ci.splits import Evaluated
from stagegate.ci.subst import Output, substitution
from stagegate.ci.textops import NUMBER, parameter_expansion
from stagegate.ci.transfers import (
    ENV_FILE,
    MAX_CALL_DEPTH,
    MAX_LOOP,
    MAX_SCRIPT,
    MAX_VALUE,
    OUT_FILE,
    THIS_RUN,
    Site,
    Transfer,
    shown,
    text_value,
)
from stagegate.errors import Loc, LocatedError
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Sym, Unknown, Value, concat, unknowns
from stagegate.records import replace

# --------------------------------------------------------------------------- shell

PARSED: dict[str, tuple[list[tuple[int, list[str]]], tuple[Value, ...], dict[Any, Any]]] = {}
"""A script text without ``${{ }}`` -> its commands, its table of values, its here-documents."""
MAX_PARSED = 512
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "-eq": operator.eq,
    "-ne": operator.ne,
    "-lt": operator.lt,
    "-le": operator.le,
    "-gt": operator.gt,
    "-ge": operator.ge,
}
"""The integer comparisons of ``[[ ]]`` and ``test``, decided on decimal integers."""


class Shell:
    """A ``run:`` script read as POSIX shell: assignments, loops, downloads, env writes.

    Nothing is executed: ``$(...)`` and backquotes are unknown values; ``for`` loops
    over literal words are expanded; ``echo "K=V" >> "$GITHUB_ENV"`` sets K for the
    later steps of the job."""

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
    ) -> None:
        """``script``: a repository script a ``run:`` calls, as (its path, the values of
        its positional parameters, how deep the calls go); else the step's ``run:`` at
        ``path`` of the site's document. ``for_outputs``: read for its ``$GITHUB_OUTPUT``
        writes (``outputs``), however little else it does."""
        self.for_outputs = for_outputs
        self.reader = reader
        self.site = site
        self.text = text
        self.scope = scope
        self.table: list[Value] = []
        self.noted = False
        """Whether splitting the script reported something (so it is not cached)."""
        self.evaluated: Evaluated | None = None
        """The ``${{ }}`` this reading of the script evaluated (``ci.splits``)."""
        self.vars: dict[str, Value] = {}
        self.pending: list[tuple[Transfer, str | None]] = []
        self.groups: list[list[tuple[int, list[str]]]] = []
        self.heredocs: dict[int, list[tuple[int, str]]] = {}
        self.folders: str | None = None
        """The variable of a ``for`` loop over the downloaded artifacts' folders."""
        self.used = False
        """Whether a command used the downloaded files (moved, copied, installed them):
        an ``rm`` after that is clean-up, not a choice of what the download keeps."""
        self.at = 0
        """The line (from the script's first) of the command being read."""
        """Line of a command -> its here-document's lines (as one shell word each)."""
        """This script's pattern downloads (with their -D folder), held until its end so
        that a later ``rm -rf`` of a downloaded artifact's folder counts as an exclusion."""
        self.positional: list[Value] | None = None
        self.depth = 0
        self.exported: set[str] = set()
        """The variables ``export`` gives the scripts this one calls."""
        self.outputs: dict[str, Value] = {}
        """What this step writes to ``$GITHUB_OUTPUT`` (its ``steps.ID.outputs``)."""
        self.writes: dict[str, Value] = {}
        """What this step writes to ``$GITHUB_ENV``: the later steps' env, not its own
        (a script it calls shares its parent's)."""
        self.path = path
        self.locs: dict[int, Loc] = {}
        """Line (from the script's first) -> its location, made once."""
        if script is not None:
            self.file, self.positional, self.depth = script
            self.first_line, self.col = 1, 1
            return
        self.file = site.doc.file
        self.first_line, self.col = 0, 1
        """Where the script starts: found at the first ``loc`` (most are never read)."""

    def loc(self, offset_line: int) -> Loc:
        found = self.locs.get(offset_line)
        if found is not None:
            return found
        if not self.first_line:
            base = self.site.doc.loc(self.path)
            block = self.reader.files.block_offset(self.site.doc, self.path)
            self.first_line = base.line + block
            self.col = 1 if block else base.col
        found = Loc(self.file, self.first_line + offset_line, self.col if offset_line == 0 else 1)
        self.locs[offset_line] = found
        return found

    def run(self) -> None:
        if not (self.for_outputs or worth_reading(self.reader.files, self.text)):
            return
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
        self.execute(self.parsed())
        for transfer, _folder in self.pending:
            self.reader.add(transfer)
        if self.positional is None:
            self.site.written.update(self.writes)

    def execute(self, commands: list[tuple[int, list[str]]]) -> None:
        """Run the commands' effects stagegate follows; a ``for`` loop's body once per value."""
        i = 0
        while i < len(commands):
            line_no, words = commands[i]
            self.at = line_no
            if words and words[0] in ("then", "else", "do") and len(words) > 1:
                words = words[1:]  # `then X=1` on one line: the keyword opens X=1
            if words and words[0] == "if":
                i = self.conditional(commands, i)
                continue
            stripped = strip(words)
            if stripped and stripped[0] in ("for", "while", "until"):
                end = loop_end(commands, i)
                body = commands[i + 1 : end]
                if stripped[0] == "for" and len(stripped) >= 2 and NAME_RE.fullmatch(stripped[1]):
                    self.loop(line_no, stripped, body)
                else:
                    self.execute(body)
                i = end + 1
                continue
            if words and words[0] == "{":
                self.groups.append([])
            elif words and words[0] == "}" and self.groups:
                self.close_group(line_no, words)
                i += 1
                continue
            if self.groups and strip(words)[:1] == ["echo"] and redirect_target(words) is None:
                self.groups[-1].append((line_no, strip(words)))
            self.at = line_no
            self.command(line_no, words)
            i += 1

    def conditional(self, commands: list[tuple[int, list[str]]], start: int) -> int:
        """``if C; then A; elif D; then B; else E; fi`` from ``commands[start]``: the branch
        the conditions decide runs; where they cannot be decided, every branch runs (what
        each downloads may happen) and a variable or env write the branches set apart is
        unknown. A branch that ends in ``exit N`` (N not 0) is a failing run: not read.
        Returns the index after ``fi``."""
        branches, end = branch_bodies(commands, start)
        if self.skip(branches):
            return end
        line_no = commands[start][0]
        chosen: list[tuple[int, list[str]]] | None = None
        undecided: list[list[tuple[int, list[str]]]] = []
        for condition, body in branches:
            if condition is not None:
                self.execute([c for c in condition if not is_test(c[1])])  # a command runs
            if fails(body):
                continue  # a run that succeeds did not take it, whatever stagegate decides
            decided = True if condition is None else self.decide(condition)
            if decided is False:
                continue
            if decided is True and not undecided:
                chosen = body
                break
            undecided.append(body)
            if decided is True:
                break
        else:
            if undecided and branches and branches[-1][0] is not None:
                undecided.append([])  # no else, no branch taken: the values before the if
        if chosen is not None:
            self.execute(chosen)
            return end
        runs = undecided
        if not runs:
            return end
        before_vars, before_env = dict(self.vars), dict(self.writes)
        outcomes: list[tuple[dict[str, Value], dict[str, Any]]] = []
        written = self.writes
        for body in runs:
            self.vars = dict(before_vars)
            written.clear()
            written.update(before_env)
            self.execute(body)
            outcomes.append((self.vars, dict(written)))
        loc = self.loc(line_no)
        merged: list[dict[str, Any]] = []
        for which in (0, 1):
            out: dict[str, Any] = {}
            for name in {k for outcome in outcomes for k in outcome[which]}:
                seen = [o[which].get(name, UNSET) for o in outcomes]
                if all(v == seen[0] for v in seen) and seen[0] is not UNSET:
                    out[name] = seen[0]
                else:
                    what = f"${name}" if which == 0 else f"env.{name}"
                    out[name] = Unknown(
                        what,
                        f"{what} is set differently by the branches of the if at "
                        f"{loc.file}:{loc.line}, whose condition stagegate cannot decide; "
                        f"bind env.{name}",
                    )
            merged.append(out)
        self.vars = merged[0]
        written.clear()
        written.update(merged[1])
        return end

    def decide(self, condition: list[tuple[int, list[str]]]) -> bool | None:
        """A condition's truth where its values are known: ``[[ A == B ]]`` (B a glob
        where it has wildcards), ``!=``, ``=``, ``-n``, ``-z``, ``true``/``false`` (a
        ``${{ }}`` GitHub substituted) and ``!``; else None."""
        if len(condition) != 1:
            return None
        words = list(condition[0][1])
        negate = False
        while words and words[0] == "!":
            negate, words = not negate, words[1:]
        if words[:1] in (["[["], ["["], ["test"]):
            words = words[1:-1] if words[0] != "test" else words[1:]
            if words and words[-1] in ("]]", "]"):
                words = words[:-1]
            while words and words[0] == "!":
                negate, words = not negate, words[1:]
            result = self.test(words)
        elif len(words) == 1:
            value = self.value(words[0])
            result = {"true": True, "false": False}.get(value) if isinstance(value, str) else None
        else:
            result = None
        return None if result is None else result != negate

    def test(self, words: list[str]) -> bool | None:
        values = [self.value(w) for w in words]
        if any(not isinstance(v, str) for v in values):
            return None
        texts = [str(v) for v in values]
        if len(texts) == 2 and words[0] in ("-n", "-z"):
            return (texts[1] != "") == (words[0] == "-n")
        if len(texts) == 1:
            return texts[0] != ""
        if len(texts) == 3 and words[1] in ("==", "=", "!="):
            same = fnmatch.fnmatchcase(texts[0], texts[2])
            return same if words[1] != "!=" else not same
        if len(texts) == 3 and words[1] in COMPARE:
            if not all(NUMBER.fullmatch(t.strip()) for t in (texts[0], texts[2])):
                return None  # bash reads other text as an expression: not decided
            return COMPARE[words[1]](int(texts[0]), int(texts[2]))
        return None

    def close_group(self, line_no: int, words: list[str]) -> None:
        """``{ echo "A=1"; echo "B=2"; } >> "$GITHUB_ENV"``: the group's echos write the file."""
        echos = self.groups.pop()
        target = redirect_target(words)
        if target is not None and self.value(target) == ENV_FILE:
            for at, echo in echos:
                self.env_write(at, echo[1:])

    def loop(self, line_no: int, words: list[str], body: list[tuple[int, list[str]]]) -> None:
        name = words[1]
        items = words[3:] if len(words) > 3 and words[2] == "in" else None
        values: list[Value] = []
        if items is None:
            values = [
                Unknown(
                    f"${name}", f"the loop at {self.loc(line_no)} runs over the script's arguments"
                )
            ]
        for item in items or ():
            value = self.value(item)
            if isinstance(value, str) and SENTINEL.search(item) is not None:
                values += value.split()
            else:
                values.append(value)
        if len(values) > MAX_LOOP:
            raise invalid(
                self.loc(line_no),
                f"a for loop over {len(values):,} values; stagegate expands at most {MAX_LOOP:,}.",
            )
        saved = self.folders
        if self.pending and not self.used and any(is_glob(v) for v in values):
            self.folders = name  # a loop over the downloaded artifacts' folders
        try:
            for value in values:
                self.vars[name] = (
                    Unknown(
                        f"${name}", f"${name} runs over {value.expression} ({self.loc(line_no)})"
                    )
                    if isinstance(value, Unknown) and items is not None
                    else value
                )
                self.execute(body)
        finally:
            self.folders = saved

    def skip(self, branches: list[tuple[Any, list[tuple[int, list[str]]]]]) -> bool:
        """``if [[ "$dir" == *-tests ]]; then continue; fi`` in a loop over the downloaded
        artifacts' folders (download-wheels): the artifacts it skips are excluded from
        what the downloads keep. Whether the if was one."""
        if self.folders is None or len(branches) != 1:
            return False
        condition, body = branches[0]
        said = [strip(w) for _, w in body]
        if [w for w in said if w[:1] not in (["echo"], ["printf"], [":"])] != [["continue"]]:
            return False  # a message before `continue` changes nothing
        if not condition or len(condition) != 1:
            return False
        words = condition[0][1]
        if len(words) != 5 or words[0] != "[[" or words[2] != "==" or words[4] != "]]":
            return False
        match = SENTINEL.fullmatch(words[1])
        entry = self.table[int(match.group(1))] if match else None
        if not isinstance(entry, tuple) or entry[:2] != ("var", self.folders):
            return False
        pattern = self.value(words[3])
        if not isinstance(pattern, str):
            return False
        for i, (transfer, folder) in enumerate(self.pending):
            if folder is None and pattern not in transfer.exclude:
                self.pending[i] = (replace(transfer, exclude=(*transfer.exclude, pattern)), folder)
        return True

    # -- parsing

    def sentinel(self, value: Value) -> str:
        self.table.append(value)
        return f"\ue000{len(self.table) - 1}\ue001"

    def escape(self, text: str) -> str:
        """``text`` with each character stagegate marks values with kept out of band."""
        if PRIVATE.search(text) is None:
            return text
        return PRIVATE.sub(lambda m: self.sentinel(("lit", m.group())), text)

    def substitute(self, line: str, line_no: int) -> str:
        """GitHub's ``${{ }}`` first (as GitHub does), then ``$VAR`` marked outside single quotes."""
        if "${{" in line:
            pieces: list[str] = []
            try:
                parts = ghexpr.split_text(line)
            except LocatedError as exc:
                raise invalid(self.loc(line_no), f"invalid expression: {exc.message}") from None
            evaluated = self.evaluated or Evaluated(self.expression)
            for piece, _offset in parts:
                if not piece.startswith("${{"):
                    pieces.append(self.escape(piece))
                    continue
                parse = functools.partial(self.parse, piece, line_no)
                value, rendered = evaluated.take(piece, parse)
                if rendered[0] == "mark":
                    evaluated.slots.append((len(self.table), evaluated.used - 1))
                    pieces.append(self.sentinel(value))
                else:
                    pieces.append(self.escape(value) if rendered[0] == "text" else rendered[1])
            line = "".join(pieces)
        else:
            line = self.escape(line)
        return "".join(
            piece if isinstance(piece, str) else self.sentinel(piece.value)
            for piece in marked_words(line)
        )

    def parse(self, piece: str, line_no: int) -> ghexpr.Node:
        """The ``${{ }}`` ``piece`` of the script's line ``line_no``, parsed."""
        try:
            return ghexpr.parse(piece[3:-2])
        except LocatedError as exc:
            raise invalid(self.loc(line_no), f"invalid expression: {exc.message}") from None

    def expression(self, piece: str, node: ghexpr.Node) -> Value:
        """The value of the script's ``${{ }}`` ``piece`` (parsed: ``node``)."""
        value = ghexpr.Evaluator(self.scope.lookup)(node)
        return Unknown(piece.strip(), value.reason) if isinstance(value, Unknown) else value

    def parsed(self) -> list[tuple[int, list[str]]]:
        """The script's commands. A text without ``${{ }}`` (a repository script, most
        ``run:`` blocks) marks the same in every context: it is split once, and each
        reading starts from a copy of that split's table of values. A text with them
        is split once per set of what its expressions render to (``ci.splits``)."""
        if "${{" in self.text:
            return splits.parsed(self)
        cached = PARSED.get(self.text)
        if cached is not None:
            commands, table, self.heredocs = cached
            self.table = list(table)
            return commands
        self.noted = False
        commands = list(self.commands())
        if not self.noted:  # a reading that reported something is not replayed silently
            if len(PARSED) >= MAX_PARSED:
                PARSED.pop(next(iter(PARSED)))
            PARSED[self.text] = (commands, tuple(self.table), self.heredocs)
        return commands

    def commands(self) -> Iterator[tuple[int, list[str]]]:
        lines = self.text.split("\n")
        i = 0
        while i < len(lines):
            start = i
            line = lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i]
            heredoc = HEREDOC.search(line) if "<<" in line else None
            marked = self.substitute(line, start)
            words: list[str] | None = None
            for extra in range(20):
                tokens = renumbered_words(marked)
                if tokens is not None:
                    words = list(tokens)
                    break
                # an unclosed quote: the string goes on on the next line
                if i + 1 >= len(lines) or extra == 19:
                    break
                i += 1
                marked += "\n" + self.substitute(lines[i], i)
            i += 1
            if heredoc:
                end = heredoc.group(2)
                body: list[tuple[int, str]] = []
                while i < len(lines) and lines[i].strip() != end:
                    # a quoted delimiter ('EOF') keeps the body literal; else $VAR expands
                    text = lines[i].strip()
                    body.append(
                        (
                            i,
                            "'" + self.escape(text).replace("'", "'\\''") + "'"
                            if heredoc.group(1)
                            else self.substitute('"' + text.replace('"', '\\"') + '"', i),
                        )
                    )
                    i += 1
                i += 1
                self.heredocs[start] = body
            if words is None:
                if "gh run download" in line:
                    self.noted = True
                    self.reader.note_unresolved(
                        self.loc(start),
                        Unknown(line.strip()[:200], "a gh run download stagegate cannot parse"),
                    )
                continue
            words = tee_as_append(words)
            command: list[str] = []
            for word in words:
                if word in SEPARATORS or (word and set(word) <= OPERATOR_CHARS):
                    if command:
                        yield start, command
                    command = []
                else:
                    command.append(word)
            if command:
                yield start, command

    # -- values

    def value(self, word: str) -> Value:
        """The value of a marked word. One longer than MAX_VALUE characters (doubling
        assignments make them grow exponentially) is unknown, and reported at its line."""
        if "\ue000" not in word:  # no marked value: the word is its own text
            return word if len(word) <= MAX_VALUE else self.too_long(word)
        pieces: list[Value] = []
        pos = 0
        literal = False
        for match in SENTINEL.finditer(word):
            pieces.append(word[pos : match.start()])
            entry = self.table[int(match.group(1))]
            if isinstance(entry, tuple) and entry[0] == "lit":
                pieces.append(entry[1])
                literal = True
            elif isinstance(entry, tuple) and entry[0] == "expand":
                pieces.append(parameter_expansion(self, entry[1], entry[2]))
            elif isinstance(entry, tuple) and entry[0] == "subst":
                pieces.append(substitution(self, entry[1]))
            elif isinstance(entry, tuple):
                pieces.append(self.variable(entry[1]))
            else:
                pieces.append(entry)
            pos = match.end()
        pieces.append(word[pos:])
        if len(pieces) == 3 and pieces[0] == pieces[2] == "" and isinstance(pieces[1], Output):
            return pieces[1]  # "$X" of a command's JSON output: bounded by its own limit
        if sum(size(p) for p in pieces if not isinstance(p, Output)) > MAX_VALUE:
            return self.too_long(word)
        value = concat(pieces)
        if literal and isinstance(value, str) and value in SPECIALS:
            # the script spells one of stagegate's own markers: text, never the marker
            return Unknown(
                unmark(word, self),
                "a value made of the private-use characters stagegate marks values with",
            )
        return value

    def too_long(self, word: str) -> Unknown:
        written = unmark(word, self, MAX_VALUE // 10)
        unknown = Unknown(
            written,
            f"a value longer than {MAX_VALUE:,} characters (no artifact name or glob is that "
            "long); stagegate does not compute it",
        )
        self.reader.note_unresolved(self.loc(self.at), unknown)
        return unknown

    def parameter(self, name: str) -> Value:
        """``$1``..., ``$#``, ``$0``: from the call, in a script a ``run:`` calls."""
        if self.positional is None:
            return Unknown(f"${name}", f"${name} is a shell parameter")
        if name == "#":
            return str(len(self.positional))
        if name == "0":
            return self.file
        n = int(name)
        return self.positional[n - 1] if n <= len(self.positional) else ""

    def variable(self, name: str) -> Value:
        """A shell variable: a bind for this job or file, then the script's own known
        value, then a bare bind, then the script's unknown value, then the environment."""
        if name.isdigit() or name == "#":
            return self.parameter(name)
        key = f"env.{name}"
        bound = self.reader.bound(key, self.scope, bare=False)
        if bound is not NotImplemented:
            return bound
        local = self.vars.get(name)
        if name in self.vars and not unknowns(local):
            return local
        bound = self.reader.bound(key, self.scope, scoped=False)
        if bound is not NotImplemented:
            return bound
        if name in self.vars:
            return local
        if name == "GITHUB_ENV":
            return ENV_FILE
        if name == "GITHUB_OUTPUT":
            return OUT_FILE
        if name == "GITHUB_RUN_ID":
            return THIS_RUN
        if name == "GITHUB_SHA":
            found = self.reader.bound("github.sha", self.scope)
            if found is not NotImplemented:
                return found
        found = self.scope.env_value(name)
        if found is not NotImplemented:
            return found
        reason = (
            self.reader.env_writers.get(name)
            or f"${name} is set in no env: of the step, job or workflow, nor earlier in the script; bind env.{name}"
        )
        return Unknown(f"${name}", reason)

    # -- commands

    def split(self, words: list[str]) -> list[str]:
        """Words with each unquoted ``$X`` or ``$(...)`` whose value is known text split
        into the words the shell makes of it (at spaces, tabs and line breaks)."""
        out: list[str] = []
        for word in words:
            match = SENTINEL.fullmatch(word)
            entry = self.table[int(match.group(1))] if match else None
            if (
                isinstance(entry, tuple)
                and len(entry) > 2
                and entry[2] is True
                and entry[0] in ("var", "subst")
            ):
                value = (
                    self.variable(entry[1]) if entry[0] == "var" else substitution(self, entry[1])
                )
                pieces = value.split() if isinstance(value, str) else [value]
                if pieces != [value] and PRIVATE.search(value) is None:
                    out += [self.escape(piece) for piece in pieces]
                    continue
            out.append(word)
        return out

    def command(self, line_no: int, words: list[str]) -> None:
        words = strip(words)
        if not words:
            return
        head = words[0]
        if not all(ASSIGN.fullmatch(w) for w in words) and head not in (
            "export",
            "local",
            "declare",
            "readonly",
        ):
            words = self.split(words)
            if not words:
                return
            head = words[0]
        if all(ASSIGN.fullmatch(w) for w in words) or (
            head in ("export", "local", "declare", "readonly") and len(words) > 1
        ):
            for word in words[1:] if head in ("export", "local", "declare", "readonly") else words:
                match = ASSIGN.fullmatch(word)
                if head == "export":
                    self.exported.add(match.group(1) if match else word)
                if match:
                    value = self.value(match.group(2))
                    if isinstance(value, Unknown | Sym):  # says where it was assigned
                        value = annotate(value, self.loc(line_no), match.group(1))
                    self.vars[match.group(1)] = value
            return
        redirect = redirect_target(words)
        if head == "tee" and redirect is None:
            redirect = next((w for w in words[1:] if not w.startswith("-") and w != "<<"), None)
        if (
            head in ("cat", "tee")
            and line_no in self.heredocs
            and redirect is not None
            and self.value(redirect) == ENV_FILE
        ):
            for at, word in self.heredocs[line_no]:
                self.env_write(at, shell_words(word))
            return
        target = self.value(redirect) if head == "echo" and redirect is not None else None
        if target in (ENV_FILE, OUT_FILE):
            end = words.index(">>") if ">>" in words else len(words)
            self.env_write(line_no, words[1:end], target == OUT_FILE)
            return
        if head in ("echo", "printf", ":"):
            return  # its arguments are text it prints, not a command
        if head in USES and self.pending:
            self.used = True
        if head in ("mv", "cp", "find"):
            self.reader.on_files(self.site, self.loc(line_no), [self.value(w) for w in words], None)
        if head == "rm" and self.pending:
            if not self.used:
                self.remove(line_no, words[1:])
            return
        if len(words) >= 3 and words[0] == "gh" and words[1] == "run" and words[2] == "download":
            self.download(line_no, words[3:])
            return
        if self.call(line_no, words):
            return
        for i in range(len(words) - 2):
            if words[i] == "gh" and words[i + 1] == "run" and words[i + 2] == "download":
                self.download(line_no, words[i + 3 :])
                return

    def call(self, line_no: int, words: list[str]) -> bool:
        """``./ci/tools/X A B``, ``ci/tools/X``, ``bash ci/tools/X``: a shell script of the
        repository, read as this step's script with ``$1``... bound from the call (its
        downloads and ``$GITHUB_ENV`` writes are the calling job's). Whether it was one."""
        given: dict[str, Value] = {n: self.vars[n] for n in self.exported if n in self.vars}
        while words and ASSIGN.fullmatch(words[0]):
            match = ASSIGN.fullmatch(words[0])
            assert match is not None
            given[match.group(1)] = self.value(match.group(2))  # `A=1 ./x`: the script's env
            words = words[1:]
        if len(words) >= 2 and words[0] in ("bash", "sh") and not words[1].startswith("-"):
            words = words[1:]
        if not words or "/" not in words[0] or words[0].startswith("/"):
            return False
        where = self.value(words[0])
        if not isinstance(where, str):
            return False
        rel = self.reader.files.repo_path(where)
        if rel is None:
            return False
        loc = self.loc(line_no)
        text = self.reader.files.script(rel)
        if text is None:
            return False
        if self.depth + 1 > MAX_CALL_DEPTH:
            raise invalid(
                loc, f"scripts call each other more than {MAX_CALL_DEPTH} deep; break the chain."
            )
        args: list[Value] = []
        for word in words[1:]:
            if word.startswith((">", "<", "2>", "&>")) or word in SEPARATORS:
                break
            args.append(self.value(word))
        called = Shell(
            self.reader, self.site, (), text, self.scope, script=(rel, args, self.depth + 1)
        )
        called.writes, called.outputs = self.writes, self.outputs
        called.vars, called.exported = given, set(given)  # what it inherits: the exported
        called.run()
        return True

    def env_write(self, line_no: int, words: list[str], output: bool = False) -> None:
        """``echo "K=V" >> "$GITHUB_ENV"``; ``output``: to ``$GITHUB_OUTPUT``, a step output."""
        words = [w for w in words if not w.startswith("-")]
        if not words:
            return
        text = self.value(" ".join(words))
        head = (
            text
            if isinstance(text, str)
            else text.parts[0]
            if isinstance(text, Sym) and isinstance(text.parts[0], str)
            else ""
        )
        name, sep, _rest = head.partition("=") if isinstance(head, str) else ("", "", "")
        if not sep or not NAME_RE.fullmatch(name):
            return
        value = after_equals(text)
        loc = self.loc(line_no)
        if output:
            multiline = isinstance(value, str) and "\n" in value
            self.outputs[name] = (
                Unknown(f"steps.*.outputs.{name}", f"a K=V output of several lines ({loc})")
                if multiline
                else value
            )
            return
        if unknowns(value):
            self.reader.env_writers[name] = (
                f"{name} is written to $GITHUB_ENV by the script at {loc.file}:{loc.line} from a value "
                f"stagegate cannot compute ({unknowns(value)[0].expression}); bind env.{name}"
            )
            value = Unknown(f"env.{name}", self.reader.env_writers[name])
        if self.site.runs:
            self.writes[name] = value

    def download(self, line_no: int, args: list[str]) -> None:
        names: list[str] = []
        patterns: list[str] = []
        run: str | None = None
        folder: str | None = None
        i = 0
        while i < len(args):
            arg = args[i]
            if arg.isdigit() and i + 1 < len(args) and args[i + 1] in REDIRECTS:
                i += 1  # `2>&1`: the descriptor a redirection names
                continue
            if arg in REDIRECTS or arg in ("2>", "2>&1"):
                i += 2
                continue
            for short, long, into in (("-n", "--name", names), ("-p", "--pattern", patterns)):
                if arg in (short, long):
                    if i + 1 < len(args):
                        into.append(args[i + 1])
                    i += 1
                    break
                if arg.startswith(long + "="):
                    into.append(arg[len(long) + 1 :])
                    break
                if arg.startswith(short) and len(arg) > 2 and not arg.startswith("--"):
                    into.append(arg[2:].lstrip("="))
                    break
            else:
                if arg in ("-D", "--dir") and i + 1 < len(args):
                    folder = args[i + 1]
                if arg.startswith("--dir="):
                    folder = arg[len("--dir=") :]
                if arg in ("-D", "--dir", "-R", "--repo"):
                    i += 1
                elif not arg.startswith("-") and run is None:
                    run = arg
            i += 1
        loc = self.loc(line_no)
        run_id = "this"
        if run is not None:
            value = self.value(run)
            if value != THIS_RUN:
                run_id = unmark(run, self)
                if self.site.runs:
                    # which run it reads decides what it can select: never guessed
                    self.reader.note_unresolved(loc, value)
        selections = [(n, "name") for n in names] + [(p, "pattern") for p in patterns]
        if not selections:
            selections = [("*", "pattern")]
        where = self.value(folder) if folder is not None else None
        isolate = "1" if patterns or len(names) != 1 else ""  # one folder each, as gh does
        landing: list[Value] = [self.value(folder) if folder is not None else ".", isolate]
        for word, kind in selections:
            transfer = self.site.transfer("download", loc, self.value(word), kind, run_id)
            self.reader.on_files(self.site, loc, landing, transfer)
            if kind == "pattern":
                self.pending.append((transfer, where if isinstance(where, str) else None))
            else:
                self.reader.add(transfer)

    def remove(self, line_no: int, args: list[str]) -> None:
        """``rm -rf DIR/NAME`` after ``gh run download -p GLOB -D DIR``: NAME (a glob, as the
        shell expands it) is taken out of what the download keeps. A path stagegate cannot
        compute makes the downloads' selection unresolved."""
        for arg in args:
            if arg.startswith("-"):
                continue
            value = self.value(arg)
            if unknowns(value):
                self.reader.note_unresolved(
                    self.loc(line_no),
                    Unknown(
                        f"rm {unmark(arg, self)}",
                        "a script removes a path stagegate cannot compute after a download, so "
                        "what the download keeps is unknown; bind what it removes",
                    ),
                )
                continue
            for i, (transfer, folder) in enumerate(self.pending):
                text = value if isinstance(value, str) else None
                name: Value = value
                if folder is not None:
                    prefix = folder.rstrip("/") + "/"
                    if text is not None and text.startswith(prefix):
                        name = text[len(prefix) :]
                    elif (
                        isinstance(value, Sym)
                        and isinstance(value.parts[0], str)
                        and value.parts[0].startswith(prefix)
                    ):
                        name = concat([value.parts[0][len(prefix) :], *value.parts[1:]])
                    else:
                        continue
                if "/" in shown(name).rstrip("/"):
                    continue
                if isinstance(name, str):
                    name = name.rstrip("/")
                excluded = replace(transfer, exclude=(*transfer.exclude, text_value(name)))
                self.pending[i] = (excluded, folder)
