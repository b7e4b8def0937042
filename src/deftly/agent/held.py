"""Injections held over to the next process: what the model had still to hear when its
agent closed.

`deftly run` is one turn per process. A turn that stops before the model hears why (a
budget used up, the step limit) leaves that reason in the agent's injection channel,
which lives in memory; without this, `deftly run --continue` would start a model that was
never told. On close the agent keeps what is still pending in the session store, and a
resumed agent in a new process pushes it back. An agent started again on the same runtime
still has the pending injections in memory and restores nothing (so nothing is told
twice).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from deftly.session.injections import Injections
from deftly.session.store import StateStore


class HeldInjections(BaseModel):
    """The store value: pending injections as `[kind, text]` pairs, in order."""

    model_config = ConfigDict(extra="ignore")
    pending: list[tuple[str, str]] = []


def held_key(agent_id: str) -> str:
    """The session-store key of `agent_id`'s held injections."""
    return f"agent.held.{agent_id}"


def hold(store: StateStore, agent_id: str, injections: Injections) -> None:
    """Keep what is pushed and not yet drained (an empty list clears what was kept)."""
    slot = store.slot(held_key(agent_id), HeldInjections)
    pending = [(item.kind, item.text) for item in injections.peek()]
    if pending or slot.get().pending:
        slot.set(HeldInjections(pending=pending))


def restore(store: StateStore, agent_id: str, injections: Injections) -> None:
    """Push back what a closed agent kept, unless the channel still holds its own."""
    slot = store.slot(held_key(agent_id), HeldInjections)
    kept = slot.get().pending
    if not kept:
        return
    if not injections.peek():
        for kind, text in kept:
            injections.push(kind, text)
    slot.set(HeldInjections())
