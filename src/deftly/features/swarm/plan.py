"""A swarm's plan: the checked arguments of one AgentSwarm call, expanded into one entry
per sub-agent (resumes first, then one per item), before anything starts.

Everything here is pure: a call that cannot run as asked is refused with a sentence that
says what to change, and no sub-agent is launched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deftly.contract.errors import ToolError
from deftly.contract.records import frozen

PLACEHOLDER = "{{item}}"
"""What `prompt_template` must hold: each item's text goes there (every occurrence)."""
MAX_SUBAGENTS = 128
"""The most sub-agents one swarm runs (items and resumes together)."""
MIN_ITEMS = 2
"""A swarm of one item is an Agent call: fewer than this needs resumes."""


@frozen
class Entry:
    """One sub-agent of the swarm: its prompt, and either the item it works on or the id
    of the earlier sub-agent it resumes."""

    prompt: str
    item: str | None = None
    resume_id: str | None = None

    @property
    def resumes(self) -> bool:
        """Whether this entry continues an earlier sub-agent."""
        return self.resume_id is not None


def plan_swarm(
    *,
    items: Sequence[str] | None,
    prompt_template: str | None,
    resume_agent_ids: Mapping[str, str] | None,
    remembered_items: Mapping[str, str] | None = None,
) -> list[Entry]:
    """The swarm's entries in launch order, or `ToolError` saying what to fix.

    `remembered_items` maps the ids of earlier swarms' sub-agents to their item, so a
    resumed one is reported with the item it worked on.
    """
    resumes = _resumes(resume_agent_ids or {}, remembered_items or {})
    texts = [item.strip() for item in items or ()]
    if len(texts) < MIN_ITEMS and not resumes:
        raise ToolError(
            f"AgentSwarm needs at least {MIN_ITEMS} items, unless resume_agent_ids is given "
            "(one task is a job for a single sub-agent, not a swarm). Pass two or more "
            "items, or resume earlier sub-agents with resume_agent_ids."
        )
    if len(texts) + len(resumes) > MAX_SUBAGENTS:
        raise ToolError(
            f"AgentSwarm runs at most {MAX_SUBAGENTS} sub-agents in one call, and this call "
            f"asks for {len(texts) + len(resumes)}. Split the work into several swarms, one "
            "after the other."
        )
    if not texts:
        return resumes
    for number, text in enumerate(texts, 1):
        if not text:
            raise ToolError(
                f"Item {number} is blank: every item must say what its sub-agent works on. "
                "Remove it or fill it in."
            )
    if prompt_template is None or not prompt_template.strip():
        raise ToolError(
            "prompt_template is required when items are given: it is the prompt each "
            f"sub-agent gets, with {PLACEHOLDER} where its item goes."
        )
    if PLACEHOLDER not in prompt_template:
        raise ToolError(
            f"prompt_template must include the {PLACEHOLDER} placeholder (exactly so): it "
            "marks where each item goes, so every sub-agent gets its own task."
        )
    spawns: list[Entry] = []
    first_with: dict[str, int] = {}
    for number, text in enumerate(texts, 1):
        prompt = prompt_template.replace(PLACEHOLDER, text)
        earlier = first_with.setdefault(prompt, number)
        if earlier != number:
            raise ToolError(
                f"Items {earlier} and {number} give the same prompt, and AgentSwarm runs "
                "distinct sub-agents only. Drop the repeated item, or make the items differ."
            )
        spawns.append(Entry(prompt, item=text))
    return resumes + spawns


def _resumes(requested: Mapping[str, str], remembered: Mapping[str, str]) -> list[Entry]:
    entries: list[Entry] = []
    for raw_id, raw_prompt in requested.items():
        agent_id, prompt = raw_id.strip(), raw_prompt.strip()
        if not agent_id:
            raise ToolError(
                "resume_agent_ids has a blank agent id: use the agent_id values of an "
                "earlier AgentSwarm or Agent result."
            )
        if not prompt:
            raise ToolError(
                f'resume_agent_ids gives "{agent_id}" a blank prompt: say what it should do '
                'next (usually "continue").'
            )
        entries.append(Entry(prompt, item=remembered.get(agent_id), resume_id=agent_id))
    return entries
