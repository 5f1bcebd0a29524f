"""The JSON Schemas of the two files, and their errors told in the user's words.

One table keyed by the failing keyword (``_TRANSLATIONS``) turns each jsonschema error
into a located ``Problem`` that says what to do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from stagegate.errors import Loc, Problem
from stagegate.load.digest import blake2b
from stagegate.load.rules import Rules
from stagegate.load.yamlsrc import Document, json_path
from stagegate.load.yamlsrc import Path as DocPath
from stagegate.words import suggest

_SCHEMA_DIR = Path(__file__).parent.parent / "schema"


def _schema_text(kind: str) -> bytes:
    return (_SCHEMA_DIR / f"{kind}.schema.json").read_bytes()


def schema(kind: str, rules: Rules) -> dict[str, Any]:
    """The full JSON Schema of ``migration`` or ``stage`` files, ``rules``' check kinds included."""
    import json

    document: dict[str, Any] = json.loads(_schema_text(kind))
    document["$defs"]["check"] = rules.check_schema()
    return document


def schema_problems(kind: str, doc: Document, rules: Rules) -> tuple[list[Problem], bool]:
    """All schema violations of ``doc``, and whether the schema found none at all.

    The answer depends on the schema and the document alone (its file name, data and
    places): one given before for the same of both is given again (``_ANSWERS``)."""
    full, digest = shared_schema(kind, rules)
    key = _answer_key(digest, doc)
    known = _ANSWERS.get(key)
    if known is not None:
        return list(known[0]), known[1]
    validator = validator_class()(full)
    problems: list[Problem] = []
    valid = True
    for error in validator.iter_errors(doc.data):
        valid = False
        problems.extend(_translate(error, doc))
    answer = dedupe(problems)
    if len(_ANSWERS) >= ANSWERS_KEPT:
        del _ANSWERS[next(iter(_ANSWERS))]
    _ANSWERS[key] = (tuple(answer), valid)
    return answer, valid


_ANSWERS: dict[bytes, tuple[tuple[Problem, ...], bool]] = {}
"""The schema's answers on the last documents validated, by ``_answer_key``. A command
that loads a migration several times (``check --all``, ``verify-pr``'s commits), or
files whose migration file changed while its stage files did not (an edit refused
by the schema), validates each unchanged file once; the oldest answer goes first."""
ANSWERS_KEPT = 64


@functools.lru_cache(maxsize=8)
def shared_schema(kind: str, rules: Rules) -> tuple[dict[str, Any], bytes]:
    """The full schema of ``kind`` files under ``rules`` and the digest of its ``repr``,
    made once per kind and rules (a ``Rules``' check schema is fixed; every load of a
    process asks for the same two). Shared: the validator only reads it."""
    full = schema(kind, rules)
    return full, blake2b(repr(full).encode("utf-8", "surrogatepass"), digest_size=32).digest()


def _answer_key(schema_digest: bytes, doc: Document) -> bytes:
    """A digest of everything ``schema_problems`` reads: the whole schema (by the digest
    of its ``repr``), and the document's file name, data and places. ``repr`` keeps what
    JSON would merge (``1`` and ``"1"``, ``1`` and ``1.0``, ``true`` and ``1``); two equal
    values written alike give one key, and any difference at worst a second key
    (validated afresh)."""
    parts = (schema_digest, doc.file, doc.data, doc.marks, doc.key_marks, doc.quoted, doc.spans)
    return blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=32).digest()


@functools.cache
def validator_class() -> Any:
    """Draft 2020-12 with a linear ``uniqueItems``.

    jsonschema's own compares every pair of items when they do not sort (mixed
    types): minutes for a hostile list of 60,000 items."""
    import json

    import jsonschema

    def unique_items(
        validator: Any, unique: bool, instance: Any, _schema: Any
    ) -> Iterator[jsonschema.ValidationError]:
        if not unique or not validator.is_type(instance, "array"):
            return
        seen: set[str] = set()
        for item in instance:
            key = json.dumps(item, sort_keys=True, default=repr)
            if key in seen:
                yield jsonschema.ValidationError(f"{_shown(item)} is listed more than once")
                return
            seen.add(key)

    def is_integer(_checker: Any, instance: Any) -> bool:
        """JSON Schema counts 1.0 as an integer; a stage or `since` written 1.0 is a slip."""
        return isinstance(instance, int) and not isinstance(instance, bool)

    def pattern(
        validator: Any, wanted: str, instance: Any, _schema: Any
    ) -> Iterator[jsonschema.ValidationError]:
        """ECMA-262's ``$``, as JSON Schema means it: the end of the text. Python's also
        matches before a final line break, which let ``"name\n"`` pass as an id."""
        if not validator.is_type(instance, "string"):
            return
        compiled = (
            wanted[:-1] + r"\Z" if wanted.endswith("$") and not wanted.endswith("\\$") else wanted
        )
        if re.search(compiled, instance) is None:
            yield jsonschema.ValidationError(f"{instance!r} does not match {wanted!r}")

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", is_integer)
    extend: Any = jsonschema.validators.extend
    return extend(base, {"uniqueItems": unique_items, "pattern": pattern}, type_checker=checker)


def dedupe(problems: Iterable[Problem]) -> list[Problem]:
    seen: set[tuple[Loc, str]] = set()
    out = []
    for problem in problems:
        if (problem.loc, problem.message) not in seen:
            seen.add((problem.loc, problem.message))
            out.append(problem)
    return out


_ID_HELP = "use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit"
_TYPE_NAMES = {
    "string": "a string",
    "integer": "a whole number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "number": "a number",
}


_YAML11_BOOLS = ("yes", "no", "y", "n", "on", "off")


_SHOWN_AS: dict[Any, str] = {
    None: "null (empty)",
    True: "true",
    False: "false",
    dict: "a mapping",
    list: "a list",
}


def _shown(value: Any) -> str:
    """A value as a message quotes it: YAML's words for the constants, a container by its kind."""
    if value is None or isinstance(value, bool):
        return _SHOWN_AS[value]
    if isinstance(value, dict | list):
        return _SHOWN_AS[dict if isinstance(value, dict) else list]
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _translate(error: Any, doc: Document) -> Iterator[Problem]:
    """One jsonschema error -> user-facing problems at the right place.

    Chosen by the keyword that failed (``_TRANSLATIONS``); a keyword without an entry
    gets jsonschema's own message, bounded (``_MESSAGES`` words some of them better)."""
    path: DocPath = tuple(error.absolute_path)
    if "propertyNames" in error.relative_schema_path:  # whatever failed: the key is the fault
        return _name_problem(doc, path, error.instance)
    return _TRANSLATIONS.get(error.validator, _message_problem)(error, doc, path)


def _message_problem(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    yield Problem(doc.loc(path), _bounded_message(error), json_path(path))


def _unknown_keys(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    if not isinstance(error.instance, dict):
        yield from _message_problem(error, doc, path)
        return
    allowed = set(error.schema.get("properties", {}))
    for key in error.instance:
        if key not in allowed:
            hint = suggest(key, allowed)
            expected = ", ".join(sorted(allowed))
            yield Problem(
                doc.key_loc((*path, key)),
                f"unknown key {_shown(key)}{hint or f'; expected one of: {expected}'}",
                json_path((*path, key)),
            )


def _missing_keys(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    instance = error.instance
    for name in error.validator_value:
        if isinstance(instance, dict) and name not in instance:
            kind = instance.get("check") if isinstance(instance.get("check"), str) else None
            what = (
                f"check {kind} needs argument {name!r}"
                if kind
                else f"missing required key {name!r}"
            )
            yield Problem(
                doc.key_loc(path) if path else doc.loc(path), f"{what}; add it.", json_path(path)
            )


def _wrong_type(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    instance, value = error.instance, error.validator_value
    types: list[str] = value if isinstance(value, list) else [value]
    wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
    hint = ""
    if "string" in types and isinstance(instance, int | float) and not isinstance(instance, bool):
        hint = f'; quote it: "{instance}"'
    elif "string" in types and isinstance(instance, bool):
        hint = "; quote it if you mean the word"
    elif "boolean" in types and isinstance(instance, str) and instance.lower() in _YAML11_BOOLS:
        hint = "; stagegate reads YAML 1.2, where only true and false are booleans: write " + (
            "true" if instance.lower() in ("yes", "y", "on") else "false"
        )
    elif instance is None:
        hint = "; give a value"
    yield Problem(doc.loc(path), f"must be {wanted}, not {_shown(instance)}{hint}", json_path(path))


def _not_an_option(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    """``enum`` and ``const``; for ``check:``, the known check kinds."""
    instance, value = error.instance, error.validator_value
    options = value if error.validator == "enum" else [value]
    if path and path[-1] == "check":
        hint = suggest(str(instance), [str(o) for o in options])
        known = ", ".join(str(o) for o in options)
        message = f"unknown check kind {_shown(instance)}{hint or f'; known kinds: {known}'}"
    else:
        shown_options = " or ".join(_shown(o) for o in options)
        hint = (
            suggest(str(instance), [str(o) for o in options]) if isinstance(instance, str) else ""
        )
        message = f"must be {shown_options}, not {_shown(instance)}{hint}"
    yield Problem(doc.loc(path), message, json_path(path))


def _not_an_id(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    yield Problem(
        doc.loc(path), f"{_shown(error.instance)} is not a valid id: {_ID_HELP}", json_path(path)
    )


def _alternatives(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    """``oneOf``/``anyOf``: the problems of the one branch the value's type fits, if one does."""
    branch = _fitting_branch(error) if error.context else []
    if branch:
        for sub in branch:
            yield from _translate(sub, doc)
    elif error.validator == "oneOf" and len(path) >= 2 and path[0] == "axes":
        yield Problem(
            doc.loc(path),
            'an axis is either a list of strings (finite: ["310", "311"]) or '
            "{pattern: REGEX} (open: any string the regex fully matches)",
            json_path(path),
        )
    elif error.validator == "oneOf" and len(path) == 2 and path[0] == "release_changes":
        both = isinstance(error.instance, dict) and {"tag", "job"} <= set(error.instance)
        yield Problem(
            doc.loc(path),
            f"a planned change names {'both a `tag` and a `job`' if both else 'no `tag` and no `job`'}"
            ": give `tag` (a tag of the model's release whose selection this stage changes) or "
            "`job` (PATH#JOB, a real release job whose uploads this stage changes), one of them",
            json_path(path),
        )
    else:
        yield from _nearest_cause(error, doc, path)


def _nearest_cause(error: Any, doc: Document, path: DocPath) -> Iterator[Problem]:
    """A combined keyword (``if``, ``allOf``, ...): its cause nearest the top of the file."""
    if not error.context:
        yield from _message_problem(error, doc, path)
        return
    best = min(error.context, key=lambda e: len(list(e.absolute_path)))
    yield from _translate(best, doc)


_Translation = Callable[[Any, Document, DocPath], Iterator[Problem]]
_TRANSLATIONS: dict[str, _Translation] = {
    "additionalProperties": _unknown_keys,
    "required": _missing_keys,
    "type": _wrong_type,
    "enum": _not_an_option,
    "const": _not_an_option,
    "pattern": _not_an_id,
    "oneOf": _alternatives,
    "anyOf": _alternatives,
    "if": _nearest_cause,
    "then": _nearest_cause,
    "allOf": _nearest_cause,
}
"""How the failure of each schema keyword is told: one or more located problems."""


def _bounded_message(error: Any) -> str:
    """jsonschema's message without echoing the value: hostile values are megabytes long."""
    worded = _MESSAGES.get(error.validator)
    if worded is not None and (error.validator != "maxLength" or isinstance(error.instance, str)):
        return worded(error.validator_value, error.instance, error.message)
    message = error.message or "invalid"
    message = message[0].lower() + message[1:]
    return message if len(message) <= 300 else message[:297] + "..."


_MESSAGES: dict[str, Callable[[Any, Any, str], str]] = {
    "maxLength": lambda limit, text, _: (
        f"is {len(text):,} characters long; the limit is {limit:,}: shorten it"
    ),
    "minLength": lambda *_: "must not be empty",
    "minItems": lambda *_: "must not be an empty list; give at least one",
    "uniqueItems": lambda _value, _instance, message: f"{message}; list each value once",
    "minimum": lambda bound, value, _: f"must be at least {bound}, not {_shown(value)}",
    "exclusiveMinimum": lambda bound, value, _: f"must be more than {bound}, not {_shown(value)}",
}
"""Better words for the keywords whose failure is one plain message."""


def _fitting_branch(error: Any) -> list[Any]:
    """The errors of the one alternative whose type fits the value, if exactly one fits."""
    branches: dict[int, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    fitting = [
        errors
        for errors in branches.values()
        if not any(e.validator == "type" and not list(e.relative_path) for e in errors)
    ]
    return fitting[0] if len(fitting) == 1 else []


def _name_problem(doc: Document, path: DocPath, name: Any) -> Iterator[Problem]:
    loc = doc.key_loc((*path, name))
    where = json_path((*path, name))
    section = path[-1] if path else ""
    if section == "flags" and name in ("not", "and", "or", "true", "false"):
        yield Problem(
            loc,
            f"{name!r} is a word of flag expressions and cannot name a flag; choose another name.",
            where,
        )
    elif section == "axes":
        yield Problem(
            loc, f"{_shown(name)} is not a valid axis name: use letters, digits, '_' and '-'", where
        )
    elif section == "flags":
        yield Problem(
            loc,
            f"{_shown(name)} is not a valid flag name: use letters, digits, '.', '_' and '-'",
            where,
        )
    else:
        yield Problem(loc, f"{_shown(name)} is not a valid id: {_ID_HELP}", where)
