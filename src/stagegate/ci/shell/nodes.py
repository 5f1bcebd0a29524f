"""The records a parsed script is made of (``ci.shell.syntax`` makes them from
tree-sitter's tree; ``ci.shell.walker`` walks them): words and their parts, and the
statements, each with its line (from the script's first, 0)."""

from __future__ import annotations

from stagegate.records import record

# --------------------------------------------------------------------------- words


@record
class Lit:
    """Literal text; ``quoted``: its glob characters are themselves, and it is never split."""

    text: str
    quoted: bool


@record
class Gh:
    """The value of the script's ``index``-th ``${{ }}`` kept out of its text."""

    index: int
    quoted: bool


@record
class Param:
    """``$NAME``, ``${NAME}``, ``$1``, ``$#``, ``$@``..."""

    name: str
    quoted: bool


@record
class Expand:
    """``${NAME OP ARGS}``: ``op`` as written (``:-``, ``%%``, ``//``, ``:``, ``^^``...;
    "length" for ``${#NAME}``, "indirect" for ``${!NAME}``); ``args`` the words
    between the operators, ``source`` the expansion as written."""

    name: str
    op: str
    args: tuple[Word, ...]
    quoted: bool
    source: str


@record
class Subst:
    """``$(...)`` or backquotes: the commands it runs."""

    body: Block
    quoted: bool
    source: str


@record
class Arith:
    """``$(( text ))``."""

    text: str
    quoted: bool
    source: str


@record
class Element:
    """``${NAME[INDEX]}``: ``index`` as written ("@", "*" or arithmetic); ``length``:
    ``${#NAME[INDEX]}`` (the number of elements, for "@" and "*")."""

    name: str
    index: str
    length: bool
    quoted: bool
    source: str


@record
class Opaque:
    """A piece of a word stagegate does not compute (process substitution, an operator
    on an array's elements)."""

    source: str
    reason: str
    quoted: bool = False


Part = Lit | Gh | Param | Expand | Subst | Arith | Element | Opaque


@record
class Word:
    parts: tuple[Part, ...]
    source: str


# --------------------------------------------------------------------------- statements


@record
class Redirect:
    """``op`` (``>``, ``>>``, ``<``, ``<<<``, ``<<``, ``&>``...) on descriptor ``fd``
    ("" for the default) to ``target``; a here-document's body is its ``target``."""

    op: str
    target: Word | None
    fd: str = ""


@record
class Assign:
    """``NAME=VALUE``, ``NAME+=VALUE``; ``NAME[INDEX]=VALUE`` (``index`` as written);
    ``NAME=(WORDS)`` (``elements``, its ``value`` None)."""

    name: str
    value: Word | None  # None: an array's elements, or what is not computed
    append: bool = False
    index: str | None = None
    elements: tuple[Word, ...] | None = None


@record
class Command:
    line: int
    assigns: tuple[Assign, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


@record
class Declare:
    """``export``/``local``/``declare``/``readonly``/``typeset`` and their operands."""

    line: int
    keyword: str
    items: tuple[Assign | Word, ...]


@record
class Block:
    items: tuple[Node, ...]


@record
class Pipeline:
    line: int
    commands: tuple[Node, ...]


@record
class Not:
    line: int
    body: Node


@record
class AndOr:
    line: int
    left: Node
    op: str
    right: Node


@record
class If:
    line: int
    branches: tuple[tuple[Block, Block], ...]
    otherwise: Block | None


@record
class CaseItem:
    patterns: tuple[Word, ...]
    body: Block
    end: str  # ";;", ";&" or ";;&"


@record
class Case:
    line: int
    word: Word
    items: tuple[CaseItem, ...]


@record
class For:
    line: int
    name: str
    words: tuple[Word, ...] | None  # None: ``for x; do``, over the arguments
    body: Block


@record
class CFor:
    line: int
    init: str
    condition: str
    update: str
    body: Block


@record
class Loop:
    line: int
    until: bool
    condition: Block
    body: Block


@record
class Function:
    line: int
    name: str
    body: Node


@record
class Subshell:
    line: int
    body: Block


@record
class Group:
    line: int
    body: Block


@record
class Redirected:
    """A compound command with redirections (``{ ...; } >> "$GITHUB_ENV"``)."""

    line: int
    body: Node
    redirects: tuple[Redirect, ...]


@record
class TestExpr:
    """A ``[[ ]]`` expression: ``op`` with its operands (words or expressions); ``op``
    "" is a lone word, "!" a negation, "(" a parenthesis, "&&"/"||" a conjunction."""

    op: str
    operands: tuple[Word | TestExpr, ...]


@record
class Test:
    line: int
    expr: TestExpr


@record
class ArithCommand:
    """``(( text ))``."""

    line: int
    text: str


@record
class Unread:
    """A statement stagegate does not read: ``reason``; ``assigned``: the variables it
    may set; ``fatal``: bash stops there (a syntax error)."""

    line: int
    source: str
    reason: str
    assigned: tuple[str, ...]
    fatal: bool = False


Node = (
    Command
    | Declare
    | Block
    | Pipeline
    | Not
    | AndOr
    | If
    | Case
    | For
    | CFor
    | Loop
    | Function
    | Subshell
    | Group
    | Redirected
    | Test
    | ArithCommand
    | Unread
)


@record
class Script:
    """A parsed script: its statements, and where the ``${{ }}`` marks are (``mark``)."""

    body: Block
    mark: str
