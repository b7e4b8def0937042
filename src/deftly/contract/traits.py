"""What a tool is like, declared once on the tool: the guards and defaults decide by these.

Plan mode, the permission engine's defaults, the shell's background mode and `deftly
serve`'s tool list read a tool's traits; none of them lists tool names. A new tool that
writes files, schedules work or stops tasks says so here and every guard treats it like
the built-in tool that does the same.

Who reads what:

- `read_only`: the permission engine (manual mode approves a read-only call inside the
  workspace), plan mode (a call proven read-only runs), MCP annotations.
- `destructive`, `idempotent`, `open_world`: MCP annotations (`deftly serve`), and the
  other way round for mounted MCP tools (their server's hints, when trusted).
- `writes_files`: plan mode (such a tool may write only the plan file, and writing the
  plan file needs no approval).
- `schedules_work`, `stops_tasks`: plan mode refuses such calls until the plan is approved.
- `stops_tasks`, `reads_task_output`: Bash offers background mode only when tools with
  both traits are registered (someone can follow and stop what it starts).
- `exits_plan_mode`: plan mode runs the user's review of the plan before such a call.
- `discloses_tools`: `deftly serve` leaves such a tool out of `tools/list` (MCP clients
  do their own tool disclosure).
"""

from __future__ import annotations

from deftly.contract.records import frozen


@frozen
class ToolTraits:
    """What a tool is or does, as the guards, the permission defaults and MCP hints see it.

    Every trait defaults to False: a tool that declares nothing gets no leniency (it is
    not read-only), and is blocked by nothing it does not declare.
    """

    read_only: bool = False
    """It changes nothing anywhere: the permission engine approves it unasked inside the
    workspace in manual mode, and MCP clients see `readOnlyHint`."""
    destructive: bool = False
    """What it changes may be lost for good (an MCP `destructiveHint`)."""
    idempotent: bool = False
    """Calling it again with the same arguments changes nothing more (`idempotentHint`)."""
    open_world: bool = False
    """It reaches beyond the workspace: processes, the network (`openWorldHint`)."""
    writes_files: bool = False
    """It writes workspace files at the paths its calls declare (Write, Edit). In plan
    mode such a tool may write only the plan file, which needs no approval there."""
    schedules_work: bool = False
    """It creates, changes or deletes work that runs later (cron prompts). Plan mode
    refuses it: scheduled work would run after planning, unapproved."""
    stops_tasks: bool = False
    """It stops background tasks (TaskStop). Plan mode refuses it; Bash offers background
    mode only when such a tool is registered."""
    reads_task_output: bool = False
    """It shows a background task's output while the task runs (TaskOutput). Bash offers
    background mode only when such a tool is registered."""
    exits_plan_mode: bool = False
    """It ends plan mode (ExitPlanMode): plan mode has the user review the plan before the
    call runs."""
    asks_user: bool = False
    """It puts a question to the person and waits for the answer (AskUserQuestion). It is
    offered only where someone can answer (the host gave an answerer), never in auto mode,
    and `deftly serve` lists it only to clients that can show a form (elicitation)."""
    uses_inbox: bool = False
    """It schedules prompts into the agent's inbox, or manages them (the cron tools). It is
    offered only while something consumes the inbox (an interactive `deftly run`, `--watch`,
    `deftly serve`, `Agent.watch()`): elsewhere nothing would ever run them."""
    delegates: bool = False
    """It hands work to sub-agents (Agent, AgentSwarm). It is offered only while a backend
    can run them (an agent loop installed one on the agent's `SubagentDesk`)."""
    alone_in_reply: bool = False
    """It must be the only call of its model reply (AgentSwarm): it waits until the reply is
    complete, and is refused, saying why, when the reply holds other calls too."""
    discloses_tools: bool = False
    """It is about the tool list itself (select_tools loads deferred tools). `deftly
    serve` does not list it: MCP clients do their own disclosure."""


def traits_of(tool: object) -> ToolTraits | None:
    """The traits `tool` declares, or None when it has none readable (a plugin that set
    `traits` to something else): a guard that must know fails closed on None."""
    traits = getattr(tool, "traits", None)
    return traits if isinstance(traits, ToolTraits) else None
