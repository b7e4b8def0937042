"""AgentSwarm's own cost: a swarm of 64 children that make no tool calls.

A parent agent (the real loop, the real openai SDK, the scripted server over HTTP) calls
AgentSwarm once with 64 items; each child is a real sub-agent of the local backend (its
own scope, loop, transcript) whose model answers at once. Measured:

1. Overhead per child beyond the model calls: the AgentSwarm call's duration (from its
   start to its end in the executor) minus the floor, divided by 64. Floor: the same 64
   model requests (the same request shape: system prompt, tools offered, the prompt)
   made directly through the same provider, as many at a time as the swarm runs
   (`[agents] max_concurrency`). Run at concurrency 4 (the default) and 1 (serial, where
   nothing overlaps). Target: <= 20 ms per child.
2. The Ray backend (`[agents] backend = "ray"`): the same swarm with each child a Ray task
   on a private local Ray (4 logical CPUs, so 4 children run at once as on the local
   backend), after one warm-up swarm (Ray's workers started and deftly imported in them).
   Floor: the same swarm on the local backend. Its overhead per child beyond the local
   backend is what a child pays for its own process-side runtime (a workspace runtime
   opened in the worker, the task's round trip, the transcript carried back).
3. Peak memory per child: the traced (tracemalloc) peak during the swarm beyond what was
   allocated before it, divided by 64; and what stays allocated after the swarm (each
   child's scope and history are kept for a resume) per child.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.scripted.script import Call, Step, calls, say
from tests.scripted.server import ModelServer

from _common import clock, isolate, row
from deftly import Runtime
from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.features import BUILTIN_FEATURES
from deftly.providers import ChatRequest, Message, TextPart, ToolSpec
from deftly.providers.openai_chat import OpenAIProvider

CHILDREN = 64
PROMPT = "Answer for {{item}} in one word."


def features() -> list[Any]:
    """The built-in features (agents and swarm among them)."""
    return list(BUILTIN_FEATURES)


def script(body: dict[str, Any]) -> Step:
    """Children answer at once; the parent calls the swarm, then ends."""
    messages = body["messages"]
    last = messages[-1]
    content = last.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    if last["role"] == "user" and "Answer for item-" in text:
        return say("ok", usage=(50, 1))
    if last["role"] == "tool":
        return say("all done")
    items = [f"item-{n:02}" for n in range(CHILDREN)]
    arguments = {"description": "benchmark", "prompt_template": PROMPT, "items": items}
    return calls(Call("AgentSwarm", arguments), chunk=4096)


def provider(server: ModelServer) -> OpenAIProvider:
    return OpenAIProvider(model="scripted", base_url=server.openai_url, api_key="k")


async def swarm_run(
    workspace: Path, concurrency: int, trace: bool, backend: Any = None
) -> dict[str, float]:
    """One swarm through the parent's loop: its duration, and memory figures if traced;
    `backend` makes the children's backend (None: the local one)."""
    config = {"agents": {"max_concurrency": concurrency}}
    with ModelServer(script) as server:
        async with Runtime(
            workspace, config=config, plugins=False, approve_asks=True, features=features()
        ) as runtime:
            agent = Agent(runtime, provider(server), resume=False, children_backend=backend)
            await agent.start()
            gc.collect()
            if trace:
                tracemalloc.start()
                before = tracemalloc.get_traced_memory()[0]
            record: Any = None
            async for event in agent.stream("go"):
                if isinstance(event, ev.ToolResult) and event.name == "AgentSwarm":
                    record = event.call
            figures: dict[str, float] = {}
            if trace:
                gc.collect()
                after, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                figures["peak_kib"] = (peak - before) / 1024 / CHILDREN
                figures["kept_kib"] = (after - before) / 1024 / CHILDREN
            await agent.aclose()
    assert record is not None and not record.is_error, record
    assert record.text.count('outcome="completed"') == CHILDREN, record.text[:2000]
    figures["seconds"] = record.finished_at - record.started_at
    figures["requests"] = len(server.requests)
    figures["peak_in_flight"] = server.peak_in_flight
    return figures


async def floor_run(workspace: Path, concurrency: int, child_request: ChatRequest) -> float:
    """The same 64 child requests straight through the provider, `concurrency` at once."""
    with ModelServer(script) as server:
        direct = provider(server)
        pending = iter(range(CHILDREN))

        async def worker() -> None:
            for n in pending:
                request = ChatRequest(
                    child_request.system,
                    [Message("user", (TextPart(PROMPT.replace("{{item}}", f"item-{n:02}")),))],
                    child_request.tools,
                )
                async for _ in direct.stream(request):
                    pass

        await _warm(direct, child_request)
        start = clock()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        took = clock() - start
        await direct.aclose()
    return took


async def _warm(direct: OpenAIProvider, request: ChatRequest) -> None:
    async for _ in direct.stream(request):
        pass


async def child_shape(workspace: Path) -> ChatRequest:
    """A child's request as the swarm sends it: its system prompt and its tools (taken
    from one recorded child request), so the floor carries the same bytes."""
    with ModelServer(script) as server:
        async with Runtime(
            workspace,
            config={"agents": {"max_concurrency": 4}},
            plugins=False,
            approve_asks=True,
            features=features(),
        ) as runtime:
            agent = Agent(runtime, provider(server), resume=False)
            await agent.run("go")
            await agent.aclose()
    child = next(r for r in server.requests if "Answer for item-" in json.dumps(r["messages"][-1]))
    system = next(m["content"] for m in child["messages"] if m["role"] == "system")
    tools = [
        ToolSpec(
            t["function"]["name"], t["function"].get("description", ""), t["function"]["parameters"]
        )
        for t in child.get("tools", [])
    ]
    return ChatRequest(system if isinstance(system, str) else json.dumps(system), [], tools)


def main() -> None:
    home = isolate()
    workspace = home / "ws"
    workspace.mkdir()
    shape = asyncio.run(child_shape(workspace))
    print(
        f"AgentSwarm of {CHILDREN} children with no tool calls against the scripted server "
        f"(child requests: {len(shape.system)} characters of system prompt, "
        f"{len(shape.tools)} tools)"
    )
    for concurrency in (4, 1):
        runs = [asyncio.run(swarm_run(workspace, concurrency, False)) for _ in range(3)]
        swarm = min(r["seconds"] for r in runs)
        floor = min(asyncio.run(floor_run(workspace, concurrency, shape)) for _ in range(3))
        peak = max(int(r["peak_in_flight"]) for r in runs)
        print(f" concurrency {concurrency} (the server saw at most {peak} requests at once)")
        row(f"{CHILDREN} model requests made directly (floor)", floor * 1e3, "ms")
        row("the AgentSwarm call", swarm * 1e3, "ms", floor * 1e3)
        per_child = (swarm - floor) / CHILDREN * 1e3
        row("overhead per child beyond the model calls", per_child, "ms", None, "target <= 20 ms")
    ray_rows(workspace)
    memory = asyncio.run(swarm_run(workspace, 4, True))
    print(" memory (tracemalloc, concurrency 4)")
    row("peak per child during the swarm", memory["peak_kib"], "KiB")
    row("kept per child after the swarm (for resume)", memory["kept_kib"], "KiB")


def ray_rows(workspace: Path) -> None:
    """The swarm on the Ray backend against the same swarm on the local one (the floor)."""
    import ray

    from deftly.scale.ray_children import ray_children

    ray.init(
        address="local",
        num_cpus=4,
        object_store_memory=100 * 1024 * 1024,
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        asyncio.run(swarm_run(workspace, 4, False, ray_children()))  # warm the workers
        runs = [asyncio.run(swarm_run(workspace, 4, False, ray_children())) for _ in range(3)]
    finally:
        ray.shutdown()
    local = min(asyncio.run(swarm_run(workspace, 4, False))["seconds"] for _ in range(3))
    remote = min(r["seconds"] for r in runs)
    print(" the Ray backend (a local Ray, 4 logical CPUs, concurrency 4)")
    row("the AgentSwarm call on the local backend (floor)", local * 1e3, "ms")
    row("the AgentSwarm call on the Ray backend", remote * 1e3, "ms", local * 1e3)
    per_child = (remote - local) / CHILDREN * 1e3
    row("overhead per child on Ray beyond the local backend", per_child, "ms")


if __name__ == "__main__":
    main()
