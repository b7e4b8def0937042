"""`deftly serve` and the client's roots (the real SDK client over a real stdio pipe):

- without `--workspace`, the first root is the workspace and the others additional
  directories; a call made at once waits for them; `notifications/roots/list_changed`
  moves the workspace (the client hears `tools/list_changed`); a root that names no
  directory is ignored with a notice;
- with `--workspace`, a root outside it is reported and gives no access;
- a client without roots keeps the current directory.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY
from tests.mcp.test_serve import text_of

pytestmark = pytest.mark.filterwarnings("ignore:The roots capability is deprecated")


def _folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    found = []
    for name in ("start", "first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.txt").write_text(f"in {name}\n")
        found.append(folder.resolve())
    return found[0], found[1], found[2]


class Watch:
    """The notifications a client received, with a way to wait for one."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self._cond = asyncio.Condition()

    async def on_message(self, message: Any) -> None:
        async with self._cond:
            self.seen.append(message)
            self._cond.notify_all()

    async def on_log(self, params: mt.LoggingMessageNotificationParams) -> None:
        await self.on_message(params)

    async def wait(self, test: Any) -> None:
        async with asyncio.timeout(60), self._cond:
            await self._cond.wait_for(lambda: any(test(m) for m in self.seen))


def _params(cwd: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=DEFTLY, args=["serve", "--mode", "auto", *args], env=subprocess_env(), cwd=cwd
    )


async def test_the_first_root_is_the_workspace_and_follows_changes(tmp_path: Path) -> None:
    start, first, second = _folders(tmp_path)
    roots = [first, second]
    watch = Watch()

    async def list_roots(ctx: Any) -> mt.ListRootsResult:
        listed = [mt.Root(uri=p.as_uri(), name=p.name) for p in roots]
        gone = (tmp_path / "gone").as_uri()  # (the SDK itself refuses roots not file://)
        return mt.ListRootsResult(roots=[*listed, mt.Root(uri=gone)])

    async with Client(
        _params(start),
        mode="legacy",
        list_roots_callback=list_roots,
        message_handler=watch.on_message,
        logging_callback=watch.on_log,
    ) as client:
        # at once: the call waits for the roots, then runs in the first one
        here = await client.call_tool("Read", {"path": "first.txt"})
        assert not here.is_error, text_of(here)
        assert "in first" in text_of(here)
        extra = await client.call_tool("Read", {"path": str(second / "second.txt")})
        assert not extra.is_error, text_of(extra)  # the second root: an additional directory
        away = await client.call_tool("Read", {"path": "start.txt"})
        assert away.is_error  # relative paths no longer mean the current directory
        await watch.wait(
            lambda m: (
                isinstance(m, mt.LoggingMessageNotificationParams)
                and "gone (no such directory)" in str(m.data)
            )
        )

        roots[:] = [second]
        await client.send_roots_list_changed()
        await watch.wait(lambda m: isinstance(m, mt.ToolListChangedNotification))
        await watch.wait(
            lambda m: (
                isinstance(m, mt.LoggingMessageNotificationParams)
                and f"root {second}" in str(m.data)
            )
        )
        moved = await client.call_tool("Read", {"path": "second.txt"})
        assert not moved.is_error, text_of(moved)


async def test_with_workspace_roots_outside_are_reported_not_used(tmp_path: Path) -> None:
    start, first, _ = _folders(tmp_path)
    watch = Watch()

    async def list_roots(ctx: Any) -> mt.ListRootsResult:
        return mt.ListRootsResult(roots=[mt.Root(uri=first.as_uri())])

    async with Client(
        _params(tmp_path, "-w", str(start)),
        mode="legacy",
        list_roots_callback=list_roots,
        logging_callback=watch.on_log,
    ) as client:
        await watch.wait(lambda m: "outside the workspace" in str(m.data))
        [warning] = [m for m in watch.seen if "outside the workspace" in str(m.data)]
        assert warning.level == "warning" and str(first) in str(warning.data)
        refused = await client.call_tool("Read", {"path": "../first/first.txt"})
        assert refused.is_error and "outside the workspace" in text_of(refused)
        ok = await client.call_tool("Read", {"path": "start.txt"})
        assert not ok.is_error


async def test_a_client_without_roots_keeps_the_current_directory(tmp_path: Path) -> None:
    start, _, _ = _folders(tmp_path)
    async with Client(_params(start), mode="legacy") as client:
        result = await client.call_tool("Read", {"path": "start.txt"})
        assert not result.is_error and "in start" in text_of(result)
