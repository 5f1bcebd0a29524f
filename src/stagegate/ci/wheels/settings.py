"""Reading deciders: where one is not known, resolution stops there (``Stop``), naming it."""

from __future__ import annotations

from collections.abc import Mapping

from stagegate.ci.transfers import Unresolved
from stagegate.ci.wheels.model import Setting
from stagegate.ci.wheels.runners import platform_of
from stagegate.errors import Loc


class Stop(Exception):
    """Resolution cannot go on: the setting at fault and why. ``certain``: cibuildwheel
    itself stops on it (the step fails and builds nothing), not a value stagegate does
    not know."""

    def __init__(self, loc: Loc, expression: str, reason: str, *, certain: bool = False) -> None:
        super().__init__(reason)
        self.unresolved = Unresolved(loc=loc, expression=expression, reason=reason)
        self.certain = certain


def runner(found: Mapping[str, Setting]) -> tuple[str, str]:
    """The runner's platform and architecture (cibuildwheel's names)."""
    setting = found["runner"]
    if setting.value is None:
        raise Stop(setting.loc, setting.name, setting.why or "the runner is not known")
    known = platform_of(setting.value)
    if isinstance(known, str):
        raise Stop(setting.loc, setting.name, known)
    return known


def first(found: Mapping[str, Setting], *keys: str) -> tuple[Setting, str] | None:
    """The first of ``keys`` that is set, with its text; ``Stop`` where it is not known."""
    for key in keys:
        setting = found.get(key)
        if setting is None:
            continue
        if setting.value is None:
            raise Stop(setting.loc, setting.name, setting.why or f"{setting.name} is not known")
        return setting, setting.value.strip()
    return None
