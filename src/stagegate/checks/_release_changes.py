"""The meaning checks of the stages' ``release_changes``, which only the checks can judge.

A planned change names a tag; some release must claim it (a glob match, decided by
``match``), and some ``release-continuity`` check must run over the change, or nothing
ever checks it. The loader is handed ``problems`` (see ``validation``)."""

from __future__ import annotations

from stagegate.engine.resolve import tag_claimed
from stagegate.errors import Problem
from stagegate.load.rules import Located
from stagegate.load.yamlsrc import json_path
from stagegate.model import Migration
from stagegate.words import suggest


def problems(migration: Migration, files: Located) -> list[Problem]:
    """Tags of ``release_changes`` that no release claims, or that no check holds."""
    found: list[Problem] = []
    releases = list(migration.releases.values())
    for stage, doc in zip(migration.stages, files.stages, strict=True):
        # the entries naming a `tag` (those naming a real `job` are verify-pr's to hold)
        tagged = [i for i, spec in enumerate(doc.data.get("release_changes", ())) if "tag" in spec]
        for i, change in zip(tagged, stage.release_changes, strict=True):
            path = ("release_changes", i, "tag")
            if not any(tag_claimed(r, change.tag) for r in releases):
                tags = [t for r in releases for t in r.tags]
                hint = suggest(change.tag, tags)
                message = (
                    f"unknown tag {change.tag!r}: no release's `tags` claims it{hint or ''}; "
                    "name a tag of the release whose selection this stage changes."
                )
            elif not _held(migration, stage.number, change.tag):
                message = (
                    f"no release-continuity check holds this planned change: none of a tag "
                    f"of this release runs at stage {stage.number} with `since` below it; "
                    f"add one to invariants (`- check: release-continuity` with `tag: "
                    f"{change.tag}`), or the change is never checked."
                )
            else:
                continue
            found.append(Problem(doc.loc(path), message, json_path(path)))
    return found


def _held(migration: Migration, stage: int, tag: str) -> bool:
    """Whether some release-continuity check covers a planned change of ``stage`` to the
    release claiming ``tag``: it runs at that stage (an invariant, or the acceptance of
    that stage or a later one) from a `since` below it, for a tag of the same release."""
    runs = [(c, True) for c in migration.invariants]
    runs += [(c, s.number >= stage) for s in migration.stages for c in s.acceptance]
    for check, reaches in runs:
        other = check.args.get("tag")
        if check.kind != "release-continuity" or not reaches or not isinstance(other, str):
            continue
        since = check.args.get("since", 0)
        if not isinstance(since, int) or since >= stage:
            continue
        if other == tag or any(
            tag_claimed(r, other) and tag_claimed(r, tag) for r in migration.releases.values()
        ):
            return True
    return False
