"""`project`: the history in the shape every provider accepts."""

from __future__ import annotations

from deftly.agent.history import MISSING_RESULT, project
from deftly.providers.types import Message, TextPart, ToolCallRequest


def test_two_user_messages_in_a_row_become_one_with_a_blank_line_between() -> None:
    shown = project([Message.user("review it."), Message.user("continue")])
    assert [m.role for m in shown] == ["user"]
    assert shown[0].text == "review it.\n\ncontinue"


def test_a_call_without_a_result_gets_one_and_an_orphan_result_is_dropped() -> None:
    call = ToolCallRequest("c1", "Read", "{}")
    history = [
        Message("assistant", (TextPart("before the user"),)),
        Message.user("go"),
        Message("assistant", tool_calls=(call,)),
        Message("tool", (TextPart("stray"),), tool_call_id="nobody", name="Read"),
        Message("assistant"),
    ]
    shown = project(history)
    assert [m.role for m in shown] == ["user", "assistant", "tool"]
    assert shown[2].is_error and shown[2].text == MISSING_RESULT
