"""The `deftly` console script: pause collection for start-up, then run the command."""

from __future__ import annotations

from deftly.cli import startup


def main() -> None:
    """Console-script entry point (see `deftly.cli.startup` for why collection waits)."""
    startup.pause()
    from deftly.cli.app import main as run_command

    run_command()
