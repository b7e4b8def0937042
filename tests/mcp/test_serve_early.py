"""A stdio start of `deftly serve` answers `initialize` and `tools/list` from the listing the
last start with the same key saved, builds its runtime meanwhile, and tells the client if
the runtime's own list differs (the real SDK client over a real stdio pipe)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Literal

import mcp.types as mt
import pytest
from mcp import Client, StdioServerParameters

from deftly.serve.early import EarlyListing, ListingStore, PendingHost, listing_key
from deftly.session.paths import data_home
from tests.conftest import subprocess_env
from tests.mcp.conftest import DEFTLY, fake

EARLY = "EARLY: said before the runtime was up"


def _params(workspace: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=DEFTLY, args=["serve", "-w", str(workspace), "--mode", "auto"], env=subprocess_env()
    )


def _store() -> ListingStore:
    return ListingStore(data_home() / "serve" / "listings")


def _saved() -> list[Path]:
    return sorted((data_home() / "serve" / "listings").glob("*.json"))


async def test_the_next_start_lists_early_then_tells_what_changed(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    async with Client(_params(workspace), mode="legacy") as client:
        built = (await client.list_tools()).tools
    [saved] = _saved()
    listing = json.loads(saved.read_text())
    assert [t["name"] for t in listing["tools"]] == [t.name for t in built]
    # What the next start says early is what was saved: mark Read's description there.
    for tool in listing["tools"]:
        if tool["name"] == "Read":
            tool["description"] = EARLY
    saved.write_text(json.dumps(listing))

    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            changed.set()

    async with Client(_params(workspace), mode="legacy", message_handler=on_message) as client:
        first = {t.name: t for t in (await client.list_tools()).tools}
        assert first["Read"].description == EARLY  # answered before the runtime was built
        read = await client.call_tool("Read", {"path": "notes.txt"})  # waits for the runtime
        assert not read.is_error and "1\thello" in read.content[0].text  # type: ignore[union-attr]
        await asyncio.wait_for(changed.wait(), 30)  # the runtime's Read says otherwise
        again = {t.name: t for t in (await client.list_tools()).tools}
    assert again["Read"].description != EARLY
    assert [t.name for t in built] == list(again)
    corrected = json.loads(saved.read_text())  # the next start says the real list
    assert EARLY not in json.dumps(corrected)


async def test_an_unchanged_list_is_not_announced(workspace: Path) -> None:
    async with Client(_params(workspace), mode="legacy") as client:
        built = [t.model_dump() for t in (await client.list_tools()).tools]
    notices: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            notices.append(message)

    async with Client(_params(workspace), mode="auto", message_handler=on_message) as client:
        early = [t.model_dump() for t in (await client.list_tools()).tools]
        glob = await client.call_tool("Glob", {"pattern": "*"})  # the runtime is up after it
        assert not glob.is_error
        after = [t.model_dump() for t in (await client.list_tools()).tools]
    assert early == built == after
    assert notices == []


def test_the_key_follows_what_the_list_depends_on(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".deftly").mkdir(parents=True)
    config = tmp_path / "config"
    config.mkdir()
    dirs = [config, ws / ".deftly"]
    base = listing_key(ws, {"mode": None}, dirs)
    assert listing_key(ws, {"mode": None}, dirs) == base
    assert listing_key(ws, {"mode": "auto"}, dirs) != base
    assert listing_key(tmp_path, {"mode": None}, dirs) != base
    (ws / ".deftly" / "config.toml").write_text("[tools]\ndisable = ['Bash']\n")
    with_project_config = listing_key(ws, {"mode": None}, dirs)
    assert with_project_config != base
    (config / "config.toml").write_text("[output]\nmax_chars = 1000\n")
    assert listing_key(ws, {"mode": None}, dirs) != with_project_config
    os.environ["DEFTLY_TEST_KEY"] = "1"
    try:
        assert listing_key(ws, {"mode": None}, dirs) != with_project_config
    finally:
        del os.environ["DEFTLY_TEST_KEY"]


def test_a_damaged_listing_is_not_used(tmp_path: Path) -> None:
    store = ListingStore(tmp_path)
    listing = EarlyListing.of(
        [mt.Tool(name="Read", input_schema={"type": "object"})], ["AskUserQuestion"], "hi"
    )
    store.save("k", listing)
    loaded = store.load("k")
    assert loaded is not None and loaded.same_as(listing) and loaded.instructions == "hi"
    (tmp_path / "k.json").write_text('{"tools": [{"description": "no name"}]')
    assert store.load("k") is None
    (tmp_path / "k.json").write_text('{"tools": [{"name": 3}], "asks_user": []}')
    assert store.load("k") is None
    assert store.load("absent") is None


def test_a_client_that_cannot_ask_is_not_listed_the_asking_tools() -> None:
    listing = EarlyListing.of(
        [
            mt.Tool(name="Read", input_schema={"type": "object"}),
            mt.Tool(name="AskUserQuestion", input_schema={"type": "object"}),
        ],
        ["AskUserQuestion"],
        None,
    )
    assert [t.name for t in listing.definitions(can_ask=True)] == ["Read", "AskUserQuestion"]
    assert [t.name for t in listing.definitions(can_ask=False)] == ["Read"]


async def test_calls_wait_for_the_runtime_and_fail_with_its_build() -> None:
    pending = PendingHost()
    waiting = pending.start_batch([], cancel=None)
    assert pending.wanted.is_set()  # a call asks for the runtime
    await asyncio.sleep(0)
    assert not waiting.done()
    pending.failed(RuntimeError("the configuration is broken"))
    try:
        await waiting
    except RuntimeError as exc:
        assert "configuration is broken" in str(exc)
    else:
        raise AssertionError("the call did not fail with the build's error")


async def test_mounted_tools_are_not_said_early_but_join_when_connected(
    workspace: Path, tmp_path: Path
) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"good": fake()}}))
    params = _params(workspace)
    params.args += ["--mcp-config", str(servers)]
    async with Client(params, mode="legacy") as client:
        assert "Read" in {t.name for t in (await client.list_tools()).tools}
    [saved] = _saved()
    assert "mcp__good__" not in saved.read_text()  # what connects later is not said early

    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            changed.set()

    async with Client(params, mode="legacy", message_handler=on_message) as client:
        first = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__good__echo" not in first
        await asyncio.wait_for(changed.wait(), 30)
        later = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__good__echo" in later
        echo = await client.call_tool("mcp__good__echo", {"text": "joined"})
        assert not echo.is_error


def test_a_runtime_that_cannot_be_built_answers_every_call_with_why(
    workspace: Path, isolated_home: Path
) -> None:
    config = isolated_home / "config" / "deftly" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[output]\nmax_chars = 100000\n")
    argv = [DEFTLY, "serve", "-w", str(workspace), "--mode", "auto"]
    assert _raw_session(argv)[0] == 0  # a good start, which saves its listing
    # Broken, yet seen unchanged by the key (same size and time): the early path is taken.
    before = config.stat()
    config.write_bytes(b"[output\nmax_chars = 1".ljust(before.st_size, b"0"))
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
    code, answers, stderr = _raw_session(argv)
    call = next(a for a in answers if a.get("id") == 2)
    text = call["result"]["content"][0]["text"]
    assert call["result"]["isError"] and "could not run" in text and "not valid TOML" in text
    assert code != 0 and "not valid TOML" in stderr and "Traceback" not in stderr


def _raw_session(argv: list[str]) -> tuple[int, list[dict[str, Any]], str]:
    """initialize, tools/list and one Glob call over a raw pipe; the exit code, every
    message the server sent, and its stderr."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    answers: list[dict[str, Any]] = []

    def ask(number: int, method: str, params: dict[str, Any]) -> None:
        assert process.stdin is not None and process.stdout is not None
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        while True:
            answer = json.loads(process.stdout.readline())
            answers.append(answer)
            if answer.get("id") == number:
                return

    ask(0, "initialize", hello)
    process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    ask(1, "tools/list", {})
    ask(2, "tools/call", {"name": "Glob", "arguments": {"pattern": "*"}})
    _, stderr = process.communicate(timeout=60)
    return process.returncode, answers, stderr.decode()


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_an_early_start_still_works_in_the_clients_first_root(
    tmp_path: Path, era: Literal["legacy", "auto"]
) -> None:
    start, root = tmp_path / "start", tmp_path / "root"
    for folder in (start, root):
        folder.mkdir()
        (folder / "here.txt").write_text(f"in {folder.name}\n")

    async def list_roots(context: Any) -> mt.ListRootsResult:
        return mt.ListRootsResult(roots=[mt.Root(uri=root.resolve().as_uri())])

    params = StdioServerParameters(
        command=DEFTLY, args=["serve", "--mode", "auto"], env=subprocess_env(), cwd=start
    )
    for _ in range(2):  # the second start answers from the first one's listing
        async with Client(params, mode=era, list_roots_callback=list_roots) as client:
            assert "Read" in {t.name for t in (await client.list_tools()).tools}
            read = await client.call_tool("Read", {"path": "here.txt"})
            assert not read.is_error and "in root" in read.content[0].text  # type: ignore[union-attr]
        assert len(_saved()) == 1
