"""The wheels a ``run:`` script builds, from the words the shell reader evaluates: variables
set earlier in the script, the step's and job's env, loops and branches as bash takes
them, ``cd``; where maturin writes (``--out``, ``--target-dir``, ``CARGO_TARGET_DIR``);
and copies or moves of the built wheels, followed only where every word is read exactly.

Each row is one workflow (one build job, one upload) read by the workflow reader
(``ci.wheelsteps``); what is compared is what the upload carries: its identifiers, ``[]``
where it carries no build's wheels, or the unresolved reason at its line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from stagegate.ci import wheelsteps

WF = ".github/workflows/w.yml"
FIRST = 9
"""The workflow line of the script's first line."""
PROJECT = '[project]\nname = "pkg"\n'


def carried(
    root: Path,
    script: str,
    *,
    path: str = "dist",
    env: str = "{}",
    then: str = "",
    files: dict[str, str] | None = None,
) -> list[str] | str:
    """What the upload of ``path`` after ``script`` (and the step ``then``) carries."""
    body = textwrap.indent(textwrap.dedent(script).strip("\n"), " " * 12)
    later = f"      - run: {then}\n" if then else ""
    (root / ".github/workflows").mkdir(parents=True)
    (root / WF).write_text(
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
        f"    env: {env}\n    steps:\n      - shell: bash\n        run: |\n{body}\n{later}"
        f"      - uses: actions/upload-artifact@v4\n        with: {{name: w, path: {path}}}\n"
    )
    for rel, text in {"pyproject.toml": PROJECT, **(files or {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    [upload] = wheelsteps.uploads(root, tool=False)
    out: list[str] = []
    for wheels in upload.wheels:
        if wheels.identifiers is None:
            assert wheels.unresolved is not None
            where = wheels.unresolved.loc
            return f"{where.line - FIRST + 1 if where.file == WF else where.at}: {wheels.unresolved.reason}"
        out += sorted(wheels.identifiers)
    return out


SHELL = {
    "variables": (
        """\
        PY=python3.12
        export TARGET="aarch64-unknown-linux-gnu"
        maturin build --release -i "$PY" --target="${TARGET}" --out dist
        """,
        ["cp312-manylinux_aarch64"],
    ),
    "a loop builds each": (
        "for py in 3.11 3.12; do maturin build -i python$py --out dist; done",
        ["cp311-manylinux_x86_64", "cp312-manylinux_x86_64"],
    ),
    "a branch decided": (
        """\
        PY=3.13t
        if [[ "$PY" == *t ]]; then FLAGS="-i python$PY"; else FLAGS="--find-interpreter"; fi
        maturin build $FLAGS --out dist
        """,
        ["cp313t-manylinux_x86_64"],
    ),
    "a prefix assignment": (
        "MACOSX_DEPLOYMENT_TARGET=11.0 maturin build -i 3.12 --out dist",
        ["cp312-manylinux_x86_64"],
    ),
    "a value from a command": (
        'PY="$(uv python find 3.12)"\nmaturin build --interpreter="$PY" --out dist',
        '2: --interpreter=$(uv python find 3.12) is not known: $PY is assigned at '
        f'{WF}:{FIRST} from $(uv python find 3.12): $(uv python find 3.12) runs a command',
    ),
    "a statement not read": (
        "select py in 3.11 3.12; do maturin build -i $py --out dist; done",
        "1: a statement stagegate does not read (a select loop, which reads its input) names "
        "a build tool",
    ),
}


@pytest.mark.parametrize("case", sorted(SHELL))
def test_words_as_the_shell_evaluates_them(tmp_path: Path, case: str) -> None:
    script, expected = SHELL[case]
    assert carried(tmp_path, script) == expected


OUTPUT = {
    # maturin writes to $CARGO_TARGET_DIR/wheels where it is set, else target/wheels
    "target/wheels": ("maturin build -i 3.12", "target/wheels", "{}", ["cp312-manylinux_x86_64"]),
    "not dist": ("maturin build -i 3.12", "dist", "{}", []),
    "env": ("maturin build -i 3.12", "/tmp/t/wheels", "{CARGO_TARGET_DIR: /tmp/t}", ["cp312-manylinux_x86_64"]),
    "env, not target": ("maturin build -i 3.12", "target/wheels", "{CARGO_TARGET_DIR: /tmp/t}", []),
    "exported": (
        "export CARGO_TARGET_DIR=build\nmaturin build -i 3.12", "build/wheels", "{}", ["cp312-manylinux_x86_64"],
    ),
    "--out wins": ("maturin build -i 3.12 -o out", "out", "{CARGO_TARGET_DIR: /tmp/t}", ["cp312-manylinux_x86_64"]),
    "--target-dir wins": (
        "maturin build -i 3.12 --target-dir=tgt", "tgt/wheels", "{CARGO_TARGET_DIR: /tmp/t}", ["cp312-manylinux_x86_64"],
    ),
    "cd": ("cd rust && maturin build -i 3.12", "rust/target/wheels", "{}", ["cp312-manylinux_x86_64"]),
    "cd in a subshell": ("(cd rust && true)\nmaturin build -i 3.12", "target/wheels", "{}", ["cp312-manylinux_x86_64"]),
}


@pytest.mark.parametrize("case", sorted(OUTPUT))
def test_where_maturin_writes(tmp_path: Path, case: str) -> None:
    script, path, env, expected = OUTPUT[case]
    files = {"rust/pyproject.toml": PROJECT} if "cd" in case else None
    assert carried(tmp_path, script, path=path, env=env, files=files) == expected


def test_a_folder_the_script_cannot_follow_leaves_the_wheels_unresolved(tmp_path: Path) -> None:
    assert carried(tmp_path, 'cd "$(mktemp -d)"\nmaturin build -i 3.12', path="target/wheels") == (
        f"2: the folder it runs in is not known (cd $(mktemp -d) at {WF}:{FIRST} goes to a folder "
        "stagegate does not follow): where its project is, is not known"
    )


COPIES = {
    # an upload of dist/ after the build and the copy
    "cp *.whl": ("cp target/wheels/*.whl dist", ["cp312-manylinux_x86_64"]),
    "cp * to dist/": ("mkdir -p dist && cp -v target/wheels/* dist/", ["cp312-manylinux_x86_64"]),
    "cp -t": ("cp -t dist target/wheels/*.whl", ["cp312-manylinux_x86_64"]),
    "the project's name": ("cp target/wheels/pkg*.whl dist", ["cp312-manylinux_x86_64"]),
    "a variable": ('OUT=target/wheels\ncp "$OUT"/*.whl dist', ["cp312-manylinux_x86_64"]),
    "mv": ("mv target/wheels/*.whl dist", ["cp312-manylinux_x86_64"]),
    "after mkdir &&": ("mkdir -p dist && cp target/wheels/*.whl dist", ["cp312-manylinux_x86_64"]),
    "after an if": ('if [[ "$X" == 1 ]]; then echo one; fi\ncp target/wheels/*.whl dist', ["cp312-manylinux_x86_64"]),
    "a loop over the wheels": ('for f in target/wheels/*.whl; do cp "$f" dist; done', ["cp312-manylinux_x86_64"]),
    # not read exactly: the wheels stay where maturin wrote them
    "a quoted pattern": ('cp "target/wheels/*.whl" dist', []),
    "another name": ("cp target/wheels/other*.whl dist", []),
    "a version": ("cp target/wheels/pkg-1*.whl dist", []),
    "an option not read": ("cp --parents target/wheels/*.whl dist", []),
    "another folder": ("cp wheelhouse/*.whl dist", []),
    "a destination not known": ("cp target/wheels/*.whl $(mktemp -d)", []),
    "a file": ("cp target/wheels/*.whl dist/pkg.whl", []),
    # a copy a run that gets there may not make
    "in a branch not decided": ('if [[ "$X" == 1 ]]; then cp target/wheels/*.whl dist; fi', []),
    "after a test": ("test -d dist && cp target/wheels/*.whl dist", []),
    "after an exit": ('[[ "$X" == 1 ]] && exit 0\ncp target/wheels/*.whl dist', []),
    "a loop that skips some": (
        'for f in target/wheels/*.whl; do [[ "$f" == *musl* ]] && continue; cp "$f" dist; done', [],
    ),
}


@pytest.mark.parametrize("case", sorted(COPIES))
def test_copies_of_the_built_wheels(tmp_path: Path, case: str) -> None:
    copy, expected = COPIES[case]
    assert carried(tmp_path, f"maturin build -i 3.12\n{copy}") == expected


def test_a_move_empties_the_folder_and_a_later_step_is_followed(tmp_path: Path) -> None:
    moved = "maturin build -i 3.12\nmv target/wheels/*.whl dist"
    assert carried(tmp_path / "a", moved, path="target/wheels") == []
    later = carried(tmp_path / "b", "maturin build -i 3.12", then="cp target/wheels/*.whl dist")
    assert later == ["cp312-manylinux_x86_64"]


def test_a_copy_after_a_folder_not_followed_is_not_followed(tmp_path: Path) -> None:
    script = "maturin build -i 3.12\ncd $(mktemp -d)\ncp target/wheels/*.whl dist"
    assert carried(tmp_path, script) == []


CIBW = {
    "exported": ('export CIBW_BUILD="cp312-manylinux_x86_64"\ncibuildwheel', "{}", ["cp312-manylinux_x86_64"]),
    "a prefix": ("CIBW_BUILD=cp313-manylinux_x86_64 cibuildwheel", "{}", ["cp313-manylinux_x86_64"]),
    "not exported": ("CIBW_BUILD=cp313-manylinux_x86_64\ncibuildwheel", "{CIBW_ARCHS: x86_64, CIBW_SKIP: '*musl*'}", None),
    "inherited": (
        "CIBW_BUILD=cp313-manylinux_x86_64\ncibuildwheel", "{CIBW_BUILD: cp310-manylinux_x86_64}", ["cp313-manylinux_x86_64"],
    ),
    "unset": ("unset CIBW_BUILD\ncibuildwheel", "{CIBW_BUILD: cp310-manylinux_x86_64, CIBW_ARCHS: x86_64, CIBW_SKIP: '*musl*'}", None),
}


@pytest.mark.parametrize("case", sorted(CIBW))
def test_cibuildwheel_sees_what_the_script_exports(tmp_path: Path, case: str) -> None:
    script, env, expected = CIBW[case]
    script = f"pip install cibuildwheel==3.1.4\n{script} --output-dir dist"
    found = carried(tmp_path, script, env=env, files={"pyproject.toml": PROJECT + 'requires-python = ">=3.12"\n'})
    if expected is None:  # the job's and workflow's own: every default CPython on x86_64
        expected = [f"{py}-manylinux_x86_64" for py in ("cp312", "cp313", "cp314", "cp314t")]
    assert found == expected
