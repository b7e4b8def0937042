"""`@frozen` behaves as `@dataclass(frozen=True, slots=True)` in everything deftly relies on:
construction and defaults, equality, hashing, repr, the refusal to assign, `replace`,
`fields`, `asdict`, pickling, subclasses either way, and the errors for a bad class."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deftly.contract.records import frozen


@frozen
class Fast:
    """A record made by the fast path."""

    name: str
    size: int | None = None
    tags: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Standard:
    """Its twin, made by the standard decorator."""

    name: str
    size: int | None = None
    tags: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list, compare=False, repr=False)


values = st.tuples(
    st.text(max_size=8),
    st.none() | st.integers(),
    st.lists(st.text(max_size=3), max_size=3).map(tuple),
)


@given(values, values)
def test_equality_hash_and_repr_match_the_standard_decorator(
    a: tuple[Any, ...], b: tuple[Any, ...]
) -> None:
    fast_a, fast_b = Fast(*a), Fast(*b)
    std_a, std_b = Standard(*a), Standard(*b)
    assert (fast_a == fast_b) is (std_a == std_b)
    if fast_a == fast_b:
        assert hash(fast_a) == hash(fast_b)
    assert repr(fast_a).replace("Fast", "Standard", 1) == repr(std_a)
    assert dataclasses.astuple(fast_a) == dataclasses.astuple(std_a)


def test_a_field_outside_comparison_is_ignored_and_each_default_factory_is_fresh() -> None:
    one, two = Fast("x", notes=["a"]), Fast("x")
    assert one == two and hash(one) == hash(two)
    assert Fast("y").notes is not Fast("y").notes
    assert Fast("x") != Standard("x") and Fast("x") != ("x", None, ())


def test_fields_cannot_be_assigned_or_deleted() -> None:
    record = Fast("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = "y"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del record.name  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.other = 1  # type: ignore[attr-defined]
    assert record.name == "x" and not hasattr(record, "__dict__")


def test_the_standard_helpers_see_a_frozen_dataclass() -> None:
    record = Fast("x", 3, ("t",))
    assert dataclasses.is_dataclass(record)
    assert [f.name for f in dataclasses.fields(record)] == ["name", "size", "tags", "notes"]
    assert dataclasses.replace(record, size=4) == Fast("x", 4, ("t",))
    assert dataclasses.asdict(record) == {"name": "x", "size": 3, "tags": ("t",), "notes": []}
    assert Fast.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert Fast.__match_args__ == ("name", "size", "tags", "notes")
    assert Fast.__init__.__qualname__ == "Fast.__init__"


def test_pickling_and_copying_keep_every_field() -> None:
    record = Fast("x", 3, ("t",), ["n"])
    for again in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
        assert again == record and again.notes == ["n"]


def test_arguments_are_checked_as_the_standard_init_checks_them() -> None:
    with pytest.raises(TypeError):
        Fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast("x", 1, (), [], "extra")  # type: ignore[call-arg]
    assert Fast(name="x", tags=("a",)) == Fast("x", None, ("a",))


def test_post_init_runs() -> None:
    @frozen
    class Checked:
        size: int

        def __post_init__(self) -> None:
            if self.size < 0:
                raise ValueError("negative")

    assert Checked(1).size == 1
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_subclasses_either_way() -> None:
    @frozen
    class Child(Fast):
        extra: int = 0

    @dataclass(frozen=True, slots=True)
    class StandardChild(Fast):
        extra: int = 0

    for cls in (Child, StandardChild):
        record = cls("x", extra=2)
        assert record.extra == 2 and record.name == "x"
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.extra = 3  # type: ignore[misc]
        assert record != cls("x", extra=3)


def test_a_class_of_its_own_keeps_its_methods() -> None:
    @frozen
    class Shown:
        value: int

        def __repr__(self) -> str:
            return "shown"

    assert repr(Shown(1)) == "shown" and Shown(1) == Shown(1)


def test_a_field_without_a_default_after_one_with_is_refused_as_usual() -> None:
    with pytest.raises(TypeError, match="non-default argument"):

        @frozen
        class Wrong:
            first: int = 0
            second: int  # type: ignore[misc]


def test_what_the_fast_path_does_not_cover_goes_to_the_standard_decorator() -> None:
    @frozen
    class Keyed:
        name: str
        size: int = field(default=0, kw_only=True)

    assert Keyed("x", size=2).size == 2
    with pytest.raises(TypeError):
        Keyed("x", 2)  # type: ignore[misc]
    assert "__deftly_record__" not in Keyed.__dict__
    assert "__deftly_record__" in Fast.__dict__
