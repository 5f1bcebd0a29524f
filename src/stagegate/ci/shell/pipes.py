"""The command substitutions the shell reader computes: ``$(...)`` that is one
pipeline of the text tools (``ci.shell.textops``), ``jq`` on what they print and
``yq EXPR FILE`` on a YAML file of the repository (both in the subset ``ci.jq``
evaluates), fed by ``echo``/``printf``, a here-string or a here-document. Every value
they read must be known; anything else is an unknown value that says why.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from stagegate.ci import jq
from stagegate.ci.shell import textops, words
from stagegate.ci.shell.nodes import Command, Pipeline, Subst
from stagegate.ci.shell.values import (
    ON_WORKSPACE,
    Bounded,
    Failed,
    Text,
    in_workspace,
    known,
    opaque,
    result,
)
from stagegate.errors import InvalidInput
from stagegate.model.ghexpr import MAX_JSON, Unknown, Value

if TYPE_CHECKING:
    from stagegate.ci.files import Files


class Context(words.Context, Protocol):
    """What computing a substitution asks of the reading, beyond expanding words."""

    def data(self, file: str) -> tuple[bool, Any]:
        """(True, the data) of a YAML file of the repository yq reads, or (False, why not)."""

    def stopped(self, message: str) -> None:
        """jq or yq stops with an error (``halt_error``) here: the step fails at this line."""


class Foreign(Exception):
    """A command that is none of the tools read here: the substitution runs a command."""


TOOLS = frozenset(
    {"echo", "printf", "tr", "cut", "sed", "awk", "basename", "dirname", "cat", "grep"}
)
INPUT = frozenset({"tr", "cut", "sed", "awk", "cat", "jq", "grep"})
"""The tools that read their standard input."""
JQ_FLAGS = frozenset({"c", "r", "M", "j", "e", "n", "R", "s"})
LONG_FLAGS = {
    "--compact-output": "c",
    "--raw-output": "r",
    "--monochrome-output": "M",
    "--null-input": "n",
    "--raw-input": "R",
    "--slurp": "s",
}
YQ_FORMS = (jq.Identity, jq.Literal, jq.Field, jq.Each, jq.Pipe, jq.Binary, jq.Call)
"""What yq reads as jq does: paths, pipes, literals, ``==``/``!=``/``and``/``or``, and
the calls ``map``, ``select``, ``length``, ``not``."""
YQ_CALLS = frozenset({"map", "select", "length", "not"})


def commands_of(body: Any) -> list[Command] | None:
    """The commands of a substitution that is one pipeline of simple commands."""
    items = body.items
    if len(items) != 1:
        return None
    node = items[0]
    if isinstance(node, Command):
        return [node] if node.words else None
    if isinstance(node, Pipeline) and all(
        isinstance(c, Command) and c.words for c in node.commands
    ):
        return list(node.commands)  # type: ignore[arg-type]
    return None


def substitution(part: Subst, ctx: Context) -> Value:
    """The value of ``$(...)``: its output without the trailing line ends; Foreign for
    a command none of the tools here."""
    commands = commands_of(part.body)
    if commands is None:
        raise Foreign
    heads = [words.text_of(c.words[0], ctx) for c in commands]
    if any(h not in TOOLS and h not in ("jq", "yq") for h in heads):
        raise Foreign
    at = f"{part.source} at {ctx.where()}"
    try:
        text, keys, last = _run(commands, heads, ctx, at)
    except Failed as exc:
        return Unknown(part.source, f"{at}: {exc}")
    except textops.Failed as exc:
        return Unknown(part.source, f"{at}: {exc}")
    if isinstance(text, Unknown):
        return text
    out = text.rstrip("\n")
    if last in ("jq", "yq"):
        if len(out) > MAX_JSON:
            return Unknown(part.source, f"{at} prints more than {MAX_JSON:,} characters")
        return Bounded(out)
    return result(out, keys, last)


def _run(
    commands: list[Command], heads: list[str | None], ctx: Context, at: str
) -> tuple[str | Unknown, frozenset[str], str]:
    """The pipeline's output, the matrix keys it was made from and its last tool."""
    stdin: str | None = None
    keys: frozenset[str] = frozenset()
    for command, head in zip(commands, heads, strict=True):
        assert head is not None
        given = _input(command, ctx, head)
        if given is not None:
            stdin, keys = given.text, keys | given.keys
        args = [known(v) for w in command.words[1:] for v in words.fields(w, ctx)]
        keys = keys.union(*(a.keys for a in args))
        argv = [a.text for a in args]
        if head == "cat" and any(a != "-" for a in argv):
            raise Failed("cat reads a file, which stagegate does not read")
        if head in INPUT and stdin is None:
            raise Failed(f"{head} reads its standard input, which stagegate does not know")
        out = tool(head, argv, stdin or "", ctx, at)
        if isinstance(out, Unknown):
            return out, keys, head
        stdin = out
    assert stdin is not None
    return stdin, keys, heads[-1] or ""


def _input(command: Command, ctx: Context, head: str) -> Text | None:
    """What a here-string or here-document gives the command; None where neither."""
    found: Text | None = None
    for redirect in command.redirects:
        if redirect.op == ">" and redirect.fd == "2":
            continue  # 2>/dev/null and the like: what it prints on its error output
        if redirect.op not in ("<<<", "<<") or redirect.target is None:
            raise Failed(f"{head} with a redirection")
        if found is not None:
            raise Failed(f"{head} reads two inputs")
        value = known(words.expand(redirect.target, ctx))
        text = value.text + "\n" if redirect.op == "<<<" else value.text
        found = Text(text, value.keys)
    return found


def tool(head: str, argv: list[str], stdin: str, ctx: Context, at: str) -> str | Unknown:
    """What the text tool ``head`` prints (``at``: the command, for reasons); Failed
    (``values`` or ``textops``) where it is not computed."""
    if (opaque(stdin) or any(map(opaque, argv))) and not _carries(head, argv):
        raise Failed(f"{head}: {ON_WORKSPACE}")
    tools: dict[str, Callable[[], str]] = {
        "echo": lambda: textops.echo(argv),
        "printf": lambda: textops.printf(argv),
        "tr": lambda: textops.tr(argv, stdin),
        "cut": lambda: textops.cut(argv, stdin),
        "sed": lambda: textops.sed(argv, stdin, ctx.charge),
        "grep": lambda: textops.grep(argv, stdin, ctx.charge),
        "awk": lambda: textops.awk(argv, stdin),
        "basename": lambda: textops.basename(argv),
        "dirname": lambda: textops.dirname(argv),
        "cat": lambda: textops.cat(argv, stdin),
    }
    if head == "jq":
        return _jq(argv, stdin, ctx, at)
    if head == "yq":
        return _yq(argv, ctx, at)
    out = tools[head]()
    ctx.charge(len(out) // 16 + 1)
    return out


_CONVERSION = re.compile(r"%(%|[^%a-zA-Z]*[a-zA-Z])")


def _carries(head: str, argv: list[str]) -> bool:
    """Whether ``head`` only carries the workspace's path its words or input hold
    (``values.WORKSPACE``), so its output holds it as the real path would be: ``cat``,
    ``echo`` that reads no escapes (a Windows path has backslashes), ``printf`` whose
    format is plain ``%s``, ``basename``/``dirname`` of paths below the workspace."""
    if head == "cat":
        return True
    if head == "echo":
        return not any(re.fullmatch(r"-[neE]*e[neE]*", a) for a in argv)
    if head == "printf":
        return (
            bool(argv)
            and not opaque(argv[0])
            and all(c in ("%", "s") for c in _CONVERSION.findall(argv[0]))
        )
    if head in ("basename", "dirname"):
        return all(not opaque(a) or in_workspace(a) not in (None, "") for a in argv)
    return False


# --------------------------------------------------------------------------- jq and yq


def _parsed(text: str, at: str, tool: str) -> jq.Node | Unknown:
    try:
        node = _parse_jq(text)
    except jq.Unsupported as exc:
        return Unknown(
            at.partition(" at ")[0],
            f"{at}: {exc.why} (column {exc.column + 1} of the {tool} expression "
            f"{text!r}); bind the values its output decides",
        )
    if tool == "yq":
        bad = _not_yq(node)
        if bad is not None:
            return Unknown(
                at.partition(" at ")[0],
                f"{at}: {bad} in a yq expression is not read as jq reads it; bind "
                "the values its output decides",
            )
    return node


@functools.lru_cache(maxsize=1_024)
def _parse_jq(text: str) -> jq.Node:
    """A jq or yq expression, parsed once per text (a script is read in every context)."""
    return jq.parse(text)


def _not_yq(node: Any) -> str | None:
    """The first form of ``node`` yq may read differently from jq (None: all alike)."""
    if not isinstance(node, YQ_FORMS):
        return type(node).__name__.lower()
    if isinstance(node, jq.Call) and node.name not in YQ_CALLS:
        return node.name
    if isinstance(node, jq.Binary) and node.op not in ("==", "!=", "and", "or"):
        return node.op
    children = [getattr(node, n, None) for n in ("target", "left", "right")]
    for child in [*children, *getattr(node, "args", ())]:
        if child is not None and _not_yq(child) is not None:
            return _not_yq(child)
    return None


def _outputs(
    node: jq.Node,
    inputs: list[Any],
    at: str,
    ctx: Context,
    *,
    compact: bool,
    raw: bool,
    yaml: bool = False,
    null_input: bool = False,
) -> str | Unknown:
    """The text jq writes for ``inputs``; ``yaml``: yq's default output, read only where
    every output is a scalar (written as text); ``null_input``: jq's ``-n``."""
    piece = at.partition(" at ")[0]
    try:
        outputs = jq.program(node, inputs, null_input=null_input, charge=ctx.charge)
        if yaml and any(isinstance(out, list | dict) for out in outputs):
            return Unknown(piece, f"{at} prints YAML of a mapping or list: read only with -o json")
        text = "\n".join(jq.write(out, compact=compact, raw=raw) for out in outputs)
    except jq.Failed as exc:
        ctx.stopped(exc.message)
        return Unknown(
            piece,
            f"{at} stops with an error ({exc.message!r}): the step fails there, "
            "so what it computes is never set",
        )
    except jq.Unsupported as exc:
        return Unknown(piece, f"{at}: {exc.why}")
    except jq.Inexact as exc:
        return Unknown(piece, f"{at} writes the number {exc}, which jq versions write apart")
    if len(text) > MAX_JSON:
        return Unknown(piece, f"{at} prints more than {MAX_JSON:,} characters")
    return text + "\n" if text else text


def _jq(args: list[str], stdin: str, ctx: Context, at: str) -> str | Unknown:
    flags: set[str] = set()
    rest: list[str] = []
    for word in args:
        if word in LONG_FLAGS:
            flags.add(LONG_FLAGS[word])
        elif word.startswith("-") and len(word) > 1 and not word.startswith("--"):
            flags |= set(word[1:])
        elif word.startswith("-"):
            flags.add(word)
        else:
            rest.append(word)
    if flags - JQ_FLAGS or len(rest) > 1 or {"n", "s"} <= flags:
        why = (
            f"the options {' '.join(sorted(flags - JQ_FLAGS))}"
            if flags - JQ_FLAGS
            else "a file argument"
            if len(rest) > 1
            else "-n and -s together"
        )
        return Unknown(
            at.partition(" at ")[0], f"{at}: jq with {why}, which stagegate does not read"
        )
    # no expression: `.` (jq 1.6 and later, where its input or output is not a terminal)
    node = _parsed(rest[0] if rest else ".", at, "jq")
    if isinstance(node, Unknown):
        return node
    inputs = _jq_inputs(stdin, flags, at)
    if isinstance(inputs, Unknown):
        return inputs
    return _outputs(
        node,
        inputs,
        at,
        ctx,
        compact="c" in flags,
        raw=bool(flags & {"r", "j"}),
        null_input="n" in flags,
    )


def _jq_inputs(stdin: str, flags: set[str], at: str) -> list[Any] | Unknown:
    """jq's inputs: each line of the text with ``-R`` (all of it, one string, with
    ``-s`` too), else its JSON values (in one array with ``-s``)."""
    if "R" in flags:
        if "s" in flags:
            return [stdin]
        lines = stdin.split("\n")
        return lines[:-1] if stdin.endswith("\n") else lines if stdin else []
    try:
        inputs = jq.read_json(stdin)
    except ValueError:
        return Unknown(at.partition(" at ")[0], f"{at} reads text that is not JSON: jq fails")
    except jq.Unsupported as exc:
        return Unknown(at.partition(" at ")[0], f"{at}: {exc.why}")
    return [inputs] if "s" in flags else inputs


def _yq(args: list[str], ctx: Context, at: str) -> str | Unknown:
    piece = at.partition(" at ")[0]
    rest: list[str] = []
    json_out = False
    i = 0
    items = args[1:] if args[:1] in (["eval"], ["e"]) else args
    while i < len(items):
        word = items[i]
        if word in ("-o", "--output-format") and i + 1 < len(items):
            if items[i + 1] not in ("json", "j"):
                return Unknown(piece, f"{at}: yq output format {items[i + 1]!r} is not read")
            json_out = True
            i += 2
            continue
        if word in ("-o=json", "-oj", "-o=j", "--output-format=json"):
            json_out = True
        elif word.startswith("-"):
            return Unknown(piece, f"{at}: the yq option {word} is not read")
        else:
            rest.append(word)
        i += 1
    if len(rest) != 2:
        return Unknown(piece, f"{at}: yq reads one expression and one file here")
    node = _parsed(rest[0], at, "yq")
    if isinstance(node, Unknown):
        return node
    read, data = ctx.data(rest[1])
    if not read:
        return Unknown(piece, f"{at}: {data}")
    if json_out:
        return _outputs(node, [data], at, ctx, compact=False, raw=False)
    return _outputs(node, [data], at, ctx, compact=True, raw=True, yaml=True)


def repository_data(files: Files, rel: str | None, file: str) -> tuple[bool, Any]:
    """(True, the data) of the repository file ``file`` yq reads (``rel``: its path in
    the repository, None where it is none), or (False, why not)."""
    raw = files.bytes_of(rel) if rel is not None else None
    if rel is None or raw is None:
        return False, f"{file} is no file of the repository"
    try:
        return True, _parse(raw, rel)
    except InvalidInput as exc:
        return False, exc.problems[0].message


@functools.lru_cache(maxsize=8)
def _parse(raw: bytes, rel: str) -> Any:
    """A YAML file's data by the YAML 1.2 core schema, as yq reads it (once per content)."""
    from stagegate.load.yamlsrc import read

    return read(raw, rel).data
