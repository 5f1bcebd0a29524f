"""cibuildwheel: the build identifiers one step builds, computed as cibuildwheel computes
them (``--print-build-identifiers``) from every setting that decides them.

``deciders`` gathers the settings a step's identifiers depend on (the pin, the runner,
``CIBW_*`` variables, the command line or the action's inputs, ``[tool.cibuildwheel]``,
``requires-python``), each where it is written; ``resolve`` turns them into identifiers
with the table of the pinned release (``table``), or with the installed cibuildwheel
where it is that very release (``tool``). Both are pure in their inputs, so that
``compare`` can ask what a single setting's old value would have given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from stagegate.ci.wheels import argv, limited, project, table
from stagegate.ci.wheels.model import CIBUILDWHEEL, BuildStep, Files, Setting, Wheels, Word
from stagegate.ci.wheels.patterns import Selector, TooLong
from stagegate.ci.wheels.settings import Stop, first, runner
from stagegate.errors import Loc

_VALUED = {
    "--platform": "platform",
    "--archs": "archs",
    "--only": "only",
    "--enable": "enable",
    "--config-file": "config-file",
    "--output-dir": "output-dir",
}
_FLAGS = {
    "--prerelease-pythons": "prerelease-pythons",
    "--allow-empty": "",
    "--debug-traceback": "",
    "--clean-cache": "",
    "--print-build-identifiers": "print",
}
_INPUTS = ("package-dir", "config-file", "only")
ENV = frozenset(
    {
        "CIBW_BUILD",
        "CIBW_SKIP",
        "CIBW_ARCHS",
        "CIBW_ARCHS_LINUX",
        "CIBW_ARCHS_MACOS",
        "CIBW_ARCHS_WINDOWS",
        "CIBW_ARCHS_IOS",
        "CIBW_ARCHS_ANDROID",
        "CIBW_ENABLE",
        "CIBW_PROJECT_REQUIRES_PYTHON",
        "CIBW_FREE_THREADED_SUPPORT",
        "CIBW_PRERELEASE_PYTHONS",
        "CIBW_PLATFORM",
    }
)
"""The variables that decide which identifiers are built (any release)."""


def _cli(args: tuple[Word, ...], out: dict[str, Setting]) -> None:
    """The command line's options as ``cli.NAME`` settings (``--enable`` may repeat)."""
    for option in argv.options(args, _VALUED):
        if option.why and option.name in _VALUED:
            out[f"cli.{_VALUED[option.name]}"] = Setting(
                name=option.name, value=None, loc=option.loc, why=option.why
            )
        elif option.why:
            out["cli"] = Setting(
                name="cibuildwheel's command line", value=None, loc=option.loc, why=option.why
            )
            return
        elif option.name in _VALUED:
            key, given = f"cli.{_VALUED[option.name]}", option.values[0]
            if key == "cli.enable" and key in out:
                given = f"{out[key].value} {given}"
            out[key] = Setting(name=option.name, value=given, loc=option.loc)
        elif option.name in _FLAGS:
            if _FLAGS[option.name]:
                out[f"cli.{_FLAGS[option.name]}"] = Setting(
                    name=option.name, value="true", loc=option.loc
                )
        elif option.name:
            why = f"{option.name} is not a cibuildwheel option stagegate knows"
            out["cli"] = Setting(name=option.name, value=None, loc=option.loc, why=why)
            return
        else:
            out["cli.package-dir"] = Setting(
                name="package dir", value=option.values[0], loc=option.loc
            )


def _sdist_of_run(package: Setting) -> bool:
    """A package dir that is the sdist the run made, named by a step's output: its known
    text puts it in ``dist/`` or ends with an sdist's suffix (``dist/${{ steps.names
    .outputs.sdist }}``): cibuildwheel then reads the project files packed into it, those
    of the repository's root, as for a literal ``dist/pkg-1.0.tar.gz``."""
    shape = package.partial.strip().removeprefix("./")
    return bool(shape) and (shape.startswith("dist/") or shape.endswith((".tar.gz", ".zip")))


def package_dir(step: BuildStep, found: Mapping[str, Setting]) -> str | None:
    """The folder whose project the step builds, from the repository root (None: its
    package dir is not known)."""
    package = found.get("cli.package-dir") or found.get("with.package-dir")
    if package is not None and package.value is None and not _sdist_of_run(package):
        return None
    given = package.value.strip() if package and package.value else "."
    if package is not None and package.value is None:
        given = "sdist.tar.gz"  # the run's sdist, named by a step's output (below)
    if given.endswith((".tar.gz", ".zip")):
        # an sdist: cibuildwheel reads the project files packed into it, which are those of
        # the folder it was built from; a package dir of an sdist made in the run is the
        # repository's root, where `python -m build --sdist` makes it
        given = "."
    return project.join(step.directory, given)


def deciders(step: BuildStep, files: Files) -> dict[str, Setting]:
    """Every setting the identifiers of ``step`` depend on, by key."""
    out: dict[str, Setting] = {"runner": step.runner}
    out["version"] = step.version or Setting(
        name="cibuildwheel version",
        value=None,
        loc=step.loc,
        why="cibuildwheel is not pinned: the release installed at run time decides",
    )
    for name, setting in step.env.items():
        if name in ENV:
            out[f"env.{name}"] = setting
    for name in _INPUTS:
        if name in step.inputs:
            out[f"with.{name}"] = step.inputs[name]
    _cli(step.args, out)
    directory = package_dir(step, out)
    if directory is None:
        out["files"] = out.get("cli.package-dir") or out["with.package-dir"]
        return out
    pyproject_path = project.join(directory, "pyproject.toml")
    pyproject = project.load_toml(files, pyproject_path)
    config = out.get("cli.config-file") or out.get("with.config-file")
    config_path = pyproject_path
    if config is not None:
        if config.value is None:
            out["files"] = config
            return out
        config_path = project.join(step.directory, config.value.replace("{package}", directory))
    loaded = pyproject if config_path == pyproject_path else project.load_toml(files, config_path)
    for found in (pyproject, loaded):
        if isinstance(found, Setting):
            out["files"] = found
            return out
    if isinstance(loaded, tuple):
        out.update(project.cibuildwheel_options(config_path, *loaded))
    requires = project.requires_python(files, directory, pyproject)
    if requires is not None:
        out["requires-python"] = requires
    tag = limited.setting(files, directory, {**step.env, **_passed(loaded, config_path)})
    if tag is not None:
        out[limited.NAME] = tag
    return out


def _passed(loaded: object, path: str) -> dict[str, Setting]:
    """``[tool.cibuildwheel] environment`` and ``environment-pass`` (each platform's too),
    as text: the variables they pass into the build."""
    out: dict[str, Setting] = {}
    if not isinstance(loaded, tuple):
        return out
    data = loaded[1]
    tool = data.get("tool")
    section = tool.get("cibuildwheel") if isinstance(tool, dict) else None
    if not isinstance(section, dict):
        return out
    for where, options in [("", section)] + [
        (f"{p}.", section[p]) for p in project.PLATFORMS if isinstance(section.get(p), dict)
    ]:
        for option in ("environment", "environment-pass"):
            if option in options:
                out[f"toml.environment.{where}{option}"] = Setting(
                    name=option, value=repr(options[option]), loc=Loc(path, 1, 1)
                )
    return out


# --------------------------------------------------------------------------- resolution


class Options:
    """The deciders read as one release of cibuildwheel reads its options."""

    def __init__(self, found: Mapping[str, Setting], version: table.Version, platform: str) -> None:
        self.found = found
        self.version = version
        self.platform = platform

    def value(self, key: str) -> str | None:
        setting = self.found.get(key)
        if setting is None:
            return None
        if setting.value is None:
            raise Stop(setting.loc, setting.name, setting.why or f"{setting.name} is not known")
        return setting.value

    def cascade(
        self, option: str, *, plat_env: bool, ignore_empty: bool = False
    ) -> tuple[str | None, str | None]:
        """The value cibuildwheel reads for ``option`` (defaults aside) and its key:
        the config file, its platform table, ``CIBW_OPTION``, then ``CIBW_OPTION_PLATFORM``."""
        env = "env.CIBW_" + option.upper().replace("-", "_")
        keys = [f"toml.{option}", f"toml.{self.platform}.{option}", env]
        if plat_env:
            keys.append(f"{env}_{self.platform.upper()}")
        result: tuple[str | None, str | None] = (None, None)
        for key in keys:
            value = self.value(key)
            if value is None or (ignore_empty and not value):
                continue
            result = (value, key)
        return result

    def where(self, key: str | None) -> tuple[Loc, str]:
        setting = self.found.get(key) if key else None
        if setting is None:
            step = self.found["version"]
            return step.loc, "cibuildwheel's defaults"
        return setting.loc, setting.name


def _truthy(text: str) -> bool:
    return text.strip().lower() in ("y", "yes", "t", "true", "on", "1")


def _unknown_options(opts: Options) -> None:
    """A config-file option the pinned release does not know stops it (it checks its
    own platform's table and the plain one)."""
    for option in ("enable", "free-threaded-support"):
        for key in (f"toml.{option}", f"toml.{opts.platform}.{option}"):
            if key in opts.found and not table.reads(opts.version, option):
                loc, name = opts.where(key)
                raise Stop(
                    loc,
                    name,
                    f"cibuildwheel {_dotted(opts.version)} stops on {option} in its config file: an option it does not know",
                    certain=True,
                )


def _enabled(opts: Options) -> set[str]:
    """The ``enable`` groups (and the older switches that stand for them)."""
    _unknown_options(opts)
    version, groups = opts.version, set[str]()
    if table.reads(version, "enable"):
        plain = opts.value("toml.enable")
        per_platform = opts.value(f"toml.{opts.platform}.enable")
        base = per_platform if per_platform is not None else plain
        appended = opts.value("env.CIBW_ENABLE")
        cli = opts.value("cli.enable") if table.reads(version, "--enable") else None
        text = " ".join(t for t in (base, appended, cli) if t)
        known = {name for name, when in table.ENABLE_GROUPS if table._in(version, when)}
        for word in text.split():
            if word == "all" and table._in(version, table.ENABLE_ALL):
                groups |= known
                if table._in(version, table.ALL_WITHOUT_RISCV):
                    groups.discard("cpython-experimental-riscv64")
            elif word in known:
                groups.add(word)
            else:
                loc, name = opts.where(
                    "env.CIBW_ENABLE" if appended and word in appended.split() else "toml.enable"
                )
                raise Stop(
                    loc,
                    name,
                    f"cibuildwheel {_dotted(version)} stops on the unknown enable group {word!r}",
                    certain=True,
                )
    return groups | _legacy(opts, bool(groups))


def _legacy(opts: Options, with_enable: bool) -> set[str]:
    version, groups = opts.version, set[str]()
    threaded, key = opts.cascade("free-threaded-support", plat_env=False, ignore_empty=True)
    if not table.reads(version, "free-threaded-support"):
        threaded = None  # an environment variable it does not read (the file is checked first)
    prerelease = table.reads(version, "CIBW_PRERELEASE_PYTHONS") and (
        _truthy(opts.value("env.CIBW_PRERELEASE_PYTHONS") or "0")
        or opts.value("cli.prerelease-pythons") is not None
    )
    if threaded is not None and _truthy(threaded):
        groups.add("cpython-freethreading")
    if prerelease:
        groups.add("cpython-prerelease")
    if groups and with_enable and table.reads(version, "enable"):
        loc, name = opts.where(key or "env.CIBW_PRERELEASE_PYTHONS")
        raise Stop(
            loc,
            name,
            f"cibuildwheel {_dotted(version)} stops when {name} and enable are both set",
            certain=True,
        )
    for group, when in table.ALWAYS_ENABLED:
        if table._in(version, when):
            groups.add(group)
    return groups


def _archs(opts: Options, native: str) -> frozenset[str]:
    version, platform = opts.version, opts.platform
    key: str | None = "cli.archs"
    text = opts.value("cli.archs") or None  # `--archs ""` is not given
    if text is None:
        ignore = table._in(version, table.ARCHS_IGNORE_EMPTY)
        text, key = opts.cascade("archs", plat_env=True, ignore_empty=ignore)
    if text is not None and not text.strip():
        loc, name = opts.where(key)
        raise Stop(
            loc,
            name,
            f"cibuildwheel {_dotted(version)} stops on an empty archs (3.1.4 and later ignore it)",
            certain=True,
        )
    text = text or "auto"
    allowed = table.all_archs(version, platform)
    out: set[str] = set()
    for word in re.split(r"[\s,]+", text.strip()):
        if word == "auto":
            out |= table.auto_archs(version, platform, native)
        elif word == "native":
            out.add(native)
        elif word == "all":
            out |= allowed
        elif word in ("auto64", "auto32"):
            found = table.bitness_archs(version, platform, native, word[4:])
            if isinstance(found, str):
                loc, name = opts.where(key)
                raise Stop(loc, name, found)
            out |= found
        elif word:
            out.add(word)
    if not out or not out <= allowed:
        loc, name = opts.where(key)
        bad = ", ".join(sorted(out - allowed)) or "no architecture"
        raise Stop(
            loc,
            name,
            f"cibuildwheel {_dotted(version)} stops on archs {bad} for {platform}",
            certain=True,
        )
    return frozenset(out)


def _dotted(version: table.Version) -> str:
    return ".".join(map(str, version))


def refused(found: Mapping[str, Setting]) -> None:
    """``Stop`` where a variable the pinned release (or one a moving ref may be) refuses
    is set: the build stops after choosing its identifiers, so
    ``--print-build-identifiers`` does not show it."""
    setting = found.get("version")
    text = (setting.value or "").strip() if setting else ""
    if re.fullmatch(r"v\d+(?:\.\d+)?", text):
        try:
            versions: tuple[table.Version, ...] = releases(found)
        except Stop:
            return
    elif (
        re.fullmatch(r"\d+\.\d+\.\d+", text.removeprefix("v"))
        and table.v(text.removeprefix("v")) in table.KNOWN
    ):
        versions = (table.v(text.removeprefix("v")),)
    else:
        return
    for version in versions:
        for name, when in table.REFUSED_ENV.items():
            env = found.get(f"env.{name}")
            if env is not None and table._in(version, when):
                raise Stop(
                    env.loc,
                    env.name,
                    f"cibuildwheel {_dotted(version)} stops when {name} is set (use enable)",
                    certain=True,
                )


def releases(found: Mapping[str, Setting]) -> tuple[table.Version, ...]:
    """The releases the step may run: the one it pins, or for a moving ref to a series
    (``@v3.2``, ``@v2``: its newest release) every release of that series, where the table
    knows a later series (so no later release of it is expected); ``Stop`` otherwise."""
    setting = found["version"]
    text = (setting.value or "").strip()
    series = re.fullmatch(r"v(\d+)(?:\.(\d+))?", text)
    if series is None:
        return (pinned(found),)
    prefix = tuple(int(p) for p in series.groups() if p is not None)
    known = sorted(r for r in table.KNOWN if r[: len(prefix)] == prefix)
    if not known or known[-1] == table.NEWEST:
        raise Stop(
            setting.loc,
            setting.name,
            f"cibuildwheel {text} is a moving ref whose newest release stagegate cannot know: "
            "pin an exact version, or a commit with a `# vX.Y.Z` comment",
        )
    return tuple(known)


def pinned(found: Mapping[str, Setting]) -> table.Version:
    """The exact release the step runs; ``Stop`` where it is not one the table knows."""
    setting = found["version"]
    if setting.value is None:
        raise Stop(
            setting.loc, setting.name, setting.why or "the cibuildwheel version is not known"
        )
    text = setting.value.strip().removeprefix("v")
    if not re.fullmatch(r"\d+\.\d+\.\d+", text):
        raise Stop(
            setting.loc,
            setting.name,
            f"cibuildwheel {setting.value} is not one release (a moving tag or range): "
            "pin an exact version, or a commit with a `# vX.Y.Z` comment",
        )
    version = table.v(text)
    if version in table.OLD:
        raise Stop(
            setting.loc,
            setting.name,
            f"cibuildwheel {text} is a 1.x release, whose options stagegate does not compute "
            f"(2.0.0 to {_dotted(table.NEWEST)}); what it may build is bounded by the "
            "identifiers it knows",
        )
    if version not in table.KNOWN:
        raise Stop(
            setting.loc,
            setting.name,
            f"cibuildwheel {text} is not a release stagegate knows the defaults of "
            f"(2.0.0 to {_dotted(table.NEWEST)}); install it with stagegate-ci[wheels] to compute its identifiers",
        )
    return version


def host(found: Mapping[str, Setting], machine: tuple[str, str] | None = None) -> tuple[str, str]:
    """The platform the step builds for and the architecture ``native`` stands for there
    (the runner's own, or ``machine``'s; for iOS and Android, its counterpart on that
    platform)."""
    platform, native = machine or runner(found)
    asked = first(found, "cli.platform", "env.CIBW_PLATFORM")
    if asked is None or (asked[1] or "auto") in ("auto", platform):
        return platform, native
    setting, wanted = asked
    cross = table.CROSS_HOSTS.get(wanted, {}).get((platform, native))
    if cross is None:
        raise Stop(
            setting.loc,
            setting.name,
            f"building {wanted} wheels on a {platform} {native} runner is not computed by stagegate",
        )
    return wanted, cross


def _python(identifier: str) -> tuple[int, int]:
    tag = identifier.split("-")[0].split("_")[0].removesuffix("t")
    return int(tag[2]), int(tag[3:])


def _requires(opts: Options) -> str | None:
    key = "env.CIBW_PROJECT_REQUIRES_PYTHON"
    text = opts.value(key) or None
    if text is None:
        key, text = "requires-python", opts.value("requires-python")
    if text is None:
        return None
    if _specifier(text) is None:
        loc, name = opts.where(key)
        raise Stop(
            loc,
            name,
            f"{text!r} is not a version specifier; cibuildwheel stops on it",
            certain=True,
        )
    return text


@lru_cache(maxsize=256)
def _specifier(text: str) -> Any:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


@lru_cache(maxsize=4096)
def _admits(requires: str, identifier: str) -> bool:
    """Whether a project that requires ``requires`` is built for ``identifier``: as
    cibuildwheel asks it, of the interpreter's version X.Y.99."""
    from packaging.version import Version

    major, minor = _python(identifier)
    return bool(_specifier(requires).contains(Version(f"{major}.{minor}.99")))


YES_OR_NO = ("env.CIBW_PRERELEASE_PYTHONS",)
"""Options cibuildwheel reads as yes or no (``_truthy``): whatever text an expression it
cannot be told (``${{ !startsWith(github.ref, 'refs/tags/') }}``) gives, it is one of two."""


def select(found: Mapping[str, Setting]) -> tuple[frozenset[str], str]:
    """The identifiers the deciders select, by the table of the release they pin; for a
    moving ref, of each release it may be, where they all select the same; for a yes-or-no
    option whose value is not known, with yes and with no, where both select the same."""
    for key in YES_OR_NO:
        setting = found.get(key)
        if setting is not None and setting.value is None:
            either = [
                select({**found, key: Setting(name=setting.name, value=value, loc=setting.loc)})
                for value in ("1", "0")
            ]
            if either[0][0] != either[1][0]:
                raise Stop(setting.loc, setting.name, setting.why or f"{setting.name} is not known")
            return either[1][0], f"{either[1][1]} (the same whatever {setting.name} is)"
    versions = releases(found)
    answers = {_select(found, version)[0] for version in versions}
    if len(answers) > 1:
        setting = found["version"]
        raise Stop(
            setting.loc,
            setting.name,
            f"cibuildwheel {setting.value} is a moving ref, and its releases "
            f"{_dotted(versions[0])} to {_dotted(versions[-1])} build different wheels here: "
            "pin an exact version",
        )
    if len(versions) == 1:
        return _select(found, versions[0])
    span = f"{_dotted(versions[0])} to {_dotted(versions[-1])}"
    return answers.pop(), f"the table of cibuildwheel {span} ({found['version'].value}: alike)"


MACHINES: tuple[tuple[str, str], ...] = (
    *(
        ("linux", arch)
        for arch in ("x86_64", "i686", "aarch64", "ppc64le", "s390x", "armv7l", "riscv64")
    ),
    ("macos", "x86_64"),
    ("macos", "arm64"),
    ("windows", "AMD64"),
    ("windows", "x86"),
    ("windows", "ARM64"),
)
"""Every machine cibuildwheel runs on, as its platform and own architecture."""


def possible(found: Mapping[str, Setting]) -> frozenset[str] | None:
    """Every identifier the deciders may select on whatever machine runs them: a bound
    for a step whose runner is not known (None: something else is not known either)."""
    if found.get("files") or found.get("cli"):
        return None
    if "cli.print" in found:
        return frozenset()
    setting = found.get("version")
    text = (setting.value or "").strip().removeprefix("v") if setting is not None else ""
    if re.fullmatch(r"1\.\d+\.\d+", text):  # a 1.x release: what it knows at all
        return table.old_identifiers(table.v(text))
    out: set[str] = set()
    try:
        refused(found)
        for version in releases(found):
            for machine in MACHINES:
                if machine[1] in table.all_archs(
                    version, machine[0]
                ):  # else it builds nothing there
                    out |= limited.apply(_select(found, version, machine)[0], found)
    except Stop:
        return None
    return frozenset(out)


def _select(
    found: Mapping[str, Setting], version: table.Version, machine: tuple[str, str] | None = None
) -> tuple[frozenset[str], str]:
    """The identifiers the deciders select, by the table of ``version`` (on ``machine``:
    default, the runner's)."""
    platform, native = host(found, machine)
    if not table.all_archs(version, platform):
        setting = found.get("cli.platform") or found["env.CIBW_PLATFORM"]
        raise Stop(
            setting.loc,
            setting.name,
            f"cibuildwheel {_dotted(version)} does not build {platform} wheels; it stops",
            certain=True,
        )
    opts = Options(found, version, platform)
    only_key = "cli.only" if "cli.only" in found else "with.only"
    only = opts.value(only_key) if table.reads(version, "--only") else None
    requires = _requires(opts)
    fold = platform == "windows"
    try:
        if only:
            build, skip = Selector(only, fold_case=fold), Selector("")
            archs = table.all_archs(version, platform)
            enabled = {name for name, _ in table.ENABLE_GROUPS}
        else:
            build_text, _ = opts.cascade("build", plat_env=False)
            skip_text, _ = opts.cascade("skip", plat_env=False)
            build = Selector(build_text or "*", fold_case=fold)
            skip = Selector(skip_text or "", fold_case=fold)
            archs = _archs(opts, native)
            enabled = _enabled(opts)
    except TooLong as error:
        raise Stop(
            found["version"].loc,
            "CIBW_BUILD/CIBW_SKIP",
            f"a selector's braces expand too far: {error}",
        ) from None
    gated = table.gated(version, frozenset(enabled))
    out: set[str] = set()
    for identifier, arch in table.identifiers(version, platform):
        if arch not in archs or table.host_drops(version, platform, native, identifier):
            continue
        if requires is not None and not _admits(requires, identifier):
            continue
        if gated is not None and gated.match(identifier):
            continue
        if build(identifier) and not skip(identifier):
            out.add(identifier)
    return frozenset(out), f"the table of cibuildwheel {_dotted(version)}"


def printed(step: BuildStep, files: Files) -> tuple[str | None, Any]:
    """What ``cibuildwheel --print-build-identifiers`` prints for ``step``: (its lines,
    how they were computed), or (None, the ``Unresolved`` saying why not). Each
    identifier the deciders select, raw (a limited-API build is listed as it is asked
    for), in the order of the pinned release's table (cibuildwheel lists them in its own
    order; a matrix made from them has the same rows). For a ``--platform`` other than
    the runner's, the runner's architecture is not guessed: the lines are those every
    machine of that platform would print, where they agree."""
    found = deciders(step, files)
    try:
        broken = found.get("files") or found.get("cli")
        if broken is not None:
            raise Stop(broken.loc, broken.name, broken.why)
        answers: set[tuple[str, ...]] = set()
        how = ""
        for version in releases(found):
            for machine in _print_hosts(found):
                ids, how = _select(found, version, machine)
                platform = host(found, machine)[0]
                answers.add(tuple(i for i, _ in table.identifiers(version, platform) if i in ids))
        if len(answers) > 1:
            setting = found.get("cli.platform") or found["version"]
            raise Stop(
                setting.loc,
                setting.name,
                "cibuildwheel --print-build-identifiers prints other identifiers on other "
                "machines (or releases) here: which one runs it is not known",
            )
    except Stop as stop:
        return None, stop.unresolved
    return "".join(f"{i}\n" for i in answers.pop()), how


def _print_hosts(found: Mapping[str, Setting]) -> list[tuple[str, str] | None]:
    """The machines a print of identifiers is computed for: the runner's (None), or
    for another ``--platform``, each machine of it."""
    asked = first(found, "cli.platform", "env.CIBW_PLATFORM")
    if asked is None or asked[1] in ("", "auto"):
        return [None]
    try:
        if runner(found)[0] == asked[1]:
            return [None]
    except Stop:
        pass
    machines = [m for m in MACHINES if m[0] == asked[1]]
    if not machines:
        raise Stop(
            asked[0].loc, asked[0].name, f"{asked[1]!r} is not a platform stagegate computes here"
        )
    return list(machines)


Ask = Callable[[Mapping[str, Setting]], "tuple[frozenset[str], str] | None"]
"""A second source of identifiers tried first (``tool.select``: the installed release)."""


def resolve(found: Mapping[str, Setting], *, ask: Ask | None = None) -> Wheels:
    """``Wheels`` from deciders: ``ask``'s answer where it has one, else the table of the
    pinned release, else unresolved."""
    step = found["version"].loc if "version" in found else Loc("", 0, 0)
    try:
        broken = found.get("files") or found.get("cli")
        if broken is not None:
            raise Stop(broken.loc, broken.name, broken.why)
        refused(found)
        answer = ask(found) if ask is not None else None
        ids, how = answer if answer is not None else select(found)
        ids = limited.apply(ids, found)
        return Wheels(tool=CIBUILDWHEEL, step=step, deciders=found, identifiers=ids, how=how)
    except Stop as stop:
        return Wheels(
            tool=CIBUILDWHEEL,
            step=step,
            deciders=found,
            identifiers=None,
            unresolved=stop.unresolved,
            stopped=stop.certain,
        )


def shipped(step: BuildStep, files: Files, *, ask: Ask | None = None) -> Wheels:
    """What one cibuildwheel step ships."""
    found = deciders(step, files)
    wheels = resolve(found, ask=ask)
    if "cli.print" in found and wheels.identifiers is not None:
        return Wheels(
            tool=CIBUILDWHEEL,
            step=step.loc,
            deciders=found,
            identifiers=frozenset(),
            how=wheels.how,
        )
    directory = package_dir(step, found)
    return Wheels(
        tool=CIBUILDWHEEL,
        step=step.loc,
        deciders=found,
        identifiers=wheels.identifiers,
        unresolved=wheels.unresolved,
        how=wheels.how,
        project=directory,
        naming=naming(step, files, directory),
        stopped=wheels.stopped,
    )


_IMAGE = re.compile(r"(?:CIBW_)?(MANY|MUSL)LINUX[-_](\w+)[-_]IMAGE", re.IGNORECASE)


def naming(step: BuildStep, files: Files, directory: str | None) -> tuple[tuple[str, str], ...]:
    """The container image of each architecture (``CIBW_MANYLINUX_X86_64_IMAGE``, else
    pyproject.toml's ``manylinux-x86_64-image``): they name the wheel files' platform tags."""
    found: dict[str, str] = {}
    loaded = (
        project.load_toml(files, project.join(directory, "pyproject.toml")) if directory else None
    )
    if isinstance(loaded, tuple):
        tool = loaded[1].get("tool")
        table = tool.get("cibuildwheel") if isinstance(tool, dict) else None
        for key, value in table.items() if isinstance(table, dict) else ():
            if (m := _IMAGE.fullmatch(key)) is not None:
                found[f"{m[1]}linux-{m[2]}".lower()] = str(value)
    for name, setting in step.env.items():
        if (m := _IMAGE.fullmatch(name)) is not None and setting.value != "":  # empty: ignored
            found[f"{m[1]}linux-{m[2]}".lower()] = setting.value or "?"
    return tuple(sorted(found.items()))


_POLICY = re.compile(r"(manylinux\d{4}|manylinux_\d+_\d+|musllinux_\d+_\d+)")
_LINUX = re.compile(
    r"(?P<python>[a-z]+)\d+t?(?:_\d+)?(?:-abi3)?-(?P<family>many|musl)linux_(?P<arch>\w+)"
)


def images(wheels: Wheels) -> frozenset[tuple[str, str]] | None:
    """Each identifier of a cibuildwheel step with the policy of the image its Linux wheel
    is built in (``manylinux2014``, ``manylinux_2_28``: it names the wheel file), given or
    the pinned release's default (``default`` where that is not known); ``""`` off Linux.
    None where the identifiers are not known."""
    if wheels.identifiers is None:
        return None
    given = {key: value.strip() for key, value in wheels.naming if value.strip()}
    try:
        versions = (
            releases(wheels.deciders)
            if wheels.tool == CIBUILDWHEEL and "version" in wheels.deciders
            else ()
        )
    except Stop:
        versions = ()
    out: set[tuple[str, str]] = set()
    for identifier in wheels.identifiers:
        m = _LINUX.fullmatch(identifier)
        if m is None or wheels.tool != CIBUILDWHEEL:
            out.add((identifier, ""))
            continue
        pypy = "pypy_" if m["python"] == "pp" and m["family"] == "many" else ""
        key = f"{m['family']}linux-{pypy}{m['arch']}"
        value = given.get(key)
        if value is not None:
            policy = _POLICY.search(value)
            out.add((identifier, policy[1] if policy else value))
            continue
        defaults = {table.default_image(v, key) for v in versions}
        found = defaults.pop() if len(defaults) == 1 else None
        out.add((identifier, found or "default"))
    return frozenset(out)
