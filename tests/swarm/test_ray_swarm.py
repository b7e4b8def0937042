"""AgentSwarm and Agent on the Ray backend: a real local Ray (2 CPUs), the real loop, the
real openai SDK and one scripted server on 127.0.0.1 that the parent and every child (a
Ray task in a worker process) talk to; the same swarm on the local backend for
comparison."""

from __future__ import annotations

import asyncio
import re
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deftly.agent import Agent
from deftly.agent import events as ev
from deftly.agent.transcript import transcript_path
from deftly.config.agents import AgentsConfig
from deftly.contract.tool import CancelToken
from deftly.features import BUILTIN_FEATURES
from deftly.scale.ray_children import RayChildren, children_backend, ray_children
from deftly.session.subagents import AgentProfile, ChildSpec
from tests.agent.loop.helpers import content_text, openai_provider, run_turn
from tests.scripted.script import Call, Fail, Step, calls, say
from tests.scripted.server import ModelServer
from tests.swarm.ray_cluster import node_ids, ray_instance

pytestmark = [pytest.mark.ray, pytest.mark.local_env]
__all__ = ["ray_instance"]  # the module's Ray (a fixture)

MARK = "SWARM-ITEM "


def first_prompt(body: dict[str, Any]) -> str:
    return next((content_text(m) for m in body["messages"] if m["role"] == "user"), "")


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [content_text(m) for m in body["messages"] if m["role"] == "tool"]


def swarm_call(items: list[str]) -> Call:
    template = MARK + "{{item}}: review it."
    return Call(
        "AgentSwarm", {"description": "review", "prompt_template": template, "items": items}
    )


class Script:
    """The parent's replies in order; a child's (told apart by its item) from `child`."""

    def __init__(
        self,
        parent: list[Step | Callable[[dict[str, Any]], Step]],
        child: Callable[[str, dict[str, Any]], Step],
    ) -> None:
        self.parent = parent
        self.child = child
        self.parent_requests: list[dict[str, Any]] = []
        self.child_items: list[str] = []
        self.resumed_first_prompt = ""
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Step:
        found = re.search(MARK + r"(\S+):", first_prompt(body))
        with self._lock:
            if found is not None:
                self.child_items.append(found[1])
                if content_text(body["messages"][-1]).endswith("continue"):
                    self.resumed_first_prompt = first_prompt(body)
                return self.child(found[1], body)
            self.parent_requests.append(body)
            index = len(self.parent_requests) - 1
        if index >= len(self.parent):
            return Fail(400, f"the parent's script has no step {index + 1}")
        step = self.parent[index]
        return step(body) if callable(step) else step


def normalised(result: str) -> str:
    """A swarm's result with its random batch tag taken out (ids differ run to run)."""
    return re.sub(r"swarm-[0-9a-f]{6}-", "swarm-X-", result)


def child_reply(item: str, body: dict[str, Any]) -> Step:
    if item == "bad":
        return Fail(400, {"error": {"message": "this item broke the model"}})
    return say(f"reviewed {item}", usage=(40, 5))


async def swarm_turn(
    make_runtime: Callable[..., Any], items: list[str], **agent_options: Any
) -> tuple[str, Any, Script]:
    """One parent turn calling AgentSwarm over `items`: the swarm's result, the turn, the
    script (what the server saw)."""
    script = Script([calls(swarm_call(items)), say("all reviewed")], child_reply)
    runtime = await make_runtime(
        features=BUILTIN_FEATURES, config={"agents": {"max_concurrency": 4}}
    )
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), **agent_options)
        turn = await run_turn(agent, "review every module")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end
    [result] = tool_texts(script.parent_requests[1])
    return result, turn, script


async def test_a_swarm_on_ray_gives_what_the_local_backend_gives(
    make_runtime: Callable[..., Any], ray_instance: Any
) -> None:
    items = [f"m{n:02}.py" for n in range(8)] + ["bad"]
    local, _, _ = await swarm_turn(make_runtime, items)
    remote, turn, script = await swarm_turn(make_runtime, items, children_backend=ray_children())
    assert normalised(remote) == normalised(local)
    assert "<summary>completed: 8, failed: 1</summary>" in remote
    assert 'item="bad" outcome="failed">' in remote and "this item broke the model" in remote
    assert sorted(script.child_items) == sorted(items)
    started = [e for e in turn.events if isinstance(e, ev.SubagentStarted)]
    ended = [e for e in turn.events if isinstance(e, ev.SubagentEnded)]
    assert len(started) == len(ended) == 9
    usage = turn.end.usage_by_agent  # the children's tokens reached the parent's turn
    assert sum(1 for e in ended if usage[e.agent_id].input_tokens == 40) == 8


async def test_children_run_as_ray_tasks_on_the_shared_workspace(
    make_runtime: Callable[..., Any], ray_instance: Any, workspace: Path
) -> None:
    """Each child runs on a Ray node (its report says which), its Write lands in the same
    workspace, and its transcript comes back to the parent's session."""

    def child(item: str, body: dict[str, Any]) -> Step:
        if not tool_texts(body):
            return calls(Call("Write", {"path": f"{item}.txt", "content": f"by {item}\n"}))
        return say(f"wrote {item}")

    script = Script([calls(swarm_call(["a", "b"])), say("ok")], child)
    runtime = await make_runtime(features=BUILTIN_FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), children_backend=ray_children())
        await run_turn(agent, "go")
        backend = runtime.agent.subagents.backend
        await agent.aclose()
    [result] = tool_texts(script.parent_requests[1])
    assert "<summary>completed: 2, failed: 0</summary>" in result, result
    assert (workspace / "a.txt").read_text() == "by a\n"
    assert (workspace / "b.txt").read_text() == "by b\n"
    ids = re.findall(r'agent_id="([^"]+)"', result)
    assert isinstance(backend, RayChildren)
    assert set(backend.placed) == set(ids)
    assert set(backend.placed.values()) <= node_ids(ray_instance)
    for agent_id in ids:
        saved = transcript_path(runtime.session_dir, agent_id).read_text()
        assert MARK in saved and '"Write"' in saved


async def test_a_failed_ray_child_resumes_from_its_transcript(
    make_runtime: Callable[..., Any], ray_instance: Any
) -> None:
    def child(item: str, body: dict[str, Any]) -> Step:
        last = body["messages"][-1]
        if last["role"] == "user" and content_text(last).endswith("continue"):
            return say(f"recovered {item}")
        return child_reply(item, body)

    def resume(body: dict[str, Any]) -> Step:
        [result] = tool_texts(body)
        found = re.search(r'agent_id="([^"]+)" item="bad" outcome="failed"', result)
        assert found is not None, result
        return calls(
            Call("AgentSwarm", {"description": "again", "resume_agent_ids": {found[1]: "continue"}})
        )

    script = Script([calls(swarm_call(["good", "bad"])), resume, say("done")], child)
    runtime = await make_runtime(features=BUILTIN_FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), children_backend=ray_children())
        turn = await run_turn(agent, "go")
        await agent.aclose()
    assert turn.end.stop_reason == "end_turn", turn.end
    result = tool_texts(script.parent_requests[2])[-1]
    assert 'item="bad" outcome="completed">recovered bad</subagent>' in result, result
    assert script.child_items.count("bad") == 2 and script.child_items.count("good") == 1
    # the resumed run went on from its history: its first prompt came along
    assert script.resumed_first_prompt.startswith(MARK + "bad: review it.")


async def test_cancelling_the_parents_call_cancels_the_ray_tasks(
    make_runtime: Callable[..., Any], ray_instance: Any
) -> None:
    """Each child runs a long sleep; the parent's turn is cancelled while they run: the
    children end cancelled and none of their processes is left running."""
    tag = f"{secrets.randbelow(10**6):06d}"

    def child(item: str, body: dict[str, Any]) -> Step:
        if tool_texts(body):
            return say("the sleep ended: " + tool_texts(body)[-1])
        command = f"sleep 200.{tag}{len(item)} & wait"
        return calls(Call("Bash", {"command": command, "timeout": 250}))

    script = Script([calls(swarm_call(["a", "bb"])), say("stopped")], child)
    runtime = await make_runtime(features=BUILTIN_FEATURES)
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server), children_backend=ray_children())
        turn = asyncio.ensure_future(run_turn(agent, "go"))
        await _until(lambda: len(_sleeping(tag)) == 2 or turn.done())
        assert not turn.done(), turn.result().end
        agent.cancel()
        ended = await asyncio.wait_for(turn, 120)
        await agent.aclose()
    assert ended.end.stop_reason == "cancelled"
    finished = [e for e in ended.events if isinstance(e, ev.SubagentEnded)]
    assert sorted(e.status for e in finished) == ["cancelled", "cancelled"]
    await _until(lambda: not _sleeping(tag))


async def test_an_unreachable_cluster_fails_the_child_saying_why(
    make_runtime: Callable[..., Any],
) -> None:
    """No Ray initialised here and an address nobody answers on: the Agent call's result
    says the cluster could not be reached and how to go on; nothing is raised."""
    runtime = await make_runtime(features=BUILTIN_FEATURES)
    with ModelServer([]) as server:
        agent = Agent(
            runtime, openai_provider(server), children_backend=ray_children("127.0.0.1:9")
        )
        await agent.start()
        backend = runtime.agent.subagents.backend
        assert isinstance(backend, RayChildren)
        spec = ChildSpec("coder-x", "main", AgentProfile("coder", "codes"), "do it")
        outcome = await asyncio.wait_for(backend.run(spec, CancelToken()), 180)
        await agent.aclose()
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "Could not start the Ray cluster at 127.0.0.1:9" in outcome.error
    assert '[agents] backend = "local"' in outcome.error
    assert not backend.is_running("coder-x") and backend.known("coder-x")


async def test_the_config_picks_the_backend(make_runtime: Callable[..., Any]) -> None:
    assert children_backend(AgentsConfig()) is None
    factory = children_backend(AgentsConfig(backend="ray", ray_address="auto", ray_num_cpus=0.5))
    assert factory is not None
    runtime = await make_runtime(features=BUILTIN_FEATURES)
    with ModelServer([]) as server:
        agent = Agent(runtime, openai_provider(server), children_backend=factory)
        await agent.start()
        backend = runtime.agent.subagents.backend
        await agent.aclose()
    assert isinstance(backend, RayChildren)
    assert (backend.address, backend.num_cpus, backend.depth) == ("auto", 0.5, 0)
    assert runtime.agent.subagents.backend is None  # taken off the desk when the agent closed


async def _until(condition: Callable[[], bool], timeout: float = 120) -> None:
    """Wait (polling the state) until `condition` holds; fail after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await asyncio.sleep(0.05)


def _sleeping(tag: str) -> list[int]:
    """The running processes (not zombies) whose command is one of this test's sleeps
    (found by command line: the sandbox gives the shell pids of its own namespace)."""
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
