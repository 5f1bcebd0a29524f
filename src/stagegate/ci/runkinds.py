"""Run kinds: the events a job runs on (``push`` to a branch or a tag, ``pull_request``,
``release``, ``workflow_dispatch``, ...), from its workflow's ``on:`` and its ``if:`` on
``github.event_name`` and ``github.ref``. ``continuity`` finds release jobs by them;
``drift`` compares an item that says ``events:`` once per event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stagegate.ci.files import triggers_of
from stagegate.errors import LocatedError
from stagegate.model import ghexpr
from stagegate.model.ghexpr import Sym, Unknown, Value

RELEASE_EVENTS = frozenset({"push-tag", "release", "workflow_dispatch", "create", "workflow_run"})
"""The run kinds that can carry a tag ref: a job that can run on one of them and publishes
is a release job, whatever else its ``if:`` admits."""

PULL_REQUEST = "pull_request"
READ_KINDS = RELEASE_EVENTS | {PULL_REQUEST}
"""The run kinds the ``if:``s of jobs and steps are decided for: those that can carry a
tag, and ``pull_request``, the release run of a job that publishes on no other (a
workflow that merges and tags the release pull request, then publishes:
``edgedb/action-release``)."""


def workflow_events(data: Mapping[str, Any]) -> set[str]:
    """The run kinds a workflow's ``on:`` starts it for."""
    on = data.get("on")
    out: set[str] = set()
    for trigger in sorted(triggers_of(dict(data))):
        spec = on.get(trigger) if isinstance(on, dict) else None
        if trigger == "push":
            if isinstance(spec, dict) and ("tags" in spec or "tags-ignore" in spec):
                out.add("push-tag")
                if "branches" in spec or "branches-ignore" in spec:
                    out.add("push-branch")
            elif isinstance(spec, dict) and ("branches" in spec or "branches-ignore" in spec):
                out.add("push-branch")
            else:
                out |= {"push-tag", "push-branch"}
        elif trigger in ("pull_request", "pull_request_target"):
            out.add("pull_request")
        else:
            out.add(trigger)
    return out


_EVENT_NAME = {"push-tag": "push", "push-branch": "push"}
"""The ``github.event_name`` of a run kind (the kind itself where not listed)."""
_TAG_REF = Sym(("refs/tags/", Unknown("github.ref", "the tag's name")))
_BRANCH_REF = Sym(("refs/heads/", Unknown("github.ref", "the branch's name")))
_PULL_REF = Sym(("refs/pull/", Unknown("github.ref", "the pull request's number")))


def github_value(kind: str, path: str) -> Value:
    """What ``github.*`` is known to be on a run of ``kind`` (NotImplemented: no more than
    on any run)."""
    name = path.lower()
    if name == "github.event_name":
        return _EVENT_NAME.get(kind, kind)
    tag = kind in ("push-tag", "release")
    branch = kind in ("push-branch", "schedule", "merge_group")
    if name == "github.ref":
        return (
            _TAG_REF
            if tag
            else _BRANCH_REF
            if branch
            else _PULL_REF
            if kind == "pull_request"
            else Unknown(path, f"the ref of a {kind} run")
        )
    if name == "github.ref_type":
        return (
            "tag"
            if tag
            else "branch"
            if branch or kind == "pull_request"
            else Unknown(path, f"the ref type of a {kind} run")
        )
    return NotImplemented


def can_run(kind: str, condition: Any) -> bool:
    """Whether a job whose ``if:`` is ``condition`` may run on a run of ``kind``: False only
    where the condition is decidedly false there (three-valued: what it reads that is
    not known for the kind, a label, an output, leaves it possible)."""
    if condition is None:
        return True
    if isinstance(condition, bool):
        return condition
    text = str(condition).strip()
    if text.startswith("${{") and text.endswith("}}") and text.count("${{") == 1:
        text = text[3:-2]
    elif "${{" in text:
        return True  # text around an expression: a non-empty string, true
    try:
        node = ghexpr.parse(text)
    except LocatedError:
        return True  # drift and the reader report it; here it decides nothing

    def lookup(path: str) -> Value:
        if path.lower().startswith("github."):
            return github_value(kind, path)
        return Unknown(path, "not known when deciding the run kinds of a job")

    return ghexpr.truth(ghexpr.Evaluator(lookup)(node)) is not False


def job_events(events: set[str], condition: Any) -> set[str]:
    """The run kinds a job runs on: its workflow's, each kept where its ``if:`` may hold."""
    return {kind for kind in events if can_run(kind, condition)}
