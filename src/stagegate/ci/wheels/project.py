"""What the project's own files say about its wheels: ``[tool.cibuildwheel]`` and
``requires-python`` in pyproject.toml, ``python_requires`` in setup.cfg or setup.py, and
pyo3's ``abi3-pyXY`` feature in Cargo.toml or ``[tool.maturin]``.

Each value comes back as a ``Setting`` at its file and line, so that a change of wheels can
name the line that made it. A file that cannot be read the way the build tool reads it
gives a setting with no value and the reason.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from stagegate.ci.wheels.model import Files, Setting
from stagegate.errors import Loc

PLATFORMS = ("linux", "macos", "windows", "ios", "android")
CIBW_OPTIONS = ("build", "skip", "archs", "enable", "free-threaded-support")
"""The ``[tool.cibuildwheel]`` options that decide which identifiers are built."""


def join(directory: str, name: str) -> str:
    directory = directory.strip().strip("/").removeprefix("./")
    return name if directory in ("", ".") else f"{directory}/{name}"


def _key_line(text: str, table: str, key: str) -> int:
    """The line of ``key = ...`` in ``[table]`` (the header's line where the key is written
    another way, 1 where the table is not found)."""
    current, header_line = "", 0
    key_re = re.compile(rf"""^\s*(?:"{re.escape(key)}"|'{re.escape(key)}'|{re.escape(key)})\s*=""")
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[] \t").replace('"', "").replace(" ", "")
            if current == table:
                header_line = number
            continue
        if current == table and key_re.match(line):
            return number
    return header_line or 1


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(_text(item) for item in value)
    return str(value)


def load_toml(files: Files, path: str) -> tuple[str, dict[str, Any]] | Setting | None:
    """A TOML file's text and data; a value-less setting where it is not valid TOML."""
    text = files.text(path)
    if text is None:
        return None
    try:
        return text, _parsed(text)
    except tomllib.TOMLDecodeError as error:
        line = int(m[1]) if (m := re.search(r"line (\d+)", str(error))) else 1
        return Setting(
            name=path, value=None, loc=Loc(path, line, 1), why=f"{path} is not valid TOML: {error}"
        )


@lru_cache(maxsize=64)
def _parsed(text: str) -> dict[str, Any]:
    """A TOML text's data, parsed once per text (read, never changed, by the callers)."""
    return tomllib.loads(text)


def cibuildwheel_options(path: str, text: str, data: Mapping[str, Any]) -> dict[str, Setting]:
    """``toml.OPTION`` and ``toml.PLATFORM.OPTION`` for the options that select builds."""
    out: dict[str, Setting] = {}
    tool = data.get("tool")
    section = tool.get("cibuildwheel") if isinstance(tool, dict) else None
    if not isinstance(section, dict):
        return out
    for where, table in [("", section)] + [
        (f"{p}.", section[p]) for p in PLATFORMS if isinstance(section.get(p), dict)
    ]:
        name = "tool.cibuildwheel" + (f".{where[:-1]}" if where else "")
        for option in CIBW_OPTIONS:
            if option in table:
                line = _key_line(text, name, option)
                out[f"toml.{where}{option}"] = Setting(
                    name=f"[{name}] {option}", value=_text(table[option]), loc=Loc(path, line, 1)
                )
    return out


def requires_python(files: Files, directory: str, pyproject: Any) -> Setting | None:
    """The project's supported Pythons, read as cibuildwheel reads them: pyproject.toml's
    ``project.requires-python``, else setup.cfg's ``options.python_requires``, else a
    literal ``python_requires=`` in a top-level ``setup(...)`` call in setup.py."""
    path = join(directory, "pyproject.toml")
    if isinstance(pyproject, tuple):
        text, data = pyproject
        project = data.get("project")
        if isinstance(project, dict) and "requires-python" in project:
            return Setting(
                name="requires-python",
                value=str(project["requires-python"]),
                loc=Loc(path, _key_line(text, "project", "requires-python"), 1),
            )
    found = _setup_cfg(files, join(directory, "setup.cfg"))
    if found is not None:
        return found
    return _setup_py(files, join(directory, "setup.py"))


def _setup_cfg(files: Files, path: str) -> Setting | None:
    text = files.text(path)
    if text is None:
        return None
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text, source=path)
    except configparser.Error as error:
        return Setting(
            name="python_requires",
            value=None,
            loc=Loc(path, 1, 1),
            why=f"{path} cannot be read as cibuildwheel reads it: {error}",
        )
    if parser.has_option("options", "python_requires"):
        value = parser.get("options", "python_requires", raw=True)
        return Setting(
            name="python_requires",
            value=value,
            loc=Loc(path, _key_line(text, "options", "python_requires"), 1),
        )
    return None


def setup_tree(files: Files, path: str) -> ast.Module | None:
    """``setup.py`` at ``path`` parsed (never run); None where it is not there or is no
    Python (cibuildwheel then reads nothing from it either)."""
    text = files.text(path)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _setup_py(files: Files, path: str) -> Setting | None:
    tree = setup_tree(files, path)
    if tree is None:
        return None
    found: Setting | None = None
    for call in _top_calls(tree.body):
        for keyword in call.keywords:
            if (
                keyword.arg == "python_requires"
                and isinstance(keyword.value, ast.Constant)
                and isinstance(keyword.value.value, str)
                and keyword.value.value
            ):
                found = Setting(
                    name="python_requires",
                    value=keyword.value.value,
                    loc=Loc(path, keyword.value.lineno, keyword.value.col_offset + 1),
                )
    return found


def _top_calls(body: list[ast.stmt], *, top: bool = True) -> list[ast.Call]:
    """The calls written as statements at the top of the file or directly under a top
    ``if __name__ == "__main__":`` (where cibuildwheel looks)."""
    calls: list[ast.Call] = []
    for statement in body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            calls.append(statement.value)
        elif top and isinstance(statement, ast.If) and _is_main(statement.test):
            calls.extend(_top_calls(statement.body, top=False))
    return calls


def _is_main(test: ast.expr) -> bool:
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, *test.comparators]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


_ABI3 = re.compile(r"^abi3(?:-py(\d)(\d+))?$")


def abi3(
    files: Files,
    directory: str,
    manifest: str,
    cli: Setting | None = None,
    flags: frozenset[str] = frozenset(),
) -> Setting | None:
    """pyo3's ``abi3-pyXY`` feature, as cargo turns it on for maturin: pyo3's dependency
    features in Cargo.toml, and each ``pyo3/FEATURE`` that the features maturin asks for
    enable through Cargo.toml's ``[features]`` (``cli``: ``--features``, else ``[tool.maturin]
    features``; the crate's ``default`` unless ``--no-default-features``, every one with
    ``--all-features``: ``flags``, or the same keys in ``[tool.maturin]``). One
    ``cpXY-abi3`` wheel serves every later CPython. ``abi3`` without a version leaves the
    minimum to pyo3's own version: unresolved."""
    found = _pyo3_features(files, directory, manifest, cli, flags)
    if isinstance(found, Setting):
        return found
    versioned: list[tuple[tuple[int, int], Loc]] = []
    bare: Loc | None = None
    for feature, loc in found:
        matched = _ABI3.search(feature)
        if matched is None:
            continue
        if matched[1] is None:
            bare = bare or loc
        else:
            versioned.append(((int(matched[1]), int(matched[2])), loc))
    if versioned:  # each abi3-pyXY turns on the later ones: the lowest is the minimum
        (major, minor), loc = min(versioned)
        return Setting(name="pyo3 abi3", value=f"cp{major}{minor}", loc=loc)
    if bare is not None:
        return Setting(
            name="pyo3 abi3",
            value=None,
            loc=bare,
            why="pyo3's abi3 feature without a version: its minimum Python is pyo3's own",
        )
    return None


def _pyo3_features(
    files: Files, directory: str, manifest: str, cli: Setting | None, flags: frozenset[str]
) -> list[tuple[str, Loc]] | Setting:
    """Each pyo3 feature cargo turns on, with the line that turns it on."""
    wanted: list[tuple[str, Loc]] = []
    if cli is not None and cli.value:
        wanted = [(word, cli.loc) for word in re.split(r"[\s,]+", cli.value) if word]
    pyproject_path = join(directory, "pyproject.toml")
    pyproject = load_toml(files, pyproject_path)
    if isinstance(pyproject, tuple):
        text, data = pyproject
        tool = data.get("tool", {})
        maturin = tool.get("maturin") if isinstance(tool, dict) else None
        maturin = maturin if isinstance(maturin, dict) else {}
        flags |= {
            f"--{key}"
            for key in ("no-default-features", "all-features")
            if maturin.get(key) is True
        }
        given = maturin.get("features")
        if isinstance(given, list) and not wanted:
            loc = Loc(pyproject_path, _key_line(text, "tool.maturin", "features"), 1)
            if any(not isinstance(f, str) and "abi3" in str(f) for f in given):
                why = "a [tool.maturin] feature that depends on the Python version names abi3"
                return Setting(name="pyo3 abi3", value=None, loc=loc, why=why)
            wanted = [(f, loc) for f in given if isinstance(f, str)]
    cargo = load_toml(files, manifest)
    if isinstance(cargo, Setting):
        return cargo
    if cargo is None:
        return [(f[5:], loc) for f, loc in wanted if f.startswith("pyo3/")]
    text, data = cargo
    out: list[tuple[str, Loc]] = []
    deps = data.get("dependencies", {})
    pyo3 = deps.get("pyo3") if isinstance(deps, dict) else None
    if isinstance(pyo3, dict) and isinstance(pyo3.get("features"), list):
        table, key = (
            ("dependencies.pyo3", "features")
            if "[dependencies.pyo3]" in text
            else ("dependencies", "pyo3")
        )
        out += [(str(f), Loc(manifest, _key_line(text, table, key), 1)) for f in pyo3["features"]]
    features = data.get("features")
    features = features if isinstance(features, dict) else {}
    if "--no-default-features" not in flags:
        wanted.append(("default", Loc(manifest, _key_line(text, "features", "default"), 1)))
    if "--all-features" in flags:
        wanted += [
            (str(n), Loc(manifest, _key_line(text, "features", str(n)), 1)) for n in features
        ]
    seen: set[str] = set()
    while wanted:
        name, loc = wanted.pop(0)
        crate, slash, feature = name.partition("/")
        if slash and crate.rstrip("?") == "pyo3":
            out.append((feature, loc))
        elif not slash and name not in seen and isinstance(features.get(name), list):
            seen.add(name)
            at = Loc(manifest, _key_line(text, "features", name), 1)
            wanted += [(str(entry), at) for entry in features[name]]
    return out


def dist_name(files: Files, directory: str, manifest: str | None) -> str | None:
    """The name of the distribution a project's wheels carry: ``[project] name`` in
    pyproject.toml, else (maturin: ``manifest``, its Cargo.toml) ``[package] name``, else
    setup.cfg's ``[metadata] name``; None where it is computed (``dynamic``, setup.py)
    or not found."""
    pyproject = load_toml(files, join(directory, "pyproject.toml"))
    if isinstance(pyproject, Setting):
        return None
    table = pyproject[1].get("project") if pyproject is not None else None
    if isinstance(table, dict):
        name = table.get("name")
        return name if isinstance(name, str) and name else None
    if manifest is not None:
        cargo = load_toml(files, manifest)
        package = cargo[1].get("package") if isinstance(cargo, tuple) else None
        name = package.get("name") if isinstance(package, dict) else None
        return name if isinstance(name, str) and name else None
    text = files.text(join(directory, "setup.cfg"))
    if text is None:
        return None
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    name = parser.get("metadata", "name", raw=True, fallback="")
    return name if re.fullmatch(r"[A-Za-z0-9._-]+", name) else None
