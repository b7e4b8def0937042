"""What a person should hear while commands run (a failed hook, a mode switch), and the
permission records behind `deftly call --explain`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from deftly.execution.events import Event, RuntimeNotice
from deftly.execution.permission_gate import PermissionRecord

if TYPE_CHECKING:
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
