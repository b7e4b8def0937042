"""Qualified MCP tool names (reference acceptance cases 15-17, plus properties)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.features.mcp.naming import is_mcp_tool_name, qualify, sanitize_part, stable_hash8


def test_sanitize_replaces_unsafe_characters_and_collapses_underscores() -> None:
    assert sanitize_part("My Search/Tool!") == "My_Search_Tool_"
    assert sanitize_part("@scope/pkg.tool") == "_scope_pkg_tool"
    assert sanitize_part("list..__issues") == "list_issues"
    assert sanitize_part("github_v2-alpha") == "github_v2-alpha"


def test_qualify_short_names() -> None:
    assert qualify("github", "list_issues") == "mcp__github__list_issues"
    assert qualify("My Search", "do.thing") == "mcp__My_Search__do_thing"
    assert qualify("my__server", "foo") == "mcp__my_server__foo"
    assert qualify("gh", "list__issues") == "mcp__gh__list_issues"
    assert not is_mcp_tool_name("mcp_one_underscore__no")
    assert is_mcp_tool_name("mcp__github__list_issues")
    assert not is_mcp_tool_name("mcp____x")


def test_long_names_are_cut_and_end_with_the_signed_fnv_hash() -> None:
    assert qualify("a" * 40, "b" * 40) == (
        "mcp__aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa__bbbbbbb_-785fd989"
    )
    assert qualify("srv", "x" * 70) == "mcp__srv__" + "x" * 44 + "_-5f61881c"
    assert qualify("server1", "tool_" + "y" * 60) == (
        "mcp__server1__tool_yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_4dd5c14a"
    )
    assert qualify("one", "z" * 80) != qualify("two", "z" * 80)


def test_hash_renders_like_javascript() -> None:
    # Positive values are zero-padded; negative ones carry a sign (and may be 9 long).
    assert stable_hash8("") == "-7ee3623b"
    for text in ("a", "mcp__x__y", "é", "\U0001f600"):
        rendered = stable_hash8(text)
        assert re.fullmatch(r"-?[0-9a-f]+", rendered.lstrip("0") or "0")
        assert len(rendered) in (8, 9)


@settings(deadline=None, max_examples=300)
@given(st.text(min_size=1, max_size=90), st.text(min_size=1, max_size=90))
def test_qualified_names_are_short_safe_and_deterministic(server: str, tool: str) -> None:
    name = qualify(server, tool)
    assert len(name) <= 64
    assert re.fullmatch(r"[A-Za-z0-9_-]+", name)
    assert name == qualify(server, tool)
    assert name.startswith("mcp__")
