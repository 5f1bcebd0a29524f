"""Run kinds: the events a job runs on (``push`` to a branch or a tag, ``pull_request``,
``release``, ``workflow_dispatch``, ...), from its workflow's ``on:`` and its ``if:`` on
``github.event_name`` and ``github.ref``. ``continuity`` finds release jobs by them;
``drift`` compares an item that says ``events:`` once per event."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from stagegate.ci.files import triggers_of

RELEASE_EVENTS = frozenset({"push-tag", "release", "workflow_dispatch"})
"""A job that runs on one of these (and publishes, or downloads for nothing else) is a
release job."""


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


_EVENT_IS = re.compile(r"github\.event_name\s*==\s*['\"]([a-z_]+)['\"]")
_EVENT_NOT = re.compile(r"github\.event_name\s*!=\s*['\"]([a-z_]+)['\"]")
_TAG_REF = re.compile(
    r"(?P<neg>!\s*)?(?:startsWith\(\s*github\.(?:event\.)?ref\s*,\s*['\"]refs/tags"
    r"|contains\(\s*github\.ref\s*,\s*['\"]refs/tags"
    r"|github\.ref_type\s*==\s*['\"]tag['\"])"
)


def _event_names(name: str, events: set[str]) -> set[str]:
    if name == "push":
        return events & {"push-tag", "push-branch"}
    if name == "pull_request_target":
        return events & {"pull_request"}
    return events & {name}


def job_events(events: set[str], condition: Any) -> set[str]:
    """The run kinds a job runs on: its workflow's, narrowed by what its ``if:`` requires
    of ``github.event_name`` and ``github.ref``."""
    if not isinstance(condition, str):
        return set(events) if condition is not False else set()
    text = condition
    named = _EVENT_IS.findall(text)
    if named and "!" not in text.split("github.event_name")[0][-2:]:
        kept: set[str] = set()
        for name in named:
            kept |= _event_names(name, events)
        events = kept
    for name in _EVENT_NOT.findall(text):
        events = events - _event_names(name, events)
    for found in _TAG_REF.finditer(text):
        if found.group("neg"):
            events = events - {"push-tag", "release"}
        else:
            events = events & {"push-tag", "release", "workflow_dispatch"}
    return events
