"""Throwaway git repositories for the flip, gate and log tests.

Every repository lives under the test's tmp_path, has a pinned author, committer
and clock (each commit one minute after the last), and ignores the user's and
the system's git configuration, so that tests give the same commits everywhere
and never touch /work/main's own git.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

AUTHOR = ("Ada Flipper", "ada@example.com")
EPOCH = 1_700_000_000

SMALL = """\
# A small migration: the release narrows its glob (stage 1) before extra wheels
# appear (stage 2); stage 3 drops nothing but cannot be undone.
version: 1
migration: small
summary: Extra wheels beside the main ones, without changing the release.
stage: 0
axes:
  py: ["311", "312"]
flags:
  narrow:
    summary: The release selects by exact name.
  extra:
    summary: Build the extra wheels.
  final:
    summary: The end state.
producers:
  wheels:
    artifacts: ["pkg-py{py}"]
  extras:
    when: extra
    artifacts: ["pkg-extra-py{py}"]
releases:
  broad:
    when: not narrow
    tags: ["v1.*"]
    select: ["pkg-*"]
  exact:
    when: narrow
    tags: ["v1.*"]
    select: ["pkg-py*"]
invariants:
  - check: release-continuity
    tag: v1.0.0
"""

SMALL_STAGES = {
    "01-narrow.yaml": """\
stage: 1
title: Narrow the release glob
outcome: The release selects pkg-py* only.
set:
  narrow: true
acceptance:
  - check: unique-artifacts
""",
    "02-extra.yaml": """\
stage: 2
title: Extra wheels
outcome: Extra wheels are built; the release still selects the same names.
set:
  extra: true
acceptance:
  - check: release-continuity
    tag: v1.0.0
  - check: tags-routed
    tags: [v1.0.0]
""",
    "03-final.yaml": """\
stage: 3
title: The end state
outcome: Nothing changes for the release; there is no way back.
set:
  final: true
reversible: false
acceptance:
  - check: unique-artifacts
""",
}


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME=AUTHOR[0],
        GIT_AUTHOR_EMAIL=AUTHOR[1],
        GIT_COMMITTER_NAME=AUTHOR[0],
        GIT_COMMITTER_EMAIL=AUTHOR[1],
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        # repositories without git's template: its sample hooks and the rest are a score
        # of files per `git init` that no test reads, made and later removed by the run
        GIT_TEMPLATE_DIR="",
        # no `git maintenance run --auto` process after each commit (git starts one to
        # decide that a scratch repository needs no packing: ~1.7 ms a commit)
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="maintenance.auto",
        GIT_CONFIG_VALUE_0="false",
    )
    return env


def pin_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """stagegate's own git calls (made in-process) see the same isolated configuration."""
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    for key, value in git_env().items():
        if key.startswith("GIT_"):
            monkeypatch.setenv(key, value)


class Repo:
    """A scratch repository; ``git(...)`` runs git in it and returns stdout."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = EPOCH

    def git(self, *args: str, check: bool = True) -> str:
        env = git_env()
        stamp = f"@{self.clock} +0000"
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        proc = subprocess.run(
            ["git", *args], cwd=self.root, env=env, capture_output=True, text=True, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
        return proc.stdout

    def commit(self, message: str) -> str:
        self.clock += 60
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        """The commit HEAD names: read from .git where the branch has its own ref file
        (a fresh repository's), else asked of git (packed refs, a work tree's .git file)."""
        git_dir = self.root / ".git"
        if git_dir.is_dir():
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
            ref = git_dir / head.removeprefix("ref: ") if head.startswith("ref: ") else None
            if ref is None and re.fullmatch("[0-9a-f]{40}", head):
                return head
            if ref is not None and ref.is_file():
                return ref.read_text(encoding="utf-8").strip()
        return self.git("rev-parse", "HEAD").strip()

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def edit(self, rel: str, old: str, new: str) -> None:
        text = self.read(rel)
        assert old in text, f"{old!r} not in {rel}"
        self.write(rel, text.replace(old, new, 1))

    def status(self) -> str:
        return self.git("status", "--porcelain", "--untracked-files=all")


def tree_pair(root: Path, trees: Path, head: str, base: str = "before") -> tuple[Repo, str, str]:
    """A repository with the ``base`` tree of ``trees`` committed, then its ``head`` tree
    (each a folder holding .github/): the repository, the base and the head commits."""
    repo = init(root)
    shutil.copytree(trees / base, root, dirs_exist_ok=True, copy_function=shutil.copy)
    first = repo.commit(base)
    shutil.rmtree(root / ".github")
    shutil.copytree(trees / head, root, dirs_exist_ok=True, copy_function=shutil.copy)
    return repo, first, repo.commit(head)


_EMPTY: list[Path] = []
"""The empty repository ``init`` copies: made by ``git init`` once a process."""


def _empty_repository() -> Path:
    if not _EMPTY:
        import atexit
        import tempfile

        made = Path(tempfile.mkdtemp(prefix="stagegate-empty-repo-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        Repo(made).git("init", "-q", "-b", "main")  # without the template (git_env)
        _EMPTY.append(made / ".git")
    return _EMPTY[0]


def init(root: Path) -> Repo:
    """An empty repository at ``root`` on branch main: a copy of one ``git init`` made
    once (a git process for each repository cost more than the copy)."""
    root.mkdir(parents=True, exist_ok=True)
    repo = Repo(root)
    shutil.copytree(_empty_repository(), root / ".git")
    return repo


def write_small(root: Path) -> None:
    (root / "stages").mkdir(parents=True, exist_ok=True)
    (root / "migration.yaml").write_text(SMALL, encoding="utf-8")
    for name, text in SMALL_STAGES.items():
        (root / "stages" / name).write_text(text, encoding="utf-8")


def small_repo(root: Path) -> Repo:
    """A repository holding the small migration at stage 0, one commit."""
    repo = init(root)
    write_small(root)
    repo.commit("Add the small migration")
    return repo


_TREE_CHECKS = re.compile(r"^  - check: (pytest|retired)\n(?:    [^\n]*\n)*", re.MULTILINE)


def write_example(root: Path) -> None:
    """The worked example, without the checks that need more than the model.

    Its pytest checks (stages/NN-slug/) and `retired` checks read the repository
    around the example, which a scratch repository does not have."""
    (root / "stages").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "migration.yaml", root / "migration.yaml")
    text = _TREE_CHECKS.sub("", (root / "migration.yaml").read_text(encoding="utf-8"))
    text = re.sub(r"^stage: [0-9]+", "stage: 0", text, count=1, flags=re.MULTILINE)
    (root / "migration.yaml").write_text(text, encoding="utf-8")
    for stage_file in sorted((REPO / "stages").glob("*.yaml")):
        text = _TREE_CHECKS.sub("", stage_file.read_text(encoding="utf-8"))
        (root / "stages" / stage_file.name).write_text(text, encoding="utf-8")


def write_shipped_example(root: Path) -> None:
    """The worked example as shipped, its stage test folders included (at stage 0)."""
    root.mkdir(parents=True, exist_ok=True)
    text = (REPO / "migration.yaml").read_text(encoding="utf-8")
    text = re.sub(r"^stage: [0-9]+", "stage: 0", text, count=1, flags=re.MULTILINE)
    (root / "migration.yaml").write_text(text, encoding="utf-8")
    shutil.copytree(
        REPO / "stages", root / "stages", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )


def example_repo(root: Path) -> Repo:
    repo = init(root)
    write_example(root)
    repo.commit("Add the worked example")
    return repo


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


WHEELS_RELEASE = dedent(
    """\
    on:
      push:
        tags: ["v*"]
    jobs:
      wheels:
        runs-on: ${{ matrix.os }}
        strategy:
          matrix:
            os: [ubuntu-latest, windows-latest]
        steps:
          - uses: actions/upload-artifact@v4
            with:
              name: wheels-${{ matrix.os }}
              path: wheelhouse/*.whl
      publish:
        needs: wheels
        runs-on: ubuntu-latest
        steps:
          - uses: actions/download-artifact@v4
            with:
              pattern: wheels-*
              path: dist
              merge-multiple: true
          - uses: pypa/gh-action-pypi-publish@release/v1
    """
)
"""A tag release of two wheel legs, downloaded by pattern with merge-multiple into dist/
for the PyPI publish step: the release the continuity and verify-pr tests change."""
COMPOSITE = dedent(
    """\
    name: upload
    inputs:
      name: {required: true}
    runs:
      using: composite
      steps:
        - uses: actions/upload-artifact@v4
          with:
            name: ${{ inputs.name }}
            path: wheelhouse/*.whl
    """
)
"""A local composite action that uploads ``wheelhouse/*.whl`` under the name it is given."""
WHEELS_LINUX_ONLY = WHEELS_RELEASE.replace(
    "os: [ubuntu-latest, windows-latest]", "os: [ubuntu-latest]"
)
"""The same release without its Windows leg."""
WHEELS_MIGRATION = dedent(
    """\
    version: 1
    migration: wheels
    summary: Stop building Windows wheels.
    stage: 0
    flags:
      no-windows:
        summary: Build Linux wheels only.
    producers:
      linux:
        artifacts: ["wheels-ubuntu-latest"]
        jobs: [".github/workflows/release.yml#wheels"]
      windows:
        when: not no-windows
        artifacts: ["wheels-windows-latest"]
        jobs: [".github/workflows/release.yml#wheels"]
    releases:
      rel:
        tags: ["v1.*"]
        select: ["wheels-*"]
        jobs: [".github/workflows/release.yml#publish"]
    invariants:
      - check: release-continuity
        tag: v1.0.0
    """
)
"""A migration of ``WHEELS_RELEASE`` whose flag ``no-windows`` turns the Windows leg off."""
WHEELS_DECLARED = (
    "stage: 1\ntitle: No Windows wheels\nset:\n  no-windows: true\nrelease_changes:\n"
    "  - tag: v1.0.0\n    drop: ['wheels-windows-*']\n"
)
"""Stage 1 of ``WHEELS_MIGRATION``: the flag on, the release's loss declared."""


SMALL_STAGE_TESTS = {
    "stages/conftest.py": '''\
"""The stage under test, refusing to run a stage's tests at another stage."""

import pytest


@pytest.fixture
def stage(stagegate, request):
    assert stagegate.stage == request.module.STAGE
    return stagegate
''',
    "stages/narrowing.py": 'TAG = "v1.0.0"\n',
    "stages/01-narrow/test_01_narrow.py": """\
from narrowing import TAG

STAGE = 1


def test_the_release_is_narrowed(stage):
    assert stage.at(0).release(TAG) == "broad"
    assert stage.release(TAG) == "exact"


def test_the_narrowed_release_selects_the_same_names(stage):
    assert stage.release_selects(TAG) == ["pkg-py311", "pkg-py312"]
    assert stage.at(0).release_selects(TAG) == ["pkg-py311", "pkg-py312"]


def test_the_producers_stay_as_they_were(stage):
    assert stage.producers == stage.at(0).producers == ["wheels"]
""",
}
"""Stage 1's pytest folder of the small migration (``write_small_with_tests``), laid out
as the worked example's: a conftest.py and a helper module shared by the stages."""


def write_small_with_tests(root: Path) -> None:
    """The small migration at stage 0 whose stage 1 also runs its pytest folder,
    stages/01-narrow/: three tests, the last of which refuses any producer the stage
    adds (as the worked example's stage 1 tests do, at a fraction of their cost)."""
    write_small(root)
    stage_file = root / "stages" / "01-narrow.yaml"
    text = stage_file.read_text(encoding="utf-8")
    stage_file.write_text(text + "  - check: pytest\n", encoding="utf-8")
    for rel, body in SMALL_STAGE_TESTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body, encoding="utf-8")


def copy_repo(repo: Repo, root: Path) -> Repo:
    """A copy of ``repo`` at ``root``: its commits, branches, index and work tree, and its
    clock (the next commit is the one ``repo`` would make), for tests that each build on
    one repository made once (a module-scoped fixture) without touching it."""
    shutil.copytree(repo.root, root, symlinks=True)
    copied = Repo(root)
    copied.clock = repo.clock
    return copied
