"""Eliding old tool outputs: pointers to files that hold the full text, pairing kept."""

from __future__ import annotations

import base64
from pathlib import Path

from deftly.agent.context_elide import ELIDED, recent_boundary
from deftly.agent.context_estimate import IMAGE_TOKENS, messages_tokens
from deftly.providers.types import ImagePart, Message, TextPart, Usage
from tests.agent.context.histories import TASK, assert_paired, history, keeper, step

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-not-really-an-image").decode()


async def never(_request: object) -> str:
    raise AssertionError("no summary is needed here")


async def test_below_the_elide_threshold_nothing_changes(tmp_path: Path) -> None:
    messages = history(6, 2_000)
    fitted = await keeper(tmp_path, window=100_000).fit("system", messages, [], never)
    assert fitted.change is None and fitted.messages is messages
    assert fitted.tokens_before == fitted.tokens_after > 3_000
    assert not (tmp_path / "elided").exists()


async def test_old_long_outputs_become_pointers_to_files_holding_them(tmp_path: Path) -> None:
    messages = history(8, 3_000)
    # about 6,000 estimated tokens: above 0.7 of 8,000, below 0.85 once elided
    fitted = await keeper(tmp_path, window=8_000, keep_recent_steps=3).fit(
        "system", messages, [], never
    )
    assert fitted.change == "elided"
    assert fitted.tokens_after < fitted.tokens_before
    assert "elided 5 old tool outputs" in fitted.detail
    out = fitted.messages
    assert len(out) == len(messages) and out[0] == messages[0]
    assert_paired(out)
    boundary = recent_boundary(messages, 3)
    for before, after in zip(messages, out, strict=True):
        if before.role != "tool" or messages.index(before) >= boundary:
            assert after == before  # the task, the replies and the recent results: verbatim
            continue
        path = Path(after.meta[ELIDED])
        assert path == tmp_path / "elided" / f"{before.tool_call_id}.txt"
        assert path.read_text() == before.text  # the full output, not a preview
        assert str(path) in after.text and "read it with Read" in after.text
        assert before.text.splitlines()[0][:40] in after.text  # it began like this
        assert (after.tool_call_id, after.name, after.is_error) == (
            before.tool_call_id,
            before.name,
            before.is_error,
        )


async def test_a_spilled_output_points_at_its_spill_file_and_short_ones_stay(
    tmp_path: Path,
) -> None:
    spill = tmp_path / "spill" / "Bash-s0c0-abc.txt"
    spill.parent.mkdir()
    spill.write_text("the whole long output")
    spilled = (
        "The output is too long for one message: 90,000 characters, over the budget.\n"
        f"output_path: {spill}\n"
        "next_step: page through output_path with Read (line_offset, n_lines) or Grep.\n\n"
        "--- first 2,000 characters ---\n" + "y" * 2_000
    )
    messages = [
        Message.user(TASK),
        *step(0, [spilled, "short output"], error=True),
        *step(1, ["z" * 5_000]),
        *step(2, ["w" * 5_000]),
    ]
    fitted = await keeper(tmp_path, window=4_000, keep_recent_steps=1).fit(
        "system", messages, [], never
    )
    assert fitted.change == "elided"
    pointer, short, third = fitted.messages[2], fitted.messages[3], fitted.messages[5]
    assert pointer.meta[ELIDED] == str(spill) and str(spill) in pointer.text
    assert pointer.is_error  # the error flag survives the elision
    assert not (tmp_path / "elided" / "s0c0.txt").exists()  # no second copy
    assert short == messages[3]
    assert Path(third.meta[ELIDED]).read_text() == "z" * 5_000
    assert fitted.messages[-1] == messages[-1]  # the last step is recent


async def test_old_images_in_results_go_to_files_too(tmp_path: Path) -> None:
    shot = Message(
        "tool",
        (TextPart("a screenshot"), ImagePart("image/png", PNG)),
        tool_call_id="s0c0",
        name="ReadMediaFile",
    )
    messages = [Message.user(TASK), step(0, ["x"])[0], shot, *step(1, ["ok"]), *step(2, ["ok"])]
    assert messages_tokens(messages) > IMAGE_TOKENS
    fitted = await keeper(tmp_path, window=2_000, keep_recent_steps=1).fit("s", messages, [], never)
    elided = fitted.messages[2]
    assert not any(isinstance(p, ImagePart) for p in elided.parts)
    assert elided.parts[0] == TextPart("a screenshot")
    saved = tmp_path / "elided" / "s0c0-1.png"
    assert saved.read_bytes() == base64.b64decode(PNG)
    assert str(saved) in elided.text and "ReadMediaFile" in elided.text


async def test_what_was_elided_once_is_left_alone_and_shown_paths_can_differ(
    tmp_path: Path,
) -> None:
    from deftly.agent.context import ContextKeeper
    from deftly.config.models import LoopConfig

    context = ContextKeeper(
        window=8_000,
        loop=LoopConfig(keep_recent_steps=3),
        elided_dir=tmp_path / "host",
        elided_view=Path("/var/lib/deftly/sessions/s/elided"),
    )
    first = await context.fit("system", history(8, 3_000), [], never)
    assert first.change == "elided"
    assert "/var/lib/deftly/sessions/s/elided/s0c0.txt" in first.messages[2].text
    assert (tmp_path / "host" / "s0c0.txt").exists()
    again = await context.fit("system", first.messages, [], never)
    assert again.change is None and again.messages == first.messages


def test_the_estimate_starts_from_the_observed_prompt(tmp_path: Path) -> None:
    context = keeper(tmp_path, window=100_000)
    messages = history(3, 400)
    unobserved = context.estimate(messages)
    assert unobserved == messages_tokens(messages)
    context.observe(Usage(input_tokens=50_000), sent=3)
    assert context.estimate(messages) == 50_000 + messages_tokens(messages[3:])
    context.observe(Usage(), sent=len(messages))  # no usage reported: keep the last figure
    assert context.estimate(messages) == 50_000 + messages_tokens(messages[3:])
    assert context.estimate(messages[:2]) == messages_tokens(messages[:2])  # a shorter history


async def test_an_observed_prompt_over_the_threshold_triggers_elision(tmp_path: Path) -> None:
    messages = history(8, 700)
    context = keeper(tmp_path, window=100_000, keep_recent_steps=2)
    assert (await context.fit("s", messages, [], never)).change is None
    context.observe(Usage(input_tokens=75_000), sent=len(messages))
    fitted = await context.fit("s", messages, [], never)
    assert fitted.change == "elided" and fitted.tokens_before == 75_000
    assert fitted.tokens_after < 75_000
    assert context.estimate(fitted.messages) == fitted.tokens_after


async def test_an_elision_stands_when_there_is_nothing_to_compact(tmp_path: Path) -> None:
    messages = history(8, 3_000)[1:]  # no user message: no task to compact around
    messages += step(8, ["ok"], text="t" * 30_000)  # and a last step too long for any window
    fitted = await keeper(tmp_path, window=8_000, keep_recent_steps=1).fit(
        "system", messages, [], never
    )
    assert fitted.change == "elided" and "no user message" in fitted.detail
    assert fitted.tokens_after < fitted.tokens_before
    assert all(m.meta.get(ELIDED) for m in fitted.messages[:-2] if m.role == "tool")
