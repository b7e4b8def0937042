"""The system prompt: who the agent is, where it works, the workspace's own instructions,
the skills it may load, and how to use its tools.

Built once per agent and kept byte-for-byte the same for the whole session, so providers
that cache prompt prefixes keep hitting the cache; what changes later (a finished task, a
loaded skill, the mode) reaches the model as injections in the conversation instead.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from deftly.contract.fs import PathProbe
from deftly.contract.records import frozen

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".deftly/instructions.md")
"""The workspace's own instructions for agents, read in this order (each that exists)."""

MAX_INSTRUCTIONS_CHARS = 40_000
GIT_STATUS_LINES = 20

IDENTITY = """\
You are deftly, a coding agent working in the user's workspace through tools. You read,
search, edit and run things yourself rather than telling the user to; you finish the task
the user gave you, then say briefly what you did.

How to work:
- Look before you change: read the files you will edit, search for what you do not know.
- Make the smallest change that does the job; keep the project's style.
- Run the tests or the program to check your work when you can.
- Independent calls (reading several files, several searches) go in one reply: they run at
  the same time. Calls that depend on each other go in order, across replies.
- A tool result may end with a <system> block: it comes from the harness, not the user.
  Results marked ERROR failed; read why before trying again, and do not repeat a call that
  failed the same way.
- A call may be refused by the user's permission rules. Do not try to get around a refusal
  with another tool; ask the user, or do without.
- When you are done, reply without tool calls: that ends your turn."""


@frozen
class PromptContext:
    """What the prompt states about the environment."""

    workspace: Path
    additional_dirs: Sequence[Path] = ()
    today: date | None = None
    git_status: str | None = None
    instructions: Sequence[tuple[str, str]] = ()
    skills: str = ""
    mode: str | None = None


def build_system_prompt(context: PromptContext, *, base: str = IDENTITY) -> str:
    """The whole system prompt (deterministic in its inputs)."""
    today = (context.today or date.today()).isoformat()
    lines = [
        base,
        "",
        "# Environment",
        f"- Working directory: {context.workspace}",
    ]
    if context.additional_dirs:
        lines.append("- Also allowed: " + ", ".join(str(d) for d in context.additional_dirs))
    lines += [
        f"- Platform: {platform.system()} {platform.machine()}",
        f"- Today: {today}",
    ]
    if context.git_status is not None:
        lines += ["- Git status at the start of the session:", _indent(context.git_status)]
    else:
        lines.append("- Not a git repository.")
    for name, text in context.instructions:
        lines += ["", f"# Instructions from {name} (the workspace's own)", text.strip()]
    if context.skills.strip():
        lines += ["", "# Skills", context.skills.strip()]
    return "\n".join(lines) + "\n"


def read_instructions(workspace: Path, probe: PathProbe) -> list[tuple[str, str]]:
    """The workspace's instruction files that exist, as (name, text), within a size cap."""
    found: list[tuple[str, str]] = []
    budget = MAX_INSTRUCTIONS_CHARS
    for name in INSTRUCTION_FILES:
        path = workspace / name
        try:
            if probe.link_target(str(path)) is not None:
                continue  # a link could lead anywhere (a key file): only real files count
            raw = probe.read_header(str(path), budget * 4)
        except OSError:
            continue
        if not raw:
            continue
        text = raw.decode("utf-8", errors="replace")[:budget]
        budget -= len(text)
        found.append((name, text))
        if budget <= 0:
            break
    return found


def git_status(workspace: Path, probe: PathProbe) -> str | None:
    """`git status --short --branch`, its first lines; None outside a repository."""
    try:
        done = probe.run_command(
            ["git", "status", "--short", "--branch"], cwd=str(workspace), timeout=5
        )
    except (OSError, TimeoutError):
        return None
    if done.returncode != 0:
        return None
    lines = done.stdout.decode("utf-8", errors="replace").splitlines()
    if len(lines) > GIT_STATUS_LINES:
        lines = [*lines[:GIT_STATUS_LINES], f"... and {len(lines) - GIT_STATUS_LINES} more"]
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())
