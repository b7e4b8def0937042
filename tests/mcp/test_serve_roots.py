"""`deftly serve` and the client's roots (the real SDK client over a real stdio pipe):

- without `--workspace`, the first root is the workspace and the others additional
  directories; a call made at once waits for them; `notifications/roots/list_changed`
  moves the workspace (the client hears `tools/list_changed`), and a root taken back is no
  longer allowed; a root that names no directory is ignored with a notice;
- with `--workspace`, a root outside it is reported and gives no access;
- a client without roots keeps the current directory;
- a 2026-07-28 client (which has no notifications) is asked inside its first tool call, by
  an `InputRequiredResult` the SDK client answers through its `list_roots_callback` and
  retries, once per server; calls made meanwhile wait for the answer;
- all of this over streamable HTTP too, in both protocol eras; there a handshake-era client
  is asked in its first call, on that call's own stream (the standalone stream may not be
  open yet when the client says `notifications/initialized`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx2
import mcp.types as mt
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY
from tests.mcp.test_serve import http_serve, text_of

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


async def test_a_root_the_client_takes_back_is_no_longer_allowed(tmp_path: Path) -> None:
    start, first, second = _folders(tmp_path)
    roots = [first, second]
    watch = Watch()

    async def list_roots(ctx: Any) -> mt.ListRootsResult:
        return mt.ListRootsResult(roots=[mt.Root(uri=p.as_uri()) for p in roots])

    def read_second() -> Any:
        return client.call_tool("Read", {"path": str(second / "second.txt")})

    # The default mode: outside the workspace and its directories a read needs approval
    # (in auto mode an absolute path outside is read without asking, roots or not).
    manual = StdioServerParameters(command=DEFTLY, args=["serve"], env=subprocess_env(), cwd=start)
    async with Client(
        manual, mode="legacy", list_roots_callback=list_roots, logging_callback=watch.on_log
    ) as client:
        allowed = await read_second()
        assert not allowed.is_error, text_of(allowed)

        roots[:] = [first]  # the same workspace, one directory fewer
        await client.send_roots_list_changed()
        await watch.wait(lambda m: f"no longer {second}" in str(m.data))
        refused = await read_second()
        assert refused.is_error and "outside the workspace" in text_of(refused)
        assert "needs approval" in text_of(refused)
        here = await client.call_tool("Read", {"path": "first.txt"})
        assert not here.is_error, text_of(here)

        roots[:] = [first, second]  # given back: allowed again
        await client.send_roots_list_changed()
        given_back = f"root {first} (also {second})"
        await watch.wait(lambda _: sum(str(m.data).endswith(given_back) for m in watch.seen) == 2)
        again = await read_second()
        assert not again.is_error, text_of(again)


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


Era = Literal["legacy", "auto"]
ListRoots = Callable[[Any], Any]


@asynccontextmanager
async def _over_stdio(
    cwd: Path, era: Era, list_roots: ListRoots, *args: str
) -> AsyncIterator[tuple[Client, list[str]]]:
    async with Client(_params(cwd, *args), mode=era, list_roots_callback=list_roots) as client:
        yield client, []  # (what serve prints goes to the test's stderr)


@asynccontextmanager
async def _over_http(
    cwd: Path, era: Era, list_roots: ListRoots, *args: str
) -> AsyncIterator[tuple[Client, list[str]]]:
    printed: list[str] = []
    workspace = Path(args[1]) if args[:1] == ("-w",) else None
    async with http_serve(workspace, cwd=cwd) as (url, proc):
        async with (
            httpx2.AsyncClient() as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode=era,
                list_roots_callback=list_roots,
            ) as client,
        ):
            yield client, printed
        proc.terminate()
        assert proc.stderr is not None
        printed.append(proc.stderr.read())


Connect = Callable[..., AbstractAsyncContextManager[tuple[Client, list[str]]]]
WAYS = [
    pytest.param(_over_stdio, "auto", id="stdio-2026"),
    pytest.param(_over_http, "auto", id="http-2026"),
    pytest.param(_over_http, "legacy", id="http-2025"),
]


class Asked:
    """A client's `list_roots_callback` that counts how often it was asked."""

    def __init__(self, *roots: Path) -> None:
        self.roots = list(roots)
        self.times = 0

    async def __call__(self, ctx: Any) -> mt.ListRootsResult:
        self.times += 1
        return mt.ListRootsResult(roots=[mt.Root(uri=p.as_uri()) for p in self.roots])


@pytest.mark.parametrize(("connect", "era"), WAYS)
async def test_the_first_root_is_the_workspace_in_every_era_and_transport(
    connect: Connect, era: Era, tmp_path: Path
) -> None:
    start, first, second = _folders(tmp_path)
    asked = Asked(first, second)
    async with connect(start, era, asked) as (client, _):
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        assert modern == (era == "auto")
        # made together, before the roots are known: every one runs in the first root
        here, again = await asyncio.gather(
            client.call_tool("Read", {"path": "first.txt"}),
            client.call_tool("Read", {"path": "first.txt"}),
        )
        for result in (here, again):
            assert not result.is_error, text_of(result)
            assert "in first" in text_of(result)
        extra = await client.call_tool("Read", {"path": str(second / "second.txt")})
        assert not extra.is_error, text_of(extra)  # the second root: an additional directory
        away = await client.call_tool("Read", {"path": "start.txt"})
        assert away.is_error, text_of(away)  # relative paths no longer mean the start folder
        assert asked.times == 1  # asked once, not once per call


async def _messages(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of one POST's answer: a JSON body or an event stream."""
    if response.headers["content-type"].startswith("application/json"):
        yield json.loads(await response.aread())
        return
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


async def test_over_http_a_2025_client_is_asked_on_its_first_calls_own_stream(
    tmp_path: Path,
) -> None:
    """A client that never opens the standalone GET stream (the SDK's opens it only after
    `notifications/initialized`, so a question sent there at once could be lost) is still
    asked, and its call still runs in the first root: the `roots/list` request comes on the
    call's own response stream, before its result."""
    start, first, _ = _folders(tmp_path)
    version = LATEST_HANDSHAKE_VERSION
    headers = {"accept": "application/json, text/event-stream"}
    hello = {"name": "raw", "version": "0"}
    initialize = {"protocolVersion": version, "capabilities": {"roots": {}}, "clientInfo": hello}
    async with (
        http_serve(None, cwd=start) as (url, _),
        httpx2.AsyncClient(timeout=60, headers=headers) as http,
    ):
        reply = await http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
        )
        [answer] = [m async for m in _messages(reply)]
        assert answer["result"]["protocolVersion"] == version
        http.headers["mcp-session-id"] = reply.headers["mcp-session-id"]
        http.headers["mcp-protocol-version"] = version
        sent = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert sent.status_code == 202
        call = {"name": "Read", "arguments": {"path": "first.txt"}}
        seen: list[str] = []
        request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
        async with http.stream("POST", url, json=request) as stream:
            async for message in _messages(stream):
                if message.get("method") == "roots/list":
                    seen.append("asked")
                    roots = {"roots": [{"uri": first.as_uri()}]}
                    back = {"jsonrpc": "2.0", "id": message["id"], "result": roots}
                    assert (await http.post(url, json=back)).status_code == 202
                elif message.get("id") == 2:
                    seen.append("answered")
                    texts = [c["text"] for c in message["result"]["content"]]
                    assert not message["result"].get("isError"), texts
                    assert "in first" in "".join(texts)
                    break
        assert seen == ["asked", "answered"]


@pytest.mark.parametrize(("connect", "era"), WAYS)
async def test_with_workspace_roots_outside_are_reported_in_every_era(
    connect: Connect, era: Era, tmp_path: Path
) -> None:
    start, first, _ = _folders(tmp_path)
    asked = Asked(first)
    async with connect(tmp_path, era, asked, "-w", str(start)) as (client, printed):
        refused = await client.call_tool("Read", {"path": "../first/first.txt"})
        assert refused.is_error and "outside the workspace" in text_of(refused)
        ok = await client.call_tool("Read", {"path": "start.txt"})
        assert not ok.is_error, text_of(ok)
        if era == "auto":
            assert asked.times == 1  # asked in the first call, to report what lies outside
    if connect is _over_http:
        [stderr] = printed
        assert f"the client's roots {first} are outside the workspace {start}" in stderr


async def test_a_2026_client_without_roots_is_not_asked(tmp_path: Path) -> None:
    start, _, _ = _folders(tmp_path)
    async with Client(_params(start)) as client:
        assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
        result = await client.call_tool("Read", {"path": "start.txt"})
        assert not result.is_error and "in start" in text_of(result)


async def test_a_2026_client_that_cannot_list_its_roots_keeps_the_start_folder(
    tmp_path: Path,
) -> None:
    start, _, _ = _folders(tmp_path)

    async def refuse(ctx: Any) -> mt.ErrorData:
        return mt.ErrorData(code=mt.INVALID_REQUEST, message="no roots today")

    async with Client(_params(start), list_roots_callback=refuse) as client:
        with pytest.raises(Exception, match="no roots today"):
            await client.call_tool("Read", {"path": "start.txt"})
        # not asked again: the next call runs where serve started
        result = await client.call_tool("Read", {"path": "start.txt"})
        assert not result.is_error and "in start" in text_of(result)
