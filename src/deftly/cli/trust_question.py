"""The first-run question at a terminal: "Do you trust the files in this folder?"

Asked once, before the runtime is built, and only when the workspace's own config holds
something that needs trust and the folder is not trusted yet. Yes records the folder (as
`deftly trust` does); anything else, or end of input, leaves it untrusted for this run,
and the runtime's diagnostic then says what was ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from deftly.config.trust import TrustStore, pending_settings
from deftly.features import builtin_tables
from deftly.session import data_home

_YES = {"y", "yes"}


def ask_to_trust(workspace: Path, console: Console, stream: TextIO) -> bool:
    """Ask, and record the answer yes. Returns whether the folder is trusted now."""
    store = TrustStore(data_home())
    if store.is_trusted(workspace):
        return True
    pending = pending_settings(workspace, builtin_tables())
    if not pending:
        return False
    real = workspace.resolve()
    console.print(
        f"[bold]{escape(str(real))}[/bold] has its own deftly settings that can run "
        "programs or widen permissions:",
        highlight=False,
    )
    for item in pending:
        console.print(f"  {escape(item.setting)}  [dim]({escape(str(item.file))})[/dim]")
    console.print(
        "Without trust they are ignored for this run; its deny and ask rules apply either "
        "way. Yes records the folder and everything below it (undo with "
        "`deftly trust --revoke`).",
        highlight=False,
    )
    console.print(
        f"Do you trust the files in this folder? {escape('[y/N]')} ", end="", highlight=False
    )
    answer = stream.readline()
    if answer.strip().lower() not in _YES:
        console.print("Not trusted: those settings are ignored for this run.", highlight=False)
        return False
    recorded = store.trust(real)
    console.print(f"Trusted {escape(str(recorded))} (recorded in {escape(str(store.path))}).")
    return True
