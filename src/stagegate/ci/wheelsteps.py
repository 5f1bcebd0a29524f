"""The wheels each upload context of a tree's workflows carries, and how two trees
differ: ``ci.builds`` read by the shipping reader (``ci.ships``), one reading per tree.

``continuity`` compares releases with the same pieces; these functions answer for every
upload of a tree, paired by workflow file, job, matrix row and artifact name (what is
left, by where it runs), as ``bench/`` and the tests of ``ci.wheels`` ask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stagegate.ci.wheels import compare as wheels_compare
from stagegate.ci.wheels.model import Wheels
from stagegate.errors import Loc
from stagegate.records import record


@record(kw_only=True)
class Upload:
    """One upload context and the build steps whose wheels it carries."""

    loc: Loc
    job: str  # PATH#JOB
    callers: tuple[str, ...]
    matrix: tuple[tuple[str, str], ...]
    name: str
    path: str
    wheels: tuple[Wheels, ...]
    place: tuple[Any, ...] = ()
    """Where it runs apart from its values: the matrix row's index, the upload's order."""

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.job, self.callers, self.matrix, self.name)


def uploads(root: Path, paths: Sequence[str] | None = None, *, tool: bool = True) -> list[Upload]:
    """Each upload of the workflows under ``root`` with the wheels it carries."""
    from stagegate.ci.files import Files, discover
    from stagegate.ci.ships import ShipReader, bare_migration
    from stagegate.model import DEFAULT_WORKFLOW_PATHS

    files = Files(root)
    reader = ShipReader(bare_migration(root), files)
    reader.builds.tool = tool
    reader.run(discover(files.source, paths or DEFAULT_WORKFLOW_PATHS))
    out: list[Upload] = []
    seen: dict[tuple[str, str], int] = {}
    for ctx in reader.contexts:
        job = f"{ctx.file}#{ctx.job}"
        place = seen.get((job, ctx.caller), 0)
        seen[(job, ctx.caller)] = place + 1
        out.append(
            Upload(
                loc=ctx.loc,
                job=job,
                callers=(ctx.caller,) if ctx.caller else (),
                matrix=tuple(sorted(ctx.matrix)),
                name=ctx.name,
                path=ctx.path,
                wheels=tuple(ctx.wheels),
                place=(job, ctx.caller, place),
            )
        )
    return out


def shipped(root: Path, *, tool: bool = True) -> dict[tuple[Any, ...], tuple[Upload, list[Wheels]]]:
    """Each upload context that carries wheels, with what its build steps ship."""
    return {u.key: (u, list(u.wheels)) for u in uploads(root, tool=tool) if u.wheels}


def pairs(
    before: Mapping[tuple[Any, ...], tuple[Upload, list[Wheels]]],
    after: Mapping[tuple[Any, ...], tuple[Upload, list[Wheels]]],
) -> list[tuple[tuple[Any, ...], list[Wheels], list[Wheels]]]:
    """Base and head uploads paired by job, matrix row and name; what is left, by where
    it runs (a runner label in the row or the name changes neither's place)."""
    out = [(key, before[key][1], after[key][1]) for key in before.keys() & after.keys()]
    rest_before = {v[0].place: k for k, v in before.items() if k not in after}
    rest_after = {v[0].place: k for k, v in after.items() if k not in before}
    for place in rest_before.keys() | rest_after.keys():
        b, a = rest_before.get(place), rest_after.get(place)
        key = a if a is not None else b
        assert key is not None
        out.append((key, before[b][1] if b is not None else [], after[a][1] if a is not None else []))
    return out


def overall(base: Path, head: Path, *, tool: bool = True) -> wheels_compare.Change:
    """What every upload of the workflows ships together, base against head (a release
    that takes every upload: ``compare.release``)."""
    found = pairs(shipped(base, tool=tool), shipped(head, tool=tool))
    return wheels_compare.release([(b, h) for _key, b, h in found], tool=tool)


def changes(base: Path, head: Path, *, tool: bool = True) -> dict[tuple[Any, ...], wheels_compare.Change]:
    """The upload contexts whose wheels differ between two trees (or cannot be compared),
    by the head's key (the base's where the head has none)."""
    out: dict[tuple[Any, ...], wheels_compare.Change] = {}
    for key, b, h in pairs(shipped(base, tool=tool), shipped(head, tool=tool)):
        change = wheels_compare.compare(b, h, tool=tool)
        if change.changed or change.unresolved:
            out[key] = change
    return out
