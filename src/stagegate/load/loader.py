"""migration.yaml and stage files -> located data -> schema -> meaning -> model.

``load`` is the entry: every problem of every file is collected and reported at once,
each as ``FILE:LINE:COL: $.json.path: message``. Reading the stage folder is here; the
meaning checks and the records are ``load.build``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from stagegate.errors import InvalidInput, Loc, Problem, UsageError
from stagegate.load.build import Builder, check_runs_problem
from stagegate.load.cache import ValidCache
from stagegate.load.rules import Located, Rules
from stagegate.load.schema import dedupe, schema_problems, shared_schema, validator_class
from stagegate.load.sources import (
    MAX_STAGES,
    MAX_TOTAL_BYTES,
    STAGE_FILE,
    FileSource,
    Source,
    StageFile,
)
from stagegate.load.yamlsrc import Document, keep, read, remembered
from stagegate.model import (
    Migration,
)
from stagegate.records import field, record, replace

_LOOKS_LIKE_STAGE = re.compile(r"[0-9]+[-_].*\.ya?ml")


def stage_file_name(name: str) -> str:
    """The stage file name closest to a misnamed ``name``: ``1_Build Wheels.yml`` is
    ``01-build-wheels.yaml``."""
    digits = re.match(r"[0-9]+", name)
    number = int(digits.group()) if digits else 1
    stem = re.sub(r"\.ya?ml$", "", name[digits.end() if digits else 0 :])
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "stage"
    return f"{number:02d}-{slug}.yaml"


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
    # read lately in this process: neither the cache nor the parser is asked
    doc = remembered(raw, shown) if MEMO_LOADS > 0 else None
    if doc is not None:
        return doc, raw
    doc = cache.document(raw, shown)
    if doc is not None:
        if MEMO_LOADS > 0:
            keep(raw, shown, doc)
        return doc, raw
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
    does not stop the meaning checks of the parts that are well formed.

    A migration loaded before in this process is built again only where its source
    answers differently (``_Loaded``): a command that loads it twice, and a process that
    runs many commands (a test session, an API user), build it once per content."""
    root = Path(path).parent
    if source is None:
        source = FileSource(root if str(root) else Path("."))
    key = (str(path), type(source))
    known = _LOADED.get(key) if not os.environ.get("STAGEGATE_NO_CACHE") else None
    if known is not None and known.holds(source, rules):
        return known.again(rules)
    if MEMO_LOADS < 1:
        return _load_afresh(path, source, rules)
    recording = _Recording(source)
    migration = _load_afresh(path, recording, rules)
    _LOADED.pop(key, None)  # the newest last: the oldest goes first
    if recording.size > MEMO_BYTES:
        return migration
    while len(_LOADED) >= MEMO_LOADS:
        del _LOADED[next(iter(_LOADED))]
    _LOADED[key] = _Loaded(rules, _limits(), tuple(recording.answers), migration)
    return migration


MEMO_LOADS = 16
"""Migrations ``load`` keeps (by the file as shown and the kind of source); when it is
full, the one loaded longest ago goes. 0: none, and no file's document read lately is
taken either (every load reads the cache folder)."""
MEMO_BYTES = 1024 * 1024
"""Files larger than this together are not kept: what they build is large, and a
migration that large is rarely loaded twice."""


def _limits() -> tuple[int, ...]:
    """The limits a load holds the files to, as they are now (a test may lower one)."""
    from stagegate.load import build, yamlsrc

    runs: int = vars(build)["MAX_CHECK_RUNS"]  # the name build reads (imported there)
    return (MAX_STAGES, MAX_TOTAL_BYTES, runs, yamlsrc.MAX_BYTES, yamlsrc.MAX_DEPTH)


_Answer = tuple[str, str, object]
"""One question a load asked its source: (method, path, what it answered or raised)."""


class _Recording:
    """A ``Source`` that keeps every answer of the source it stands for, in order: the
    whole input of a load (the loader reads nothing else)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.answers: list[_Answer] = []
        self.size = 0
        """The bytes of the files read."""

    def read(self, rel: str) -> bytes:
        raw: bytes = self._ask("read", rel)
        self.size += len(raw)
        return raw

    def listdir(self, rel: str) -> list[tuple[str, bool]]:
        entries: list[tuple[str, bool]] = self._ask("listdir", rel)
        return entries

    def escapes(self, rel: str) -> bool:
        escapes: bool = self._ask("escapes", rel)
        return escapes

    def _ask(self, method: str, rel: str) -> Any:
        answer = _answer(self.source, method, rel)
        self.answers.append((method, rel, answer))
        if isinstance(answer, _Raised):
            raise answer.error
        return answer


@record
class _Raised:
    """An answer that was an error (a missing file, a file where a folder should be):
    equal to another of the same type and arguments."""

    kind: type[OSError]
    args: tuple[object, ...]
    error: OSError = field(compare=False)


def _answer(source: Source, method: str, rel: str) -> object:
    try:
        answer: object = getattr(source, method)(rel)
    except OSError as exc:
        return _Raised(type(exc), exc.args, exc)
    return answer


@record
class _Loaded:
    """A migration ``load`` built, and everything it was built from: the rules, the
    limits, and each answer of its source."""

    rules: Rules = field(compare=False)
    limits: tuple[int, ...]
    answers: tuple[_Answer, ...]
    migration: Migration

    def holds(self, source: Source, rules: Rules) -> bool:
        """Whether a load now would build the same migration: the same rules and limits,
        and the source answers each question as before (asked again in order; the load
        asks nothing else and decides nothing from anything else)."""
        if rules is not self.rules or _limits() != self.limits:
            return False
        return all(_answer(source, method, rel) == was for method, rel, was in self.answers)

    def again(self, rules: Rules) -> Migration:
        """A migration of its own (compared by identity: what is kept per load starts
        afresh), after the checks of more than the files' bytes, as on a cache hit
        (``Rules.uncached``); the records inside are shared (immutable)."""
        migration = replace(self.migration)
        stages = tuple(s.document for s in migration.stages if s.document is not None)
        assert migration.document is not None and len(stages) == len(migration.stages)
        files = Located(migration=migration.document, stages=stages)
        problems = [p for validator in rules.uncached for p in validator(migration, files)]
        if problems:
            raise InvalidInput(problems)
        return migration


_LOADED: dict[tuple[str, type], _Loaded] = {}


def _load_afresh(path: str | Path, source: Source, rules: Rules) -> Migration:
    """``load``: the files read from ``source``, parsed, validated and built."""
    shown = str(path)
    file_path = Path(path)
    root = file_path.parent
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
            problems += schema_problems("stage", stage_file.doc, rules)[0]
        raise InvalidInput(dedupe([*unparsed, *problems]))
    too_many = check_runs_problem(doc, stage_docs)
    if too_many is not None:
        raise InvalidInput([*problems, too_many])
    # by name, not as shown: the same files pass wherever the migration is shown from
    # (a stage test's process names it by its absolute path)
    key = cache.key([(file_path.name, raw), *((Path(f.shown).name, f.raw) for f in stage_docs)])
    trusted = not problems and cache.known(key)
    valid: set[tuple[str, str]] = set()
    """(kind, file) of each file the schema found nothing wrong in."""
    if not trusted:
        for kind, each in (("migration", doc), *(("stage", f.doc) for f in stage_docs)):
            found, whole = schema_problems(kind, each, rules)
            problems += found
            if whole:
                valid.add((kind, each.file))
    if problems:
        meaning = _meaning_despite(doc, stage_docs, root, stages_dir, rules, valid)
        raise InvalidInput(dedupe([*problems, *meaning]))
    builder = Builder(doc, stage_docs, root, stages_dir, rules, trusted=trusted)
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
    kind: str, data: Any, rules: Rules, stage: int = 0, *, valid: bool = False
) -> tuple[Any, dict[str, set[str]]] | None:
    """``data`` without the parts the schema refuses, and the items cut out (by section).

    Each refused value is removed where it stands when its mapping may go without it;
    an element of a list takes the list with it, a required key its item (a flag or an
    axis is kept as a stub, so that what names it finds it). ``None`` when the file's
    top level cannot be made valid this way: its meaning is not checked. ``valid``: the
    schema found nothing wrong in ``data`` already (it is not validated again)."""
    import copy

    data = copy.deepcopy(data)
    if not isinstance(data, dict):
        return None
    dropped: dict[str, set[str]] = {section: set() for section in _ITEM_SECTIONS}
    if valid:
        return data, dropped
    validator = validator_class()(shared_schema(kind, rules)[0])
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
    doc: Document,
    stage_docs: list[StageFile],
    root: Path,
    stages_dir: Any,
    rules: Rules,
    valid: set[tuple[str, str]],
) -> list[Problem]:
    """The meaning problems of the well-formed parts of files that have schema problems.

    Found on copies with the refused parts cut out, so that one problem never hides
    another; the schema problems themselves are reported by the caller. ``valid``:
    (kind, file) of the files the schema found nothing wrong in (taken whole)."""
    kept = _well_formed("migration", doc.data, rules, valid=("migration", doc.file) in valid)
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
        whole = ("stage", stage_file.doc.file) in valid
        stage_kept = _well_formed(
            "stage", stage_file.doc.data, rules, stage_file.number, valid=whole
        )
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
    builder = Builder(pruned, pruned_stages, root, stages_dir, rules)
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
                        f"the .yaml ending); rename this file to {stage_file_name(name)}.",
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
