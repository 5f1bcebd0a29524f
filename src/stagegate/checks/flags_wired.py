"""Every flag the stage flips is read by CI, and no workflow hard-codes a flag's value.

A flip whose flag nobody reads changes nothing: the stage would pass its checks and
the pipeline would go on as before. So at stage S each flag that S's own ``set``
changes must have each of its references (its ``references`` and its ``env``) in a
file git tracks, outside the migration's own files and ``audit.ignore``, found by the
audit's own search. And a workflow that writes a flag's ``env`` variable as a literal
(``BUILD_CU12_LOCAL: "false"``) instead of reading it from stagegate breaks as soon as
the flag's value moves away from that literal: at any stage where the two disagree,
that line fails the check.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from stagegate.checks._elsewhere import REQUIRES, elsewhere, not_run
from stagegate.checks._elsewhere import validate as validate
from stagegate.checks.base import Context, Finding, Result, result
from stagegate.ci.ciflags import output_name
from stagegate.engine.resolve import changed_flags, flag_table
from stagegate.errors import InvalidInput, Loc
from stagegate.model import Check, Flag, Migration, Ref
from stagegate.words import counted

if TYPE_CHECKING:
    from stagegate.ci.files import Files

KIND = "flags-wired"
SUMMARY = (
    "Each flag this stage's own `set` changes has its references and its `env` in the files "
    "git tracks (outside the migration's files and audit.ignore), and no workflow `env:` "
    "(workflow, job or step; composite action steps; in workflows.paths) sets a flag's `env` "
    "to a literal that contradicts the flag here."
)
ARGS: dict[str, object] = {"requires": REQUIRES}
REQUIRED: list[str] = []
READS = "repository"


def workflow_pathspecs(migration: Migration) -> list[str]:
    """The git pathspecs of the workflow files read: ``workflows.paths`` (by default the
    workflows and composite actions), from the top of the work tree, where GitHub reads
    them, wherever the migration lives."""
    from stagegate.git.search import pathspec

    return [pathspec(p, glob=True, top=True) for p in migration.workflows.paths]


_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def literal(value: Any) -> bool | None:
    """The flag value a YAML ``env`` value hard-codes: true/false (any case, quoted or
    not) and 1/0; None for anything else (an expression, another word)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in _TRUE else False if word in _FALSE else None
    return None


def _env_blocks(
    files: Files, rel: str
) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """(path, mapping) of each ``env:`` at the workflow, job and step level of the workflow
    ``rel``, or of each step of the composite action ``rel``."""
    from stagegate.ci.model import is_action

    if is_action(files.docs[rel].data):
        steps = files.action(rel).steps
    else:
        workflow = files.workflow(rel)
        if isinstance(workflow.env, dict):
            yield ("env",), workflow.env
        steps = ()
        for job in workflow.jobs.values():
            if isinstance(job.env, dict):
                yield job.at("env"), job.env
            steps += job.steps
    for step in steps:
        if isinstance(step.env, dict):
            yield step.at("env"), step.env


def _bool(value: bool) -> str:
    return "true" if value else "false"


def hard_coded(
    files: Files, raw: bytes, envs: Mapping[str, Flag], values: Mapping[str, bool], stage: int
) -> list[Finding]:
    """The ``env:`` literals in one workflow file (``raw``, as git names it below
    ``files.root``) that contradict a flag at ``stage``.

    A workflow stagegate cannot read is a finding at the place it stops, never a crash."""
    from stagegate.audit import display

    rel = os.fsdecode(raw)
    shown = files.shown(display(raw))
    path = files.root / rel
    if path.is_symlink() or not path.is_file():
        return []  # deleted in the work tree, or a link GitHub would not read as a workflow
    try:
        doc = files.document(rel, name=shown)
        blocks = list(_env_blocks(files, rel))
    except InvalidInput as error:
        first = error.problems[0]
        return [
            Finding(
                f"{shown}: cannot read this workflow ({first.message}), so flags-wired cannot "
                "tell what its env: sets; fix it.",
                first.loc,
            )
        ]
    except OSError as error:
        return [Finding(f"{shown}: cannot read: {error.strerror or error}.", Loc(shown, 1, 1))]
    findings = []
    for where, block in blocks:
        for name, value in block.items():
            flag = envs.get(name)
            said = literal(value)
            if flag is None or said is None or said == values[flag.id]:
                continue
            loc = doc.loc((*where, name))
            findings.append(
                Finding(
                    f"{shown}: {name} is hard-coded to {json.dumps(value)}, but flag {flag.id} is "
                    f"{_bool(values[flag.id])} at stage {stage}; read it from stagegate "
                    f"instead: `{name}: ${{{{ fromJSON(needs.gate.outputs.flags)['{flag.id}'] }}}}` "
                    "(or `stagegate flags --format github`, which sets it in $GITHUB_ENV).",
                    loc,
                )
            )
    return findings


def _settled(migration: Migration, flag: str, stage: int) -> bool:
    """Whether the flip of ``flag`` at ``stage`` is history: the migration's current stage
    is past it and the flag no longer changes from there on.

    The audit then lists the flag's references as conditionals that can go; removing
    them must not fail the stage that flipped it (a stage's definition cannot change
    once reached). A flip that nobody reads is caught while its stage is still ahead
    (`check --all`) and while it is the current stage."""
    from stagegate.audit import stale_since

    return migration.stage > stage and stale_since(migration, flag) <= migration.stage


def _readers(migration: Migration, flag: str) -> re.Pattern[str]:
    """The ways docs/ci.md and docs/drift.md read a flag in a workflow: the `flags` output's
    JSON indexed by the flag's name (of the gate job, of a step of the same job, or passed
    to a reusable workflow as `inputs.flags`), the flag's own output of the gate job or of
    the step, `stagegate flag NAME`, and `contains(fromJSON(...outputs.active).KIND, 'ID')`
    for an item whose `when` names the flag (the flag reaches CI as that item's state)."""
    name, output = re.escape(flag), re.escape(output_name(flag))
    end = r"(?![A-Za-z0-9_-])"
    source = r"(?:(?:needs|steps)\.[A-Za-z0-9_-]+\.outputs|inputs)"
    items = [re.escape(item.id) for item in migration.items() if flag in item.when.names()]
    forms = [
        rf"fromJSON\(\s*{source}\.flags\s*\)\s*\[\s*(['\"]){name}\1\s*\]",
        rf"(?:needs|steps)\.[A-Za-z0-9_-]+\.outputs\.{output}{end}",
        rf"\bstagegate\b[^\n]*\bflag\s+(['\"]?){name}\2{end}",
    ]
    if items:
        forms.append(
            rf"contains\(\s*fromJSON\(\s*{source}\.active\s*\)\.(?:producers|consumers|"
            rf"releases)\s*,\s*(['\"])(?:{'|'.join(items)})\3\s*\)"
        )
    return re.compile("|".join(forms))


def read_in_workflows(
    migration: Migration, files: Files, workflows: list[bytes], flag: str
) -> str | None:
    """Where a workflow file reads ``flag`` in one of the documented ways (``_readers``):
    ``FILE:LINE: the text``, the first found; None when none does."""
    from stagegate.audit import display

    pattern = _readers(migration, flag)
    for raw in workflows:
        path = files.root / os.fsdecode(raw)
        if path.is_symlink() or not path.is_file():
            continue  # as hard_coded: deleted, or a link GitHub would not read
        try:
            doc = files.document(os.fsdecode(raw), name=files.shown(display(raw)))
        except (InvalidInput, OSError):
            continue  # hard_coded reports a file it cannot read
        for number, line in enumerate(files.texts.get(doc.file, ()), 1):
            found = pattern.search(line)
            if found:
                return f"{doc.file}:{number}: {found.group(0)}"
    return None


def _wiring(
    migration: Migration,
    flag: Flag,
    turns: str,
    found: Mapping[Ref, list[Any]],
    reader: Callable[[], str | None],
) -> tuple[str | None, list[str]]:
    """Whether anything reads a flipped flag: its `env` or a `references` string in a file
    git tracks, or a workflow reading it as the docs show. The failure's message when
    nothing does; notes for a declared `env` or reference read nowhere while CI reads the
    flag another way (they do no harm, but say nothing)."""

    def shown(ref: Ref) -> str:
        from stagegate.model.references import label

        return repr(ref) if isinstance(ref, str) else label(ref)

    from stagegate.audit import flag_references

    references = flag_references(flag)
    unread = [r for r in references if not found[r]]
    if len(unread) < len(references):
        where = None
    else:
        where = reader()
        if where is None:
            declared = (
                "declares neither `env` nor `references`"
                if not references
                else f"its {_declared(flag, unread, shown)} {'is' if len(unread) == 1 else 'are'} "
                "in no file git tracks (outside the migration's own files and audit.ignore)"
            )
            return (
                f"{turns}, but {declared}, and no workflow reads it as docs/ci.md shows "
                f"(fromJSON(needs.JOB.outputs.flags)['{flag.id}'], needs.JOB.outputs."
                f"{output_name(flag.id)}, `stagegate flag {flag.id}`), so nothing shows that CI "
                "reads it, and a flip nobody reads changes nothing: give it `env: NAME` and "
                "read that variable in the workflows (or gate jobs on "
                f"fromJSON(needs.gate.outputs.flags)['{flag.id}']).",
                [],
            )
    how = f" (CI reads it at {where})" if where else ""
    notes = [
        f"flag {flag.id}'s {_declared(flag, [r], shown)} is read nowhere{how}: drop it from "
        f"the flag ({flag.loc}) or read it"
        for r in unread
    ]
    return None, notes


def _declared(flag: Flag, refs: list[Ref], shown: Callable[[Ref], str]) -> str:
    """``env X`` / ``reference 'y'`` / both, as the flag declares them."""
    words = [f"{'env' if r == flag.env else 'reference'} {shown(r)}" for r in refs]
    return " and ".join(words)


def run(ctx: Context, check: Check) -> list[Result]:
    from stagegate.audit import (
        attribute,
        flag_references,
        reference_hits,
        start_reference_search,
    )
    from stagegate.git.run import Pending
    from stagegate.git.search import start_ls_files, start_worktree, text_hits

    skip = elsewhere(ctx, check)
    if skip is not None:
        return [not_run(ctx, check, skip)]

    migration, stage = ctx.reference, ctx.stage  # verify-pr: the base's flags and references
    values = flag_table(migration)[stage]
    flipped: list[Flag] = []
    settled: list[Flag] = []
    for name in changed_flags(migration, stage):
        (settled if _settled(migration, name, stage) else flipped).append(migration.flags[name])
    strings = list(dict.fromkeys(s for flag in flipped for s in flag_references(flag)))
    started: list[Pending[Any]] = []
    try:
        grep = start_reference_search(migration, ctx.root, strings)
        if grep is not None:
            started.append(grep)
        where = start_worktree(ctx.root)
        started.append(where)
        listing = start_ls_files(ctx.root, workflow_pathspecs(migration))
        started.append(listing)
        tree = where.result()
        hits = text_hits(tree.top, grep.result()) if grep is not None else []
        if grep is not None:
            hits = reference_hits(migration, ctx.root, tree.top, strings, hits)
        workflows = listing.result()
    except BaseException:
        for pending in started:
            pending.cancel()
        raise
    found = attribute(hits, strings)
    definition = migration.stage_def(stage)
    findings = []
    from stagegate.ci.files import Files, shown_top

    files = Files(tree.top, shown=shown_top(ctx.root, ctx.migration.root))
    notes: list[str] = []
    for flag in flipped:
        loc = definition.set_locs.get(flag.id) if definition is not None else None
        turns = f"flag {flag.id} turns {'on' if values[flag.id] else 'off'} at stage {stage}"
        failure, more = _wiring(
            migration,
            flag,
            turns,
            found,
            partial(read_in_workflows, migration, files, workflows, flag.id),
        )
        notes += more
        if failure is not None:
            findings.append(Finding(failure, loc or flag.loc))
    envs = {flag.env: flag for flag in migration.flags.values() if flag.env}
    if envs:
        for raw in workflows:
            findings += hard_coded(files, raw, envs, values, stage)
    note = ""
    if settled:
        note = (
            f"{', '.join(f.id for f in settled)} settled (stage {migration.stage} is past this "
            "flip and the flag no longer changes, so what read it may be gone); "
        )
    noted = "".join(f"; note: {n}" for n in notes)
    ok = (
        f"{counted(len(flipped), 'flipped flag')} read in CI; {note}"
        f"no env: in {counted(len(workflows), 'workflow')} contradicts a flag{noted}"
    )
    failed = (
        f"{counted(len(findings), 'problem')}: a flip must reach CI, and CI must read flags "
        f"from stagegate{noted}"
    )
    return [result(ctx, check, findings, ok, fail_message=failed)]
