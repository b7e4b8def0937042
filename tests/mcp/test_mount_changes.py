"""Changes: a mounted server's list_changed (tools, resources, prompts) is followed (the
registry and the model's tool list change, `on_change` fires), in both protocol eras; with
`connect_in_background` the runtime starts without waiting for its servers, each server's
tools appear as it connects, and `close()` stops a start still under way."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from deftly import Runtime
from deftly.features.mcp.manager import ChangeKind, McpManager
from tests.mcp.conftest import ERAS, alive, eventually, fake, rich, wait_until

MARGIN = 20.0


def runtime(workspace: Path, servers: dict[str, object]) -> Runtime:
    return Runtime(
        workspace,
        config={"mcp": {"servers": servers}},
        builtins=False,
        plugins=False,
        approve_asks=True,
    )


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_list_change_re_registers_and_tells_the_listeners(
    workspace: Path, era: str
) -> None:
    rt = runtime(workspace, {"rich": rich(*ERAS[era])})
    await rt.start()
    try:
        manager = rt.service(McpManager)
        heard: set[ChangeKind] = set()
        all_three = asyncio.Event()

        def listen(kind: ChangeKind) -> None:
            heard.add(kind)
            if heard >= {"tools", "resources", "prompts"}:
                all_three.set()

        manager.on_change(listen)
        assert "mcp__rich__later" not in {t.name for t in rt.tools()}
        assert (await rt.call("mcp__rich__grow", {"name": "later"})).text == "added later"
        await asyncio.wait_for(all_three.wait(), MARGIN)

        assert "mcp__rich__later" in {t.name for t in rt.tools()}
        assert (await rt.call("mcp__rich__later", {})).text == "I am later"
        assert "note://later" in {r.remote_uri for r in manager.resources()}
        assert "mcp__rich__prompt_later" in {p.name for p in manager.prompts()}
    finally:
        await rt.close()


async def test_start_in_background_does_not_wait_for_a_hanging_server(
    workspace: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "hang.pid"
    servers = {
        "hangs": fake("--hang-on-start", "--pid-file", str(pid_file), startup_timeout=120),
        "rich": rich(),
    }
    rt = runtime(workspace, servers).connect_in_background()
    await rt.start()
    closed = False
    try:
        manager = rt.service(McpManager)
        hangs = manager.connection("hangs")
        assert hangs is not None and hangs.state == "pending"  # start() did not wait
        assert await eventually(lambda: "mcp__rich__stats" in {t.name for t in rt.tools()})
        assert (await rt.call("mcp__rich__stats", {"text": "a b"})).result.structured == {
            "count": 2,
            "words": ["a", "b"],
        }
        assert wait_until(pid_file.exists)
        pid = int(pid_file.read_text())
        started = time.monotonic()
        await rt.close()
        closed = True
        assert time.monotonic() - started < MARGIN  # not the 120 s start-up timeout
        assert wait_until(lambda: not alive(pid))
    finally:
        if not closed:
            await rt.close()


async def test_a_server_connecting_late_is_announced(workspace: Path) -> None:
    rt = runtime(workspace, {"rich": rich()}).connect_in_background()
    heard: list[ChangeKind] = []
    tools_seen = asyncio.Event()
    await rt.start()
    try:
        manager = rt.service(McpManager)

        def listen(kind: ChangeKind) -> None:
            heard.append(kind)
            if kind == "tools":
                tools_seen.set()

        manager.on_change(listen)
        if manager.statuses()[0].state != "connected":  # it usually is not, yet
            await asyncio.wait_for(tools_seen.wait(), MARGIN)
            assert "mcp__rich__roots" in {t.name for t in rt.tools()}
        await manager.wait_started()
        assert manager.statuses()[0].state == "connected"
        assert "mcp__rich__roots" in {t.name for t in rt.tools()}
    finally:
        await rt.close()
