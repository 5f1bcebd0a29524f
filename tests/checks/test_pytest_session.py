"""check --all runs the pytest folders of all its stages in one session (issue 17): each
test still sees its own stage, a folder that fails reads as it did when run alone, and
folders that cannot share a process run alone."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Result

MIGRATION = """\
version: 1
migration: sessions
stage: 0
axes:
  py: ["312"]
flags:
{flags}producers:
  wheels:
    artifacts: ["pkg-python{{py}}"]
consumers: {{}}
releases: {{}}
"""

TEST = """\
import os

from {helper} import made_for

STAGE = {stage}


def test_sees_its_own_stage(stagegate, tmp_path_factory):
    with open(os.environ["PIDS"], "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    assert stagegate.stage == STAGE
    assert os.environ["STAGEGATE_STAGE"] == str(STAGE)
    assert stagegate.flag("f{stage}")
    assert made_for() == STAGE
"""


def project(root: Path, stages: int, *, helper: str = "helper_{n}", fail: int = 0) -> Path:
    flags = "".join(f"  f{n}: {{}}\n" for n in range(1, stages + 1))
    (root / "stages").mkdir(parents=True)
    (root / "migration.yaml").write_text(MIGRATION.format(flags=flags))
    for n in range(1, stages + 1):
        (root / "stages" / f"0{n}-s{n}.yaml").write_text(
            f"stage: {n}\ntitle: S{n}\nset:\n  f{n}: true\nacceptance:\n  - check: pytest\n"
        )
        folder = root / "stages" / f"0{n}-s{n}"
        folder.mkdir()
        name = helper.format(n=n)
        (folder / f"{name}.py").write_text(f"def made_for():\n    return {n}\n")
        body = TEST.format(helper=name, stage=n)
        if n == fail:
            body += "\n\ndef test_fails():\n    assert 1 == 2, 'on purpose'\n"
        (folder / f"test_s{n}.py").write_text(body)
    return root


def processes(root: Path) -> int:
    return len(set((root / "pids.txt").read_text().split()))


@dataclass
class Run:
    result: Result
    processes: int
    """The pytest processes the stage tests ran in."""
    tests: int
    """How many times a stage's test ran (once per folder unless a folder ran twice)."""


def observed(
    sg: Callable[..., Result], root: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> Run:
    """``stagegate *args`` in ``root``, and the processes its stage tests ran in."""
    pids = root / "pids.txt"
    pids.write_text("")
    monkeypatch.setenv("PIDS", str(pids))
    result = sg(*args, cwd=root)
    return Run(result, processes(root), len(pids.read_text().split()))


def check_all(
    sg: Callable[..., Result], root: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> Result:
    """``stagegate check --all *args`` in ``root`` (its processes in ``pids.txt``)."""
    return observed(sg, root, monkeypatch, "check", "--all", *args).result


@pytest.fixture(scope="module")
def made() -> dict[str, object]:
    """Runs several tests read, each asserting its part: a pytest process costs ~0.6
    CPU-s, so each run is made once, by the first test that needs it (under that test's
    environment, which tests/conftest.py makes the same for every test)."""
    return {}


@dataclass
class Runs:
    computed: list[int]
    """How many model checks ``ahead``'s check --all computed while its session ran."""
    ahead: Run
    """check --all."""
    in_turn: Run
    """check --all with every check computed in its turn."""
    alone: Run
    """check --stage 2."""


@pytest.fixture
def hosted(
    made: dict[str, object],
    tmp_path_factory: pytest.TempPathFactory,
    sg: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> Runs:
    """Three stages, each with a pytest folder and model checks, in a host repository
    (``host``: its own root pytest.ini and conftest.py, and its CI's PYTEST_ADDOPTS);
    the stages folder has a conftest whose fixture a second test of stage 1 uses."""
    if "hosted" not in made:
        from stagegate.checks import runner

        root = host(project(tmp_path_factory.mktemp("hosted") / "p", 3))
        (root / "stages" / "conftest.py").write_text(
            "import pytest\n\n\n@pytest.fixture\ndef shared():\n    return 'stages'\n"
        )
        (root / "stages" / "01-s1" / "test_shared.py").write_text(
            "def test_stages_conftest_loads(shared):\n    assert shared == 'stages'\n"
        )
        migration = root / "migration.yaml"
        extras = "".join(
            f'  extra{n}:\n    when: f{n}\n    artifacts: ["extra{n}-python{{py}}"]\n'
            for n in (1, 2, 3)
        )
        migration.write_text(migration.read_text().replace("consumers:", extras + "consumers:"))
        for n in (1, 2, 3):
            stage_file = root / "stages" / f"0{n}-s{n}.yaml"
            extra = "  - check: unique-artifacts\n  - check: inputs-satisfied\n"
            stage_file.write_text(stage_file.read_text() + extra)
        computed: list[int] = []
        real = runner._ahead

        def spy(migration: object, at: object) -> dict[int, runner.Ahead]:
            found = real(migration, at)  # type: ignore[arg-type]
            computed.append(sum(len(checks) for checks in found.values()))
            return found

        with monkeypatch.context() as patched:
            patched.setenv("PYTEST_ADDOPTS", "--count=5")
            patched.setattr(runner, "_ahead", spy)
            ahead = observed(sg, root, patched, "check", "--all")
            patched.setattr(runner, "_ahead", lambda migration, at: {})
            in_turn = observed(sg, root, patched, "check", "--all")
            patched.setattr(runner, "_ahead", real)
            alone = observed(sg, root, patched, "check", "--stage", "2")
        made["hosted"] = Runs(computed, ahead, in_turn, alone)
    return made["hosted"]  # type: ignore[return-value]


def pytest_lines(out: str) -> list[str]:
    return [
        re.sub(r" in \d+\.\d+s( \(\d+\.\d+ s\))?$", " in Xs", line)
        for line in out.splitlines()
        if "pytest " in line
    ]


def test_every_stage_runs_in_one_session_and_sees_its_own_stage(hosted: Runs) -> None:
    """Three stages with a pytest folder each (``hosted``: in a host repository, with model
    checks beside): one process runs them all, each test seeing its own stage."""
    run = hosted.ahead
    assert run.result.code == 0, run.result.output
    assert run.processes == 1
    assert run.tests == 3
    assert pytest_lines(run.result.out) == [
        "  ok    pytest: pytest stages/01-s1: 2 passed in Xs",
        "  ok    pytest: pytest stages/02-s2: 1 passed in Xs",
        "  ok    pytest: pytest stages/03-s3: 1 passed in Xs",
    ]


def test_a_failing_folder_reads_as_when_run_alone(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p", 2, fail=2)
    together = check_all(sg, root, monkeypatch, "--format", "json")
    assert together.code == 1
    alone = sg("check", "--stage", "2", "--format", "json", cwd=root)
    shared = [r for r in json.loads(together.out)["results"] if r["stage"] == 2]
    own = json.loads(alone.out)["results"]

    def masked(results: list[dict[str, object]]) -> str:
        return re.sub(r"\d+\.\d+s", "Xs", json.dumps(results, sort_keys=True))

    assert masked(shared) == masked(own)
    assert "on purpose" in masked(shared)
    assert processes(root) == 1 + 2  # the session, then stage 2 alone (and its own check)


def test_folders_with_modules_of_one_name_never_share(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each folder imports its own `helper`: in one process the second would get the first's
    (and fail, and run again alone: each test runs once only where none shared)."""
    root = project(tmp_path / "p", 2, helper="helper")
    run = observed(sg, root, monkeypatch, "check", "--all")
    assert run.result.code == 0, run.result.output
    assert run.processes == 2
    assert run.tests == 2


def test_a_folder_with_its_own_configuration_runs_alone(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p", 3)
    (root / "stages" / "03-s3" / "pytest.ini").write_text(
        textwrap.dedent("""\
            [pytest]
            python_files = test_*.py
            """)
    )
    result = check_all(sg, root, monkeypatch)
    assert result.code == 0, result.output
    assert processes(root) == 2  # stages 1 and 2 together, 3 alone


def test_check_of_one_stage_runs_its_folder_alone(hosted: Runs) -> None:
    """`check --stage 2` of three stages: stage 2's tests alone, once."""
    alone = hosted.alone
    assert alone.result.code == 0, alone.result.output
    assert alone.processes == 1
    assert alone.tests == 1
    assert pytest_lines(alone.result.out) == ["  ok    pytest: pytest stages/02-s2: 1 passed in Xs"]


def test_the_session_wait_gives_the_exit_code_or_none_at_the_deadline() -> None:
    import subprocess
    import sys
    import time

    from stagegate.checks._pytest_session import _exit_code

    done = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert _exit_code(done, time.monotonic() + 60) == 3
    assert _exit_code(done, time.monotonic() + 60) == 3  # already collected: asked again
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _exit_code(slow, time.monotonic() + 0.2) is None
        assert slow.poll() is None  # still running: the caller stops it
    finally:
        slow.kill()
        slow.wait()
    assert _exit_code(slow, time.monotonic()) == slow.returncode


def test_model_checks_computed_while_the_session_runs_are_shown_in_their_turn(
    hosted: Runs,
) -> None:
    computed, ahead, in_turn = hosted.computed, hosted.ahead, hosted.in_turn

    def shown(out: str) -> list[str]:
        return [re.sub(r"\d+\.\d+ ?s\b", "Xs", line) for line in out.splitlines()]

    assert computed and computed[0] > 0  # the session was still running: computed ahead
    assert ahead.result.code == in_turn.result.code == 0
    assert shown(ahead.result.out) == shown(in_turn.result.out)
    assert [line.split(" (")[0] for line in ahead.result.out.splitlines() if "unique" in line] == [
        f"  ok    unique-artifacts: {rows} artifact rows of active producers have distinct names"
        for rows in (2, 3, 4)
    ]


def test_an_error_of_a_check_computed_ahead_comes_in_its_turn(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stagegate.checks import runner, unique_artifacts
    from stagegate.engine.globs import PatternError

    root = project(tmp_path / "p", 3)
    for n in (1, 2, 3):
        stage_file = root / "stages" / f"0{n}-s{n}.yaml"
        stage_file.write_text(stage_file.read_text() + "  - check: unique-artifacts\n")
    real = unique_artifacts.run

    def refuses_at_two(ctx: object, check: object) -> object:
        if getattr(ctx, "stage", None) == 2:
            raise PatternError("a question too complex to decide")
        return real(ctx, check)  # type: ignore[arg-type]

    monkeypatch.setattr(unique_artifacts, "run", refuses_at_two)
    ahead = check_all(sg, root, monkeypatch)
    monkeypatch.setattr(runner, "_ahead", lambda migration, at: {})
    in_turn = check_all(sg, root, monkeypatch)
    assert ahead.code == in_turn.code == 2
    assert "a question too complex to decide" in ahead.err
    assert re.sub(r"\d+\.\d+ ?s\b", "X", ahead.output) == re.sub(
        r"\d+\.\d+ ?s\b", "X", in_turn.output
    )
    assert "stage 1: S1" in ahead.out and "stage 3" not in ahead.out


def test_the_session_wait_works_with_a_thousand_files_open() -> None:
    """A check --all of a large migration may hold many files: the wait's descriptor can
    be past 1023, where select() cannot watch it."""
    import os
    import resource
    import subprocess
    import sys
    import time

    from stagegate.checks._pytest_session import _exit_code

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard if hard != resource.RLIM_INFINITY else 4096) < 1200:
        pytest.skip("fewer than 1200 open files allowed here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.dup(0) for _ in range(1100)]
    try:
        done = subprocess.Popen([sys.executable, "-c", "raise SystemExit(5)"])
        assert _exit_code(done, time.monotonic() + 60) == 5
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def host(root: Path) -> Path:
    """A host repository's own pytest set-up at its top: an ini whose addopts stagegate's
    pytest does not know, and a conftest importing the host's package (not installed)."""
    (root / "pytest.ini").write_text("[pytest]\naddopts = --host-only-option\n")
    (root / "conftest.py").write_text("from hostpkg import paths  # the host's own package\n")
    return root


def test_stage_tests_run_isolated_from_the_hosts_root_conftest_and_ini(hosted: Runs) -> None:
    """Issue 23: a host's root pytest.ini and conftest.py (and its CI's PYTEST_ADDOPTS)
    are not the stage tests'; the stages folder's conftest still loads."""
    together, alone = hosted.ahead, hosted.alone
    assert together.result.code == 0, together.result.output
    assert together.processes == 1
    assert pytest_lines(together.result.out) == [
        "  ok    pytest: pytest stages/01-s1: 2 passed in Xs",
        "  ok    pytest: pytest stages/02-s2: 1 passed in Xs",
        "  ok    pytest: pytest stages/03-s3: 1 passed in Xs",
    ]
    assert alone.result.code == 0, alone.result.output


def test_a_host_that_wants_its_conftest_says_so(
    tmp_path: Path, sg: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with `host-conftest: true` the host's conftest loads (here it fails
    to import the host's package), as plain pytest would."""
    root = host(project(tmp_path / "p", 2))
    (root / "pytest.ini").write_text("[pytest]\n")
    stage2 = root / "stages" / "02-s2.yaml"
    stage2.write_text(stage2.read_text() + "    host-conftest: true\n")
    result = check_all(sg, root, monkeypatch)
    assert result.code == 1, result.output
    assert pytest_lines(result.out)[0] == "  ok    pytest: pytest stages/01-s1: 1 passed in Xs"
    assert "ImportError while loading conftest" in result.out
    assert "No module named 'hostpkg'" in result.out
    assert processes(root) == 1  # stage 1 alone (stage 2 never reached its tests)
