"""Which steps build wheels, and the build tool's version as the workflow pins it.

- ``uses: pypa/cibuildwheel@v2.23.3`` (or a commit with a ``# v2.23.3`` comment) and
  ``uses: PyO3/maturin-action@v1`` (``maturin-version:``);
- in a ``run:`` script: ``cibuildwheel ARGS``, ``python -m cibuildwheel ARGS``,
  ``pipx run cibuildwheel==X ARGS``, ``uvx cibuildwheel@X ARGS``, ``uvx --from
  cibuildwheel==X cibuildwheel ARGS``, ``maturin build ARGS``; a bare ``cibuildwheel`` takes
  its version from an earlier ``pip install cibuildwheel==X`` in the job.

These functions take what a workflow reader has evaluated (words, texts, where they are
written) and return ``BuildStep`` records; they read no YAML themselves.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence

from stagegate.ci.wheels.model import CIBUILDWHEEL, MATURIN, BuildStep, Setting, Word
from stagegate.errors import Loc

CIBW_ACTION = "pypa/cibuildwheel"
MATURIN_ACTION = "pyo3/maturin-action"
_EXACT = re.compile(r"v?(\d+\.\d+\.\d+)")
_SERIES = re.compile(r"v(\d+(?:\.\d+)?)")
_COMMENT = re.compile(
    r"#\s*(?:tag\s*[:=]?\s*|version\s*[:=]?\s*)?v?(\d+\.\d+\.\d+)\b", re.IGNORECASE
)
_SHA = re.compile(r"[0-9a-f]{40}")
_PIP_PIN = re.compile(r"cibuildwheel\s*(?:\[[^\]]*\])?\s*==\s*(\d+\.\d+\.\d+)$", re.IGNORECASE)
_PIP_SERIES = re.compile(
    r"cibuildwheel\s*(?:\[[^\]]*\])?\s*==\s*(\d+(?:\.\d+)?)\.\*$", re.IGNORECASE
)
_PIP_HEAD = re.compile(
    r"(?:^|\s|/)(?:pip3?|pipx|uv(?: pip| tool)?|python3?(?:\.\d+)? -m pip|py -m pip)$"
)
_REQUIREMENT_FLAGS = ("-r", "--requirement")
_NESTED = re.compile(r"(?:-r|--requirement|-c|--constraint)(?:\s*=?\s*)\S", re.IGNORECASE)


def action_of(uses: str) -> str:
    return uses.split("@", 1)[0].strip().lower()


def action_version(uses: str, line: str, loc: Loc, name: str) -> Setting:
    """The release an action reference runs: ``@v2.23.3``; a commit with a version comment
    on its line; else not known (a moving tag such as ``@v2``, or a bare commit)."""
    ref = uses.partition("@")[2].strip()
    exact = _EXACT.fullmatch(ref)
    if exact:
        return Setting(name=name, value=exact[1], loc=loc)
    series = _SERIES.fullmatch(ref)
    if series:  # `@v3.2`: the newest 3.2.x (``cibw.releases`` decides whether that is known)
        return Setting(name=name, value=f"v{series[1]}", loc=loc)
    comment = _COMMENT.search(line.partition(uses)[2] if uses in line else line)
    if _SHA.fullmatch(ref) and comment:
        return Setting(name=name, value=comment[1], loc=loc)
    why = (
        f"{uses} is a commit without a `# vX.Y.Z` comment saying which release it is"
        if _SHA.fullmatch(ref)
        else f"{uses} names a moving ref, not one release: pin vX.Y.Z"
    )
    return Setting(name=name, value=None, loc=loc, why=why)


def from_uses(
    uses: str,
    line: str,
    *,
    loc: Loc,
    runner: Setting,
    env: Mapping[str, Setting],
    inputs: Mapping[str, Setting],
    directory: str = "",
) -> BuildStep | None:
    """The build step a ``uses:`` step is, or None for another action. ``line``: the text
    of the ``uses:`` line (for a version comment)."""
    action = action_of(uses)
    if action == CIBW_ACTION:
        version = action_version(uses, line, loc, "cibuildwheel version")
        return BuildStep(
            tool=CIBUILDWHEEL,
            loc=loc,
            version=version,
            runner=runner,
            env=env,
            inputs=inputs,
            directory=directory,
            action=True,
        )
    if action == MATURIN_ACTION:
        command = inputs.get("command")
        if (
            command is not None
            and command.value is not None
            and command.value.strip() not in ("", "build")
        ):
            return None  # sdist, upload, publish: no wheels built here
        return BuildStep(
            tool=MATURIN,
            loc=loc,
            version=inputs.get("maturin-version"),
            runner=runner,
            env=env,
            inputs=inputs,
            directory=directory,
            action=True,
        )
    return None


def install_pin(words: Sequence[Word]) -> Setting | None:
    """The version a command installs cibuildwheel at (``pip install cibuildwheel==X``,
    ``pipx install``, ``uv pip install``, ``uv tool install``); unpinned: a setting with
    no value; None: not an install of cibuildwheel."""
    texts = [w.text or "" for w in words]
    if "install" not in texts or not any(t.lower().startswith("cibuildwheel") for t in texts):
        return None
    head = " ".join(texts[: texts.index("install")])
    if not _PIP_HEAD.search(head):
        return None
    for word in words:
        text = word.text or ""
        if text.lower().startswith("cibuildwheel"):
            return _pin(text, word.loc)
    return None


def _pin(text: str, loc: Loc) -> Setting:
    """The version a requirement ``cibuildwheel==X`` installs: an exact release, or for
    ``==X.Y.*`` the series (``vX.Y``: ``cibw.releases`` decides whether it is known)."""
    pinned = _PIP_PIN.fullmatch(text.strip())
    if pinned:
        return Setting(name="cibuildwheel version", value=pinned[1], loc=loc)
    series = _PIP_SERIES.fullmatch(text.strip())
    if series:
        return Setting(name="cibuildwheel version", value=f"v{series[1]}", loc=loc)
    return Setting(
        name="cibuildwheel version",
        value=None,
        loc=loc,
        why=f"{text} is installed without an exact version (==X.Y.Z)",
    )


def requirements_pin(
    words: Sequence[Word], read: Callable[[str], str | None], directory: str = ""
) -> Setting | None:
    """The version ``pip install -r FILE`` installs cibuildwheel at, read from the file
    (its path from the folder the command runs in); a setting without value where the
    file cannot be read or nests another; None: not such an install, or the file does not
    name cibuildwheel."""
    texts = [w.text or "" for w in words]
    if "install" not in texts or not _PIP_HEAD.search(" ".join(texts[: texts.index("install")])):
        return None
    found: Setting | None = None
    for i, word in enumerate(words):
        text = word.text
        if text in _REQUIREMENT_FLAGS:
            target = words[i + 1] if i + 1 < len(words) else None
        elif text is not None and text.startswith("--requirement="):
            target = Word(text=text.partition("=")[2], loc=word.loc)
        elif (
            text is not None
            and text.startswith("-r")
            and len(text) > 2
            and not text.startswith("--")
        ):
            target = Word(text=text[2:], loc=word.loc)
        else:
            continue
        if target is None or target.text is None:
            return Setting(
                name="cibuildwheel version",
                value=None,
                loc=word.loc,
                why="pip installs from a requirements file whose name is not known",
            )
        found = _from_file(target.text, target.loc, read, directory) or found
    return found


def _from_file(
    name: str, loc: Loc, read: Callable[[str], str | None], directory: str
) -> Setting | None:
    path = (
        posixpath.normpath(posixpath.join(directory, name))
        if directory
        else posixpath.normpath(name)
    )
    text = read(path)
    if text is None:
        return Setting(
            name="cibuildwheel version",
            value=None,
            loc=loc,
            why=f"{name}, the requirements file pip installs from, is not in the repository",
        )
    nested = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(?:^|\s)#.*", "", raw).strip()
        if _NESTED.match(line):
            nested = True
        elif re.match(r"cibuildwheel\b", line, re.IGNORECASE):
            return _pin(line, Loc(path, number, 1))
    if nested:
        return Setting(
            name="cibuildwheel version",
            value=None,
            loc=loc,
            why=f"{name} includes another requirements file, which stagegate does not follow",
        )
    return None


def _runner_pin(words: Sequence[Word]) -> tuple[Setting | None, int] | None:
    """``pipx run [--spec S] cibuildwheel[==X] ...`` / ``uvx [--from S] cibuildwheel[@X]``:
    the pin and where cibuildwheel's own arguments start."""
    texts = [w.text or "" for w in words]
    if texts[:2] == ["pipx", "run"]:
        rest = 2
    elif texts[:1] == ["uvx"]:
        rest = 1
    elif texts[:3] == ["uv", "tool", "run"]:
        rest = 3
    else:
        return None
    spec: Word | None = None
    while rest < len(texts) and texts[rest].startswith("-"):
        if texts[rest] in ("--spec", "--from") and rest + 1 < len(texts):
            spec = words[rest + 1]
            rest += 2
        else:
            rest += 1
    if rest >= len(texts):
        return None
    program = words[rest]
    name = re.split(r"[=@<>\[]", program.text or "", maxsplit=1)[0].lower()
    if name != "cibuildwheel":
        return None
    source = spec or program
    text = (source.text or "").replace("@", "==", 1)
    pinned = _PIP_PIN.fullmatch(text.strip())
    if pinned:
        return Setting(name="cibuildwheel version", value=pinned[1], loc=source.loc), rest + 1
    return Setting(
        name="cibuildwheel version",
        value=None,
        loc=source.loc,
        why=f"{source.text} runs cibuildwheel without an exact version",
    ), rest + 1


def from_command(
    words: Sequence[Word],
    *,
    runner: Setting,
    env: Mapping[str, Setting],
    installed: Setting | None,
    directory: str = "",
) -> BuildStep | None:
    """The build step a command is, or None. ``installed``: the pin of the job's last
    ``pip install cibuildwheel`` before it (a setting without value where unpinned)."""
    if not words or words[0].text is None:
        return None
    texts = [w.text or "" for w in words]
    loc = words[0].loc
    ran = _runner_pin(words)
    if ran is not None:
        version, after = ran
        return BuildStep(
            tool=CIBUILDWHEEL,
            loc=loc,
            version=version,
            runner=runner,
            env=env,
            args=tuple(words[after:]),
            directory=directory,
        )
    start: int | None = None
    if texts[0].rsplit("/", 1)[-1] == "cibuildwheel":
        start = 1
    elif (
        len(texts) >= 3
        and re.fullmatch(r"(?:.*/)?(?:python3?(?:\.\d+)?|py)", texts[0])
        and texts[1:3] == ["-m", "cibuildwheel"]
    ):
        start = 3
    if start is not None:
        version = installed or Setting(
            name="cibuildwheel version",
            value=None,
            loc=loc,
            why="no step of the job installs cibuildwheel at an exact version before it runs",
        )
        return BuildStep(
            tool=CIBUILDWHEEL,
            loc=loc,
            version=version,
            runner=runner,
            env=env,
            args=tuple(words[start:]),
            directory=directory,
        )
    if texts[0].rsplit("/", 1)[-1] == "maturin" and texts[1:2] == ["build"]:
        return BuildStep(
            tool=MATURIN,
            loc=loc,
            version=None,
            runner=runner,
            env=env,
            args=tuple(words[2:]),
            directory=directory,
        )
    return None
