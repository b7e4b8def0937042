"""For random histories, `fit` keeps every call paired with exactly one result, keeps the
first user message, and a compaction that got its summary leaves a prompt inside the
window."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from deftly.agent.context import ContextKeeper
from deftly.agent.context_compact import COMPACTED
from deftly.agent.context_estimate import messages_tokens
from deftly.config.models import LoopConfig
from deftly.providers.types import ChatRequest, Message, TextPart, ToolCallRequest, Usage
from tests.agent.context.histories import TASK, assert_paired

step_shape = st.tuples(
    st.integers(0, 2_000),  # the assistant's text
    st.lists(  # its results: short ones (never elided) or long ones
        st.tuples(st.one_of(st.integers(0, 500), st.integers(600, 6_000)), st.booleans()),
        max_size=3,
    ),
    st.integers(-1, 300),  # an injection after the step (-1: none)
)


def build(shapes: list[tuple[int, list[tuple[int, bool]], int]]) -> list[Message]:
    messages = [Message.user(TASK)]
    for number, (text, results, injection) in enumerate(shapes):
        ids = [f"c{number}_{n}" for n in range(len(results))]
        messages.append(
            Message(
                "assistant",
                (TextPart("t" * text),) if text else (),
                tool_calls=tuple(ToolCallRequest(i, "Read", '{"path": "x"}') for i in ids),
            )
        )
        for call_id, (size, error) in zip(ids, results, strict=True):
            body = f"first line of {call_id}\n" + "o" * size
            messages.append(
                Message(
                    "tool", (TextPart(body),), tool_call_id=call_id, name="Read", is_error=error
                )
            )
        if injection >= 0 or not results:
            messages.append(Message.user("u" * max(injection, 1)))
    return messages


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    shapes=st.lists(step_shape, min_size=8, max_size=40),
    scale=st.floats(0.3, 1.6),
    keep=st.integers(1, 4),
    summary_fails=st.booleans(),
    observed=st.one_of(st.none(), st.floats(0.5, 1.2)),
)
def test_fit_keeps_pairs_and_the_task_and_fits_the_window(
    shapes: list[tuple[int, list[tuple[int, bool]], int]],
    scale: float,
    keep: int,
    summary_fails: bool,
    observed: float | None,
) -> None:
    messages = build(shapes)
    window = max(6_000, int(messages_tokens(messages) * scale))  # around the history's size
    asked: list[ChatRequest] = []

    async def summarize(request: ChatRequest) -> str:
        asked.append(request)
        if summary_fails:
            raise RuntimeError("the model is down")
        return "the summary: " + "s" * 400

    with tempfile.TemporaryDirectory() as folder:
        context = ContextKeeper(
            window=window, loop=LoopConfig(keep_recent_steps=keep), elided_dir=Path(folder)
        )
        if observed is not None:
            estimate = context.estimate(messages)
            context.observe(Usage(input_tokens=max(int(estimate * observed), 1)), len(messages))
        fitted = asyncio.run(context.fit("system", messages, [], summarize))
        event(f"change: {fitted.change}, summary failed: {summary_fails}")
        out = fitted.messages

        assert_paired(out)
        first = out[0]
        assert first.role == "user" and first.parts[0] == TextPart(TASK)
        if fitted.change is None:
            assert out is messages and not asked
        else:
            assert fitted.tokens_after == context.estimate(out)
            for message in out:
                path = message.meta.get("elided")
                if path:
                    assert Path(path).is_file()
        if fitted.change == "compacted":
            assert first.meta[COMPACTED] == 1 and len(asked) == 1
            if not summary_fails:
                assert fitted.tokens_after < window
        if fitted.change == "elided":
            assert len(out) == len(messages)
            assert [m.tool_call_id for m in out] == [m.tool_call_id for m in messages]
