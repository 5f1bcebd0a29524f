"""Flag values and build rows for CI: the data `flags`, `flag` and `matrix` show and write.

CI reads a flag from stagegate, never from a copy of its value: a `gate` job runs
`stagegate flags --format github`, which appends `stage=N`, `flags=<JSON>`,
`active=<JSON>` and one `NAME=true|false` per flag to ``$GITHUB_OUTPUT``, and
`ENV=true|false` to ``$GITHUB_ENV`` for each flag with an ``env``. Later jobs gate on
``fromJSON(needs.gate.outputs.flags)['flag']`` and build ``strategy.matrix`` from
`stagegate matrix PRODUCER`.

Everything here is pure except ``append``, which writes all of its files or none;
``report/ciflags.py`` renders the data and chooses what ``append`` writes.
What is written can never act as more than the lines it means: output names are
mangled to ``A-Za-z0-9_-``, JSON is written on one line with every control
character escaped, and a value that holds a line break anyway is written in the
runner's heredoc form (``name<<DELIM``) with a random delimiter that the value does
not contain.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stagegate.errors import InvalidInput, Problem, UsageError
from stagegate.load.yamlsrc import json_path
from stagegate.model import Flag, Migration, Producer
from stagegate.model.templates import finite_axes
from stagegate.records import record
from stagegate.words import closest

if TYPE_CHECKING:
    from stagegate.engine.resolve import Plan
    from stagegate.load.yamlsrc import Document

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED_OUTPUTS = ("stage", "flags", "active")
"""The outputs `flags --format github` writes besides one per flag."""
RESERVED_ENV_PREFIXES = ("GITHUB_", "RUNNER_")
"""The runner refuses to let a step overwrite these (and NODE_OPTIONS) through $GITHUB_ENV."""
READ_BY_OTHERS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "the shell",
        (
            "BASH_ENV",
            "ENV",
            "SHELLOPTS",
            "BASHOPTS",
            "PS4",
            "PROMPT_COMMAND",
            "IFS",
            "CDPATH",
            "GLOBIGNORE",
            "HOME",
            "PATH",
            "SHELL",
            "TMPDIR",
            "ZDOTDIR",
            "BASH_XTRACEFD",
        ),
        ("BASH_FUNC_",),
    ),
    ("the dynamic loader", (), ("LD_", "DYLD_")),
    ("Python", (), ("PYTHON", "PYTEST_", "PIP_")),
    ("git", (), ("GIT_",)),
    ("node", (), ("NODE_", "NPM_CONFIG_")),
    ("the runner", ("CI",), ("ACTIONS_",)),
    ("Perl or Ruby", ("PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB"), ()),
)
"""Environment variables that change what a program does before it reads its input
(``BASH_ENV=true`` makes every later bash step source a file of the checkout): a flag's
``env`` written to $GITHUB_ENV must be none of them. (reader, names, prefixes);
compared in capitals, as Windows ignores case."""
MATRIX_LIMIT = 256
"""The most jobs GitHub Actions makes of one matrix."""


class UnknownName(UsageError):
    """A flag or producer named on the command line that the migration does not declare.

    ``suggestion`` is the closest declared name (did-you-mean), or None."""

    def __init__(self, message: str, suggestion: str | None) -> None:
        super().__init__(message)
        self.suggestion = suggestion


# --------------------------------------------------------------------------- names


def output_name(flag: str) -> str:
    """The step-output name of ``flag``: every character outside ``A-Za-z0-9_-`` is ``_``."""
    return _UNSAFE.sub("_", flag)


def _collisions(migration: Migration) -> list[Problem]:
    """Two flags whose output names collide, or a flag named like a fixed output.

    GitHub reads ``steps.x.outputs.NAME`` and ``fromJSON(...)['NAME']`` without regard
    to case, so names that differ only in case collide too. Reported at the second."""
    taken: dict[str, str] = {name: f"the output {name!r}" for name in RESERVED_OUTPUTS}
    found = []
    for flag in migration.flags.values():
        name = output_name(flag.id)
        key = name.lower()
        if key in taken:
            other = taken[key]
            found.append(
                Problem(
                    flag.loc,
                    f"flag {flag.id!r} has the step-output name {name!r}, which collides with "
                    f"{other} (`flags --format github` writes every character outside "
                    "A-Za-z0-9_- as '_', and GitHub ignores case); rename one of them.",
                    json_path(("flags", flag.id)),
                )
            )
            continue
        taken[key] = f"flag {flag.id!r} ({flag.loc})"
    return found


def _env_problems(migration: Migration, doc: Document | None) -> list[Problem]:
    found = []
    seen: dict[str, Flag] = {}
    for flag in migration.flags.values():
        if flag.env is None:
            continue
        path = ("flags", flag.id, "env")
        loc = doc.loc(path) if doc is not None else flag.loc
        where = json_path(path)
        if not _ENV_NAME.fullmatch(flag.env):
            found.append(
                Problem(
                    loc,
                    f"{flag.env[:60]!r} is not an environment variable name: use letters, "
                    "digits and '_', not starting with a digit (e.g. BUILD_CU12_LOCAL).",
                    where,
                )
            )
            continue
        upper = flag.env.upper()
        if upper.startswith(RESERVED_ENV_PREFIXES) or upper == "NODE_OPTIONS":
            found.append(
                Problem(
                    loc,
                    f"{flag.env!r} cannot be set through $GITHUB_ENV: the runner keeps "
                    "GITHUB_*, RUNNER_* and NODE_OPTIONS for itself; choose another name.",
                    where,
                )
            )
            continue
        reader = read_by(upper)
        if reader is not None:
            found.append(
                Problem(
                    loc,
                    f"{flag.env!r} is read by {reader}, and `flags --format github` writes a "
                    "flag's env to $GITHUB_ENV for every later step of the job: a flag must not "
                    "change how the shell, a program or the runner starts. Choose a name of "
                    "your own (e.g. BUILD_CU12_LOCAL).",
                    where,
                )
            )
            continue
        other = seen.get(upper)
        if other is not None:
            found.append(
                Problem(
                    loc,
                    f"flag {flag.id!r} reads the environment variable {flag.env!r}, as flag "
                    f"{other.id!r} ({other.loc}) does (Windows ignores case); give each flag "
                    "its own.",
                    where,
                )
            )
            continue
        seen[upper] = flag
    return found


def read_by(name: str) -> str | None:
    """Who reads the environment variable ``name`` (in capitals) before its own input;
    None for a name only the workflows read."""
    for reader, names, prefixes in READ_BY_OTHERS:
        if name in names or name.startswith(prefixes):
            return reader
    return None


def problems(migration: Migration, doc: Document | None = None) -> list[Problem]:
    """What makes the flags impossible to hand to CI; ``validate`` reports them.

    ``doc``: the migration file as read, to point at the ``env`` value itself."""
    return _collisions(migration) + _env_problems(migration, doc)


def _unknown(what: str, name: str, known: Mapping[str, Any], migration: Migration) -> UnknownName:
    close = closest(name, known)
    shown = name if len(name) <= 60 else name[:57] + "..."
    if close:
        loc = known[close].loc
        return UnknownName(
            f"{loc}: no {what} {shown!r} is declared; did you mean {close!r} (declared here)?",
            close,
        )
    listed = ", ".join(list(known)[:12]) or "none"
    more = f" and {len(known) - 12} more" if len(known) > 12 else ""
    return UnknownName(
        f"{migration.file}: no {what} {shown!r} is declared; the {what}s are: {listed}{more}.",
        None,
    )


# --------------------------------------------------------------------------- values


def values(migration: Migration, stage: int) -> dict[str, bool]:
    """Every flag's value at ``stage``, in declaration order."""
    from stagegate.engine.resolve import flag_table

    return dict(flag_table(migration)[stage])


def flag(migration: Migration, name: str, stage: int) -> bool:
    """The value of flag ``name`` at ``stage``; ``UnknownName`` with did-you-mean if none."""
    if name not in migration.flags:
        raise _unknown("flag", name, migration.flags, migration)
    return values(migration, stage)[name]


def active(plan: Plan) -> dict[str, list[str]]:
    return {
        "producers": [p.id for p in plan.producers],
        "consumers": [c.id for c in plan.consumers],
        "releases": [r.id for r in plan.releases],
    }


def compact(data: Any) -> str:
    """One line of ASCII JSON: no control character or line break can survive in it."""
    import json

    return json.dumps(data, separators=(",", ":"), ensure_ascii=True)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def github_outputs(plan: Plan) -> list[tuple[str, str]]:
    """The step outputs of `flags --format github`, in order; InvalidInput on a collision."""
    collisions = _collisions(plan.migration)
    if collisions:
        raise InvalidInput(collisions)
    pairs = [
        ("stage", str(plan.stage)),
        ("flags", compact(dict(plan.flags))),
        ("active", compact(active(plan))),
    ]
    pairs += [(output_name(name), _bool(value)) for name, value in plan.flags.items()]
    return pairs


def env_pairs(plan: Plan) -> list[tuple[str, str]]:
    """``(ENV, true|false)`` for each flag with an ``env``."""
    return [
        (flag.env, _bool(plan.flags[name]))
        for name, flag in plan.migration.flags.items()
        if flag.env is not None
    ]


# --------------------------------------------------------------------------- matrix


def matrix_axes(migration: Migration, producer: Producer) -> list[str]:
    """The finite axes named in ``producer``'s templates, in the axes' declared order."""
    named = {
        part.axis
        for template in producer.artifacts
        for part in template.parts
        if not isinstance(part, str)
    }
    return [name for name, axis in migration.axes.items() if name in named and not axis.is_open]


def _axis_values(migration: Migration, producer: Producer, axis: str) -> tuple[str, ...]:
    """The values of a finite axis for ``producer``: its own where it narrows the axis
    (``axes: {py: [...]}`` on the producer), else the migration's."""
    from stagegate.engine.resolve import item_axes

    return item_axes(migration, producer)[axis].values or ()


def matrix(migration: Migration, producer: str, stage: int) -> dict[str, list[dict[str, str]]]:
    """``{"include": [...]}``: one object per distinct assignment of the finite axes of the
    producer's rows (axis -> value, in declared order; a template's ``exclude`` and
    ``rows`` heeded), leaving out one whose pairs another object holds too (the job row
    that makes the other name makes this one); no rows when it is inactive at ``stage``.

    Where every template names the same finite axes and excludes nothing, that is every
    combination of their values, in the axes' declared order."""
    import itertools

    from stagegate.engine.resolve import item_axes, resolve

    item = migration.producers.get(producer)
    if item is None:
        raise _unknown("producer", producer, migration.producers, migration)
    if item not in resolve(migration, stage).producers:
        return {"include": []}
    names = matrix_axes(migration, item)
    axes = item_axes(migration, item)
    if all(t.rows is None and not t.exclude for t in item.artifacts) and all(
        set(finite_axes(t.parts, axes)) in (set(names), set()) for t in item.artifacts
    ):
        combos = itertools.product(*(_axis_values(migration, item, n) for n in names))
        return {"include": [dict(zip(names, c, strict=True)) for c in dict.fromkeys(combos)]}
    found: dict[frozenset[tuple[str, str]], None] = {}
    for template in item.artifacts:
        for assignment in template.assignments(axes):
            found.setdefault(frozenset(assignment), None)
    kept = [a for a in found if not any(a < other for other in found)]
    order = {name: i for i, name in enumerate(names)}
    position = {n: {v: i for i, v in enumerate(_axis_values(migration, item, n))} for n in names}
    kept.sort(key=lambda a: [position[n].get(dict(a).get(n, ""), -1) for n in order])
    return {"include": [{n: v for n, v in sorted(a, key=lambda p: order[p[0]])} for a in kept]}


def matrices(
    migration: Migration, producers: Sequence[str], stage: int
) -> dict[str, list[dict[str, str]]]:
    """``matrix`` of one producer; of several, the union of their rows, each naming its
    producer first (``{"producer": "wheels", "py": "312"}``), for a job that builds
    several producers' artifacts. Unknown producers are errors, as for one."""
    if len(producers) == 1:
        return matrix(migration, producers[0], stage)
    if "producer" in migration.axes:
        raise UsageError(
            f"{migration.file}: an axis is named `producer`, the key that "
            "names each row's producer when several producers share a matrix; ask for "
            "one producer at a time, or rename the axis."
        )
    rows = [
        {"producer": name, **row}
        for name in dict.fromkeys(producers)
        for row in matrix(migration, name, stage)["include"]
    ]
    return {"include": rows}


def matrix_warning(found: Mapping[str, Sequence[object]], producer: str) -> str | None:
    """Why GitHub would refuse this matrix, if it would: more than 256 jobs."""
    count = len(found["include"])
    if count <= MATRIX_LIMIT:
        return None
    return (
        f"the matrix of {producer} has {count:,} rows; GitHub Actions runs at most "
        f"{MATRIX_LIMIT} jobs per matrix: split the producer or narrow its axes."
    )


# --------------------------------------------------------------------------- writing


def _delimiter(value: str) -> str:
    import secrets

    while True:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        if delimiter not in value:
            return delimiter


def lines(pairs: Iterable[tuple[str, str]]) -> str:
    """``name=value`` lines for ``$GITHUB_OUTPUT``/``$GITHUB_ENV``; a value with a line
    break in the heredoc form ``name<<DELIM``, ``value``, ``DELIM`` (random DELIM)."""
    out = []
    for name, value in pairs:
        if not name or _UNSAFE.search(name):
            raise ValueError(f"not a safe output or variable name: {name!r}")
        if "\n" in value or "\r" in value:
            delimiter = _delimiter(value)
            out.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            out.append(f"{name}={value}\n")
    return "".join(out)


@record
class Target:
    """A file to append to: the variable that names it, its path, the text."""

    variable: str
    path: str
    text: str


def targets(variables: Mapping[str, str], texts: Sequence[tuple[str, str]]) -> list[Target]:
    """The (variable, text) pairs whose variable is set (non-empty) in ``variables``."""
    return [
        Target(variable, variables[variable], text)
        for variable, text in texts
        if variables.get(variable) and text
    ]


def _cannot(target: Target, error: OSError) -> UsageError:
    reason = error.strerror or str(error)
    return UsageError(
        f"${target.variable} ({target.path}): cannot append to it: {reason}; nothing was "
        f"written. The GitHub Actions runner sets ${target.variable} to a file it can write; "
        "outside Actions, point it at a writable file or unset it to print only."
    )


def append(found: Sequence[Target]) -> None:
    """Append each target's text to its file: all of them, or none.

    Every file is opened before anything is written; a write that fails (a full disk)
    cuts every file back to the size it had, and removes one this call created."""
    import stat

    opened: list[tuple[Target, int, int | None, bool]] = []  # target, fd, size, created
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    nonblocking = getattr(os, "O_NONBLOCK", 0)  # a FIFO without a reader must not hang
    try:
        for target in found:
            existed = os.path.lexists(target.path)
            try:
                fd = os.open(target.path, flags | nonblocking, 0o666)
            except OSError as error:
                raise _cannot(target, error) from None
            mode = os.fstat(fd).st_mode
            size = os.fstat(fd).st_size if stat.S_ISREG(mode) else None
            opened.append((target, fd, size, not existed))
            if nonblocking:
                os.set_blocking(fd, True)
        for index, (target, fd, _size, _created) in enumerate(opened):
            data = memoryview(target.text.encode("utf-8"))
            try:
                while data:
                    written = os.write(fd, data)
                    data = data[written:]
            except OSError as error:
                _undo(opened[: index + 1])
                raise _cannot(target, error) from None
    finally:
        for _target, fd, _size, _created in opened:
            os.close(fd)


def _undo(opened: Sequence[tuple[Target, int, int | None, bool]]) -> None:
    import contextlib

    for target, fd, size, created in opened:
        if size is None:
            continue  # a device or pipe: what went out cannot be taken back
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
            if created and size == 0:
                os.unlink(target.path)
