"""The schema's answers kept per document (``load.schema._ANSWERS``) are never stale.

A document validated before is answered from the memo; any change of what the answer
reads (one byte of the file, the file's name, the schema's check kinds) is validated
afresh. Each attack pairs a memo answer with the answer a fresh validation gives."""

from __future__ import annotations

from typing import Any

import pytest

from stagegate.load import schema as schemas
from stagegate.load import yamlsrc
from stagegate.load.rules import Rules
from stagegate.validation import RULES

STAGE = b"stage: 1\ntitle: Build\nacceptance:\n  - check: unique-artifacts\n"


def _answer(raw: bytes, file: str = "stages/01-build.yaml", rules: Rules = RULES) -> Any:
    problems, valid = schemas.schema_problems("stage", yamlsrc.read(raw, file), rules)
    return [(str(p.loc), p.message, p.path) for p in problems], valid


def _fresh(raw: bytes, file: str = "stages/01-build.yaml", rules: Rules = RULES) -> Any:
    saved = dict(schemas._ANSWERS)
    schemas._ANSWERS.clear()
    try:
        return _answer(raw, file, rules)
    finally:
        schemas._ANSWERS.clear()
        schemas._ANSWERS.update(saved)


@pytest.fixture(autouse=True)
def _own_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "_ANSWERS", {})


def test_the_same_document_is_answered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    validated = []
    real = schemas.validator_class

    def counting() -> Any:
        validated.append(1)
        return real()

    monkeypatch.setattr(schemas, "validator_class", counting)
    assert _answer(STAGE) == ([], True)  # the control: a valid file
    assert _answer(STAGE) == ([], True)
    assert len(validated) == 1


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a value of another type, written in one byte more or less
        (b"stage: 1\n", b'stage: "1"\n', ("stages/01-build.yaml:1:8", "$.stage")),
        (b"stage: 1\n", b"stage: 1.0\n", ("stages/01-build.yaml:1:8", "$.stage")),
        (b"stage: 1\n", b"stage: y\n", ("stages/01-build.yaml:1:8", "$.stage")),
        # the same problem one column further: the place is the answer's too
        (b"title: Build\n", b"title:  [1]\n", ("stages/01-build.yaml:2:9", "$.title")),
        (b"title: Build\n", b"title: [1]\n", ("stages/01-build.yaml:2:8", "$.title")),
        (b"check: unique-artifacts", b"check: unique-artifactz", None),
    ],
)
def test_one_byte_changed_is_validated_afresh(
    old: bytes, new: bytes, expected: tuple[str, str] | None
) -> None:
    assert _answer(STAGE) == ([], True)
    changed = STAGE.replace(old, new)
    assert changed != STAGE
    problems, valid = _answer(changed)
    assert (problems, valid) == _fresh(changed)
    assert not valid and problems
    if expected is not None:
        assert (problems[0][0], problems[0][2]) == expected
    assert _answer(STAGE) == ([], True)  # and the first answer still stands


def test_the_same_data_elsewhere_in_the_file_is_answered_at_its_place() -> None:
    """Equal data, one column or one line further: the answer's places follow the bytes."""
    places = []
    for title in (b"title: [1]\n", b"title:  [1]\n", b"title:\n  [1]\n", b"title: [1]\n"):
        raw = STAGE.replace(b"title: Build\n", title)
        problems, valid = _answer(raw)
        assert (problems, valid) == _fresh(raw)
        places.append(problems[0][0])
    assert places == [
        "stages/01-build.yaml:2:8",
        "stages/01-build.yaml:2:9",
        "stages/01-build.yaml:3:3",
        "stages/01-build.yaml:2:8",
    ]


def test_the_file_name_is_part_of_the_answer() -> None:
    raw = STAGE.replace(b"stage: 1\n", b'stage: "1"\n')
    first = _answer(raw, "stages/01-build.yaml")
    second = _answer(raw, "other/01-build.yaml")
    assert first[0][0][0] == "stages/01-build.yaml:1:8"
    assert second[0][0][0] == "other/01-build.yaml:1:8"
    assert second == _fresh(raw, "other/01-build.yaml")


def test_the_schema_is_part_of_the_answer() -> None:
    """Rules with other check kinds: the same document is validated against them."""
    only: dict[str, Any] = {"type": "object", "properties": {"check": {"const": "pytest"}}}
    other = Rules(check_schema=lambda: only)
    assert _answer(STAGE) == ([], True)
    problems, valid = _answer(STAGE, rules=other)
    assert not valid
    assert problems == _fresh(STAGE, rules=other)[0]
    assert problems[0][0] == "stages/01-build.yaml:4:12"
    assert "pytest" in problems[0][1]


def test_the_memo_is_bounded() -> None:
    for n in range(schemas.ANSWERS_KEPT + 10):
        _answer(STAGE.replace(b"Build", b"Build %d" % n))
    assert len(schemas._ANSWERS) == schemas.ANSWERS_KEPT
