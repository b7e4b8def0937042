"""`deftly permissions --test SUBJECT`: what the permission chain would decide for a call,
link by link, without running anything (the call is only resolved, which is pure).

A bare subject is a Bash command (`--test 'rm -rf build'`); `Tool(subject)` puts the
subject into the tool's first required text argument (`Write(notes.txt)`,
`Read(~/.ssh/id_rsa)`), and `Tool({json})` gives the arguments outright. Exit status:
0 approve, 1 ask, 3 deny (the strictest of all subjects); 2 when a subject is not a call.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from deftly.contract.errors import DeftlyError, PathSecurityError
from deftly.execution.probe import ProbeCall, probe_call
from deftly.policy.permissions.decision import PermissionDecision, Verdict
from deftly.runtime import Runtime

DEFAULT_TOOL = "Bash"
EXIT_CODES = {Verdict.APPROVE: 0, Verdict.ASK: 1, Verdict.DENY: 3}
NOT_A_CALL = 2
RULES_SOURCE = "[permissions]"


async def run_tests(runtime: Runtime, subjects: Sequence[str], as_json: bool) -> int:
    """Decide every subject, print the story, and return the exit status."""
    async with runtime:
        _print_rule_warnings(runtime)
        results: list[dict[str, Any]] = []
        console = Console(highlight=False)
        status = 0
        for subject in subjects:
            try:
                call = probe_call(runtime.registry, subject, default_tool=DEFAULT_TOOL)
                decision = await runtime.explain(call.tool, call.arguments)
            except PathSecurityError as exc:
                results.append(_refused(subject, call, str(exc)))
                status = max(status, EXIT_CODES[Verdict.DENY])
                if not as_json:
                    _print_refused(console, subject, call, str(exc))
                continue
            except DeftlyError as exc:
                return _not_a_call(subject, str(exc), as_json)
            status = max(status, EXIT_CODES[decision.verdict])
            results.append({"subject": subject, **_call_json(call), **decision.to_json()})
            if not as_json:
                _print_decision(console, subject, call, decision)
    if as_json:
        sys.stdout.write(json.dumps(results, indent=2) + "\n")
    return status


def _print_rule_warnings(runtime: Runtime) -> None:
    """The rules that can match nothing (found once the tools are active), on stderr."""
    errors = Console(stderr=True, highlight=False)
    for diagnostic in runtime.diagnostics:
        if diagnostic.source == RULES_SOURCE:
            errors.print(f"[yellow]warning:[/yellow] {escape(diagnostic.message)}", soft_wrap=True)


def _call_json(call: ProbeCall) -> dict[str, Any]:
    return {"tool": call.tool, "arguments": call.arguments}


def _refused(subject: str, call: ProbeCall, reason: str) -> dict[str, Any]:
    return {
        "subject": subject,
        **_call_json(call),
        "verdict": str(Verdict.DENY),
        "link": "resolve",
        "reason": f"refused before the permission chain: {reason}",
        "steps": [],
    }


def _print_header(console: Console, subject: str, call: ProbeCall) -> None:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    console.print(f"[bold]{escape(subject)}[/bold]  →  {call.tool} {escape(arguments)}")
    console.print("  (nothing was run: the call was only resolved and decided)")


def _print_decision(
    console: Console, subject: str, call: ProbeCall, decision: PermissionDecision
) -> None:
    _print_header(console, subject, call)
    console.print(escape(decision.explain()), soft_wrap=True)


def _print_refused(console: Console, subject: str, call: ProbeCall, reason: str) -> None:
    _print_header(console, subject, call)
    console.print(
        f"Permission decision for {call.tool}: DENY\n  refused before the permission chain "
        f"(the path policy): {escape(reason)}",
        soft_wrap=True,
    )


def _not_a_call(subject: str, reason: str, as_json: bool) -> int:
    message = f"cannot test {subject!r}: {reason}"
    if as_json:
        sys.stdout.write(json.dumps({"subject": subject, "error": message}, indent=2) + "\n")
    else:
        Console(stderr=True, highlight=False).print(
            f"[red]deftly:[/red] {escape(message)}", soft_wrap=True
        )
    return NOT_A_CALL
