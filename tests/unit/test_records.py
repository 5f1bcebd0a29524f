"""records.record: the one record style, frozen and slotted like a frozen dataclass."""

from __future__ import annotations

import pickle

import pytest

from stagegate.records import FrozenInstanceError, field, record, replace


@record(kw_only=True)
class Base:
    id: str
    summary: str = ""
    kind: str


@record(kw_only=True)
class Child(Base):
    extra: int = 0
    kind: str = "child"


@record(kw_only=True, eq=False)
class Identity(Base):
    kind: str = "identity"


@record(order=True)
class Point:
    x: int
    y: int
    note: str = field(default="", compare=False)


@record
class Shown:
    text: str

    def __repr__(self) -> str:
        return f"<shown {self.text}>"


def test_a_record_extends_a_record_base_fields_first() -> None:
    child = Child(id="a")
    assert child == Child(id="a", summary="", kind="child", extra=0)
    assert hash(child) == hash(Child(id="a"))
    assert repr(child) == "Child(id='a', summary='', kind='child', extra=0)"
    assert isinstance(child, Base) and not hasattr(child, "__dict__")
    assert Child(id="a") != Base(id="a", kind="child")  # another class is never equal


def test_eq_false_compares_by_identity_even_below_a_comparing_base() -> None:
    one = Identity(id="a")
    assert one == one and one != Identity(id="a")
    assert len({one, Identity(id="a")}) == 2


def test_order_and_fields_left_out_of_comparison() -> None:
    assert Point(1, 2, "x") == Point(1, 2, "y")
    assert sorted([Point(2, 0), Point(1, 5), Point(1, 2)]) == [
        Point(1, 2),
        Point(1, 5),
        Point(2, 0),
    ]
    assert Point(1, 2) <= Point(1, 2) < Point(1, 3)


def test_frozen_replace_pickle_and_a_repr_of_its_own() -> None:
    point = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    assert replace(point, y=5) == Point(1, 5)
    assert replace(Child(id="a"), extra=2).extra == 2
    assert pickle.loads(pickle.dumps(Child(id="a", extra=3))) == Child(id="a", extra=3)
    assert repr(Shown("x")) == "<shown x>"


def test_construction_errors_name_the_field() -> None:
    with pytest.raises(TypeError, match="missing field 'kind'"):
        Base(id="a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unknown fields"):
        Point(1, 2, nope=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 3 fields"):
        Point(1, 2, "", 4)  # type: ignore[call-arg]


def test_a_record_built_often_gets_a_written_init_that_behaves_the_same() -> None:
    """Past ``COMPILE_AFTER`` constructions a type's ``__init__`` is written for its
    fields: values, defaults, factories, a subclass's own fields and every error are
    what the closure gives."""
    from stagegate import records

    @record
    class Hot:
        name: str
        size: int = 3
        tags: list[str] = field(default_factory=list)

    @record
    class Hotter(Hot):
        extra: str = "x"

    closure = Hot.__init__
    for _ in range(records.COMPILE_AFTER):
        Hot("a")
    assert Hot.__init__ is not closure
    assert repr(Hot("a")) == "Hot(name='a', size=3, tags=[])"
    assert Hot("a").tags is not Hot("a").tags
    assert Hot(size=4, name="b", tags=["t"]) == Hot("b", 4, ["t"])
    assert Hotter("c", extra="y") == Hotter("c", 3, [], "y")  # its own init, not Hot's
    with pytest.raises(TypeError, match=r"^Hot\(\) missing field 'name'$"):
        Hot(size=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^Hot\(\) got unknown fields \['nope'\]$"):
        Hot("a", nope=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^Hot\(\) takes 3 fields, got 4$"):
        Hot("a", 1, [], 2)  # type: ignore[call-arg]
    with pytest.raises(FrozenInstanceError):
        Hot("a").size = 2  # type: ignore[misc]


def test_a_record_of_no_fields_built_often_stays_one() -> None:
    from stagegate import records

    @record
    class Mark:
        pass

    for _ in range(records.COMPILE_AFTER + 1):
        assert Mark() == Mark()
    with pytest.raises(TypeError, match=r"^Mark\(\) takes 0 fields, got 1$"):
        Mark(1)  # type: ignore[call-arg]
