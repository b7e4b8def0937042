"""The agent loop's own cost, and streaming dispatch.

1. Loop overhead per step: a turn of 50 steps, each a reply with five no-op calls (Echo),
   from an in-process provider that yields ready-made stream parts (so no HTTP and no
   model time), through the whole loop: injections, tool shaping, context check, history
   projection, streaming dispatch into the executor, results to messages, the transcript.
   Floor: the same steps' provider parts consumed plus the same five calls run as one
   `run_batch` — the provider's and the tool layer's own time. Target: <= 3 ms per step
   beyond the provider.
2. Streaming dispatch, over real HTTP with the real openai SDK against the scripted
   server: a reply of a Read and then a 1 MB Write. The time from the Read's last argument
   byte (its ToolCallEnd) to the Read's start in the executor; and whether it started
   before the stream ended. Floor: the same Read's whole run through `run_batch`.
   Target: <= 5 ms, and before the stream ends.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import EchoTool
from tests.scripted.script import Call, Reply, say
from tests.scripted.server import ModelServer

from _common import best_of, clock, isolate, row
from deftly import Runtime
from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.providers import (
    Capabilities,
    ChatRequest,
    Finish,
    StreamPart,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallRequest,
    ToolCallStart,
    Usage,
    UsageReport,
)
from deftly.providers.openai_chat import OpenAIProvider

STEPS = 50
CALLS_PER_STEP = 5


def step_parts(step: int) -> list[StreamPart]:
    parts: list[StreamPart] = [TextDelta("Echoing.")]
    for i in range(CALLS_PER_STEP):
        call_id = f"s{step}c{i}"
        arguments = json.dumps({"text": f"{step}-{i}"})
        parts += [
            ToolCallStart(i, call_id, "Echo"),
            ToolCallDelta(i, arguments),
            ToolCallEnd(i, ToolCallRequest(call_id, "Echo", arguments)),
        ]
    parts += [UsageReport(Usage(1000, 50)), Finish("tool_calls")]
    return parts


FINAL: list[StreamPart] = [TextDelta("done"), UsageReport(Usage(1000, 5)), Finish("end_turn")]


class Canned:
    """A provider that replies with ready-made parts: STEPS-1 steps of calls, then text."""

    name = "canned"
    model = "canned"
    capabilities = Capabilities()

    def __init__(self) -> None:
        self.replies = [step_parts(n) for n in range(STEPS - 1)] + [FINAL]
        self.served = 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamPart]:
        parts = self.replies[self.served]
        self.served += 1
        for part in parts:
            yield part

    async def aclose(self) -> None:
        pass


def loop_step(workspace: Path) -> float:
    async def scenario() -> float:
        async with Runtime(
            workspace, config={}, plugins=False, builtins=False, tools=[EchoTool]
        ) as runtime:
            agent = Agent(runtime, Canned(), max_steps=0, resume=False)
            await agent.start()
            start = clock()
            result = await agent.run("go")
            took = clock() - start
            await agent.aclose()
            assert result.steps == STEPS and result.stop_reason == "end_turn", result
            return took / STEPS * 1e3

    return asyncio.run(scenario())


def floor_step(workspace: Path) -> float:
    async def scenario() -> float:
        async with Runtime(
            workspace, config={}, plugins=False, builtins=False, tools=[EchoTool]
        ) as runtime:
            provider = Canned()
            request = ChatRequest("", [])
            start = clock()
            for step in range(STEPS):
                calls = []
                async for part in provider.stream(request):
                    if isinstance(part, ToolCallEnd):
                        calls.append(
                            {
                                "id": f"{step}-{part.call.id}",
                                "name": part.call.name,
                                "arguments": part.call.arguments,
                            }
                        )
                if calls:
                    await runtime.run_batch(calls)
            return (clock() - start) / STEPS * 1e3

    return asyncio.run(scenario())


class Timed:
    """Wraps a provider, noting when the first call ended and when the stream ended."""

    def __init__(self, inner: OpenAIProvider) -> None:
        self.inner = inner
        self.name, self.model, self.capabilities = inner.name, inner.model, inner.capabilities
        self.first_call_end: float | None = None
        self.stream_end: float | None = None

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamPart]:
        async for part in self.inner.stream(request):
            if isinstance(part, ToolCallEnd) and part.index == 0 and self.first_call_end is None:
                self.first_call_end = time.monotonic()
            if isinstance(part, Finish) and self.stream_end is None:
                self.stream_end = time.monotonic()
            yield part

    async def aclose(self) -> None:
        await self.inner.aclose()


def dispatch(workspace: Path) -> tuple[float, bool]:
    target = workspace / "small.txt"
    target.write_text("hello\n")

    async def scenario() -> tuple[float, bool]:
        reply = Reply(
            (
                Call("Read", {"path": str(target)}),
                Call("Write", {"path": str(workspace / "big.txt"), "content": "x" * 1_000_000}),
            ),
            chunk=4096,
        )
        with ModelServer([reply, say("done")]) as server:
            async with Runtime(workspace, config={}, plugins=False, approve_asks=True) as rt:
                provider = Timed(
                    OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k")
                )
                agent = Agent(rt, provider, resume=False)
                read_started: float | None = None
                async for event in agent.stream("go"):
                    if isinstance(event, ev.ToolResult) and event.name == "Read":
                        assert event.call is not None
                        read_started = event.call.started_at
                await agent.aclose()
        assert read_started is not None and provider.first_call_end is not None
        assert provider.stream_end is not None
        latency = (read_started - provider.first_call_end) * 1e3
        return latency, read_started < provider.stream_end

    return asyncio.run(scenario())


def read_floor(workspace: Path) -> float:
    target = workspace / "small.txt"

    async def scenario() -> float:
        async with Runtime(workspace, config={}, plugins=False) as rt:
            call = {"id": "r", "name": "Read", "arguments": json.dumps({"path": str(target)})}
            await rt.run_batch([call])
            start = clock()
            await rt.run_batch([call])
            return (clock() - start) * 1e3

    return asyncio.run(scenario())


def main() -> None:
    home = isolate()
    workspace = home / "ws"
    workspace.mkdir()
    step = best_of(3, lambda: loop_step(workspace))
    floor = best_of(3, lambda: floor_step(workspace))
    print(f"agent loop, a turn of {STEPS} steps with {CALLS_PER_STEP} no-op calls each (ms/step)")
    row("provider parts consumed + run_batch of the calls (floor)", floor, "ms")
    row("Agent.run, whole loop", step, "ms", floor)
    row("loop overhead per step beyond the floor", step - floor, "ms", None, "target <= 3 ms")
    runs = [dispatch(workspace) for _ in range(5)]
    latency = min(r[0] for r in runs)
    before_end = all(r[1] for r in runs)
    read = best_of(5, lambda: read_floor(workspace))
    print("streaming dispatch, a Read then a 1 MB Write in one streamed reply (ms)")
    row("one Read through run_batch (floor)", read, "ms")
    row("Read's last argument byte -> its start", latency, "ms", read, "target <= 5 ms")
    print(f"  Read started before the stream ended in every run: {before_end}")


if __name__ == "__main__":
    main()
