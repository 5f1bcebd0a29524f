"""The seven commits of issue 35, as shapes of our own writing: each changes the wheels a
release publishes while every artifact name, matrix row and step stays the same. Each is
reported with the exact identifiers it gains or loses and the setting responsible; a
runner label or a cibuildwheel bump that builds the same identifiers is no change.

The workflows are read with the workflow reader (``ci.wheelsteps``) from two trees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stagegate.ci import wheelsteps
from stagegate.ci.wheels import compare

WF = ".github/workflows/wheels.yml"

# msgpack-python's shape: one matrix job per OS, the action, env on the step, one upload
# of the wheelhouse per row.
WORKFLOW = """\
name: Build Wheels
on:
  push:
    branches: [main]
    tags: ["v*"]
env:
  CIBW_TEST_COMMAND: "pytest {{package}}/test"
jobs:
  build_wheels:
    name: Build wheels on ${{{{ matrix.os }}}}
    strategy:
      fail-fast: false
      matrix:
        os: [{runners}]
    runs-on: ${{{{ matrix.os }}}}
    steps:
      - uses: actions/checkout@v4
      - name: Build
        uses: pypa/cibuildwheel@{version}
        env:
          CIBW_SKIP: "{skip}"
{extra}
      - uses: actions/upload-artifact@v4
        with:
          name: wheels-${{{{ matrix.os }}}}
          path: wheelhouse
"""
SETUP_CFG = "[metadata]\nname = pkg\n\n[options]\npython_requires = {requires}\npackages = find:\n"
PYPROJECT = '[build-system]\nrequires = ["setuptools"]\n\n[tool.cibuildwheel]\ntest-requires = "pytest"\n{enable}'


def tree(root: Path, **given: Any) -> Path:
    spec = {"runners": "ubuntu-latest, windows-latest, macos-13", "version": "v2.23.3",
            "skip": "pp*", "extra": "", "requires": ">=3.8", "enable": ""} | given
    (root / ".github/workflows").mkdir(parents=True)
    (root / WF).write_text(WORKFLOW.format(**spec))
    (root / "setup.cfg").write_text(SETUP_CFG.format(**spec))
    (root / "pyproject.toml").write_text(PYPROJECT.format(**spec))
    return root


def report(tmp_path: Path, base: dict[str, Any], head: dict[str, Any]) -> dict[str, list[str]]:
    """Per upload (its matrix row's runner): the change as continuity would print it."""
    changes = wheelsteps.changes(tree(tmp_path / "base", **base), tree(tmp_path / "head", **head), tool=False)
    out = {}
    for key, change in sorted(changes.items()):
        assert not change.unresolved, change.unresolved
        out[dict(key[2])["os"]] = compare.describe(change)
    return out


def test_skip_widened_from_cp38_macos_to_every_cp38(tmp_path: Path) -> None:
    assert report(tmp_path, {"skip": "pp* cp38-macosx_*"}, {"skip": "pp* cp38-*"}) == {
        "ubuntu-latest": [
            "loses cp38-manylinux_i686, cp38-manylinux_x86_64, cp38-musllinux_i686, "
            f"cp38-musllinux_x86_64 (CIBW_SKIP at {WF}:21)"
        ],
        "windows-latest": [f"loses cp38-win32, cp38-win_amd64 (CIBW_SKIP at {WF}:21)"],
    }


def test_skip_gains_cp39(tmp_path: Path) -> None:
    got = report(tmp_path, {"skip": "pp* cp38-*"}, {"skip": "pp* cp38-* cp39-*"})
    assert got == {
        "macos-13": [f"loses cp39-macosx_x86_64 (CIBW_SKIP at {WF}:21)"],
        "ubuntu-latest": [
            "loses cp39-manylinux_i686, cp39-manylinux_x86_64, cp39-musllinux_i686, "
            f"cp39-musllinux_x86_64 (CIBW_SKIP at {WF}:21)"
        ],
        "windows-latest": [f"loses cp39-win32, cp39-win_amd64 (CIBW_SKIP at {WF}:21)"],
    }


def test_python_requires_raised_to_3_9_then_3_10(tmp_path: Path) -> None:
    first = report(tmp_path / "1", {"requires": ">=3.8"}, {"requires": ">=3.9"})
    assert first["windows-latest"] == ["loses cp38-win32, cp38-win_amd64 (python_requires at setup.cfg:5)"]
    assert first["macos-13"] == ["loses cp38-macosx_x86_64 (python_requires at setup.cfg:5)"]
    second = report(tmp_path / "2", {"requires": ">=3.9"}, {"requires": ">=3.10"})
    assert second["ubuntu-latest"] == [
        "loses cp39-manylinux_i686, cp39-manylinux_x86_64, cp39-musllinux_i686, "
        "cp39-musllinux_x86_64 (python_requires at setup.cfg:5)"
    ]
    assert set(second) == {"ubuntu-latest", "windows-latest", "macos-13"}


def test_freethreading_enable_removed(tmp_path: Path) -> None:
    got = report(tmp_path, {"enable": 'enable = ["cpython-freethreading"]\n'}, {"enable": ""})
    assert got == {
        "macos-13": ["loses cp313t-macosx_x86_64 ([tool.cibuildwheel] enable at pyproject.toml:6)"],
        "ubuntu-latest": [
            "loses cp313t-manylinux_i686, cp313t-manylinux_x86_64, cp313t-musllinux_i686, "
            "cp313t-musllinux_x86_64 ([tool.cibuildwheel] enable at pyproject.toml:6)"
        ],
        "windows-latest": ["loses cp313t-win32, cp313t-win_amd64 ([tool.cibuildwheel] enable at pyproject.toml:6)"],
    }


def test_cibuildwheel_3_0_0_loses_32_bit_linux(tmp_path: Path) -> None:
    got = report(tmp_path, {"version": "v2.23.3", "requires": ">=3.9"}, {"version": "v3.0.0", "requires": ">=3.9"})
    assert got == {
        "ubuntu-latest": [
            "loses cp39-manylinux_i686, cp39-musllinux_i686, cp310-manylinux_i686, cp310-musllinux_i686, "
            "cp311-manylinux_i686, cp311-musllinux_i686, cp312-manylinux_i686, cp312-musllinux_i686, "
            f"cp313-manylinux_i686, cp313-musllinux_i686 (cibuildwheel version at {WF}:19)"
        ]
    }


def test_cibuildwheel_3_1_4_adds_cp314_and_cp314t(tmp_path: Path) -> None:
    got = report(tmp_path, {"version": "v3.0.0", "requires": ">=3.9"}, {"version": "v3.1.4", "requires": ">=3.9"})
    assert got["windows-latest"] == [
        f"gains cp314-win32, cp314-win_amd64, cp314t-win32, cp314t-win_amd64 (cibuildwheel version at {WF}:19)"
    ]
    assert got["macos-13"] == [f"gains cp314-macosx_x86_64, cp314t-macosx_x86_64 (cibuildwheel version at {WF}:19)"]
    assert got["ubuntu-latest"] == [
        "gains cp314-manylinux_x86_64, cp314-musllinux_x86_64, cp314t-manylinux_x86_64, "
        f"cp314t-musllinux_x86_64 (cibuildwheel version at {WF}:19)"
    ]


def test_the_restoring_commit_names_the_archs_setting(tmp_path: Path) -> None:
    archs = '          CIBW_ARCHS_LINUX: "auto auto32"'
    got = report(tmp_path, {"version": "v3.0.0"}, {"version": "v3.0.0", "extra": archs})
    assert got["ubuntu-latest"][0].endswith(f"(CIBW_ARCHS_LINUX at {WF}:22)")
    assert got["ubuntu-latest"][0].startswith("gains cp38-manylinux_i686, cp38-musllinux_i686, cp39-manylinux_i686")


def test_no_change_from_a_runner_label_or_a_bump_that_builds_the_same(tmp_path: Path) -> None:
    same = {"runners": "ubuntu-22.04, windows-latest, macos-13"}
    assert report(tmp_path / "1", same, {"runners": "ubuntu-24.04, windows-latest, macos-13"}) == {}
    assert report(tmp_path / "2", {"version": "v3.1.3"}, {"version": "v3.1.4"}) == {}
    pinned_archs = {"skip": "pp* cp36-* cp37-*", "extra": '          CIBW_ARCHS_LINUX: "x86_64"'}
    assert report(tmp_path / "3", {"version": "v2.23.3", **pinned_archs}, {"version": "v3.0.0", **pinned_archs}) == {}


def test_two_settings_changed_together_are_named_together(tmp_path: Path) -> None:
    got = report(tmp_path, {"skip": "pp*", "requires": ">=3.8"}, {"skip": "pp* cp38-*", "requires": ">=3.9"})
    assert got["windows-latest"] == [
        f"loses cp38-win32, cp38-win_amd64 (CIBW_SKIP at {WF}:21, python_requires at setup.cfg:5)"
    ]


def test_a_moving_pin_at_the_head_is_unresolved_not_guessed(tmp_path: Path) -> None:
    changes = wheelsteps.changes(tree(tmp_path / "base"), tree(tmp_path / "head", version="v3"), tool=False)
    reasons = {c.unresolved[0].reason for c in changes.values()}
    assert reasons == {
        "cibuildwheel v3 is a moving ref, and its releases 3.0.0 to 3.4.1 build different "
        "wheels here: pin an exact version"
    }
    assert all(not c.changed for c in changes.values())


def test_wheels_moved_to_another_job_are_no_change_for_the_release(tmp_path: Path) -> None:
    """aarch64 wheels built under QEMU on ubuntu-latest move to a native arm runner: each
    context changes, the release ships the same identifiers."""
    qemu = '          CIBW_ARCHS_LINUX: "{arch}"'
    base = tree(tmp_path / "base", runners="ubuntu-latest", extra=qemu.format(arch="x86_64 aarch64"))
    head = tree(tmp_path / "head", runners="ubuntu-latest, ubuntu-24.04-arm", extra=qemu.format(arch="native"))
    assert set(wheelsteps.changes(base, head, tool=False)) == {
        (".github/workflows/wheels.yml#build_wheels", (), (("os", "ubuntu-latest"),), "wheels-ubuntu-latest"),
        (".github/workflows/wheels.yml#build_wheels", (), (("os", "ubuntu-24.04-arm"),), "wheels-ubuntu-24.04-arm"),
    }
    release = wheelsteps.overall(base, head, tool=False)
    assert (release.lost, release.gained, release.unresolved) == ((), (), ())


def test_a_release_names_the_new_step_that_builds_its_new_wheels(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", runners="ubuntu-latest", extra='          CIBW_BUILD: "cp312-*"')
    head = tree(tmp_path / "head", runners="ubuntu-latest, windows-11-arm", extra='          CIBW_BUILD: "cp312-*"')
    assert compare.describe(wheelsteps.overall(base, head, tool=False)) == [
        f"gains cp312-win_arm64 (built by the step at {WF}:19)"
    ]


def test_a_build_in_a_composite_action_reads_the_callers_env(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".github/workflows").mkdir(parents=True)
    (root / ".github/actions/build").mkdir(parents=True)
    (root / ".github/workflows/w.yml").write_text(
        'on: {push: {tags: ["v*"]}}\nenv:\n  CIBW_SKIP: "*musllinux*"\njobs:\n  build:\n'
        "    runs-on: ubuntu-latest\n    env:\n      CIBW_BUILD: cp312-*\n    steps:\n"
        "      - uses: ./.github/actions/build\n"
        "      - uses: actions/upload-artifact@v4\n        with: {name: w, path: wheelhouse}\n"
    )
    (root / ".github/actions/build/action.yml").write_text(
        "name: build\nruns:\n  using: composite\n  steps:\n"
        "    - run: pipx run cibuildwheel==3.1.4 --archs x86_64\n      shell: bash\n"
        "      env:\n        CIBW_ARCHS_LINUX: aarch64\n"
    )
    [(upload, [wheels])] = wheelsteps.shipped(root, tool=False).values()
    assert (upload.name, sorted(wheels.identifiers or ())) == ("w", ["cp312-manylinux_x86_64"])
    assert wheels.deciders["env.CIBW_BUILD"].label == (
        "CIBW_BUILD (the env of the job using this action) at .github/actions/build/action.yml:5"
    )
