"""The shortcuts that make `affected` fast on large migrations give the answers of the
general way, where they apply and where they must step aside (each case has its control:
a case the shortcut does not take, or an answer that differs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result
from scratch import dedent, init, pin_git
from stagegate.engine.affected import _Names, _Planner, _ships_whole
from stagegate.engine.match import release_selection
from stagegate.engine.resolve import resolve
from stagegate.model import Migration
from stagegate.validation import load

Sg = Callable[..., Result]


TEMPLATES = """
    version: 1
    migration: shortcuts
    stage: 0
    axes:
      py: ["311", "312"]
      sha: {pattern: "[0-9a-f]{4}"}
      never: {pattern: "[^\\\\s\\\\S]"}
    producers:
      plain:
        artifacts: ["plain-py{py}"]
      dotted:
        artifacts: ["a.b+c-py{py}-{sha}"]
      late:
        artifacts: ["late-{sha}-py{py}"]
      first:
        artifacts: ["{sha}-first-py{py}"]
      narrow:
        axes: {py: ["312"]}
        artifacts: ["narrow-py{py}-{sha}"]
      empty:
        artifacts: ["empty-{never}"]
      pk:
        artifacts: ["pk{py}"]
      other:
        artifacts: ["zz-py{py}"]
    consumers:
      c:
        inputs:
          - {select: "plain-py{py}", from: [plain], run: baseline}
          - {select: "a.b+c-py{py}-{sha}", from: [dotted], run: baseline}
          - {select: "late-{sha}-py{py}", from: [late], run: baseline}
          - {select: "{sha}-first-py{py}", from: [first], run: baseline}
          - {select: "narrow-py{py}-{sha}", from: [narrow], run: baseline}
          - {select: "late-*-py{py}", from: [late], run: baseline}
    releases:
      prefix:
        tags: ["a*"]
        select: ["pk3*"]
      every:
        tags: ["b*"]
        select: ["*"]
      two:
        tags: ["c*"]
        select: ["zz*", "late-*"]
      class:
        tags: ["d*"]
        select: ["p[lk]*"]
      excluding:
        tags: ["e*"]
        select: ["pl*"]
        exclude: ["plain-py311"]
      exact:
        tags: ["f*"]
        select: ["plain-py311"]
    """

BASELINES = {
    "every row": [
        "plain-py311", "plain-py312", "a.b+c-py311-00af", "a.b+c-py312-beef",
        "late-0000-py311", "late-1234-py312", "0a0a-first-py311", "ffff-first-py312",
        "narrow-py312-abcd",
    ],
    "names a regex would also take for others": [
        "plain-py311", "plain-py312", "aXb+c-py311-00af", "a.bbc-py312-beef",
        "late-0000-py311", "late-1234-py313", "0a0a-first-py311", "ffff-first-py312x",
        "narrow-py311-abcd", "narrow-py312-ABCD",
    ],
    "none": [],
}  # fmt: skip


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Migration:
    root = tmp_path_factory.mktemp("shortcuts")
    (root / "stages").mkdir()
    (root / "migration.yaml").write_text(dedent(TEMPLATES), encoding="utf-8")
    return load(root / "migration.yaml")


@pytest.mark.parametrize("baseline", sorted(BASELINES))
def test_baseline_rows_read_from_the_template_are_the_rows_matched_one_by_one(
    templates: Migration, baseline: str
) -> None:
    """``missing`` reads a whole producer's rows from its template (``_Names.lacks``): the
    same first missing row as making the rows and asking for each (``_Names.has``), for
    literals with regex characters, a finite axis after an open one, an open axis first,
    axes narrowed by the producer. The control: a select with a glob character is not
    a whole producer and goes row by row."""
    migration = templates
    plan = resolve(migration, 0)
    planner = _Planner(plan, ())
    names = _Names(BASELINES[baseline])
    whole = found = 0
    for item in migration.consumers["c"].inputs:
        for pid in planner.sources(item):
            expected = next((r for r in planner.rows_from(item, pid) if not names.has(r)), None)
            assert planner.missing(item, pid, names) == expected, (item.select.text, pid)
            whole += planner._whole(item) is not None
            found += expected is not None
    assert whole == 5  # every input but the one with a glob character
    assert (
        found
        == {"every row": 0, "names a regex would also take for others": 5, "none": 6}[baseline]
    )


def test_a_release_of_plain_prefix_selects_is_decided_on_templates_as_on_rows(
    templates: Migration,
) -> None:
    """``_ships_whole`` answers what ``release_selection`` answers on the producer's rows,
    for a template that starts with the select's text, one that differs from it, one
    whose rows have no name (an open axis whose regex matches nothing). It steps
    aside (None) for a placeholder within the text, a glob character, an exclude and a
    select without ``*``."""
    migration = templates
    plan = resolve(migration, 0)
    answers: dict[tuple[str, str], bool | None] = {}
    for release in plan.releases:
        for producer in plan.producers:
            rows = plan.rows(producer)
            picked = bool(release_selection(release, rows)) if rows else False
            ships = _ships_whole(migration, release, producer)
            if ships is not None:
                assert ships == picked, (release.id, producer.id)
            answers[release.id, producer.id] = ships
    assert answers["prefix", "pk"] is None  # "pk{py}": a placeholder inside "pk3*"'s text
    assert answers["prefix", "plain"] is False and answers["prefix", "other"] is False
    assert answers["every", "plain"] is True and answers["every", "first"] is True
    assert answers["every", "empty"] is False
    assert answers["two", "late"] is True and answers["two", "other"] is True
    assert answers["two", "dotted"] is False
    for release in ("class", "excluding", "exact"):
        assert {answers[release, p.id] for p in plan.producers} == {None}


CRISS_CROSS = """
    version: 1
    migration: merges
    stage: 0
    producers:
      lib:
        artifacts: ["lib"]
        paths: ["lib/**"]
    consumers: {}
    """


def test_the_merge_base_asked_with_the_refs_is_the_one_git_merge_base_names(
    tmp_path: Path, sg: Sg, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`affected` reads the merge base from ``rev-parse BASE...HEAD`` with the refs: with
    two merge bases (a criss-cross merge) it is the one ``git merge-base`` prints; the
    control, a base with no common history, still says so (exit 3)."""
    pin_git(monkeypatch)
    repo = init(tmp_path / "repo")
    (repo.root / "stages").mkdir()
    repo.write("migration.yaml", dedent(CRISS_CROSS))
    repo.write("lib/a.py", "a = 0\n")
    repo.commit("start")
    repo.git("checkout", "-q", "-b", "other")
    repo.write("lib/b.py", "b = 1\n")
    b1 = repo.commit("other 1")
    repo.git("checkout", "-q", "main")
    repo.write("lib/c.py", "c = 1\n")
    m1 = repo.commit("main 1")
    repo.git("merge", "-q", "--no-ff", "--no-edit", b1)
    repo.git("checkout", "-q", "other")
    repo.git("merge", "-q", "--no-ff", "--no-edit", m1)
    repo.write("lib/d.py", "d = 1\n")
    repo.commit("other 2")
    repo.git("checkout", "-q", "main")
    repo.write("lib/e.py", "e = 1\n")
    repo.commit("main 2")
    every = repo.git("merge-base", "--all", "main", "other").split()
    assert len(every) == 2  # the criss-cross: two best common ancestors
    first = repo.git("merge-base", "main", "other").strip()
    result = sg("affected", "--base", "other", "--head", "main", cwd=repo.root)
    assert result.code == 0, result.output
    assert result.out.splitlines()[1].startswith(f"change: {first[:12]} (merge base) .. ")
    repo.git("checkout", "-q", "--orphan", "alone")
    repo.commit("unrelated")
    result = sg("affected", "--base", "main", "--head", "alone", cwd=repo.root)
    assert result.code == 3
    assert "share no history" in result.err


def test_links_are_read_from_the_start_of_ls_tree_entries_only() -> None:
    """The symbolic links of a tree are found by a byte search of ``git ls-tree -r -z``:
    a file named like a link entry is not one (its name follows a tab, not an entry's
    start); the link itself, first, in the middle or last without a final NUL, is."""
    from stagegate.git.changes import _link_entries

    file = b"100644 blob 1111\t120000 blob 2222\0"
    link = b"120000 blob 3333\tpkg/link\0"
    assert _link_entries(file) == []
    assert _link_entries(link + file + link) == [("pkg/link", "3333"), ("pkg/link", "3333")]
    assert _link_entries(file + b"120000 blob 4444\tlast") == [("last", "4444")]
