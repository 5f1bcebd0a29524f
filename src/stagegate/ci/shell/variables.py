"""Where a shell variable's value comes from: a bind for this job or file, then the
script's own known value, then a bare bind, then the script's unknown value, then the
runner's own variables (``$GITHUB_ENV``...), then the step's environment."""

from __future__ import annotations

from stagegate.ci.shell.memo import Inputs
from stagegate.ci.shell.state import UNSET
from stagegate.ci.shell.values import ENV, OUTPUT, RUN, SPECIALS, WORKSPACE, Array
from stagegate.model.ghexpr import Unknown, Value, unknowns

_MISSING = object()


def parameter(name: str, args: tuple[Value, ...] | None, file: str) -> Value:
    """``$1``..., ``$#``, ``$0``: from the call, in a script a ``run:`` calls."""
    if args is None or name in ("?", "$", "!", "-", "_"):
        return Unknown(f"${name}", f"${name} is a shell parameter")
    if name == "#":
        return str(len(args))
    if name == "0":
        return file
    if name in ("@", "*"):
        return " ".join(a if isinstance(a, str) else "" for a in args)
    n = int(name)
    return args[n - 1] if n <= len(args) else ""


def lookup(
    name: str, local: dict[str, Value], args: tuple[Value, ...] | None, file: str, inputs: Inputs
) -> Value:
    if name.isdigit() or not (name[:1].isalpha() or name[:1] == "_") or name == "_":
        return parameter(name, args, file)
    key = f"env.{name}"
    bound = inputs.bound(key, bare=False)
    if bound is not NotImplemented:
        return bound
    found = local.get(name, _MISSING)
    if isinstance(found, Array):  # ``$A`` is its element 0
        found = found.get(0)
        found = UNSET if found is None else found
    if found is UNSET:
        return ""
    if found is not _MISSING and not unknowns(found):
        return found
    bound = inputs.bound(key, scoped=False)
    if bound is not NotImplemented:
        return bound
    if found is not _MISSING:
        return found
    special = {"GITHUB_ENV": ENV, "GITHUB_OUTPUT": OUTPUT, "GITHUB_RUN_ID": RUN}.get(name)
    if special is not None:
        return special
    if name == "GITHUB_SHA":
        sha = inputs.bound("github.sha")
        if sha is not NotImplemented:
            return sha
    value = inputs.env(name)
    if value is not NotImplemented:
        return SPECIALS.get(value, value) if type(value) is str else value
    if name == "GITHUB_WORKSPACE":
        return WORKSPACE
    reason = (
        inputs.writer(name)
        or f"${name} is set in no env: of the step, job or workflow, nor earlier in the script; bind env.{name}"
    )
    return Unknown(f"${name}", reason)


def is_set(
    name: str, local: dict[str, Value], args: tuple[Value, ...] | None, inputs: Inputs
) -> bool | None:
    """Whether a variable is set: by the script, an env:, a bind, an earlier step's
    ``$GITHUB_ENV`` write, or the runner (``GITHUB_*``)."""
    if name.isdigit():
        return (args is not None and int(name) <= len(args) and name != "0") or name == "0"
    if name in local:
        found = local[name]
        return found is not UNSET and not (isinstance(found, Array) and found.get(0) is None)
    return (
        name.startswith("GITHUB_")
        or inputs.env(name) is not NotImplemented
        or inputs.bound(f"env.{name}") is not NotImplemented
        or inputs.writer(name) is not None
    )
