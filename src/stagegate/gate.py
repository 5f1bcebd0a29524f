"""verify-pr: the pull-request gate.

Reads migration.yaml and the stage files at the base and at the head straight
from git objects (no checkout of the user's work tree) and accepts the pull
request only if:

* ``one-step``: the stage moves by at most one;
* ``reversible``: a move back leaves only reversible stages (``rollback``'s rule);
* ``target-defined``: a stage moved to is defined at the base, so its acceptance
  can come from there (define a stage in one pull request, flip to it in another);
* ``past-stages-unchanged``: the stage files of stages 1..base stage have the same
  content (parsed, so formatting and comments may change) at both refs;
* ``target-unchanged``: a pull request that flips forward does not edit the stage it
  flips to (the flip is checked against the base's definition, which must be the one
  that becomes final);
* ``checks-pass``: the checks of the head's stage pass, taken from the BASE (its
  invariants and its definition of that stage, ``command`` and ``pytest`` checks and
  the stage's pytest folder included, and the files that decide how pytest runs those
  tests: conftest.py and pytest configuration from the top of the repository down,
  and the stages folder's own modules) and evaluated on the HEAD's producers,
  consumers and releases. So a pull request can never weaken the checks that judge
  it; the head's own checks are what ``stagegate check`` runs in the same workflow.

Checks that read files (``command``, ``pytest``, and any kind other than the pure
model checks) run in the work tree when it is the head commit with no tracked
changes; otherwise in a temporary ``git worktree`` of the head, removed afterwards.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from . import acceptance
from .checks._base import Context, Result
from .errors import InvalidInput, Loc, UsageError
from .gitrepo import GitSource, Repository, open_migration
from .load import STAGE_FILE, load
from .model import Check, Migration
from .words import counted
from .yamlsrc import Document, decode, json_path, parse

# Check kinds that look only at the model; every other kind may read the tree.
PURE_KINDS = frozenset(
    {"release-continuity", "inputs-satisfied", "single-source", "unique-artifacts", "tags-routed"}
)
MAX_LISTED = 20


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the gate and whether the pull request keeps it."""

    rule: str
    ok: bool
    message: str
    locations: tuple[Loc, ...] = ()
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Side:
    ref: str
    commit: str
    migration: Migration | None


@dataclass(slots=True)
class Verdict:
    file: str
    base: Side
    head: Side
    compared: str  # "direct", or "merge-base" when the base is not an ancestor of the head
    rules: list[Rule] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked_stage: int | None = None

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rules) and all(r.ok for r in self.results)

    @property
    def move(self) -> str:
        b, h = self.base.migration, self.head.migration
        if b is None or h is None or b.stage == h.stage:
            return "none"
        return "forward" if h.stage > b.stage else "back"


# --------------------------------------------------------------------------- loading


def _load_at(file: str, source: GitSource, label: str) -> Migration | None:
    """The migration at one ref; None when the file is not there."""
    try:
        source.read(Path(file).name)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        return load(file, source=source)
    except InvalidInput as error:
        raise UsageError(
            f"{file} at {label} ({source.commit[:12]}) is not valid:\n{error.message}"
        ) from None
    except UsageError as error:
        raise UsageError(f"at {label} ({source.commit[:12]}): {error.message}") from None


def _stage_doc(migration: Migration, number: int, source: GitSource) -> tuple[Document, list[str]]:
    """The parsed stage file and its lines (to quote them in messages)."""
    definition = migration.stage_def(number)
    assert definition is not None
    raw = source.read(f"{migration.stages_dir}/{Path(definition.file).name}")
    text = decode(raw, definition.file)
    return parse(text, definition.file), text.splitlines()


# --------------------------------------------------------------------------- comparing


DocPath = tuple[str | int, ...]


def differences(
    a: Any, b: Any, at_a: DocPath = (), at_b: DocPath = ()
) -> Iterator[tuple[DocPath, DocPath, str]]:
    """Where two plain-data values differ: (path in a, path in b, added|removed|changed).

    Lists are aligned (as a text diff aligns lines), so removing one check from an
    acceptance list reports that check, not every check after it."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b:
                yield (*at_a, key), at_b, "removed"
            else:
                yield from differences(a[key], b[key], (*at_a, key), (*at_b, key))
        for key in b:
            if key not in a:
                yield at_a, (*at_b, key), "added"
    elif isinstance(a, list) and isinstance(b, list):
        import difflib
        import json

        def keys(items: list[Any]) -> list[str]:
            return [json.dumps(item, sort_keys=True, default=str) for item in items]

        matcher = difflib.SequenceMatcher(a=keys(a), b=keys(b), autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            if op == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    yield from differences(a[i], b[j], (*at_a, i), (*at_b, j))
                continue
            for i in range(i1, i2):
                yield (*at_a, i), at_b, "removed"
            for j in range(j1, j2):
                yield at_a, (*at_b, j), "added"
    elif type(a) is not type(b) or a != b:
        yield at_a, at_b, "changed"


def _value_at(data: Any, path: DocPath) -> Any:
    for part in path:
        data = data[part]
    return data


def _compact(value: Any) -> str:
    """A value in YAML flow style, short enough for one message line."""
    if isinstance(value, dict):
        text = "{" + ", ".join(f"{k}: {_compact(v)}" for k, v in value.items()) + "}"
    elif isinstance(value, list):
        text = "[" + ", ".join(_compact(v) for v in value) + "]"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _stage_changes(
    numbers: range, base: Migration, head: Migration, base_src: GitSource, head_src: GitSource
) -> tuple[list[str], list[Loc]]:
    """How the stage files of ``numbers`` differ between base and head (parsed content),
    each as ``FILE:LINE: $.path kind: text``, with the head location to annotate."""
    changed: list[str] = []
    locations: list[Loc] = []
    for number in numbers:
        base_def = base.stage_def(number)
        assert base_def is not None
        head_def = head.stage_def(number)
        if head_def is None:
            changed.append(f"{base_def.file}: stage {number} was removed at the head")
            locations.append(head.stage_loc)
            continue
        base_doc, base_lines = _stage_doc(base, number, base_src)
        head_doc, head_lines = _stage_doc(head, number, head_src)
        for was_at, now_at, kind in differences(base_doc.data, head_doc.data):
            if kind == "removed":
                at = head_doc.loc(now_at)
                was = (
                    base_doc.key_loc(was_at)
                    if isinstance(was_at[-1], str)
                    else base_doc.loc(was_at)
                )
                changed.append(
                    f"{head_def.file}:{at.line}: {json_path(was_at)} removed: "
                    f"{_compact(_value_at(base_doc.data, was_at))} "
                    f"(base {base_def.file}:{was.line})"
                )
            else:
                keyed = kind == "added" and isinstance(now_at[-1], str)
                at = head_doc.key_loc(now_at) if keyed else head_doc.loc(now_at)
                text = _line_text(head_lines, at.line)
                before = ""
                if kind == "changed":
                    was = base_doc.loc(was_at)
                    before = f"; base line {was.line}: {_line_text(base_lines, was.line)}"
                changed.append(
                    f"{head_def.file}:{at.line}: {json_path(now_at)} {kind}: {text}{before}"
                )
            locations.append(at)
    return changed, locations


def _listed(
    changed: list[str], locations: list[Loc]
) -> tuple[str, tuple[Loc, ...], tuple[str, ...]]:
    """At most MAX_LISTED changes, and a sentence saying so when there are more."""
    more = (
        f" The first {MAX_LISTED} of {len(changed)} changes are listed."
        if len(changed) > MAX_LISTED
        else ""
    )
    return more, tuple(locations[:MAX_LISTED]), tuple(changed[:MAX_LISTED])


def _past_stages(
    base: Migration, head: Migration, base_src: GitSource, head_src: GitSource
) -> Rule:
    if base.stage == 0:
        return Rule("past-stages-unchanged", True, "the base is at stage 0; no stage is past yet")
    changed, locations = _stage_changes(range(1, base.stage + 1), base, head, base_src, head_src)
    upto = f"stages 1..{base.stage} (at or below the" if base.stage > 1 else "stage 1 (the"
    if not changed:
        return Rule("past-stages-unchanged", True, f"{upto} base stage) unchanged")
    more, shown, details = _listed(changed, locations)
    return Rule(
        "past-stages-unchanged",
        False,
        f"{upto} base stage) must not change: a past stage records what was rolled out. "
        "Revert these edits; to change what the migration does, change a later stage or add one."
        + more,
        shown,
        details,
    )


def _target_unchanged(
    base: Migration, head: Migration, base_src: GitSource, head_src: GitSource
) -> Rule:
    """A flip may not edit the stage it flips to: once merged, that definition is past."""
    target = head.stage
    changed, locations = _stage_changes(range(target, target + 1), base, head, base_src, head_src)
    definition = head.stage_def(target)
    file = definition.file if definition else "?"
    if not changed:
        return Rule("target-unchanged", True, f"stage {target} ({file}) is flipped to as defined")
    more, shown, details = _listed(changed, locations)
    return Rule(
        "target-unchanged",
        False,
        f"this pull request flips to stage {target} and also edits its definition ({file}); "
        "the gate checks the flip against the base's definition, and once merged the edited one "
        "would be final without ever being checked. Change the stage in a pull request of its "
        "own, then flip." + more,
        shown,
        details,
    )


def _check_key(check: Check) -> tuple[str, str]:
    return check.kind, repr(sorted(check.args.items()))


def _invariant_notes(base: Migration, head: Migration) -> list[str]:
    if [_check_key(c) for c in base.invariants] == [_check_key(c) for c in head.invariants]:
        return []
    return [
        f"this pull request changes the invariants ({head.file}); the gate used the base's, "
        "the head's take effect once merged (`stagegate check` runs them on this pull request)."
    ]


# --------------------------------------------------------------------------- checks


def _object_id(source: GitSource, rel: str) -> str | None:
    try:
        return source.object_id(rel)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _pytest_overlays(
    base: Migration,
    head: Migration,
    stage: int,
    checks: Sequence[Check],
    base_src: GitSource,
    head_src: GitSource,
) -> tuple[dict[str, dict[str, bytes] | None], list[str]]:
    """Stage test folders whose head content differs from the base's: head path -> base files."""
    from .checks.pytest_check import target

    overlays: dict[str, dict[str, bytes] | None] = {}
    notes: list[str] = []
    for check in checks:
        if check.kind != "pytest":
            continue
        head_rel = target(Context(head, stage, head.root), check)
        base_rel = target(Context(base, stage, base.root), check)
        if head_rel is None or base_rel is None:
            continue
        base_id, head_id = _object_id(base_src, base_rel), _object_id(head_src, head_rel)
        if base_id == head_id:
            continue
        try:
            overlays[head_rel] = base_src.files(base_rel)
        except (FileNotFoundError, NotADirectoryError):
            overlays[head_rel] = None
            if head_id is not None:
                notes.append(
                    f"{head_rel}/ is new in this pull request; the gate runs the base's tests of "
                    f"stage {stage}, so land them in a pull request before the flip."
                )
        else:
            if head_id is not None:
                notes.append(
                    f"{head_rel}/ differs at the head; the gate ran the base's version of it."
                )
    return overlays, notes


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _apply(root: Path, overlays: dict[str, dict[str, bytes] | None]) -> None:
    """Replace each stage test folder (paths from ``root``) by the base's files, or
    remove it (None); never a folder outside ``root`` or ``root`` itself."""
    top = root.resolve()
    for rel, files in overlays.items():
        folder = root / rel
        if top not in folder.resolve().parents:
            continue
        _remove(folder)
        _apply_files(folder, dict(files or {}))


# What decides how pytest runs the base's stage tests, besides the tests themselves:
# a conftest.py hook can turn any failure into a pass, an ini file's addopts can load
# a plugin, and the modules beside the stage folders are importable by the tests
# (stages/ is on sys.path through its conftest.py).
_PYTEST_FILES = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
_STAGE_DIR = re.compile(r"[0-9]{2,}-[a-z0-9][a-z0-9-]*")


def _blob(source: GitSource, path: PurePosixPath) -> bytes | None:
    try:
        return source.read(path.as_posix())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _pytest_support(
    repo: Repository,
    base: Migration,
    stage: int,
    checks: Sequence[Check],
    shas: tuple[str, str],
    prefix: PurePosixPath,
) -> tuple[dict[str, bytes | None], list[str]]:
    """The files of the head, other than the stage test folders, that could change how the
    base's stage tests run, with the base's content (None: the base lacks the file).

    Keys are paths from the top of the repository: every conftest.py and pytest
    configuration file from the top down to the stage folders, and everything in the
    stages folder but the stage files and the stage folders."""
    from .checks.pytest_check import target

    targets = [target(Context(base, stage, base.root), c) for c in checks if c.kind == "pytest"]
    if not any(targets):
        return {}, []
    base_top, head_top = repo.source(shas[0]), repo.source(shas[1])
    stages = prefix / base.stages_dir
    wanted: set[PurePosixPath] = set()
    for folder in {stages, *(prefix / t for t in targets if t)}:
        for directory in (folder, *folder.parents):
            wanted |= {directory / name for name in _PYTEST_FILES}
    for source in (base_top, head_top):
        try:
            entries = source.listdir(stages.as_posix())
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name, is_dir in entries:
            if STAGE_FILE.fullmatch(name) or (is_dir and _STAGE_DIR.fullmatch(name)):
                continue
            if is_dir:
                wanted |= {stages / name / rel for rel in source.files((stages / name).as_posix())}
            else:
                wanted.add(stages / name)
    differ: dict[str, bytes | None] = {}
    for path in sorted(wanted):
        content = _blob(base_top, path)
        if content != _blob(head_top, path):
            differ[path.as_posix()] = content
    notes = []
    if differ:
        notes.append(
            f"{', '.join(sorted(differ))} {'differs' if len(differ) == 1 else 'differ'} at the "
            "head; the stage tests ran with the base's version (it decides how pytest runs "
            "them)."
        )
    return differ, notes


def _apply_files(top: Path, files: dict[str, bytes | None]) -> None:
    """Write (or, for None, remove) ``files``, paths from ``top``, never outside it."""
    real_top = top.resolve()
    for rel, data in files.items():
        path = top / rel
        if real_top not in path.parent.resolve().parents and path.parent.resolve() != real_top:
            continue
        _remove(path)
        if data is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


@contextmanager
def _tree(
    repo: Repository,
    head_sha: str,
    prefix: PurePosixPath,
    overlays: dict[str, dict[str, bytes] | None],
    notes: list[str],
    support: dict[str, bytes | None] | None = None,
) -> Iterator[Path]:
    """The folder of the migration in a tree holding the head (see the module doc)."""
    if not overlays and not support and repo.head() == head_sha and not repo.tracked_changes():
        yield repo.root / prefix
        return
    with repo.checkout_elsewhere(head_sha) as tree:
        root = tree / prefix
        _apply(root, overlays)
        _apply_files(tree, support or {})
        notes.append(
            "checks that read files ran in a temporary checkout of the head"
            + (" with the base's stage tests" if overlays else "")
            + " (the work tree is not the head, or has changes)."
        )
        yield root


def _run_checks(
    repo: Repository,
    verdict: Verdict,
    base: Migration,
    head: Migration,
    stage: int,
    checks: Sequence[Check],
    base_src: GitSource,
    head_src: GitSource,
    prefix: PurePosixPath,
) -> None:
    verdict.checked_stage = stage
    if all(c.kind in PURE_KINDS for c in checks):
        verdict.results = acceptance.run_checks(base, stage, checks, evaluated_at=head)
        return
    overlays, notes = _pytest_overlays(base, head, stage, checks, base_src, head_src)
    support, more = _pytest_support(
        repo, base, stage, checks, (base_src.commit, verdict.head.commit), prefix
    )
    verdict.notes += notes + more
    with _tree(repo, verdict.head.commit, prefix, overlays, verdict.notes, support) as root:
        verdict.results = acceptance.run_checks(base, stage, checks, evaluated_at=head, root=root)


# --------------------------------------------------------------------------- the gate


def verify(file: str, base_ref: str, head_ref: str = "HEAD") -> Verdict:
    """Judge the change of the migration from ``base_ref`` to ``head_ref``."""
    repo, rel = open_migration(file)
    prefix = rel.parent
    base_sha = repo.resolve(base_ref)
    head_sha = repo.resolve(head_ref)
    compared = "direct"
    notes: list[str] = []
    if base_sha != head_sha and not repo.is_ancestor(base_sha, head_sha):
        base_sha = repo.merge_base(base_sha, head_sha, shown=(base_ref, head_ref))
        compared = "merge-base"
        notes.append(
            f"{base_ref} is not an ancestor of {head_ref}; compared with their merge base "
            f"{base_sha[:12]}, as GitHub's pull-request diff does."
        )
    base_src, head_src = repo.source(base_sha, prefix), repo.source(head_sha, prefix)
    base = _load_at(file, base_src, base_ref)
    head = _load_at(file, head_src, head_ref)
    verdict = Verdict(
        file=file,
        base=Side(base_ref, base_sha, base),
        head=Side(head_ref, head_sha, head),
        compared=compared,
        notes=notes,
    )
    if base is None and head is None:
        raise UsageError(
            f"{rel} exists neither at {base_ref} nor at {head_ref}; pass the migration's "
            "path with -f."
        )
    if head is None:
        assert base is not None
        finished = base.stage == base.last
        verdict.rules.append(
            Rule(
                "migration-kept",
                finished,
                f"{rel} is removed; the migration was finished at the base (stage {base.stage} "
                f"of {base.last})"
                if finished
                else f"{rel} is removed while the migration is at stage {base.stage} of "
                f"{base.last}; finish it (advance to stage {base.last}) before removing it.",
            )
        )
        return verdict
    if base is None:
        _new_migration(verdict, head)
        return verdict
    _judge(repo, verdict, base, head, base_src, head_src, prefix)
    return verdict


def _new_migration(verdict: Verdict, head: Migration) -> None:
    starts = head.stage == 0
    verdict.rules.append(
        Rule(
            "new-migration-at-stage-0",
            starts,
            f"{head.file} is new in this pull request and starts at stage 0"
            if starts
            else f"{head.file} is new in this pull request at stage {head.stage}; a new migration "
            "starts at `stage: 0`, and each later stage is flipped in its own pull request.",
            () if starts else (head.stage_loc,),
        )
    )
    pure = [c for c in head.invariants if c.kind in PURE_KINDS]
    skipped = len(head.invariants) - len(pure)
    verdict.checked_stage = 0
    verdict.results = acceptance.run_checks(head, 0, pure)
    verdict.rules.append(_checks_rule(verdict.results, 0))
    if skipped:
        verdict.notes.append(
            f"{counted(skipped, 'invariant')} not run (checks that run programs or read "
            "files): with no base, they would come from the pull request itself."
        )


def _judge(
    repo: Repository,
    verdict: Verdict,
    base: Migration,
    head: Migration,
    base_src: GitSource,
    head_src: GitSource,
    prefix: PurePosixPath,
) -> None:
    a, b = base.stage, head.stage
    step = b - a
    here = (head.stage_loc,)
    if abs(step) <= 1:
        moved = {0: "stays at", 1: "moves forward by one:", -1: "moves back by one:"}[step]
        verdict.rules.append(
            Rule("one-step", True, f"the stage {moved} {a}" + (f" -> {b}" if step else ""))
        )
    else:
        skipped = range(a + 1, b) if step > 0 else range(b + 1, a)
        verdict.rules.append(
            Rule(
                "one-step",
                False,
                f"the stage moves from {a} to {b}, skipping stage"
                f"{'s' if len(skipped) > 1 else ''} {', '.join(map(str, skipped))}; move one stage "
                "per pull request (`stagegate advance` moves one; each flip is verified on its "
                f"own). At {head.stage_loc}.",
                here,
            )
        )
    if step < 0:
        from .flip import irreversible_reason

        reasons = [
            reason
            for s in range(a, b, -1)
            if (reason := irreversible_reason(base, s, base_src)) is not None
        ]
        verdict.rules.append(
            Rule(
                "reversible",
                not reasons,
                "the stages left behind are reversible"
                if not reasons
                else "the stage moves back past a stage that is not reversible.",
                here if reasons else (),
                tuple(reasons),
            )
        )
    if step > 0:
        defined = b <= base.last
        target_def = head.stage_def(b)
        verdict.rules.append(
            Rule(
                "target-defined",
                defined,
                f"stage {b} is defined at the base, so its checks come from there"
                if defined
                else f"stage {b} ({target_def.file if target_def else '?'}) is new in this pull "
                "request; its checks must come from the base, so add the stage in a pull request "
                "of its own and flip to it in the next one.",
                () if defined else ((target_def.loc,) if target_def else here),
            )
        )
    verdict.rules.append(_past_stages(base, head, base_src, head_src))
    if step > 0 and b <= base.last:
        verdict.rules.append(_target_unchanged(base, head, base_src, head_src))
    verdict.notes += _invariant_notes(base, head)
    if b > base.last:
        verdict.notes.append(f"the checks of stage {b} were not run: the base does not define it.")
        return
    checks = acceptance.checks_at(base, b)
    _run_checks(repo, verdict, base, head, b, checks, base_src, head_src, prefix)
    verdict.rules.append(_checks_rule(verdict.results, b))


def _checks_rule(results: Sequence[Result], stage: int) -> Rule:
    failed = [r for r in results if not r.ok]
    if not failed:
        return Rule(
            "checks-pass",
            True,
            f"the {counted(len(results), 'check')} of stage {stage} (the base's, on the head) "
            + ("passes" if len(results) == 1 else "pass"),
        )
    return Rule(
        "checks-pass",
        False,
        f"{len(failed)} of {counted(len(results), 'check')} of stage {stage} (the base's, on the "
        "head) failed; see the results below.",
        tuple(r.loc for r in failed if r.loc is not None),
        tuple(r.label for r in failed),
    )
