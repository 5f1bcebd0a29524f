"""verify-pr's ``releases-as-declared``: a flip changes what the real releases ship only
as the target stage declares.

``stagegate continuity`` compares, per real release job, the upload contexts that reach
its publish step at two commits (``ci.continuity``). When a pull request flips to stage
N, this holds that comparison (from the commit the pull request is measured from to the
head) to the ``release_changes`` of stage N as the base defines it: a context lost must
carry a name a ``drop`` of an entry for that release matches, a context gained a name an
``add`` matches. A real release job is tied to the model's releases by their ``jobs``
(the base's), and to the target's entries that name it (``job: PATH#JOB``). A release
job that the head adds (or that becomes one) must be named so: what it ships is refused
until declared. A job that was a release job at the base too, but that no release lists
and no entry names, is reported as information, never guessed at; a name the reader
could not work out cannot be matched, and is refused as unresolved."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence

from stagegate.ci.continuity import Reading, ReleaseChange, compare, read_commit
from stagegate.ci.shipped import Context, Side
from stagegate.engine.globs import matches
from stagegate.engine.match import plain_selector
from stagegate.engine.resolve import tag_claimed
from stagegate.errors import Loc
from stagegate.git.repo import Repository
from stagegate.model import JobChange, JobRef, Migration, Release, Template
from stagegate.records import record
from stagegate.words import counted

RULE = "releases-as-declared"


@record
class Judged:
    """The rule's verdict: whether it holds, what it says, and each detail with where."""

    ok: bool
    message: str
    locations: tuple[Loc, ...] = ()
    details: tuple[str, ...] = ()


def judge(
    repo: Repository,
    migration: Migration,
    target: int,
    commits: tuple[tuple[str, str], tuple[str, str]],
) -> Judged | None:
    """The real releases from the first commit to the second (each ``(sha, shown)``)
    against the release_changes of stage ``target`` in ``migration`` (the base's): each
    commit read with the base's workflows settings and the flags of its own stage, as
    ``continuity`` reads a flip."""
    (since, since_shown), (head, head_shown) = commits
    before = read_commit(repo, since, since_shown, Reading(migration=migration, stage=target - 1))
    after = read_commit(repo, head, head_shown, Reading(migration=migration, stage=target))
    changes, _fresh, _gone = compare(before, after)
    if not changes:
        return None  # no release job in the workflows at either commit: nothing to hold
    return held(migration, target, changes, before, after)


def job_text(path: str, job: str) -> str:
    """A `jobs` entry as the readers name jobs: its path is from the top of the repository
    (as drift reads it), wherever the migration lives."""
    return f"{posixpath.normpath(path)}#{job}"


def _names(ref: JobRef, change: ReleaseChange) -> bool:
    """Whether the `jobs` entry (or a `job` of release_changes) ``ref`` names the real
    release job of ``change``."""
    name = f"{change.release.file}#{change.release.job}"
    wanted = job_text(ref.path, ref.job)
    return fnmatch.fnmatchcase(name, wanted) if "*" in wanted else name == wanted


def tied(migration: Migration, change: ReleaseChange) -> list[Release]:
    """The model's releases whose `jobs` name the real release job of ``change``."""
    return [
        release
        for release in migration.releases.values()
        if any(_names(ref, change) for ref in migration.workflows.jobs_of(release))
    ]


def named(migration: Migration, target: int, change: ReleaseChange) -> list[JobChange]:
    """The target's release_changes entries that name the real release job of ``change``
    (`job: PATH#JOB`)."""
    definition = migration.stage_def(target)
    entries = definition.job_changes if definition is not None else ()
    return [entry for entry in entries if _names(entry.job, change)]


def _declared(
    migration: Migration, target: int, releases: Sequence[Release], entries: Sequence[JobChange]
) -> tuple[list[Template], list[Template]]:
    """The `drop` and `add` globs of the target's entries for any of ``releases`` (by
    their tags) and of ``entries`` (naming the real job)."""
    definition = migration.stage_def(target)
    drops: list[Template] = []
    adds: list[Template] = []
    for entry in definition.release_changes if definition is not None else ():
        if any(tag_claimed(r, entry.tag) for r in releases):
            drops += entry.drop
            adds += entry.add
    for job_entry in entries:
        drops += job_entry.drop
        adds += job_entry.add
    return drops, adds


def _unknown(side: Side, context: Context) -> bool:
    """Whether the reader could not work out the context's artifact name."""
    return any(u.loc == context.loc for u in side.unresolved)


def _where(context: Context) -> str:
    return f"{context.file}:{context.loc.line}"


class _Tally:
    """What the rule found, change by change."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self.where: list[Loc] = []
        self.info: list[str] = []
        self.declared = 0


def _made_unreadable(changes: Sequence[ReleaseChange]) -> Judged | None:
    """A flip whose head makes a release's flow unreadable where the base read it (its
    publish step, the run its files come from, an artifact action's version, a move), or
    brings files from outside the runs read to its publish step: the gate cannot say what
    it ships, so it refuses (as ``continuity`` fails it)."""
    lines: list[str] = []
    where: list[Loc] = []
    for change in changes:
        real = change.release
        job = f"release job {real.job} ({real.file}:{real.loc.line})"
        for blind in change.newly_blind:
            lines.append(f"{job} cannot be read at the head: {blind.reason} ({blind.loc.at})")
            where.append(blind.loc)
        for foreign in change.new_foreign:
            lines.append(
                f"{job} publishes files from outside the runs it reads: {foreign.what} ({foreign.loc.at})"
            )
            where.append(foreign.loc)
    if not lines:
        return None
    return Judged(
        False,
        "this pull request makes what a release ships unreadable where the base read it, or "
        "brings it files from outside the runs it reads: the gate cannot hold it to the "
        "target stage's release_changes; keep the flow readable (pin versions, declare "
        "publishers and runs under workflows in the base first).",
        tuple(where),
        tuple(lines),
    )


def held(
    migration: Migration,
    target: int,
    changes: Sequence[ReleaseChange],
    before: Side,
    after: Side,
) -> Judged:
    definition = migration.stage_def(target)
    stage_file = definition.file if definition is not None else "?"
    unread = _made_unreadable(changes)
    if unread is not None:
        return unread
    changed = [c for c in changes if c.lost or c.gained]
    if not changed:
        return Judged(
            True,
            f"{counted(len(changes), 'real release job')} "
            f"{'ships' if len(changes) == 1 else 'ship'} the same upload contexts at the "
            "head as where this pull request starts",
        )
    listed = any(migration.workflows.jobs_of(r) for r in migration.releases.values())
    tally = _Tally()
    for change in changed:
        releases = tied(migration, change)
        entries = named(migration, target, change)
        if releases or entries:
            _hold(
                tally, change, (migration, target, stage_file), releases, entries, (before, after)
            )
        elif not change.in_base and change.gained:
            _new_job(tally, change, target, stage_file)
        elif listed:
            real = change.release
            tally.info += [
                f"{line} (information: no release of the model lists {real.file}#{real.job} "
                "in `jobs`)"
                for line in _change_lines(change)
            ]
        else:
            tally.info += _change_lines(change)
    if tally.refused:
        return Judged(
            False,
            f"this pull request flips to stage {target}, and the real release jobs change "
            f"beyond what stage {target}'s release_changes ({stage_file}, the base's) declare: "
            "declare each change there in a pull request of its own (a `drop` of a lost "
            "name, an `add` of a gained one), then flip; or keep the workflows as they were.",
            tuple(tally.where),
            tuple(tally.refused) + tuple(tally.info),
        )
    if not listed and not tally.declared:
        return Judged(
            True,
            f"{counted(len(changed), 'real release job')} "
            f"{'ships' if len(changed) == 1 else 'ship'} other upload contexts at the "
            "head, but no release of the model lists `jobs`, so they cannot be tied to its "
            "releases and are not compared with release_changes (information)",
            (),
            tuple(tally.info),
        )
    said = (
        f"{counted(tally.declared, 'upload context')} lost or gained, each declared by stage "
        f"{target}'s release_changes ({stage_file})"
        if tally.declared
        else "the release jobs the model's releases list in `jobs` ship the same upload "
        "contexts; the others are listed as information"
    )
    return Judged(True, said, (), tuple(tally.info))


def _hold(
    tally: _Tally,
    change: ReleaseChange,
    stage: tuple[Migration, int, str],
    releases: Sequence[Release],
    entries: Sequence[JobChange],
    sides: tuple[Side, Side],
) -> None:
    """Each context the job of ``change`` lost or gained against the `drop` and `add`
    globs that the target declares for it (for its releases, by tag, or for the job)."""
    migration, target, stage_file = stage
    drops, adds = _declared(migration, target, releases, entries)
    real = change.release
    shown = ", ".join([r.id for r in releases] + [f"job {e.job.text}" for e in entries])
    job = f"release job {real.job} ({real.file}:{real.loc.line}, release {shown})"
    for kind, contexts, globs, side in (
        ("lost", change.lost, drops, sides[0]),
        ("gained", change.gained, adds, sides[1]),
    ):
        key = "drop" if kind == "lost" else "add"
        for context in contexts:
            what = (
                f"{job} {'loses' if kind == 'lost' else 'gains'} the upload context "
                f"{context.label()} ({_where(context)}, artifact {context.name!r})"
            )
            if _unknown(side, context):
                tally.refused.append(
                    f"{what}: its name cannot be worked out, so no `{key}` can be shown "
                    "to declare it (unresolved)"
                )
            elif any(matches(plain_selector(g.text).language, context.name) for g in globs):
                tally.declared += 1
                continue
            else:
                tally.refused.append(
                    f"{what}, which no `{key}` of stage {target}'s release_changes "
                    f"({stage_file}) declares"
                )
            tally.where.append(context.loc if kind == "gained" else _head_loc(change, context))


def _new_job(tally: _Tally, change: ReleaseChange, target: int, stage_file: str) -> None:
    """A release job that the head adds (or that becomes one), which no release of the
    model lists and no entry of the target names: what it ships is undeclared."""
    real = change.release
    for context in change.gained:
        tally.refused.append(
            f"release job {real.job} ({real.file}:{real.loc.line}) is new at the head and "
            f"gains the upload context {context.label()} ({_where(context)}, artifact "
            f"{context.name!r}), which no entry of stage {target}'s release_changes "
            f"({stage_file}) declares: a new release job is declared by an entry "
            f"`job: {real.file}#{real.job}` with an `add` of each name it publishes"
        )
        tally.where.append(context.loc)


def _head_loc(change: ReleaseChange, context: Context) -> Loc:
    """Where to point at a lost context: the release job, at its head line (the context
    itself exists only at the base)."""
    return Loc(change.release.file, change.release.loc.line, 1) if change.in_head else context.loc


def _change_lines(change: ReleaseChange) -> list[str]:
    real = change.release
    job = f"release job {real.job} ({real.file}:{real.loc.line})"
    lines = [
        f"{job} loses the upload context {c.label()} ({_where(c)}, artifact {c.name!r})"
        for c in change.lost
    ]
    lines += [
        f"{job} gains the upload context {c.label()} ({_where(c)}, artifact {c.name!r})"
        for c in change.gained
    ]
    return lines
