"""The sole-call rule: a tool with the `alone_in_reply` trait must be the only call of its
model reply (AgentSwarm: a swarm takes the whole reply, so nothing else races it).

With streaming dispatch a call enters the batch the moment its arguments are complete,
before the rest of the reply is known, so such a call is held until the batch is sealed
(every call of the reply added) and only then judged here. The other calls of the reply
are not affected: they run as usual.
"""

from __future__ import annotations

from collections.abc import Sequence

from deftly.contract.traits import traits_of


def must_be_alone(tool: object) -> bool:
    """Whether `tool` declares that it must be the only call of its reply."""
    traits = traits_of(tool)
    return traits is not None and traits.alone_in_reply


def alone_refusal(name: str, reply: Sequence[str]) -> str | None:
    """Why a call of `name` cannot run in a reply whose calls are named `reply` (this call
    included), or None when it is the reply's only call."""
    same = sum(1 for other in reply if other == name)
    others = sorted({other for other in reply if other != name})
    if same > 1:
        text = (
            f"{name} must be called one at a time: this reply called it {same} times, so none "
            f"of those calls ran. Call {name} once, wait for its result, then call it again "
            "for the rest of the work; or merge the work into a single call when one can "
            "cover it."
        )
        if others:
            text += f" {name} must also be the only tool call of its reply."
        return text
    if others:
        listed = ", ".join(others)
        return (
            f"{name} must be the only tool call in a model reply, and this reply also called "
            f"{listed}, so {name} did not run (the other calls ran as usual). Call {name} "
            "again in a reply of its own, and call any other tools after its result is back."
        )
    return None
