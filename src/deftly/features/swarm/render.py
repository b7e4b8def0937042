"""The swarm's result as the model reads it: one `<agent_swarm_result>` block, the counts,
a resume hint when something is left to continue, and one `<subagent>` per entry in
launch order (resumes first, then the items in the order given).

The XML shape is the reference's (models read it); attribute values are escaped, the
sub-agents' texts are kept as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from deftly.contract.records import frozen
from deftly.features.swarm.plan import Entry
from deftly.session.subagents import ChildOutcome

SwarmOutcome: TypeAlias = Literal["completed", "failed", "aborted"]

RESUME_HINT = (
    "Some sub-agents did not finish. To go on with their work, call AgentSwarm with "
    "resume_agent_ids mapping the agent_id values of this result to a prompt (usually "
    '"continue").'
)


@frozen
class Report:
    """How one entry of the swarm went: its outcome, or None when it never started."""

    entry: Entry
    agent_id: str
    outcome: ChildOutcome | None
    stopped_by_user: bool = False

    @property
    def started(self) -> bool:
        """Whether the sub-agent was launched."""
        return self.outcome is not None

    @property
    def result(self) -> SwarmOutcome:
        """How the entry ended, in the result's three words."""
        if self.outcome is None or self.outcome.status == "cancelled":
            return "aborted"
        return "completed" if self.outcome.ok else "failed"

    @property
    def resumable_id(self) -> str | None:
        """The id a later call may resume: a sub-agent that exists (it started, or it is
        an earlier one); one never started does not exist yet."""
        if self.outcome is not None or self.entry.resume_id is not None:
            return self.agent_id
        return None

    def body(self) -> str:
        """The sub-agent's final text, or why there is none."""
        outcome = self.outcome
        if outcome is None:
            if self.stopped_by_user:
                return "The user interrupted the swarm before this sub-agent started."
            return "The swarm was stopped before this sub-agent started."
        if outcome.ok:
            return outcome.text.strip() or "(the sub-agent finished without a final message)"
        if outcome.error:
            return outcome.error
        if outcome.status == "cancelled":
            return "The sub-agent was stopped before it finished."
        return "The sub-agent failed without saying why; resume it to find out."


def render_swarm(reports: Sequence[Report]) -> str:
    """The `<agent_swarm_result>` block for `reports`, in their order."""
    counts = {word: sum(1 for r in reports if r.result == word) for word in _WORDS}
    summary = f"completed: {counts['completed']}, failed: {counts['failed']}"
    if counts["aborted"]:
        summary += f", aborted: {counts['aborted']}"
    lines = ["<agent_swarm_result>", f"<summary>{summary}</summary>"]
    if any(r.result != "completed" and r.resumable_id for r in reports):
        lines.append(f"<resume_hint>{RESUME_HINT}</resume_hint>")
    lines += [_subagent(report) for report in reports]
    lines.append("</agent_swarm_result>")
    return "\n".join(lines)


_WORDS: tuple[SwarmOutcome, ...] = ("completed", "failed", "aborted")


def _subagent(report: Report) -> str:
    attributes: list[tuple[str, str]] = []
    if report.entry.resumes:
        attributes.append(("mode", "resume"))
    if (agent_id := report.resumable_id) is not None:
        attributes.append(("agent_id", agent_id))
    if report.entry.item is not None:
        attributes.append(("item", report.entry.item))
    if report.result == "aborted":
        attributes.append(("state", "started" if report.started else "not_started"))
    attributes.append(("outcome", report.result))
    rendered = "".join(f' {name}="{_attribute(value)}"' for name, value in attributes)
    return f"<subagent{rendered}>{report.body()}</subagent>"


def _attribute(value: str) -> str:
    """`value` escaped for a double-quoted XML attribute (newlines kept as references)."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
        .replace("\t", "&#9;")
    )
