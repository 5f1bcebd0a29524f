"""The shell reader (``run:`` scripts, stagegate.ci.shell), table-driven through its public
entry: ``ci.workflows.read`` on a one-job workflow whose first step runs the script.

What a row sees is what drift sees: the downloads the script makes (``gh run download``,
with the names, patterns, run and exclusions as evaluated), what it writes to
``$GITHUB_ENV`` (read back by the next step's upload, named ``${{ env.X }}``) and what is
unresolved, with its location. Unknown pieces of a name are shown as ``<expression>``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stagegate.ci import workflows
from stagegate.ci.files import Files
from stagegate.errors import InvalidInput
from stagegate.model import Migration
from stagegate.model.ghexpr import Ph, Sym, Unknown, Value

MODEL = """\
version: 1
migration: shell
stage: 0
axes:
  py: ["312", "313"]
flags:
  on:
    summary: A flag.
producers:
  wheels:
    artifacts: ["w-py{py}"]
workflows:
  bind:
    env.BOUND: bound-value
"""

WORKFLOW = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    env:
      JOBVAR: from-job
      EMPTY: ''
    steps:
      - run: |
{script}
      - uses: actions/upload-artifact@v4
        with:
          name: ${{{{ env.X }}}}
"""
FIRST = 10
"""The workflow line of the script's first line."""


@pytest.fixture(scope="module")
def migration(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Migration]:
    """The model, loaded once for the module (its own validation cache)."""
    from stagegate.validation import load

    root = tmp_path_factory.mktemp("model")
    (root / "migration.yaml").write_text(MODEL, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STAGEGATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield load(root / "migration.yaml")


def show(value: Value) -> str:
    if isinstance(value, Sym):
        return "".join(show(part) for part in value.parts)
    if isinstance(value, Unknown):
        return f"<{value.expression}>"
    if isinstance(value, Ph):
        return "{" + value.axis + "}"
    return str(value)


Read = Callable[..., list[str]]


@pytest.fixture
def read(migration: Migration, tmp_path: Path) -> Read:
    """What drift reads from ``script``: one line per transfer, then per unresolved value;
    line numbers count from the script's first line (1)."""

    def run(script: str, scripts: dict[str, str] | None = None) -> list[str]:
        """``scripts``: repository scripts (path -> text) the ``run:`` may call."""
        root = tmp_path / f"r{len(list(tmp_path.iterdir()))}"
        (root / ".github" / "workflows").mkdir(parents=True)
        for rel, text in (scripts or {}).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
        body = textwrap.indent(textwrap.dedent(script).strip("\n"), " " * 10)
        text = WORKFLOW.format(script=body)
        (root / ".github" / "workflows" / "ci.yml").write_text(text, encoding="utf-8")
        try:
            reading = workflows.read(migration, 0, Files(root))
        except InvalidInput as exc:
            return [
                f"invalid {p.loc.line - FIRST + 1}:{p.loc.col}: {p.message}" for p in exc.problems
            ]
        out = []
        for t in reading.transfers:
            line = f"{t.loc.line - FIRST + 1}: {t.direction} {t.kind} {show(t.value)}"
            if t.run != "this":
                line += f" from {t.run}"
            if t.exclude:
                line += " without " + ", ".join(show(e) for e in t.exclude)
            out.append(line)
        for u in reading.unresolved:
            out.append(f"unresolved {u.loc.line - FIRST + 1}: {u.expression}: {u.reason}")
        return out

    return run


def downloads(lines: list[str]) -> list[str]:
    return [line for line in lines if ": download " in line]


def name_of(line: str) -> str:
    """The name of a line ``N: download name NAME``."""
    return line.partition(" download name ")[2]


def computed(read: Read, script: str, name: str) -> None:
    """The script's last line downloads ``name``, with nothing unresolved on that line."""
    last = len(script.split("\n"))
    lines = read(script)
    assert downloads(lines) == [f"{last}: download name {name}"]
    assert not [line for line in lines if line.startswith(f"unresolved {last}")]


def no_env_x(lines: list[str], last: int) -> list[str]:
    """The lines of a script that writes no ``X``: the upload of ``${{ env.X }}`` after a
    script of ``last`` lines is unresolved."""
    up = last + 3
    return [
        f"{up}: upload name <${{{{ env.X }}}}>",
        f"unresolved {up}: ${{{{ env.X }}}}: env.X is set in no env: of the step, job or "
        "workflow (a script stagegate does not read may write it to $GITHUB_ENV); bind env.X",
    ]


# --------------------------------------------------------------------------- words


@pytest.mark.parametrize(
    ("script", "names"),
    [
        # assignments, in every form a script writes them
        ('A=x; gh run download -n "$A"', ["x"]),
        ('A=x\ngh run download -n "${A}"', ["x"]),
        ('A=1 B=2; gh run download -n "$A-$B"', ["1-2"]),
        (
            'export A=x; local B=y; declare C=z; readonly D=w\ngh run download -n "$A$B$C$D"',
            ["xyzw"],
        ),
        ('A=x\nA="$A-y"\ngh run download -n "$A"', ["x-y"]),
        ('A=x\nB="b-$A"\nA=z\ngh run download -n "$B"', ["b-x"]),
        # quoting
        ("A='lit $B'; gh run download -n \"$A\"", ["lit $B"]),
        ("gh run download -n 'it'\\''s'", ["it's"]),
        ('gh run download -n "q\\"q"', ['q"q']),
        ('gh run download -n "a b"', ["a b"]),
        ("gh run download -n a\\ b", ["a b"]),
        ("gh run download -n pre\"$JOBVAR\"'-post'", ["prefrom-job-post"]),
        # where a variable's value comes from: the job's env, a bind, the script
        ('gh run download -n "$JOBVAR"', ["from-job"]),
        ('gh run download -n "$BOUND"', ["bound-value"]),
        # a bare bind gives way to the script's own known value
        ('BOUND=local; gh run download -n "$BOUND"', ["local"]),
        ('JOBVAR=local; gh run download -n "$JOBVAR"', ["local"]),
        # a line continued by a backslash is one command
        ("gh run download \\\n  -n x \\\n  -n y", ["x", "y"]),
        # an unclosed quote goes on on the next line
        ('gh run download -n "a\nb"', ["a\nb"]),
        # GitHub's ${{ }} first, then the shell
        ('gh run download -n "${{ env.JOBVAR }}"', ["from-job"]),
        ("gh run download -n 'py-${{ env.JOBVAR }}'", ["py-from-job"]),
        ('V=${{ env.JOBVAR }}; gh run download -n "$V"', ["from-job"]),
        # $GITHUB_* of the run: the run's own id is this run
        ('gh run download "$GITHUB_RUN_ID" -n a', ["a"]),
        ("gh run download ${{ github.run_id }} -n a", ["a"]),
    ],
)
def test_words(read: Read, script: str, names: list[str]) -> None:
    assert sorted(name_of(line) for line in downloads(read(script))) == sorted(names)


@pytest.mark.parametrize(
    ("expansion", "value"),
    [
        ("${UNSET:-d}", "d"),
        ("${UNSET-d}", "d"),
        ("${EMPTY:-d}", "d"),
        ("${EMPTY-d}", ""),
        ("${JOBVAR:-d}", "from-job"),
        ("${JOBVAR-d}", "from-job"),
        ("${V:-d}", "a.b.c"),
        ("${UNSET:-}", ""),
        ("${V//./}", "abc"),
        ("${V/./}", "ab.c"),
        ("${V//./-}", "a-b-c"),
        ("${V//x/y}", "a.b.c"),
        ("${V#a.}", "b.c"),
        ("${V##a.}", "b.c"),
        ("${V#b}", "a.b.c"),
        ("${V%.c}", "a.b"),
        ("${V%%.c}", "a.b"),
        ("${V%b}", "a.b.c"),
        ("${#V}", "5"),
        ("${#EMPTY}", "0"),
        ("x${V%%.c}y${V#a.}z", "xa.byb.cz"),
        # Shell patterns in #, ##, %, %% (bash's answers, checked with bash itself):
        ("${V%%.*}", "a"),  # the major of a version: ${CUDA_VER%%.*}
        ("${V%.*}", "a.b"),
        ("${V#*.}", "b.c"),
        ("${V##*.}", "c"),
        ("${V#?}", ".b.c"),
        ("${V%[bc]}", "a.b."),
        ("${V%%[!a]*}", "a"),
        ("${V#[^a]}", "a.b.c"),
        ("${V%\\.c}", "a.b"),
        ("${V%%x*}", "a.b.c"),
        # patterns in replacements, classes, an unclosed bracket (itself), slices, case
        ("${V//[.]/}", "abc"),
        ("${V/?/x}", "x.b.c"),
        ("${V%[[:alpha:]]}", "a.b."),
        ("${V%[}", "a.b.c"),
        ("${V:0:3}", "a.b"),
        ("${V^^}", "A.B.C"),
        # every form (bash's answers, checked with bash itself)
        ("${V:=z}", "a.b.c"),
        ("${NEW:=dflt}-$NEW", "dflt-dflt"),  # := assigns
        ("${V:+alt}", "alt"),
        ("${EMPTY:+alt}", ""),
        ("${EMPTY+set}", "set"),
        ("${W,,}", "cuda-core"),
        ("${W,}", "cuda-Core"),
        ("${W^}", "Cuda-Core"),
        ("${V/#a/x}", "x.b.c"),
        ("${V/%c/x}", "a.b.x"),
        ("${V:2}", "b.c"),
        ("${V: -3}", "b.c"),
        ("${V:1:-1}", ".b."),
        ("${#W}", "9"),
        ("${UNSET:-$V}", "a.b.c"),  # the default is expanded
    ],
)
def test_parameter_expansions(read: Read, expansion: str, value: str) -> None:
    """String operations on known values, as the shell computes them."""
    computed(read, f'V=a.b.c\nW=Cuda-Core\ngh run download -n "{expansion}"', value)


@pytest.mark.parametrize(
    ("expansion", "reason"),
    [
        (
            "${V%$X}",
            "${V%$X}: a pattern stagegate does not read (it reads $X, which stagegate does not "
            "know: $X is set in no env: of the step, job or workflow, nor earlier in the script; "
            "bind env.X)",
        ),
        ("${V%%+(a)}", "${V%%+(a)}: the extended pattern +(...), which stagegate does not read"),
        ("${!V}", "${!V} is a shell expansion stagegate does not compute"),
        ("${NOPE%.c}", "${NOPE%.c}: a string operation on a value stagegate does not know"),
        ("${#NOPE}", "${#NOPE}: the length of a value stagegate does not know"),
        ("$(date)", "$(date) runs a command"),
        (
            "$(echo $(date))",
            "$(echo $(date)) at .github/workflows/ci.yml:11: it reads $(date), which "
            "stagegate does not know: $(date) runs a command",
        ),
        ("`date`", "`date` runs a command"),
        ("$1", "$1 is a shell parameter"),
        ("$@", "$@ is a shell parameter"),
        ("$$", "$$ is a shell parameter"),
        (
            "$NOPE",
            "$NOPE is set in no env: of the step, job or workflow, nor earlier in the "
            "script; bind env.NOPE",
        ),
    ],
)
def test_what_the_reader_cannot_compute(read: Read, expansion: str, reason: str) -> None:
    """Unresolved with its expression and line, never guessed; the rest of the word stays."""
    lines = read(f'V=a.b.c\ngh run download -n "w-{expansion}"')
    assert downloads(lines) == [f"2: download name w-<{expansion}>"]
    assert f"unresolved 2: {expansion}: {reason}" in lines


def test_an_unknown_assignment_stays_unknown(read: Read) -> None:
    lines = read('A=1\nB="$(date)"\ngh run download -n "w-$B"')
    assert downloads(lines) == ["3: download name w-<$(date)>"]
    assert (
        "unresolved 3: $(date): $B is assigned at .github/workflows/ci.yml:11 from $(date): "
        "$(date) runs a command" in lines
    )


# --------------------------------------------------------------------------- loops


@pytest.mark.parametrize(
    ("script", "names"),
    [
        ('for x in a b; do gh run download -n "w-$x"; done', ["w-a", "w-b"]),
        ('for x in a b\ndo\n  gh run download -n "w-$x"\ndone', ["w-a", "w-b"]),
        ('L="a b"\nfor x in $L; do\n  gh run download -n "w-$x"\ndone', ["w-a", "w-b"]),
        ('for x in "a b" c; do gh run download -n "w-$x"; done', ["w-a b", "w-c"]),
        (
            'for x in a b; do\n  for y in 1 2; do\n    gh run download -n "$x$y"\n  done\ndone',
            ["a1", "a2", "b1", "b2"],
        ),
        ("while true; do gh run download -n w; done", ["w"]),
        ("until false; do gh run download -n w; done", ["w"]),
        ('for x in a; do :; done\ngh run download -n "after-$x"', ["after-a"]),
        ('for x in ${{ env.JOBVAR }} b; do gh run download -n "$x"; done', ["from-job", "b"]),
    ],
)
def test_loops(read: Read, script: str, names: list[str]) -> None:
    """A ``for`` loop over known words runs its body once per word; other loops once."""
    assert sorted(name_of(line) for line in downloads(read(script))) == sorted(names)


@pytest.mark.parametrize(
    ("script", "name", "expression"),
    [
        ('for x in $(ls); do gh run download -n "w-$x"; done', "w-<$(ls)>", "$(ls)"),
        ('for x in $NOPE; do gh run download -n "w-$x"; done', "w-<$NOPE>", "$NOPE"),
    ],
)
def test_a_loop_over_unknown_words(read: Read, script: str, name: str, expression: str) -> None:
    lines = read(script)
    assert downloads(lines) == [f"1: download name {name}"]
    assert any(line.startswith(f"unresolved 1: {expression}: ") for line in lines)


def test_a_loop_longer_than_the_limit_is_refused(read: Read) -> None:
    from stagegate.ci.transfers import MAX_LOOP

    words = " ".join(f"w{i}" for i in range(MAX_LOOP + 1))
    assert read(f'for x in {words}; do gh run download -n "$x"; done') == [
        f"invalid 1:1: a for loop over {MAX_LOOP + 1:,} values; stagegate expands at most "
        f"{MAX_LOOP:,}."
    ]
    control = " ".join(f"w{i}" for i in range(MAX_LOOP))
    assert len(downloads(read(f'for x in {control}; do gh run download -n "$x"; done'))) == (
        MAX_LOOP
    )


# --------------------------------------------------------------------------- $GITHUB_ENV


@pytest.mark.parametrize(
    ("script", "value"),
    [
        ('echo "X=v" >> "$GITHUB_ENV"', "v"),
        ("echo X=v >> $GITHUB_ENV", "v"),
        ('echo "X=v" >>"$GITHUB_ENV"', "v"),
        ('echo "X=v" >> "${GITHUB_ENV}"', "v"),
        ('echo -n "X=v" >> "$GITHUB_ENV"', "v"),
        ('echo "X=v" | tee -a "$GITHUB_ENV"', "v"),
        ('echo "X=v" | tee -a "$GITHUB_ENV" > /dev/null', "v"),
        ('A=in; echo "X=w-$A" >> "$GITHUB_ENV"', "w-in"),
        ('echo "X=$JOBVAR" >> "$GITHUB_ENV"', "from-job"),
        ('echo "X=a=b" >> "$GITHUB_ENV"', "a=b"),
        ('echo "X=" >> "$GITHUB_ENV"', ""),
        ('echo "X=a" >> "$GITHUB_ENV"\necho "X=b" >> "$GITHUB_ENV"', "b"),
        ('{ echo "Y=a"; echo "X=v"; } >> "$GITHUB_ENV"', "v"),
        ('{\n  echo "Y=a"\n  echo "X=v"\n} >> "$GITHUB_ENV"', "v"),
        ('for v in a b; do echo "X=$v" >> "$GITHUB_ENV"; done', "b"),
        # here-documents: a quoted delimiter keeps the body literal
        ('cat >> "$GITHUB_ENV" <<EOF\nX=v-$JOBVAR\nEOF', "v-from-job"),
        ("cat >> \"$GITHUB_ENV\" <<'EOF'\nX=v-$JOBVAR\nEOF", "v-$JOBVAR"),
        ('cat >> "$GITHUB_ENV" << "EOF"\nX=v-$JOBVAR\nEOF', "v-$JOBVAR"),
        ('cat <<-EOF >> "$GITHUB_ENV"\n\tX=v\n\tEOF', "v"),
        ('tee -a "$GITHUB_ENV" <<EOF\nY=a\nX=v\nEOF', "v"),
    ],
)
def test_github_env_writes(read: Read, script: str, value: str) -> None:
    """What a step writes to $GITHUB_ENV is ``env.X`` in the job's later steps."""
    lines = read(script)
    up = len(textwrap.dedent(script).strip("\n").split("\n")) + 3
    assert lines == [f"{up}: upload name {value}"]


@pytest.mark.parametrize(
    "script",
    [
        'echo "X=v" >> "$GITHUB_OUTPUT"',
        'echo "Y=v" >> "$GITHUB_ENV"',
        'echo "X=v"',
        'echo "X=v" >> out.txt',
        "cat <<EOF\nX=v\nEOF",
        "echo '1X=v' >> \"$GITHUB_ENV\"",
    ],
)
def test_what_is_not_a_github_env_write(read: Read, script: str) -> None:
    """Controls: the same text to another file, or another name, does not set X."""
    last = len(script.split("\n"))
    assert read(script) == no_env_x([], last)


def test_an_env_write_of_an_unknown_value(read: Read) -> None:
    assert read('echo "X=$(date)" >> "$GITHUB_ENV"') == [
        "4: upload name <${{ env.X }}>",
        "unresolved 4: ${{ env.X }}: X is written to $GITHUB_ENV by the script at "
        ".github/workflows/ci.yml:10 from a value stagegate cannot compute ($(date)); "
        "bind env.X",
    ]


# ----------------------------------------- folders: pwd, realpath, cygpath, pushd/popd

WS = "$GITHUB_WORKSPACE"


@pytest.mark.parametrize(
    ("script", "value"),
    [
        ('echo "X=$(pwd)" >> "$GITHUB_ENV"', WS),
        ('echo "X=$PWD" >> "$GITHUB_ENV"', WS),
        ('echo "X=$GITHUB_WORKSPACE/dist" >> "$GITHUB_ENV"', f"{WS}/dist"),
        ('cd sub; echo "X=$(pwd)" >> "$GITHUB_ENV"', f"{WS}/sub"),
        ('cd sub; cd ..; echo "X=$PWD" >> "$GITHUB_ENV"', WS),
        ('echo "X=$(realpath dist/../out)" >> "$GITHUB_ENV"', f"{WS}/out"),
        ('echo "X=$(realpath -s ./dist/)" >> "$GITHUB_ENV"', f"{WS}/dist"),
        ('cd sub; echo "X=$(realpath ../dist)" >> "$GITHUB_ENV"', f"{WS}/dist"),
        ('R=$(pwd); cd sub; echo "X=$(realpath "$R/dist")" >> "$GITHUB_ENV"', f"{WS}/dist"),
        ('R=$(pwd); cd sub; cd "$R/ci"; echo "X=$(pwd)" >> "$GITHUB_ENV"', f"{WS}/ci"),
        ('echo "X=$(readlink -f ./dist)" >> "$GITHUB_ENV"', f"{WS}/dist"),
        ('pushd a; pushd b; popd; echo "X=$(pwd)" >> "$GITHUB_ENV"', f"{WS}/a"),
        ('echo "X=$(cygpath -w "$GITHUB_WORKSPACE/ci")" >> "$GITHUB_ENV"', f"{WS}/ci"),
        pytest.param(
            'PWD=$(pwd)\nR=$(cygpath -w ${PWD})\necho "X=$(realpath "${R}/dist")" >> "$GITHUB_ENV"',
            f"{WS}/dist",
            id="cuda-python's env-vars on a Windows row",
        ),
    ],
)
def test_the_folder_a_path_names(read: Read, script: str, value: str) -> None:
    """pwd, $PWD, realpath, readlink -f and cygpath of a folder in the workspace: its
    absolute path, spelled from ``$GITHUB_WORKSPACE`` (the text every path reader takes
    for the workspace), wherever the script has gone since."""
    assert read(script) == [f"{len(script.split(chr(10))) + 3}: upload name {value}"]


@pytest.mark.parametrize(
    "script",
    [
        "realpath /usr/local/cuda",  # outside the workspace: often a link
        "realpath ../out",  # above the workspace
        "cygpath -w ci/tools",  # cygpath spells a relative path relative
        "realpath -e dist",  # -e: nothing where it does not exist
        "readlink dist",  # the link's target, not the folder
        "realpath dist/*",  # the files the glob expands to
        'cd "$(cat where)"; pwd',  # a folder not followed
    ],
)
def test_a_folder_stagegate_does_not_know(read: Read, script: str) -> None:
    """Controls: a path outside the workspace, a glob, an option that changes what is
    printed, a folder a cd not followed went to: unknown, never guessed."""
    assert read(f'echo "X=$({script})" >> "$GITHUB_ENV"') == [
        "4: upload name <${{ env.X }}>",
        "unresolved 4: ${{ env.X }}: X is written to $GITHUB_ENV by the script at "
        f".github/workflows/ci.yml:10 from a value stagegate cannot compute ($({script})); "
        "bind env.X",
    ]


@pytest.mark.parametrize(
    "value",
    [
        '$(basename "$(pwd)")',  # the workspace's own name
        "$(basename $GITHUB_WORKSPACE/)",
        '$(dirname "$PWD")',  # the folder above it
        "${PWD##*/}",
        "${GITHUB_WORKSPACE%/*}",
        "${PWD/work/x}",
        "${PWD:1:3}",
        "${PWD^^}",
        "${#PWD}",
        "$(pwd | tr / -)",
        "$(pwd | sed s/o/x/)",
        "$(pwd | cut -d/ -f2)",
        "$(echo $PWD | awk -F/ '{print $2}')",
        '$(echo -e "$GITHUB_WORKSPACE")',  # a Windows path's backslashes read as escapes
        "$(printf '%.4s' \"$PWD\")",
        '$(echo "{\\"p\\": \\"$PWD\\"}" | jq -r .p)',
    ],
)
def test_what_a_text_operation_makes_of_the_workspace_is_not_known(read: Read, value: str) -> None:
    """Attack: the workspace's path is carried as ``$GITHUB_WORKSPACE``, a text that is
    not the path; a length, trim, slice or text tool over it would compute from that
    text, not from the path. Unknown, never guessed."""
    assert read(f'echo "X={value}" >> "$GITHUB_ENV"') == [
        "4: upload name <${{ env.X }}>",
        "unresolved 4: ${{ env.X }}: X is written to $GITHUB_ENV by the script at "
        f".github/workflows/ci.yml:10 from a value stagegate cannot compute ({value}); "
        "bind env.X",
    ]


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ('$(basename "$(pwd)/dist")', "dist"),
        ("$(dirname $PWD/dist/x)", f"{WS}/dist"),
        ('$(echo "$PWD/out" | cat)', f"{WS}/out"),
        ("$(printf '%s/a' \"$PWD\")", f"{WS}/a"),
    ],
)
def test_what_only_carries_the_workspace_is_computed(read: Read, value: str, name: str) -> None:
    """Controls: ``basename``/``dirname`` below the workspace, ``cat``, ``echo``, plain
    ``printf %s`` keep the path as it is."""
    assert read(f'echo "X={value}" >> "$GITHUB_ENV"') == [f"4: upload name {name}"]


@pytest.mark.parametrize(
    ("test", "name"),
    [
        ('[ "$PWD" = "$GITHUB_WORKSPACE" ]', "yes"),  # the same text: the same path
        ('[[ "$(pwd)" == "$GITHUB_WORKSPACE" ]]', "yes"),
        ('[[ "$PWD/a" != "$GITHUB_WORKSPACE/a" ]]', "no"),
        ("[[ $PWD == */r ]]", None),  # what the path ends with is not known
        ('[ "$PWD" = /home/runner/work/r/r ]', None),
        ('[[ "$PWD" < /x ]]', None),
    ],
)
def test_a_test_on_the_workspace_is_decided_only_by_its_own_text(
    read: Read, test: str, name: str | None
) -> None:
    """Attack: a pattern or a comparison with another path over the workspace's path is
    not decided (both names are possible); the same text is."""
    out = read(f'if {test}; then X=yes; else X=no; fi\necho "X=$X" >> "$GITHUB_ENV"')
    if name is not None:
        assert out == [f"5: upload name {name}"]
    else:
        assert out == [
            "5: upload name <${{ env.X }}>",
            "unresolved 5: ${{ env.X }}: X is written to $GITHUB_ENV by the script at "
            ".github/workflows/ci.yml:11 from a value stagegate cannot compute ($X, which "
            "is set differently by the branches of the if at .github/workflows/ci.yml:10, whose "
            "condition stagegate cannot decide); bind env.X",
        ]


# --------------------------------------------------------------------------- gh run download


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("gh run download -n a", ["name a"]),
        ("gh run download --name a", ["name a"]),
        ("gh run download --name=a", ["name a"]),
        ("gh run download -na", ["name a"]),
        ("gh run download -n=a", ["name a"]),
        ("gh run download -n a -n b", ["name a", "name b"]),
        ("gh run download -p 'w-*'", ["pattern w-*"]),
        ("gh run download --pattern 'w-*'", ["pattern w-*"]),
        ("gh run download --pattern=w-*", ["pattern w-*"]),
        ("gh run download -pw-*", ["pattern w-*"]),
        ("gh run download -n a -p 'w-*'", ["name a", "pattern w-*"]),
        ("gh run download", ["pattern *"]),
        ("gh run download -D out", ["pattern *"]),
        ('gh run download "$RUN" -n a', ["name a from $RUN"]),
        ("gh run download 12345 -n a -R owner/repo --dir out", ["name a from 12345"]),
        ("gh run download -R owner/repo 12345 -n a", ["name a from 12345"]),
        ("gh run download -n a > log.txt", ["name a"]),
        ("cd out && gh run download -n a || exit 1", ["name a"]),
        ("time gh run download -n a", ["name a"]),
        ("if gh run download -n a; then echo ok; fi", ["name a"]),
        ("! gh run download -n a", ["name a"]),
        ("gh run download -n a; gh run download -n b", ["name a", "name b"]),
        ("gh run download -n a &\nwait", ["name a"]),
    ],
)
def test_download_forms(read: Read, script: str, expected: list[str]) -> None:
    assert sorted(downloads(read(script))) == sorted(f"1: download {e}" for e in expected)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            "gh run download -p 'w-*' -D dist\nrm -rf dist/w-tests dist/w-py3*",
            "pattern w-* without w-tests, w-py3*",
        ),
        ("gh run download -p 'w-*' -D dist\nrm -rf dist/w-tests/", "pattern w-* without w-tests"),
        ("gh run download -p 'w-*'\nrm -rf w-docs", "pattern w-* without w-docs"),
        ("gh run download -p 'w-*' --dir=dist\nrm -r dist/w-a", "pattern w-* without w-a"),
        ("gh run download -p 'w-*' -D dist\nrm -rf w-docs", "pattern w-*"),
        ("gh run download -p 'w-*' -D dist\nrm -rf dist/w-a/inner", "pattern w-*"),
        ("rm -rf w-docs\ngh run download -p 'w-*'", "pattern w-*"),
    ],
)
def test_a_removal_after_a_pattern_download(read: Read, script: str, expected: str) -> None:
    """``rm`` of a downloaded artifact's folder (directly in the download's folder) takes
    it out of what the download keeps; anything else does not."""
    lines = downloads(read(script))
    assert [line.partition(" download ")[2] for line in lines] == [expected]


def test_a_removal_of_an_unknown_path_is_unresolved(read: Read) -> None:
    assert read("gh run download -p 'w-*' -D dist\nrm -rf \"dist/$(date)\"") == [
        "1: download pattern w-*",
        *no_env_x([], 2)[:1],
        "unresolved 2: rm dist/$(date): a script removes a path stagegate cannot compute "
        "after a download, so what the download keeps is unknown; bind what it removes",
        *no_env_x([], 2)[1:],
    ]


def test_a_here_document_is_data(read: Read) -> None:
    """Its lines are not commands."""
    assert downloads(
        read("cat <<EOF\ngh run download -n inside\nEOF\ngh run download -n after")
    ) == ["4: download name after"]


def test_a_download_the_reader_cannot_split(read: Read) -> None:
    lines = read('gh run download -n "unclosed\ngh run download -n next')
    assert downloads(lines) == []
    assert (
        'unresolved 1: gh run download -n "unclosed: a gh run download stagegate cannot parse'
        in lines
    )


def test_an_invalid_expression_in_a_script_is_located(read: Read) -> None:
    assert read('echo ok\ngh run download -n "${{ matrix.py"') == [
        "invalid 2:1: invalid expression: '${{' is not closed by '}}'; close the expression "
        "(or write the text without ${{)."
    ]


def test_a_script_without_gh_or_github_env_is_not_read(read: Read) -> None:
    """A fast path: nothing in it can download or write the environment."""
    assert read('A="$(unclosed\necho "${{ env.JOBVAR }}"') == no_env_x([], 2)


# ------------------------------------------- what the shell does (gaps fixed in issue 23)

_BUGS = [
    pytest.param(
        'gh run download -n "\\$A"',
        ["1: download name $A"],
        id="a backslash-dollar in double quotes is a literal dollar",
    ),
    pytest.param(
        'A="a b"; gh run download -n $A',
        ["1: download name a from b"],
        id="an unquoted expansion is split into words",
    ),
    pytest.param(
        "gh run download -n a > log.txt 2>&1",
        ["1: download name a"],
        id="2>&1 is a redirection, not a run id",
    ),
    pytest.param(
        "echo gh run download -n a",
        [],
        id="echo's arguments are not a command",
    ),
    pytest.param(
        'echo "X=v" >> "$GITHUB_ENV"; gh run download -n "w-$X"',
        ["1: download name w-<$X>"],
        id="a GITHUB_ENV write is not seen by the script that makes it",
    ),
    # controls: the same constructs where the shell does what the reader did before
    pytest.param(
        'gh run download -n "\\\\$A"', ["1: download name \\<$A>"], id="control: \\\\ then $A"
    ),
    pytest.param(
        'A="a b"; gh run download -n "$A"',
        ["1: download name a b"],
        id="control: a quoted expansion is one word",
    ),
    pytest.param(
        "gh run download 123 -n a > log.txt",
        ["1: download name a from 123"],
        id="control: a run id before a redirection",
    ),
    pytest.param(
        'echo "start"; gh run download -n a',
        ["1: download name a"],
        id="control: a command after echo runs",
    ),
    pytest.param(
        'X=v; echo "X=w" >> "$GITHUB_ENV"; gh run download -n "w-$X"',
        ["1: download name w-v"],
        id="control: the script's own variable",
    ),
]


@pytest.mark.parametrize(("script", "expected"), _BUGS)
def test_what_the_shell_does(read: Read, script: str, expected: list[str]) -> None:
    """What the shell does, where the reader once did otherwise (with controls)."""
    assert sorted(downloads(read(script))) == sorted(expected)


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        pytest.param(
            'B="$(date)"\ngh run download -n "$B"',
            "$B is assigned at .github/workflows/ci.yml:10 from $(date): $(date) runs a command",
            id="an unknown assignment says where it was made",
        ),
        pytest.param(
            'for x; do gh run download -n "$x"; done',
            "the loop at .github/workflows/ci.yml:10:1 runs over the script's arguments",
            id="a loop over the arguments says so",
        ),
    ],
)
def test_reasons_say_where(read: Read, script: str, reason: str) -> None:
    """An assignment's and a loop's own reasons reach the unresolved entry."""
    assert any(line.endswith(f": {reason}") for line in read(script) if line.startswith("unr"))


def test_a_message_before_continue_keeps_the_filter(read: Read) -> None:
    """download-wheels echoes what it skips before `continue`: still an exclusion."""
    script = """\
        gh run download -p "w-*"
        for d in w-*
        do
          if [[ "${d}" == *-tests ]]; then
            echo "Skipping test artifact: $d"
            continue
          fi
          mv "$d"/*.whl dist/
        done
        """
    assert downloads(read(script)) == ["1: download pattern w-* without *-tests"]
    # control: a branch that does more than print is not a filter
    assert downloads(read(script.replace('echo "Skipping', 'rm -rf "$d"; echo "S'))) == [
        "1: download pattern w-*"
    ]


# ------------------------------------------------------- command substitutions (textops)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        # the forms of cuda-python's ci/tools/env-vars
        ("$(echo \"$P\" | tr -d '.')", "314t"),
        ("$(echo $P | tr -d .)", "314t"),
        ('$(tr -d . <<< "$P")', "314t"),
        ("$(tr -d a-b <<< $V)", "..c"),
        ("$(cut -d '.' -f 1 <<< ${V})", "a"),
        ("$(cut -d. -f2- <<< $V)", "b.c"),
        ("$(cut -d . -f 3,1 <<< $V)", "a.c"),
        ("$(cut -d . -f -2 <<< $V)", "a.b"),
        ("$(cut -d - -f 2 <<< $V)", "a.b.c"),  # no delimiter in the line: all of it
        ('$(echo "$V" | cut -d . -f 2)', "b"),
        ('$(echo "$V" | tr -d . | cut -d b -f 1)', "a"),
        ("$(( N - 1 ))", "12"),
        ("$((${N} - 1))", "12"),
        ("$(($N*2+1))", "27"),
        ("$(( (N - 20) / 3 ))", "-2"),  # division truncates toward zero
        ("$(( -7 % 3 ))", "-1"),
        ("$(( 5 - -3 ))", "8"),
        ("$(( N ** 2 ))", "169"),
        ("$(( N-- ))", "13"),  # the value before the decrement
        ("$(( N << 2 ))", "52"),
        ("$(( 010 ))", "8"),  # octal, as bash reads it
        ("$(tr -s . <<< $V)", "a.b.c"),
        ("$(tr -s . -d <<< $V)", "a-b-c"),  # GNU tr: -d is the second set here
        ("$(tr -d '[:punct:]' <<< $V)", "abc"),
        ("$(cut -c 1 <<< $V)", "a"),
        ("$(echo -e $V | tr -d .)", "abc"),
        ("$(printf %d 1)", "1"),
        ('$(printf %s "$V")', "a.b.c"),
        ("$(printf %s-%s x y)", "x-y"),
        ("$(printf %s. a b)", "a.b."),  # the format is reused while arguments remain
        ('$(printf "%s\\n" a)', "a"),  # trailing newlines go
        ("$(echo a   b)", "a b"),
        # sed, awk, basename, dirname, here-strings (issue 33)
        ("$(echo \"${P}\" | sed 's/\\.//g')", "314t"),
        ("$(sed -e 's/\\./-/' -e 's/t$//' <<< \"$P\")", "3-14"),
        ("$(echo \"$W\" | awk -F- '{print $2}')", "Core"),
        ("$(awk '{print $1}' <<< \"q r\")", "q"),
        ("$(basename /x/y/w.whl .whl)", "w"),
        ("$(dirname /x/y/w.whl)", "/x/y"),
        ("$(printf '%s-%03d' \"$P\" 7)", "3.14t-007"),
        ('$(echo "$V" | cut -d. -f2 | tr a-z A-Z)', "B"),
        ('$(cat <<< "$V")', "a.b.c"),
    ],
)
def test_command_substitutions(read: Read, expression: str, value: str) -> None:
    """What bash prints for each (checked by hand against bash 5), with no unresolved."""
    script = f'V=a.b.c\nN=13\nP=3.14t\nW=Cuda-Core\ngh run download -n "w-{expression}"'
    computed(read, script, f"w-{value}")


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        # controls: commands that depend on the runner stay unknown, never guessed
        ("$(nproc)", "$(nproc) runs a command"),
        ("$(realpath /opt/x)", "$(realpath /opt/x) runs a command"),
        ("$(cygpath -w x)", "$(cygpath -w x) runs a command"),
        ("$(echo $V | sort)", "$(echo $V | sort) runs a command"),
        ("$(tr -d . < f)", "tr with a redirection"),
        ("$(tr -d . <<< $V; date)", "$(tr -d . <<< $V; date) runs a command"),
        ('$(echo "$NOPE" | tr -d .)', "it reads $NOPE, which stagegate does not know"),
        ("$(tr -z . <<< $V)", "tr -z: an option stagegate does not read"),
        ("$(tr -d . )", "tr reads its standard input, which stagegate does not know"),
        ("$(cut -d . -f 0 <<< $V)", "cut's list '0' is not one cut reads (cut fails)"),
        ("$(cut -d ab -f 1 <<< $V)", "cut's delimiter must be a single character (cut fails)"),
        ("$(printf %e 1)", "printf's %e, which stagegate does not read"),
        ("$(( N / 0 ))", "a division by zero"),
        ("$(( 2#19 ))", "2#19: a digit too great for the base"),
        ("$(( V + 1 ))", "V is 'a.b.c', not a decimal integer"),
        ("$(( O + 1 ))", "08 is not a number bash reads (octal digits are 0 to 7)"),
        ("$(( NOPE + 1 ))", "it reads $NOPE, which stagegate does not know"),
    ],
)
def test_substitutions_the_reader_does_not_evaluate(
    read: Read, expression: str, reason: str
) -> None:
    """Unresolved with the substitution, where it is and why; the name's rest stays."""
    lines = read(f'V=a.b.c\nN=13\nO=08\ngh run download -n "w-{expression}"')
    assert lines[0] == f"4: download name w-<{expression}>"
    (entry,) = [line for line in lines if line.startswith("unresolved 4")]
    assert entry.startswith(f"unresolved 4: {expression}: ")
    if not reason.endswith("runs a command"):
        assert f"{expression} at .github/workflows/ci.yml:13: {reason}" in entry
    else:
        assert entry.endswith(reason)


def test_an_unused_unknown_substitution_is_not_reported(read: Read) -> None:
    """env-vars' `$(nproc)` and `$(realpath ...)`: unknown, but no name uses them."""
    script = 'echo "J=$(nproc)" >> "$GITHUB_ENV"\necho "X=w-$(( 2 + 1 ))" >> "$GITHUB_ENV"'
    assert read(script) == ["5: upload name w-3"]


@pytest.mark.parametrize(
    ("condition", "taken"),
    [
        ("[[ $N -eq 13 ]]", "yes"),
        ("[[ $N -ne 13 ]]", "no"),
        ("[ $N -lt 14 ]", "yes"),
        ("[[ $N -le 12 ]]", "no"),
        ("test $N -gt 12", "yes"),
        ("[[ $N -ge 14 ]]", "no"),
        ("[[ ${#} -ne 1 ]]", "<${{ env.X }}>"),  # outside a called script: not known
        ("[[ $V -eq 1 ]]", "<${{ env.X }}>"),  # bash reads text as an expression
        ("[[ 013 -eq 13 ]]", "<${{ env.X }}>"),  # octal
    ],
)
def test_integer_comparisons(read: Read, condition: str, taken: str) -> None:
    script = (
        f'V=a.b.c\nN=13\nif {condition}; then X=yes; else X=no; fi\necho "X=$X" >> "$GITHUB_ENV"'
    )
    assert read(script)[0] == f"7: upload name {taken}"


@pytest.mark.parametrize(
    ("condition", "taken"),
    [
        ("[[ -f ci/versions.yml ]]", "yes"),  # the repository holds it: in the checkout
        ("[ -e ci/versions.yml ]", "yes"),
        ("[[ ! -f ci/versions.yml ]]", "no"),
        # not in the repository: an earlier step may make it, so not decided
        ("[[ -f ci/versions.json ]]", "<${{ env.X }}>"),
        ("[[ -f ../outside ]]", "<${{ env.X }}>"),
    ],
)
def test_a_file_test_of_a_file_the_repository_holds(read: Read, condition: str, taken: str) -> None:
    """build-docs' `if [[ -f ci/versions.yml ]]; then yq ...; elif [[ -f ci/versions.json ]]`."""
    script = f'if {condition}; then X=yes; else X=no; fi\necho "X=$X" >> "$GITHUB_ENV"'
    assert read(script, {"ci/versions.yml": "cuda: {}\n"})[0] == f"5: upload name {taken}"


ENV_VARS = """\
    #!/usr/bin/env bash
    set -euo pipefail
    if [[ ${#} -ne 1 ]]; then
      echo "Usage: ${0} build_mode[build or test]"
      exit 1
    fi
    PYTHON_VERSION_FORMATTED=$(echo "${PY_VER}" | tr -d '.')
    echo "PARALLEL=$(nproc)" >> $GITHUB_ENV
    {
      echo "CORE=core-python${PYTHON_VERSION_FORMATTED}-${SHA}"
      echo "DIR=$(realpath "$(pwd)/dist")"
    } >> $GITHUB_ENV
    if [[ "${1}" == "build" ]]; then
      MAJOR="$(cut -d '.' -f 1 <<< ${CUDA_VER})"
      PREV=$((${MAJOR} - 1))
      BASE="bindings-python${PYTHON_VERSION_FORMATTED}-cuda${CUDA_VER}"
    elif [[ "${1}" == "test" ]]; then
      BASE="bindings-python${PYTHON_VERSION_FORMATTED}-cuda${BUILD_CUDA_VER}"
    fi
    {
      echo "BINDINGS=${BASE}-${SHA}"
      echo "X=core-python${PYTHON_VERSION_FORMATTED}-${SHA} ${BASE}-${SHA} ${PREV:-none}"
    } >> $GITHUB_ENV
    """


@pytest.mark.parametrize(
    ("mode", "name"),
    [
        ("build", "core-python314t-abc bindings-python314t-cuda13.2.0-abc 12"),
        ("test", "core-python314t-abc bindings-python314t-cuda12.9.1-abc none"),
        # control: a mode neither branch takes leaves BASE unset (`set -u` fails the run)
        ("other", "<${{ env.X }}>"),
    ],
)
def test_a_called_script_s_branches_and_substitutions(read: Read, mode: str, name: str) -> None:
    """cuda-python's ci/tools/env-vars: its argument picks the branch; its group writes,
    arithmetic and `cut`/`tr` substitutions are the env of the job's later steps."""
    script = (
        "export PY_VER=3.14t CUDA_VER=13.2.0 BUILD_CUDA_VER=12.9.1 SHA=abc\n"
        f"./ci/tools/env-vars {mode}"
    )
    lines = read(script, {"ci/tools/env-vars": ENV_VARS})
    assert lines[:1] == [f"5: upload name {name}"], lines
    assert len(lines) == (2 if mode == "other" else 1)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ("export PY_VER=3.14t\n./ci/tools/py", "py314t"),
        ("PY_VER=3.14t\nexport PY_VER\n./ci/tools/py", "py314t"),
        ("PY_VER=3.14t ./ci/tools/py", "py314t"),
        # control: a variable the caller does not export is not the script's
        ("PY_VER=3.14t\n./ci/tools/py", "<${{ env.X }}>"),
    ],
)
def test_what_a_called_script_inherits(read: Read, call: str, name: str) -> None:
    script = {"ci/tools/py": 'echo "X=py$(echo "${PY_VER}" | tr -d .)" >> "$GITHUB_ENV"\n'}
    lines = read(call, script)
    assert lines[0] == f"{len(call.splitlines()) + 3}: upload name {name}"


INIT_WORKFLOW = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.10", "3.14t"]
    steps:
      - env:
          PY_VER: ${{ matrix.python-version }}
          SHA: ${{ github.sha }}
        run: ./ci/tools/env-vars build
      - uses: actions/upload-artifact@v4
        with:
          name: ${{ env.CORE }}
          path: dist/*.whl
"""


def test_init_writes_a_template_through_a_substitution(
    sg: Callable[..., Any], tmp_path: Path
) -> None:
    """`init --from-workflows`: the formatted version is an axis of its own, each row's
    value what `tr -d .` makes of the matrix value; `check` passes on the model."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "build.yml").write_text(INIT_WORKFLOW, encoding="utf-8")
    (tmp_path / "ci" / "tools").mkdir(parents=True)
    (tmp_path / "ci" / "tools" / "env-vars").write_text(
        'F=$(echo "${PY_VER}" | tr -d .)\n{ echo "CORE=core-py${F}-${SHA}"; } >> $GITHUB_ENV\n',
        encoding="utf-8",
    )
    assert sg("init", "--from-workflows", cwd=tmp_path).code == 0
    text = (tmp_path / "migration.yaml").read_text(encoding="utf-8")
    assert '  python-version-tr: ["310", "314t"]\n' in text
    assert '      - "core-py{python-version-tr}-{sha}"   # .github/workflows/build.yml:15\n' in text
    check = sg("check", cwd=tmp_path)
    assert check.code == 0, check.output


def test_a_placeholder_without_its_value_stays_unknown() -> None:
    """init's generated-matrix axes ({CUDA_VER}, no value): `cut` of one is not computed;
    a tagged row value (Ph with its value) is, and the result is tagged with a key of its own."""
    from stagegate.ci.shell import values

    with pytest.raises(values.Failed, match=r"it reads \{CUDA_VER\}, which stands for many"):
        values.known(Sym((Ph("CUDA_VER"),)))
    known = values.known(Sym(("v", Ph("python-version", "3.10"))))
    assert (known.text, known.keys) == ("v3.10", frozenset({"python-version"}))
    assert values.result("310", known.keys, "tr") == "310"
    assert values.result("310", known.keys, "tr").axis == "python-version-tr"


@pytest.mark.parametrize(
    ("script", "names"),
    [
        (
            "gh run download $(printf '%s ' -n w-a -n w-b)",
            ["1: download name w-a", "1: download name w-b"],
        ),
        (
            'for x in $(echo a b); do gh run download -n "w-$x"; done',
            ["1: download name w-a", "1: download name w-b"],
        ),
        # control: quoted, the output is one word
        ('gh run download -n "$(echo a b)"', ["1: download name a b"]),
    ],
)
def test_an_unquoted_substitution_is_split_into_words(
    read: Read, script: str, names: list[str]
) -> None:
    assert downloads(read(script)) == names


def test_an_unquoted_yaml_version_is_the_number_github_writes(read: Read) -> None:
    """`python-version: [3.10]` is the number 3.1 in YAML: GitHub writes "3.1", and
    `tr -d .` makes "31", not "310" (the classic trap, computed, not hidden)."""
    script = 'PY=$(echo "${{ 3.10 }}" | tr -d .)\ngh run download -n "w-py$PY"'
    assert downloads(read(script)) == ["2: download name w-py31"]


# ------------------------------------------------------------ control flow (issue 33)


def x_written(read: Read, script: str) -> list[str]:
    """The later step's name from ``env.X`` (after a script of one line, or several),
    then the unresolved lines about it."""
    lines = read(script)
    up = len(textwrap.dedent(script).strip("\n").split("\n")) + 3
    return [line for line in lines if line.startswith((f"{up}: upload", f"unresolved {up}:"))]


NO_X = "<${{ env.X }}>"


@pytest.mark.parametrize(
    ("script", "x"),
    [
        # &&, ||, ! decide as bash does where their commands' statuses are known
        ('false && echo X=1 >> "$GITHUB_ENV"', NO_X),
        ("true || echo X=1 >> $GITHUB_ENV", NO_X),
        ('true && echo X=1 >> "$GITHUB_ENV"', "1"),
        ('false || echo X=1 >> "$GITHUB_ENV"', "1"),
        ('! false && echo X=1 >> "$GITHUB_ENV"', "1"),
        ('! true && echo X=1 >> "$GITHUB_ENV"', NO_X),
        ('[[ a == a && ( b != c || x ) ]] && echo X=t >> "$GITHUB_ENV"', "t"),
        # if / elif / else
        (
            'if false; then X=a; elif true; then X=b; else X=c; fi; echo "X=$X" >> "$GITHUB_ENV"',
            "b",
        ),
        (
            'A=2; if [ "$A" = 1 ]; then X=a; elif [[ $A == 2 ]]; then X=b; fi\n'
            'echo "X=$X" >> "$GITHUB_ENV"',
            "b",
        ),
        # case: the first matching item; ;& runs the next body, ;;& tests on
        (
            'V=py312; case "$V" in py3[0-9]) X=old;; py31*|py32*) X=new;; *) X=other;; esac\n'
            'echo "X=$X" >> "$GITHUB_ENV"',
            "new",
        ),
        ('case a in a) X=1;& b) X="${X}2";; c) X=3;; esac; echo "X=$X" >> "$GITHUB_ENV"', "12"),
        ('case ab in a*) X=1;;& *b) X="${X}2";; esac; echo "X=$X" >> "$GITHUB_ENV"', "12"),
        # loops: while, until, C-style for, break, continue (N)
        ('i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo "X=$i" >> "$GITHUB_ENV"', "3"),
        ('i=5; until [ $i -le 2 ]; do i=$((i-1)); done; echo "X=$i" >> "$GITHUB_ENV"', "2"),
        ('X=; for ((i=0; i<3; i++)); do X="$X$i"; done; echo "X=$X" >> "$GITHUB_ENV"', "012"),
        (
            'for v in a b c; do if [ $v = b ]; then break; fi; X=$v; done; echo "X=$X" >> "$GITHUB_ENV"',
            "a",
        ),
        (
            'X=; for v in a b c; do [ $v = b ] && continue; X="$X$v"; done\necho "X=$X" >> "$GITHUB_ENV"',
            "ac",
        ),
        (
            'X=; for v in a b; do for w in 1 2; do [ $w = 2 ] && continue 2; X="$X$v$w"; done; done\n'
            'echo "X=$X" >> "$GITHUB_ENV"',
            "a1b1",
        ),
        ('for v in a b; do echo "X=$v"; done >> "$GITHUB_ENV"', "b"),
        # functions (defined, then called), local, return
        ('f() { echo "X=$1-$2" >> "$GITHUB_ENV"; }; f a b', "a-b"),
        (
            'g() { local Y=in; X="$Y"; return 0; X=never; }; Y=out; g; echo "X=$X-$Y" >> "$GITHUB_ENV"',
            "in-out",
        ),
        ('h() { echo "hv-$1"; }; X=$(h 7); echo "X=$X" >> "$GITHUB_ENV"', "hv-7"),
        # subshells keep their variables, not their writes; groups share both
        ('X=outer; (X=inner); echo "X=$X" >> "$GITHUB_ENV"', "outer"),
        ('(echo "X=sub" >> "$GITHUB_ENV")', "sub"),
        ('{ X=g; }; echo "X=$X" >> "$GITHUB_ENV"', "g"),
        ('{ echo "Y=1"; echo "X=grp"; } >> "$GITHUB_ENV"', "grp"),
        # pipelines: what one prints is the next one's input
        ('echo "X=piped" | tee -a "$GITHUB_ENV"', "piped"),
        ("printf 'X=%s\\n' v | cat >> \"$GITHUB_ENV\"", "v"),
        ('echo "a b" | { read -r P Q; echo "X=$Q" >> "$GITHUB_ENV"; }', "b"),
        ('X=$(if [ 1 = 1 ]; then echo yes; else echo no; fi); echo "X=$X" >> "$GITHUB_ENV"', "yes"),
        # builtins that change the shell
        ('read -r A B <<< "p q r"; echo "X=$B" >> "$GITHUB_ENV"', "q r"),
        ('set -- a b c; shift; echo "X=$1$#" >> "$GITHUB_ENV"', "b2"),
        ('eval \'X=ev\'; echo "X=$X" >> "$GITHUB_ENV"', "ev"),
        ('X=0; X=$((X+1)); ((X+=2)); echo "X=$X" >> "$GITHUB_ENV"', "3"),
        ('echo X=1 >> "$GITHUB_ENV"; exit 0; echo X=2 >> "$GITHUB_ENV"', "1"),
        # a value of several lines (GitHub's NAME<<DELIMITER)
        (
            'echo "X<<EOF" >> "$GITHUB_ENV"; echo line >> "$GITHUB_ENV"; echo EOF >> "$GITHUB_ENV"',
            "line",
        ),
    ],
)
def test_control_flow(read: Read, script: str, x: str) -> None:
    """Control flow from the parse, each row as bash runs it (checked against bash 5.2
    with $GITHUB_ENV a file); where no X is written, the later step's name is unknown."""
    lines = x_written(read, script)
    assert lines[0].partition(" upload name ")[2] == x, lines


UNDECIDED = "whose condition stagegate cannot decide"


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (
            '[ -f x ] && echo X=1 >> "$GITHUB_ENV"',
            "env.X is set differently by the && list at .github/workflows/ci.yml:10, "
            f"{UNDECIDED}; bind env.X",
        ),
        (
            'mkdir -p dist || echo X=1 >> "$GITHUB_ENV"',
            "env.X is set differently by the || list at .github/workflows/ci.yml:10, "
            f"{UNDECIDED}; bind env.X",
        ),
        (
            'if [ -f setup.py ]; then X=a; else X=b; fi\necho "X=$X" >> "$GITHUB_ENV"',
            "X is written to $GITHUB_ENV by the script at .github/workflows/ci.yml:11 from a "
            "value stagegate cannot compute ($X, which is set differently by the branches of "
            f"the if at .github/workflows/ci.yml:10, {UNDECIDED}); bind env.X",
        ),
        (
            'X=a\ncase "$RUNNER_OS" in Linux) X=l;; esac\necho "X=$X" >> "$GITHUB_ENV"',
            "X is written to $GITHUB_ENV by the script at .github/workflows/ci.yml:12 from a "
            "value stagegate cannot compute ($X, which is set differently by the items of the "
            f"case at .github/workflows/ci.yml:11, {UNDECIDED}); bind env.X",
        ),
        (
            'X=\nwhile read -r line; do X="$X$line"; done < list.txt\necho "X=$X" >> "$GITHUB_ENV"',
            "X is written to $GITHUB_ENV by the script at .github/workflows/ci.yml:12 from a "
            "value stagegate cannot compute ($X, which is set differently by the turns of the "
            f"while loop at .github/workflows/ci.yml:11, {UNDECIDED}); bind env.X",
        ),
        (
            'if [ -f x ]; then echo X=1 >> "$GITHUB_ENV"; exit 0; fi\necho X=2 >> "$GITHUB_ENV"',
            "env.X is set differently by the exits of the script at .github/workflows/ci.yml:10, "
            f"{UNDECIDED}; bind env.X",
        ),
        (
            'X=a\nf() { [ -f y ] && return 0; X=b; }\nf\necho "X=$X" >> "$GITHUB_ENV"',
            "X is written to $GITHUB_ENV by the script at .github/workflows/ci.yml:13 from a "
            "value stagegate cannot compute ($X, which is set differently by the returns of f "
            f"at .github/workflows/ci.yml:12, {UNDECIDED}); bind env.X",
        ),
    ],
)
def test_an_undecidable_condition_makes_a_later_value_unknown(
    read: Read, script: str, reason: str
) -> None:
    """Never a certain write: where bash's path depends on what stagegate cannot know
    (files, the runner, an input), what the paths set apart is unknown, and says where."""
    up = len(script.split("\n")) + 3
    assert x_written(read, script) == [
        f"{up}: upload name <${{{{ env.X }}}}>",
        f"unresolved {up}: ${{{{ env.X }}}}: {reason}",
    ]


def test_a_loop_that_turns_past_the_limit_leaves_what_it_changes_unknown(read: Read) -> None:
    """`while` decided true for more turns than stagegate follows: what the turns change
    is unknown (never the value after the last turn followed); the control, 3 turns."""
    script = 'i=0\nwhile [ $i -lt 5000 ]; do i=$((i+1)); done\necho "X=$i" >> "$GITHUB_ENV"'
    assert x_written(read, script)[1] == (
        "unresolved 6: ${{ env.X }}: X is written to $GITHUB_ENV by the script at "
        ".github/workflows/ci.yml:12 from a value stagegate cannot compute ($i, which is set "
        "differently by the turns of the while loop at .github/workflows/ci.yml:11, which "
        "stagegate follows for 1,000 turns); bind env.X"
    )
    assert x_written(read, script.replace("5000", "3"))[0] == "6: upload name 3"


def test_a_download_on_one_path_of_an_undecidable_condition_may_happen(read: Read) -> None:
    """Both paths are followed: what each downloads may happen (and is read); a removal
    on one path only leaves what the download keeps unresolved."""
    lines = downloads(
        read("if [ -f a ]; then gh run download -n one; else gh run download -n two; fi")
    )
    assert lines == ["1: download name one", "1: download name two"]
    lines = read("gh run download -p 'w-*' -D d\n[ -f a ] && rm -rf d/w-docs\ntrue")
    assert "1: download pattern w-*" in lines
    assert (
        "unresolved 2: w-*: what this download keeps depends on a condition stagegate cannot "
        "decide (a removal on one path only); bind what it removes"
    ) in lines


# ------------------------------------------- generated matrices: brace groups, jq -nR, sed addresses

GENERATED = """\
M=$(
  {
    printf '%s\\n' cp39-manylinux_x86_64 cp39-manylinux_aarch64 \\
    | jq -nRc '{"only": inputs, "os": "ubuntu-latest"}' \\
    | sed -e '/aarch64\\|armv7l/s|ubuntu-latest|ubuntu-24.04-arm|' \\
    && echo cp39-macosx_x86_64 \\
    | jq -nRc '{"only": inputs, "os": "macos-latest"}'
  } | jq -sc 'map(. + {"py": (.only | sub("-.+";""))})'
)
gh run download -n "w-$M\""""


def test_a_matrix_generated_in_a_brace_group_inside_a_substitution(read: Read) -> None:
    """The cibuildwheel 2.10 "only" recipe (lxml's wheel matrix): lines made JSON by
    ``jq -nR`` and ``inputs``, a sed address choosing the lines a substitution changes,
    ``&&`` joining pipelines in a ``{ ...; }`` group whose output ``jq -s`` slurps."""
    rows = (
        '[{"only":"cp39-manylinux_x86_64","os":"ubuntu-latest","py":"cp39"},'
        '{"only":"cp39-manylinux_aarch64","os":"ubuntu-24.04-arm","py":"cp39"},'
        '{"only":"cp39-macosx_x86_64","os":"macos-latest","py":"cp39"}]'
    )
    computed(read, GENERATED, f"w-{rows}")


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        # grep's status decides `&&` and `||` (it fails where it selects no line)
        ("$(echo a | grep -v a && echo yes)", ""),
        ("$(echo a | grep -v a || echo no)", "no"),
        ("$({ echo a | grep b; echo c; })", "c"),
        ("$(echo ab | grep -q b && echo yes)", "yes"),
        ("$(echo ab | grep -qv b || echo no)", "no"),
        ("$(printf '%s\\n' x musl y | grep -v musl | tr '\\n' ,)", "x,y,"),
        ("$(echo ab | sed '/b/s/a/c/')", "cb"),
        ("$(printf '%s\\n' 1 2 | jq -sc)", "[1,2]"),
        ("$(printf '%s\\n' a b | jq -Rsc)", '"a\\nb\\n"'),
        ("$(printf '%s\\n' a b | jq -nRc '[inputs]')", '["a","b"]'),
    ],
)
def test_text_tools_in_groups_and_lists(read: Read, expression: str, value: str) -> None:
    """What bash prints for each (checked against bash 5, GNU grep 3.8, sed 4.9, jq 1.6)."""
    computed(read, f'gh run download -n "w-{expression}"', f"w-{value}")


def test_cibuildwheel_identifiers_are_not_guessed_where_no_pin_is_read(read: Read) -> None:
    """drift's reading does not run cibuildwheel: what it prints is unknown, at its line
    (continuity's reading computes it from the job's pin: tests/fixtures/history/200)."""
    lines = read(
        "M=$(cibuildwheel --print-build-identifiers | jq -nRc '[inputs]')\ngh run download -n \"w-$M\""
    )
    assert lines[0].startswith("2: download name w-<")
    (entry,) = [line for line in lines if line.startswith("unresolved 2")]
    assert entry.endswith(
        "$(cibuildwheel --print-build-identifiers | jq -nRc '[inputs]') runs a command"
    )
