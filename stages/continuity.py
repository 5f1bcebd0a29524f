"""The continuity contract every stage keeps: the CUDA 13 release ships what it shipped.

Each stage's test module imports the two tests below, so pytest runs them (and keeps
their snapshots) in that stage's folder, evaluated at that stage.
"""

from __future__ import annotations

from pytest_snapshot.plugin import Snapshot

from stagegate.testing import StageUnderTest

TAG = "v13.4.2"


def kinds(stage: StageUnderTest) -> dict[tuple[str, str], str]:
    """(producer, artifact name) -> the kind of its template, for the active producers."""
    plan = stage.plan
    return {
        (row.producer, row.name): row.template.kind
        for producer in plan.producers
        for row in plan.rows(producer)
    }


def release_text(stage: StageUnderTest, tag: str) -> str:
    """The committed continuity contract: the release path, the kinds it takes, and every
    name it downloads with its producer and kind."""
    release = stage.plan.migration.releases[stage.release(tag)]
    taken = ", ".join(release.kinds) if release.kinds is not None else "any"
    lines = [f"{tag} at stage {stage.stage}: release {release.id} (kinds: {taken})"]
    kind = kinds(stage)
    for producer, names in stage.release_sources(tag).items():
        lines += [f"  {name}  (producer {producer}, {kind[producer, name]})" for name in names]
    return "\n".join(lines) + "\n"


def released(names: list[str]) -> list[str]:
    """What ci/tools/download-wheels keeps: no `-tests` folder, no pre-release Python."""
    return sorted(n for n in names if not n.endswith("-tests") and "python315" not in n)


def cuda13_wheels(stage: StageUnderTest) -> list[str]:
    return released(stage.rows("bindings-cu13"))


def test_cuda13_release_selection_is_pinned(stage: StageUnderTest, snapshot: Snapshot) -> None:
    snapshot.assert_match(release_text(stage, TAG), "cuda13-release.txt")
    assert stage.release_sources(TAG) == {"bindings-cu13": cuda13_wheels(stage)}
    # Wheels only, as download-wheels moves only *.whl files.
    kind = kinds(stage)
    assert {kind["bindings-cu13", name] for name in cuda13_wheels(stage)} == {"wheel"}
    assert stage.plan.migration.releases[stage.release(TAG)].kinds == ("wheel",)


def test_cuda13_release_fits_runs_of_every_earlier_stage(stage: StageUnderTest) -> None:
    # release.yml runs today's download-wheels (tooling: control) on the tag's run,
    # whichever stage built it.
    for built_at in range(stage.stage + 1):
        assert stage.release_selects(TAG, built_at=built_at) == cuda13_wheels(stage), built_at
