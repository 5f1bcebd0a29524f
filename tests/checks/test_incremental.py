"""check --all shares answers across stages and checks (``match.Evaluation``); each must
be the answer a stage's own search gives, in the same order (attacks on issue 17's work).

The oracle is the plain engine: ``match.selected`` over the stage's own ``match.index``
of active rows, ``match.release_selection`` over its run, and unique-artifacts' full
search of the stage's rows; the subjects are the shared answers after every stage has
been evaluated in one process, in order and out of order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import CASES, REPO
from stagegate.checks import runner, unique_artifacts
from stagegate.checks.base import Context
from stagegate.engine import match, resolve
from stagegate.engine.match import evaluation, index, input_selectors, release_selection, selected
from stagegate.errors import Loc
from stagegate.model import Check, Migration
from stagegate.validation import load

sys.path.insert(0, str(REPO / "bench"))
import synth

ROOT = REPO


def _synthetic(tmp_path: Path, producers: int, stages: int) -> Path:
    return synth.write(tmp_path / f"n{producers}-s{stages}", producers, stages, faults=True)


def _files(tmp_path: Path) -> list[Path]:
    """The example, the stories and one synthetic migration with faults. 31 producers
    over 11 stages hold every shape synth makes: a lone producer (an odd count), every
    fault (families 1, 3, 5, 6 and 11, where an old producer in another run is the only
    ``from``), flags flipped on, off and on again (3 flips a stage over 15 families),
    and tags-routed (stage 10); a larger size repeats these shapes."""
    stories = sorted(CASES.glob("stories/*/*/migration.yaml"))
    return [ROOT / "migration.yaml", *stories, _synthetic(tmp_path, 31, 11)]


def _oracle_selections(plan: resolve.Plan, item: object, only_from: bool) -> list[object]:
    assert isinstance(item, type(next(iter(plan.migration.consumers.values())).inputs[0]))
    pool = index(plan, match.input_runs(plan, item))
    allowed = set(item.from_) if only_from and item.from_ is not None else None
    out = []
    excluded = match.input_excludes(item)
    for selector in input_selectors(plan.migration, item):
        rows = selected(selector, pool, excluded)
        out.append(
            (
                selector.assignment,
                rows if allowed is None else [r for r in rows if r.producer in allowed],
            )
        )
    return out


def _stages(migration: Migration) -> list[int]:
    """Every stage, forwards, then backwards (answers made later are reused earlier)."""
    forwards = list(range(migration.last + 1))
    return forwards + forwards[::-1]


def test_shared_selections_are_each_stages_own(tmp_path: Path) -> None:
    for file in _files(tmp_path):
        migration = load(file)
        oracle: dict[tuple[int, str, int, bool], list[object]] = {}  # a stage's own answer
        for stage in _stages(migration):  # computed once, asked on both passes
            plan = resolve.resolve(migration, stage)
            for consumer in migration.consumers.values():
                for n, item in enumerate(consumer.inputs):
                    for only_from in (False, True):
                        shared = match.selections(plan, item, only_from=only_from)
                        key = (stage, consumer.id, n, only_from)
                        if key not in oracle:
                            oracle[key] = _oracle_selections(plan, item, only_from)
                        assert [(s.assignment, rows) for s, rows in shared] == oracle[key], (
                            file,
                            stage,
                            consumer.id,
                            item.select.text,
                        )


def test_shared_release_selections_are_each_stages_own(tmp_path: Path) -> None:
    for file in _files(tmp_path):
        migration = load(file)
        ev = evaluation(migration)
        for stage in _stages(migration):
            plan = resolve.resolve(migration, stage)
            for release in migration.releases.values():
                pool = index(plan, frozenset({release.run}))
                assert ev.release_rows(release, stage).rows == release_selection(release, pool)
            for tag in ("v13.4.2", "v12.9.8", "pkg0-v1.0", "pkg3-v1.0", "v0"):
                expected = [r for r in plan.releases if any(_claims(t, tag) for t in r.tags)]
                assert ev.claimants(tag, stage) == expected


def _claims(glob: str, tag: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(tag, glob)


CHECK = Check(kind="unique-artifacts", loc=Loc("migration.yaml", 1, 1))


def test_unique_artifacts_verdict_is_the_full_searchs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for file in _files(tmp_path):
        migration = load(file)
        full: dict[int, bool] = {}  # the full search's verdict: once a stage, asked twice
        for stage in _stages(migration):
            ctx = Context(migration, stage, file.parent)
            fast = unique_artifacts.ev_clean(ctx)
            if stage not in full:
                with monkeypatch.context() as patched:
                    patched.setattr(unique_artifacts, "ev_clean", lambda ctx: False)
                    (searched,) = unique_artifacts.run(ctx, CHECK)
                full[stage] = searched.ok
            assert fast == full[stage], (file, stage)


def test_check_all_equals_each_stage_checked_alone(tmp_path: Path) -> None:
    """One process for every stage (shared answers) gives what a fresh load gives per stage
    (held as check --all holds it: readiness ahead, past repository checks not run)."""
    for file in _files(tmp_path)[1:]:  # the example's pytest checks run in test_example
        together = runner.run_all(load(file))
        alone = [
            result
            for stage in range(load(file).last + 1)
            for result in runner.run_checks(load(file), stage, every=True)
        ]
        assert together == alone, file
