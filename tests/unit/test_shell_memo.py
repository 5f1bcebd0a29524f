"""The shell reader's memo (``ci.shell.memo``) is one per process: a reading replays
what another reading of another tree walked only where the walk would do the same.

Each case reads a base tree, then a head tree that differs in one thing a script's
walk depends on (a called script's text, a file ``yq`` reads, where the step is, a
script deleted, the work left), and checks that the head's reading is what a reading
of the head alone gives (the memo forgotten), and not the base's. The control reads
the same tree twice and checks the second reading replays (the memo's counters).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from stagegate.ci import workflows
from stagegate.ci.files import Files
from stagegate.ci.shell import memo
from stagegate.model import Migration

MODEL = """\
version: 1
migration: memo
stage: 0
flags:
  on:
    summary: A flag.
producers:
  wheels:
    artifacts: ["w-*"]
"""

WORKFLOW = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
{before}    steps:
      - run: |
{script}
      - uses: actions/upload-artifact@v4
        with:
          name: ${{{{ env.X }}}}
"""


@pytest.fixture(scope="module")
def migration(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Migration]:
    from stagegate.validation import load

    root = tmp_path_factory.mktemp("model")
    (root / "migration.yaml").write_text(MODEL, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STAGEGATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield load(root / "migration.yaml")


def tree(root: Path, script: str, files: dict[str, str] | None = None, before: str = "") -> Path:
    """A repository whose one job runs ``script``, then uploads ``${{ env.X }}``;
    ``before``: lines of the job before its steps (they move the step down)."""
    (root / ".github" / "workflows").mkdir(parents=True)
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    body = textwrap.indent(textwrap.dedent(script).strip("\n"), " " * 10)
    text = WORKFLOW.format(script=body, before=before)
    (root / ".github" / "workflows" / "ci.yml").write_text(text, encoding="utf-8")
    return root


def seen(migration: Migration, root: Path) -> list[str]:
    """What drift sees in the tree: each transfer and unresolved value, located."""
    reading = workflows.read(migration, 0, Files(root))
    out = [
        f"{t.loc.file}:{t.loc.line}:{t.loc.col}: {t.direction} {t.kind} {t.text()}"
        for t in reading.transfers
    ]
    out += [
        f"{u.loc.file}:{u.loc.line}:{u.loc.col}: unresolved {u.expression}: {u.reason}"
        for u in reading.unresolved
    ]
    return out


def counts() -> tuple[int, int, int, int]:
    """What the memo did so far: readings recalled, remembered; calls alike."""
    r, c = memo.READINGS, memo.CALLS
    return r.recalled, r.remembered, c.recalled, c.remembered


def read_after(migration: Migration, base: Path, head: Path) -> tuple[list[str], list[str]]:
    """The head's reading after the base's (as continuity reads them, the memo shared),
    checked against the head read alone; (the base's, the head's)."""
    memo.forget()
    alone = seen(migration, head)
    memo.forget()
    first = seen(migration, base)
    before = counts()
    second = seen(migration, head)
    assert second == alone
    assert counts()[0] == before[0], "the head replayed the base's reading"
    return first, second


UPLOAD = ".github/workflows/ci.yml:{line}:17: upload name {name}"


def test_a_called_script_whose_text_changed_is_read_again(
    migration: Migration, tmp_path: Path
) -> None:
    script = "./ci/name.sh"
    base = tree(tmp_path / "b", script, {"ci/name.sh": 'echo "X=old" >> "$GITHUB_ENV"\n'})
    head = tree(tmp_path / "h", script, {"ci/name.sh": 'echo "X=new" >> "$GITHUB_ENV"\n'})
    first, second = read_after(migration, base, head)
    assert first == [UPLOAD.format(line=10, name="old")]
    assert second == [UPLOAD.format(line=10, name="new")]


def test_a_called_script_changed_under_another_caller_is_read_again(
    migration: Migration, tmp_path: Path
) -> None:
    """The called script's remembered reading (``memo.CALLS``) is not replayed for
    another text either: the head's step differs from the base's (its reading is not
    replayed), and calls the script alike."""
    files = {"ci/name.sh": 'echo "X=old" >> "$GITHUB_ENV"\n'}
    base = tree(tmp_path / "b", "./ci/name.sh\n: base", files)
    files = {"ci/name.sh": 'echo "X=new" >> "$GITHUB_ENV"\n'}
    head = tree(tmp_path / "h", "./ci/name.sh\n: head", files)
    before = counts()
    first, second = read_after(migration, base, head)
    assert first == [UPLOAD.format(line=11, name="old")]
    assert second == [UPLOAD.format(line=11, name="new")]
    assert counts()[2] == before[2]


def test_a_data_file_yq_reads_changed_is_read_again(migration: Migration, tmp_path: Path) -> None:
    script = """\
        X=$(yq '.name' ci/conf.yml)
        echo "X=$X" >> "$GITHUB_ENV"
    """
    base = tree(tmp_path / "b", script, {"ci/conf.yml": "name: old\n"})
    head = tree(tmp_path / "h", script, {"ci/conf.yml": "name: new\n"})
    first, second = read_after(migration, base, head)
    assert first == [UPLOAD.format(line=11, name="old")]
    assert second == [UPLOAD.format(line=11, name="new")]


def test_a_step_moved_down_is_located_where_it_is_now(migration: Migration, tmp_path: Path) -> None:
    script = """\
        gh run download -n "w-$(nproc)"
        echo "X=$(nproc)" >> "$GITHUB_ENV"
    """
    base = tree(tmp_path / "b", script)
    head = tree(tmp_path / "h", script, before="    env:\n      A: a\n      B: b\n")
    first, second = read_after(migration, base, head)
    reason = "$(nproc) runs a command"
    env = (
        "X is written to $GITHUB_ENV by the script at .github/workflows/ci.yml:{line} from a "
        "value stagegate cannot compute ($(nproc)); bind env.X"
    )
    assert first == [
        ".github/workflows/ci.yml:7:1: download name w-$(nproc)",
        ".github/workflows/ci.yml:11:17: upload name ${{ env.X }}",
        f".github/workflows/ci.yml:7:1: unresolved $(nproc): {reason}",
        f".github/workflows/ci.yml:11:17: unresolved ${{{{ env.X }}}}: {env.format(line=8)}",
    ]
    assert second == [
        ".github/workflows/ci.yml:10:1: download name w-$(nproc)",
        ".github/workflows/ci.yml:14:17: upload name ${{ env.X }}",
        f".github/workflows/ci.yml:10:1: unresolved $(nproc): {reason}",
        f".github/workflows/ci.yml:14:17: unresolved ${{{{ env.X }}}}: {env.format(line=11)}",
    ]


def test_a_script_deleted_at_the_head_is_not_called(migration: Migration, tmp_path: Path) -> None:
    script = """\
        ./ci/name.sh
        echo "Y=1" >> "$GITHUB_ENV"
    """
    base = tree(tmp_path / "b", script, {"ci/name.sh": 'echo "X=old" >> "$GITHUB_ENV"\n'})
    head = tree(tmp_path / "h", script, {"ci/other.sh": "true\n"})
    first, second = read_after(migration, base, head)
    assert first == [UPLOAD.format(line=11, name="old")]
    assert second == [
        UPLOAD.format(line=11, name="${{ env.X }}"),
        ".github/workflows/ci.yml:11:17: unresolved ${{ env.X }}: env.X is set in no env: of "
        "the step, job or workflow (a script stagegate does not read may write it to "
        "$GITHUB_ENV); bind env.X",
    ]


def test_a_replay_takes_the_work_the_walk_took(
    migration: Migration, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading with too little work left for the script stops reading it, whether or
    not another reading walked it to its end."""
    words = " ".join(str(n) for n in range(200))
    script = f'for n in {words}; do A="$n"; done\necho "X=w-$A" >> "$GITHUB_ENV"'
    base = tree(tmp_path / "b", script)
    memo.forget()
    assert seen(migration, base) == [UPLOAD.format(line=11, name="w-199")]
    monkeypatch.setattr(workflows, "MAX_READING", 100)
    before = counts()
    second = seen(migration, base)
    assert counts()[0] == before[0]
    memo.forget()
    assert second == seen(migration, base)
    assert [line.split(": unresolved ")[0] for line in second if "unresolved" in line] == [
        ".github/workflows/ci.yml:7:1",
        ".github/workflows/ci.yml:11:17",
    ]
    assert "for all the scripts" in second[1]


LOOP = 'for n in {words}; do A="$n"; done\n'.format(words=" ".join(map(str, range(100))))
ECHO = 'echo "X=w-$A" >> "$GITHUB_ENV"\n'


@pytest.mark.parametrize(
    ("first", "then", "replayed"),
    [
        # the head's first step is the base's: its reading is replayed
        (LOOP + ECHO, LOOP + ECHO, 0),
        # the head's first step differs, and calls the script the base's calls alike
        ("./ci/loop.sh\n: base\n", "./ci/loop.sh\n: head\n", 2),
    ],
    ids=["reading", "call"],
)
def test_a_replay_is_charged_the_work_of_its_walk(
    migration: Migration,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: str,
    then: str,
    replayed: int,
) -> None:
    """What a replayed reading took is not left to the steps after it: the head's second
    script has the work a reading of the head alone leaves it, which is too little."""
    files = {"ci/loop.sh": LOOP + ECHO}
    base = tree(tmp_path / "b", first, files)
    head = tree(tmp_path / "h", then, files)
    with (head / ".github" / "workflows" / "ci.yml").open("a", encoding="utf-8") as out:
        out.write(f"      - run: |\n          {LOOP}")
        out.write('          echo "Y=$B" >> "$GITHUB_ENV"\n')
    memo.forget()
    seen(migration, head)
    cost = {"Y=" in key[0]: found.cost for key, found in memo.READINGS.readings()}
    monkeypatch.setattr(workflows, "MAX_READING", cost[False] + cost[True] - 1)
    memo.forget()
    alone = seen(migration, head)
    memo.forget()
    seen(migration, base)
    before = counts()
    assert seen(migration, head) == alone
    assert counts()[replayed] == before[replayed] + 1
    up = 9 + then.count("\n")
    assert alone == [
        UPLOAD.format(line=up, name="w-99"),
        f'.github/workflows/ci.yml:{up + 3}:1: unresolved echo "Y=$B" >> "$GITHUB_ENV": '
        f"reading this script takes more than {cost[False] + cost[True] - 1:,} units of work "
        "for all the scripts; stagegate stops reading it here, so what it does from here on "
        "is not known",
    ]


def test_the_same_tree_read_again_replays(migration: Migration, tmp_path: Path) -> None:
    """The control: a second reading of the same files (another ``Files``, another
    folder) replays the script's and the called script's readings."""
    script = """\
        ./ci/name.sh
        gh run download -n w-a
    """
    files = {"ci/name.sh": 'echo "X=one" >> "$GITHUB_ENV"\nX=two\nexport X\n'}
    one = tree(tmp_path / "one", script, files)
    two = tree(tmp_path / "two", script, files)
    memo.forget()
    start = counts()
    first = seen(migration, one)
    walked = counts()
    assert [b - a for a, b in zip(start, walked, strict=True)] == [0, 1, 0, 1]
    assert seen(migration, two) == first
    assert [b - a for a, b in zip(walked, counts(), strict=True)] == [1, 0, 0, 0]
    assert first == [
        ".github/workflows/ci.yml:8:1: download name w-a",
        UPLOAD.format(line=11, name="one"),
    ]


class Answers:
    """A context that answers ``("env", NAME)`` from a mapping (``memo.Inputs.answer``)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def answer(self, question: memo.Question) -> str:
        return self.env[question[1]]


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most MAX_OUTCOMES readings a key (past them the key starts over), MAX_KEYS
    keys and MAX_REMEMBERED readings in all, the least recently used key forgotten."""
    monkeypatch.setattr(memo, "MAX_OUTCOMES", 2)
    monkeypatch.setattr(memo, "MAX_KEYS", 3)
    monkeypatch.setattr(memo, "MAX_REMEMBERED", 4)
    store: memo.Memory[memo.Call] = memo.Memory()

    def call(row: str) -> memo.Call:
        return memo.Call([(("env", "ROW"), row)], [], [], {}, {}, [], False, 1)

    def recall(key: str, row: str) -> memo.Call | None:
        return store.recall((key,), cast(memo.Inputs, Answers({"ROW": row})), 10)

    one, two, three = call("1"), call("2"), call("3")
    store.remember(("a",), one)
    store.remember(("a",), two)
    assert recall("a", "1") is one and recall("a", "2") is two and recall("a", "3") is None
    store.remember(("a",), three)  # a third row: the key starts over
    assert recall("a", "1") is None and recall("a", "3") is three
    for key in "bcd":
        store.remember((key,), call("1"))
    assert sorted(k for (k,), _item in store.readings()) == ["b", "c", "d"]
    assert recall("b", "1") is not None  # b is used: c is the least recently used
    store.remember(("b",), call("2"))
    store.remember(("d",), call("2"))
    assert store.size == 4
    assert sorted(k for (k,), _item in store.readings()) == ["b", "b", "d", "d"]
    assert recall("b", "1") is not None and recall("c", "1") is None


def test_a_bind_another_model_lacks_is_not_replayed(
    migration: Migration, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A variable no bind names is not a question (its answer is the same everywhere),
    so the paths the binds name are in the key: the same tree read with a model that
    binds ``env.N`` for the file (over the script's own value) is walked again, not
    replayed from the reading of a model without that bind."""
    from stagegate.validation import load

    root = tmp_path_factory.mktemp("bound")
    text = MODEL + 'workflows:\n  bind:\n    ".github/workflows/ci.yml env.N": bound\n'
    (root / "migration.yaml").write_text(text, encoding="utf-8")
    bound = load(root / "migration.yaml")
    script = """\
        N=plain
        echo "X=w-$N" >> "$GITHUB_ENV"
        ./ci/name.sh
    """
    files = {"ci/name.sh": 'N=inner\necho "Y=w-$N" >> "$GITHUB_ENV"\n'}
    one = tree(tmp_path / "one", script, files)
    memo.forget()
    alone = seen(bound, one)
    memo.forget()
    assert seen(migration, one) == [UPLOAD.format(line=12, name="w-plain")]
    walked = counts()
    assert seen(bound, one) == alone == [UPLOAD.format(line=12, name="w-bound")]
    assert counts()[0] == walked[0], "the bound model replayed the unbound model's reading"
