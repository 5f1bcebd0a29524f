"""maturin (``PyO3/maturin-action`` or ``maturin build``): the wheels one step builds.

A maturin wheel is one interpreter on one target: ``--interpreter 3.9 3.10 pypy3.9``
names them; pyo3's ``abi3-pyXY`` feature makes one ``cpXY-abi3`` wheel serve every
CPython from XY on. The target (``target:``, ``--target``, else the runner's own) and
the ``manylinux`` setting give the platform tag. Identifiers are written as
cibuildwheel writes its own (``cp312-manylinux_x86_64``), with ``-abi3`` before the
platform for an abi3 wheel (``cp38-abi3-manylinux_x86_64``); a GraalPy one is ``gpXY``
(cibuildwheel's ``gp311_242`` names the GraalPy release too, which ``graalpy3.11`` leaves
to the container). ``--find-interpreter`` and
a build without either are unresolved: they build for whatever Pythons the runner or the
manylinux container has, which the workflow does not say.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from functools import lru_cache

from stagegate.ci.wheels import argv, project
from stagegate.ci.wheels.model import MATURIN, BuildStep, Files, Setting, Wheels, Word
from stagegate.ci.wheels.settings import Stop, first, runner
from stagegate.errors import Loc

_VALUED = {
    "-o",
    "--out",
    "-m",
    "--manifest-path",
    "--target",
    "-F",
    "--features",
    "--compatibility",
    "--manylinux",
    "--profile",
    "-b",
    "--bindings",
    "-j",
    "--jobs",
    "--config",
    "-Z",
    "--color",
}
_ARCH = {  # what targets are called -> (linux/rust arch, macOS arch, Windows tag)
    "x86_64": "x86_64",
    "x64": "x86_64",
    "amd64": "x86_64",
    "i686": "i686",
    "x86": "i686",
    "i386": "i686",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "armv7": "armv7l",
    "armv7l": "armv7l",
    "ppc64le": "ppc64le",
    "powerpc64le": "ppc64le",
    "s390x": "s390x",
    "universal2": "universal2",
    "riscv64": "riscv64",
    "riscv64gc": "riscv64",
}
_NATIVE = {
    "x86_64": "x86_64",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "AMD64": "x86_64",
    "ARM64": "aarch64",
}


def deciders(step: BuildStep, files: Files) -> dict[str, Setting]:
    out: dict[str, Setting] = {"runner": step.runner}
    for name in ("target", "manylinux", "args", "command", "working-directory"):
        if name in step.inputs:
            out[f"with.{name}"] = step.inputs[name]
    words = list(step.args)
    given = out.get("with.args")
    if given is not None:
        if given.value is None:
            out["cli"] = given
            return out
        try:
            words += [Word(text=w, loc=given.loc) for w in _split(given.value)]
        except ValueError as error:
            out["cli"] = Setting(
                name="args",
                value=None,
                loc=given.loc,
                why=f"args cannot be split into words: {error}",
            )
            return out
    _cli(words, out)
    folder = out.get("with.working-directory")
    manifest = out.get("cli.manifest-path")
    features = out.get("cli.features")
    for unknown in (folder, manifest, features):
        if unknown is not None and unknown.value is None:
            out["abi3"] = unknown  # where pyo3's features are read from is not known
            return out
    directory = project.join(step.directory, folder.value if folder and folder.value else "")
    path = project.join(directory, manifest.value if manifest and manifest.value else "Cargo.toml")
    flags = frozenset(
        k[4:] for k in out if k in ("cli.--no-default-features", "cli.--all-features")
    )
    found = project.abi3(files, directory, path, features, flags)
    if found is not None:
        out["abi3"] = found
    return out


@lru_cache(maxsize=256)
def _split(text: str) -> tuple[str, ...]:
    return tuple(shlex.split(text))


_KEYS = {"-o": "out", "-m": "manifest-path", "-F": "features", "--manylinux": "compatibility"}


def _cli(words: list[Word], out: dict[str, Setting]) -> None:
    for option in argv.options(words, _VALUED, many=("-i", "--interpreter")):
        if option.why and option.name in _VALUED:
            key = _KEYS.get(option.name, option.name.lstrip("-"))
            out[f"cli.{key}"] = Setting(
                name=option.name, value=None, loc=option.loc, why=option.why
            )
        elif option.why and option.name in ("-i", "--interpreter"):
            out["cli.interpreter"] = Setting(
                name=option.name, value=None, loc=option.loc, why=option.why
            )
        elif option.why:
            out["cli"] = Setting(
                name="maturin's command line", value=None, loc=option.loc, why=option.why
            )
            return
        elif option.name in ("-i", "--interpreter"):
            # clap's Append: each `--interpreter` adds its values (none: adds nothing)
            before = out.get("cli.interpreter")
            if before is not None and before.value is None:
                continue
            values = " ".join(option.values)
            joined = f"{before.value} {values}".strip() if before is not None else values
            out["cli.interpreter"] = Setting(
                name="--interpreter", value=joined, loc=before.loc if before else option.loc
            )
        elif option.name in ("-f", "--find-interpreter"):
            out["cli.find-interpreter"] = Setting(name=option.name, value="true", loc=option.loc)
        elif option.name in ("-F", "--features") and "cli.features" in out:
            before = out["cli.features"]  # each --features adds its own
            added = f"{before.value} {option.values[0]}" if before.value is not None else None
            out["cli.features"] = Setting(
                name=option.name, value=added, loc=before.loc, why=before.why
            )
        elif option.name in _VALUED:
            key = _KEYS.get(option.name, option.name.lstrip("-"))
            out[f"cli.{key}"] = Setting(name=option.name, value=option.values[0], loc=option.loc)
        elif option.name in ("--no-default-features", "--all-features"):
            out[f"cli.{option.name}"] = Setting(name=option.name, value="true", loc=option.loc)


def _platform_tags(found: Mapping[str, Setting]) -> list[str]:
    platform, native = runner(found)
    at = found["runner"]
    target_setting = found.get("cli.target") or found.get("with.target")
    target = _NATIVE[native]
    if target_setting is not None:
        if target_setting.value is None:
            raise Stop(target_setting.loc, target_setting.name, target_setting.why)
        target = target_setting.value.strip() or target
    arch_word = target.split("-")[0].lower()
    arch = _ARCH.get(arch_word)
    if arch is None:
        raise Stop(
            (target_setting or at).loc, "target", f"target {target!r} is not one stagegate reads"
        )
    if platform == "macos":
        mac = {"x86_64": "x86_64", "aarch64": "arm64", "universal2": "universal2"}.get(arch)
        if mac is None:
            raise Stop(
                (target_setting or at).loc, "target", f"target {target!r} is not a macOS target"
            )
        return [f"macosx_{mac}"]
    if platform == "windows":
        tag = {"x86_64": "win_amd64", "i686": "win32", "aarch64": "win_arm64"}.get(arch)
        if tag is None:
            raise Stop(
                (target_setting or at).loc, "target", f"target {target!r} is not a Windows target"
            )
        return [tag]
    return [f"{_family(found, target)}_{arch}"]


def _family(found: Mapping[str, Setting], target: str) -> str:
    if "musl" in target:
        return "musllinux"
    given = first(found, "cli.compatibility", "with.manylinux")
    text = given[1].lower() if given is not None else ""
    if text.startswith("musllinux"):
        return "musllinux"
    return "linux" if text in ("off", "linux") else "manylinux"


_INTERPRETER = re.compile(r"(?:.*/)?(?:python|cpython|(pypy|graalpy))?(3)\.?(\d+)(t?)(?:\.exe)?")


def _pythons(found: Mapping[str, Setting]) -> list[str]:
    given = found.get("cli.interpreter")
    finder = found.get("cli.find-interpreter")
    if finder is not None:
        raise Stop(
            finder.loc,
            finder.name,
            "--find-interpreter builds for every Python on the runner or in the manylinux container; name them with --interpreter",
        )
    if given is None:
        return []
    if given.value is None:
        raise Stop(given.loc, given.name, given.why)
    out = []
    for word in given.value.split():
        matched = _INTERPRETER.fullmatch(word)
        if matched is None:
            raise Stop(
                given.loc, given.name, f"interpreter {word!r} does not say its Python version"
            )
        kind = {"pypy": "pp", "graalpy": "gp"}.get(matched[1] or "", "cp")
        out.append(f"{kind}{matched[2]}{matched[3]}{matched[4]}")
    return out


def select(found: Mapping[str, Setting]) -> frozenset[str]:
    broken = found.get("cli")
    if broken is not None:
        raise Stop(broken.loc, broken.name, broken.why)
    command = found.get("with.command")
    if command is not None and (command.value or "build").strip() not in ("build", ""):
        if command.value is None:
            raise Stop(command.loc, command.name, command.why)
        return frozenset()  # sdist, upload, publish, ...: no wheels built here
    tags = _platform_tags(found)
    abi3 = found.get("abi3")
    if abi3 is not None and abi3.value is None:
        raise Stop(abi3.loc, abi3.name, abi3.why)
    pythons = _pythons(found)
    if not pythons:
        if abi3 is None:
            at = found["runner"].loc
            raise Stop(
                at,
                "--interpreter",
                "maturin builds for the Python it finds on the runner; name the versions with --interpreter",
            )
        return frozenset(f"{abi3.value}-abi3-{tag}" for tag in tags)
    out: set[str] = set()
    for python in pythons:
        minimum = abi3.value if abi3 is not None else None
        if (
            minimum is not None
            and python.startswith("cp")
            and not python.endswith("t")
            and int(python[3:]) >= int(minimum[3:])
        ):
            out.update(f"{minimum}-abi3-{tag}" for tag in tags)
        else:
            out.update(f"{python}-{tag}" for tag in tags)
    return frozenset(out)


def crate_dir(step: BuildStep, found: Mapping[str, Setting]) -> str | None:
    """The folder of the crate the step builds, from the repository root (None: not
    known)."""
    folder = found.get("with.working-directory")
    manifest = found.get("cli.manifest-path")
    if any(s is not None and s.value is None for s in (folder, manifest)) or "cli" in found:
        return None
    directory = project.join(step.directory, folder.value if folder and folder.value else "")
    if manifest is None or not manifest.value:
        return directory
    return posixpath.dirname(project.join(directory, manifest.value)) or "."


def shipped(step: BuildStep, files: Files) -> Wheels:
    found = deciders(step, files)
    try:
        ids = select(found)
    except Stop as stop:
        return Wheels(
            tool=MATURIN,
            step=step.loc,
            deciders=found,
            identifiers=None,
            unresolved=stop.unresolved,
        )
    return Wheels(
        tool=MATURIN,
        step=step.loc,
        deciders=found,
        identifiers=ids,
        how="maturin",
        project=crate_dir(step, found),
    )


def resolve(found: Mapping[str, Setting]) -> Wheels:
    step = found["runner"].loc if "runner" in found else Loc("", 0, 0)
    try:
        return Wheels(
            tool=MATURIN, step=step, deciders=found, identifiers=select(found), how="maturin"
        )
    except Stop as stop:
        return Wheels(
            tool=MATURIN, step=step, deciders=found, identifiers=None, unresolved=stop.unresolved
        )
