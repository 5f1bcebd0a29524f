"""Each decider of a cibuildwheel or maturin step's identifiers, alone, in a table: the
runner, the pin, CIBW_BUILD/SKIP/ARCHS/ENABLE, [tool.cibuildwheel], requires-python and
its sources, the command line and the action's inputs; and what is unresolved, where."""

from __future__ import annotations

import pytest

from stagegate.ci.wheels import cibw, compare, maturin, patterns, project, runners, steps, table
from stagegate.ci.wheels.model import BuildStep, Setting, Wheels, Word
from stagegate.errors import Loc

WF = ".github/workflows/wheels.yml"


class Tree:
    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files = files or {}

    def text(self, path: str) -> str | None:
        return self.files.get(path)


def at(line: int) -> Loc:
    return Loc(WF, line, 1)


def step(
    version: str | None = "3.1.4",
    runner: str = "ubuntu-latest",
    env: dict[str, str] | None = None,
    args: str = "",
    inputs: dict[str, str] | None = None,
    tool: str = "cibuildwheel",
) -> BuildStep:
    return BuildStep(
        tool=tool,
        loc=at(10),
        version=None
        if version is None
        else Setting(name="cibuildwheel version", value=version, loc=at(10)),
        runner=Setting(name="runs-on", value=runner, loc=at(5)),
        env={
            k: Setting(name=k, value=v, loc=at(20 + i))
            for i, (k, v) in enumerate((env or {}).items())
        },
        inputs={
            k: Setting(name=k, value=v, loc=at(30 + i))
            for i, (k, v) in enumerate((inputs or {}).items())
        },
        args=tuple(Word(text=w, loc=at(12)) for w in args.split()),
    )


def ids(build: BuildStep, files: dict[str, str] | None = None) -> list[str]:
    wheels = cibw.shipped(build, Tree(files))
    assert wheels.unresolved is None, wheels.unresolved
    assert wheels.identifiers is not None
    return sorted(wheels.identifiers)


def problem(build: BuildStep, files: dict[str, str] | None = None) -> str:
    wheels = cibw.shipped(build, Tree(files))
    assert wheels.identifiers is None and wheels.unresolved is not None
    return f"{wheels.unresolved.loc.at}: {wheels.unresolved.reason}"


# --------------------------------------------------------------------------- runners


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("ubuntu-latest", ("linux", "x86_64")),
        ("ubuntu-24.04", ("linux", "x86_64")),
        ("ubuntu-24.04-arm", ("linux", "aarch64")),
        ("ubuntu-22.04-arm", ("linux", "aarch64")),
        ("macos-13", ("macos", "x86_64")),
        ("macos-10.15", ("macos", "x86_64")),
        ("macos-14", ("macos", "arm64")),
        ("macos-15", ("macos", "arm64")),
        ("macos-latest", ("macos", "arm64")),
        ("macos-15-intel", ("macos", "x86_64")),
        ("macos-13-xlarge", ("macos", "arm64")),
        ("macos-14-large", ("macos", "x86_64")),
        ("windows-latest", ("windows", "AMD64")),
        ("windows-2022", ("windows", "AMD64")),
        ("windows-11-arm", ("windows", "ARM64")),
    ],
)
def test_runner_labels(label: str, expected: tuple[str, str]) -> None:
    assert runners.platform_of(label) == expected


def test_a_self_hosted_label_is_not_guessed() -> None:
    assert problem(step(runner="self-hosted-gpu")) == (
        f"{WF}:5: runs-on 'self-hosted-gpu' is not a GitHub-hosted runner label stagegate knows; "
        "its platform and architecture decide the wheels"
    )


# --------------------------------------------------------------------------- defaults by release


def test_defaults_of_2_23_3_on_linux_build_32_bit_too() -> None:
    got = ids(step("2.23.3", env={"CIBW_SKIP": "pp* cp36-* cp37-* *musllinux*"}))
    assert got == sorted(f"cp3{m}-manylinux_{a}" for m in range(8, 14) for a in ("x86_64", "i686"))


def test_defaults_of_3_0_0_on_linux_do_not() -> None:
    got = ids(step("3.0.0", env={"CIBW_SKIP": "*musllinux*"}))
    assert got == sorted(f"cp3{m}-manylinux_x86_64" for m in range(8, 14))


def test_3_1_4_adds_cp314_and_cp314t_but_not_cp313t() -> None:
    got = ids(step("3.1.4", runner="macos-14", env={"CIBW_BUILD": "cp31[34]*"}))
    assert got == ["cp313-macosx_arm64", "cp314-macosx_arm64", "cp314t-macosx_arm64"]


def test_windows_auto_keeps_32_bit_in_3_x() -> None:
    assert ids(step("3.1.4", runner="windows-latest", env={"CIBW_BUILD": "cp312-*"})) == [
        "cp312-win32",
        "cp312-win_amd64",
    ]


def test_windows_arm_runner_builds_arm64() -> None:
    assert ids(step("3.1.4", runner="windows-11-arm", env={"CIBW_BUILD": "cp312-*"})) == [
        "cp312-win_arm64"
    ]


def test_macos_arm_runner_built_universal2_by_default_before_2_9() -> None:
    build = {"CIBW_BUILD": "cp310-*"}
    assert ids(step("2.8.1", runner="macos-14", env=build)) == [
        "cp310-macosx_arm64",
        "cp310-macosx_universal2",
    ]
    assert ids(step("2.9.0", runner="macos-14", env=build)) == ["cp310-macosx_arm64"]


def test_pypy_arm64_is_not_built_on_an_intel_mac() -> None:
    env = {"CIBW_BUILD": "pp310-*", "CIBW_ARCHS_MACOS": "x86_64 arm64", "CIBW_ENABLE": "pypy"}
    assert ids(step("3.1.4", runner="macos-13", env=env)) == ["pp310-macosx_x86_64"]
    assert ids(step("3.1.4", runner="macos-14", env=env)) == [
        "pp310-macosx_arm64",
        "pp310-macosx_x86_64",
    ]


# --------------------------------------------------------------------------- selectors


@pytest.mark.parametrize(
    ("word", "expanded"),
    [
        ("cp{38,39}-*", ["cp38-*", "cp39-*"]),
        ("cp3{8..10}-*", ["cp38-*", "cp39-*", "cp310-*"]),
        ("{cp,pp}3{9,10}-*", ["cp39-*", "cp310-*", "pp39-*", "pp310-*"]),
        ("cp{38}-*", ["cp{38}-*"]),
        ("*", ["*"]),
    ],
)
def test_braces(word: str, expanded: list[str]) -> None:
    assert patterns.expand(word) == expanded


def test_build_and_skip_with_braces() -> None:
    env = {"CIBW_BUILD": "cp3{11,12}-*", "CIBW_SKIP": "*-musllinux_* *i686"}
    assert ids(step("2.23.3", env=env)) == ["cp311-manylinux_x86_64", "cp312-manylinux_x86_64"]


def test_windows_matches_selectors_without_case() -> None:
    assert ids(step("3.1.4", runner="windows-latest", env={"CIBW_BUILD": "CP312-*"})) == [
        "cp312-win32",
        "cp312-win_amd64",
    ]
    assert ids(step("3.1.4", env={"CIBW_BUILD": "CP312-*"})) == []


def test_an_empty_cibw_build_means_every_identifier() -> None:
    assert ids(
        step("3.1.4", env={"CIBW_BUILD": "", "CIBW_SKIP": "cp3{8,9,10,11,12,13}* cp314t* *musl*"})
    ) == [
        "cp314-manylinux_x86_64",
    ]


# --------------------------------------------------------------------------- archs


@pytest.mark.parametrize(
    ("version", "archs", "expected"),
    [
        ("2.23.3", "auto64", ["x86_64"]),
        ("2.23.3", "auto32", ["i686"]),
        ("3.1.4", "auto32", ["i686"]),
        ("3.1.4", "native", ["x86_64"]),
        ("3.1.4", "x86_64,aarch64", ["aarch64", "x86_64"]),
        ("2.22.0", "all", ["aarch64", "armv7l", "i686", "ppc64le", "s390x", "x86_64"]),
        ("2.21.2", "all", ["aarch64", "i686", "ppc64le", "s390x", "x86_64"]),
        ("3.1.4", "all", ["aarch64", "armv7l", "i686", "ppc64le", "riscv64", "s390x", "x86_64"]),
    ],
)
def test_archs(version: str, archs: str, expected: list[str]) -> None:
    got = ids(step(version, env={"CIBW_BUILD": "cp312-manylinux*", "CIBW_ARCHS": archs}))
    assert got == [f"cp312-manylinux_{a}" for a in expected]


def test_platform_archs_win_over_plain_archs_and_the_command_line_over_both() -> None:
    env = {"CIBW_BUILD": "cp312-manylinux*", "CIBW_ARCHS": "i686", "CIBW_ARCHS_LINUX": "aarch64"}
    assert ids(step(env=env)) == ["cp312-manylinux_aarch64"]
    assert ids(step(env=env, args="--archs ppc64le")) == ["cp312-manylinux_ppc64le"]


def test_an_empty_archs_is_skipped_from_3_1_4_and_stops_earlier_releases() -> None:
    files = {"pyproject.toml": '[tool.cibuildwheel.macos]\narchs = "universal2"\n'}
    env = {"CIBW_BUILD": "cp312-*", "CIBW_ARCHS": ""}
    assert ids(step("3.4.0", runner="macos-15", env=env), files) == ["cp312-macosx_universal2"]
    assert ids(step("3.4.0", runner="macos-15", env={**env, "CIBW_ARCHS": "auto"}), files) == [
        "cp312-macosx_arm64"
    ]
    assert ids(step("3.4.0", runner="ubuntu-latest", env=env)) == [
        "cp312-manylinux_x86_64",
        "cp312-musllinux_x86_64",
    ]
    assert problem(step("3.1.3", runner="macos-15", env=env), files) == (
        f"{WF}:21: cibuildwheel 3.1.3 stops on an empty archs (3.1.4 and later ignore it)"
    )


def test_auto32_on_an_arm_runner_depends_on_its_kernel() -> None:
    assert problem(step(runner="ubuntu-24.04-arm", env={"CIBW_ARCHS": "auto32"})) == (
        f"{WF}:20: auto32 on an aarch64 runner builds armv7l only where its kernel runs 32-bit code"
    )


def test_an_arch_the_platform_has_not_stops_cibuildwheel() -> None:
    assert problem(step(runner="macos-14", env={"CIBW_ARCHS_MACOS": "aarch64"})) == (
        f"{WF}:20: cibuildwheel 3.1.4 stops on archs aarch64 for macos"
    )


# --------------------------------------------------------------------------- enable and older switches


def test_enable_from_env_is_added_to_the_config_file() -> None:
    files = {"pyproject.toml": '[tool.cibuildwheel]\nenable = ["pypy"]\n'}
    build = step(
        "3.1.4",
        env={
            "CIBW_BUILD": "cp313t-manylinux* pp311-manylinux*",
            "CIBW_ENABLE": "cpython-freethreading",
            "CIBW_ARCHS": "x86_64",
        },
    )
    assert ids(build, files) == ["cp313t-manylinux_x86_64", "pp311-manylinux_x86_64"]


def test_free_threaded_support_before_enable() -> None:
    env = {
        "CIBW_BUILD": "cp313t-manylinux*",
        "CIBW_ARCHS": "x86_64",
        "CIBW_FREE_THREADED_SUPPORT": "1",
    }
    assert ids(step("2.21.3", env=env)) == ["cp313t-manylinux_x86_64"]
    assert ids(step("2.20.0", env={**env, "CIBW_FREE_THREADED_SUPPORT": ""})) == []


def test_free_threaded_support_in_the_config_file_stops_3_x() -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'x'\n\n[tool.cibuildwheel]\nfree-threaded-support = true\n"
    }
    assert problem(step("3.0.0"), files) == (
        "pyproject.toml:5: cibuildwheel 3.0.0 stops on free-threaded-support in its config file: "
        "an option it does not know"
    )


def test_enable_in_the_config_file_stops_releases_before_2_22() -> None:
    files = {"pyproject.toml": '[tool.cibuildwheel.linux]\nenable = ["pypy"]\n'}
    assert problem(step("2.21.3"), files) == (
        "pyproject.toml:2: cibuildwheel 2.21.3 stops on enable in its config file: an option it does not know"
    )
    windows = step("2.21.3", runner="windows-latest", env={"CIBW_BUILD": "cp312-*"})
    assert ids(windows, files) == ["cp312-win32", "cp312-win_amd64"]  # it reads its own table only


def test_an_unknown_enable_group_stops_cibuildwheel() -> None:
    assert problem(step("2.23.3", env={"CIBW_ENABLE": "graalpy"})) == (
        f"{WF}:20: cibuildwheel 2.23.3 stops on the unknown enable group 'graalpy'"
    )


def test_enable_all() -> None:
    env = {"CIBW_BUILD": "gp* cp315-*", "CIBW_ARCHS": "x86_64", "CIBW_ENABLE": "all"}
    assert ids(step("4.0.0", env=env)) == [
        "cp315-manylinux_x86_64",
        "cp315-musllinux_x86_64",
        "gp312_250-manylinux_x86_64",
    ]


def test_prerelease_pythons_in_2_x() -> None:
    env = {"CIBW_BUILD": "cp313-manylinux*", "CIBW_ARCHS": "x86_64"}
    assert ids(step("2.18.0", env=env)) == []
    assert ids(step("2.18.0", env={**env, "CIBW_PRERELEASE_PYTHONS": "1"})) == [
        "cp313-manylinux_x86_64"
    ]


def test_prerelease_pythons_not_known_where_yes_and_no_build_the_same() -> None:
    """An expression of the event (``${{ !startsWith(github.ref, 'refs/tags/') }}``) is
    yes or no to cibuildwheel: where both build the same wheels they are known; where they
    differ the option stays unresolved at its line."""

    def unknown_prerelease(version: str) -> BuildStep:
        build = step(version, env={"CIBW_BUILD": "cp31[23]-manylinux*", "CIBW_ARCHS": "x86_64"})
        why = "github.ref depends on the event; bind it if a name uses it"
        env = {
            **build.env,
            "CIBW_PRERELEASE_PYTHONS": Setting(
                name="CIBW_PRERELEASE_PYTHONS", value=None, loc=at(29), why=why
            ),
        }
        return BuildStep(
            tool=build.tool, loc=build.loc, version=build.version, runner=build.runner, env=env
        )

    assert ids(unknown_prerelease("2.22.0")) == ["cp312-manylinux_x86_64", "cp313-manylinux_x86_64"]
    assert problem(unknown_prerelease("2.18.0")) == (
        f"{WF}:29: github.ref depends on the event; bind it if a name uses it"
    )


def test_only_builds_one_identifier_whatever_the_groups() -> None:
    assert ids(step("3.1.4", inputs={"only": "cp313t-manylinux_aarch64"})) == [
        "cp313t-manylinux_aarch64"
    ]


# --------------------------------------------------------------------------- requires-python


def test_requires_python_sources_in_cibuildwheel_order() -> None:
    build = step("3.1.4", env={"CIBW_BUILD": "cp3*-manylinux_x86_64", "CIBW_SKIP": "*t-*"})
    setup_py = 'from setuptools import setup\nsetup(name="x", python_requires=">=3.12")\n'
    setup_cfg = "[options]\npython_requires = >=3.11\n"
    pyproject = '[project]\nname = "x"\nrequires-python = ">=3.13"\n'
    assert ids(build, {"setup.py": setup_py}) == [
        "cp312-manylinux_x86_64",
        "cp313-manylinux_x86_64",
        "cp314-manylinux_x86_64",
    ]
    assert len(ids(build, {"setup.py": setup_py, "setup.cfg": setup_cfg})) == 4
    assert ids(
        build, {"setup.py": setup_py, "setup.cfg": setup_cfg, "pyproject.toml": pyproject}
    ) == [
        "cp313-manylinux_x86_64",
        "cp314-manylinux_x86_64",
    ]
    env = {
        "CIBW_BUILD": "cp3*-manylinux_x86_64",
        "CIBW_SKIP": "*t-*",
        "CIBW_PROJECT_REQUIRES_PYTHON": ">=3.14",
    }
    assert ids(step("3.1.4", env=env), {"pyproject.toml": pyproject}) == ["cp314-manylinux_x86_64"]


def test_requires_python_is_located() -> None:
    found = project.requires_python(
        Tree({"setup.cfg": "[metadata]\nname = x\n\n[options]\npython_requires = >=3.9\n"}),
        "",
        None,
    )
    assert found == Setting(name="python_requires", value=">=3.9", loc=Loc("setup.cfg", 5, 1))


def test_setup_py_nested_or_computed_python_requires_is_not_read() -> None:
    text = 'import setuptools\nREQ = ">=3.12"\ndef main():\n    setuptools.setup(python_requires=">=3.12")\nsetuptools.setup(python_requires=REQ)\n'
    assert project.requires_python(Tree({"setup.py": text}), "", None) is None


def test_a_bad_specifier_stops_cibuildwheel() -> None:
    assert problem(step(), {"setup.cfg": "[options]\npython_requires = 3.9+\n"}) == (
        "setup.cfg:2: '3.9+' is not a version specifier; cibuildwheel stops on it"
    )


def test_invalid_pyproject_is_unresolved_at_its_line() -> None:
    assert problem(step(), {"pyproject.toml": "[project]\nname = \n"}).startswith(
        "pyproject.toml:2: pyproject.toml is not valid TOML"
    )


# --------------------------------------------------------------------------- [tool.cibuildwheel]


def test_platform_table_overrides_the_plain_one() -> None:
    files = {
        "pyproject.toml": '[tool.cibuildwheel]\nbuild = "cp311-*"\narchs = ["x86_64"]\n\n[tool.cibuildwheel.linux]\nbuild = "cp312-*"\n'
    }
    assert ids(step(), files) == ["cp312-manylinux_x86_64", "cp312-musllinux_x86_64"]
    assert ids(step(env={"CIBW_BUILD": "cp313-*"}), files) == [
        "cp313-manylinux_x86_64",
        "cp313-musllinux_x86_64",
    ]


def test_package_dir_and_config_file() -> None:
    files = {
        "py/pyproject.toml": '[tool.cibuildwheel]\nbuild = "cp311-manylinux_x86_64"\n',
        "ci/cibw.toml": '[tool.cibuildwheel]\nbuild = "cp312-manylinux_x86_64"\n',
    }
    assert ids(step(args="py"), files) == ["cp311-manylinux_x86_64"]
    assert ids(step(inputs={"package-dir": "py", "config-file": "ci/cibw.toml"}), files) == [
        "cp312-manylinux_x86_64"
    ]


# --------------------------------------------------------------------------- versions


def test_a_release_the_table_does_not_know_is_unresolved() -> None:
    assert problem(step("4.3.5")) == (
        f"{WF}:10: cibuildwheel 4.3.5 is not a release stagegate knows the defaults of (2.0.0 to 4.2.0); "
        "install it with stagegate-ci[wheels] to compute its identifiers"
    )


def test_a_moving_pin_is_unresolved() -> None:
    assert problem(step("3")) == (
        f"{WF}:10: cibuildwheel 3 is not one release (a moving tag or range): pin an exact version, "
        "or a commit with a `# vX.Y.Z` comment"
    )


def test_a_moving_ref_to_a_closed_series_is_every_release_of_it() -> None:
    """ultrajson/ultrajson b70a4aa: `@v3.2.0` -> `@v3.2`, the newest 3.2.x: 3.2.0 and 3.2.1
    build the same here (a later series is known, so no later 3.2.x is expected); `@v3`
    spans releases that build differently; `@v4`'s newest release is not known."""
    assert ids(step("v3.2")) == ids(step("3.2.1")) == ids(step("3.2.0"))
    assert cibw.shipped(step("v3.2"), Tree(None)).how == (
        "the table of cibuildwheel 3.2.0 to 3.2.1 (v3.2: alike)"
    )
    assert problem(step("v3")) == (
        f"{WF}:10: cibuildwheel v3 is a moving ref, and its releases 3.0.0 to 3.4.1 build "
        "different wheels here: pin an exact version"
    )
    assert problem(step("v4")) == (
        f"{WF}:10: cibuildwheel v4 is a moving ref whose newest release stagegate cannot know: "
        "pin an exact version, or a commit with a `# vX.Y.Z` comment"
    )


def test_unpinned_is_unresolved() -> None:
    assert (
        problem(step(None))
        == f"{WF}:10: cibuildwheel is not pinned: the release installed at run time decides"
    )


def test_table_covers_exactly_its_releases() -> None:
    assert min(table.KNOWN) == (2, 0, 0) and table.NEWEST == (4, 2, 0) and len(table.KNOWN) == 75


@pytest.mark.parametrize(
    ("uses", "line", "expected"),
    [
        ("pypa/cibuildwheel@v2.23.3", "      - uses: pypa/cibuildwheel@v2.23.3", "2.23.3"),
        (
            "pypa/cibuildwheel@" + "a" * 40,
            "  uses: pypa/cibuildwheel@" + "a" * 40 + "  # v3.1.4",
            "3.1.4",
        ),
        ("pypa/cibuildwheel@" + "a" * 40, "  uses: pypa/cibuildwheel@" + "a" * 40, None),
        ("pypa/cibuildwheel@v3", "  uses: pypa/cibuildwheel@v3  # v3.1.4", "v3"),
        ("pypa/cibuildwheel@v3.2", "  uses: pypa/cibuildwheel@v3.2", "v3.2"),
        ("pypa/cibuildwheel@main", "  uses: pypa/cibuildwheel@main", None),
    ],
)
def test_action_pins(uses: str, line: str, expected: str | None) -> None:
    assert steps.action_version(uses, line, at(3), "cibuildwheel version").value == expected


def words(text: str) -> list[Word]:
    return [Word(text=w, loc=at(7)) for w in text.split()]


@pytest.mark.parametrize(
    ("command", "version", "args"),
    [
        (
            "pipx run cibuildwheel==2.16.2 --output-dir wheelhouse",
            "2.16.2",
            ["--output-dir", "wheelhouse"],
        ),
        ("uvx cibuildwheel@3.1.4 --platform linux", "3.1.4", ["--platform", "linux"]),
        ("uvx --from cibuildwheel==3.0.0 cibuildwheel", "3.0.0", []),
        ("pipx run cibuildwheel --archs x86_64", None, ["--archs", "x86_64"]),
        ("python -m cibuildwheel --output-dir out", "2.23.3", ["--output-dir", "out"]),
        ("cibuildwheel", "2.23.3", []),
    ],
)
def test_commands_that_build(command: str, version: str | None, args: list[str]) -> None:
    installed = steps.install_pin(words("python -m pip install cibuildwheel==2.23.3"))
    runner = Setting(name="runs-on", value="ubuntu-latest", loc=at(5))
    found = steps.from_command(words(command), runner=runner, env={}, installed=installed)
    assert found is not None and found.version is not None
    assert (found.version.value, [w.text for w in found.args]) == (version, args)


def test_an_unpinned_install_is_a_pin_without_value() -> None:
    pin = steps.install_pin(words("pip install -U cibuildwheel"))
    assert (
        pin is not None
        and pin.value is None
        and pin.why == "cibuildwheel is installed without an exact version (==X.Y.Z)"
    )
    assert steps.install_pin(words("pip install build")) is None


def test_a_series_install_is_the_series() -> None:
    pin = steps.install_pin(words("pip install cibuildwheel==2.23.*"))
    assert pin is not None and pin.value == "v2.23"
    assert ids(step("v2.23", env={"CIBW_BUILD": "cp313-manylinux_x86_64"})) == [
        "cp313-manylinux_x86_64"
    ]


REQUIREMENTS = {
    "tools/wheel-requirements.txt": "# wheels\ncibuildwheel==3.1.*  # the series\ndelvewheel==1.10.*; sys_platform == 'win32'\n",
    "ci/exact.txt": "build\ncibuildwheel[uv]==3.1.4\n",
    "ci/nested.txt": "-r base.txt\nbuild\n",
    "ci/plain.txt": "build\ntwine\n",
}


@pytest.mark.parametrize(
    ("command", "directory", "expected"),
    [
        (
            "pip install -r tools/wheel-requirements.txt",
            "",
            ("v3.1", "tools/wheel-requirements.txt:2"),
        ),
        (
            "python -m pip install --upgrade -r ../tools/wheel-requirements.txt",
            "src",
            ("v3.1", "tools/wheel-requirements.txt:2"),
        ),
        ("pip install --requirement=ci/exact.txt", "", ("3.1.4", "ci/exact.txt:2")),
        ("uv pip install -rci/exact.txt", "", ("3.1.4", "ci/exact.txt:2")),
        ("pip install -r ci/plain.txt", "", None),
        ("pip install build", "", None),
        ("pip install -r ci/nested.txt", "", (None, f"{WF}:7")),
        ("pip install -r ci/missing.txt", "", (None, f"{WF}:7")),
    ],
)
def test_a_requirements_file_pins_cibuildwheel(
    command: str, directory: str, expected: tuple[str | None, str] | None
) -> None:
    pin = steps.requirements_pin(words(command), Tree(REQUIREMENTS).text, directory)
    assert (None if pin is None else (pin.value, pin.loc.at)) == expected


def test_why_a_requirements_file_gives_no_version() -> None:
    nested = steps.requirements_pin(words("pip install -r ci/nested.txt"), Tree(REQUIREMENTS).text)
    missing = steps.requirements_pin(
        words("pip install -r ci/missing.txt"), Tree(REQUIREMENTS).text
    )
    assert (
        nested is not None
        and nested.why
        == "ci/nested.txt includes another requirements file, which stagegate does not follow"
    )
    assert (
        missing is not None
        and missing.why
        == "ci/missing.txt, the requirements file pip installs from, is not in the repository"
    )


# --------------------------------------------------------------------------- maturin


def mat(files: dict[str, str] | None = None, **inputs: str) -> list[str] | str:
    build = step(None, runner=inputs.pop("runner", "ubuntu-latest"), inputs=inputs, tool="maturin")
    wheels = maturin.shipped(build, Tree(files))
    if wheels.identifiers is None:
        assert wheels.unresolved is not None
        return f"{wheels.unresolved.loc.at}: {wheels.unresolved.reason}"
    return sorted(wheels.identifiers)


def test_maturin_interpreters_and_targets() -> None:
    assert mat(
        target="aarch64",
        manylinux="auto",
        args="--release --out dist --interpreter 3.9 3.10 pypy3.10",
    ) == [
        "cp310-manylinux_aarch64",
        "cp39-manylinux_aarch64",
        "pp310-manylinux_aarch64",
    ]
    assert mat(target="x86_64", manylinux="musllinux_1_2", args="-i python3.13t") == [
        "cp313t-musllinux_x86_64"
    ]
    assert mat(runner="macos-14", args="-i 3.12") == ["cp312-macosx_arm64"]
    assert mat(runner="windows-latest", target="i686", args="-i 3.12") == ["cp312-win32"]
    assert mat(target="riscv64gc-unknown-linux-gnu", args="-i 3.13 graalpy3.11") == [
        "cp313-manylinux_riscv64",
        "gp311-manylinux_riscv64",
    ]


def test_maturin_abi3_from_cargo_toml() -> None:
    cargo = {
        "Cargo.toml": '[package]\nname = "x"\n\n[dependencies]\npyo3 = { version = "0.22", features = ["abi3-py38"] }\n'
    }
    assert mat(cargo, target="x86_64", args="--release") == ["cp38-abi3-manylinux_x86_64"]
    assert mat(cargo, target="x86_64", args="-i 3.9 3.12 pypy3.10") == [
        "cp38-abi3-manylinux_x86_64",
        "pp310-manylinux_x86_64",
    ]


def test_maturin_abi3_minimum_is_the_lowest_versioned_feature() -> None:
    def cargo(features: str) -> dict[str, str]:
        return {
            "Cargo.toml": f'[package]\nname = "x"\n\n[dependencies]\npyo3 = {{ version = "0.25", features = [{features}] }}\n'
        }

    assert mat(cargo('"abi3", "abi3-py310"'), target="x86_64") == ["cp310-abi3-manylinux_x86_64"]
    assert mat(cargo('"abi3-py311", "abi3", "abi3-py39"'), target="x86_64") == [
        "cp39-abi3-manylinux_x86_64"
    ]
    assert mat(cargo('"abi3"'), target="x86_64") == (
        "Cargo.toml:5: pyo3's abi3 feature without a version: its minimum Python is pyo3's own"
    )


def test_maturin_abi3_through_the_crates_own_features() -> None:
    """cargo turns pyo3's abi3 on through ``[features]``: the crate's ``default`` (unless
    ``--no-default-features``), the features ``[tool.maturin]`` names, or ``--features``
    (which replaces those of ``[tool.maturin]``, as maturin does)."""
    cargo = (
        '[package]\nname = "x"\n\n[dependencies]\npyo3 = { version = "0.28" }\n\n'
        '[features]\ndefault = ["ext"]\next = ["pyo3/extension-module", "stable"]\n'
        'stable = ["pyo3/abi3-py311"]\nold = ["pyo3?/abi3-py39"]\n'
    )
    files = {"Cargo.toml": cargo}
    assert mat(files, target="x86_64") == ["cp311-abi3-manylinux_x86_64"]
    assert mat(files, target="x86_64", args="-i 3.13t --no-default-features") == [
        "cp313t-manylinux_x86_64"
    ]
    assert mat(files, target="x86_64", args="-F old -F ext") == ["cp39-abi3-manylinux_x86_64"]
    assert mat(files, target="x86_64", args="--all-features") == ["cp39-abi3-manylinux_x86_64"]
    pyproject = '[tool.maturin]\nfeatures = ["old"]\nno-default-features = true\n'
    files["pyproject.toml"] = pyproject
    assert mat(files, target="x86_64") == ["cp39-abi3-manylinux_x86_64"]
    assert mat(files, target="x86_64", args="-i 3.12 --features pyo3/extension-module") == [
        "cp312-manylinux_x86_64"
    ]
    files["pyproject.toml"] = '[tool.maturin]\nfeatures = ["pyo3/abi3-py310"]\n'
    assert mat(files, target="x86_64") == ["cp310-abi3-manylinux_x86_64"]
    # a feature named abi3 that is the crate's own, turning nothing of pyo3's on
    files["pyproject.toml"] = '[tool.maturin]\nfeatures = ["abi3"]\n'
    files["Cargo.toml"] = cargo.replace('default = ["ext"]', "default = []") + "abi3 = []\n"
    assert mat(files, target="x86_64", args="-i 3.12") == ["cp312-manylinux_x86_64"]


def test_maturin_find_interpreter_is_unresolved() -> None:
    assert mat(args="--release --find-interpreter") == (
        f"{WF}:30: --find-interpreter builds for every Python on the runner or in the manylinux container; "
        "name them with --interpreter"
    )


def test_an_sdist_as_package_dir_reads_the_repository_root() -> None:
    files = {
        "pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.13"\n\n[tool.cibuildwheel]\nskip = "*t-* *musl*"\n'
    }
    assert ids(step("3.1.4", inputs={"package-dir": "dist/*.tar.gz"}), files) == [
        "cp313-manylinux_x86_64",
        "cp314-manylinux_x86_64",
    ]


def test_a_package_dir_not_known_is_unresolved() -> None:
    build = step("3.1.4")
    unknown = Setting(
        name="package-dir",
        value=None,
        loc=at(33),
        why="needs.dists.outputs.sdist is not known from the YAML",
    )
    build = BuildStep(
        tool=build.tool,
        loc=build.loc,
        version=build.version,
        runner=build.runner,
        inputs={"package-dir": unknown},
    )
    assert problem(build) == f"{WF}:33: needs.dists.outputs.sdist is not known from the YAML"


def test_free_threaded_support_in_the_environment_stops_3_1_2_on() -> None:
    env = {
        "CIBW_BUILD": "cp313t-manylinux*",
        "CIBW_ARCHS": "x86_64",
        "CIBW_FREE_THREADED_SUPPORT": "1",
    }
    assert ids(step("3.1.1", env=env)) == []  # read by no 3.x release: no free-threaded builds
    assert problem(step("3.1.2", env=env)) == (
        f"{WF}:22: cibuildwheel 3.1.2 stops when CIBW_FREE_THREADED_SUPPORT is set (use enable)"
    )


def test_variables_that_decide_nothing_are_not_deciders() -> None:
    found = cibw.deciders(step(env={"CIBW_TEST_COMMAND": "pytest", "CIBW_SKIP": "pp*"}), Tree())
    assert sorted(found) == ["env.CIBW_SKIP", "runner", "version"]


def test_a_maturin_word_not_known_is_unresolved_only_where_it_decides() -> None:
    runner = Setting(name="runs-on", value="ubuntu-latest", loc=at(5))
    unknown = Word(text=None, loc=at(12), why="$OUT is a shell variable")

    def built(*extra: Word) -> list[str] | str:
        args = (*words("--release -i 3.12 --out"), *extra)
        build = BuildStep(tool="maturin", loc=at(12), version=None, runner=runner, args=args)
        wheels = maturin.shipped(build, Tree())
        if wheels.unresolved is not None:
            return f"{wheels.unresolved.loc.at}: {wheels.unresolved.reason}"
        return sorted(wheels.identifiers or ())

    assert built(unknown) == ["cp312-manylinux_x86_64"]  # where the wheels go is not which
    assert (
        built(Word(text="dist", loc=at(12)), *words("--target"), unknown)
        == f"{WF}:7: $OUT is a shell variable"
    )


# --------------------------------------------------------------------------- iOS and Android


def test_ios_on_an_arm_mac_builds_the_simulator_and_the_device_wheel() -> None:
    got = ids(step("3.1.4", runner="macos-14", env={"CIBW_PLATFORM": "ios"}))
    assert got == [
        f"cp31{m}-ios_arm64_{d}" for m in (3, 4) for d in ("iphoneos", "iphonesimulator")
    ]
    assert ids(step("3.1.4", runner="macos-13", env={"CIBW_PLATFORM": "ios"})) == [
        "cp313-ios_x86_64_iphonesimulator",
        "cp314-ios_x86_64_iphonesimulator",
    ]


def test_ios_interpreters_are_their_own_list_and_obey_the_prerelease_gate() -> None:
    env = {"CIBW_PLATFORM": "ios", "CIBW_ARCHS_IOS": "x86_64_iphonesimulator"}
    assert ids(step("3.0.0", runner="macos-14", env=env)) == ["cp313-ios_x86_64_iphonesimulator"]
    # 3.0.1 lists cp314 for iOS, behind cpython-prerelease until 3.1.0
    assert ids(step("3.0.1", runner="macos-14", env=env)) == ["cp313-ios_x86_64_iphonesimulator"]
    assert ids(
        step("3.0.1", runner="macos-14", env={**env, "CIBW_ENABLE": "cpython-prerelease"})
    ) == [
        "cp313-ios_x86_64_iphonesimulator",
        "cp314-ios_x86_64_iphonesimulator",
    ]
    assert ids(step("4.2.0", runner="macos-14", env=env)) == [
        f"cp31{m}-ios_x86_64_iphonesimulator" for m in (3, 4, 5)
    ]


def test_android_from_3_1_on_linux_and_macos_runners() -> None:
    env = {"CIBW_PLATFORM": "android"}
    assert ids(step("3.1.0", runner="ubuntu-latest", env=env)) == ["cp313-android_x86_64"]
    assert ids(step("3.2.0", runner="ubuntu-24.04-arm", env=env)) == [
        "cp313-android_arm64_v8a",
        "cp314-android_arm64_v8a",
    ]
    both = {**env, "CIBW_ARCHS_ANDROID": "arm64_v8a x86_64"}
    assert ids(step("3.2.0", runner="macos-14", env=both)) == [
        "cp313-android_arm64_v8a",
        "cp313-android_x86_64",
        "cp314-android_arm64_v8a",
        "cp314-android_x86_64",
    ]


def test_a_cross_platform_the_release_or_the_runner_cannot_build_is_unresolved() -> None:
    env = {"CIBW_PLATFORM": "android"}
    assert problem(step("3.0.1", runner="ubuntu-latest", env=env)) == (
        f"{WF}:20: cibuildwheel 3.0.1 does not build android wheels; it stops"
    )
    assert problem(step("3.2.0", runner="windows-latest", env=env)) == (
        f"{WF}:20: building android wheels on a windows AMD64 runner is not computed by stagegate"
    )
    assert problem(step("3.2.0", runner="ubuntu-latest", env={"CIBW_PLATFORM": "ios"})) == (
        f"{WF}:20: building ios wheels on a linux x86_64 runner is not computed by stagegate"
    )


# --------------------------------------------------------------------------- a runner not known


def test_what_a_step_may_build_on_any_machine_bounds_a_runner_not_known() -> None:
    found = cibw.deciders(
        step(
            "2.22.0",
            runner="self-hosted",
            env={"CIBW_BUILD": "cp313-*", "CIBW_SKIP": "*musllinux*"},
        ),
        Tree(),
    )
    may = cibw.possible(found)
    assert may is not None and "cp313-manylinux_ppc64le" in may and "cp313-win_arm64" in may
    assert "cp313-manylinux_riscv64" not in may  # 2.22 has no riscv64: it builds nothing there
    assert not any(i.startswith("pp") or "musllinux" in i for i in may)


def test_a_step_with_another_setting_not_known_has_no_bound() -> None:
    assert cibw.possible(cibw.deciders(step(None, runner="self-hosted"), Tree())) is None
    assert (
        cibw.possible(
            cibw.deciders(step("2.22.0", runner="self-hosted", env={"CIBW_ARCHS": "sparc"}), Tree())
        )
        is None
    )


def test_a_release_loses_only_what_no_step_can_build_at_the_head() -> None:
    def built(env: dict[str, str], runner: str = "ubuntu-latest") -> Wheels:
        return cibw.shipped(
            step("2.22.0", runner=runner, env={"CIBW_BUILD": "cp313-* pp310-*", **env}), Tree()
        )

    known = ({}, {"CIBW_SKIP": "pp*"})
    unknown = ({}, {"CIBW_SKIP": "pp*"})
    change = compare.release(
        [
            ([built(known[0])], [built(known[1])]),
            ([built(unknown[0], "arm-latest")], [built(unknown[1], "arm-latest")]),
        ]
    )
    assert change.lost == ("pp310-manylinux_i686", "pp310-manylinux_x86_64") and change.gained == ()
    assert {u.expression for u in change.unresolved} == {"runs-on"}
    # where the unknown row may still build them, nothing is claimed
    change = compare.release(
        [
            ([built(known[0])], [built(known[1])]),
            ([built(unknown[0], "arm-latest")], [built(unknown[0], "arm-latest")]),
        ]
    )
    assert (change.lost, change.gained) == ((), ())


# --------------------------------------------------------------------------- images


def test_default_images_by_release_and_architecture() -> None:
    assert table.default_image(table.v("2.23.3"), "manylinux-x86_64") == "manylinux2014"
    assert table.default_image(table.v("3.0.1"), "manylinux-x86_64") == "manylinux_2_28"
    assert table.default_image(table.v("3.0.1"), "manylinux-i686") == "manylinux2014"
    assert table.default_image(table.v("3.1.0"), "manylinux-i686") == "manylinux_2_28"
    assert table.default_image(table.v("2.1.3"), "manylinux-pypy_x86_64") == "manylinux2010"
    assert table.default_image(table.v("2.17.0"), "musllinux-aarch64") == "musllinux_1_1"
    assert table.default_image(table.v("3.0.0"), "musllinux-riscv64") is None


def test_each_linux_wheel_is_keyed_by_the_policy_of_its_image() -> None:
    def keyed(env: dict[str, str], files: dict[str, str] | None = None) -> list[tuple[str, str]]:
        found = cibw.images(
            cibw.shipped(
                step("3.4.1", env={"CIBW_BUILD": "cp312-* pp311-*", "CIBW_ENABLE": "pypy", **env}),
                Tree(files),
            )
        )
        assert found is not None
        return sorted(found)

    assert keyed({"CIBW_ARCHS": "x86_64 i686", "CIBW_SKIP": "*musl*"}) == [
        ("cp312-manylinux_i686", "manylinux_2_28"),
        ("cp312-manylinux_x86_64", "manylinux_2_28"),
        ("pp311-manylinux_i686", "manylinux_2_28"),
        ("pp311-manylinux_x86_64", "manylinux_2_28"),
    ]
    given = {
        "CIBW_SKIP": "*musl* *i686",
        "CIBW_MANYLINUX_X86_64_IMAGE": "quay.io/pypa/manylinux2014_x86_64:2025.01.01",
        "CIBW_MANYLINUX_PYPY_X86_64_IMAGE": "",
    }  # empty: the default
    assert keyed(given) == [
        ("cp312-manylinux_x86_64", "manylinux2014"),
        ("pp311-manylinux_x86_64", "manylinux_2_28"),
    ]
    toml = {"pyproject.toml": '[tool.cibuildwheel]\nmusllinux-x86_64-image = "musllinux_1_1"\n'}
    assert keyed({"CIBW_BUILD": "cp312-musllinux_x86_64"}, toml) == [
        ("cp312-musllinux_x86_64", "musllinux_1_1")
    ]
    windows = cibw.images(
        cibw.shipped(
            step("3.4.1", runner="windows-latest", env={"CIBW_BUILD": "cp312-win_amd64"}), Tree()
        )
    )
    assert windows == frozenset({("cp312-win_amd64", "")})


# --------------------------------------------------------------------------- setuptools' limited API

_LIMITED_BUILD = {
    "pyproject.toml": '[tool.cibuildwheel]\nbuild = "cp39-* cp313-* cp313t-* pp310-*"\nenable = ["cpython-freethreading", "pypy"]\n'
}


def _setup_py(body: str) -> dict[str, str]:
    return {
        **_LIMITED_BUILD,
        "setup.py": "import os\nimport platform\nfrom setuptools import setup\n\n" + body,
    }


def test_limited_api_makes_one_abi3_file_of_every_later_cpython() -> None:
    cfg = {
        **_LIMITED_BUILD,
        "setup.cfg": "[metadata]\nname = x\n\n[bdist_wheel]\npy_limited_api = cp39\n",
    }
    assert ids(step(), cfg) == [
        "cp313t-manylinux_x86_64",
        "cp313t-musllinux_x86_64",
        "cp39-abi3-manylinux_x86_64",
        "cp39-abi3-musllinux_x86_64",
        "pp310-manylinux_x86_64",
    ]
    toml = {
        "pyproject.toml": _LIMITED_BUILD["pyproject.toml"]
        + '\n[tool.distutils.bdist_wheel]\npy-limited-api = "cp39"\n'
    }
    assert ids(step(), toml) == ids(step(), cfg)
    literal = _setup_py('setup(name="x", options={"bdist_wheel": {"py_limited_api": "cp39"}})\n')
    assert ids(step(), literal) == ids(step(), cfg)


def test_limited_api_under_decided_tests_in_setup_py() -> None:
    guarded = _setup_py(
        "kwargs = {}\n"
        'if platform.python_implementation() == "CPython" and os.environ.get("X_EXT") != "0":\n'
        '    kwargs["options"] = {"bdist_wheel": {"py_limited_api": "cp39"}}\n'
        'setup(name="x", **kwargs)\n'
    )
    assert "cp39-abi3-manylinux_x86_64" in ids(step(), guarded)
    # the build sets the variable: not decided
    assert problem(step(env={"X_EXT": "0"}), guarded) == (
        "setup.py:7: setup.py sets py_limited_api in code whose outcome stagegate cannot decide: "
        "the wheels' python tag is not known"
    )
    passed = {
        **guarded,
        "pyproject.toml": guarded["pyproject.toml"] + 'environment = { X_EXT = "0" }\n',
    }
    assert problem(step(), passed).startswith("setup.py:7: setup.py sets py_limited_api in code")
    # a test on a value of the build machine: not decided
    machine = _setup_py(
        'if platform.machine() != "riscv64":\n'
        '    setup(name="x", options={"bdist_wheel": {"py_limited_api": "cp39"}})\n'
    )
    assert problem(step(), machine).startswith("setup.py:6: setup.py sets py_limited_api in code")
    # the else branch of a test that holds: no limited API
    other = _setup_py(
        'if platform.python_implementation() == "CPython":\n'
        "    pass\nelse:\n"
        '    setup(name="x", options={"bdist_wheel": {"py_limited_api": "cp39"}})\n'
    )
    assert "cp313-manylinux_x86_64" in ids(step(), other)
    # the tag in a form not read (dict(...)): not known; Extension's own flag is not the tag
    called = _setup_py('setup(name="x", options=dict(bdist_wheel=dict(py_limited_api="cp39")))\n')
    assert problem(step(), called).startswith("setup.py:5: setup.py sets py_limited_api in code")
    flag_only = _setup_py(
        'setup(name="x", ext_modules=[Extension("x._c", ["c.c"], py_limited_api=True)])\n'
    )
    assert "cp313-manylinux_x86_64" in ids(step(), flag_only)


def test_limited_api_for_builds_with_the_gil_built_before_the_options() -> None:
    # tornado's setup.py since 7560da40 (and its cog form since 54fe62a5)
    gil = _setup_py(
        "import sysconfig\n"
        "kwargs = {}\n"
        'if platform.python_implementation() == "CPython":\n'
        '    can_use_limited_api = not sysconfig.get_config_var("Py_GIL_DISABLED")\n'
        "    if can_use_limited_api:\n"
        '        bdist_wheel_options = {"py_limited_api": "cp39"}\n'
        "    else:\n"
        "        bdist_wheel_options = {}\n"
        "    if bdist_wheel_options:\n"
        '        kwargs["options"] = {"bdist_wheel": bdist_wheel_options}\n'
        'setup(name="x", **kwargs)\n'
    )
    assert ids(step(), gil) == [
        "cp313t-manylinux_x86_64",
        "cp313t-musllinux_x86_64",
        "cp39-abi3-manylinux_x86_64",
        "cp39-abi3-musllinux_x86_64",
        "pp310-manylinux_x86_64",
    ]
    two = gil["setup.py"].replace(
        "    can_use_limited_api = not",
        "    can_use_limited_api = 1\n    can_use_limited_api = not",
    )
    assert problem(step(), {**gil, "setup.py": two}).startswith("setup.py:")
    ones = gil["setup.py"].replace(
        'get_config_var("Py_GIL_DISABLED")', 'get_config_var("Py_GIL_DISABLED") == 1'
    )
    assert ids(step(), {**gil, "setup.py": ones}) == ids(step(), gil)


def test_limited_api_older_python_and_bad_tags_are_unresolved() -> None:
    cfg = {**_LIMITED_BUILD, "setup.cfg": "[bdist_wheel]\npy_limited_api = cp310\n"}
    assert problem(step(), cfg) == (
        "setup.cfg:2: cp39-manylinux_x86_64 is older than py_limited_api cp310: its wheel's tag is not known"
    )
    bad = {**_LIMITED_BUILD, "setup.cfg": "[bdist_wheel]\npy_limited_api = yes-please\n"}
    assert (
        problem(step(), bad)
        == "setup.cfg:2: py_limited_api 'yes-please' is not a cp3X tag stagegate reads"
    )


def test_limited_api_change_is_put_down_to_the_setting() -> None:
    base = cibw.shipped(
        step(), Tree({**_LIMITED_BUILD, "setup.cfg": "[bdist_wheel]\npy_limited_api = cp39\n"})
    )
    head_files = {
        "pyproject.toml": _LIMITED_BUILD["pyproject.toml"].replace("cp39-* ", ""),
        "setup.cfg": "[bdist_wheel]\npy_limited_api = cp313\n",
    }
    head = cibw.shipped(step(), Tree(head_files))
    change = compare.compare([base], [head], tool=False)
    assert change.lost == ("cp39-abi3-manylinux_x86_64", "cp39-abi3-musllinux_x86_64")
    assert change.gained == ("cp313-abi3-manylinux_x86_64", "cp313-abi3-musllinux_x86_64")
    assert any(s.name == "py_limited_api" for c in change.causes for s in c.settings)


# --------------------------------------------------------------------------- 1.x releases


@pytest.mark.parametrize(
    ("version", "count", "has", "lacks"),
    [
        # counted off each tag's resources/build-platforms.toml (cp27 listed twice, m and mu)
        ("1.8.0", 54, "cp39-win_amd64", "cp39-macosx_arm64"),
        ("1.9.0", 56, "cp39-macosx_universal2", "cp38-macosx_arm64"),
        ("1.11.1", 56, "pp37-win32", "cp38-macosx_universal2"),
        ("1.12.0", 58, "cp38-macosx_arm64", "cp310-manylinux_x86_64"),
    ],
)
def test_every_identifier_a_1x_release_knows(
    version: str, count: int, has: str, lacks: str
) -> None:
    known = table.old_identifiers(table.v(version))
    assert known is not None and len(known) == count
    assert has in known and lacks not in known
    assert not any("musllinux" in i or i.startswith("cp31") for i in known)


def test_a_1x_step_is_bounded_not_computed() -> None:
    """cibuildwheel 1.x reads no ``[tool.cibuildwheel]`` and has other defaults: its
    wheels are not computed, only bounded by what its release knows; a 1.x release before
    1.8.0 (no build-platforms.toml) has no bound."""
    build = step("1.12.0", env={"CIBW_BUILD": "cp27-*"})
    assert problem(build) == (
        f"{WF}:10: cibuildwheel 1.12.0 is a 1.x release, whose options stagegate does not "
        "compute (2.0.0 to 4.2.0); what it may build is bounded by the identifiers it knows"
    )
    assert cibw.possible(cibw.deciders(build, Tree())) == table.old_identifiers((1, 12, 0))
    assert cibw.possible(cibw.deciders(step("1.7.4"), Tree())) is None
    head = cibw.shipped(step("3.1.4", env={"CIBW_ARCHS": "x86_64"}), Tree())
    base = cibw.shipped(step("2.22.0", env={"CIBW_ARCHS": "x86_64"}), Tree())
    change = compare.release(
        [([base], [head]), ([cibw.shipped(build, Tree())], [cibw.shipped(build, Tree())])]
    )
    assert "cp314-manylinux_x86_64" in change.gained and "cp27-manylinux_x86_64" not in change.lost
