"""The CLI side of safety: who approves, what is reported, `--explain`, `deftly permissions`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from deftly.cli.common import (
    JsonOpt,
    TrustOpt,
    WorkspaceOpt,
    build_runtime,
    print_diagnostics,
    run_async,
)
from deftly.cli.permission_test import run_tests
from deftly.execution.events import Event, RuntimeNotice
from deftly.execution.permission_gate import PermissionRecord
from deftly.runtime import Runtime


class NoticePrinter:
    """Prints what a person should know as it happens (a failed hook, a mode switch) on
    stderr, and keeps the permission records for `--explain`."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.records: list[PermissionRecord] = []

    def attach(self, runtime: Runtime) -> Callable[[], None]:
        """Start listening to the runtime's events; returns the function that stops it."""
        return runtime.subscribe(self)

    def __call__(self, event: Event) -> None:
        if not isinstance(event, RuntimeNotice):
            return
        if event.kind == "permission" and isinstance(event.data, PermissionRecord):
            self.records.append(event.data)
        elif event.kind == "hook":
            self.console.print(f"[yellow]hook:[/yellow] {escape(event.message)}", highlight=False)
        elif event.kind == "permission_mode":
            self.console.print(f"[cyan]{escape(event.message)}[/cyan]", highlight=False)

    def record_for(self, call_id: str) -> PermissionRecord | None:
        """The last permission record of the call `call_id`, for `--explain`."""
        found = [r for r in self.records if r.call_id == call_id]
        return found[-1] if found else None


def explanation_text(record: PermissionRecord | None, outcome: str) -> str:
    """The permission chain's story for `--explain`, or why there is none (the call ended before the
    gate, or a hook allowed it)."""
    if record is None:
        return (
            "No permission decision was made: the call ended before the permission gate "
            f"(outcome: {outcome}), or an in-process hook allowed it."
        )
    return record.explain()


def explanation_json(record: PermissionRecord | None) -> dict[str, Any] | None:
    """The permission record as JSON for `--explain --json` (None when no decision was made)."""
    return record.to_json() if record is not None else None


# -- `deftly permissions` ------------------------------------------------------------------


def permissions_command(
    workspace: WorkspaceOpt = Path("."),
    mode: Annotated[
        str | None, typer.Option("--mode", help="Show as if this mode were chosen.")
    ] = None,
    as_json: JsonOpt = False,
    test: Annotated[
        list[str] | None,
        typer.Option(
            "--test",
            help="Show what the permission chain would decide for a call, link by link, "
            "WITHOUT running it: a Bash command ('rm -rf build'), Tool(subject) "
            "('Write(notes.txt)', 'Read(~/.ssh/id_rsa)': the subject goes into the tool's "
            "first required text argument) or Tool({json arguments}). Repeat for more "
            "calls. Exit status: 0 approve, 1 ask, 3 deny (the strictest of them), 2 when a "
            "subject is not a call.",
        ),
    ] = None,
    trust: TrustOpt = False,
) -> None:
    """Show the permission mode, every rule with the file and line it came from, and the
    configured hooks; with --test, what the chain would decide for a call (nothing is run)."""

    async def main() -> None:
        runtime = build_runtime(workspace, mode, False, trust=trust)
        print_diagnostics(runtime)
        if test:
            raise typer.Exit(await run_tests(runtime, test, as_json))
        show(runtime, as_json)

    run_async(main)


def show(runtime: Runtime, as_json: bool) -> None:
    """Print the mode, the rules with their origin, and the hooks."""
    rules: list[dict[str, Any]] = [
        {"kind": str(e.kind), "rule": e.text, "origin": e.origin} for e in runtime.permissions.rules
    ]
    for rule, entry in zip(rules, runtime.permissions.rules, strict=True):
        if entry.match or entry.not_match:
            rule.update(match=list(entry.match), not_match=list(entry.not_match))
    warnings = list(runtime.permissions.rules.warnings)
    hooks = [
        {"event": event, **h.model_dump()}
        for event, group in (
            ("PreToolUse", runtime.config.hooks.pre_tool_use),
            ("PostToolUse", runtime.config.hooks.post_tool_use),
        )
        for h in group
    ]
    if as_json:
        data = {"mode": str(runtime.mode), "rules": rules, "hooks": hooks, "warnings": warnings}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    console = Console()
    console.print(f"mode: [bold]{runtime.mode}[/bold]")
    if rules:
        table = Table(header_style="bold")
        for column in ("kind", "rule", "from"):
            table.add_column(column)
        for rule in rules:
            table.add_row(rule["kind"], escape(rule["rule"]), escape(rule["origin"]))
        console.print(table)
    else:
        console.print("no rules: the chain decides by mode, tool traits and paths alone")
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    for hook in hooks:
        matcher = hook["matcher"] or "*"
        console.print(
            f"hook {hook['event']} [{escape(matcher)}] {escape(hook['command'])} "
            f"(timeout {hook['timeout']:g}s)",
            highlight=False,
        )
