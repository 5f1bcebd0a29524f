"""`continuity`: what each release job ships at the base and at the head, as text, JSON
and GitHub annotations on the head's changed workflow lines."""

from __future__ import annotations

from typing import Any

from stagegate.ci.continuity import Commit, Continuity, ReleaseChange
from stagegate.ci.shipped import Context
from stagegate.errors import Loc
from stagegate.report import (
    Output,
    Renderers,
    annotated,
    echo_json,
    echo_text,
    github,
    single_lines,
)
from stagegate.words import counted


def context_json(ctx: Context) -> dict[str, Any]:
    return {
        "file": ctx.file,
        "job": ctx.job,
        "caller": ctx.caller or None,
        "matrix": dict(ctx.matrix),
        "name": ctx.name,
        "path": ctx.path,
    }


def as_json(result: Continuity) -> dict[str, Any]:
    return {
        "ok": result.ok,
        "base": result.base.sha,
        "head": result.head.sha,
        "releases": [
            {
                "file": r.release.file,
                "job": r.release.job,
                "line": r.release.loc.line,
                "events": list(r.release.events),
                "publishers": list(r.release.tools),
                "sources": list(r.release.sources),
                "compared": r.compared,
                "blind": [
                    {"file": b.loc.file, "line": b.loc.line, "reason": b.reason} for b in r.blind
                ],
                "base_blind": [
                    {"file": b.loc.file, "line": b.loc.line, "reason": b.reason}
                    for b in r.base_blind
                ],
                "foreign": [
                    {"file": f.loc.file, "line": f.loc.line, "what": f.what}
                    for f in (r.after.foreign if r.after else ())
                ],
                "base": [context_json(c) for c in r.base],
                "head": [context_json(c) for c in r.head],
                "lost": [context_json(c) for c in r.lost],
                "gained": [context_json(c) for c in r.gained],
                "renamed": [
                    {"context": context_json(n.context), "from": n.before, "to": n.after}
                    for n in r.renamed
                ],
                "moved": [
                    {
                        "context": context_json(m.context),
                        "change": m.direction,
                        "shipped_by": list(m.by),
                    }
                    for m in r.moved
                ],
                "accepted": [
                    {**context_json(c), "change": direction, "declared": where}
                    for direction, c, where in r.accepted
                ],
                "selects_nothing": r.empty,
                "publishes_nothing": [{"publisher": t, "base": n} for t, n in r.emptied],
                "wheels": _wheels_json(r),
                "duplicates": [
                    {
                        "project": d.project,
                        "identifiers": list(d.identifiers),
                        "contexts": [context_json(c) for c in d.contexts],
                    }
                    for d in r.new_duplicates
                ],
            }
            for r in result.releases
        ],
        "findings": [
            {"kind": f.kind, "file": f.loc.file, "line": f.loc.line, "message": f.message}
            for f in result.findings
        ],
        "resolved": [
            {"kind": f.kind, "file": f.loc.file, "line": f.loc.line, "message": f.message}
            for f in result.resolved
        ],
        "unresolved": [
            {"file": u.loc.file, "line": u.loc.line, "expression": u.expression, "reason": u.reason}
            for u in result.unresolved
        ],
        "unreadable": [
            {"workflow": u.file, "file": p.loc.file, "line": p.loc.line, "message": p.message}
            for u in result.unreadable
            for p in u.problems
        ],
    }


def _wheels_json(r: ReleaseChange) -> dict[str, Any] | None:
    if r.wheels is None:
        return None
    from stagegate.ci.wheels import compare

    return {
        **compare.as_json(r.wheels),
        "run": r.wheels_run or None,
        "accepted": [
            {"change": direction, "identifier": identifier, "declared": where}
            for direction, identifier, where in r.wheels_accepted
        ],
    }


def _wheel_lines(r: ReleaseChange) -> list[str]:
    """``  wheels: loses cp38-win32, cp38-win_amd64 (CIBW_SKIP at .github/...:31)``."""
    if r.wheels is None:
        return []
    from stagegate.ci.wheels import compare

    out = [f"  wheels: {line}" for line in compare.describe(r.wheels)]
    out += [
        f"  wheels accepted ({direction}): {identifier}, declared by {where}"
        for direction, identifier, where in r.wheels_accepted
    ]
    if r.wheels_blind:
        before = {
            (w.unresolved.loc, w.unresolved.reason)
            for c in (r.before.contexts if r.before else ())
            for w in c.wheels
            if w.unresolved is not None
        }
        out += list(
            dict.fromkeys(
                f"  wheels newly not computed: {u.reason} ({u.loc.at})"
                for u in r.wheels.unresolved
                if (u.loc, u.reason) not in before
            )
        )
    return out


def _ctx(ctx: Context, path: bool = False) -> str:
    """An upload context: its row, its artifact's name (and ``path``, where a name lost
    is also gained: the files it takes changed) and where it is."""
    taken = f", path {ctx.path!r}" if path else ""
    return f"{ctx.label()} ({ctx.name!r}{taken}, {ctx.loc.at})"


def _heading(r: ReleaseChange) -> str:
    release = r.release
    events = ", ".join(release.events)
    where = f"{release.file}:{release.loc.line}"
    if not r.compared:
        return f"release job {release.job} ({where}; runs on {events}): not compared"
    head = (
        "gone at the head"
        if not r.in_head
        else f"{counted(len(r.head), 'upload context')} "
        + ("reaches" if len(r.head) == 1 else "reach")
        + " its publish step"
    )
    base = "new at the head" if not r.in_base else f"{len(r.base)} at the base"
    run = f" in a {r.wheels_run} run (the wheels depend on the event)" if r.wheels_run else ""
    return f"release job {release.job} ({where}; runs on {events}): {head}{run}, {base}"


def _blind_lines(r: ReleaseChange) -> list[str]:
    new = {b.key for b in r.newly_blind}
    out = [
        f"  {'newly blind' if b.key in new else 'blind'}: {b.reason} ({b.loc.at})" for b in r.blind
    ]
    if r.base_blind and not r.blind:
        out.append(
            "  blind at the base, read at the head: "
            + "; ".join(f"{b.reason} ({b.loc.at})" for b in r.base_blind)
        )
    return out


def _release_lines(r: ReleaseChange) -> list[str]:
    out = [_heading(r), *_blind_lines(r)]
    if r.empty and r.base:
        out.append("  selects nothing: no upload of the run reaches what it publishes")
    elif r.empty and r.stranded:
        out.append(
            "  selects nothing at either commit: what its downloads take lands where its "
            "publish step does not read: " + ", ".join(_ctx(c) for c in r.stranded)
        )
    elif r.empty and r.compared:
        out.append(
            "  selects nothing at either commit: no upload of the run reaches what it "
            "publishes (its files come from a script or another run stagegate does not read)"
        )
    out += [f"  files from outside: {f.what} ({f.loc.at})" for f in r.new_foreign]
    out += [
        f"  {tool} publishes nothing: no upload of the run lands where it reads "
        f"({counted(n, 'upload context')} at the base; another publish step still takes them)"
        for tool, n in r.emptied
    ]
    both = {c.name for c in r.lost} & {c.name for c in r.gained}
    out += [f"  lost: {_ctx(c, c.name in both)}" for c in r.lost]
    out += [f"  gained: {_ctx(c, c.name in both)}" for c in r.gained]
    out += [f"  renamed: {n.context.label()}: {n.before!r} -> {n.after!r}" for n in r.renamed]
    out += [
        f"  moved: {_ctx(m.context)} {'is new' if m.direction == 'gained' else 'is gone'}; its wheels "
        f"{'shipped' if m.direction == 'gained' else 'ship'} in {', '.join(map(repr, m.by))} "
        f"{'at the base' if m.direction == 'gained' else 'at the head'}"
        for m in r.moved
    ]
    out += [f"  accepted ({d}): {_ctx(c)}, declared by {where}" for d, c, where in r.accepted]
    return out + _wheel_lines(r) + _duplicate_lines(r)


DUPLICATES_SHOWN = 3


def _duplicate_lines(r: ReleaseChange) -> list[str]:
    """The first wheels two uploads both carry in full, then how many more."""
    found = r.new_duplicates
    out = [f"  {_duplicate(d)}" for d in found[:DUPLICATES_SHOWN]]
    if len(found) > DUPLICATES_SHOWN:
        out.append(
            f"  one wheel from two uploads: {len(found) - DUPLICATES_SHOWN} more groups "
            "(--format json lists them)"
        )
    return out


def _duplicate(d: Any) -> str:
    """``one wheel from two uploads: a{..} and b{..} both carry cp310-win_amd64 (of .)``."""
    ids = ", ".join(d.identifiers[:4]) + (
        f" (+{len(d.identifiers) - 4})" if len(d.identifiers) > 4 else ""
    )
    who = " and ".join(_ctx(c) for c in d.contexts)
    return (
        f"one wheel from two uploads: {who} carry {ids} (of the project at {d.project}): "
        "one file name twice reaches the publish step (merged, one overwrites the other; "
        "uploaded, the index refuses the second)"
    )


def _unresolved_lines(result: Continuity) -> list[str]:
    """What cannot be evaluated where artifacts flow to a release: one line per kind."""
    kinds: dict[str, list[Any]] = {}
    for u in result.unresolved:
        kinds.setdefault(_kind(u.expression), []).append(u)
    out = []
    for kind, items in sorted(kinds.items()):
        first = items[0]
        more = f" and {len(items) - 1} more" if len(items) > 1 else ""
        out.append(
            f"unresolved where files flow to a release: {counted(len(items), kind)} "
            f"({first.loc.at}: {first.expression}: {first.reason}{more})"
        )
    return out


def _kind(expression: str) -> str:
    if expression.startswith("the if: of"):
        return "undecided if:"
    if expression.startswith("$("):
        return "command output"
    if "${{" in expression or "$" in expression:
        return "expression"
    return "unread step"


def text(result: Continuity) -> str:
    out: list[str] = []
    ordered = sorted(result.releases, key=lambda r: r.compared)  # the blind ones first
    for release in ordered:
        out += _release_lines(release)
    out += [f"{f.loc.at}: {f.kind}: {f.message}" for f in result.findings]
    out += [f"{f.loc.at}: fixed at the head: {f.kind}: {f.message}" for f in result.resolved]
    out += [
        f"{p.loc}: {u.file} is not read, its jobs are not compared: {p.message}"
        for u in result.unreadable
        for p in u.problems
    ]
    out += _unresolved_lines(result)
    lost = sum(len(r.lost) for r in result.releases)
    gained = sum(len(r.gained) for r in result.releases)
    renamed = sum(len(r.renamed) for r in result.releases)
    accepted = sum(len(r.accepted) + len(r.wheels_accepted) for r in result.releases)
    wheels = sum(len(r.wheels_lost) + len(r.wheels_gained) for r in result.releases)
    blind = sum(1 for r in result.releases if not r.compared)
    verdict = "ok" if result.ok else "FAILED"
    if not result.releases:
        out.append("no release job (tag push, release or workflow_dispatch) at either commit")
    extra = f", {wheels} wheels lost or gained" if wheels else ""
    extra += f", {accepted} accepted" if accepted else ""
    extra += f", {blind} not compared" if blind else ""
    out.append(
        f"continuity {_ref(result.base)} -> {_ref(result.head)}"
        f": {counted(len(result.releases), 'release job')}, {lost} lost, "
        f"{gained} gained, {renamed} renamed{extra}, "
        f"{counted(len(result.findings), 'new finding')}: {verdict}"
    )
    return single_lines(out)


def _ref(commit: Commit) -> str:
    short = commit.sha[:12]
    return short if commit.sha.startswith(commit.ref) else f"{commit.ref} ({short})"


def _placed(result: Continuity, loc: Loc, *more: Loc | None) -> Loc:
    """The first of ``loc`` and ``more`` on a line the head changed (where the diff shows
    it); else ``loc``."""
    for candidate in (loc, *more):
        if candidate is not None and candidate.line in result.changed.get(candidate.file, ()):
            return candidate
    return loc


def _culprits(contexts: tuple[Context, ...]) -> list[Loc | None]:
    return [at for c in contexts for at in (c.loc, c.step_loc)]


def workflow_commands(result: Continuity) -> str:
    """An ``::error`` per change, new finding and newly blind release, on the head's
    changed line that caused it where there is one; a ``::warning`` per old blind spot."""
    now = {c.key: c for c in result.head_contexts}
    found: list[str] = []
    for r in result.releases:
        found += _context_commands(result, r, now)
    found += [
        github.annotation(
            "error",
            f.message,
            _placed(result, f.loc, *_culprits(f.contexts)),
            f"stagegate continuity: {f.kind}",
        )
        for f in result.findings
    ]
    for r in result.releases:
        found += _release_commands(result, r)
    return "\n".join(found)


def _context_commands(result: Continuity, r: ReleaseChange, now: dict[Any, Context]) -> list[str]:
    """The lost and gained upload contexts of one release, and its selecting nothing."""
    release = r.release
    at = Loc(release.file, release.loc.line, 1)
    found = []
    for ctx in r.lost:
        there = now.get(ctx.key)
        # the cause, where its own lines did not change: what its download now also
        # takes for the publish step (a new upload elsewhere: one folder per artifact)
        beside = tuple(c for c in r.stranded if c.key != ctx.key)
        also = (
            f"; its download now also takes {', '.join(_ctx(c) for c in beside)}, and "
            "the files no longer land where the publish step reads them"
            if beside
            else ""
        )
        where = _placed(result, at, *(_culprits((there,)) if there else ()), *_culprits(beside))
        found.append(
            github.annotation(
                "error",
                f"release job {release.job} no longer ships the upload of {ctx.label()} "
                f"({ctx.name!r} at the base){also}",
                where,
                "stagegate continuity: lost",
            )
        )
    found += [
        github.annotation(
            "error",
            f"release job {release.job} now also ships the upload of {ctx.label()} ({ctx.name!r})",
            _placed(result, ctx.loc, ctx.step_loc),
            "stagegate continuity: gained",
        )
        for ctx in r.gained
    ]
    if r.empty and r.base and not r.lost:
        found.append(
            github.annotation(
                "error",
                f"release job {release.job} selects nothing",
                _placed(result, at),
                "stagegate continuity: selects nothing",
            )
        )
    return found


def _release_commands(result: Continuity, r: ReleaseChange) -> list[str]:
    """One release's blind spots, wheels lost or gained, and files from outside."""
    new = {b.key for b in r.newly_blind}
    found = [
        github.annotation(
            "error" if b.key in new or result.strict else "warning",
            f"release job {r.release.job} is not compared: {b.reason}",
            b.loc,
            "stagegate continuity: blind",
        )
        for b in r.blind
    ]
    if r.wheels is not None and (r.wheels_lost or r.wheels_gained):
        for cause in r.wheels.causes:
            at = cause.settings[0].loc if cause.settings else r.release.loc
            said = "; ".join(
                f"{verb} {', '.join(ids)}"
                for verb, ids in (("loses", cause.lost), ("gains", cause.gained))
                if ids
            )
            found.append(
                github.annotation(
                    "error",
                    f"release job {r.release.job} {said} ({cause.label})",
                    _placed(result, at),
                    "stagegate continuity: wheels",
                )
            )
    found += [
        github.annotation(
            "error",
            f"release job {r.release.job} gets {_duplicate(d)}",
            d.contexts[-1].loc,
            "stagegate continuity: one wheel from two uploads",
        )
        for d in r.new_duplicates
    ]
    found += [
        github.annotation(
            "error",
            f"release job {r.release.job} publishes files from outside the runs it reads: {f.what}",
            f.loc,
            "stagegate continuity: files from outside",
        )
        for f in r.new_foreign
    ]
    return found


def _github(result: Continuity) -> Output:
    return annotated(workflow_commands(result), text(result), "stagegate continuity")


CONTINUITY: Renderers[Continuity] = {
    "text": echo_text(text),
    "json": echo_json(as_json),
    "github": _github,
}
