"""Property: any sequence of set/update on random JSON-able models round-trips through the
files — a store that starts fresh from a copy of the state directory (all a new process
has) reads exactly what was last written to each key."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, create_model

from deftly.session import StateStore


class Inner(BaseModel):
    label: str = ""
    weight: float = 0.0


TEXT = st.text(max_size=20)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
FIELD_KINDS: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (int, st.integers()),
    (str, TEXT),
    (bool, st.booleans()),
    (float, FINITE),
    (list[int], st.lists(st.integers(), max_size=5)),
    (dict[str, str], st.dictionaries(TEXT, TEXT, max_size=4)),
    (int | None, st.none() | st.integers()),
    (Inner, st.builds(Inner, label=TEXT, weight=FINITE)),
    (list[Inner], st.lists(st.builds(Inner, label=TEXT, weight=FINITE), max_size=3)),
]


@st.composite
def random_model(draw: st.DrawFn, name: str) -> tuple[type[BaseModel], list[Any]]:
    """A model with 1–5 fields of random kinds and random defaults, and the strategies
    of its fields' values."""
    kinds = draw(st.lists(st.sampled_from(range(len(FIELD_KINDS))), min_size=1, max_size=5))
    fields: dict[str, Any] = {}
    values = []
    for index, kind in enumerate(kinds):
        annotation, strategy = FIELD_KINDS[kind]
        fields[f"field_{index}"] = (annotation, draw(strategy))
        values.append(strategy)
    model = create_model(name, **fields)
    return model, values


@st.composite
def scenario(draw: st.DrawFn) -> list[tuple[str, type[BaseModel], list[tuple[str, Any]]]]:
    """1–3 keys, each with its own model and a sequence of ("set"|"update", values)."""
    keys = draw(
        st.lists(
            st.sampled_from(["plan", "todo", "cron.jobs", "approvals"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    out = []
    for key in keys:
        model, strategies = draw(random_model(key.replace(".", "_").title()))
        ops = []
        for _ in range(draw(st.integers(min_value=1, max_value=6))):
            kind = draw(st.sampled_from(["set", "update"]))
            values = {f"field_{index}": draw(strategy) for index, strategy in enumerate(strategies)}
            if kind == "update":
                keep = draw(st.sets(st.sampled_from(sorted(values))))
                values = {name: value for name, value in values.items() if name in keep}
            ops.append((kind, values))
        out.append((key, model, ops))
    return out


@settings(max_examples=60, deadline=None)
@given(scenario())
def test_what_was_written_is_what_a_new_process_reads(
    plan: list[tuple[str, type[BaseModel], list[tuple[str, Any]]]],
) -> None:
    with tempfile.TemporaryDirectory() as temp:
        here, copy = Path(temp) / "here", Path(temp) / "copy"
        here.mkdir()
        store = StateStore(here)
        expected: dict[str, BaseModel] = {}
        for key, model, ops in plan:
            slot = store.slot(key, model)
            for kind, values in ops:
                if kind == "set":
                    slot.set(model(**values))
                else:
                    slot.update(lambda current, values=values: current.model_copy(update=values))
            expected[key] = slot.get()
        shutil.copytree(here, copy)  # only the files cross to a new process
        fresh = StateStore(copy)
        for key, model, _ in plan:
            slot = fresh.slot(key, model)
            assert slot.get() == expected[key]
            assert slot.problem is None
