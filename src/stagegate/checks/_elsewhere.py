"""A model read in a repository other than the one it describes: the checks that read the
workflows and the flags' readers (``workflows``, ``flags-wired``) take ``requires``.

stagegate's worked example models NVIDIA cuda-python and lives at the top of stagegate's
own repository, whose workflows are stagegate's: compared with them, every item would be
missing. ``requires`` names files only the described repository has; where one of them is
missing *and* no job the model's ``jobs`` entries name is in the workflows there, the
check says so and is not run. Both conditions: deleting a marker file in the described
repository does not turn the check off while the jobs it names are there.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from stagegate.checks.base import Context, Result, result
from stagegate.errors import InvalidInput, Problem
from stagegate.model import Check, Migration

if TYPE_CHECKING:
    from stagegate.ci.files import Files

REQUIRES = {
    "type": "array",
    "minItems": 1,
    "uniqueItems": True,
    "items": {"type": "string", "minLength": 1, "maxLength": 1000},
    "description": (
        "Files (from the top of the repository) that the repository the model describes "
        "has: where one is missing and no job the model's `jobs` entries name is in the "
        "workflows read, the repository is another one and the check is not run."
    ),
}


def validate(migration: Migration, check: Check) -> list[Problem]:
    """A check kind's ``validate`` of ``requires`` (``workflows``, ``flags-wired``)."""
    return validate_requires(check)


def validate_requires(check: Check) -> list[Problem]:
    """Each ``requires`` entry is a path inside the repository, from its top."""
    problems = []
    for path in check.args.get("requires", ()):
        posix = PurePosixPath(path)
        if posix.is_absolute() or ".." in posix.parts or path.endswith("/"):
            problems.append(
                Problem(
                    check.loc,
                    f"{check.kind} requires: {path!r} is not a file inside the repository; "
                    "name one from its top, such as cuda_python/pyproject.toml.",
                )
            )
    return problems


def elsewhere(ctx: Context, check: Check) -> str | None:
    """Why the check is not run here (None: it is): a file ``requires`` lists is missing and
    no job a `jobs` entry of the model names is in this repository's workflows."""
    required = check.args.get("requires")
    if not required:
        return None
    from stagegate.ci.files import workflow_root

    files = workflow_root(ctx.root, ctx.migration.root)
    missing = [path for path in required if not files.is_file(path)]
    if not missing:
        return None
    settings = ctx.migration.workflows
    named = [ref.text for item in ctx.migration.items() for ref in settings.jobs_of(item)]
    if any(_is_job(files, ref, settings.paths) for ref in named):
        return None
    where = f", {check.loc.file}:{check.loc.line}" if check.loc else ""
    return (
        f"not run: this repository has no {missing[0]} (the check's requires{where}) and none of the "
        f"{len(set(named))} jobs the model's `jobs` entries name: it is not the repository "
        "the model describes"
    )


def not_run(ctx: Context, check: Check, why: str) -> Result:
    """The result of a check ``elsewhere`` turns off: passed, saying why it did not look."""
    return result(ctx, check, [], why)


def _is_job(files: Files, ref: str, paths: tuple[str, ...]) -> bool:
    """Whether the `jobs` entry ``ref`` (``PATH#JOB``, globs allowed) names a job of a
    workflow file of this repository. A file that cannot be read counts as naming it:
    the check then runs and says what is wrong with the file."""
    from stagegate.ci.files import discover

    rel, _, job = ref.partition("#")
    candidates = (
        [r for r in discover(files.root, paths) if fnmatch.fnmatchcase(r, rel)]
        if any(c in rel for c in "*?[")
        else [rel]
    )
    for candidate in candidates:
        if not files.is_file(candidate):
            continue
        try:
            jobs = files.workflow(candidate).jobs
        except InvalidInput:
            return True
        if any(fnmatch.fnmatchcase(j, job) if "*" in job else j == job for j in jobs):
            return True
    return False
