"""External command hooks: `PreToolUse` and `PostToolUse` commands from the `[hooks]` config.

Each hook names a tool matcher (a regular expression matched against the whole tool name;
empty or "*" matches every tool), a shell command and a timeout. The command runs in the
workspace with one JSON object on stdin:

    {"event": "PreToolUse", "hook_event_name": "PreToolUse", "tool_name": "Bash",
     "tool_input": {...}, "tool_call_id": "...", "workspace": "/repo", "cwd": "/repo",
     "session_id": "...", "permission_mode": "manual"}

PostToolUse adds `"tool_response": {"output": "...", "is_error": false, "truncated": false}`.

A hook blocks with exit status 2 (the reason is its stderr) or by printing
`{"decision": "deny", "reason": "..."}` (the `hookSpecificOutput.permissionDecision` form
other agents use works too). Any other failure -- another exit status, a command that
cannot start, a timeout -- does not block: it is reported as a `RuntimeNotice` of kind
"hook" and logged. A hook's whole process group is killed at its timeout (and when it
finishes), so no hook process outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from deftly.contract.identity import Identity
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult, output_text
from deftly.contract.tool import CancelToken
from deftly.execution.calls import Outcome
from deftly.execution.events import EventBus, RuntimeNotice
from deftly.execution.hooks import (
    AfterContext,
    AfterHook,
    BeforeContext,
    BeforeHook,
    HookChain,
    HookOrder,
    Veto,
)

log = logging.getLogger(__name__)

HookEvent = Literal["PreToolUse", "PostToolUse"]
Status = Literal["ok", "blocked", "failed", "timeout", "cancelled"]

NOTICE_KIND = "hook"
RESPONSE_CHARS = 10_000
"""How much of a tool's output a PostToolUse hook receives."""
_POLL_FIRST = 0.005
_POLL_MAX = 0.05
_PIPE_GRACE = 2.0
"""After the hook's group is killed, how long to wait for its pipes to close (a process
that left the group on purpose may hold them)."""
_KEEP_BYTES = 64 * 1024
"""How much of a hook's stdout/stderr is kept (the rest is read and dropped)."""


@frozen
class CommandHook:
    """One configured external hook: the event it runs for, its shell command, the tool names it
    matches, its timeout, and where it was configured."""

    event: HookEvent
    command: str
    matcher: str = ""
    timeout: float = 30.0
    origin: str = ""
    """Where it was configured ("[hooks] PreToolUse #1 in /repo/.deftly/config.toml")."""

    def matches(self, tool: str) -> bool:
        """Whether the hook runs for `tool` (an empty or `*` matcher runs for all; else the regular
        expression must match the whole name)."""
        if self.matcher in ("", "*"):
            return True
        return re.fullmatch(self.matcher, tool) is not None

    @property
    def label(self) -> str:
        """The hook for a message: its event and its command."""
        return f"{self.event} hook `{self.command}`"


@frozen
class HookOutcome:
    """How one hook run ended: ok, blocked (with its reason), failed, timed out or cancelled, with
    its exit code and some of its output."""

    hook: CommandHook
    status: Status
    exit_code: int | None = None
    reason: str | None = None
    """Why it blocked (for "blocked"), or what went wrong (for "failed"/"timeout")."""
    stdout: str = ""
    stderr: str = ""

    @property
    def blocked(self) -> bool:
        """Whether the hook blocked the call."""
        return self.status == "blocked"


class ExternalHooks:
    """Runs the configured command hooks around tool calls."""

    def __init__(
        self,
        hooks: Sequence[CommandHook],
        *,
        workspace: Path,
        session_id: str,
        events: EventBus,
        mode: Callable[[], str] = lambda: "manual",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.hooks = list(hooks)
        self.workspace = workspace
        self.session_id = session_id
        self.events = events
        self.mode = mode
        self.environ = environ

    def install(
        self, before: HookChain[BeforeHook], after: HookChain[AfterHook]
    ) -> Callable[[], None]:
        """Add the before- and after-hooks the configured commands need to the chains; returns the
        function that removes them."""
        removers: list[Callable[[], None]] = []
        if any(h.event == "PreToolUse" for h in self.hooks):
            removers.append(
                before.add("hooks.PreToolUse", self.pre_tool_use, order=HookOrder.EXTERNAL)
            )
        if any(h.event == "PostToolUse" for h in self.hooks):
            removers.append(after.add("hooks.PostToolUse", self.post_tool_use))

        def remove() -> None:
            for remover in removers:
                remover()

        return remove

    def matching(self, event: HookEvent, tool: str) -> list[CommandHook]:
        """The hooks for this event and tool, each command once (first one wins)."""
        seen: set[str] = set()
        found = []
        for hook in self.hooks:
            if hook.event == event and hook.command not in seen and hook.matches(tool):
                seen.add(hook.command)
                found.append(hook)
        return found

    # -- the two chain hooks -------------------------------------------------------------

    async def pre_tool_use(self, ctx: BeforeContext) -> Veto | None:
        """Run the matching PreToolUse commands; the first that blocks vetoes the call with its
        reason."""
        hooks = self.matching("PreToolUse", ctx.call.name)
        if not hooks:
            return None
        payload = self._payload("PreToolUse", ctx.call.name, ctx.call.id, ctx.args)
        outcomes = await self.run_all(hooks, payload, ctx.cancel, identity=ctx.identity)
        for outcome in outcomes:
            if outcome.blocked:
                return Veto(
                    ToolResult.error(
                        f'Tool "{ctx.call.name}" was blocked by a PreToolUse hook: {outcome.reason}'
                    )
                )
        return None

    async def post_tool_use(self, ctx: AfterContext) -> ToolResult | None:
        """Run the matching PostToolUse commands on a call that ran, giving them its result; what a
        blocking one objects is added to the result's note for the model."""
        if ctx.outcome is not Outcome.EXECUTED:
            return None
        hooks = self.matching("PostToolUse", ctx.call.name)
        if not hooks:
            return None
        text = output_text(ctx.result.output)
        payload = self._payload("PostToolUse", ctx.call.name, ctx.call.id, ctx.args)
        payload["tool_response"] = {
            "output": text[:RESPONSE_CHARS],
            "is_error": ctx.result.is_error,
            "truncated": len(text) > RESPONSE_CHARS,
        }
        outcomes = await self.run_all(hooks, payload, None, identity=ctx.identity)
        reasons = [o.reason for o in outcomes if o.blocked and o.reason]
        if not reasons:
            return None
        feedback = " ".join(f"A PostToolUse hook objected: {r}" for r in reasons)
        note = f"{ctx.result.note}\n{feedback}" if ctx.result.note else feedback
        return ctx.result.with_(note=note)

    # -- running -------------------------------------------------------------------------

    def _payload(self, event: HookEvent, tool: str, call_id: str, args: Any) -> dict[str, Any]:
        return {
            "event": event,
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": _plain(args),
            "tool_call_id": call_id,
            "workspace": str(self.workspace),
            "cwd": str(self.workspace),
            "session_id": self.session_id,
            "permission_mode": str(self.mode()),
        }

    async def run_all(
        self,
        hooks: Sequence[CommandHook],
        payload: Mapping[str, Any],
        cancel: CancelToken | None,
        *,
        identity: Identity | None = None,
    ) -> list[HookOutcome]:
        """Run hooks in parallel; outcomes in the order the hooks were given. A failure's
        notice carries `identity` (the call's)."""
        outcomes = await asyncio.gather(*(self.run(h, payload, cancel) for h in hooks))
        for outcome in outcomes:
            self._report(outcome, identity or Identity())
        return list(outcomes)

    async def run(
        self, hook: CommandHook, payload: Mapping[str, Any], cancel: CancelToken | None = None
    ) -> HookOutcome:
        """Run one hook to completion or timeout; never raises."""
        data = json.dumps(payload, default=str).encode()
        env = dict(self.environ if self.environ is not None else os.environ)
        env.update(
            DEFTLY_HOOK_EVENT=hook.event,
            DEFTLY_WORKSPACE=str(self.workspace),
            DEFTLY_SESSION_ID=self.session_id,
        )
        try:
            proc = await asyncio.create_subprocess_shell(
                hook.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.workspace,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return HookOutcome(hook, "failed", reason=f"could not start: {exc}")
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        feeding = asyncio.ensure_future(_feed(proc.stdin, data))
        reading = asyncio.ensure_future(asyncio.gather(_drain(proc.stdout), _drain(proc.stderr)))
        exited = asyncio.ensure_future(_exited(proc))
        stop = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
        waiters: set[asyncio.Future[Any]] = {exited} | ({stop} if stop is not None else set())
        try:
            await asyncio.wait(waiters, timeout=hook.timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            finished = exited.done() and not exited.cancelled()
            if stop is not None:
                stop.cancel()
            # Whatever happened, nothing of the hook lives on: its leftovers (or the whole
            # hook, when it ran out of time) are killed, then reaped.
            _kill_group(proc)
            exited.cancel()
            feeding.cancel()
            with contextlib.suppress(ProcessLookupError, TimeoutError):
                await asyncio.wait_for(proc.wait(), timeout=_PIPE_GRACE)
            try:
                stdout, stderr = await asyncio.wait_for(reading, timeout=_PIPE_GRACE)
            except (TimeoutError, asyncio.CancelledError):
                stdout, stderr = "", ""
        if not finished:
            if cancel is not None and cancel.cancelled:
                return HookOutcome(hook, "cancelled", None, "the call was cancelled")
            return HookOutcome(
                hook, "timeout", None, f"did not finish within {hook.timeout:g}s and was stopped"
            )
        return interpret(hook, proc.returncode, stdout, stderr)

    def _report(self, outcome: HookOutcome, identity: Identity) -> None:
        if outcome.status in ("ok", "blocked", "cancelled"):
            return
        effect = "the call went ahead" if outcome.hook.event == "PreToolUse" else "ignored"
        message = f"{outcome.hook.label} {outcome.reason} ({effect})"
        log.warning("%s", message)
        self.events.emit(RuntimeNotice(NOTICE_KIND, message, outcome, identity))


def interpret(hook: CommandHook, code: int | None, stdout: str, stderr: str) -> HookOutcome:
    """Exit 2 or a JSON deny blocks; exit 0 is fine; anything else failed (non-blocking)."""
    out, err = stdout.strip(), stderr.strip()
    if code == 2:
        reason = err or out or f"blocked by the {hook.label}"
        return HookOutcome(hook, "blocked", code, reason, stdout, stderr)
    if code != 0:
        detail = f": {_tail(err or out)}" if (err or out) else ""
        return HookOutcome(
            hook, "failed", code, f"failed with exit status {code}{detail}", stdout, stderr
        )
    if out.startswith("{"):
        try:
            answer = json.loads(out)
        except json.JSONDecodeError:
            return HookOutcome(
                hook,
                "failed",
                code,
                "printed output that looks like JSON but is not",
                stdout,
                stderr,
            )
        denial = _json_denial(answer)
        if denial is not None:
            return HookOutcome(
                hook, "blocked", code, denial or f"blocked by the {hook.label}", stdout, stderr
            )
    return HookOutcome(hook, "ok", code, None, stdout, stderr)


def _json_denial(answer: Any) -> str | None:
    """The reason if the JSON answer blocks ("" for a block without a reason), else None."""
    if not isinstance(answer, dict):
        return None
    if str(answer.get("decision", "")).lower() in ("deny", "block"):
        return str(answer.get("reason") or answer.get("message") or "").strip()
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, dict) and str(specific.get("permissionDecision", "")).lower() == "deny":
        return str(specific.get("permissionDecisionReason") or "").strip()
    return None


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the hook's own process ends.

    Before Python 3.12 `proc.wait()` also waits for every process that inherited the
    hook's pipes, so a child left running would hold it open; the exit status is therefore
    also looked at every few milliseconds.
    """
    waiter = asyncio.ensure_future(proc.wait())
    delay = _POLL_FIRST
    try:
        while proc.returncode is None:
            done, _ = await asyncio.wait({waiter}, timeout=delay)
            if done:
                return
            delay = min(delay * 2, _POLL_MAX)
    finally:
        waiter.cancel()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()


async def _drain(stream: asyncio.StreamReader) -> str:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < _KEEP_BYTES:
            kept.extend(chunk[: _KEEP_BYTES - len(kept)])
    return kept.decode("utf-8", errors="replace")


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the hook's whole process group (it runs in its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _tail(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else "…" + text[-limit:]


def _plain(args: Any) -> Any:
    if isinstance(args, BaseModel):
        return args.model_dump(mode="json")
    return args
