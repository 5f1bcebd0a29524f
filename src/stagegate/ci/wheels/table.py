"""What cibuildwheel builds, by version: facts of our own writing, read off the history of
pypa/cibuildwheel (its build-platforms list, its selector and its architecture rules) for
every release from 2.0.0 to 4.2.0; for the 1.x releases from 1.8.0 to 1.12.0, only the
identifiers each knows (``OLD``: a bound, their options not computed).

Each fact holds over a range of versions, ``(first, last)``, both included; ``None`` as
``last`` means "still true in the newest version known here" (``NEWEST``). A version
outside ``KNOWN`` (a release this table does not list) has no facts: whoever asks gets
``None`` and reports the identifiers as unresolved, never guessed.

``bench/wheels_table.py`` checks these facts against a checkout of cibuildwheel.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from functools import cache

Version = tuple[int, ...]

_RELEASES = (
    "2.0.0 2.0.1 2.1.1 2.1.2 2.1.3 2.2.0 2.2.1 2.2.2 2.3.0 2.3.1 2.4.0 2.5.0 2.6.0 2.6.1 "
    "2.7.0 2.8.0 2.8.1 2.9.0 2.10.0 2.10.1 2.10.2 2.11.0 2.11.1 2.11.2 2.11.3 2.11.4 "
    "2.12.0 2.12.1 2.12.2 2.12.3 2.13.0 2.13.1 2.14.0 2.14.1 2.15.0 2.16.0 2.16.1 2.16.2 "
    "2.16.3 2.16.4 2.16.5 2.17.0 2.18.0 2.18.1 2.19.0 2.19.1 2.19.2 2.20.0 2.21.0 2.21.1 "
    "2.21.2 2.21.3 2.22.0 2.23.0 2.23.1 2.23.2 2.23.3 2.23.4 3.0.0 3.0.1 3.1.0 3.1.1 "
    "3.1.2 3.1.3 3.1.4 3.2.0 3.2.1 3.3.0 3.3.1 3.4.0 3.4.1 4.0.0 4.1.0 4.1.1 4.2.0"
)
KNOWN: frozenset[Version] = frozenset(tuple(map(int, r.split("."))) for r in _RELEASES.split())
"""The releases these facts cover (final releases only; no alpha, beta or candidate)."""

NEWEST: Version = max(KNOWN)

Range = tuple[Version, Version | None]


def v(text: str) -> Version:
    return tuple(int(p) for p in text.split("."))


def _in(version: Version, span: Range) -> bool:
    first, last = span
    return first <= version and (last is None or version <= last)


def span(text: str) -> Range:
    """``"2.3.0-"`` (from 2.3.0 on), ``"2.0.0-2.23.4"``, ``"2.18.0"`` (that one only)."""
    first, dash, last = text.partition("-")
    if not dash:
        return v(first), v(first)
    return v(first), (v(last) if last else None)


# --------------------------------------------------------------------------- interpreters

PYTHONS: tuple[tuple[str, Range], ...] = tuple(
    (tag, span(when))
    for tag, when in (
        ("cp36", "2.0.0-2.23.4"),
        ("cp37", "2.0.0-2.23.4"),
        ("cp38", "2.0.0-3.4.1"),
        ("cp39", "2.0.0-"),
        ("cp310", "2.0.0-"),
        ("cp311", "2.6.0-"),
        ("cp312", "2.13.0-"),
        ("cp313", "2.18.0-"),
        ("cp313t", "2.18.1-3.4.1"),
        ("cp314", "3.0.0-"),
        ("cp314t", "3.0.0-"),
        ("cp315", "4.0.0-"),
        ("cp315t", "4.0.0-"),
        ("pp37", "2.0.0-2.23.4"),
        ("pp38", "2.3.0-3.4.1"),
        ("pp39", "2.4.0-"),
        ("pp310", "2.14.0-"),
        ("pp311", "2.23.0-"),
        ("gp311_242", "3.0.0-3.4.1"),
        ("gp312_250", "3.2.0-"),
    )
)
"""Each interpreter tag and the releases that know it (in cibuildwheel's order)."""

# --------------------------------------------------------------------------- platform tags

LINUX_ARCHS: tuple[tuple[str, Range, Range], ...] = (
    # arch, on manylinux, on musllinux
    ("x86_64", span("2.0.0-"), span("2.2.0-")),
    ("i686", span("2.0.0-"), span("2.2.0-")),
    ("aarch64", span("2.0.0-"), span("2.2.0-")),
    ("ppc64le", span("2.0.0-"), span("2.2.0-")),
    ("s390x", span("2.0.0-"), span("2.2.0-")),
    ("armv7l", span("2.22.0-"), span("2.21.2-")),
    ("riscv64", span("3.0.0-"), span("3.0.0-")),
)

PLATFORM_TAGS: dict[str, tuple[tuple[str, str, Range], ...]] = {
    # platform -> (platform tag, the architecture it is built for, releases)
    "linux": tuple(
        (f"{family}_{arch}", arch, when)
        for arch, many, musl in LINUX_ARCHS
        for family, when in (("manylinux", many), ("musllinux", musl))
    ),
    "macos": (
        ("macosx_x86_64", "x86_64", span("2.0.0-")),
        ("macosx_arm64", "arm64", span("2.0.0-")),
        ("macosx_universal2", "universal2", span("2.0.0-")),
    ),
    "windows": (
        ("win32", "x86", span("2.0.0-")),
        ("win_amd64", "AMD64", span("2.0.0-")),
        ("win_arm64", "ARM64", span("2.3.0-")),
    ),
    "ios": (
        ("ios_arm64_iphoneos", "arm64_iphoneos", span("3.0.0-")),
        ("ios_x86_64_iphonesimulator", "x86_64_iphonesimulator", span("3.0.0-")),
        ("ios_arm64_iphonesimulator", "arm64_iphonesimulator", span("3.0.0-")),
    ),
    "android": (
        ("android_arm64_v8a", "arm64_v8a", span("3.1.0-")),
        ("android_x86_64", "x86_64", span("3.1.0-")),
    ),
}

CROSS: dict[str, tuple[tuple[str, Range], ...]] = {
    # platform -> the only interpreters it is built for (its own list in each release's
    # build-platforms.toml), and the releases that list each
    "ios": (("cp313", span("3.0.0-")), ("cp314", span("3.0.1-")), ("cp315", span("4.0.0-"))),
    "android": (("cp313", span("3.1.0-")), ("cp314", span("3.2.0-")), ("cp315", span("4.0.0-"))),
}
"""The platforms cibuildwheel builds for from another host (``--platform ios`` on a Mac,
``android`` on Linux or a Mac), with their interpreters: they are not the general list."""

CROSS_HOSTS: dict[str, dict[tuple[str, str], str]] = {
    # platform -> (runner's platform, its architecture) -> the native architecture there
    "ios": {
        ("macos", "arm64"): "arm64_iphonesimulator",
        ("macos", "x86_64"): "x86_64_iphonesimulator",
    },
    "android": {
        ("linux", "x86_64"): "x86_64",
        ("linux", "aarch64"): "arm64_v8a",
        ("macos", "x86_64"): "x86_64",
        ("macos", "arm64"): "arm64_v8a",
    },
}
"""Where a cross platform is built, and the architecture ``native``/``auto`` stand for
(iOS: the simulator of the Mac's own architecture)."""

# Which interpreters each platform tag carries, where not every one: (interpreter glob,
# platform tags it is limited to or kept from, releases). Checked in order; the first
# rule whose glob matches the interpreter decides.
ONLY_ON: tuple[tuple[str, frozenset[str], Range], ...] = (
    (
        "pp*",
        frozenset(
            {
                "manylinux_x86_64",
                "manylinux_i686",
                "manylinux_aarch64",
                "macosx_x86_64",
                "win_amd64",
            }
        ),
        span("2.0.0-2.11.4"),
    ),
    (
        "pp*",
        frozenset(
            {
                "manylinux_x86_64",
                "manylinux_i686",
                "manylinux_aarch64",
                "macosx_x86_64",
                "macosx_arm64",
                "win_amd64",
            }
        ),
        span("2.12.0-"),
    ),
    (
        "gp*",
        frozenset(
            {"manylinux_x86_64", "manylinux_aarch64", "macosx_x86_64", "macosx_arm64", "win_amd64"}
        ),
        span("3.0.0-"),
    ),
)

NOT_ON: tuple[tuple[str, str, Range], ...] = (
    # interpreter glob, platform-tag glob, releases: no such identifier
    ("cp3[67]", "macosx_arm64", span("2.0.0-")),
    ("cp3[67]", "macosx_universal2", span("2.0.0-")),
    ("cp3[678]", "win_arm64", span("2.0.0-")),
    ("pp37", "macosx_arm64", span("2.0.0-")),
    ("cp313t", "macosx_*", span("2.18.1")),
    ("cp39", "musllinux_riscv64", span("3.0.0-3.0.1")),  # misspelt in those releases
)


def _carries(version: Version, python: str, tag: str) -> bool:
    for glob, tags, when in ONLY_ON:
        if _in(version, when) and fnmatchcase(python, glob):
            if tag not in tags:
                return False
            break
    return not any(
        _in(version, when) and fnmatchcase(python, py) and fnmatchcase(tag, pt)
        for py, pt, when in NOT_ON
    )


@cache
def identifiers(version: Version, platform: str) -> tuple[tuple[str, str], ...]:
    """Every identifier cibuildwheel ``version`` knows on ``platform`` (linux, macos,
    windows), with the architecture it is built for."""
    return tuple(_identifiers(version, platform))


def _identifiers(version: Version, platform: str) -> Iterator[tuple[str, str]]:
    listed = CROSS.get(platform, PYTHONS)
    pythons = [tag for tag, when in listed if _in(version, when)]
    for tag, arch, when in PLATFORM_TAGS[platform]:
        if not _in(version, when):
            continue
        for python in pythons:
            if _carries(version, python, tag):
                yield f"{python}-{tag}", arch


# --------------------------------------------------------------------------- not by default

GATES: tuple[tuple[Range, tuple[tuple[str, str], ...]], ...] = (
    # releases -> (group that enables them, identifier globs left out without it)
    (span("2.0.0-2.0.1"), (("cpython-prerelease", "cp310-*"),)),
    (span("2.6.0-2.8.1"), (("cpython-prerelease", "cp311-*"),)),
    (span("2.13.0-2.14.1"), (("cpython-prerelease", "cp312-*"),)),
    (span("2.18.0"), (("cpython-prerelease", "cp313-*"),)),
    (
        span("2.18.1-2.19.2"),
        (
            ("cpython-prerelease", "cp313-*"),
            ("cpython-prerelease", "cp313t-*"),
            ("cpython-freethreading", "*t-*"),
        ),
    ),
    (span("2.20.0-2.21.3"), (("cpython-freethreading", "*t-*"),)),
    (
        span("2.22.0-2.23.4"),
        (("cpython-freethreading", "cp3??t-*"), ("cpython-prerelease", "cp314*"), ("pypy", "pp*")),
    ),
    (
        span("3.0.0-3.0.1"),
        (
            ("cpython-freethreading", "cp3??t-*"),
            ("cpython-prerelease", "cp314*"),
            ("pypy", "pp31*"),
            ("pypy-eol", "pp3?-*"),
            ("cpython-experimental-riscv64", "*_riscv64"),
            ("graalpy", "gp*"),
        ),
    ),
    (
        span("3.1.0-3.1.1"),
        (
            ("cpython-freethreading", "cp313t-*"),
            ("cpython-prerelease", "cp315*"),
            ("pypy", "pp31*"),
            ("pypy-eol", "pp3?-*"),
            ("cpython-experimental-riscv64", "*_riscv64"),
            ("graalpy", "gp*"),
        ),
    ),
    (
        span("3.1.2-3.1.4"),
        (
            ("cpython-freethreading", "cp313t-*"),
            ("cpython-prerelease", "cp315*"),
            ("pypy", "pp31*"),
            ("pypy-eol", "pp3?-*"),
            ("graalpy", "gp*"),
        ),
    ),
    (
        span("3.2.0-3.4.1"),
        (
            ("cpython-freethreading", "cp313t-*"),
            ("cpython-prerelease", "cp315*"),
            ("pypy-eol", "pp3?-*"),
            ("pypy-eol", "pp310-*"),
            ("pypy", "pp31[!0]-*"),
            ("graalpy", "gp*"),
        ),
    ),
    (
        span("4.0.0-4.1.1"),
        (
            ("cpython-prerelease", "cp315*"),
            ("pypy-eol", "pp3?-*"),
            ("pypy-eol", "pp310-*"),
            ("pypy", "pp31[!0]-*"),
            ("graalpy", "gp*"),
        ),
    ),
    (
        span("4.2.0-"),
        (
            ("cpython-prerelease", "cp316*"),
            ("pypy-eol", "pp3?-*"),
            ("pypy-eol", "pp310-*"),
            ("pypy", "pp31[!0]-*"),
            ("graalpy", "gp*"),
        ),
    ),
)


def gates(version: Version) -> tuple[tuple[str, str], ...]:
    """(group, glob) pairs: an identifier a glob matches is built only with its group."""
    for when, pairs in GATES:
        if _in(version, when):
            return pairs
    return ()


@cache
def gated(version: Version, enabled: frozenset[str]) -> re.Pattern[str] | None:
    """One expression for every identifier ``version`` leaves out without the groups
    ``enabled`` (None: none is)."""
    globs = [glob for group, glob in gates(version) if group not in enabled]
    return re.compile("|".join(fnmatch.translate(g) for g in globs)) if globs else None


ENABLE_GROUPS: tuple[tuple[str, Range], ...] = tuple(
    (name, span(when))
    for name, when in (
        ("cpython-freethreading", "2.22.0-3.4.1"),
        ("cpython-prerelease", "2.22.0-"),
        ("pypy", "2.22.0-"),
        ("pypy-eol", "3.0.0-"),
        ("cpython-experimental-riscv64", "3.0.0-"),
        ("graalpy", "3.0.0-"),
        ("pyodide-prerelease", "3.0.0-"),
        ("pyodide-eol", "4.0.0-"),
    )
)
"""The names ``enable`` accepts (an unknown one stops the build)."""

ALWAYS_ENABLED: tuple[tuple[str, Range], ...] = ((("pypy", span("2.22.0-2.23.4"))),)
"""Groups a release turns on whatever ``enable`` says (2.22 kept PyPy on by default)."""

ENABLE_ALL = span("3.0.0-")
"""Releases where ``enable = all`` means every group (``all`` minus riscv64 in 3.1.2-3.3.1)."""
ALL_WITHOUT_RISCV = span("3.1.2-3.3.1")

OPTION_SINCE: dict[str, Range] = {
    "enable": span("2.22.0-"),
    "free-threaded-support": span("2.18.1-2.23.4"),
    "CIBW_PRERELEASE_PYTHONS": span("2.0.0-2.23.4"),
    "--only": span("2.10.0-"),
    "--enable": span("3.0.0-"),
}

REFUSED_ENV: dict[str, Range] = {"CIBW_FREE_THREADED_SUPPORT": span("3.1.2-")}
"""Variables whose mere presence stops a build (checked after the identifiers are chosen,
so ``--print-build-identifiers`` does not show it)."""
"""The options that decide the selection, and the releases that read them."""


def reads(version: Version, option: str) -> bool:
    when = OPTION_SINCE.get(option)
    return when is not None and _in(version, when)


# --------------------------------------------------------------------------- container images


def _images(many: dict[str, str], musl: str | None, *, riscv64: bool = True) -> dict[str, str]:
    out = {f"manylinux-{arch}": image for arch, image in many.items()}
    if musl is not None:
        for arch in ("x86_64", "i686", "aarch64", "ppc64le", "s390x", "armv7l", "riscv64"):
            out[f"musllinux-{arch}"] = musl
    if not riscv64:  # 3.0 has no default riscv64 image: it must be given
        out.pop("musllinux-riscv64", None)
    return out


_2010 = {
    "x86_64": "manylinux2010",
    "i686": "manylinux2010",
    "pypy_x86_64": "manylinux2010",
    "pypy_i686": "manylinux2010",
    "aarch64": "manylinux2014",
    "ppc64le": "manylinux2014",
    "s390x": "manylinux2014",
    "pypy_aarch64": "manylinux2014",
}
_2014 = {arch: "manylinux2014" for arch in _2010}
_2_28 = {arch: "manylinux_2_28" for arch in _2010}
DEFAULT_IMAGES: tuple[tuple[Range, dict[str, str]], ...] = (
    (span("2.0.0-2.1.3"), _images(_2010, None)),
    (span("2.2.0-2.2.2"), _images(_2010, "musllinux_1_1")),
    (span("2.3.0-2.17.0"), _images(_2014, "musllinux_1_1")),
    (span("2.18.0-2.21.3"), _images(_2014, "musllinux_1_2")),
    (span("2.22.0-2.23.4"), _images({**_2014, "armv7l": "manylinux_2_31"}, "musllinux_1_2")),
    (
        span("3.0.0-3.0.1"),
        _images(
            {
                **_2_28,
                "i686": "manylinux2014",
                "pypy_i686": "manylinux2014",
                "armv7l": "manylinux_2_31",
            },
            "musllinux_1_2",
            riscv64=False,
        ),
    ),
    (
        span("3.1.0-"),
        _images(
            {**_2_28, "armv7l": "manylinux_2_31", "riscv64": "manylinux_2_39"}, "musllinux_1_2"
        ),
    ),
)
"""The container image each release builds a Linux architecture's wheels in by default
(``manylinux-x86_64-image``, ``musllinux-aarch64-image``, PyPy's ``manylinux-pypy_x86_64``):
its policy names the wheel files (``manylinux_2_28_x86_64`` vs ``manylinux_2_17``)."""


def default_image(version: Version, key: str) -> str | None:
    """The image ``version`` uses for ``key`` where none is given (None: not known)."""
    for when, images in DEFAULT_IMAGES:
        if _in(version, when):
            return images.get(key)
    return None


# --------------------------------------------------------------------------- architectures

THIRTY_TWO = frozenset({"i686", "x86", "armv7l"})

ARCHS_IGNORE_EMPTY = span("3.1.4-")
"""Releases that skip an empty ``archs`` (``CIBW_ARCHS: ""``) for the value before it in
the cascade; earlier ones stop on it (``Invalid architecture ''``)."""


def all_archs(version: Version, platform: str) -> frozenset[str]:
    return frozenset(arch for _tag, arch, when in PLATFORM_TAGS[platform] if _in(version, when))


def auto_archs(version: Version, platform: str, native: str) -> frozenset[str]:
    """``auto``: the runner's own architecture, and what each release adds to it."""
    out = {native}
    if platform == "linux" and native == "x86_64" and version < v("3.0.0"):
        out.add("i686")
    if platform == "windows" and native == "AMD64":
        out.add("x86")
    if platform == "macos" and native == "arm64" and version < v("2.9.0"):
        out.add("universal2")
    if platform == "ios" and native == "arm64_iphonesimulator":
        out.add("arm64_iphoneos")  # an arm64 Mac builds the device wheel too
    return frozenset(out)


def bitness_archs(version: Version, platform: str, native: str, bits: str) -> frozenset[str] | str:
    """``auto64``/``auto32``; a string where the answer depends on the runner's kernel."""
    if version < v("3.0.0"):
        auto = auto_archs(version, platform, native)
        return auto - THIRTY_TWO if bits == "64" else auto & THIRTY_TWO
    partner = {"x86_64": "i686", "AMD64": "x86", "aarch64": "armv7l"}
    if bits == "64":
        return frozenset() if native in THIRTY_TWO else frozenset({native})
    if native in THIRTY_TWO:
        return frozenset({native})
    if native in partner and platform in ("linux", "windows"):
        if native == "aarch64":
            return (
                "auto32 on an aarch64 runner builds armv7l only where its kernel runs 32-bit code"
            )
        return frozenset({partner[native]})
    return frozenset()


def host_drops(version: Version, platform: str, native: str, identifier: str) -> bool:
    """What a release leaves out on the runner it runs on: PyPy (and GraalPy) for arm64
    cannot be built on an x86_64 Mac."""
    if platform != "macos" or native != "x86_64" or not identifier.endswith("arm64"):
        return False
    if version >= v("3.0.0"):
        return identifier.startswith(("pp", "gp"))
    return version >= v("2.12.0") and identifier.startswith("pp")


# --------------------------------------------------------------------------- 1.x releases

_OLD_RELEASES = "1.8.0 1.9.0 1.10.0 1.10.1 1.11.0 1.11.1 1.12.0"
OLD: frozenset[Version] = frozenset(tuple(map(int, r.split("."))) for r in _OLD_RELEASES.split())
"""The 1.x releases from 1.8.0 (the first whose ``resources/build-platforms.toml`` lists its
identifiers; 1.11.1.post1 is not pinned as X.Y.Z) to 1.12.0, the last. Their options are
not computed here (no ``[tool.cibuildwheel]``, other defaults): only every identifier each
knows, a bound on what a step pinning it may build (``cibw.possible``)."""

_CP = ("cp27", "cp35", "cp36", "cp37", "cp38", "cp39")
_OLD_IDENTIFIERS: tuple[tuple[str, Range], ...] = (
    *(
        (f"{py}-{tag}", span("1.8.0-"))
        for tag in ("manylinux_x86_64", "manylinux_i686")
        for py in _CP
    ),
    *(
        (f"{py}-{tag}", span("1.8.0-"))
        for tag in ("manylinux_aarch64", "manylinux_ppc64le", "manylinux_s390x")
        for py in _CP[1:]
    ),
    *(
        (f"{py}-{tag}", span("1.8.0-"))
        for tag in ("macosx_x86_64", "win32", "win_amd64")
        for py in _CP
    ),
    *(
        (f"{py}-{tag}", span("1.8.0-"))
        for tag in ("manylinux_x86_64", "macosx_x86_64", "win32")
        for py in ("pp27", "pp36", "pp37")
    ),
    ("cp39-macosx_arm64", span("1.9.0-")),
    ("cp39-macosx_universal2", span("1.9.0-")),
    ("cp38-macosx_arm64", span("1.12.0-")),
    ("cp38-macosx_universal2", span("1.12.0-")),
)
"""Each identifier of the 1.x releases in ``OLD`` with the releases that list it (read off
each tag's ``build-platforms.toml`` in the pypa/cibuildwheel repository; ``None`` as the
last: to 1.12.0)."""


def old_identifiers(version: Version) -> frozenset[str] | None:
    """Every identifier the 1.x release ``version`` knows (None: not one in ``OLD``)."""
    if version not in OLD:
        return None
    return frozenset(i for i, when in _OLD_IDENTIFIERS if _in(version, when))
