"""Parents and sub-agents against one scripted model server: a script keyed by who asks.

A child's system prompt carries the sub-agent role, and its first user message is the
prompt its parent wrote, so a `Router` answers the parent from one list of steps and each
child from the list of the marker its prompt contains.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from deftly.agent import events as ev
from deftly.agent.children import ROLE
from deftly.features import BUILTIN_FEATURES
from deftly.features.api import Feature
from tests.scripted.script import Fail, Step

ROLE_LINE = ROLE.splitlines()[0]

Planned: TypeAlias = Step | Callable[[dict[str, Any]], Step]
"""A step, or a function of the request's body that makes it (to use an id a result gave)."""


def features() -> tuple[Feature, ...]:
    """The built-in features (the agents feature among them)."""
    return BUILTIN_FEATURES


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a recorded request (either wire)."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "".join(p.get("text", "") for p in system if isinstance(p, dict))
    for message in body.get("messages", []):
        if message.get("role") == "system":
            return _text(message.get("content"))
    return ""


def first_prompt(body: dict[str, Any]) -> str:
    """The first user message of a recorded request."""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def is_child(body: dict[str, Any]) -> bool:
    return ROLE_LINE in system_text(body)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class Router:
    """A script function: the parent's steps in order, each child's by the marker in its
    first prompt. Records which requests came from whom."""

    def __init__(self, parent: Sequence[Planned], children: dict[str, Sequence[Planned]]) -> None:
        self.parent = list(parent)
        self.children = {k: list(v) for k, v in children.items()}
        self.seen: dict[str, list[dict[str, Any]]] = {"parent": []}
        self._lock = threading.Condition()
        self.child_asked = threading.Event()
        """Set when the first request of a child arrives."""

    def __call__(self, body: dict[str, Any]) -> Step:
        with self._lock:
            if not is_child(body):
                return self._next("parent", self.parent, body)
            self.child_asked.set()
            prompt = first_prompt(body)
            for marker, steps in self.children.items():
                if marker in prompt:
                    return self._next(marker, steps, body)
            return Fail(400, f"no child script for the prompt {prompt[:80]!r}")

    def wait_for(self, *keys: str, timeout: float = 30) -> bool:
        """Wait until a request of each of these scripts ("parent", a marker) arrived."""
        with self._lock:
            return self._lock.wait_for(lambda: all(k in self.seen for k in keys), timeout)

    def _next(self, key: str, steps: list[Planned], body: dict[str, Any]) -> Step:
        seen = self.seen.setdefault(key, [])
        seen.append(body)
        self._lock.notify_all()
        if len(seen) > len(steps):
            return Fail(400, f"the {key} script has no step {len(seen)}")
        step = steps[len(seen) - 1]
        return step(body) if callable(step) else step


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results' texts of a recorded OpenAI request, in order."""
    return [_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]


def last_tool_result(body: dict[str, Any]) -> str:
    results = tool_results(body)
    assert results, json.dumps(body)[:500]
    return results[-1]


def of(events: Sequence[ev.AgentEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def reported_id(body: dict[str, Any]) -> str:
    """The `agent_id:` an Agent result in the request's last tool message names."""
    found = re.search(r"agent_id: (\S+)", last_tool_result(body))
    assert found is not None, last_tool_result(body)
    return found.group(1)


def agent_call(prompt: str, **extra: Any) -> Any:
    """An Agent call (a scripted tool call)."""
    from tests.scripted.script import Call

    return Call("Agent", {"prompt": prompt, "description": "a sub-task", **extra})
