"""The built-in sub-agent types: `coder` (the default), `explore` and `plan`.

`explore` and `plan` read and never change anything: their tools are named (the web tools
are on the list, so they are there exactly when the parent has them). `coder` has every
tool its parent has; it does not delegate further (its profile names no delegating tool,
so its desk gets no backend and the Agent tools are not offered to it).
"""

from __future__ import annotations

from deftly.session.subagents import AgentProfile

DEFAULT_PROFILE = "coder"

READ_ONLY_TOOLS = (
    "Read",
    "Glob",
    "Grep",
    "ReadMediaFile",
    "ListDirectory",
    "FetchURL",
    "WebSearch",
)

CODER = AgentProfile(
    name="coder",
    description=(
        "A general coding agent for a self-contained task: it reads, edits, runs commands "
        "and tests, and reports what it did."
    ),
    instructions=(
        "Carry the task through: make the changes, check them (run the tests or the "
        "program when you can), and report the files you changed and how you checked them."
    ),
)

EXPLORE = AgentProfile(
    name="explore",
    description=(
        "A fast read-only agent for finding things in the codebase (or on the web): where "
        "something is defined, how a flow works, which files matter. It changes nothing."
    ),
    tools=READ_ONLY_TOOLS,
    instructions=(
        "You only read and search; you cannot change files or run commands. Search widely "
        "first, then read what matters. Answer the question you were asked with evidence: "
        "file paths with line numbers and short quotes."
    ),
)

PLAN = AgentProfile(
    name="plan",
    description=(
        "A read-only planner: it studies the code and returns a step-by-step "
        "implementation plan (files to change, risks, how to test). It changes nothing."
    ),
    tools=READ_ONLY_TOOLS,
    instructions=(
        "You only read and search; you cannot change files or run commands. Study the code "
        "the task touches, then reply with a concrete plan: the steps in order, the files "
        "and functions each step changes, the risks, and how to check the result."
    ),
)

BUILTIN_PROFILES: tuple[AgentProfile, ...] = (CODER, EXPLORE, PLAN)
