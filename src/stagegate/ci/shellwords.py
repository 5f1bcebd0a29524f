"""The words of a shell script: the reader's marks for values, splitting into words and
commands, redirections, loops and branches, and the limits on what a value may grow to
(``ci.shell`` reads the commands these make)."""

from __future__ import annotations

import functools
import re
import shlex
from typing import TYPE_CHECKING, Any

from stagegate.ci.transfers import (
    ENV_FILE,
    OUT_FILE,
    THIS_RUN,
    shown,
)
from stagegate.errors import Loc
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Sym, Unknown, Value, concat
from stagegate.records import record

if TYPE_CHECKING:
    from stagegate.ci.files import Files
    from stagegate.ci.shell import Shell

SENTINEL = re.compile("\ue000([0-9]+)\ue001")
PRIVATE = re.compile("[\ue000-\ue003]")
"""The characters stagegate marks values with; where a script or a value has them, they
are replaced by markers of their own, so every marker in a marked line is stagegate's."""
SPECIALS = frozenset({THIS_RUN, ENV_FILE, OUT_FILE})
EXPANSION = re.compile(r"(#)?([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(?:(//|/|##|#|%%|%|:-|-)(.*))?", re.S)
"""The parameter expansions the shell reader evaluates: ${#X}, ${X//a/b}, ${X#a}, ${X:-d}."""
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "do",
        "while",
        "until",
        "!",
        "time",
        "{",
        "}",
        "fi",
        "exec",
        "command",
    }
)
GH = re.compile(r"\bgh\b")
CALL = re.compile(r"(?:^|[\s;&|(])(?:(?:ba)?sh\s+)?\.?/?((?:\./)?[\w.-]+(?:/[\w.-]+)+)")
"""A word that may call a repository script (``./ci/tools/x``, ``bash ci/x``)."""
USES = frozenset(
    {"mv", "cp", "find", "pip", "pip3", "uv", "rsync", "tar", "unzip", "python", "python3"}
)
"""Commands that use downloaded files: an ``rm`` after one of them is clean-up."""
REDIRECTS = frozenset({">", ">>", "<", ">&", "<&", "&>", "&>>", ">|", "<<<", "<>"})
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "((", "))"})
OPERATOR_CHARS = frozenset(";&|()")
HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)")


UNSET = object()


def branch_bodies(
    commands: list[tuple[int, list[str]]], start: int
) -> tuple[list[tuple[list[tuple[int, list[str]]] | None, list[tuple[int, list[str]]]]], int]:
    """The (condition, body) pairs of the if at ``start`` (an else's condition None), and
    the index after its ``fi``. Nested ifs stay inside their branch's body."""
    branches: list[tuple[list[tuple[int, list[str]]] | None, list[tuple[int, list[str]]]]] = []
    condition: list[tuple[int, list[str]]] | None = []
    body: list[tuple[int, list[str]]] = []
    in_condition = True
    depth = 0
    line, first = commands[start]
    queue = [(line, first[1:])]
    i = start + 1
    while True:
        if queue:
            line, words = queue.pop()
        elif i < len(commands):
            line, words = commands[i]
            i += 1
        else:
            break
        head = words[0] if words else ""
        if depth == 0 and head in ("then", "else", "elif", "fi"):
            if head == "then":
                in_condition = False
            else:
                branches.append((condition, body))
                body = []
                condition = [] if head == "elif" else None
                in_condition = head == "elif"
                if head == "fi":
                    return branches, i
            if len(words) > 1:
                queue.append((line, words[1:]))
            continue
        if head == "if":
            depth += 1
        elif head == "fi":
            depth -= 1
        if in_condition and condition is not None:
            condition.append((line, words))
        else:
            body.append((line, words))
    branches.append((condition, body))
    return branches, i


def fails(body: list[tuple[int, list[str]]]) -> bool:
    """Whether a branch ends by failing the run (``exit N``, N not 0)."""
    if not body:
        return False
    words = strip(body[-1][1])
    return len(words) == 2 and words[0] == "exit" and words[1] != "0"


def worth_reading(files: Files, text: str) -> bool:
    """Whether a script may download, write ``$GITHUB_ENV`` or call a repository
    script: the others have no effect stagegate follows."""
    return (
        GH.search(text) is not None
        or "GITHUB_ENV" in text
        or any(files.repo_path(m.group(1)) is not None for m in CALL.finditer(text))
    )


def is_glob(value: Value) -> bool:
    return isinstance(value, str) and any(c in value for c in "*?[")


@record
class Entry:
    """A value ``marked_words`` found in a line: a marker for it goes in its place."""

    value: Any


def as_entry(value: Value) -> Entry:
    return Entry(value)


@functools.lru_cache(maxsize=16_384)
def marked_words(line: str) -> tuple[str | Entry, ...]:
    """A line (GitHub's ``${{ }}`` already substituted) as text and the values that
    replace its ``$VAR``, ``${...}``, ``$(...)`` and backquotes, outside single quotes.
    Kept per line text: a script is marked once for all the matrix rows and callers
    it runs in (each reading numbers the values in its own table)."""
    out: list[str | Entry] = []
    i, quote = 0, ""
    while i < len(line):
        char = line[i]
        if quote == "'":
            out.append(char)
            if char == "'":
                quote = ""
            i += 1
            continue
        if char == "\\" and i + 1 < len(line):
            # in double quotes \$ and \` are the character itself (shlex keeps the backslash)
            out.append(line[i + 1] if quote == '"' and line[i + 1] in "$`" else line[i : i + 2])
            i += 2
            continue
        if char == "'" and not quote:
            quote = "'"
            out.append(char)
            i += 1
            continue
        if char == '"':
            quote = "" if quote == '"' else '"'
            out.append(char)
            i += 1
            continue
        if char == "`":
            end = line.find("`", i + 1)
            end = len(line) - 1 if end < 0 else end
            out.append(as_entry(Unknown(line[i : end + 1], f"{line[i : end + 1]} runs a command")))
            i = end + 1
            continue
        if char == "$" and i + 1 < len(line):
            nxt = line[i + 1]
            if nxt == "(":
                end = closing(line, i + 1)
                piece = line[i:end]
                out.append(as_entry(("subst", piece, not quote)))  # ci.subst and ci.textops compute some
                i = end
                continue
            if nxt == "{":
                end = line.find("}", i)
                end = len(line) - 1 if end < 0 else end
                inner = line[i + 2 : end]
                expansion = EXPANSION.fullmatch(inner)
                if NAME_RE.fullmatch(inner) or inner == "#":
                    out.append(as_entry(("var", inner, not quote)))
                elif expansion:
                    out.append(as_entry(("expand", inner, line[i : end + 1])))
                else:
                    out.append(
                        as_entry(
                            Unknown(
                                line[i : end + 1],
                                f"{line[i : end + 1]} is a shell expansion stagegate does not compute",
                            )
                        )
                    )
                i = end + 1
                continue
            match = NAME_RE.match(line, i + 1)
            if match:
                out.append(as_entry(("var", match.group(), not quote)))
                i = match.end()
                continue
            if nxt in "0123456789#":
                out.append(as_entry(("var", nxt, not quote)))
                i += 2
                continue
            if nxt in "@*?$!-":
                out.append(
                    as_entry(Unknown(line[i : i + 2], f"{line[i : i + 2]} is a shell parameter"))
                )
                i += 2
                continue
        out.append(char)
        i += 1
    merged: list[str | Entry] = []  # runs of text as one piece: joined once per use
    for part in out:
        last = merged[-1] if merged else None
        if isinstance(part, str) and isinstance(last, str):
            merged[-1] = last + part
        else:
            merged.append(part)
    return tuple(merged)


@functools.lru_cache(maxsize=16_384)
def token_words(marked: str) -> tuple[str, ...] | None:
    """A marked line split into shell words (None: an unclosed quote), once per text."""
    try:
        lexer = shlex.shlex(marked, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return tuple(lexer)
    except ValueError:
        return None


def renumbered_words(marked: str) -> tuple[str, ...] | None:
    """``token_words`` of a marked line whose markers' numbers differ per reading (the
    values of ``${{ }}`` and of each expansion): split once per shape of the line, with
    its markers numbered from 0, and numbered back."""
    found = SENTINEL.findall(marked)
    if not found:
        return token_words(marked)
    local: dict[str, str] = {}
    for number in found:
        local.setdefault(number, str(len(local)))
    back = {v: k for k, v in local.items()}
    shape = SENTINEL.sub(lambda m: f"\ue000{local[m.group(1)]}\ue001", marked)
    words = token_words(shape)
    if words is None:
        return None
    return tuple(
        SENTINEL.sub(lambda m: f"\ue000{back[m.group(1)]}\ue001", w) if "\ue000" in w else w
        for w in words
    )


def shell_words(text: str) -> list[str]:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return []


def tee_as_append(words: list[str]) -> list[str]:
    """``A | tee -a FILE`` as ``A >> FILE`` (what reaches FILE is what A prints)."""
    if "tee" not in words:
        return words
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "|" and i + 1 < len(words) and words[i + 1] == "tee":
            j = i + 2
            target = None
            while j < len(words) and words[j] not in SEPARATORS:
                if not words[j].startswith("-") and target is None:
                    target = words[j]
                j += 1
            if target is not None:
                out += [">>", target]
                i = j
                continue
        out.append(words[i])
        i += 1
    return out


def strip(words: list[str]) -> list[str]:
    start = 0
    while start < len(words) and words[start] in KEYWORDS:
        start += 1
    return words[start:]


def loop_end(commands: list[tuple[int, list[str]]], start: int) -> int:
    """The index of the ``done`` that closes the loop opened at ``start`` (or the end)."""
    depth = 0
    for i in range(start, len(commands)):
        words = strip(commands[i][1])
        if words and words[0] in ("for", "while", "until"):
            depth += 1
        if (commands[i][1] and commands[i][1][0] == "done") or (words and words[0] == "done"):
            depth -= 1
            if depth == 0:
                return i
    return len(commands)


def annotate(value: Value, loc: Loc, name: str) -> Value:
    """An unknown shell value says where it was assigned."""
    if isinstance(value, Unknown):
        return Unknown(
            value.expression,
            f"${name} is assigned at {loc.file}:{loc.line} from {value.expression}: {value.reason}",
        )
    if isinstance(value, Sym):
        return Sym(tuple(annotate(part, loc, name) for part in value.parts))
    return value


def after_equals(value: Value) -> Value:
    if isinstance(value, str):
        return value.partition("=")[2]
    assert isinstance(value, Sym)
    first = value.parts[0]
    assert isinstance(first, str)
    return concat([first.partition("=")[2], *value.parts[1:]])


def redirect_target(words: list[str]) -> str | None:
    for i, word in enumerate(words):
        if word == ">>" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(">>") and len(word) > 2:
            return word[2:]
    return None


def unmark(word: str, shell: Shell, limit: int = 0) -> str:
    """A word with its markers written back as the script wrote them (for messages);
    with ``limit``, at most that many characters of each value written back."""

    def back(match: re.Match[str]) -> str:
        entry = shell.table[int(match.group(1))]
        if isinstance(entry, tuple):
            if entry[0] == "lit":
                return f"\\u{ord(entry[1]):04x}"
            if entry[0] == "subst":
                return str(entry[1])
            return str(entry[2]) if entry[0] == "expand" else "$" + str(entry[1])
        text = shown(entry)
        return text[:limit] + "..." if limit and len(text) > limit else text

    return SENTINEL.sub(back, word)


def size(value: Value) -> int:
    """How many characters a value is written with (its unknown pieces as written)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Sym):
        return sum(size(p) for p in value.parts)
    if isinstance(value, Unknown):
        return len(value.expression)
    if isinstance(value, ghexpr.Ph):
        return len(value.axis) + 2
    return len(ghexpr.to_text(value)) if value is not None else 0


def closing(line: str, start: int) -> int:
    """The index after the ``)`` that closes the ``(`` at ``start``."""
    depth = 0
    for i in range(start, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(line)


def is_test(words: list[str]) -> bool:
    """A condition that only tests values (``[[ ... ]]``, ``test``, ``true``): no effect."""
    while words[:1] == ["!"]:
        words = words[1:]
    return words[:1] in (["[["], ["["], ["test"], ["true"], ["false"], [":"]) or not words
