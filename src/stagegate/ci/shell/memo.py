"""Readings of a script remembered across the contexts it runs in, in the whole process.

A step's script is read once per matrix row and per caller, again for each stage
``check --all`` reads, and again for the other commit ``continuity`` reads; most of
those readings ask the same questions and get the same answers. A remembered reading
(an ``Outcome``; a ``Call`` for a repository script run as a child process) is
replayed where the walk would do the same, its transfers made again for the new site
(job, callers, why it does not run). The memo is one per process, shared by every
reading (``Host``) and every ``ci.files.Files``, so it holds nothing a reading may
answer differently unless that is in the key or is a recorded question.

What a walk depends on, exactly:

- in its key (``Shell.key``, ``Walker.call_key``): the script's text as written and as
  rendered (``${{ }}`` written in; the values kept out of it, strictly: a matrix value
  tagged for ``init`` is not the same text untagged), where it is shown (a ``run:``:
  the document's file as locations name it, the path in it, and the location of its
  first line, block scalar or not, so every location the walk makes is the same; a
  repository script: its path, which is what its locations name), whether the site
  runs at the stage (``Site.runs``), whether it is read for its outputs; for a called
  script also its arguments, the variables it inherits (names and values, strictly),
  how deep the calls and constructs go, and the walker's loop over downloaded folders;
- the paths the migration's binds name (``Host.bind_paths``), in both keys: a bind of
  a path none names is NotImplemented wherever it is asked, and is not a question;
- as recorded questions (``Inputs``), asked in order and answered by the reading that
  recalls (``Tree.find``): a bind of a path some bind names (``Host.bound``), the step's environment
  (``Scope.env_value``), what an earlier step wrote to ``$GITHUB_ENV``
  (``Host.env_writers``), and every repository file the walk looks at: which file a
  path a script names is (``Files.repo_path``: a called script, ``-f``, a ``yq``
  file, a call in a statement not read) and its bytes (``Files.bytes_of``: a called
  script's text, a ``yq`` file's data); the walker reads the repository only through
  these questions (it holds no ``Files``);
- its work: a walk is charged to the reading's budget (``ci.budget``); a replay is
  charged what the walk used (``cost``), and is not made where the budget has less
  left (the walk would stop there), so a reading's result never depends on what the
  memo holds: it is the result of reading every script afresh.

Nothing else reaches the walk: the site's job, callers and ``why`` are put in the
transfers on replay (``moved``), and the effects are told to the reading that recalls
(``deliver``), which decides what they mean (its publishers, its kind of run). A walk
the budget stopped is not remembered. Answers are compared strictly (``same``).

A key's readings form a tree of questions and answers (``Tree``): a recall asks each
question once, down the path its answers take. Memory is bounded: at most MAX_KEYS
scripts and places and MAX_REMEMBERED readings in all (least recently used keys
forgotten first), MAX_OUTCOMES readings a key, for readings and called scripts alike.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from stagegate.ci.scopes import Host, Scope
from stagegate.ci.transfers import Site, Transfer
from stagegate.model.ghexpr import Value
from stagegate.records import replace

MAX_KEYS = 2_048
"""Scripts and places remembered in the process (each memo: readings, calls)."""
MAX_OUTCOMES = 256
"""Readings remembered per script and place (one per set of answers, e.g. per row)."""
MAX_REMEMBERED = 8_192
"""Readings remembered in all (each memo)."""

Question = tuple[Any, ...]


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same kind: a tagged matrix value is not its untagged text."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if a is NotImplemented or b is NotImplemented:
        return a is b
    return bool(a == b) and getattr(a, "axis", None) == getattr(b, "axis", None)


class Inputs:
    """The reading's questions to its context, answered and recorded in order."""

    def __init__(self, host: Host, scope: Scope) -> None:
        self.host = host
        self.scope = scope
        self.files = host.files
        self.bind_paths = host.bind_paths
        self.asked: list[tuple[Question, Any]] = []
        self.written: list[tuple[str, str]] = []
        """What the reading told ``Host.env_writers``, in order."""

    def answer(self, question: Question) -> Any:
        kind = question[0]
        if kind == "bound":
            _kind, path, scoped, bare = question
            return self.host.bound(path, self.scope, scoped=scoped, bare=bare)
        if kind == "env":
            return self.scope.env_value(question[1])
        if kind == "writer":
            return self.host.env_writers.get(question[1])
        if kind == "path":
            return self.files.repo_path(question[1])
        if kind == "identifiers":
            return self.host.identifiers(question[1])
        return self.files.bytes_of(question[1])  # "bytes"

    def ask(self, question: Question) -> Any:
        found = self.answer(question)
        self.asked.append((question, found))
        return found

    def bound(self, path: str, *, scoped: bool = True, bare: bool = True) -> Value:
        if path not in self.bind_paths and " " not in path:
            return NotImplemented  # no bind names it: not a question (the key has the paths)
        return self.ask(("bound", path, scoped, bare))

    def env(self, name: str) -> Value:
        return self.ask(("env", name))

    def writer(self, name: str) -> str | None:
        found: str | None = self.ask(("writer", name))
        return found

    def path(self, written: str) -> str | None:
        """The repository file a script names (``Files.repo_path``), asked of the reading."""
        found: str | None = self.ask(("path", written))
        return found

    def bytes_of(self, rel: str) -> bytes | None:
        """The bytes of the repository file ``rel`` (``Files.bytes_of``), asked of the reading."""
        found: bytes | None = self.ask(("bytes", rel))
        return found

    def identifiers(self, command: Any) -> Value:
        """What ``cibuildwheel --print-build-identifiers`` prints, asked of the reading."""
        found: Value = self.ask(("identifiers", command))
        return found

    def write(self, name: str, reason: str) -> None:
        self.host.env_writers[name] = reason
        self.written.append((name, reason))


class Remembered(Protocol):
    asked: list[tuple[Question, Any]]
    cost: int
    """The units of work the walk used (``ci.budget``)."""


R = TypeVar("R", bound=Remembered)


def token(answer: Any) -> Any:
    """An answer as a dictionary key equal where ``same`` holds (TypeError where it
    cannot be hashed: a list or mapping from ``fromJSON``)."""
    found: tuple[Any, ...]
    kind = type(answer)
    if kind is str or answer is None:  # most answers: no axis, hashable
        return (kind, answer, None)
    if isinstance(answer, tuple):
        found = (tuple, tuple(token(a) for a in answer))
    else:
        found = (type(answer), answer, getattr(answer, "axis", None))
    hash(found)
    return found


class Node(Generic[R]):
    """Where the walks of one key that got the same answers so far stand: the next
    question they asked (a walk is a function of its key and answers, so all of them
    asked the same one) and a node per answer; or the reading that asked nothing more."""

    __slots__ = ("branches", "leaf", "odd", "question")

    def __init__(self) -> None:
        self.question: Question | None = None
        self.branches: dict[Any, Node[R]] = {}
        self.odd: list[tuple[Any, Node[R]]] = []
        """Answers that cannot be hashed, compared with ``same``."""
        self.leaf: R | None = None

    def child(self, answer: Any, *, make: bool = False) -> Node[R] | None:
        if type(answer) is str or answer is None or answer is NotImplemented:  # most answers
            node = self.branches.get((type(answer), answer, None))
            if node is None and make:
                node = self.branches[(type(answer), answer, None)] = Node()
            return node
        try:
            key = token(answer)
        except TypeError:
            for found, odd in self.odd:
                if same(found, answer):
                    return odd
            if not make:
                return None
            made: Node[R] = Node()
            self.odd.append((answer, made))
            return made
        node = self.branches.get(key)
        if node is None and make:
            node = Node()
            self.branches[key] = node
        return node


class Tree(Generic[R]):
    """The remembered readings of one key, as a tree of questions and answers."""

    __slots__ = ("root", "size")

    def __init__(self) -> None:
        self.root: Node[R] = Node()
        self.size = 0

    def find(self, inputs: Inputs) -> R | None:
        """The reading whose questions get the same answers here: each question is
        asked once, in the order the walks asked them."""
        node: Node[R] | None = self.root
        while node is not None:
            if node.leaf is not None:
                return node.leaf
            if node.question is None:
                return None
            node = node.child(inputs.answer(node.question))
        return None

    def add(self, item: R) -> bool:
        """Whether ``item`` was added (not where a walk asked otherwise: never, as a
        walk is a function of its key and answers)."""
        node = self.root
        for question, answer in item.asked:
            if node.leaf is not None:
                return False
            if node.question is None:
                node.question = question
            elif node.question != question:
                return False
            found = node.child(answer, make=True)
            assert found is not None
            node = found
        if node.question is not None or node.leaf is not None:
            return False
        node.leaf = item
        self.size += 1
        return True


class Memory(Generic[R]):
    """A script's key -> its remembered readings (a ``Tree``): at most MAX_OUTCOMES for
    a key (past them its readings are forgotten) and MAX_REMEMBERED in all, the least
    recently used keys forgotten first. ``recalled`` and ``remembered`` count what it
    did (for tests and benchmarks)."""

    def __init__(self) -> None:
        self.table: dict[tuple[Any, ...], Tree[R]] = {}
        self.size = 0
        self.recalled = 0
        self.remembered = 0

    def recall(self, key: tuple[Any, ...], inputs: Inputs, left: int) -> R | None:
        """A remembered reading of ``key`` whose questions get the same answers here,
        and whose work fits in what is ``left`` of the budget."""
        tree = self.table.get(key)
        if tree is None:
            return None
        found = tree.find(inputs)
        if found is None or found.cost > left:
            return None
        del self.table[key]
        self.table[key] = tree  # the most recently used last
        self.recalled += 1
        return found

    def remember(self, key: tuple[Any, ...], item: R) -> None:
        table = self.table
        tree = table.get(key)
        if tree is None or tree.size >= MAX_OUTCOMES:
            if tree is not None:
                self.size -= tree.size
            tree = table[key] = Tree()
        if tree.add(item):
            self.size += 1
            self.remembered += 1
        while self.size > MAX_REMEMBERED or len(table) > MAX_KEYS:
            oldest = next(iter(table))
            self.size -= table.pop(oldest).size

    def readings(self) -> list[tuple[tuple[Any, ...], R]]:
        """Every remembered reading with its key."""
        out: list[tuple[tuple[Any, ...], R]] = []
        for key, tree in self.table.items():
            todo = [tree.root]
            while todo:
                node = todo.pop()
                if node.leaf is not None:
                    out.append((key, node.leaf))
                todo += node.branches.values()
                todo += [n for _a, n in node.odd]
        return out

    def clear(self) -> None:
        self.table.clear()
        self.size = 0


class Outcome:
    """What one reading did, to be replayed: its effects, pending downloads, writes and
    outputs, what it told ``Host.env_writers``, and the work it took."""

    __slots__ = ("asked", "cost", "effects", "outputs", "pending", "writes", "written")

    def __init__(
        self,
        asked: list[tuple[Question, Any]],
        effects: list[tuple[Any, ...]],
        pending: list[Transfer],
        writes: dict[str, Value],
        outputs: dict[str, Value],
        written: list[tuple[str, str]],
        cost: int,
    ) -> None:
        self.asked = asked
        self.effects = effects
        self.pending = pending
        self.writes = writes
        self.outputs = outputs
        self.written = written
        self.cost = cost


READINGS: Memory[Outcome] = Memory()
"""A step's script (``Shell.key``) -> its remembered readings."""


def moved(transfer: Transfer, site: Site) -> Transfer:
    """A transfer a reading at another site made, as ``site`` makes it."""
    return replace(transfer, job=site.job, callers=site.callers, active=site.runs, off=site.why)


def replay(host: Host, site: Site, outcome: Outcome, *, notes: bool = True) -> None:
    """Tell the reading what a remembered reading did, as this site does it."""
    for name, reason in outcome.written:
        host.env_writers[name] = reason
    for effect in outcome.effects:
        deliver(host, site, effect, notes=notes, again=True)
    for transfer in outcome.pending:
        host.add(moved(transfer, site))


def deliver(
    host: Host, site: Site, effect: tuple[Any, ...], *, notes: bool = True, again: bool = False
) -> None:
    """Tell the reading one effect of a reading at ``site`` (``again``: of a remembered
    reading, its transfers made as this site makes them); ``notes``: the unknown values
    it noted too."""
    kind = effect[0]
    if kind == "add":
        host.add(moved(effect[1], site) if again else effect[1])
    elif kind == "files":
        fetch = effect[3]
        if again and fetch is not None:
            fetch = moved(fetch, site)
        host.on_files(site, effect[1], list(effect[2]), fetch, effect[4])
    elif kind == "command":
        host.on_command(site, effect[1:])
    elif kind == "stopped":
        host.stopped(site, effect[1], effect[2])
    elif kind == "run" and notes:
        host.note_run(effect[1], effect[2])
    elif notes:
        host.note_unresolved(effect[1], effect[2])


# --------------------------------------------------------------------------- called scripts


class Call:
    """What reading a repository script as a child process did to the caller's state:
    the questions it asked, the effects, pending downloads, env and output writes it
    added, what it told ``Host.env_writers``, whether it used the downloads, the work
    it took."""

    __slots__ = ("asked", "cost", "effects", "outputs", "pending", "used", "writes", "written")

    def __init__(
        self,
        asked: list[tuple[Question, Any]],
        effects: list[tuple[Any, ...]],
        pending: list[tuple[Transfer, str | None]],
        writes: dict[str, Value],
        outputs: dict[str, Value],
        written: list[tuple[str, str]],
        used: bool,
        cost: int,
    ) -> None:
        self.asked = asked
        self.effects = effects
        self.pending = pending
        self.writes = writes
        self.outputs = outputs
        self.written = written
        self.used = used
        self.cost = cost


CALLS: Memory[Call] = Memory()
"""A called script (``Walker.call_key``) -> its remembered readings."""


def forget() -> None:
    """Forget every remembered reading (a reading never needs it: for measurements)."""
    READINGS.clear()
    CALLS.clear()


def strict(values: Any) -> tuple[Any, ...]:
    """Values as a key that tells a tagged matrix value from its untagged text."""
    return tuple((type(v).__name__, v, getattr(v, "axis", None)) for v in values)


def changed(before: dict[str, Value], after: dict[str, Value]) -> dict[str, Value] | None:
    """What ``after`` sets that ``before`` did not have alike; None where it lost a name."""
    if any(name not in after for name in before):
        return None
    return {k: v for k, v in after.items() if k not in before or not same(before[k], v)}
