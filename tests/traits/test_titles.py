"""Every tool has a title for people (MCP `title`): the built-in tools their own, any other
tool one made of its name by `tool_title()`; `deftly tools --json` carries them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from deftly import Runtime
from deftly.contract.tool import BaseTool, tool_title
from deftly.features import BUILTIN_FEATURES
from tests.helpers import EchoTool


def test_every_tool_of_every_builtin_feature_has_its_own_title() -> None:
    seen = 0
    for feature in BUILTIN_FEATURES:
        for contribution in feature.contributions:
            factory = contribution.factory
            assert isinstance(factory, type) and issubclass(factory, BaseTool), contribution
            title = factory.title
            assert isinstance(title, str) and title.strip(), f"{factory.__name__} has no title"
            assert title == title.strip() and "\n" not in title
            assert title != factory.name, f"{factory.name}'s title only repeats its name"
            seen += 1
    assert seen >= 25  # every feature was looked at, not an empty list


def test_titles_are_distinct_among_the_builtin_tools() -> None:
    titles = [c.factory.title for f in BUILTIN_FEATURES for c in f.contributions]  # type: ignore[attr-defined]
    assert len(titles) == len(set(titles))


class _NoTitle(EchoTool):
    name = "TaskOutputPeek"


class _Titled(EchoTool):
    name = "Peek"
    title = "Peek at something"


def test_tool_title_derives_one_from_the_name_when_unset() -> None:
    assert tool_title(_NoTitle()) == "Task output peek"
    assert tool_title(_Titled()) == "Peek at something"


class _Named(EchoTool):
    pass


@given(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,30}(__[A-Za-z][A-Za-z0-9_]{0,20})?", fullmatch=True))
def test_any_other_tool_gets_a_non_empty_title(name: str) -> None:
    tool = _Named()
    tool.name = name
    title = tool_title(tool)
    assert title and title.strip() == title
    assert title[0] == title[0].upper()


async def test_the_runtime_lists_each_offered_tool_with_its_title(workspace: Path) -> None:
    async with Runtime(workspace, config={}, plugins=False, approve_asks=True) as rt:
        infos = rt.tools()
    assert infos
    by_class = {c.factory.name: c.factory.title for f in BUILTIN_FEATURES for c in f.contributions}  # type: ignore[attr-defined]
    for info in infos:
        assert info.title, info.name
        assert info.to_json()["title"] == info.title
        if info.name in by_class:
            assert info.title == by_class[info.name]
