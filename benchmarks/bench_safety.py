"""What safety costs: the path policy, the permission gate, and external hooks.

1. `Workspace.locate` on a path six directories deep (symlinks followed component by
   component, containment on both paths, secret-name checks) against `os.path.realpath`
   of the same path (the floor: the kernel-faithful resolution alone).
2. One small read through the whole runtime, in manual mode with no rules and with 30
   rules loaded, with and without the permission gate and plan guard installed, against a
   plain `open().read()`. The difference between the two runtime figures is the gate's
   cost per call (it decides twice: deny rules first, the whole chain last).
3. A call with one PreToolUse command hook (`true`) against spawning `true` directly
   through asyncio (the floor: one process start and wait).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import PeekTool

from _common import best_of, clock, isolate, row
from deftly import Runtime
from deftly.policy import PathOp, Workspace

LOCATES = 20_000
CALLS = 1_000
HOOK_CALLS = 50
RULES = {
    "allow": [f"Bash(make target{i})" for i in range(10)],
    "ask": [f"Peek(/elsewhere/{i}/**)" for i in range(10)],
    "deny": [f"Peek(**/private{i}/**)" for i in range(10)],
}


def build_workspace(home: Path) -> tuple[Path, Path]:
    ws = home / "ws"
    deep = ws / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (ws / "link").symlink_to("a/b")
    target = deep / "file.txt"
    target.write_text("hello\n" * 10)
    return ws, target


def path_policy(ws: Path, target: Path) -> None:
    workspace = Workspace(ws)
    raw = "link/c/d/e/file.txt"

    def policy() -> float:
        start = clock()
        for _ in range(LOCATES):
            workspace.locate(raw, PathOp.READ)
        return (clock() - start) / LOCATES * 1e6

    def floor() -> float:
        joined = str(ws / raw)
        start = clock()
        for _ in range(LOCATES):
            os.path.realpath(joined)
        return (clock() - start) / LOCATES * 1e6

    base = best_of(5, floor)
    print("path policy, one path six components deep through a symlink (µs per path)")
    row("os.path.realpath (floor)", base, "µs")
    row("Workspace.locate (lexical + real containment, secrets)", best_of(5, policy), "µs", base)


def gate_cost(ws: Path, target: Path, rules: dict[str, list[str]]) -> None:
    async def through_runtime(gated: bool) -> float:
        async with Runtime(
            ws, config={"permissions": rules}, plugins=False, builtins=False, tools=[PeekTool]
        ) as rt:
            if not gated:
                for hook_id in ("permissions.deny", "permissions", "plan-mode"):
                    rt.before_hooks._entries = [
                        e for e in rt.before_hooks._entries if e.id != hook_id
                    ]
            calls = [
                {"id": f"c{i}", "name": "Peek", "arguments": {"path": str(target)}}
                for i in range(CALLS)
            ]
            await rt.run_batch(calls[:10])
            start = clock()
            for call in calls:
                await rt.run_batch([call])
            return (clock() - start) / CALLS * 1e6

    def plain() -> float:
        start = clock()
        for _ in range(CALLS):
            with open(target, "rb") as handle:
                handle.read()
        return (clock() - start) / CALLS * 1e6

    count = sum(len(v) for v in rules.values())
    base = best_of(5, plain)
    ungated = best_of(3, lambda: asyncio.run(through_runtime(False)))
    gated = best_of(3, lambda: asyncio.run(through_runtime(True)))
    print(f"one small read per batch, manual mode, {count} rules (µs per call)")
    row("open().read() (floor)", base, "µs")
    row("runtime without permission gate and plan guard", ungated, "µs", base)
    row("runtime with them (the default)", gated, "µs", base)
    row("permission gate + plan guard, per call", gated - ungated, "µs")


def gate_direct(ws: Path, target: Path) -> None:
    """The gate's two hooks (deny check first, the whole chain last) called directly on a
    resolved call, as the executor calls them: with 30 rules against none (the floor)."""
    from tests.helpers import PathParams

    from deftly.contract.tool import CancelToken
    from deftly.env.local import LocalEnv
    from deftly.execution import EventBus, ToolCall
    from deftly.execution.hooks import BeforeContext
    from deftly.execution.permission_gate import PermissionGate
    from deftly.policy.paths import one_look
    from deftly.policy.permissions import PermissionEngine, RuleBook

    workspace = Workspace(ws)
    tool = PeekTool(LocalEnv(), workspace)
    args = PathParams(path=str(target))

    def per_call(rules: dict[str, list[str]]) -> float:
        gate = PermissionGate(PermissionEngine(workspace, RuleBook.from_lists(**rules)), EventBus())

        async def run() -> float:
            took = 0.0
            for i in range(CALLS):
                with one_look():  # as the executor prepares a call: resolve, then the hooks
                    execution = tool.resolve(args)
                    call = ToolCall(f"g{i}", "Peek", "{}")
                    ctx = BeforeContext(call, tool, args, execution, [call], CancelToken())
                    start = clock()
                    await gate.check(ctx)
                    await gate.confirm(ctx)
                    took += clock() - start
            return took / CALLS * 1e6

        return asyncio.run(run())

    base = best_of(5, lambda: per_call({}))
    ruled = best_of(5, lambda: per_call(RULES))
    count = sum(len(v) for v in RULES.values())
    print("the permission gate's two hooks, called directly (µs per call)")
    row("no rules (floor)", base, "µs")
    row(f"{count} rules (10 allow, 10 ask, 10 deny)", ruled, "µs", base, "target <= 30 µs")


def hook_cost(ws: Path, target: Path) -> None:
    async def with_hook() -> float:
        hooks = {"PreToolUse": [{"matcher": "Peek", "command": "true"}]}
        async with Runtime(
            ws, config={"hooks": hooks}, plugins=False, builtins=False, tools=[PeekTool]
        ) as rt:
            start = clock()
            for i in range(HOOK_CALLS):
                await rt.call("Peek", {"path": str(target)}, call_id=f"h{i}")
            return (clock() - start) / HOOK_CALLS * 1e3

    async def bare() -> float:
        start = clock()
        for _ in range(HOOK_CALLS):
            proc = await asyncio.create_subprocess_shell("true")
            await proc.wait()
        return (clock() - start) / HOOK_CALLS * 1e3

    base = best_of(3, lambda: asyncio.run(bare()))
    hooked = best_of(3, lambda: asyncio.run(with_hook()))
    print("a call with one PreToolUse command hook (ms per call)")
    row("spawn `true` through the shell and wait (floor)", base, "ms")
    row("Peek with a PreToolUse hook running `true`", hooked, "ms", base)


def main() -> None:
    home = isolate()
    ws, target = build_workspace(home)
    path_policy(ws, target)
    gate_cost(ws, target, {})
    gate_cost(ws, target, RULES)
    gate_direct(ws, target)
    hook_cost(ws, target)


if __name__ == "__main__":
    main()
