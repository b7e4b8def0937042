"""What the Agent tool tells the model: a finished run, a failed one, a background start,
and the list of agent types in its description."""

from __future__ import annotations

from collections.abc import Iterable

from deftly.session.subagents import AgentProfile, ChildOutcome


def completed(outcome: ChildOutcome) -> str:
    """A foreground run that finished: the child's final text as its summary."""
    return (
        f"agent_id: {outcome.agent_id}\n"
        f"actual_subagent_type: {outcome.profile}\n"
        "status: completed\n\n"
        f"[summary]\n{outcome.text.strip() or '(the sub-agent wrote no final text)'}"
    )


def failed(outcome: ChildOutcome) -> str:
    """A run that did not finish: why, and (after a timeout) how to go on."""
    text = (
        f"agent_id: {outcome.agent_id}\n"
        f"actual_subagent_type: {outcome.profile}\n"
        "status: failed\n\n"
        f"subagent error: {outcome.error or 'unknown error'}"
    )
    if outcome.status == "timed_out":
        text += (
            f'\nresume_hint: Continue with Agent(resume="{outcome.agent_id}", '
            'prompt="continue"). Use agent_id only; do not set subagent_type.'
        )
    return text


def usage_note(outcome: ChildOutcome) -> str:
    """What the run cost, and how to continue the same sub-agent."""
    return (
        f"The sub-agent took {outcome.steps} step{'s' if outcome.steps != 1 else ''} "
        f"({outcome.input_tokens:,} input and {outcome.output_tokens:,} output tokens). "
        f'To continue it later, call Agent(resume="{outcome.agent_id}", prompt="...").'
    )


def background(task_id: str, agent_id: str, profile: str, description: str) -> str:
    """A run started in the background: where it is, and how its end arrives."""
    return (
        f"task_id: {task_id}\n"
        "status: running\n"
        f"agent_id: {agent_id}\n"
        f"actual_subagent_type: {profile}\n"
        "automatic_notification: true\n\n"
        f"description: {description}\n\n"
        "next_step: The completion arrives automatically in a later turn — do NOT wait, "
        "poll, or call TaskOutput on it; continue with other work or hand back to the "
        "user. (If you have nothing to do until it finishes, run such tasks in the "
        "foreground next time.)\n"
        f'resume_hint: To continue or recover this same subagent later, call Agent(resume="'
        f'{agent_id}", prompt="..."). The parameter is agent_id ("{agent_id}"), NOT '
        f'task_id ("{task_id}").'
    )


def finished(task_id: str, description: str, outcome: ChildOutcome) -> str:
    """The notice a background run's parent reads when it ends: the report, or why it
    did not finish and how to go on."""
    head = f"Background agent task {task_id} ({description})"
    if outcome.ok:
        return f"{head} completed. The sub-agent's report:\n\n{completed(outcome)}"
    return (
        f"{head} ended: {outcome.status}.\n\n{failed(outcome)}\n\n"
        f'To recover or continue this sub-agent, call Agent(resume="{outcome.agent_id}", '
        'prompt="Pick up where you left off; ..."). Use its agent_id, not the task id.'
    )


def tool_set(profile: AgentProfile, available: Iterable[str]) -> str:
    """`all`, `all except X, Y`, `none` or `A, B`: the tools a type would have here."""
    have = list(available)
    denied = set(profile.disallowed_tools)
    if profile.tools is None:
        missing = [name for name in have if name in denied]
        return f"all except {', '.join(missing)}" if missing else "all"
    listed = [name for name in profile.tools if name in have and name not in denied]
    return ", ".join(listed) if listed else "none"


def agent_types(profiles: Iterable[AgentProfile], available: Iterable[str]) -> str:
    """One entry per type: its name, what it is for, and its tools here."""
    names = list(available)
    lines: list[str] = []
    for profile in profiles:
        lines.append(f"- {profile.name}: {profile.description}")
        lines.append(f"  Tools: {tool_set(profile, names)}")
    return "\n".join(lines) if lines else "- (none)"
