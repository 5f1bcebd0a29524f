"""verify-pr: the pull-request gate.

Reads migration.yaml and the stage files at the base and at the head straight
from git objects (no checkout of the user's work tree). Each rule below is one
function returning an immutable ``Rule``; the pull request is accepted only if all
hold:

* ``one-step``: the stage moves by at most one;
* ``reversible``: a move back leaves only reversible stages (``rollback``'s rule);
* ``target-defined``: a stage moved to is defined at the base, so its acceptance
  can come from there (define a stage in one pull request, flip to it in another);
* ``past-stages-unchanged``: the stage files of stages 1..base stage have the same
  content (parsed, so formatting and comments may change) at both refs;
* ``target-unchanged``: a pull request that flips forward does not edit the stage it
  flips to (the flip is checked against the base's definition, which must be the one
  that becomes final);
* ``flag-values-unchanged``, ``flag-readers-unchanged``, ``item-states-unchanged``: a
  flag's values, and the `env` and `references` CI reads it by, and each item's state are
  the base's at every stage the base has reached (and at the target);
* ``releases-as-declared``: a pull request that flips forward changes what the real
  release jobs ship (their upload contexts, read from the workflows at both commits as
  ``stagegate continuity`` reads them) only as the target's ``release_changes`` (the
  base's) declare (``releases_declared``);
* ``checks-pass``: the checks of the head's stage pass, taken from the BASE and
  evaluated on the HEAD's producers, consumers and releases, measured against the
  base's data (``Context.baseline``: continuity baselines of stages the base has
  reached, audit settings and legacy entries), pytest checks running the base's test
  files from a copy outside the head's tree (``overlay``). So a pull request can never
  weaken the checks that judge it; the head's own checks are what ``stagegate check``
  runs in the same workflow.

The checks always come from ``--base`` itself. When it is not an ancestor of the
head, what the pull request *changed* (the stage move, the edits of stage files) is
what differs from the merge base, as in GitHub's pull-request diff.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from stagegate.checks import reading, runner
from stagegate.checks.base import Result
from stagegate.engine.resolve import flag_values
from stagegate.errors import Loc, UsageError
from stagegate.git import overlay
from stagegate.git.objects import GitSource
from stagegate.git.repo import Repository, open_migration
from stagegate.load.yamlsrc import Document, decode, json_path
from stagegate.model import Check, Flag, Migration
from stagegate.records import record
from stagegate.validation import load_at
from stagegate.words import counted

MAX_LISTED = 20


@record
class Rule:
    """One rule of the gate and whether the pull request keeps it."""

    rule: str
    ok: bool
    message: str
    locations: tuple[Loc, ...] = ()
    details: tuple[str, ...] = ()


@record
class Side:
    ref: str
    commit: str
    migration: Migration | None


@record
class Verdict:
    file: str
    base: Side
    head: Side
    compared: str  # "direct", or "merge-base" when the base is not an ancestor of the head
    rules: tuple[Rule, ...] = ()
    results: tuple[Result, ...] = ()
    notes: tuple[str, ...] = ()
    checked_stage: int | None = None
    since: Side | None = None  # the merge base, when the base is not an ancestor of the head

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rules) and all(r.ok for r in self.results)

    @property
    def move(self) -> str:
        """How the pull request moves the stage (from the merge base, where compared there)."""
        b, h = (self.since or self.base).migration, self.head.migration
        if b is None or h is None or b.stage == h.stage:
            return "none"
        return "forward" if h.stage > b.stage else "back"


@record
class Refs:
    """The three commits a judgement reads: the base that judges, the commit the pull
    request's changes are measured from (the base, or the merge base), the head."""

    judge: Migration
    since: Migration
    head: Migration
    since_src: GitSource
    head_src: GitSource


# --------------------------------------------------------------------------- loading


def _stage_doc(migration: Migration, number: int) -> Document:
    """The stage file as ``load`` read it."""
    definition = migration.stage_def(number)
    assert definition is not None and definition.document is not None
    return definition.document


def _stage_lines(migration: Migration, number: int, source: GitSource) -> list[str]:
    """The stage file's lines, to quote them in messages (its text, not parsed again)."""
    definition = migration.stage_def(number)
    assert definition is not None
    raw = source.read(f"{migration.stages_dir}/{Path(definition.file).name}")
    return decode(raw, definition.file).splitlines()


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
    numbers: Sequence[int],
    base: Migration,
    head: Migration,
    base_src: GitSource,
    head_src: GitSource,
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
        base_doc, head_doc = _stage_doc(base, number), _stage_doc(head, number)
        base_lines: list[str] | None = None
        head_lines: list[str] | None = None
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
                if head_lines is None:
                    head_lines = _stage_lines(head, number, head_src)
                text = _line_text(head_lines, at.line)
                before = ""
                if kind == "changed":
                    was = base_doc.loc(was_at)
                    if base_lines is None:
                        base_lines = _stage_lines(base, number, base_src)
                    before = f"; base line {was.line}: {_line_text(base_lines, was.line)}"
                changed.append(
                    f"{head_def.file}:{at.line}: {json_path(now_at)} {kind}: {text}{before}"
                )
            locations.append(at)
    return changed, locations


def _unchanged_rule(
    rule: str, changed: list[str], locations: list[Loc], kept: str, refused: str
) -> Rule:
    """A rule that holds when nothing ``changed``; else at most MAX_LISTED changes, and
    a sentence saying so when there are more."""
    if not changed:
        return Rule(rule, True, kept)
    more = (
        f" The first {MAX_LISTED} of {len(changed)} changes are listed."
        if len(changed) > MAX_LISTED
        else ""
    )
    return Rule(
        rule, False, refused + more, tuple(locations[:MAX_LISTED]), tuple(changed[:MAX_LISTED])
    )


# --------------------------------------------------------------------------- the rules


def one_step(since: Migration, head: Migration) -> Rule:
    a, b = since.stage, head.stage
    step = b - a
    if abs(step) <= 1:
        moved = {0: "stays at", 1: "moves forward by one:", -1: "moves back by one:"}[step]
        return Rule("one-step", True, f"the stage {moved} {a}" + (f" -> {b}" if step else ""))
    skipped = range(a + 1, b) if step > 0 else range(b + 1, a)
    return Rule(
        "one-step",
        False,
        f"the stage moves from {a} to {b}, skipping stage"
        f"{'s' if len(skipped) > 1 else ''} {', '.join(map(str, skipped))}; move one stage "
        "per pull request (`stagegate advance` moves one; each flip is verified on its "
        f"own). At {head.stage_loc}.",
        (head.stage_loc,),
    )


def reversible(refs: Refs) -> Rule | None:
    """Moving back leaves only stages the base says are reversible."""
    a, b = refs.since.stage, refs.head.stage
    if b >= a:
        return None
    from stagegate.commands.flip import irreversible_reason

    reasons = [
        reason
        for s in range(a, b, -1)
        if (reason := irreversible_reason(refs.judge, s)) is not None
    ]
    return Rule(
        "reversible",
        not reasons,
        "the stages left behind are reversible"
        if not reasons
        else "the stage moves back past a stage that is not reversible.",
        (refs.head.stage_loc,) if reasons else (),
        tuple(reasons),
    )


def target_defined(refs: Refs) -> Rule | None:
    b, head = refs.head.stage, refs.head
    if b <= refs.since.stage:
        return None
    defined = b <= refs.judge.last
    target_def = head.stage_def(b)
    return Rule(
        "target-defined",
        defined,
        f"stage {b} is defined at the base, so its checks come from there"
        if defined
        else f"stage {b} ({target_def.file if target_def else '?'}) is new in this pull "
        "request; its checks must come from the base, so add the stage in a pull request "
        "of its own and flip to it in the next one.",
        () if defined else ((target_def.loc,) if target_def else (head.stage_loc,)),
    )


def past_stages_unchanged(refs: Refs) -> Rule:
    """The stages the base has rolled out are as the pull request found them."""
    upto = max(refs.judge.stage, refs.since.stage)
    numbers = [n for n in range(1, upto + 1) if refs.since.stage_def(n) is not None]
    if not numbers:
        return Rule("past-stages-unchanged", True, "the base is at stage 0; no stage is past yet")
    changed, locations = _stage_changes(
        numbers, refs.since, refs.head, refs.since_src, refs.head_src
    )
    last = numbers[-1]
    upto_text = f"stages 1..{last} (at or below the" if last > 1 else "stage 1 (the"
    return _unchanged_rule(
        "past-stages-unchanged",
        changed,
        locations,
        f"{upto_text} base stage) unchanged",
        f"{upto_text} base stage) must not change: a past stage records what was rolled out. "
        "Revert these edits; to change what the migration does, change a later stage or add one.",
    )


def target_unchanged(refs: Refs) -> Rule | None:
    """A flip may not edit the stage it flips to: once merged, that definition is past."""
    target = refs.head.stage
    if target <= refs.since.stage or target > refs.judge.last:
        return None
    if refs.since.stage_def(target) is None:
        return None
    changed, locations = _stage_changes(
        [target], refs.since, refs.head, refs.since_src, refs.head_src
    )
    definition = refs.head.stage_def(target)
    file = definition.file if definition else "?"
    return _unchanged_rule(
        "target-unchanged",
        changed,
        locations,
        f"stage {target} ({file}) is flipped to as defined",
        f"this pull request flips to stage {target} and also edits its definition ({file}); "
        "the gate checks the flip against the base's definition, and once merged the edited one "
        "would be final without ever being checked. Change the stage in a pull request of its "
        "own, then flip.",
    )


def _reached(refs: Refs) -> int:
    """The last stage the base has rolled out (or the pull request found rolled out)."""
    return max(refs.judge.stage, refs.since.stage)


def _onoff(value: bool) -> str:
    return "true" if value else "false"


def flag_values_unchanged(refs: Refs) -> Rule:
    """The flag values at every stage the base has reached, and at the target but for the
    target's own ``set``, are the base's.

    A flag's ``default`` is stage 0, and every stage builds on it: a pull request that
    changes a default (or removes a flag, or moves a ``set``) moves what a later stage
    does into a stage already rolled out (or into the target), where the later stage's
    checks never ran."""
    since, head = refs.since, refs.head
    reached = min(_reached(refs), since.last)
    stages = list(range(reached + 1))
    target = head.stage if reached < head.stage <= since.last else None
    own: frozenset[str] = frozenset()
    if target is not None:
        definition = since.stage_def(target)
        own = frozenset(definition.set) if definition is not None else frozenset()
        stages.append(target)
    base_values = {s: flag_values(since, s) for s in stages}
    head_values = {s: flag_values(head, s) for s in stages}
    changed: list[str] = []
    locations: list[Loc] = []
    for name in since.flags:
        flag = head.flags.get(name)
        if flag is None:
            changed.append(
                f"{head.file}: flag {name} is removed at the head; it has a value at "
                f"every stage (the base: {_onoff(base_values[0][name])} at stage 0)"
            )
            locations.append(head.stage_loc)
            continue
        moved = [
            f"stage {s}: {_onoff(head_values[s][name])} (the base: {_onoff(base_values[s][name])})"
            for s in stages
            if not (s == target and name in own) and head_values[s][name] != base_values[s][name]
        ]
        if moved:
            changed.append(f"{flag.loc.at}: flag {name} at " + ", ".join(moved))
            locations.append(flag.loc)
    shown = ", ".join(map(str, range(reached + 1)))
    upto = f"stage{'s' if reached else ''} {shown}" + (
        f" (and at stage {target}, the target, but for the flags it sets)"
        if target is not None
        else ""
    )
    return _unchanged_rule(
        "flag-values-unchanged",
        changed,
        locations,
        f"every flag has the base's value at {upto}",
        f"the flag values at {upto} must be the base's: a flag's default is stage 0 and every "
        "stage builds on it, so this edit moves what a later stage does into a stage whose "
        "checks never ran for it. Revert it; to change a flag from now on, set it in a stage "
        "the base has not reached.",
    )


def _readers(flag: Flag) -> dict[str, str]:
    """What CI reads a flag by, field -> how it is shown: its `env`, its `references`."""
    refs = sorted(
        repr(r) if isinstance(r, str) else f"{{regex: {r.regex!r}}}" for r in flag.references
    )
    return {
        "env": flag.env if flag.env is not None else "(none)",
        "references": f"[{', '.join(refs)}]",
    }


def _read_at(migration: Migration, name: str, stages: Sequence[int]) -> list[int]:
    """The stages of ``stages`` at which CI reads flag ``name`` (the migration's): where
    it is on, or where it has been set (a stage up to that one sets it). A flag off at a
    stage and untouched up to it is read nowhere yet: every reader sees it off there."""
    out = []
    for stage in stages:
        touched = any(name in d.set for d in migration.stages[:stage])
        if touched or flag_values(migration, stage)[name]:
            out.append(stage)
    return out


def flag_readers_unchanged(refs: Refs) -> Rule | None:
    """Each flag of the base that CI reads at a stage the base has reached (or at the
    target) keeps its `env` and `references`: swapping two flags' `env` names hands the
    workflows that read one the values of the other, a later stage's among them, with
    every flag's values unchanged by name. None where no flag of the base has either."""
    since, head = refs.since, refs.head
    if not any(f.env is not None or f.references for f in since.flags.values()):
        return None
    reached = min(_reached(refs), since.last)
    stages = list(range(reached + 1))
    target = head.stage if reached < head.stage <= since.last else None
    if target is not None:
        stages.append(target)
    changed: list[str] = []
    locations: list[Loc] = []
    for name, flag in since.flags.items():
        now = head.flags.get(name)
        read = _read_at(since, name, stages)
        if now is None or not read:
            continue  # removed (flag-values-unchanged says so) or not read yet
        was, new = _readers(flag), _readers(now)
        for field in ("env", "references"):
            if was[field] != new[field]:
                doc = head.document
                at = doc.loc(("flags", name, field)) if doc is not None else now.loc
                changed.append(
                    f"{at.at}: flag {name} `{field}`: {new[field]} (the base: "
                    f"{was[field]}); read at stage{'s' if len(read) > 1 else ''} "
                    + ", ".join(map(str, read))
                )
                locations.append(at)
    upto = f"stage{'s' if reached else ''} {', '.join(map(str, range(reached + 1)))}" + (
        f" (and at stage {target}, the target)" if target is not None else ""
    )
    return _unchanged_rule(
        "flag-readers-unchanged",
        changed,
        locations,
        f"every flag read at {upto} keeps the base's `env` and `references`",
        f"a flag read at {upto} must keep the base's `env` and `references`: the workflows "
        "read it there by them, and a renamed or swapped `env` hands those readers another "
        "flag's values (a later stage's, whose checks never ran). Revert it; to rename how a "
        "flag is read, do it in a pull request of its own before any stage sets the flag, "
        "or add a new flag that a later stage sets.",
    )


def item_states_unchanged(refs: Refs) -> Rule:
    """Each item of the base is active or off at the stages the base has reached as it
    was: editing its ``when`` cannot switch it at a stage already rolled out."""
    since, head = refs.since, refs.head
    reached = min(_reached(refs), since.last)
    base_values = [flag_values(since, s) for s in range(reached + 1)]
    head_values = [flag_values(head, s) for s in range(reached + 1)]
    kinds = {"producer": head.producers, "consumer": head.consumers, "release": head.releases}
    changed: list[str] = []
    locations: list[Loc] = []
    for item in since.items():
        now = kinds[item.kind].get(item.id)
        if now is None or str(now.when) == str(item.when):
            continue  # adding or removing an item is for the checks; a flag's value, above
        moved = [
            f"stage {s}: {'active' if a else 'off'} (the base: {'active' if b else 'off'})"
            for s, (bv, hv) in enumerate(zip(base_values, head_values, strict=True))
            if (a := now.when.evaluate(hv)) != (b := item.when.evaluate(bv))
        ]
        if moved:
            changed.append(
                f"{now.loc.at}: {item.kind} {item.id} (when: {now.when}; "
                f"the base: {item.when}) at " + ", ".join(moved)
            )
            locations.append(now.loc)
    upto = f"stage{'s' if reached else ''} {', '.join(map(str, range(reached + 1)))}"
    return _unchanged_rule(
        "item-states-unchanged",
        changed,
        locations,
        f"every producer, consumer and release is active or off at {upto} as at the base",
        f"a producer, consumer or release must stay active or off at {upto} as the base has "
        "it: those stages are rolled out, and no check of theirs ran for the change. Revert "
        "the `when:`; to switch an item from now on, use a flag a later stage sets.",
    )


def releases_as_declared(
    repo: Repository,
    refs: Refs,
    commits: tuple[tuple[str, str], tuple[str, str]],
    prefix: PurePosixPath,
) -> Rule | None:
    """A forward flip changes the real releases only as the target stage declares."""
    target = refs.head.stage
    if target != refs.since.stage + 1 or target > refs.judge.last:
        return None  # not a flip forward to a stage the base defines (other rules say so)
    from stagegate.commands import releases_declared

    found = releases_declared.judge(repo, refs.judge, target, commits)
    if found is None:
        return None
    return Rule(releases_declared.RULE, found.ok, found.message, found.locations, found.details)


def checks_pass(results: Sequence[Result], stage: int) -> Rule:
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


def migration_kept(base: Migration, rel: PurePosixPath) -> Rule:
    finished = base.stage == base.last
    return Rule(
        "migration-kept",
        finished,
        f"{rel} is removed; the migration was finished at the base (stage {base.stage} "
        f"of {base.last})"
        if finished
        else f"{rel} is removed while the migration is at stage {base.stage} of "
        f"{base.last}; finish it (advance to stage {base.last}) before removing it.",
    )


def new_migration_at_stage_0(head: Migration) -> Rule:
    starts = head.stage == 0
    return Rule(
        "new-migration-at-stage-0",
        starts,
        f"{head.file} is new in this pull request and starts at stage 0"
        if starts
        else f"{head.file} is new in this pull request at stage {head.stage}; a new migration "
        "starts at `stage: 0`, and each later stage is flipped in its own pull request.",
        () if starts else (head.stage_loc,),
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


# --------------------------------------------------------------------------- running the checks


def _object_id(source: GitSource, rel: str) -> str | None:
    try:
        return source.object_id(rel)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _test_notes(
    copy: overlay.TestCopy,
    refs: Refs,
    stage: int,
    head_top: GitSource,
    base_top: GitSource,
    prefix: PurePosixPath,
) -> list[str]:
    """What of the base's test files the head would have changed, for the notes."""
    notes: list[str] = []
    in_targets: set[str] = set()
    for target in copy.targets:
        at = (prefix / target).as_posix()
        in_targets |= {p for p in copy.files if p == at or p.startswith(at + "/")}
        head_id = _object_id(head_top, at)
        if target in copy.missing:
            if head_id is not None:
                notes.append(
                    f"{target}/ is new in this pull request; the gate runs the base's tests of "
                    f"stage {stage}, so land them in a pull request before the flip."
                )
        elif head_id != _object_id(base_top, at):
            notes.append(f"{target}/ differs at the head; the gate ran the base's version of it.")
    support = [p for p in overlay.differing(copy, head_top) if p not in in_targets]
    if support:
        notes.append(
            f"{', '.join(support)} {'differs' if len(support) == 1 else 'differ'} at the "
            "head; the stage tests ran with the base's version (it decides how pytest runs "
            "them)."
        )
    if refs.head.stages_dir != refs.judge.stages_dir:
        notes.append(
            f"the head moves the stages from {refs.judge.stages_dir}/ to "
            f"{refs.head.stages_dir}/; the gate ran the base's stage tests from "
            f"{refs.judge.stages_dir}/."
        )
    return notes


def run_checks(
    repo: Repository,
    refs: Refs,
    stage: int,
    checks: Sequence[Check],
    commits: tuple[str, str],
    prefix: PurePosixPath,
) -> tuple[list[Result], list[str]]:
    """The base's ``checks`` of ``stage`` on the head; their results and notes."""
    if all(c.kind in reading("model") for c in checks):
        return runner.run_checks(refs.judge, stage, checks, evaluated_at=refs.head), []
    base_commit, head_commit = commits
    copy = overlay.base_tests(repo, refs.judge, base_commit, prefix, stage, checks)
    notes = (
        _test_notes(copy, refs, stage, repo.source(head_commit), repo.source(base_commit), prefix)
        if copy.targets
        else []
    )
    with overlay.head_tree(repo, head_commit, prefix) as (root, temporary):
        if temporary:
            notes.append(
                "checks that read files ran in a temporary checkout of the head (the work "
                "tree is not the head, or has changes)."
            )
        with overlay.test_folder(copy) as top:
            results = runner.run_checks(
                refs.judge, stage, checks, evaluated_at=refs.head, root=root, tests=top / prefix
            )
    return results, notes


# --------------------------------------------------------------------------- the gate


def verify(file: str, base_ref: str, head_ref: str = "HEAD") -> Verdict:
    """Judge the change of the migration from ``base_ref`` to ``head_ref``."""
    repo, rel = open_migration(file)
    prefix = rel.parent
    base_sha = repo.resolve(base_ref)
    head_sha = repo.resolve(head_ref)
    since_sha = base_sha
    compared = "direct"
    notes: list[str] = []
    if base_sha != head_sha and not repo.is_ancestor(base_sha, head_sha):
        since_sha = repo.merge_base(base_sha, head_sha, shown=(base_ref, head_ref))
        compared = "merge-base"
        notes.append(
            f"{base_ref} is not an ancestor of {head_ref}: what the pull request changed is "
            f"compared with their merge base {since_sha[:12]}, as GitHub's pull-request diff "
            f"does; the checks that judge it are {base_ref}'s."
        )
    base_src, head_src = repo.source(base_sha, prefix), repo.source(head_sha, prefix)
    base = load_at(file, base_src, base_ref)
    head = load_at(file, head_src, head_ref)
    sides: dict[str, Any] = {
        "file": file,
        "base": Side(base_ref, base_sha, base),
        "head": Side(head_ref, head_sha, head),
        "compared": compared,
    }
    if base is None and head is None:
        raise UsageError(
            f"{rel} exists neither at {base_ref} nor at {head_ref}; pass the migration's "
            "path with -f."
        )
    if head is None:
        assert base is not None
        return Verdict(**sides, rules=(migration_kept(base, rel),), notes=tuple(notes))
    if base is None:
        return _new_migration(sides, head, notes)
    since, since_src = base, base_src
    if since_sha != base_sha:
        since_src = repo.source(since_sha, prefix)
        since = load_at(file, since_src, "the merge base") or base
        sides["since"] = Side("merge base", since_sha, since)
    refs = Refs(base, since, head, since_src, head_src)
    since_ref = base_ref if since_sha == base_sha else "the merge base"
    rules = [
        rule
        for rule in (
            one_step(since, head),
            reversible(refs),
            target_defined(refs),
            past_stages_unchanged(refs),
            target_unchanged(refs),
            flag_values_unchanged(refs),
            flag_readers_unchanged(refs),
            item_states_unchanged(refs),
            releases_as_declared(
                repo, refs, ((since_sha, since_ref), (head_sha, head_ref)), prefix
            ),
        )
        if rule is not None
    ]
    notes += _invariant_notes(base, head)
    b = head.stage
    if b > base.last:
        notes.append(f"the checks of stage {b} were not run: the base does not define it.")
        return Verdict(**sides, rules=tuple(rules), notes=tuple(notes))
    checks = base.checks_at(b)
    results, more = run_checks(repo, refs, b, checks, (base_sha, head_sha), prefix)
    rules.append(checks_pass(results, b))
    return Verdict(
        **sides,
        rules=tuple(rules),
        results=tuple(results),
        notes=tuple(notes + more),
        checked_stage=b,
    )


def _new_migration(sides: dict[str, Any], head: Migration, notes: list[str]) -> Verdict:
    pure = [c for c in head.invariants if c.kind in reading("model")]
    skipped = len(head.invariants) - len(pure)
    results = runner.run_checks(head, 0, pure)
    if skipped:
        notes.append(
            f"{counted(skipped, 'invariant')} not run (checks that run programs or read "
            "files): with no base, they would come from the pull request itself."
        )
    return Verdict(
        **sides,
        rules=(new_migration_at_stage_0(head), checks_pass(results, 0)),
        results=tuple(results),
        notes=tuple(notes),
        checked_stage=0,
    )
