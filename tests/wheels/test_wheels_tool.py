"""The installed cibuildwheel (``stagegate-ci[wheels]``) asked for a step's identifiers
where it is the release the workflow pins; where its answer would be this machine's and
not the runner's, the step is unresolved with that reason, not guessed."""

from __future__ import annotations

import platform

import pytest
from test_wheels_deciders import WF, Tree, step

from stagegate.ci.wheels import shipped, tool

pytest.importorskip("cibuildwheel")

VERSION = tool.installed()
NATIVE = platform.machine()
RUNNER = {"x86_64": "ubuntu-latest", "aarch64": "ubuntu-24.04-arm"}.get(NATIVE, "")


@pytest.mark.skipif(not RUNNER, reason="cibuildwheel answers for a Linux runner of this machine's architecture")
def test_the_installed_release_answers_for_its_own_pin() -> None:
    files = Tree({"pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.12"\n\n'
                  '[tool.cibuildwheel]\nbuild = "cp31[123]-*"\nskip = "*-musllinux_*"\n'})
    wheels = shipped(step(VERSION, runner=RUNNER, env={"CIBW_ARCHS": "native"}), files)
    assert wheels.how == f"cibuildwheel {VERSION} (installed)"
    assert sorted(wheels.identifiers or ()) == [f"cp312-manylinux_{NATIVE}", f"cp313-manylinux_{NATIVE}"]


def test_another_release_is_not_asked() -> None:
    wheels = shipped(step("3.1.4", env={"CIBW_BUILD": "cp312-manylinux*", "CIBW_ARCHS": "x86_64"}), Tree())
    assert (wheels.how, sorted(wheels.identifiers or ())) == ("the table of cibuildwheel 3.1.4", ["cp312-manylinux_x86_64"])


def test_what_the_runner_decides_is_not_asked_of_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool, "installed", lambda: "9.0.0")
    windows = shipped(step("9.0.0", runner="windows-latest"), Tree())
    assert windows.unresolved is not None
    assert f"{windows.unresolved.loc.at}: {windows.unresolved.reason}" == (
        f"{WF}:10: cibuildwheel 9.0.0 resolves archs 'auto' on the runner (windows AMD64); "
        "stagegate knows how releases 2.0.0 to 4.2.0 do, not this one"
    )
    if NATIVE != "x86_64":
        return  # an arm64 machine answers for an arm64 Mac as the Mac would
    mac = shipped(step("9.0.0", runner="macos-14", env={"CIBW_ARCHS": "arm64"}), Tree())
    assert mac.unresolved is not None
    assert mac.unresolved.reason == (
        "the installed cibuildwheel 9.0.0 runs on this x86_64 machine, where it leaves out the "
        "PyPy and GraalPy arm64 builds an arm64 Mac makes"
    )
