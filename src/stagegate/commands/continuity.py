"""`continuity`: the core of the command. Where the base has a migration file, both commits
are read with its `workflows` settings and the flags of their own stage (the base's stage
at the base, the head's at the head), and a pull request that flips a stage may change the
real releases as the target stage's `release_changes` declare (as verify-pr holds it).
Changes a pull request means can also be declared in `Release-Change:` lines: in a file
(`--accept`) or, on a `pull_request` event, in the pull request's description."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from stagegate.ci.continuity import Acceptance, Continuity, Reading, acceptances
from stagegate.errors import InvalidInput, Loc, Problem, UsageError
from stagegate.model import Migration

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


def continuity(
    file: str,
    base_ref: str,
    head_ref: str | None,
    *,
    accept: str | None = None,
    strict: bool = False,
    environ: Mapping[str, str] = os.environ,
    annotate: bool = True,
) -> Continuity:
    """Compare what the release jobs ship at ``base_ref`` and ``head_ref`` (``annotate``:
    with the changed lines annotations are placed on)."""
    from stagegate.ci import continuity as compare
    from stagegate.git.repo import open_repository
    from stagegate.validation import load_at

    repo = open_repository(Path(file).parent)
    base = repo.resolve(base_ref)
    head = repo.resolve(head_ref or "HEAD")
    prefix = repo.rel(Path(file)).parent
    declared = [*_accept_file(accept), *_pull_request(environ)]
    readings = (Reading(), Reading())
    model = load_at(file, repo.source(base, prefix), "the base")
    if model is not None:
        after = load_at(file, repo.source(head, prefix), "the head")
        stage = after.stage if after is not None else model.stage
        head_model = model if model.stage_def(stage) is not None or stage == 0 else after
        readings = (
            Reading(migration=model, stage=model.stage),
            Reading(migration=head_model, stage=stage),
        )
        if stage != model.stage:
            declared += flip_acceptances(model, stage, prefix)
    return compare.continuity(
        repo, (base_ref, head_ref), readings, accept=declared, strict=strict, annotate=annotate
    )


def flip_acceptances(migration: Migration, target: int, prefix: PurePosixPath) -> list[Acceptance]:
    """What a flip to ``target`` may change in the real releases: each ``add`` (gained) and
    ``drop`` (lost) of its ``release_changes`` (the base's), for the release jobs the
    releases claiming the entry's tag list in `jobs` (any release job where none does), or
    for the release job an entry names (`job: PATH#JOB`)."""
    from stagegate.commands.releases_declared import job_text
    from stagegate.engine.resolve import tag_claimed

    definition = migration.stage_def(target)
    if definition is None:
        return []
    out: list[Acceptance] = []
    for entry in definition.release_changes:
        claiming = [r for r in migration.releases.values() if tag_claimed(r, entry.tag)]
        jobs = frozenset(
            job_text(ref.path, ref.job)
            for release in claiming
            for ref in migration.workflows.jobs_of(release)
        )
        where = f"{definition.file} (release_changes of stage {target}, tag {entry.tag})"
        for direction, globs in (("gained", entry.add), ("lost", entry.drop)):
            out += [
                Acceptance(direction=direction, glob=g.text, where=where, releases=jobs)
                for g in globs
            ]
    for job_entry in definition.job_changes:  # a real release job named (`job: PATH#JOB`)
        named = frozenset({job_text(job_entry.job.path, job_entry.job.job)})
        where = f"{definition.file} (release_changes of stage {target}, job {job_entry.job.text})"
        for direction, globs in (("gained", job_entry.add), ("lost", job_entry.drop)):
            out += [
                Acceptance(direction=direction, glob=g.text, where=where, releases=named)
                for g in globs
            ]
    return out


def _accept_file(path: str | None) -> list[Acceptance]:
    if path is None:
        return []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(
            f"--accept {path}: cannot read it ({getattr(error, 'strerror', None) or error}); "
            "name a text file of Release-Change: lines."
        ) from None
    return acceptances(text, path)


def _pull_request(environ: Mapping[str, str]) -> list[Acceptance]:
    """The ``Release-Change:`` lines of the pull request's description, on a pull request
    event (``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH``, as GitHub's runner sets them)."""
    if environ.get("GITHUB_EVENT_NAME") not in PULL_REQUEST_EVENTS:
        return []
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return []
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InvalidInput(
            [
                Problem(
                    Loc(path, 1, 1),
                    f"GITHUB_EVENT_PATH: cannot read the pull request event ({error}); run "
                    "continuity where GitHub's runner sets it, or unset GITHUB_EVENT_NAME.",
                )
            ]
        ) from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    body = pull.get("body") if isinstance(pull, dict) else None
    if not isinstance(body, str):
        return []
    return acceptances(body, path, shown="the pull request's description")
