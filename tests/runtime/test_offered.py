"""What the model is offered now: a tool that asks the person needs someone to answer and
not auto mode; one that fills the inbox needs something consuming it. Decided by traits,
for any tool (here host tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.contract.traits import ToolTraits
from deftly.registry.offer import ToolOffer
from deftly.session.questions import QuestionRequest
from deftly.session.turns import LoopHooks

OBJECT = {"type": "object", "properties": {}}


async def _ok(args: dict[str, Any], ctx: object) -> str:
    return "ran"


def names(rt: Runtime) -> set[str]:
    return {t.name for t in rt.tools()}


async def test_a_tool_that_asks_is_offered_only_where_someone_answers(workspace: Path) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        rt.register_host_tool(
            "Ask", "asks", OBJECT, _ok, traits=ToolTraits(asks_user=True, read_only=True)
        )
        assert "Ask" not in names(rt)
        refused = await rt.call("Ask", {})
        assert refused.is_error and "nobody can answer" in refused.text
        rt.answerer = lambda request: {}
        assert "Ask" in names(rt)
        assert (await rt.call("Ask", {})).text == "ran"
        rt.set_mode("auto")
        assert "Ask" not in names(rt)
        assert "auto mode" in (await rt.call("Ask", {})).text
        rt.set_mode("manual")
        assert "Ask" in names(rt)


async def test_the_answerer_may_be_given_up_front(workspace: Path) -> None:
    def answer(request: QuestionRequest) -> dict[str, str]:
        return {}

    async with Runtime(workspace, plugins=False, answerer=answer) as rt:
        rt.register_host_tool(
            "Ask", "asks", OBJECT, _ok, traits=ToolTraits(asks_user=True, read_only=True)
        )
        assert "Ask" in names(rt)
        assert rt.answerer is not None


async def test_a_tool_that_fills_the_inbox_needs_a_consumer(workspace: Path) -> None:
    async with Runtime(workspace, plugins=False, approve_asks=True) as rt:
        rt.register_host_tool(
            "Later", "x", OBJECT, _ok, traits=ToolTraits(uses_inbox=True, read_only=True)
        )
        offer = rt.service(ToolOffer)
        assert "Later" not in names(rt)
        assert not offer.any(lambda traits: traits.uses_inbox)
        assert "deftly run --watch" in (await rt.call("Later", {})).text
        detach = rt.agent.inbox.attach()
        assert "Later" in names(rt)
        assert offer.any(lambda traits: traits.uses_inbox)
        detach()
        assert "Later" not in names(rt)


def test_state_readers_join_their_texts_and_skip_the_broken_and_the_empty() -> None:
    hooks = LoopHooks()
    assert hooks.state_text() is None
    stop = hooks.add_state(lambda: "Todo list: 1 item")
    hooks.add_state(lambda: "  ")
    hooks.add_state(lambda: 1 / 0)  # type: ignore[arg-type,return-value]
    hooks.add_state(lambda: "Goal: ship it\n")
    assert hooks.state_text() == "Todo list: 1 item\n\nGoal: ship it"
    stop()
    assert hooks.state_text() == "Goal: ship it"
