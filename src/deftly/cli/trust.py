"""`deftly trust`: record, list and revoke trusted folders.

A trusted folder's own config (`.deftly/config.toml`, `.deftly/mcp.json`) applies whole:
hooks, MCP servers, tool modules, mode, allow rules. The record lives in the user's data
directory, keyed by the folder's real path, and covers the folder and everything below.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deftly.cli.common import JsonOpt, err, escape, fail, out

if TYPE_CHECKING:
    from deftly.config.trust import TrustStore

# The trust store, the config and the features' tables are imported when the command runs.


def trust_command(
    directory: Annotated[
        Path, typer.Argument(help="The folder to trust (default: the current directory).")
    ] = Path("."),
    list_: Annotated[bool, typer.Option("--list", help="List the trusted folders.")] = False,
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Forget the folder's trust instead.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Trust a folder: its own deftly config may then run programs (hooks, MCP servers,
    tool modules) and widen permissions (mode, allow rules, extra directories).

    Untrusted, those settings are ignored with one warning; deny and ask rules apply
    either way. Trust covers the folder and everything below it, and is recorded in
    deftly's data directory under the folder's real path (links resolved). For one run
    only, pass --trust to the command instead.
    """
    from deftly.config.trust import TrustStore
    from deftly.contract.errors import DeftlyError
    from deftly.session import data_home

    store = TrustStore(data_home())
    try:
        if list_:
            _list(store, as_json)
        elif revoke:
            _revoke(store, directory, as_json)
        else:
            _trust(store, directory, as_json)
    except DeftlyError as exc:
        raise fail(str(exc)) from None


def _list(store: TrustStore, as_json: bool) -> None:
    folders = store.folders()
    if store.problem:
        err.print(f"[yellow]warning[/yellow] {escape(store.problem)}", highlight=False)
    if as_json:
        data = [{"path": str(f.path), "since": f.since} for f in folders]
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    if not folders:
        out.print("No folder is trusted. Trust one with `deftly trust DIR`.", highlight=False)
        return
    for folder in folders:
        out.print(f"{escape(str(folder.path))}  [dim]since {folder.since}[/dim]", highlight=False)


def _trust(store: TrustStore, directory: Path, as_json: bool) -> None:
    real = store.trust(directory)
    from deftly.config.trust import pending_settings
    from deftly.features import builtin_tables

    pending = pending_settings(real, builtin_tables())
    if as_json:
        data = {"trusted": str(real), "applies": [str(p) for p in pending]}
        sys.stdout.write(json.dumps(data) + "\n")
        return
    out.print(f"Trusted {escape(str(real))} and the folders below it.", highlight=False)
    if real in (Path("/"), Path.home().resolve()):
        err.print(
            "[yellow]warning[/yellow] this covers every project below it, including "
            "repositories cloned later; trusting each project folder is safer.",
            highlight=False,
        )
    for item in pending:
        out.print(f"  now applies: {escape(str(item))}", highlight=False)


def _revoke(store: TrustStore, directory: Path, as_json: bool) -> None:
    removed = store.revoke(directory)
    covering = store.trusted_root(directory)
    if as_json:
        data = {
            "revoked": str(removed) if removed else None,
            "still_trusted_through": str(covering) if covering else None,
        }
        sys.stdout.write(json.dumps(data) + "\n")
    elif removed is not None:
        out.print(f"{escape(str(removed))} is no longer trusted.", highlight=False)
    if covering is not None:
        if not as_json:
            err.print(
                f"{escape(str(directory))} is still trusted through {escape(str(covering))}; "
                f"run `deftly trust --revoke {escape(str(covering))}` to stop that.",
                highlight=False,
            )
        raise typer.Exit(1)
    if removed is None and not as_json:
        out.print(f"{escape(str(_shown(directory)))} was not trusted.", highlight=False)


def _shown(directory: Path) -> Path:
    from deftly.config.trust import real_folder
    from deftly.contract.errors import DeftlyError

    try:
        return real_folder(directory)
    except DeftlyError:
        return directory
