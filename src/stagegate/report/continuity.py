"""`continuity`: what each release job ships at the base and at the head, as text, JSON
and GitHub annotations on the head's changed workflow lines."""

from __future__ import annotations

from typing import Any

from stagegate.ci.continuity import Commit, Continuity, ReleaseChange
from stagegate.ci.shipped import Context
from stagegate.errors import Loc
from stagegate.report import Output, Renderers, annotated, echo_json, echo_text, github
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
                "base": [context_json(c) for c in r.base],
                "head": [context_json(c) for c in r.head],
                "lost": [context_json(c) for c in r.lost],
                "gained": [context_json(c) for c in r.gained],
                "renamed": [
                    {"context": context_json(n.context), "from": n.before, "to": n.after}
                    for n in r.renamed
                ],
                "selects_nothing": r.empty,
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
    }


def _ctx(ctx: Context) -> str:
    return f"{ctx.label()} ({ctx.name!r}, {ctx.loc.at})"


def _release_lines(r: ReleaseChange) -> list[str]:
    release = r.release
    events = ", ".join(release.events)
    head = (
        "gone at the head"
        if not r.in_head
        else f"{counted(len(r.head), 'upload context')} "
        + ("reaches" if len(r.head) == 1 else "reach")
        + " its publish step"
    )
    base = "new at the head" if not r.in_base else f"{len(r.base)} at the base"
    where = f"{release.file}:{release.loc.line}"
    out = [f"release job {release.job} ({where}; runs on {events}): {head}, {base}"]
    if r.empty and r.base:
        out.append("  selects nothing: no upload of the run reaches what it publishes")
    elif r.empty and r.elsewhere:
        out.append(
            "  selects nothing at either commit: its files come from another run, which "
            "stagegate does not follow (the download at "
            + ", ".join(at.at for at in r.elsewhere)
            + ")"
        )
    elif r.empty and r.stranded:
        out.append(
            "  selects nothing at either commit: what its downloads take lands where its "
            "publish step does not read: " + ", ".join(_ctx(c) for c in r.stranded)
        )
    elif r.empty:
        out.append(
            "  selects nothing at either commit: no upload of the run reaches what it "
            "publishes (its files come from a script or another run stagegate does not read)"
        )
    out += [f"  lost: {_ctx(c)}" for c in r.lost]
    out += [f"  gained: {_ctx(c)}" for c in r.gained]
    out += [f"  renamed: {n.context.label()}: {n.before!r} -> {n.after!r}" for n in r.renamed]
    return out


def text(result: Continuity) -> str:
    out: list[str] = []
    for release in result.releases:
        out += _release_lines(release)
    out += [f"{f.loc.at}: {f.kind}: {f.message}" for f in result.findings]
    out += [f"{f.loc.at}: fixed at the head: {f.kind}: {f.message}" for f in result.resolved]
    out += [f"{u.loc.at}: unresolved {u.expression}: {u.reason}" for u in result.unresolved]
    lost = sum(len(r.lost) for r in result.releases)
    gained = sum(len(r.gained) for r in result.releases)
    renamed = sum(len(r.renamed) for r in result.releases)
    verdict = "ok" if result.ok else "FAILED"
    if not result.releases:
        out.append("no release job (tag push, release or workflow_dispatch) at either commit")
    out.append(
        f"continuity {_ref(result.base)} -> {_ref(result.head)}"
        f": {counted(len(result.releases), 'release job')}, {lost} lost, "
        f"{gained} gained, {renamed} renamed, {counted(len(result.findings), 'new finding')}: "
        f"{verdict}"
    )
    return "\n".join(out)


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
    found: list[str] = []
    now = {c.key: c for c in result.head_contexts}
    for r in result.releases:
        release = r.release
        at = Loc(release.file, release.loc.line, 1)
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
            found.append(
                github.annotation(
                    "error",
                    f"release job {release.job} no longer ships the upload of {ctx.label()} "
                    f"({ctx.name!r} at the base){also}",
                    _placed(
                        result,
                        at,
                        *(_culprits((there,)) if there else ()),
                        *_culprits(beside),
                    ),
                    "stagegate continuity: lost",
                )
            )
        for ctx in r.gained:
            found.append(
                github.annotation(
                    "error",
                    f"release job {release.job} now also ships the upload of {ctx.label()} ({ctx.name!r})",
                    _placed(result, ctx.loc, ctx.step_loc),
                    "stagegate continuity: gained",
                )
            )
        if r.empty and r.base and not r.lost:
            found.append(
                github.annotation(
                    "error",
                    f"release job {release.job} selects nothing",
                    _placed(result, at),
                    "stagegate continuity: selects nothing",
                )
            )
    found += [
        github.annotation(
            "error",
            f.message,
            _placed(result, f.loc, *_culprits(f.contexts)),
            f"stagegate continuity: {f.kind}",
        )
        for f in result.findings
    ]
    found += [
        github.annotation(
            "warning",
            f"unresolved {u.expression}: {u.reason}",
            u.loc,
            "stagegate continuity: unresolved",
        )
        for u in result.unresolved
    ]
    return "\n".join(found)


def _github(result: Continuity) -> Output:
    return annotated(workflow_commands(result), text(result), "stagegate continuity")


CONTINUITY: Renderers[Continuity] = {
    "text": echo_text(text),
    "json": echo_json(as_json),
    "github": _github,
}
