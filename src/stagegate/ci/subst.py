"""The command substitutions the shell reader evaluates (``ci.shell`` hands each
``$(...)`` here): ``$(yq [-o json] EXPR FILE)`` on a file of the repository and
``$(echo "$X" | jq [-c] [-r] 'EXPR')``, with EXPR in the subset ``ci.jq`` evaluates.
Any other command, option or form is an unknown value that says why: never guessed."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from stagegate.ci import jq, textops
from stagegate.errors import InvalidInput
from stagegate.model.ghexpr import MAX_JSON, Unknown, Value, unknowns

if TYPE_CHECKING:
    from stagegate.ci.files import Files
    from stagegate.ci.shell import Shell


class Output(str):
    """Text a command stagegate evaluates printed (JSON a matrix is made of): bounded by
    ghexpr.MAX_JSON, what ``fromJSON`` reads, rather than by the shell's MAX_VALUE."""

    __slots__ = ()


JQ_FLAGS = frozenset({"c", "r", "M", "j"})
"""jq's short options that are read: -c (one line), -r/-j (raw strings), -M (no colour)."""
LONG_FLAGS = {"--compact-output": "c", "--raw-output": "r", "--monochrome-output": "M"}
YQ_FORMS = (jq.Identity, jq.Literal, jq.Field, jq.Each, jq.Pipe, jq.Binary, jq.Call)
"""What yq reads as jq does: paths, pipes, literals, ``==``/``!=``/``and``/``or``, and
the calls ``map``, ``select``, ``length``, ``not``."""
YQ_CALLS = frozenset({"map", "select", "length", "not"})


def substitution(shell: Shell, piece: str) -> Value:
    """The value of ``$(...)`` or ``$(( ))`` (``piece``, as the script wrote it): yq and
    jq here, the text commands and arithmetic in ``ci.textops``."""
    if piece.startswith("$(("):
        return textops.substitution(shell, piece)
    try:
        segments = textops.pipeline(shell, piece[2:-1])
    except textops.Failed:
        segments = None
    if segments is None:
        return textops.substitution(shell, piece)
    if not all(segments) or any(w.startswith((">", "<", "2>", "&>")) for s in segments for w in s):
        return textops.substitution(shell, piece, segments)
    heads = [s[0] for s in segments]
    where = shell.loc(shell.at)
    at = f"{where.file}:{where.line}"
    if heads == ["yq"]:
        return _yq(shell, piece, segments[0][1:], at)
    if heads == ["echo", "jq"]:
        given = [shell.value(w) for w in segments[0][1:]]
        if segments[0][1:2] and segments[0][1].startswith("-"):
            return Unknown(piece, f"{piece}: echo with options stagegate does not read ({at})")
        missing = [u for v in given for u in unknowns(v)]
        if missing or not all(isinstance(v, str) for v in given):
            why = missing[0].reason if missing else "a value that is not text"
            return Unknown(piece, f"{piece}: what it reads is unknown ({at}): {why}")
        return _jq(shell, piece, segments[1][1:], " ".join(given) + "\n", at)
    return textops.substitution(shell, piece, segments)


def _expression(shell: Shell, piece: str, word: str, at: str) -> str | Unknown:
    value = shell.value(word)
    if not isinstance(value, str):
        missing = unknowns(value)
        why = missing[0].reason if missing else "a value that is not text"
        return Unknown(piece, f"{piece}: its expression is unknown ({at}): {why}")
    return value


def _parsed(piece: str, text: str, at: str, tool: str) -> jq.Node | Unknown:
    try:
        node = _parse_jq(text)
    except jq.Unsupported as exc:
        return Unknown(
            piece,
            f"{piece} at {at}: {exc.why} (column {exc.column + 1} of the {tool} expression "
            f"{text!r}); bind the values its output decides",
        )
    if tool == "yq":
        bad = _not_yq(node)
        if bad is not None:
            return Unknown(
                piece,
                f"{piece} at {at}: {bad} in a yq expression is not read as jq reads it; bind "
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
    for child in (getattr(node, n, None) for n in ("target", "left", "right")):
        if child is not None and _not_yq(child) is not None:
            return _not_yq(child)
    for child in getattr(node, "args", ()):
        if _not_yq(child) is not None:
            return _not_yq(child)
    return None


def _run(
    piece: str,
    node: jq.Node,
    inputs: list[Any],
    at: str,
    compact: bool,
    raw: bool,
    yaml: bool = False,
) -> Value:
    """The text the outputs are written as; ``yaml``: yq's default output, read only
    where every output is a scalar (written as text)."""
    try:
        outputs = [out for value in inputs for out in jq.evaluate(node, value)]
        if yaml and any(isinstance(out, list | dict) for out in outputs):
            return Unknown(
                piece, f"{piece} at {at} prints YAML of a mapping or list: read only with -o json"
            )
        text = "\n".join(jq.write(out, compact=compact, raw=raw) for out in outputs)
    except jq.Failed as exc:
        return Unknown(
            piece,
            f"{piece} at {at} stops with an error ({exc.message!r}): the step fails there, "
            "so what it computes is never set",
        )
    except jq.Unsupported as exc:
        return Unknown(piece, f"{piece} at {at}: {exc.why}")
    except jq.Inexact as exc:
        return Unknown(
            piece, f"{piece} at {at} writes the number {exc}, which jq versions write apart"
        )
    if len(text) > MAX_JSON:
        return Unknown(piece, f"{piece} at {at} prints more than {MAX_JSON:,} characters")
    return Output(text)


def _jq(shell: Shell, piece: str, args: list[str], stdin: str, at: str) -> Value:
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
    if flags - JQ_FLAGS or len(rest) != 1:
        why = (
            f"the options {' '.join(sorted(flags - JQ_FLAGS))}"
            if flags - JQ_FLAGS
            else "a file argument"
            if rest
            else "no expression"
        )
        return Unknown(piece, f"{piece} at {at}: jq with {why}, which stagegate does not read")
    text = _expression(shell, piece, rest[0], at)
    if isinstance(text, Unknown):
        return text
    node = _parsed(piece, text, at, "jq")
    if isinstance(node, Unknown):
        return node
    try:
        inputs = jq.read_json(stdin)
    except ValueError:
        return Unknown(piece, f"{piece} at {at} reads text that is not JSON: jq fails")
    return _run(piece, node, inputs, at, "c" in flags, bool(flags & {"r", "j"}))


def _yq(shell: Shell, piece: str, args: list[str], at: str) -> Value:
    words = list(args)
    if words[:1] in (["eval"], ["e"]):
        words = words[1:]
    json_out = False
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-o", "--output-format") and i + 1 < len(words):
            fmt = shell.value(words[i + 1])
            if fmt not in ("json", "j"):
                return Unknown(piece, f"{piece} at {at}: yq output format {fmt!r} is not read")
            json_out = True
            i += 2
            continue
        if word in ("-o=json", "-oj", "-o=j", "--output-format=json"):
            json_out = True
        elif word.startswith("-"):
            return Unknown(piece, f"{piece} at {at}: the yq option {word} is not read")
        else:
            rest.append(word)
        i += 1
    if len(rest) != 2:
        return Unknown(piece, f"{piece} at {at}: yq reads one expression and one file here")
    text = _expression(shell, piece, rest[0], at)
    if isinstance(text, Unknown):
        return text
    file = shell.value(rest[1])
    if not isinstance(file, str):
        return Unknown(piece, f"{piece} at {at}: the file it reads is unknown")
    node = _parsed(piece, text, at, "yq")
    if isinstance(node, Unknown):
        return node
    files = shell.reader.files
    found = files.data.get(file)
    if found is None:  # the file as it is when this reading first reads it
        found = files.data[file] = _repository_data(files, file)
    read, data = found
    if not read:
        return Unknown(piece, f"{piece} at {at}: {data}")
    if json_out:
        return _run(piece, node, [data], at, compact=False, raw=False)
    return _run(piece, node, [data], at, compact=True, raw=True, yaml=True)


def _repository_data(files: Files, file: str) -> tuple[bool, Any]:
    """(True, the data) of the repository file ``file`` yq reads, or (False, why not)."""
    rel = files.repo_path(file)
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
