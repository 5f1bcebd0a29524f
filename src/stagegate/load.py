"""migration.yaml and stage files -> located data -> schema -> meaning -> model.

This is the only module that handles raw dicts. Every problem found is collected
and reported at once, each as ``FILE:LINE:COL: $.json.path: message``.
"""

from __future__ import annotations

import errno
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, TypeVar

from .cache import ValidCache
from .errors import InvalidInput, Loc, LocatedError, Problem, UsageError
from .expr import parse as parse_expr
from .model import (
    DEFAULT_WORKFLOW_PATHS,
    Bind,
    Check,
    Consumer,
    Flag,
    Input,
    JobRef,
    Legacy,
    Migration,
    Producer,
    Ref,
    Reference,
    Release,
    ReleaseChange,
    Stage,
    Template,
    WorkflowSettings,
)
from .records import record, replace
from .templates import MAX_ROWS, MAX_TOTAL_ROWS, Axis, Placeholder, row_count, split
from .words import suggest
from .yamlsrc import MAX_BYTES, Document, json_path, read
from .yamlsrc import Path as DocPath

STAGE_FILE = re.compile(r"(?P<number>[0-9]{2,})-(?P<slug>[a-z0-9][a-z0-9-]*)\.yaml")
_LOOKS_LIKE_STAGE = re.compile(r"[0-9]+[-_].*\.ya?ml")
_BIND_KEY = re.compile(
    r"(?:[^\s#]+(?:#[A-Za-z_][A-Za-z0-9_-]*)? +)?"
    r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_*][A-Za-z0-9_*-]*)+"
)
"""A context path that `workflows.bind` may give a value (env.NAME, steps.ID.outputs.NAME),
optionally after the file or PATH#JOB it holds in and a space."""
_JOB_REF = re.compile(r"[^#\s]+#[A-Za-z_][A-Za-z0-9_-]*")
MAX_STAGES = 999
"""Most stage files a migration may have."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""Most bytes the migration file and its stage files may hold together."""
MAX_CHECK_RUNS = 50_000
"""Most check runs ``check --all`` may make: invariants at every stage, plus each stage's own."""


class Source(Protocol):
    """Where the migration's files come from: the work tree, or a git revision."""

    def read(self, rel: str) -> bytes:
        """The bytes of ``rel`` (POSIX, relative to the root); FileNotFoundError if absent."""
        ...

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        """(name, is_dir) of the entries of directory ``rel``; FileNotFoundError if absent."""
        ...

    def escapes(self, rel: str) -> bool:
        """Whether ``rel`` leads outside the root (via ``..`` or a symbolic link)."""
        ...


def read_limited(path: Path) -> bytes:
    """The bytes of the regular file at ``path``: at most one byte past ``MAX_BYTES``.

    A symbolic link to /dev/zero or a named pipe would otherwise be read forever (or
    wait forever for a writer); one byte past the limit is enough for ``decode`` to
    refuse a file that is too large, whatever its size."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(
                errno.EINVAL,
                "not a regular file (a device, pipe or socket); stagegate reads plain files only",
            )
        return handle.read(MAX_BYTES + 1)


@record
class FileSource:
    """Files under a directory of the work tree."""

    root: Path

    def read(self, rel: str) -> bytes:
        return read_limited(self.root / rel)

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        with os.scandir(self.root / rel) as it:
            return [(entry.name, entry.is_dir()) for entry in it]

    def escapes(self, rel: str) -> bool:
        root = self.root.resolve()
        target = (self.root / rel).resolve()
        return target != root and root not in target.parents


# --------------------------------------------------------------------------- rules


@record(kw_only=True)
class Located:
    """The migration's files as read: the located data of the migration file and of each
    stage file (in stage order), for a validator to point at the value at fault."""

    migration: Document
    stages: tuple[Document, ...]


Validator = Callable[[Migration, Located], list[Problem]]
"""A meaning check the loader is handed: the problems of a built migration."""


@record(kw_only=True)
class Rules:
    """What the loader checks beyond its own schemas and meaning checks, handed to it.

    They belong to the modules that read the model (the check kinds, the audit, CI's
    flags), which import the loader: handed in (by ``validation``), they are checked
    without the loader importing any of them. The validation cache is keyed by
    stagegate's own modules, not by the rules: every load passes ``validation.RULES``."""

    check_schema: Callable[[], dict[str, Any]]
    """The JSON Schema of one check, each kind's arguments: ``$defs.check`` of both files."""
    validators: tuple[Validator, ...] = ()
    """Run on input not known valid, in order; a validation-cache hit skips them."""
    uncached: tuple[Validator, ...] = ()
    """Run instead on a cache hit: what they check is more than the files' bytes."""


# --------------------------------------------------------------------------- schema


_SCHEMA_DIR = Path(__file__).with_name("schema")


def _schema_text(kind: str) -> bytes:
    return (_SCHEMA_DIR / f"{kind}.schema.json").read_bytes()


def schema(kind: str, rules: Rules) -> dict[str, Any]:
    """The full JSON Schema of ``migration`` or ``stage`` files, ``rules``' check kinds included."""
    import json

    document: dict[str, Any] = json.loads(_schema_text(kind))
    document["$defs"]["check"] = rules.check_schema()
    return document


def schema_problems(kind: str, doc: Document, rules: Rules) -> list[Problem]:
    """All schema violations of ``doc``."""
    validator = _validator_class()(schema(kind, rules))
    problems: list[Problem] = []
    for error in validator.iter_errors(doc.data):
        problems.extend(_translate(error, doc))
    return _dedupe(problems)


@functools.cache
def _validator_class() -> Any:
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


def _dedupe(problems: Iterable[Problem]) -> list[Problem]:
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


# --------------------------------------------------------------------------- files


@record(kw_only=True)
class StageFile:
    """One stage file as read: its number and slug (from its name), how it is shown, its data."""

    number: int
    slug: str
    shown: str
    doc: Document
    raw: bytes


def _read(source: Source, rel: str, shown: str, cache: ValidCache) -> tuple[Document, bytes]:
    try:
        raw = source.read(rel)
    except FileNotFoundError:
        raise UsageError(
            f"{shown}: no such file; run stagegate in the folder that holds migration.yaml "
            "or pass -f PATH."
        ) from None
    except IsADirectoryError:
        raise UsageError(
            f"{shown}: is a directory; pass the migration file with -f PATH."
        ) from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    doc = cache.document(raw, shown)
    if doc is None:
        doc = read(raw, shown)
        cache.store_document(raw, doc)
    return doc, raw


def load(
    path: str | Path = "migration.yaml", *, source: Source | None = None, rules: Rules
) -> Migration:
    """Load and fully validate a migration from the work tree (or another source);
    ``validation.load`` hands it every rule.

    Every problem of every file is reported in one run: a migration file that does not
    parse still has its stage files read and checked, and a schema problem in one place
    does not stop the meaning checks of the parts that are well formed."""
    shown = str(path)
    file_path = Path(path)
    root = file_path.parent
    if source is None:
        source = FileSource(root if str(root) else Path("."))
    cache = ValidCache()
    unparsed: list[Problem] = []
    try:
        doc, raw = _read(source, file_path.name, shown, cache)
    except InvalidInput as exc:  # the YAML itself: the stage files may still be read
        unparsed = list(exc.problems)
        doc, raw = Document(shown, {}), b""
    stages_dir = doc.data.get("stages_dir", "stages") if isinstance(doc.data, dict) else "stages"
    problems: list[Problem] = []
    stage_docs: list[StageFile] = []
    if isinstance(stages_dir, str) and stages_dir:
        problems, stage_docs = _read_stages(source, root, stages_dir, doc, cache, len(raw))
    if unparsed:
        for stage_file in stage_docs:
            problems += schema_problems("stage", stage_file.doc, rules)
        raise InvalidInput(_dedupe([*unparsed, *problems]))
    key = cache.key([(file_path.name, raw), *((f.shown, f.raw) for f in stage_docs)])
    trusted = not problems and cache.known(key)
    if not trusted:
        problems += schema_problems("migration", doc, rules)
        for stage_file in stage_docs:
            problems += schema_problems("stage", stage_file.doc, rules)
    if problems:
        raise InvalidInput(
            _dedupe([*problems, *_meaning_despite(doc, stage_docs, root, stages_dir, rules)])
        )
    builder = _Builder(doc, stage_docs, root, stages_dir, rules, trusted=trusted)
    migration = builder.build()
    if builder.problems:
        raise InvalidInput(builder.problems)
    if not trusted:
        cache.remember(key)
    return migration


MAX_PRUNE_ROUNDS = 20
"""Rounds of cutting out what the schema refuses before the meaning checks give up on a file."""
_ITEM_SECTIONS = ("axes", "flags", "producers", "consumers", "releases")
_CHECK_LISTS = ("invariants", "acceptance")
_NEUTRAL_CHECK = {"check": "unique-artifacts"}
"""Stands in for a refused check: no arguments, no meaning checks of its own."""
_PLACEHOLDERS: dict[str, Any] = {"version": 1, "migration": "migration", "stage": 0, "title": ""}


def _well_formed(
    kind: str, data: Any, rules: Rules, stage: int = 0
) -> tuple[Any, dict[str, set[str]]] | None:
    """``data`` without the parts the schema refuses, and the items cut out (by section).

    Each refused value is removed where it stands when its mapping may go without it;
    an element of a list takes the list with it, a required key its item (a flag or an
    axis is kept as a stub, so that what names it finds it). ``None`` when the file's
    top level cannot be made valid this way: its meaning is not checked."""
    import copy

    data = copy.deepcopy(data)
    if not isinstance(data, dict):
        return None
    dropped: dict[str, set[str]] = {section: set() for section in _ITEM_SECTIONS}
    validator = _validator_class()(schema(kind, rules))
    placeholders = {**_PLACEHOLDERS, "stage": stage}
    for _round in range(MAX_PRUNE_ROUNDS):
        errors = list(validator.iter_errors(data))
        if not errors:
            return data, dropped
        for error in errors:
            path = tuple(error.absolute_path)
            if error.validator == "additionalProperties" and isinstance(error.instance, dict):
                allowed = set(error.schema.get("properties", {}))
                for key in [k for k in error.instance if k not in allowed]:
                    _cut(data, (*path, key), dropped, placeholders)
            elif error.validator == "propertyNames":
                _cut(data, (*path, error.instance), dropped, placeholders)
            elif error.validator == "required" and not path:
                for name in error.validator_value:
                    if name not in data and name in placeholders:
                        data[name] = placeholders[name]
            elif error.validator == "required":
                _cut(data, path, dropped, placeholders)
            else:
                _cut(data, path, dropped, placeholders)
        if not isinstance(data, dict):
            return None
    return None


def _cut(
    data: Any, path: tuple[Any, ...], dropped: dict[str, set[str]], placeholders: dict[str, Any]
) -> None:
    """Remove the value at ``path`` (see ``_well_formed``); a path already gone is no matter."""
    while path:
        parent: Any = data
        for part in path[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                return  # cut already with an enclosing value
        last = path[-1]
        if isinstance(parent, list) and len(path) == 2 and path[0] in _CHECK_LISTS:
            parent[last] = dict(_NEUTRAL_CHECK)  # keeps its siblings' places and meaning checks
            return
        if isinstance(parent, list):
            path = path[:-1]  # removing one element would shift its siblings' locations
            continue
        if not isinstance(parent, dict) or last not in parent:
            return
        if len(path) == 1 and last in placeholders:
            parent[last] = placeholders[last]
        elif len(path) == 2 and path[0] in _ITEM_SECTIONS:
            dropped[path[0]].add(str(last))
            if path[0] == "flags":
                parent[last] = {}
            elif path[0] == "axes":
                parent[last] = ["stub"]
            else:
                del parent[last]
        else:
            del parent[last]
        return


def _meaning_despite(
    doc: Document, stage_docs: list[StageFile], root: Path, stages_dir: Any, rules: Rules
) -> list[Problem]:
    """The meaning problems of the well-formed parts of files that have schema problems.

    Found on copies with the refused parts cut out, so that one problem never hides
    another; the schema problems themselves are reported by the caller."""
    kept = _well_formed("migration", doc.data, rules)
    if kept is None or not isinstance(stages_dir, str) or not stages_dir:
        return []
    data, dropped = kept
    pruned_stages = []
    present = {f.number for f in stage_docs}
    stubs = [  # a stage file that did not parse still counts, so that numbers stay right
        StageFile(number=n, slug="", shown=doc.file, doc=Document(doc.file, {}), raw=b"")
        for n in range(1, max(present, default=0) + 1)
        if n not in present
    ]
    for stage_file in sorted([*stage_docs, *stubs], key=lambda f: f.number):
        stage_kept = _well_formed("stage", stage_file.doc.data, rules, stage_file.number)
        stage_data = stage_kept[0] if stage_kept else {"stage": stage_file.number, "title": ""}
        stage_doc = Document(
            stage_file.doc.file,
            stage_data,
            stage_file.doc.marks,
            stage_file.doc.key_marks,
            stage_file.doc.quoted,
        )
        pruned_stages.append(
            StageFile(
                number=stage_file.number,
                slug=stage_file.slug,
                shown=stage_file.shown,
                doc=stage_doc,
                raw=stage_file.raw,
            )
        )
    pruned = Document(doc.file, data, doc.marks, doc.key_marks, doc.quoted)
    builder = _Builder(pruned, pruned_stages, root, stages_dir, rules)
    builder.producer_ids |= dropped["producers"]
    builder.build()
    return builder.problems


def _read_stages(
    source: Source, root: Path, stages_dir: str, doc: Document, cache: ValidCache, spent: int = 0
) -> tuple[list[Problem], list[StageFile]]:
    """The stage files, read in order; ``spent``: the bytes read already (the migration)."""
    where = doc.loc(("stages_dir",)) if "stages_dir" in doc.data else doc.loc(())
    entries, problems = _stages_folder(source, stages_dir, "stages_dir" in doc.data, where)
    if entries is None:
        return problems, []
    found, named = _stage_names(entries, root, stages_dir, where)
    problems += named
    if len(found) > MAX_STAGES:
        problems.append(
            _stages_dir_problem(
                where,
                f"{len(found):,} stage files; the limit is {MAX_STAGES}: "
                "a migration of that many stages cannot be reviewed; split it.",
            )
        )
        return problems, []
    docs, unread = _read_stage_files(source, stages_dir, found, cache, spent)
    return problems + unread, docs


def _stages_dir_problem(where: Loc, message: str) -> Problem:
    return Problem(where, message, "$.stages_dir")


def _stages_folder(
    source: Source, stages_dir: str, explicit: bool, where: Loc
) -> tuple[list[tuple[str, bool]] | None, list[Problem]]:
    """The entries of the stages folder; ``None`` and the reason when it cannot be used.

    ``explicit``: the migration names the folder, so that its absence is a problem."""
    posix = PurePosixPath(stages_dir)
    if (
        posix.is_absolute()
        or ".." in posix.parts
        or os.path.isabs(stages_dir)
        or source.escapes(stages_dir)
    ):
        message = (
            f"stages_dir {stages_dir!r} leads outside the folder of the migration file; "
            "use a relative path inside it, such as 'stages'."
        )
        return None, [_stages_dir_problem(where, message)]
    try:
        return source.listdir(stages_dir), []
    except NotADirectoryError:
        message = (
            f"stages_dir {stages_dir!r} is a file, not a folder; name the folder that holds "
            "the stage files (NN-slug.yaml)."
        )
        return None, [_stages_dir_problem(where, message)]
    except FileNotFoundError:
        if not explicit:
            return [], []
        message = (
            f"stages_dir {stages_dir!r}: no such folder; create it with the stage files "
            "(NN-slug.yaml), or fix stages_dir."
        )
        return None, [_stages_dir_problem(where, message)]


def _stage_names(
    entries: list[tuple[str, bool]], root: Path, stages_dir: str, where: Loc
) -> tuple[dict[int, tuple[str, str]], list[Problem]]:
    """The stage files among ``entries``, by number: (how each is shown, its slug).

    The problems: a file that looks like a stage file but is misnamed, a second file
    for one number, and numbers that are not 01..N."""
    problems: list[Problem] = []
    found: dict[int, tuple[str, str]] = {}
    for name, is_dir in sorted(entries):
        if is_dir:
            continue
        shown = (
            str(root / stages_dir / name) if str(root) not in ("", ".") else f"{stages_dir}/{name}"
        )
        match = STAGE_FILE.fullmatch(name)
        if not match:
            if _LOOKS_LIKE_STAGE.fullmatch(name):
                problems.append(
                    Problem(
                        Loc(shown, 1, 1),
                        "stage files are named NN-slug.yaml (two or more digits, a lowercase slug, "
                        "the .yaml ending); rename this file.",
                    )
                )
            continue
        number = int(match["number"])
        if number in found:
            problems.append(
                Problem(
                    Loc(shown, 1, 1),
                    f"a second file for stage {number} (the other is {found[number][0]}); "
                    "each stage has exactly one file.",
                )
            )
            continue
        found[number] = (shown, match["slug"])
    expected = set(range(1, len(found) + 1))
    missing = sorted(expected - set(found))
    extra = sorted(set(found) - expected)
    if missing or extra or 0 in found:
        have = ", ".join(f"{n:02d}" for n in sorted(found)) or "none"
        gap = f"stage {missing[0]:02d} is missing" if missing else "numbering must start at 01"
        after = [n for n in sorted(found) if not missing or n > missing[0]]
        problems.append(
            _stages_dir_problem(
                Loc(found[after[0]][0], 1, 1) if after else where,
                f"stage files must be numbered 01..N without gaps; found {have}: {gap}. "
                "Renumber the files.",
            )
        )
    return found, problems


def _read_stage_files(
    source: Source,
    stages_dir: str,
    found: dict[int, tuple[str, str]],
    cache: ValidCache,
    spent: int,
) -> tuple[list[StageFile], list[Problem]]:
    """Each stage file in order, within the folder and the bytes all files may hold."""
    problems: list[Problem] = []
    docs: list[StageFile] = []
    total = spent
    for number in sorted(found):
        shown, slug = found[number]
        rel = f"{stages_dir}/{Path(shown).name}"
        if source.escapes(rel):
            problems.append(
                Problem(
                    Loc(shown, 1, 1),
                    "this stage file is a symbolic link that leads outside the folder of the "
                    "migration file; stagegate reads nothing from outside it: put the file itself "
                    "here.",
                )
            )
            continue
        try:
            stage_doc, raw = _read(source, rel, shown, cache)
        except InvalidInput as exc:
            problems.extend(exc.problems)
            continue
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            problems.append(
                Problem(
                    Loc(shown, 1, 1),
                    f"with this file, the migration's files hold more than {MAX_TOTAL_BYTES:,} "
                    "bytes, the limit; remove generated content or split the migration.",
                )
            )
            break
        docs.append(StageFile(number=number, slug=slug, shown=shown, doc=stage_doc, raw=raw))
    return docs, problems


# --------------------------------------------------------------------------- meaning


_Item = TypeVar("_Item", Producer, Consumer, Release)


class _Builder:
    """Meaning checks and model construction over schema-valid data."""

    def __init__(
        self,
        doc: Document,
        stage_docs: list[StageFile],
        root: Path,
        stages_dir: str,
        rules: Rules,
        *,
        trusted: bool = False,
    ) -> None:
        self.trusted = trusted  # known valid: skip the checks that need the glob engine
        self.rules = rules
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.stage_docs = stage_docs
        self.root = root
        self.stages_dir = stages_dir
        self.problems: list[Problem] = []
        self.axes: dict[str, Axis] = {}
        self.flag_names: set[str] = set()
        self.producer_ids: set[str] = set(self.data.get("producers", {}))
        self.total_rows: dict[str, int] = {}

    def problem(self, doc: Document, path: DocPath, message: str, loc: Loc | None = None) -> None:
        self.problems.append(Problem(loc or doc.loc(path), message, json_path(path)))

    def _pattern_problem(self, path: DocPath, text: str, what: str, offset: int = 0) -> None:
        """Problems of an open-axis regex or a glob (skipped for known-valid input)."""
        if self.trusted:
            return
        from . import globs

        try:
            (globs.check_regex if what == "open-axis regex" else globs.check_glob)(text)
        except globs.PatternError as exc:
            loc = self.doc.text_loc(path, offset + exc.column)
            self.problem(self.doc, path, f"{what}: {exc.message}", loc)

    def build(self) -> Migration:
        data = self.data
        for name, spec in data.get("axes", {}).items():
            if isinstance(spec, dict):
                pattern = spec["pattern"]
                self._pattern_problem(("axes", name, "pattern"), pattern, "open-axis regex")
                self.axes[name] = Axis(name, pattern=pattern)
            else:
                self.axes[name] = Axis(name, values=tuple(spec))
        flags = {
            name: Flag(
                id=name,
                summary=spec.get("summary", ""),
                default=spec.get("default", False),
                references=self._references(("flags", name, "references"), spec),
                loc=self.doc.key_loc(("flags", name)),
                env=spec.get("env"),
            )
            for name, spec in data.get("flags", {}).items()
        }
        self.flag_names = set(flags)
        producers = self._items("producers", self._producer)
        consumers = self._items("consumers", self._consumer)
        releases = self._items("releases", self._release)
        invariants = tuple(
            self._check(self.doc, ("invariants", i), spec, "invariant")
            for i, spec in enumerate(data.get("invariants", ()))
        )
        stages = tuple(self._stage(stage_file) for stage_file in self.stage_docs)
        runs = len(invariants) * (len(stages) + 1) + sum(len(st.acceptance) for st in stages)
        if runs > MAX_CHECK_RUNS:
            counts = [(len(f.doc.data.get("acceptance", ())), f.doc) for f in self.stage_docs]
            own, largest = max(counts, key=lambda c: c[0], default=(0, self.doc))
            doc = self.doc if len(invariants) * (len(stages) + 1) >= own else largest
            self.problem(
                doc,
                ("invariants",) if doc is self.doc else ("acceptance",),
                f"the invariants at each of {len(stages) + 1} stages and the stages' own checks "
                f"make {runs:,} check runs; the limit is {MAX_CHECK_RUNS:,}: check less often.",
                doc.key_loc(("invariants",) if doc is self.doc else ("acceptance",)),
            )
        stage = data["stage"]
        if stage > len(stages):
            self.problem(
                self.doc,
                ("stage",),
                f"stage {stage} is beyond the last stage ({len(stages)}); "
                f"use 0..{len(stages)} or add the stage file.",
            )
        migration = Migration(
            version=data["version"],
            id=data["migration"],
            summary=data.get("summary", ""),
            stage=stage,
            stage_loc=self.doc.loc(("stage",)),
            stages_dir=self.stages_dir,
            axes=self.axes,
            flags=flags,
            producers=producers,
            consumers=consumers,
            releases=releases,
            invariants=invariants,
            audit_ignore=tuple(data.get("audit", {}).get("ignore", ())),
            audit_ignore_locs=tuple(
                self.doc.text_loc(("audit", "ignore", i), 0)
                for i in range(len(data.get("audit", {}).get("ignore", ())))
            ),
            stages=stages,
            file=self.doc.file,
            root=self.root,
            workflows=self._workflows(),
            stage_span=self.doc.spans.get(("stage",)),
            document=self.doc,
        )
        if not self.trusted:
            self._kinds_in_use(migration)
        files = Located(migration=self.doc, stages=tuple(f.doc for f in self.stage_docs))
        # on a cache hit, only what depends on more than the files' bytes (links on disk)
        for validator in self.rules.uncached if self.trusted else self.rules.validators:
            self.problems += validator(migration, files)
        return migration

    # -- items

    def _when(self, path: DocPath, spec: dict[str, Any]) -> tuple[Any, str]:
        raw = spec.get("when", True)
        text = ("true" if raw else "false") if isinstance(raw, bool) else raw
        try:
            tree = parse_expr(raw)
        except LocatedError as exc:
            self.problem(
                self.doc,
                (*path, "when"),
                exc.message,
                self.doc.text_loc((*path, "when"), exc.column),
            )
            return parse_expr(True), text
        for flag in _flag_refs(tree):
            if flag.name not in self.flag_names:
                hint = suggest(flag.name, self.flag_names)
                self.problem(
                    self.doc,
                    (*path, "when"),
                    f"unknown flag {flag.name!r}{hint or '; declare it under flags:'}",
                    self.doc.text_loc((*path, "when"), flag.column),
                )
        return tree, text

    def _references(self, path: DocPath, spec: dict[str, Any]) -> tuple[Ref, ...]:
        """Fixed strings as they are; ``{regex: ...}`` checked here, with its column."""
        out: list[Ref] = []
        for i, entry in enumerate(spec.get("references", ())):
            if isinstance(entry, str):
                out.append(entry)
                continue
            out.append(Reference(regex=entry["regex"]))
            if self.trusted:
                continue
            from .references import regex_problem

            problem = regex_problem(entry["regex"])
            if problem is not None:
                message, column = problem
                at = (*path, i, "regex")
                self.problem(self.doc, at, message, self.doc.text_loc(at, column))
        return tuple(out)

    def _axes_of(self, path: DocPath, spec: dict[str, Any]) -> dict[str, Axis]:
        """An item's own finite axis values (``axes: {py: [...]}``), over declared finite axes."""
        own: dict[str, Axis] = {}
        for name, values in spec.get("axes", {}).items():
            declared = self.axes.get(name)
            if declared is None:
                finite = ", ".join(n for n, a in self.axes.items() if not a.is_open)
                hint = suggest(name, self.axes) or f"; the finite axes are: {finite or 'none'}"
                self.problem(
                    self.doc,
                    (*path, "axes", name),
                    f"unknown axis {name!r}: an item's axes narrow or replace the values of "
                    f"a finite axis declared under axes:{hint}",
                    self.doc.key_loc((*path, "axes", name)),
                )
                continue
            if declared.is_open:
                self.problem(
                    self.doc,
                    (*path, "axes", name),
                    f"axis {name!r} is open (a pattern); only a finite axis can be given values "
                    "per item. Remove it here, or make the axis finite.",
                    self.doc.key_loc((*path, "axes", name)),
                )
                continue
            own[name] = Axis(name, values=tuple(values))
        return own

    def _template(
        self, path: DocPath, text: str, *, kind: str, axes: dict[str, Axis] | None = None
    ) -> Template:
        """Parse a template or glob; ``kind`` is artifact, select or plain (no placeholders).

        ``axes``: the item's own values of some finite axes, for counting its rows."""
        loc = self.doc.loc(path)
        try:
            parts = split(text) if kind != "plain" else (text,)
        except LocatedError as exc:
            self.problem(self.doc, path, exc.message, self.doc.text_loc(path, exc.column))
            return Template(text=text, parts=(text,), loc=loc)
        seen_open: set[str] = set()
        for part in parts:
            if isinstance(part, Placeholder):
                axis = self.axes.get(part.axis)
                if axis is None:
                    hint = suggest(part.axis, self.axes)
                    self.problem(
                        self.doc,
                        path,
                        f"unknown axis {{{part.axis}}}{hint or '; declare it under axes:'}",
                        self.doc.text_loc(path, part.column),
                    )
                elif axis.is_open:
                    if part.axis in seen_open:
                        self.problem(
                            self.doc,
                            path,
                            f"open axis {{{part.axis}}} appears twice; an open axis may appear once "
                            "per name (its two values could not be tied together exactly).",
                            self.doc.text_loc(path, part.column),
                        )
                    seen_open.add(part.axis)
            elif kind != "artifact":
                self._pattern_problem(path, part, "glob", max(text.find(part), 0))
        if kind == "plain" and re.search(r"\{[A-Za-z_][A-Za-z0-9_-]*\}", text):
            self.problem(
                self.doc,
                path,
                "release globs and tags are applied as written, without {axis} placeholders; "
                "write the value itself (e.g. cuda13.4.1).",
            )
        if all(not isinstance(p, Placeholder) or p.axis in self.axes for p in parts):
            rows = row_count(parts, {**self.axes, **(axes or {})})
            if rows > MAX_ROWS:
                self.problem(
                    self.doc,
                    path,
                    f"expands to {rows:,} rows; the limit is {MAX_ROWS:,}: "
                    "split the template or use fewer axis values.",
                )
            before = self.total_rows.get(kind, 0)
            self.total_rows[kind] = before + rows
            if before <= MAX_TOTAL_ROWS < before + rows and kind != "plain":
                what = "artifact templates" if kind == "artifact" else "consumer selects"
                self.problem(
                    self.doc,
                    path,
                    f"with this one, the {what} expand to more than {MAX_TOTAL_ROWS:,} rows "
                    "in all, the limit: use fewer axis values or fewer templates.",
                )
        return Template(text=text, parts=parts, loc=loc)

    def _legacy(self, path: DocPath, spec: dict[str, Any]) -> Legacy:
        legacy = spec.get("legacy", {})
        return Legacy(
            references=self._references((*path, "legacy", "references"), legacy),
            paths=tuple(legacy.get("paths", ())),
        )

    def _items(
        self, section: str, make: Callable[[DocPath, dict[str, Any], dict[str, Any]], _Item]
    ) -> dict[str, _Item]:
        """The items of ``section``: the fields all items have read one way, then ``make``'s."""
        items = {}
        for item_id, spec in self.data.get(section, {}).items():
            path: DocPath = (section, item_id)
            when, text = self._when(path, spec)
            fields = {
                "id": item_id,
                "summary": spec.get("summary", ""),
                "when": when,
                "when_text": text,
                "legacy": self._legacy(path, spec),
                "loc": self.doc.key_loc(path),
            }
            items[item_id] = make(path, spec, fields)
        return items

    def _plain_globs(self, path: DocPath, spec: dict[str, Any], key: str) -> tuple[Template, ...]:
        """``spec[key]``: globs applied as written (a release's select, an exclude)."""
        return tuple(
            self._template((*path, key, i), text, kind="plain")
            for i, text in enumerate(spec.get(key, ()))
        )

    def _producer_refs(
        self, path: DocPath, spec: dict[str, Any], key: str
    ) -> tuple[str, ...] | None:
        """The producer ids listed under ``spec[key]`` (None when it is not given)."""
        if key not in spec:
            return None
        for i, pid in enumerate(spec[key]):
            if pid not in self.producer_ids:
                hint = suggest(pid, self.producer_ids)
                self.problem(
                    self.doc,
                    (*path, key, i),
                    f"unknown producer {pid!r}{hint or '; declare it under producers:'}",
                )
        return tuple(spec[key])

    def _producer(self, path: DocPath, spec: dict[str, Any], fields: dict[str, Any]) -> Producer:
        own = self._axes_of(path, spec)
        artifacts = []
        for i, entry in enumerate(spec["artifacts"]):
            at: DocPath = (*path, "artifacts", i)
            if isinstance(entry, str):
                artifacts.append(self._template(at, entry, kind="artifact", axes=own))
            else:
                template = self._template((*at, "name"), entry["name"], kind="artifact", axes=own)
                artifacts.append(replace(template, kind=entry.get("kind", "artifact")))
        return Producer(
            **fields,
            artifacts=tuple(artifacts),
            axes=tuple(own.values()),
            paths=tuple(spec.get("paths", ())),
            run=spec.get("run", "this"),
        )

    def _consumer(self, path: DocPath, spec: dict[str, Any], fields: dict[str, Any]) -> Consumer:
        own = self._axes_of(path, spec)
        inputs = []
        for i, item in enumerate(spec["inputs"]):
            at: DocPath = (*path, "inputs", i)
            select = self._template((*at, "select"), item["select"], kind="select", axes=own)
            inputs.append(
                Input(
                    select=select,
                    required=item.get("required", True),
                    from_=self._producer_refs(at, item, "from"),
                    exclude=self._plain_globs(at, item, "exclude"),
                    loc=self.doc.loc(at),
                    axes=tuple(own.values()),
                )
            )
        return Consumer(**fields, inputs=tuple(inputs), axes=tuple(own.values()))

    def _release(self, path: DocPath, spec: dict[str, Any], fields: dict[str, Any]) -> Release:
        return Release(
            **fields,
            tags=tuple(spec["tags"]),
            select=self._plain_globs(path, spec, "select"),
            exclude=self._plain_globs(path, spec, "exclude"),
            expect=self._producer_refs(path, spec, "expect"),
            tooling=spec.get("tooling", "tag"),
            kinds=tuple(spec["kinds"]) if "kinds" in spec else None,
            kinds_loc=self.doc.loc((*path, "kinds")) if "kinds" in spec else None,
            run=spec.get("run", "this"),
        )

    # -- workflows (stagegate drift)

    def _workflows(self) -> WorkflowSettings:
        """`workflows.paths`, `workflows.bind` and every item's `jobs`, checked for form."""
        section = self.data.get("workflows", {})
        paths = tuple(section.get("paths", DEFAULT_WORKFLOW_PATHS))
        for i, text in enumerate(section.get("paths", ())):
            posix = PurePosixPath(text)
            if posix.is_absolute() or ".." in posix.parts or os.path.isabs(text):
                self.problem(
                    self.doc,
                    ("workflows", "paths", i),
                    f"{text!r} leads outside the folder of the migration file; "
                    "use a glob relative to it, such as '.github/workflows/*.yml'.",
                )
        bind: dict[str, Bind] = {}
        for key, value in section.get("bind", {}).items():
            path: DocPath = ("workflows", "bind", key)
            if not _BIND_KEY.fullmatch(key):
                self.problem(
                    self.doc,
                    path,
                    f"{key[:60]!r} is not an expression stagegate can bind: write a context "
                    "path such as env.NAME, matrix.KEY, inputs.NAME, github.sha or "
                    "steps.ID.outputs.NAME.",
                    self.doc.key_loc(path),
                )
                continue
            loc = self.doc.loc(path)
            if isinstance(value, str) and "${{" in value:
                bind[key] = self._expression_bind(key, path, value)
            elif isinstance(value, str):
                bind[key] = Bind(
                    key=key, text=self._template(path, value, kind="artifact"), loc=loc
                )
            else:
                when, _text = self._when(path, value)
                bind[key] = Bind(
                    key=key,
                    when=when,
                    then=value.get("then", "true"),
                    otherwise=value.get("else", "false"),
                    loc=loc,
                )
        sha = self.axes.get("sha")
        if "github.sha" not in bind and sha is not None and sha.is_open:
            text = "{sha}"
            bind["github.sha"] = Bind(
                key="github.sha",
                text=Template(text=text, parts=split(text), loc=self.doc.key_loc(("axes", "sha"))),
                loc=self.doc.key_loc(("axes", "sha")),
            )
        jobs: dict[tuple[str, str], tuple[JobRef, ...]] = {}
        for kind, section_name in (
            ("producer", "producers"),
            ("consumer", "consumers"),
            ("release", "releases"),
        ):
            for item_id, spec in self.data.get(section_name, {}).items():
                refs = []
                for i, text in enumerate(spec.get("jobs", ())):
                    jpath: DocPath = (section_name, item_id, "jobs", i)
                    if not _JOB_REF.fullmatch(text):
                        self.problem(
                            self.doc,
                            jpath,
                            f"{text[:80]!r} is not a job: write PATH#JOB, the workflow file "
                            "relative to the migration's folder and the job's id, e.g. "
                            "'.github/workflows/build.yml#build'.",
                        )
                        continue
                    refs.append(JobRef(text=text, loc=self.doc.loc(jpath)))
                if refs:
                    jobs[(kind, item_id)] = tuple(refs)
        return WorkflowSettings(
            paths=paths,
            paths_loc=self.doc.key_loc(("workflows", "paths")) if "paths" in section else None,
            bind=bind,
            jobs=jobs,
        )

    def _expression_bind(self, key: str, path: DocPath, value: str) -> Bind:
        """A bind whose text holds ``${{ }}`` expressions, evaluated where it is used."""
        loc = self.doc.loc(path)
        found = Bind(
            key=key, text=Template(text=value, parts=(value,), loc=loc), expressions=True, loc=loc
        )
        if self.trusted:  # validated when it was cached: the expression parser stays unloaded
            return found
        from . import ghexpr

        try:
            pieces = ghexpr.split_text(value)
        except LocatedError as exc:
            self.problem(
                self.doc,
                path,
                f"invalid expression: {exc.message}",
                self.doc.text_loc(path, exc.column),
            )
            pieces = []
        for piece, offset in pieces:
            if piece.startswith("${{"):
                try:
                    ghexpr.parse(piece[3:-2])
                except LocatedError as exc:
                    self.problem(
                        self.doc,
                        path,
                        f"invalid expression: {exc.message}",
                        self.doc.text_loc(path, offset + 3 + exc.column),
                    )
            else:
                self._template(path, piece, kind="artifact")
        return found

    # -- checks and stages

    def _check(self, doc: Document, path: DocPath, spec: dict[str, Any], origin: str) -> Check:
        args = {k: v for k, v in spec.items() if k != "check"}
        return Check(kind=spec["check"], args=args, loc=doc.loc(path), origin=origin)

    def _stage(self, stage_file: StageFile) -> Stage:
        number, slug, shown, doc = (
            stage_file.number,
            stage_file.slug,
            stage_file.shown,
            stage_file.doc,
        )
        data = doc.data
        if data["stage"] != number:
            self.problem(
                doc,
                ("stage",),
                f"stage: {data['stage']} does not match the file name ({number:02d}-...); "
                "make them agree.",
            )
        values: dict[str, bool] = {}
        locs: dict[str, Loc] = {}
        for name, value in data.get("set", {}).items():
            if name not in self.flag_names:
                hint = suggest(name, self.flag_names)
                self.problem(
                    doc,
                    ("set", name),
                    f"unknown flag {name!r}{hint or '; declare it under flags: in the migration file'}",
                    doc.key_loc(("set", name)),
                )
            values[name] = value
            locs[name] = doc.key_loc(("set", name))
        acceptance = tuple(
            self._check(doc, ("acceptance", i), spec, "acceptance")
            for i, spec in enumerate(data.get("acceptance", ()))
        )
        return Stage(
            number=number,
            slug=slug,
            title=data["title"],
            outcome=data.get("outcome", ""),
            set=values,
            set_locs=locs,
            reversible=data.get("reversible", True),
            acceptance=acceptance,
            release_changes=self._release_changes(doc),
            file=shown,
            loc=doc.loc(()),
            reversible_loc=doc.key_loc(("reversible",)) if "reversible" in data else None,
            document=doc,
        )

    def _change_globs(
        self, doc: Document, path: DocPath, spec: dict[str, Any], key: str
    ) -> tuple[Template, ...]:
        found = []
        for j, text in enumerate(spec.get(key, ())):
            at = (*path, key, j)
            found.append(Template(text=text, parts=(text,), loc=doc.loc(at)))
            if re.search(r"\{[A-Za-z_][A-Za-z0-9_-]*\}", text):
                self.problem(
                    doc,
                    at,
                    "release_changes globs are applied as written, like a release's select, "
                    "without {axis} placeholders; write the value itself.",
                )
            elif not self.trusted:
                from . import globs as engine

                try:
                    engine.check_glob(text)
                except engine.PatternError as exc:
                    self.problem(doc, at, f"glob: {exc.message}", doc.text_loc(at, exc.column))
        return tuple(found)

    def _release_changes(self, doc: Document) -> tuple[ReleaseChange, ...]:
        out = []
        for i, spec in enumerate(doc.data.get("release_changes", ())):
            path: DocPath = ("release_changes", i)
            change = ReleaseChange(
                tag=spec["tag"],
                add=self._change_globs(doc, path, spec, "add"),
                drop=self._change_globs(doc, path, spec, "drop"),
                loc=doc.loc(path),
            )
            if not change.add and not change.drop:
                self.problem(
                    doc,
                    path,
                    f"release_changes for {change.tag} lists no `add` and no `drop` glob; "
                    "say what the stage adds to or drops from the release, or remove the entry.",
                )
            out.append(change)
        return tuple(out)

    def _kinds_in_use(self, migration: Migration) -> None:
        """A release's ``kinds`` that no artifact template has."""
        kinds = {t.kind for p in migration.producers.values() for t in p.artifacts}
        for release in migration.releases.values():
            for i, kind in enumerate(release.kinds or ()):
                if kind not in kinds:
                    hint = suggest(kind, kinds) or f"; kinds in use: {', '.join(sorted(kinds))}"
                    self.problem(
                        self.doc,
                        ("releases", release.id, "kinds", i),
                        f"no artifact template has kind {kind!r}: write a template as "
                        f"{{name: TEMPLATE, kind: {kind}}} to give it that kind{hint}",
                    )


def _flag_refs(tree: Any) -> Iterator[Any]:
    from .expr import And, Flag, Not, Or

    if isinstance(tree, Flag):
        yield tree
    elif isinstance(tree, Not):
        yield from _flag_refs(tree.operand)
    elif isinstance(tree, And | Or):
        for operand in tree.operands:
            yield from _flag_refs(operand)
