"""One injection channel: a result's delivery is pushed to it ("skill"), task notices
(from the channel or a legacy notice source) ride on the next result's note without an
agent loop and stay in the channel with one, and the deferred-tool announcement is told
once, to whichever asks first: the channel or `shape()` (`Runtime.model_tools()`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deftly.contract import ToolContext, ToolResult
from deftly.execution.notices import SKILL_KIND, TASK_FINISHED_KIND
from deftly.features.disclosure.disclosure import DEFERRED_TOOLS_KIND, DeferredTools
from deftly.registry.registry import Source, ToolRegistry
from deftly.session.injections import Injection, Injections
from tests.execution.tools import WorkTool, calls, executor


@dataclass(frozen=True)
class Ended:
    message: str


@dataclass
class Tasks:
    """A notice source as the background-task manager is one: each notice given once."""

    pending: list[Ended] = field(default_factory=list)

    def take_notices(self) -> list[Ended]:
        taken, self.pending = self.pending, []
        return taken


def ok(ctx: ToolContext) -> ToolResult:
    return ToolResult.ok("ok")


def skill(ctx: ToolContext) -> ToolResult:
    return ToolResult.ok("Skill loaded.", delivery="<skill-loaded>do it</skill-loaded>")


async def test_task_notices_ride_on_the_next_result_once(tmp_path: Path) -> None:
    channel = Injections()
    run = executor(tmp_path, WorkTool("Work", ok), injections=channel)
    tasks = Tasks([Ended("Background task a ended: completed.")])
    run.add_notice_source(tasks)
    channel.push(TASK_FINISHED_KIND, "Background task b ended: failed (exit code 3).")
    channel.push("plan_reminder", "You are in plan mode.")  # never rode on results

    first, second = await run.run_batch(calls("Work", "Work"))
    notes = [first.note, second.note]
    carrying = [note for note in notes if note]
    assert carrying == [
        "[notice] Background task a ended: completed.\n"
        "[notice] Background task b ended: failed (exit code 3)."
    ]
    [later] = await run.run_batch(calls("Work"))
    assert later.note is None
    assert channel.drain() == [Injection("plan_reminder", "You are in plan mode.")]


async def test_a_notice_follows_the_tools_own_note(tmp_path: Path) -> None:
    channel = Injections()
    run = executor(
        tmp_path,
        WorkTool("Work", lambda ctx: ToolResult.ok("x", note="3 lines")),
        injections=channel,
    )
    channel.push(TASK_FINISHED_KIND, "task c ended")
    [result] = await run.run_batch(calls("Work"))
    assert result.note == "3 lines\n[notice] task c ended"


async def test_with_an_agent_loop_notices_stay_in_the_channel(tmp_path: Path) -> None:
    channel = Injections()
    run = executor(tmp_path, WorkTool("Work", ok), injections=channel, notices_on_results=False)
    run.add_notice_source(Tasks([Ended("task a ended")]))
    channel.push(TASK_FINISHED_KIND, "task b ended")
    [result] = await run.run_batch(calls("Work"))
    assert result.note is None
    drained = channel.drain()
    assert sorted(item.text for item in drained) == ["task a ended", "task b ended"]
    assert {item.kind for item in drained} == {TASK_FINISHED_KIND}


async def test_legacy_notices_still_ride_without_a_channel(tmp_path: Path) -> None:
    run = executor(tmp_path, WorkTool("Work", ok))
    stop = run.add_notice_source(Tasks([Ended("task a ended")]))
    [result] = await run.run_batch(calls("Work"))
    assert result.note == "[notice] task a ended"
    stop()
    assert run.notices == []


async def test_a_delivery_is_pushed_to_the_channel_and_kept_on_the_result(
    tmp_path: Path,
) -> None:
    channel = Injections()
    run = executor(tmp_path, WorkTool("Skill", skill), injections=channel, notices_on_results=False)
    [result] = await run.run_batch(calls("Skill"))
    assert result.delivery == "<skill-loaded>do it</skill-loaded>"
    assert result.note is None  # a skill does not ride on the note
    assert channel.drain() == [Injection(SKILL_KIND, "<skill-loaded>do it</skill-loaded>")]
    assert channel.drain() == []


async def test_without_an_agent_loop_deliveries_stay_on_results_only(tmp_path: Path) -> None:
    """`deftly serve`, `call` and library callers read `result.delivery`; nothing drains
    the channel for them, so nothing may pile up in it."""
    channel = Injections()
    run = executor(tmp_path, WorkTool("Skill", skill), injections=channel)
    for _ in range(3):
        [result] = await run.run_batch(calls("Skill"))
        assert result.delivery == "<skill-loaded>do it</skill-loaded>"
    assert channel.drain() == []


def deferred(channel: Injections | None, names: list[str]) -> tuple[DeferredTools, ToolRegistry]:
    registry = ToolRegistry()
    for name in names:
        registry.register(WorkTool(name, ok), source="mcp")

    def active(name: str, source: Source) -> bool:
        return True

    return DeferredTools(registry, active, enabled=True, injections=channel), registry


def shaped(tools: DeferredTools) -> str | None:
    return tools.shape(["mcp__s__a"], lambda name: name).announcement


async def test_the_announcement_drained_first_is_not_told_by_model_tools() -> None:
    channel = Injections()
    tools, _ = deferred(channel, ["mcp__s__a", "mcp__s__b"])
    [told] = channel.drain()
    assert told.kind == DEFERRED_TOOLS_KIND and "mcp__s__a\nmcp__s__b" in told.text
    assert shaped(tools) is None


async def test_model_tools_first_takes_it_from_the_channel() -> None:
    channel = Injections()
    tools, registry = deferred(channel, ["mcp__s__a"])
    text = shaped(tools)
    assert text is not None and "<tools_added>\nmcp__s__a\n</tools_added>" in text
    assert channel.drain() == []
    registry.unregister("mcp__s__a")
    [removed] = channel.drain()
    assert "<tools_removed>\nmcp__s__a\n</tools_removed>" in removed.text


async def test_a_batch_between_does_not_lose_the_announcement(tmp_path: Path) -> None:
    channel = Injections()
    tools, _ = deferred(channel, ["mcp__s__a"])
    run = executor(tmp_path, WorkTool("Work", ok), injections=channel)
    [result] = await run.run_batch(calls("Work"))  # drains task notices only
    assert result.note is None
    text = shaped(tools)
    assert text is not None and "mcp__s__a" in text
    assert shaped(tools) is None


async def test_without_a_channel_model_tools_works_as_before() -> None:
    tools, _ = deferred(None, ["mcp__s__a"])
    first = shaped(tools)
    assert first is not None and "mcp__s__a" in first
    assert shaped(tools) is None


async def test_a_drain_of_other_kinds_leaves_the_announcement_to_its_reader() -> None:
    """A drain after every tool result takes task notices only: it does not even ask the
    deferred-tool source (so it stays cheap), and the announcement waits for its reader."""
    channel = Injections()
    tools, _ = deferred(channel, ["mcp__s__a"])
    assert channel.drain(lambda kind: kind == TASK_FINISHED_KIND) == []
    assert channel.peek() == []
    tools.reset()
    [again] = channel.drain()  # announced (afresh after the reset)
    assert "mcp__s__a" in again.text
