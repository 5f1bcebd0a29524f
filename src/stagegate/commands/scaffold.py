"""Starting files: `init` (a migration, from the workflows or a skeleton) and `new-stage`.

``init --from-workflows`` writes what ``commands.draft`` drafts from the workflows. Every
file is written whole or not at all (temporary file, then rename).
"""

from __future__ import annotations

import re
from pathlib import Path

from stagegate.ci.files import discover
from stagegate.commands import draft
from stagegate.commands.draft import _loaded, comment, new_id, quote
from stagegate.errors import InvalidInput, UsageError
from stagegate.model import Migration

# --------------------------------------------------------------------------- init


def _skeleton(name: str) -> str:
    return f"""# A staged migration, checked by stagegate (`stagegate --help`). Every key is described
# in stagegate's docs/file-format.md; docs/adopt.md walks from a repository's workflows to
# a gate in CI (`stagegate init --from-workflows` writes this file from them).
# Fill in what your CI builds (producers), takes (consumers) and publishes (releases),
# then add stages with `stagegate new-stage "TITLE"` and check them with `stagegate check --all`.
version: 1
migration: {name}
summary: ""
stage: 0                      # the current stage; 0 is before the migration

axes: {{}}                      # values artifact names expand over, e.g.
#   py: ["312", "313"]           # a finite axis
#   sha: {{pattern: "[0-9a-f]{{40}}"}}   # an open axis: any string the regex matches

flags: {{}}                     # what the stages switch, e.g.
#   new-builds:
#     summary: Build the new wheels.
#     default: false

producers: {{}}                 # jobs that make artifacts, e.g.
#   wheels:
#     artifacts: ["pkg-python{{py}}-{{sha}}"]
#     jobs: [".github/workflows/build.yml#build"]
#     paths: ["src/**"]         # what it builds from: `stagegate affected` rebuilds it only
#                               # when a change touches one (without paths: on every change)
#     legacy:                   # what it leaves behind once a stage retires it, for
#       paths: [".github/workflows/old-build.yml"]   # `stagegate audit` to find

consumers: {{}}                 # jobs that take artifacts, e.g.
#   tests:
#     inputs:
#       - select: "pkg-python{{py}}-*"

releases: {{}}                  # tag-triggered publishing, e.g.
#   pkg:
#     tags: ["v*"]
#     select: ["pkg-python*"]

invariants: []                # checks at every stage, e.g.
#   - check: workflows          # the model against the real workflows (stagegate drift)
"""


def init(file: str, *, from_workflows: bool, force: bool) -> list[Path]:
    """Write a starting migration (and an empty stages folder); the paths written."""
    from stagegate.fs import write_atomic
    from stagegate.load.sources import STAGE_FILE

    path = Path(file)
    root = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"{file} is a folder; pass the migration file to write with -f FILE.")
    if path.exists() and not force:
        raise UsageError(
            f"{file} exists; stagegate init never overwrites it: pass --force to replace it, "
            "or -f OTHER.yaml to write another file."
        )
    stages = root / "stages"
    if stages.is_dir() and any(STAGE_FILE.fullmatch(p.name) for p in stages.iterdir()):
        raise UsageError(
            f"{stages} already holds stage files, which a new migration at stage 0 would not "
            "match; move them away first."
        )
    name = new_id(root.resolve().name, set())
    if from_workflows:
        from stagegate.ci.files import workflow_root
        from stagegate.model import DEFAULT_WORKFLOW_PATHS

        found = workflow_root(root)
        if not discover(found.root, DEFAULT_WORKFLOW_PATHS):
            raise UsageError(
                f"no workflow files in {found.shown('.github/workflows')}; run init without "
                "--from-workflows for a skeleton."
            )
        text = draft.from_workflows(root, file, name)
    else:
        text = _skeleton(name)
    _check_written(text, path)
    stages.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return [path, stages]


def _check_written(text: str, path: Path) -> None:
    """What init writes must load, with its stage files, before anything is written."""
    _loaded(text, path)


# --------------------------------------------------------------------------- new-stage


SLUG_LENGTH = 40
"""How long a stage file's slug grows: whole words of the title while they fit."""


def _slug(title: str) -> str:
    """The title's words, lower case, joined by ``-``: as many whole words as fit in
    ``SLUG_LENGTH`` characters (at least the first, whole up to twice that), so that a
    file name never ends in a cut word."""
    words = re.sub(r"[^a-z0-9]+", " ", title.lower()).split()
    if not words:
        return "stage"
    slug = words[0][: SLUG_LENGTH * 2]
    for word in words[1:]:
        if len(slug) + 1 + len(word) > SLUG_LENGTH:
            break
        slug += "-" + word
    return slug


def new_stage(
    migration: Migration, title: str, before: int | None = None, *, from_workflows: bool = False
) -> Path:
    """Write the next numbered stage file (or one inserted before stage ``before``, the
    later stages renumbered) with a commented skeleton; its path."""
    from stagegate.fs import write_atomic
    from stagegate.validation import load

    title = " ".join(title.split())
    if not title:
        raise UsageError('give the stage a title: stagegate new-stage "Build the new wheels".')
    flags = list(migration.flags)
    example = flags[0] if flags else "some-flag"
    if before is not None and from_workflows:
        raise UsageError(
            "new-stage --from-workflows writes the next stage (after the last); drop --before."
        )
    if before is not None:
        from stagegate.commands.insert import insert_stage

        return insert_stage(
            migration,
            _slug(title),
            before,
            lambda number: _stage_text(number, title, example, migration),
        )
    number = migration.last + 1
    width = max([2, *(len(Path(s.file).name.split("-", 1)[0]) for s in migration.stages)])
    folder = migration.root / migration.stages_dir
    path = folder / f"{number:0{width}d}-{_slug(title)}.yaml"
    if from_workflows:
        from stagegate.commands.autostage import stage_from_workflows

        return stage_from_workflows(migration, title, number, path)
    if path.exists():
        raise UsageError(f"{path} exists; remove it or choose another title.")
    text = _stage_text(number, title, example, migration)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    try:
        load(migration.file)
    except InvalidInput:
        path.unlink(missing_ok=True)
        raise
    return path


EXAMPLE_CHECKS = (
    ("flags-wired", "CI reads each flag this stage flips"),
    ("retired", "what this stage retires is gone from the repository"),
    ("workflows", "the model against the workflows (stagegate drift)"),
    ("inputs-satisfied", "each consumer's inputs are made by an active producer"),
)
"""Checks the skeleton of a stage suggests, those the migration has as invariants left out
(they run at every stage already)."""


def _stage_text(number: int, title: str, example: str, migration: Migration | None = None) -> str:
    kinds = {c.kind for c in migration.invariants} if migration is not None else set()
    checks = [
        f"{f'#   - check: {kind}':<31}# {why}" for kind, why in EXAMPLE_CHECKS if kind not in kinds
    ]
    tag = next(
        (
            str(c.args["tag"])
            for c in (migration.invariants if migration is not None else ())
            if c.kind == "release-continuity" and "tag" in c.args
        ),
        "v1.0.0",
    )
    return f"""# Stage {number}: {comment(title)}
# Set the flags this stage changes, list its checks, then `stagegate check --stage {number}`;
# flip to it with `stagegate advance` once the stage before it is current.
stage: {number}
title: {quote(title)}
# outcome: The useful state once this stage is merged.
set: {{}}
#   {example}: true
# reversible: false            # rollback refuses to go below this stage
# release_changes:             # what this stage changes in a release's selection, on purpose
{f"#   - tag: {quote(tag)}":<30} # the release claiming this tag
#     add: ["new-artifact-*"]  # names it selects from this stage on
acceptance: []
""" + "".join(line + "\n" for line in checks[:2])
