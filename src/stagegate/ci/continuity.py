"""`continuity --base REF [--head REF]`: what each release ships, at two commits, compared.

The workflows of each commit are read from git objects (no checkout, nothing written)
and followed with ``ci.ships``. A release job
is matched across the commits by file and job id, an upload context by where it runs
(file, job, caller, matrix row, which upload of the job): the same context under
another name is a rename (information); one that no longer reaches the publish step is
lost, a new one gained.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stagegate.ci.files import Files, discover
from stagegate.ci.shipped import Context, Finding, Release, Side
from stagegate.ci.ships import ships
from stagegate.ci.transfers import Unresolved
from stagegate.errors import InvalidInput, Loc, Problem
from stagegate.git.objects import GitSource
from stagegate.model import DEFAULT_WORKFLOW_PATHS, WorkflowSettings
from stagegate.records import record

FAILING = frozenset({"upload-collision", "upload-overwrite", "backend-mismatch", "exact-name-glob"})
"""Findings that fail when the head has them and the base did not."""


@record(kw_only=True)
class Renamed:
    context: Context
    before: str
    after: str


@record(kw_only=True)
class ReleaseChange:
    """One release job at both commits: ``before`` at the base, ``after`` at the head (None
    at a commit without it), and the upload contexts reaching its publish step that it
    lost, gained, or kept under another name."""

    before: Release | None
    after: Release | None
    lost: tuple[Context, ...]
    gained: tuple[Context, ...]
    renamed: tuple[Renamed, ...]

    @property
    def release(self) -> Release:
        """The job at the head, else at the base: its file, name, line and events."""
        either = self.after or self.before
        assert either is not None
        return either

    @property
    def in_base(self) -> bool:
        return self.before is not None

    @property
    def in_head(self) -> bool:
        return self.after is not None

    @property
    def base(self) -> tuple[Context, ...]:
        return self.before.contexts if self.before else ()

    @property
    def head(self) -> tuple[Context, ...]:
        return self.after.contexts if self.after else ()

    @property
    def stranded(self) -> tuple[Context, ...]:
        """At the head: what its downloads take for the publish step that lands where the
        step does not read (what a lost context now shares its download with)."""
        return tuple(dict.fromkeys(s.context for s in self.after.stranded)) if self.after else ()

    @property
    def elsewhere(self) -> tuple[Loc, ...]:
        """At the head: its downloads that read another run (one whose id is not this
        run's)."""
        return self.after.elsewhere if self.after else ()

    @property
    def empty(self) -> bool:
        """The head's release job exists and nothing of the run reaches its publish step."""
        return self.in_head and not self.head

    @property
    def failed(self) -> bool:
        """Lost or gained a context; selecting nothing fails where the base selected
        something (a release that takes its files where stagegate does not read, a script
        or another run, selects nothing at both commits: information)."""
        return bool(self.lost or self.gained or (self.empty and self.base))


@record(kw_only=True)
class Commit:
    """A commit as the user named it (``ref``) and its id."""

    ref: str
    sha: str


@record(kw_only=True, eq=False)
class Continuity:
    base: Commit
    head: Commit
    releases: tuple[ReleaseChange, ...]
    findings: tuple[Finding, ...]
    """The head's findings that the base did not have, each with its consequence."""
    resolved: tuple[Finding, ...]
    """The base's findings that the head no longer has (information)."""
    unresolved: tuple[Unresolved, ...]
    changed: dict[str, set[int]]
    """The lines the head changed since the base, per file (for annotations)."""
    head_contexts: tuple[Context, ...] = ()
    """Every upload context of the head (where a lost one went, for annotations)."""

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.releases) and not any(
            f.kind in FAILING for f in self.findings
        )


def read_commit(
    repo: Any, commit: str, shown: str, settings: WorkflowSettings | None = None
) -> Side:
    """The release jobs of ``commit``'s workflows, read from git objects (no checkout);
    ``settings``: the migration's ``workflows`` (its declared remote actions), where
    there is one. A commit whose files that the reading read are, object for object, those
    of a commit read before is not read again: the base and the head of a pull request
    that leaves the workflows (and the scripts and files they read) alone are read once."""
    source = repo.source(commit)
    actions = settings.actions if settings is not None else None
    rels = discover(source, DEFAULT_WORKFLOW_PATHS)
    for files_read, declared, side in _READ:
        if declared == actions and _same_files(source, rels, files_read):
            return side
    side, ids = _read(Files(repo.root, source=source), commit, shown, settings)
    _READ.insert(0, ((tuple(rels), ids), actions, side))
    del _READ[READ_KEPT:]
    return side


def _read(
    files: Files, commit: str, shown: str, settings: WorkflowSettings | None
) -> tuple[Side, dict[str, str]]:
    """What ships at the commit ``files`` reads, and the id of every file read."""
    try:
        side = ships(files, settings=settings)
    except InvalidInput as exc:
        raise InvalidInput(
            [
                Problem(p.loc, f"at {shown} ({commit[:12]}): {p.message}", p.path)
                for p in exc.problems
            ]
        ) from None
    source = files.source
    assert isinstance(source, GitSource)
    return side, {rel: _object_id(source, rel) for rel in files.raw}


_READ: list[tuple[tuple[tuple[str, ...], dict[str, str]], Mapping[str, Any] | None, Side]] = []
"""The last commits read: the workflow files found and the id of every file the reading
read (by the source), the remote actions declared, and what was read."""
READ_KEPT = 4


def _object_id(source: GitSource, rel: str) -> str:
    """The id of the blob at ``rel`` ("": none; a reading that found no file there must
    find none again)."""
    try:
        return source.object_id(rel)
    except (OSError, ValueError):
        return ""


def _same_files(
    source: GitSource, rels: list[str], read: tuple[tuple[str, ...], dict[str, str]]
) -> bool:
    found, ids = read
    return tuple(rels) == found and all(_object_id(source, r) == i for r, i in ids.items())


def compare(
    base: Side, head: Side
) -> tuple[tuple[ReleaseChange, ...], tuple[Finding, ...], tuple[Finding, ...]]:
    """The releases of both sides matched and compared; the head's new findings with
    their consequences; the base's findings gone in the head."""
    before = {r.key: r for r in base.releases}
    after = {r.key: r for r in head.releases}
    changes: list[ReleaseChange] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        changes.append(_change(old, new))
    base_keys = {f.key for f in base.findings}
    head_keys = {f.key for f in head.findings}
    fresh = tuple(
        _with_consequence(f, head.releases) for f in head.findings if f.key not in base_keys
    )
    gone = tuple(f for f in base.findings if f.key not in head_keys)
    return tuple(changes), fresh, gone


def _change(old: Release | None, new: Release | None) -> ReleaseChange:
    was = {c.key: c for c in old.contexts} if old else {}
    now = {c.key: c for c in new.contexts} if new else {}
    return ReleaseChange(
        before=old,
        after=new,
        lost=tuple(was[k] for k in sorted(was) if k not in now),
        gained=tuple(now[k] for k in sorted(now) if k not in was),
        renamed=tuple(
            Renamed(context=now[k], before=was[k].name, after=now[k].name)
            for k in sorted(now)
            if k in was and was[k].name != now[k].name
        ),
    )


def _with_consequence(finding: Finding, releases: tuple[Release, ...]) -> Finding:
    """The finding, saying what it does to each release whose publish step it reaches."""
    if not finding.contexts:
        return finding
    keys = {c.key for c in finding.contexts}
    said: list[str] = []
    for release in releases:
        mine = [c for c in release.contexts if c.key in keys]
        total = len(release.contexts)
        if finding.kind in ("upload-collision", "upload-overwrite") and len(mine) > 1:
            said.append(
                f"release job {release.job} ({release.file}) would ship {total - len(mine) + 1} of "
                f"its {total} upload contexts (one of {', '.join(c.label() for c in mine)})"
            )
    if finding.kind == "backend-mismatch":
        return finding
    if not said:
        return finding
    from stagegate.records import replace

    return replace(finding, message=f"{finding.message}; {'; '.join(said)}")


def continuity(
    start: Path | str,
    base_ref: str,
    head_ref: str | None,
    *,
    settings: Callable[[GitSource], WorkflowSettings | None] | None = None,
    file: str = "migration.yaml",
) -> Continuity:
    """Compare what the release jobs ship at ``base_ref`` and at ``head_ref`` (default HEAD).
    ``settings``: reads the migration's ``workflows`` settings from the base's files (the
    folder of ``file``), where it has a migration; both commits are read with them."""
    from stagegate.git.repo import open_repository

    repo = open_repository(start)
    base = repo.resolve(base_ref)
    head = repo.resolve(head_ref or "HEAD")
    model = None
    if settings is not None:
        model = settings(repo.source(base, repo.rel(Path(file)).parent))
    base_side = read_commit(repo, base, base_ref, model)
    head_side = read_commit(repo, head, head_ref or "HEAD", model)
    releases, new, gone = compare(base_side, head_side)
    changed = {
        file: lines
        for file, lines in repo.changed_lines(base, head).items()
        if file.startswith(".github/")
    }
    return Continuity(
        base=Commit(ref=base_ref, sha=base),
        head=Commit(ref=head_ref or "HEAD", sha=head),
        releases=releases,
        findings=new,
        resolved=gone,
        unresolved=head_side.unresolved,
        changed=changed,
        head_contexts=head_side.contexts,
    )
