"""verify-pr's ``releases-as-declared``: a flip changes what the real releases ship only
as the target stage declares.

``stagegate continuity`` compares, per real release job, the upload contexts that reach
its publish step at two commits (``ci.continuity``). When a pull request flips to stage
N, this holds that comparison (from the commit the pull request is measured from to the
head) to the ``release_changes`` of stage N as the base defines it: a context lost must
carry a name a ``drop`` of an entry for that release matches, a context gained a name an
``add`` matches. A real release job is tied to the model's releases by their ``jobs``
(the base's); a job no release lists is reported as information, never guessed at, and
so is a name the reader could not work out (it cannot be matched)."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence
from pathlib import PurePosixPath

from stagegate.ci.continuity import ReleaseChange, compare, read_commit
from stagegate.ci.shipped import Context, Side
from stagegate.engine.globs import matches
from stagegate.engine.match import plain_selector
from stagegate.engine.resolve import tag_claimed
from stagegate.errors import Loc
from stagegate.git.repo import Repository
from stagegate.model import Migration, Release, Template
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
    prefix: PurePosixPath,
) -> Judged | None:
    """The real releases from the first commit to the second (each ``(sha, shown)``)
    against the release_changes of stage ``target`` in ``migration`` (the base's)."""
    (since, since_shown), (head, head_shown) = commits
    before = read_commit(repo, since, since_shown)
    after = read_commit(repo, head, head_shown)
    changes, _fresh, _gone = compare(before, after)
    if not changes:
        return None  # no release job in the workflows at either commit: nothing to hold
    return held(migration, target, changes, before, after, prefix)


def job_text(prefix: PurePosixPath, path: str, job: str) -> str:
    """A `jobs` entry (relative to the migration's folder) as a path from the top."""
    full = posixpath.normpath((prefix / path).as_posix()) if str(prefix) not in ("", ".") else path
    return f"{full}#{job}"


def tied(migration: Migration, prefix: PurePosixPath, change: ReleaseChange) -> list[Release]:
    """The model's releases whose `jobs` name the real release job of ``change``."""
    names = {f"{change.release.file}#{change.release.job}"}
    out = []
    for release in migration.releases.values():
        for ref in migration.workflows.jobs_of(release):
            wanted = job_text(prefix, ref.path, ref.job)
            if any(fnmatch.fnmatchcase(n, wanted) if "*" in wanted else n == wanted for n in names):
                out.append(release)
                break
    return out


def _declared(
    migration: Migration, target: int, releases: Sequence[Release]
) -> tuple[list[Template], list[Template]]:
    """The `drop` and `add` globs of the target's entries for any of ``releases``."""
    definition = migration.stage_def(target)
    drops: list[Template] = []
    adds: list[Template] = []
    for entry in definition.release_changes if definition is not None else ():
        if any(tag_claimed(r, entry.tag) for r in releases):
            drops += entry.drop
            adds += entry.add
    return drops, adds


def _unknown(side: Side, context: Context) -> bool:
    """Whether the reader could not work out the context's artifact name."""
    return any(u.loc == context.loc for u in side.unresolved)


def _where(context: Context) -> str:
    return f"{context.file}:{context.loc.line}"


def held(
    migration: Migration,
    target: int,
    changes: Sequence[ReleaseChange],
    before: Side,
    after: Side,
    prefix: PurePosixPath,
) -> Judged:
    definition = migration.stage_def(target)
    stage_file = definition.file if definition is not None else "?"
    changed = [c for c in changes if c.lost or c.gained]
    if not changed:
        return Judged(
            True,
            f"{counted(len(changes), 'real release job')} "
            f"{'ships' if len(changes) == 1 else 'ship'} the same upload contexts at the "
            "head as where this pull request starts",
        )
    if not any(migration.workflows.jobs_of(r) for r in migration.releases.values()):
        return Judged(
            True,
            f"{counted(len(changed), 'real release job')} "
            f"{'ships' if len(changed) == 1 else 'ship'} other upload contexts at the "
            "head, but no release of the model lists `jobs`, so they cannot be tied to its "
            "releases and are not compared with release_changes (information)",
            (),
            tuple(line for c in changed for line in _change_lines(c)),
        )
    refused: list[str] = []
    where: list[Loc] = []
    info: list[str] = []
    declared = 0
    for change in changed:
        real = change.release
        releases = tied(migration, prefix, change)
        if not releases:
            info += [
                f"{line} (information: no release of the model lists {real.file}#{real.job} "
                "in `jobs`)"
                for line in _change_lines(change)
            ]
            continue
        drops, adds = _declared(migration, target, releases)
        shown = ", ".join(r.id for r in releases)
        for kind, contexts, globs, side in (
            ("lost", change.lost, drops, before),
            ("gained", change.gained, adds, after),
        ):
            key = "drop" if kind == "lost" else "add"
            for context in contexts:
                job = f"release job {real.job} ({real.file}:{real.loc.line}, release {shown})"
                what = (
                    f"{job} {'loses' if kind == 'lost' else 'gains'} the upload context "
                    f"{context.label()} ({_where(context)}, artifact {context.name!r})"
                )
                if _unknown(side, context):
                    refused.append(
                        f"{what}: its name cannot be worked out, so no `{key}` can be shown "
                        "to declare it (unresolved)"
                    )
                elif any(matches(plain_selector(g.text).language, context.name) for g in globs):
                    declared += 1
                    continue
                else:
                    refused.append(
                        f"{what}, which no `{key}` of stage {target}'s release_changes "
                        f"({stage_file}) declares"
                    )
                where.append(context.loc if kind == "gained" else _head_loc(change, context))
    if refused:
        return Judged(
            False,
            f"this pull request flips to stage {target}, and the real release jobs change "
            f"beyond what stage {target}'s release_changes ({stage_file}, the base's) declare: "
            "declare each change there in a pull request of its own (a `drop` of a lost "
            "name, an `add` of a gained one), then flip; or keep the workflows as they were.",
            tuple(where),
            tuple(refused) + tuple(info),
        )
    said = (
        f"{counted(declared, 'upload context')} lost or gained, each declared by stage "
        f"{target}'s release_changes ({stage_file})"
        if declared
        else "the release jobs the model's releases list in `jobs` ship the same upload "
        "contexts; the others are listed as information"
    )
    return Judged(True, said, (), tuple(info))


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
