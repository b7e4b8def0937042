"""Compaction: a summary the model writes (over real HTTP, the real openai SDK) replaces
the older part; the task and the recent steps stay verbatim; a failed summary drops the
older part with a note instead of failing."""

from __future__ import annotations

from pathlib import Path

from deftly.agent.context import ContextKeeper
from deftly.agent.context_compact import COMPACTED, kept_start, render
from deftly.config.models import LoopConfig
from deftly.providers.types import ImagePart, Message, TextPart
from tests.agent.context.histories import (
    TASK,
    assert_paired,
    history,
    keeper,
    step,
    summarizer,
    user_text,
)
from tests.scripted.script import Fail, say
from tests.scripted.server import ModelServer

SUMMARY = "Done: read f0..f5. Left: fix parse() in src/parse.py. Open: none."


async def test_a_history_over_compact_at_is_replaced_by_the_summary_the_task_and_recent_steps(
    tmp_path: Path,
) -> None:
    messages = history(10, 500, calls=2)  # short outputs: eliding cannot help
    context = keeper(tmp_path, window=3_000, keep_recent_steps=2)
    with ModelServer([say(SUMMARY)]) as server:
        fitted = await context.fit("the system prompt", messages, [], summarizer(server))
    assert fitted.change == "compacted"
    assert fitted.tokens_after < fitted.tokens_before and fitted.tokens_after < 3_000
    assert "compacted 24 older messages into a summary" in fitted.detail
    head, *kept = fitted.messages
    assert head.role == "user" and head.parts[0] == TextPart(TASK)  # the task verbatim
    assert SUMMARY in head.text and head.text.rstrip().endswith("</system>")
    assert head.meta[COMPACTED] == 1
    assert kept == messages[-6:]  # the last two steps, verbatim
    assert_paired(fitted.messages)

    (request,) = server.requests
    assert "tools" not in request or not request["tools"]
    asked = user_text(request)
    assert "REPLACE" in asked and "Files touched" in asked and "left to do" in asked
    assert TASK in asked and "step 7" in asked  # the older part is what gets summarised
    assert "older messages left out" in asked  # as much of it as fits a 3,000-token window
    assert "step 9" not in asked  # the kept steps are not


async def test_a_second_compaction_keeps_the_original_task_not_the_old_summary(
    tmp_path: Path,
) -> None:
    context = keeper(tmp_path, window=3_000, keep_recent_steps=2)
    with ModelServer([say("first summary"), say("second summary")]) as server:
        once = await context.fit("s", history(10, 500, calls=2), [], summarizer(server))
        grown = [*once.messages, *history(10, 500, calls=2, first=10)[1:]]
        twice = await context.fit("s", grown, [], summarizer(server))
    head = twice.messages[0]
    assert head.parts[0] == TextPart(TASK) and head.meta[COMPACTED] == 1
    assert "second summary" in head.text and "first summary" not in head.text
    assert "first summary" in user_text(server.requests[1])  # it was summarised again


async def test_compact_always_compacts_and_passes_instructions_and_the_session_state(
    tmp_path: Path,
) -> None:
    context = ContextKeeper(
        window=1_000_000,
        loop=LoopConfig(keep_recent_steps=1),
        elided_dir=tmp_path / "elided",
        state=lambda: "todos: [ ] fix parse, [x] read tests",
    )
    messages = history(4, 100)
    with ModelServer([say(SUMMARY)]) as server:
        fitted = await context.compact(
            "s", messages, [], summarizer(server), instructions="keep the error messages"
        )
    assert fitted.change == "compacted"
    assert "Session state: todos: [ ] fix parse, [x] read tests" in fitted.messages[0].text
    assert "keep the error messages" in user_text(server.requests[0])
    assert fitted.messages[1:] == messages[-2:]


async def test_a_failed_summary_drops_the_older_part_with_a_note(tmp_path: Path) -> None:
    messages = history(10, 500, calls=2)
    context = keeper(tmp_path, window=3_000, keep_recent_steps=2)
    failure = Fail(400, {"error": {"message": "this model does not exist", "type": "invalid"}})
    with ModelServer([failure]) as server:
        fitted = await context.fit("s", messages, [], summarizer(server))
    assert fitted.change == "compacted"
    assert "the summary could not be written" in fitted.detail
    assert "this model does not exist" in fitted.detail
    assert "dropped 24 older messages instead" in fitted.detail
    head = fitted.messages[0]
    assert head.parts[0] == TextPart(TASK)
    assert "were dropped to fit the context window" in head.text
    assert fitted.messages[1:] == messages[-6:]
    assert fitted.tokens_after < 3_000


async def test_an_empty_summary_counts_as_a_failure(tmp_path: Path) -> None:
    with ModelServer([say("   ")]) as server:
        fitted = await keeper(tmp_path, window=3_000, keep_recent_steps=2).fit(
            "s", history(10, 500, calls=2), [], summarizer(server)
        )
    assert fitted.change == "compacted"
    assert "could not be written" in fitted.detail and "empty" in fitted.detail


async def test_huge_recent_outputs_are_elided_after_compaction(tmp_path: Path) -> None:
    messages = history(6, 400)
    messages += step(6, ["q" * 20_000]) + step(7, ["r" * 20_000])
    context = keeper(tmp_path, window=8_000, keep_recent_steps=2)
    with ModelServer([say(SUMMARY)]) as server:
        fitted = await context.fit("s", messages, [], summarizer(server))
    assert fitted.change == "compacted" and "elided 2 recent tool outputs" in fitted.detail
    assert fitted.tokens_after < 8_000
    assert (tmp_path / "elided" / "s7c0.txt").read_text() == "r" * 20_000
    assert_paired(fitted.messages)


async def test_a_history_of_only_the_task_and_recent_steps_is_left_alone(tmp_path: Path) -> None:
    messages = history(1, 100)
    fitted = await keeper(tmp_path, window=1_000_000).compact("s", messages, [], _unused)
    assert fitted.change is None and "nothing to compact" in fitted.detail
    assert fitted.messages is messages
    # too long all the same: its outputs are elided, since nothing older can go
    messages = history(1, 9_000)
    fitted = await keeper(tmp_path, window=2_000).fit("s", messages, [], _unused)
    assert fitted.change == "elided" and "nothing to compact" in fitted.detail
    assert fitted.messages[2].meta["elided"] and fitted.tokens_after < 2_000


async def _unused(_request: object) -> str:
    raise AssertionError("no summary for nothing")


def test_the_kept_part_never_starts_inside_a_step() -> None:
    reminder = Message.user("<system>a background task ended</system>")
    messages = [
        Message.user(TASK),
        *step(0, ["a"]),
        *step(1, ["b", "c"]),
        reminder,
        *step(2, ["d"]),
        Message.user("and now the next thing"),
    ]
    # two steps kept: step 1 (with both results), the reminder, step 2, the new prompt
    assert kept_start(messages, 2) == 3
    assert kept_start(messages, 1) == 6  # the reminder before step 2 goes with it
    assert kept_start(messages, 0) == 9  # only the new prompt
    assert kept_start(messages, 5) == 0  # fewer steps than that: keep everything
    # a result that sits after a later message still pulls in its call's assistant
    odd = [Message.user(TASK), *step(0, ["a"])[:1], *step(1, ["b"]), step(0, ["a"])[1]]
    assert kept_start(odd, 1) == 1


def test_the_rendering_for_the_summary_fits_its_budget_and_keeps_the_start() -> None:
    messages = [
        Message("user", (TextPart(TASK), ImagePart("image/png", "AAAA"))),
        *history(40, 3_000)[1:],
    ]
    text = render(messages, 20_000)
    assert len(text) <= 20_000
    assert text.startswith(f"USER:\n{TASK}\n[an image (image/png)]")
    assert "older messages left out" in text and "step 39" in text
    assert "more characters]" in text  # tool outputs cut short
    whole = render(messages[:3], 1_000_000)
    assert "[tool call Read" in whole and "TOOL RESULT (Read)" in whole


async def test_the_summary_request_is_tool_less_plain_text_for_anthropic_too(
    tmp_path: Path,
) -> None:
    from deftly.providers.anthropic_messages import AnthropicProvider
    from deftly.providers.reply import collect
    from deftly.providers.types import ChatRequest

    messages = history(10, 500, calls=2)
    with ModelServer([say(SUMMARY)]) as server:
        model = AnthropicProvider(model="scripted", base_url=server.anthropic_url, api_key="k")

        async def summarize(request: ChatRequest) -> str:
            return (await collect(model.stream(request))).message.text

        fitted = await keeper(tmp_path, window=3_000, keep_recent_steps=2).fit(
            "s", messages, [], summarize
        )
        await model.aclose()
    assert fitted.change == "compacted" and SUMMARY in fitted.messages[0].text
    (body,) = server.requests
    assert not body.get("tools")
    assert [m["role"] for m in body["messages"]] == ["user"]  # no tool_use to pair
    blocks = body["messages"][0]["content"]
    sent = blocks if isinstance(blocks, str) else "".join(b.get("text", "") for b in blocks)
    assert "TOOL RESULT (Read)" in sent and "[tool call Read" in sent
