"""`deftly permissions`: the mode, the rules with their origin, the hooks, and `--test`.

What is reported while a command runs, and `--explain`, are in `notices.py`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deftly.cli.common import (
    JsonOpt,
    TrustOpt,
    WorkspaceOpt,
    build_runtime,
    escape,
    print_diagnostics,
    run_async,
)

if TYPE_CHECKING:
    from deftly.runtime import Runtime


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
    from deftly.cli.permission_test import run_tests

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
    from rich.console import Console
    from rich.table import Table

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
