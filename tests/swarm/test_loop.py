"""AgentSwarm through the agent loop and the local backend against one scripted server:
the parent's requests and each child's (told apart by the child's first prompt, which
holds its item) come to the same server, which counts how many run at once."""

from __future__ import annotations

import asyncio
import re
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.features import BUILTIN_FEATURES
from tests.agent.loop.helpers import openai_provider, run_turn
from tests.scripted.script import Call, Fail, Step, calls, say
from tests.scripted.server import ModelServer

FEATURES = BUILTIN_FEATURES
MARK = "SWARM-ITEM "


def swarm_call(items: list[str], template: str = MARK + "{{item}}: review it.") -> Call:
    return Call(
        "AgentSwarm", {"description": "review", "prompt_template": template, "items": items}
    )


def first_prompt(body: dict[str, Any]) -> str:
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def tool_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        if message["role"] == "tool":
            content = message["content"]
            out.append(
                content
                if isinstance(content, str)
                else "".join(p.get("text", "") for p in content if isinstance(p, dict))
            )
    return out


class Script:
    """The parent's replies in order (a reply, or a function of the request); a child's
    reply from `child(item, body)`."""

    def __init__(
        self,
        parent: list[Step | Callable[[dict[str, Any]], Step]],
        child: Callable[[str, dict[str, Any]], Step],
    ) -> None:
        self.parent = parent
        self.child = child
        self.parent_requests: list[dict[str, Any]] = []
        self.child_requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Step:
        found = re.search(MARK + r"(\S+):", first_prompt(body))
        if found is not None:
            with self._lock:
                self.child_requests.append((found[1], body))
            return self.child(found[1], body)
        with self._lock:
            self.parent_requests.append(body)
            index = len(self.parent_requests) - 1
        if index >= len(self.parent):
            return Fail(400, f"the parent's script has no step {index + 1}")
        step = self.parent[index]
        return step(body) if callable(step) else step


def subagents(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("<subagent")]


async def test_twenty_items_at_most_four_at_once(make_runtime: Callable[..., Any]) -> None:
    items = [f"src/m{n:02}.py" for n in range(20)]
    first_four = threading.Semaphore(4)
    together = threading.Barrier(4, timeout=30)

    def child(item: str, body: dict[str, Any]) -> Step:
        if first_four.acquire(blocking=False):  # the first four answer only all together
            together.wait()
        return say(f"reviewed {item}", usage=(40, 5))

    script = Script([calls(swarm_call(items)), say("all reviewed")], child)
    runtime = await make_runtime(features=FEATURES, config={"agents": {"max_concurrency": 4}})
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "review every module")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end
    assert server.peak_in_flight == 4
    assert sorted(item for item, _ in script.child_requests) == sorted(items)
    [result] = tool_texts(script.parent_requests[1])
    lines = subagents(result)
    assert [re.search(r'item="([^"]+)"', line)[1] for line in lines] == items  # type: ignore[index]
    for item, line in zip(items, lines, strict=True):
        assert line.endswith(f'outcome="completed">reviewed {item}</subagent>')
    assert "<summary>completed: 20, failed: 0</summary>" in result
    started = [e for e in turn.events if isinstance(e, ev.SubagentStarted)]
    assert len(started) == 20 and all(e.parent_id == "main" for e in started)
    assert started[0].description == "review #1 (coder)"
    # every child's tokens are in the turn's, with the parent's own
    usage = turn.end.usage_by_agent
    assert len(usage) == 21 and all(usage[e.agent_id].input_tokens == 40 for e in started)


async def test_a_failing_item_and_the_rest_complete(make_runtime: Callable[..., Any]) -> None:
    def child(item: str, body: dict[str, Any]) -> Step:
        if item == "bad":
            return Fail(400, {"error": {"message": "this item broke the model"}})
        return say(f"fine: {item}")

    script = Script([calls(swarm_call(["one", "bad", "two"])), say("done")], child)
    runtime = await make_runtime(features=FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    [result] = tool_texts(script.parent_requests[1])
    assert "<summary>completed: 2, failed: 1</summary>" in result and "<resume_hint>" in result
    one, bad, two = subagents(result)
    assert 'item="bad" outcome="failed">' in bad
    assert one.endswith(">fine: one</subagent>") and two.endswith(">fine: two</subagent>")


async def test_a_failed_child_is_resumed_with_its_item(
    make_runtime: Callable[..., Any],
) -> None:
    def child(item: str, body: dict[str, Any]) -> Step:
        last = body["messages"][-1]
        if last["role"] == "user" and first_prompt(body).endswith("continue"):
            return say(f"recovered {item}")
        if item == "bad":
            return Fail(400, {"error": {"message": "this item broke the model"}})
        return say(f"fine: {item}")

    def resume(body: dict[str, Any]) -> Step:
        [result] = tool_texts(body)
        found = re.search(r'agent_id="([^"]+)" item="bad" outcome="failed"', result)
        assert found is not None, result
        return calls(
            Call("AgentSwarm", {"description": "again", "resume_agent_ids": {found[1]: "continue"}})
        )

    script = Script([calls(swarm_call(["good", "bad"])), resume, say("done")], child)
    runtime = await make_runtime(features=FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn"
    result = tool_texts(script.parent_requests[2])[-1]
    [line] = subagents(result)
    assert line.startswith('<subagent mode="resume" agent_id="swarm-')
    assert line.endswith('item="bad" outcome="completed">recovered bad</subagent>')
    # the resumed child went on from its own history: its first prompt, then "continue"
    resumed = [body for item, body in script.child_requests if item == "bad"][-1]
    assert first_prompt(resumed).startswith(MARK + "bad: review it.")
    assert len([item for item, _ in script.child_requests if item == "good"]) == 1


async def test_repeated_items_are_refused_before_any_child(
    make_runtime: Callable[..., Any],
) -> None:
    script = Script(
        [calls(swarm_call(["a", "b", "a"])), say("fixed")], lambda item, body: say("no")
    )
    runtime = await make_runtime(features=FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "go")
        await agent.aclose()
    [result] = tool_texts(script.parent_requests[1])
    assert "Items 1 and 3 give the same prompt" in result
    assert script.child_requests == []


async def test_the_veto_when_the_swarm_shares_its_reply(
    make_runtime: Callable[..., Any], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("plain notes\n")
    reply = calls(swarm_call(["a", "b"]), Call("Read", {"path": "notes.txt"}))
    script = Script([reply, say("ok")], lambda item, body: say("no"))
    runtime = await make_runtime(features=FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "go")
        await agent.aclose()
    swarm, read = tool_texts(script.parent_requests[1])
    assert "must be the only tool call" in swarm and "Read" in swarm
    assert "plain notes" in read
    assert script.child_requests == [] and not any(
        isinstance(e, ev.SubagentStarted) for e in turn.events
    )


async def test_two_swarms_in_one_reply_are_both_refused(
    make_runtime: Callable[..., Any],
) -> None:
    reply = calls(swarm_call(["a", "b"]), swarm_call(["c", "d"], MARK + "{{item}}: test it."))
    script = Script([reply, say("ok")], lambda item, body: say("no"))
    runtime = await make_runtime(features=FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "go")
        await agent.aclose()
    results = tool_texts(script.parent_requests[1])
    assert len(results) == 2 and all("one at a time" in r for r in results)
    assert script.child_requests == []


async def test_two_identical_swarms_in_one_reply_are_both_refused(
    make_runtime: Callable[..., Any],
) -> None:
    # the step runs identical calls once and shares the result: the veto still counts two
    reply = calls(swarm_call(["a", "b"]), swarm_call(["a", "b"]))
    script = Script([reply, say("ok")], lambda item, body: say("no"))
    runtime = await make_runtime(features=FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        await run_turn(agent, "go")
        await agent.aclose()
    results = tool_texts(script.parent_requests[1])
    assert len(results) == 2 and all("called it 2 times" in r for r in results)
    assert script.child_requests == []


async def test_cancelling_the_turn_stops_every_child_and_its_processes(
    make_runtime: Callable[..., Any],
) -> None:
    # Each child sleeps for a length no other process on the machine has, so its sleep is
    # found by its command line (the sandbox gives the shell pids of its own namespace).
    tag = f"{secrets.randbelow(10**6):06d}"

    def child(item: str, body: dict[str, Any]) -> Step:
        command = f"sleep 200.{tag}{item[1:]} & wait"
        return calls(Call("Bash", {"command": command, "timeout": 250}))

    items = [f"w{n}" for n in range(6)]
    script = Script([calls(swarm_call(items))], child)
    runtime = await make_runtime(features=FEATURES, config={"agents": {"max_concurrency": 4}})
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = asyncio.ensure_future(run_turn(agent, "go"))
        await _until(lambda: len(_sleeping(tag)) == 4 or turn.done())
        assert not turn.done(), turn.result().end
        agent.cancel()
        ended = await asyncio.wait_for(turn, 60)
        await agent.aclose()
    assert ended.end.stop_reason == "cancelled"
    await _until(lambda: not _sleeping(tag))
    assert len(script.child_requests) == 4  # the last two never started
    [finished] = [
        e for e in ended.events if isinstance(e, ev.ToolResult) and e.name == "AgentSwarm"
    ]
    assert "<summary>completed: 0, failed: 0, aborted: 6</summary>" in finished.output
    lines = subagents(finished.output)
    assert all('state="started"' in line for line in lines[:4])
    assert all('state="not_started"' in line for line in lines[4:])


def _sleeping(tag: str) -> list[int]:
    """The running processes (not zombies) whose command is one of this test's sleeps."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z" and argv[0].endswith(b"sleep") and tag.encode() in b" ".join(argv[1:]):
            found.append(int(entry.name))
    return found


async def _until(condition: Callable[[], bool], timeout: float = 30) -> None:
    """Wait (polling the state) until `condition` holds; fail after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await asyncio.sleep(0.05)
