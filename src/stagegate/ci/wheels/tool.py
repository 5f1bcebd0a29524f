"""The installed cibuildwheel (``pip install 'stagegate-ci[wheels]'``), asked for the
identifiers it would build, where it is the very release the workflow pins.

cibuildwheel prints them without building (``--print-build-identifiers``). It runs here,
not on the runner, so what depends on the runner is decided first and handed to it:
the platform (``--platform``) and the architectures (``--archs``, resolved against the
runner's own architecture by the table's rules); the project's files that it reads are
written to a temporary folder, and only the ``CIBW_*`` variables of the step are in its
environment. Answers are remembered per input for the life of the process.
"""

from __future__ import annotations

import os
import platform as host_platform
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from stagegate.ci.wheels import cibw, table
from stagegate.ci.wheels.model import Setting
from stagegate.ci.wheels.settings import Stop

TIMEOUT = 60.0


@cache
def installed() -> str | None:
    """The installed cibuildwheel's version, or None."""
    from importlib import metadata

    try:
        return metadata.version("cibuildwheel")
    except metadata.PackageNotFoundError:
        return None


def select(found: Mapping[str, Setting]) -> tuple[frozenset[str], str] | None:
    """The installed cibuildwheel's answer, or None where it cannot give the runner's
    (another release, or a runner whose own architecture changes its answer)."""
    version = installed()
    setting = found.get("version")
    if version is None or setting is None or setting.value is None:
        return None
    if setting.value.strip().removeprefix("v") != version:
        return None
    if any(s.value is None for s in found.values()):
        return None  # the table's reading names the setting that is not known
    platform, native = cibw.host(found)
    numeric = tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
    covered = numeric in table.KNOWN
    here = host_platform.machine()
    if platform in table.CROSS:
        if covered:
            return None  # the table knows this release: it answers for the runner
        raise Stop(
            setting.loc,
            setting.name,
            f"the installed cibuildwheel {version} runs on this machine, not on the runner "
            f"that builds its {platform} wheels",
        )
    if platform == "macos" and native == "arm64" and here == "x86_64" and not covered:
        raise Stop(
            setting.loc,
            setting.name,
            f"the installed cibuildwheel {version} runs on this x86_64 machine, where it leaves out "
            "the PyPy and GraalPy arm64 builds an arm64 Mac makes",
        )
    if platform == "macos" and native == "arm64" and here == "x86_64":
        return None  # the table knows this release: it answers for the runner
    archs = ""
    if not _only(found):
        opts = cibw.Options(found, numeric, platform)
        text = opts.value("cli.archs") or opts.cascade("archs", plat_env=True)[0] or "auto"
        keywords = {"auto", "auto64", "auto32", "native", "all"} & set(re.split(r"[\s,]+", text))
        same_host = platform == "linux" and native == here
        if keywords and not same_host and not covered:
            raise Stop(
                setting.loc,
                setting.name,
                f"cibuildwheel {version} resolves archs {text!r} on the runner ({platform} {native}); "
                f"stagegate knows how releases 2.0.0 to {'.'.join(map(str, table.NEWEST))} do, not this one",
            )
        archs = "" if same_host else ",".join(sorted(cibw._archs(opts, native)))
    env = tuple(
        sorted((k[4:], s.value or "") for k, s in found.items() if k.startswith("env.CIBW_"))
    )
    return _run(platform, archs, env, _sources(found), _argv(found), version)


def _only(found: Mapping[str, Setting]) -> bool:
    return bool(
        (
            found.get("cli.only")
            or found.get("with.only")
            or Setting(name="", value="", loc=found["runner"].loc)
        ).value
    )


def _argv(found: Mapping[str, Setting]) -> tuple[str, ...]:
    out: list[str] = []
    for key, flag in (("cli.only", "--only"), ("with.only", "--only"), ("cli.enable", "--enable")):
        setting = found.get(key)
        if setting is not None and setting.value:
            for word in setting.value.split() if flag == "--enable" else [setting.value]:
                out += [flag, word]
    if "cli.prerelease-pythons" in found:
        out.append("--prerelease-pythons")
    return tuple(out)


def _sources(found: Mapping[str, Setting]) -> tuple[tuple[str, str], ...]:
    """The project files cibuildwheel reads, rebuilt from the deciders: the config file's
    options and the project's Python requirement (nothing else it reads decides
    identifiers)."""
    lines = ["[tool.cibuildwheel]"]
    tables: dict[str, list[str]] = {}
    for key, setting in sorted(found.items()):
        if not key.startswith("toml.") or setting.value is None:
            continue
        parts = key.split(".")
        value = _toml_value(parts[-1], setting.value)
        (tables.setdefault(parts[1], []) if len(parts) == 3 else lines).append(
            f"{parts[-1]} = {value}"
        )
    for name, entries in tables.items():
        lines += [f"[tool.cibuildwheel.{name}]", *entries]
    requires = found.get("requires-python")
    head = ['[project]\nname = "x"\nversion = "0"']
    if requires is not None and requires.value is not None:
        head.append(f"requires-python = {_quote(requires.value)}")
    return (("pyproject.toml", "\n".join([*head, *lines]) + "\n"),)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_value(option: str, text: str) -> str:
    if option == "free-threaded-support":
        return "true" if cibw._truthy(text) else "false"
    if option == "enable":
        return "[" + ", ".join(_quote(w) for w in text.split()) + "]"
    return _quote(text)


@cache
def _run(
    platform: str,
    archs: str,
    env: tuple[tuple[str, str], ...],
    sources: tuple[tuple[str, str], ...],
    argv: tuple[str, ...],
    version: str,
) -> tuple[frozenset[str], str] | None:
    with tempfile.TemporaryDirectory(prefix="stagegate-cibw-") as folder:
        for name, text in sources:
            Path(folder, name).write_text(text, encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "cibuildwheel",
            "--print-build-identifiers",
            "--platform",
            platform,
        ]
        if archs:
            command += ["--archs", archs]
        base = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_") and k != "CI"}
        try:
            done = subprocess.run(
                [*command, *argv, folder],
                env={**base, **dict(env)},
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if done.returncode != 0:
        return None
    ids = frozenset(
        line.strip() for line in done.stdout.splitlines() if "-" in line and " " not in line.strip()
    )
    return ids, f"cibuildwheel {version} (installed)"
