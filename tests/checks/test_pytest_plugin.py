"""The `stagegate` pytest fixture, as a stage's test author and the `pytest` check use it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)


@pytest.fixture(autouse=True, scope="module")
def _stagegate_imported() -> None:
    """pytester's in-process runs delete the modules a run imported. stagegate imports
    most of its modules lazily, so a later run would import fresh copies of them beside
    the classes the modules kept from the first run hold (a Placeholder that is not a
    Placeholder). Import every module first, as the tests before this file do in a whole
    suite: this file then passes alone too."""
    import importlib
    import pkgutil

    import stagegate

    for module in pkgutil.walk_packages(stagegate.__path__, "stagegate."):
        importlib.import_module(module.name)


MIGRATION = """\
version: 1
migration: tiny
summary: CUDA 12 wheels move from another run into this one.
stage: {stage}
axes:
  py: ["311", "312"]
  platform: [linux-64, win-64]
  sha: {{pattern: "[0-9a-f]{{40}}"}}
flags:
  local:
    summary: Build the CUDA 12 wheels in this run.
producers:
  wheels13:
    artifacts:
      - "pkg-python{{py}}-cuda13-{{platform}}-{{sha}}"
      - "pkg-python{{py}}-cuda13-{{platform}}-{{sha}}-tests"
  branch12:
    when: not local
    run: branch
    artifacts: ["pkg-python{{py}}-cuda12-{{platform}}-{{sha}}"]
  local12:
    when: local
    artifacts: ["pkg-python{{py}}-cuda12-{{platform}}-{{sha}}"]
consumers:
  build12:
    inputs:
      - select: "pkg-python{{py}}-cuda*-{{platform}}*[0-9a-f]"
        from: [branch12, local12]
releases:
  rel13:
    tags: ["v13.*"]
    select: ["pkg-python*-cuda13-*"]
    exclude: ["*-tests"]
  rel12-branch:
    when: not local
    run: branch
    tags: ["v12.*"]
    select: ["pkg-*"]
  rel12:
    when: local
    tags: ["v12.*"]
    select: ["pkg-python*-cuda12-*"]
"""

STAGE_1 = """\
stage: 1
title: Local CUDA 12 wheels
set:
  local: true
"""


def write(root: Path, stage: int = 0) -> Path:
    (root / "stages").mkdir(parents=True, exist_ok=True)
    (root / "migration.yaml").write_text(MIGRATION.format(stage=stage))
    (root / "stages" / "01-local.yaml").write_text(STAGE_1)
    return root / "migration.yaml"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in-process; hypothesis's plugin alone would cost a second per run."""
    return pytester.runpytest("-p", "no:hypothesispytest", *args)


@pytest.fixture(autouse=True)
def _plugins_load_by_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin as installed: found by its entry point (tests/conftest.py turns that off
    for the pytest checks' own processes)."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    monkeypatch.delenv("PYTEST_PLUGINS")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("STAGEGATE_FILE", raising=False)
    monkeypatch.delenv("STAGEGATE_STAGE", raising=False)
    return monkeypatch


def test_environment_selects_file_and_stage(
    pytester: pytest.Pytester, env: pytest.MonkeyPatch
) -> None:
    migration = write(pytester.path / "repo")
    env.setenv("STAGEGATE_FILE", str(migration))
    env.setenv("STAGEGATE_STAGE", "1")
    pytester.makepyfile(
        """
        def test_stage(stagegate):
            assert stagegate.stage == 1
            assert stagegate.title == "Local CUDA 12 wheels"
            assert stagegate.producers == ["wheels13", "local12"]
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["stagegate: *migration.yaml at stage 1 (Local CUDA 12 wheels)"])


def test_options_beat_the_environment(pytester: pytest.Pytester, env: pytest.MonkeyPatch) -> None:
    migration = write(pytester.path / "repo")
    env.setenv("STAGEGATE_FILE", str(pytester.path / "nowhere.yaml"))
    env.setenv("STAGEGATE_STAGE", "1")
    pytester.makepyfile("def test_stage(stagegate):\n    assert stagegate.stage == 0\n")
    result = run(pytester, "--stagegate-file", str(migration), "--stagegate-stage", "0")
    result.assert_outcomes(passed=1)


def test_default_is_migration_yaml_here_at_its_current_stage(
    pytester: pytest.Pytester, env: pytest.MonkeyPatch
) -> None:
    write(pytester.path, stage=1)
    pytester.makepyfile("def test_stage(stagegate):\n    assert stagegate.stage == 1\n")
    run(pytester).assert_outcomes(passed=1)


def test_helpers_answer_with_exact_names(
    pytester: pytest.Pytester, env: pytest.MonkeyPatch
) -> None:
    write(pytester.path)
    pytester.makepyfile(
        """
        W13 = "pkg-python{py}-cuda13-{platform}-{{sha}}"
        W12 = "pkg-python{py}-cuda12-{platform}-{{sha}}"

        def names(template):
            return sorted(
                template.format(py=py, platform=p)
                for py in ("311", "312") for p in ("linux-64", "win-64")
            )

        def test_stage_0(stagegate):
            assert stagegate.flags == {"local": False}
            assert not stagegate.flag("local")
            assert stagegate.changed == []
            assert stagegate.active("branch12") and not stagegate.active("local12")
            assert stagegate.consumers == ["build12"] and "rel12-branch" in stagegate.releases
            assert stagegate.rows("local12")[0] == "pkg-python311-cuda12-linux-64-{sha}"
            assert len(stagegate.rows("wheels13")) == 8
            assert stagegate.select("pkg-*cuda12*") == []
            assert stagegate.select("pkg-*cuda12*", run="branch") == names(W12)
            assert stagegate.select("pkg-*", exclude=["*-tests"]) == names(W13)
            assert stagegate.release("v13.0.1") == "rel13"
            assert stagegate.release_selects("v13.0.1") == names(W13)
            assert stagegate.release_sources("v12.0.1") == {"branch12": names(W12)}
            # build12's glob sees the runs of its active `from` producers: local12 is off,
            # so only the branch's run, whose one source is branch12.
            assert stagegate.feeds("build12")["py=312 platform=win-64"] == ["branch12"]

        def test_stage_1(stagegate):
            later = stagegate.at(1)
            assert later.changed == ["local"]
            assert later.claimants("v12.0.1") == ["rel12"]
            assert later.release_sources("v12.0.1") == {"local12": names(W12)}
            assert later.release_selects("v12.0.1", built_at=0) == []
            assert later.feeds("build12", 0)["py=311 platform=linux-64"] == [
                "local12", "wheels13"
            ]
            assert later.select("pkg-*", exclude=["*-tests"]) == sorted(names(W12) + names(W13))

        def test_no_release_claims(stagegate):
            assert stagegate.claimants("v11.0") == []
            stagegate.release("v11.0")
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*0 active releases claim v11.0 at stage 0 (none)*"])


def test_a_broken_migration_stops_the_run_with_the_stagegate_message(
    pytester: pytest.Pytester, env: pytest.MonkeyPatch
) -> None:
    migration = write(pytester.path)
    migration.write_text(migration.read_text().replace("when: not local", "when: not locl", 1))
    pytester.makepyfile("def test_stage(stagegate):\n    pass\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: stagegate fixture: *migration.yaml:*:*: *unknown flag 'locl'*"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("args", "variable", "expected"),
    [
        ((), "9", "*$STAGEGATE_STAGE '9' is not a stage of *migration.yaml; use 0..1.*"),
        (("--stagegate-stage", "one"), None, "*--stagegate-stage 'one' is not a stage*"),
    ],
)
def test_a_stage_that_does_not_exist_is_a_usage_error(
    pytester: pytest.Pytester,
    env: pytest.MonkeyPatch,
    args: tuple[str, ...],
    variable: str | None,
    expected: str,
) -> None:
    write(pytester.path)
    if variable is not None:
        env.setenv("STAGEGATE_STAGE", variable)
    pytester.makepyfile("def test_stage(stagegate):\n    pass\n")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: stagegate fixture: {expected}"])


def test_a_missing_file_says_how_to_name_one(
    pytester: pytest.Pytester, env: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_stage(stagegate):\n    pass\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: stagegate fixture: *migration.yaml: no such file; pass --stagegate-file PATH*"]
    )


def test_a_mistaken_question_reports_the_message_without_a_traceback(
    pytester: pytest.Pytester, env: pytest.MonkeyPatch
) -> None:
    write(pytester.path)
    pytester.makepyfile(
        """
        def test_typo(stagegate):
            stagegate.rows("wheel13")

        def test_stage(stagegate):
            stagegate.at(2)
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "declares no producer 'wheel13'; did you mean 'wheels13'?" in out
    assert "stage 2 does not exist; " in out and "has stages 0..1." in out
    assert "def test_typo" not in out


def test_tests_without_the_fixture_load_nothing(tmp_path: Path) -> None:
    """Installed into every pytest run: it must not import stagegate nor read any file."""
    (tmp_path / "migration.yaml").write_text("not: [a, migration")
    (tmp_path / "test_plain.py").write_text(
        textwrap.dedent(
            """
            import sys

            def test_nothing_of_stagegate_is_imported():
                loaded = sorted(m for m in sys.modules if m.startswith("stagegate"))
                assert loaded == ["stagegate", "stagegate.pytest_plugin"]
            """
        )
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            "test_plain.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
