"""setuptools' limited API: where the build settings say ``py_limited_api = "cp3X"``
(bdist_wheel's option), every CPython ``cpXY`` wheel (XY >= 3X, not free-threaded) is
one ``cp3X-abi3`` file, as maturin's abi3 wheels are (``cp39-abi3-manylinux_x86_64``).

Read where it is written: setup.cfg's ``[bdist_wheel] py_limited_api``, pyproject.toml's
``[tool.distutils.bdist_wheel] py-limited-api``, or a ``"py_limited_api": "cp3X"`` dict
entry in setup.py (bdist_wheel's options; read with ``ast``, never run). In setup.py the
literal may sit under ``if`` tests; those stagegate can decide for a CPython build
(``platform.python_implementation() == "CPython"``, ``os.environ.get("NAME") != "0"``
where the build's environment does not set NAME) are decided, anything else leaves the
python tag unknown (unresolved, never guessed).
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Mapping

from stagegate.ci.wheels import project
from stagegate.ci.wheels.model import Files, Setting
from stagegate.ci.wheels.settings import Stop
from stagegate.errors import Loc

NAME = "py_limited_api"
_TAG = re.compile(r"cp3\d+")
_UNKNOWN = object()
_GIL = object()
"""``sysconfig.get_config_var("Py_GIL_DISABLED")`` of a build with the GIL: 0 or None
(false; not 1)."""
_PASSED = ("CIBW_ENVIRONMENT", "toml.environment")
"""Settings that pass variables into the build (their text is searched for a name)."""


def setting(files: Files, directory: str, env: Mapping[str, Setting]) -> Setting | None:
    """The project's ``py_limited_api`` tag (``cp39``), where it is written; a setting
    with no value where it cannot be decided; None where the project sets none. ``env``:
    the variables the build sees (the step's, ``CIBW_ENVIRONMENT``), for setup.py's tests."""
    path = project.join(directory, "setup.cfg")
    text = files.text(path)
    if text is not None:
        parser = configparser.ConfigParser()
        try:
            parser.read_string(text, source=path)
        except configparser.Error:
            parser = configparser.ConfigParser()
        for key in (NAME, "py-limited-api"):
            if parser.has_option("bdist_wheel", key):
                value = parser.get("bdist_wheel", key, raw=True).strip()
                return _checked(value, Loc(path, project._key_line(text, "bdist_wheel", key), 1))
    path = project.join(directory, "pyproject.toml")
    loaded = project.load_toml(files, path)
    if isinstance(loaded, tuple):
        tool = loaded[1].get("tool")
        distutils = tool.get("distutils") if isinstance(tool, dict) else None
        table = distutils.get("bdist_wheel") if isinstance(distutils, dict) else None
        for key in ("py-limited-api", NAME):
            if isinstance(table, dict) and key in table:
                line = project._key_line(loaded[0], "tool.distutils.bdist_wheel", key)
                return _checked(str(table[key]), Loc(path, line, 1))
    return _setup_py(files, project.join(directory, "setup.py"), env)


def _checked(value: str, loc: Loc) -> Setting | None:
    if not value or value.lower() in ("false", "0", "no", "off"):
        return None
    if not _TAG.fullmatch(value):
        return Setting(
            name=NAME,
            value=None,
            loc=loc,
            why=f"py_limited_api {value!r} is not a cp3X tag stagegate reads",
        )
    return Setting(name=NAME, value=value, loc=loc)


class _Scope:
    """What setup.py's tests are read with: the build's environment, and the names the
    file assigns once (``can_use_limited_api = not sysconfig.get_config_var(...)``) with
    their truth for a CPython build with the GIL."""

    def __init__(self, env: Mapping[str, Setting], tree: ast.Module) -> None:
        self.env = env
        stored: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                stored[node.id] = stored.get(node.id, 0) + 1
            elif isinstance(node, ast.Global | ast.Nonlocal):
                for name in node.names:
                    stored[name] = 2
        self.once = {name for name, count in stored.items() if count == 1}
        self.names: dict[str, object] = {}


def _setup_py(files: Files, path: str, env: Mapping[str, Setting]) -> Setting | None:
    tree = project.setup_tree(files, path)
    if tree is None:
        return None
    found: list[tuple[ast.AST, str | None, object]] = []
    _walk(tree.body, True, _Scope(env, tree), found)
    if not found:
        return None
    values = {(value, decided) for _n, value, decided in found}
    first = found[0][0]
    loc = Loc(path, getattr(first, "lineno", 1), getattr(first, "col_offset", 0) + 1)
    if len(values) > 1 or any(value is None or decided is _UNKNOWN for _n, value, decided in found):
        return Setting(
            name=NAME,
            value=None,
            loc=loc,
            why="setup.py sets py_limited_api in code whose outcome stagegate cannot decide: "
            "the wheels' python tag is not known",
        )
    value, decided = values.pop()
    return _checked(str(value), loc) if decided else None


_NESTED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.For,
    ast.While,
    ast.Try,
    ast.With,
    ast.Match,
)


def _walk(
    body: list[ast.stmt],
    holds: object,
    scope: _Scope,
    found: list[tuple[ast.AST, str | None, object]],
) -> None:
    """Each ``"py_limited_api": ...`` dict entry (bdist_wheel's options, written in the
    ``options`` argument or in a dict built before it): where it is, its text
    (None: not a string literal), and whether the tests above it hold (True, False, or
    ``_UNKNOWN``; in a loop, function or other block: ``_UNKNOWN``)."""
    for statement in body:
        if isinstance(statement, ast.If):
            test = _test(statement.test, scope)
            _walk(statement.body, _and(holds, test), scope, found)
            _walk(statement.orelse, _and(holds, _not(test)), scope, found)
            continue
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id in scope.once
        ):
            scope.names[statement.targets[0].id] = _test(statement.value, scope)
        where = _UNKNOWN if isinstance(statement, _NESTED) else holds
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                _call(node, found)
            if not isinstance(node, ast.Dict):
                continue
            for key, tag in zip(node.keys, node.values, strict=True):
                if _is(key, NAME):  # bdist_wheel's options, given whole or built first
                    text = (
                        tag.value
                        if isinstance(tag, ast.Constant) and isinstance(tag.value, str)
                        else None
                    )
                    found.append((tag, text, where))


def _call(node: ast.Call, found: list[tuple[ast.AST, str | None, object]]) -> None:
    """A ``py_limited_api=`` or ``bdist_wheel=`` keyword in a call other than an
    ``Extension(...)`` (``dict(py_limited_api="cp39")``): a form not read, so unknown."""
    if _dotted(node.func).rsplit(".", 1)[-1].endswith("Extension"):
        return
    for keyword in node.keywords:
        if keyword.arg in (NAME, "bdist_wheel"):
            found.append((keyword.value, None, _UNKNOWN))


def _is(node: ast.expr | None, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _and(a: object, b: object) -> object:
    if a is False or b is False:
        return False
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    return True


def _not(a: object) -> object:
    return _UNKNOWN if a is _UNKNOWN else not a


def _test(node: ast.expr, scope: _Scope) -> object:
    """An ``if`` test for a CPython build with the GIL: True, False, or ``_UNKNOWN``."""
    if isinstance(node, ast.Name):
        return scope.names.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Call | ast.Constant) and not isinstance(node, ast.Compare):
        value = _value(node, scope)
        return value if value is _UNKNOWN else value is not _GIL and bool(value)
    if isinstance(node, ast.BoolOp):
        values = [_test(v, scope) for v in node.values]
        if isinstance(node.op, ast.And):
            out: object = True
            for v in values:
                out = _and(out, v)
            return out
        if any(v is True for v in values):
            return True
        return _UNKNOWN if any(v is _UNKNOWN for v in values) else False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _not(_test(node.operand, scope))
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq | ast.NotEq)
    ):
        left, right = _value(node.left, scope), _value(node.comparators[0], scope)
        other = right if left is _GIL else left if right is _GIL else None
        if other is not _GIL and other is not None and other is not _UNKNOWN and other == 1:
            left, right = 0, 1  # Py_GIL_DISABLED is not 1 (0 or None)
        if left is _UNKNOWN or right is _UNKNOWN or _GIL in (left, right):
            return _UNKNOWN
        return (left == right) == isinstance(node.ops[0], ast.Eq)
    return _UNKNOWN


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _value(node: ast.expr, scope: _Scope) -> object:
    """A constant, ``platform.python_implementation()`` (a CPython build: "CPython"), or
    ``os.environ.get(NAME[, default])`` / ``os.getenv(...)`` for a NAME the build's
    environment does not set; else ``_UNKNOWN``."""
    if isinstance(node, ast.Constant):
        return node.value
    if not isinstance(node, ast.Call) or node.keywords:
        return _UNKNOWN
    called = _dotted(node.func)
    if called == "platform.python_implementation" and not node.args:
        return "CPython"
    if (
        called == "sysconfig.get_config_var"
        and len(node.args) == 1
        and _is(node.args[0], "Py_GIL_DISABLED")
    ):
        return _GIL
    if called in ("os.environ.get", "os.getenv") and 1 <= len(node.args) <= 2:
        name, *default = node.args
        if not isinstance(name, ast.Constant) or not isinstance(name.value, str):
            return _UNKNOWN
        if any(
            key == name.value
            or (key.startswith(_PASSED) and (s.value is None or name.value in s.value))
            for key, s in scope.env.items()
        ):
            return _UNKNOWN  # set (or maybe set) for the build: not decided here
        if not default:
            return None
        return default[0].value if isinstance(default[0], ast.Constant) else _UNKNOWN
    return _UNKNOWN


def apply(identifiers: frozenset[str], found: Mapping[str, Setting]) -> frozenset[str]:
    """The identifiers as the files they make: ``cpXY-PLATFORM`` -> ``cp3X-abi3-PLATFORM``
    where ``py_limited_api`` is ``cp3X`` (XY >= 3X; free-threaded and other interpreters
    keep theirs). ``Stop`` where the tag is not known."""
    limited = found.get(NAME)
    if limited is None:
        return identifiers
    if limited.value is None:
        if not any(re.match(r"cp\d+-", i) for i in identifiers):
            return identifiers
        raise Stop(limited.loc, limited.name, limited.why)
    floor = int(limited.value[3:])
    out: set[str] = set()
    for identifier in sorted(identifiers):  # the first too old one, the same every run
        m = re.fullmatch(r"cp3(\d+)-(.+)", identifier)
        if m is None:
            out.add(identifier)
        elif int(m[1]) >= floor:
            out.add(f"{limited.value}-abi3-{m[2]}")
        else:
            raise Stop(
                limited.loc,
                limited.name,
                f"{identifier} is older than py_limited_api {limited.value}: its wheel's tag is not known",
            )
    return frozenset(out)
