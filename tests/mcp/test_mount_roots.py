"""Roots: a mounted server is offered the workspace root and the additional directories,
read when it asks (so a directory added later is offered next time), never deftly's own
session directories; a 2025-era server hears roots/list_changed from `roots_changed()`."""

from __future__ import annotations

from pathlib import Path

import pytest

from deftly import Runtime
from deftly.features.mcp.manager import McpManager
from tests.mcp.conftest import ERAS, rich


async def mount(workspace: Path, *args: str, extra: list[str] | None = None) -> Runtime:
    permissions = {"additional_directories": extra} if extra else {}
    runtime = Runtime(
        workspace,
        config={"mcp": {"servers": {"rich": rich(*args)}}, "permissions": permissions},
        builtins=False,
        plugins=False,
        approve_asks=True,
    )
    await runtime.start()
    return runtime


@pytest.mark.parametrize("era", list(ERAS))
async def test_the_server_sees_the_workspace_and_the_additional_directories(
    workspace: Path, tmp_path: Path, era: str
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    rt = await mount(workspace, *ERAS[era], extra=[str(extra)])
    try:
        assert rt.service(McpManager).statuses()[0].protocol_version == era
        roots = (await rt.call("mcp__rich__roots", {})).text.splitlines()
        assert roots == [Path(workspace).as_uri(), extra.resolve().as_uri()]

        later = tmp_path / "later"
        later.mkdir()
        rt.workspace.add_directory(later)  # read live: the next request sees it
        again = (await rt.call("mcp__rich__roots", {})).text.splitlines()
        assert again == [*roots, later.resolve().as_uri()]
    finally:
        await rt.close()


async def test_roots_changed_notifies_a_2025_era_server(workspace: Path) -> None:
    rt = await mount(workspace, "--legacy")
    try:
        manager = rt.service(McpManager)
        assert (await rt.call("mcp__rich__heard", {})).text == "0"
        manager.roots_changed()
        manager.roots_changed()
        await manager.settled()  # both notifications written before the next request
        assert (await rt.call("mcp__rich__heard", {})).text == "2"
    finally:
        await rt.close()
