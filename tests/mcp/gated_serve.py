"""`deftly serve` with a test gate that asks the runtime's approver, run as a real process.

    python -m tests.mcp.gated_serve WORKSPACE DECISIONS_FILE [--transport http]

The permission engine (built separately) asks `runtime.approver` when a call needs
approval. This stand-in asks for every `Sleep` call with `write: true`, records each answer
in DECISIONS_FILE, and vetoes a rejected call with the approver's feedback. It runs first
(order -1000) and never approves on its own, so it keeps working once the real engine
is installed behind it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from deftly.cli.mcp import Transport, serve
from deftly.contract.result import ToolResult
from deftly.execution.hooks import BeforeContext, Decision, Veto
from deftly.policy.approval import ApprovalRequest
from deftly.runtime import Runtime


def install_gate(runtime: Runtime, decisions: Path) -> None:
    async def gate(ctx: BeforeContext) -> Decision:
        if ctx.tool.name != "Sleep" or not getattr(ctx.args, "write", False):
            return None
        assert runtime.approver is not None
        response = await runtime.approver.request(
            ApprovalRequest(
                call_id=ctx.call.id,
                tool=ctx.tool.name,
                action=ctx.execution.description or f"Writing {ctx.args.path}",
                args=ctx.args,
                display=ctx.execution.display,
                approval_rule=ctx.execution.approval_rule,
                reason="the test gate asks before every write",
            )
        )
        with decisions.open("a", encoding="utf-8") as handle:
            handle.write(response.decision + "\n")
        if response.approved:
            return None
        return Veto(ToolResult.error(response.feedback or "rejected"))

    runtime.before_hooks.add("test-ask-gate", gate, order=-1000)


if __name__ == "__main__":
    workspace, decisions = Path(sys.argv[1]), Path(sys.argv[2])
    transport = Transport(sys.argv[4]) if sys.argv[3:4] == ["--transport"] else Transport.stdio
    asyncio.run(
        serve(
            workspace,
            "auto",
            transport,
            port=0,
            setup=lambda rt: install_gate(rt, decisions),
        )
    )
