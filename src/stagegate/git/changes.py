"""What a change is, as `affected` and the check `reuse-safe` read it: the paths that differ
between the merge base and the head, the symbolic links of both trees, and the
baseline run the planning job found (a small JSON file it writes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stagegate.engine.affected import Baseline
from stagegate.engine.paths import link_target
from stagegate.errors import GitError, InvalidInput, Loc, Problem
from stagegate.git.repo import Repository
from stagegate.model import Migration
from stagegate.records import record

_SHAPE = (
    'a JSON object {"sha": "<the baseline run\'s 40-hex commit, or null when no run was '
    'found>", "artifacts": ["<artifact name>", ...]}'
)
MAX_BASELINE_BYTES = 64 << 20


def _bad(file: str, message: str, line: int = 1, column: int = 1) -> InvalidInput:
    return InvalidInput([Problem(Loc(file, line, column), message)])


def read_baseline(file: str) -> tuple[str | None, frozenset[str]]:
    """The baseline file's commit and artifact names; InvalidInput, located, otherwise."""
    path = Path(file)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BASELINE_BYTES + 1)
    except OSError as error:
        raise _bad(
            file,
            f"cannot read the baseline file: {error.strerror or error}; write it in the "
            f"planning job before running affected ({_SHAPE})",
        ) from None
    if len(data) > MAX_BASELINE_BYTES:
        raise _bad(file, f"the baseline file is larger than {MAX_BASELINE_BYTES >> 20} MB")
    try:
        value: Any = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise _bad(file, f"not UTF-8 text ({error.reason}); write {_SHAPE}") from None
    except json.JSONDecodeError as error:
        raise _bad(
            file, f"not JSON: {error.msg}; write {_SHAPE}", error.lineno, error.colno
        ) from None
    if not isinstance(value, dict) or set(value) - {"sha", "artifacts", "run"}:
        extra = sorted(set(value) - {"sha", "artifacts", "run"}) if isinstance(value, dict) else []
        what = f"unknown keys {extra}" if extra else "not an object"
        raise _bad(file, f"{what}; write {_SHAPE}")
    sha = value.get("sha")
    artifacts = value.get("artifacts", [])
    if sha is not None and (
        not isinstance(sha, str) or len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha)
    ):
        raise _bad(file, f"sha: {sha!r} is not a 40-hex commit id (lower case) nor null")
    if not isinstance(artifacts, list) or not all(isinstance(a, str) for a in artifacts):
        raise _bad(file, "artifacts: not a list of artifact names (strings)")
    return sha, frozenset(artifacts)


def _baseline(repo: Repository, file: str, merge_base: str, head: str) -> Baseline:
    sha, artifacts = read_baseline(file)
    if sha is None or sha == merge_base:
        return Baseline(source=file, sha=sha, artifacts=artifacts)
    try:
        known = repo.resolve(sha)
    except GitError:
        return Baseline(
            source=file,
            sha=sha,
            artifacts=artifacts,
            problem=(
                f"its commit {sha[:12]} is not in this clone, so what changed since it is "
                f"unknown (fetch it: `git fetch origin {sha}`)"
            ),
        )
    return Baseline(
        source=file, sha=sha, artifacts=artifacts, since=tuple(repo.changed_paths(known, head))
    )


def model_paths(repo: Repository, migration: Migration) -> tuple[str, ...]:
    """The migration's own files from the top of the repository: its file, and its
    stages folder (ending in ``/``)."""
    from pathlib import PurePosixPath

    folder = repo.rel(migration.root).as_posix()
    top = PurePosixPath("" if folder == "." else folder)
    stages = (top / migration.stages_dir).as_posix()
    return ((top / Path(migration.file).name).as_posix(), stages.rstrip("/") + "/")


@record
class Change:
    merge_base: str
    head: str
    base: str
    changed: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    baseline: Baseline | None


def gather(repo: Repository, base: str, head: str = "HEAD", baseline: str | None = None) -> Change:
    """The change from the merge base of ``base`` and ``head`` to ``head``; GitError (exit
    3, saying how to fetch) for a ref the clone does not have."""
    base_sha = repo.resolve(base)
    head_sha = repo.resolve(head)
    merge_base = repo.merge_base(base_sha, head_sha, shown=(base, head))
    changed = repo.changed_paths(merge_base, head_sha)
    links: list[tuple[str, str]] = []
    if changed:
        for link, text in repo.links(head_sha):
            target = link_target(link, text)
            if target is not None:
                links.append((link, target))
    found = _baseline(repo, baseline, merge_base, head_sha) if baseline is not None else None
    return Change(
        merge_base=merge_base,
        head=head_sha,
        base=base_sha,
        changed=tuple(changed),
        links=tuple(links),
        baseline=found,
    )
