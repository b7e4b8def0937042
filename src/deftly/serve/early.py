"""What `deftly serve` answers before its runtime is built.

Building the runtime (every feature and its tools imported, the session started) is most
of what `deftly serve` adds to an MCP server's start-up, and a client waits for the answers
to `initialize` and the first `tools/list` (the Inspector gives up after 15 s). So a stdio
start answers them from what the last start with the same key listed (`EarlyListing`,
kept under the data home), while the runtime is built beside the server: calls, prompts
and resources wait for it (`PendingHost`, `WhenReady`). Once it is up its own list is
compared with what was said; if they differ (a tool changed, a file the key does not
cover), clients hear `notifications/tools/list_changed` and the saved list is replaced.
The first start with a key builds first, as every start did before.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp.types as mt
from mcp.shared.exceptions import MCPError

from deftly.contract.tool import CancelToken
from deftly.execution.calls import CallResult, ToolCall
from deftly.execution.events import EventListener
from deftly.registry.registry import ToolRegistry
from deftly.session.store import write_text_atomic

if TYPE_CHECKING:
    from deftly.serve.server import PromptSource, ResourceSource, ToolHost

SWITCH_SECONDS = 0.0005
"""How long a thread may hold the interpreter while the runtime is built beside the
server (Python's default is 5 ms: each of the transport's thread hops would wait that)."""

BUILD_ANYWAY_SECONDS = 1.0
"""After this, the runtime is built even if nothing asked for it yet (its mounted servers
and scheduled jobs start with it)."""

KEPT_LISTINGS = 32
"""Saved listings kept (the newest); one per workspace and configuration in use."""

_PACKAGE = Path(__file__).resolve().parent.parent


def _package_signature() -> Iterable[str]:
    """deftly's own files as they are now (an edited source changes descriptions too)."""
    for folder, _, names in os.walk(_PACKAGE):
        for name in sorted(names):
            if name.endswith((".py", ".md")):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    yield f"{path}:{st.st_mtime_ns}:{st.st_size}"


def _files_in(folder: Path) -> Iterable[str]:
    """The files directly in `folder` (a configuration directory), as they are now."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        with contextlib.suppress(OSError):
            st = entry.stat()
            yield f"{entry.path}:{st.st_mtime_ns}:{st.st_size}"


def listing_key(workspace: Path, options: Mapping[str, object], config_dirs: Sequence[Path]) -> str:
    """What the tool list depends on, as far as it can be seen without building anything:
    deftly's files, the interpreter, the workspace, the command's options, the `DEFTLY_*`
    variables and the configuration directories' files. (What it misses, the check after
    the build catches.)"""
    digest = hashlib.sha256()
    parts: list[str] = [sys.version, sys.executable, str(workspace)]
    parts.append(json.dumps(dict(options), sort_keys=True, default=str))
    parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("DEFTLY_"))
    parts += _package_signature()
    for folder in config_dirs:
        parts.append(f"[{folder}]")
        parts += _files_in(folder)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class EarlyListing:
    """A tool list as `tools/list` gave it, the tools that ask the user (left out for
    clients that cannot show a form), and the server's instructions."""

    tools: tuple[Mapping[str, Any], ...]
    asks_user: frozenset[str]
    instructions: str | None

    @classmethod
    def of(
        cls, tools: Sequence[mt.Tool], asks_user: Iterable[str], instructions: str | None
    ) -> EarlyListing:
        """The listing of `tools` (as listed to a client that can show a form)."""
        dumped = tuple(t.model_dump(by_alias=True, exclude_none=True) for t in tools)
        return cls(dumped, frozenset(asks_user), instructions)

    def definitions(self, can_ask: bool) -> list[mt.Tool]:
        """The tools to list to a client (`can_ask`: it can show a form)."""
        return [
            mt.Tool.model_validate(tool)
            for tool in self.tools
            if can_ask or tool.get("name") not in self.asks_user
        ]

    def same_as(self, other: EarlyListing) -> bool:
        """Whether a client would be told the same (instructions aside: said once)."""
        return self.tools == other.tools and self.asks_user == other.asks_user


@contextlib.contextmanager
def responsive_threads() -> Iterator[None]:
    """While the runtime is built in a worker thread, let the server's own threads (the
    event loop, the transport's stdin and stdout threads) take the interpreter sooner."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SWITCH_SECONDS))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


class ListingStore:
    """Saved listings, one file per key, under `directory` (the data home's)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def load(self, key: str) -> EarlyListing | None:
        """The listing saved under `key`, or None (none, or unreadable: then built anew)."""
        try:
            data = json.loads((self.directory / f"{key}.json").read_text(encoding="utf-8"))
            tools = tuple(dict(tool) for tool in data["tools"])
            asks_user = frozenset(str(name) for name in data["asks_user"])
            instructions = data.get("instructions")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not all(isinstance(tool.get("name"), str) for tool in tools):
            return None
        return EarlyListing(
            tools, asks_user, instructions if isinstance(instructions, str) else None
        )

    def save(self, key: str, listing: EarlyListing) -> None:
        """Keep `listing` under `key` (written whole, then renamed into place); the oldest
        listings beyond `KEPT_LISTINGS` go. A failure only means the next start builds first."""
        data = {
            "tools": list(listing.tools),
            "asks_user": sorted(listing.asks_user),
            "instructions": listing.instructions,
        }
        with contextlib.suppress(OSError):
            self.directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_text_atomic(self.directory / f"{key}.json", json.dumps(data))
            self._prune()

    def _prune(self) -> None:
        saved = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in saved[:-KEPT_LISTINGS]:
            with contextlib.suppress(OSError):
                old.unlink()


class PendingHost:
    """Stands in for the runtime being built (a `ToolHost`): a call waits for it, then runs
    through it; events are heard from the runtime once the server is handed to it."""

    def __init__(self) -> None:
        self.registry = ToolRegistry()
        self._host: asyncio.Future[ToolHost] = asyncio.get_running_loop().create_future()
        self.wanted = asyncio.Event()
        """Set once something needs the runtime (a call, a prompt, the first tool list
        answered): the build waits for it, so `initialize` and `tools/list` are answered
        with the interpreter to themselves."""

    def want(self) -> None:
        """Something needs the runtime now (see `wanted`)."""
        self.wanted.set()

    def tools(self) -> Sequence[Any]:
        """Nothing of its own: the server lists the early listing meanwhile."""
        return ()

    def start_batch(
        self, calls: Sequence[ToolCall], *, cancel: CancelToken
    ) -> asyncio.Future[list[CallResult]]:
        """The calls, started on the runtime as soon as it is up."""
        self.want()
        return asyncio.ensure_future(self._when_ready(calls, cancel))

    async def _when_ready(self, calls: Sequence[ToolCall], cancel: CancelToken) -> list[CallResult]:
        host = await asyncio.shield(self._host)
        return await host.start_batch(calls, cancel=cancel)

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Nothing to hear yet (the server subscribes to the runtime when handed to it)."""
        return lambda: None

    def ready(self, host: ToolHost) -> None:
        """The runtime is up: what waits for it goes on."""
        if not self._host.done():
            self._host.set_result(host)

    def failed(self, exc: BaseException) -> None:
        """The runtime could not be built: what waits for it fails with `exc`."""
        if not self._host.done():
            self._host.set_exception(exc)
            self._host.exception()  # retrieved here: a call may never have waited

    async def wait(self) -> None:
        """Until the runtime is up; an MCP error saying why, if it could not be built."""
        self.want()
        try:
            await asyncio.shield(self._host)
        except Exception as exc:
            raise MCPError(mt.INTERNAL_ERROR, f"deftly could not start: {exc}") from None


class WhenReady:
    """Prompt and resource handlers that wait for the runtime before answering (the
    sources are wired to it once it is up)."""

    def __init__(
        self, prompts: PromptSource, resources: ResourceSource, pending: PendingHost
    ) -> None:
        self._prompts = prompts
        self._resources = resources
        self._pending = pending

    async def list_prompts(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListPromptsResult:
        """See `PromptSource.list_prompts`."""
        await self._pending.wait()
        return await self._prompts.list_prompts(ctx, params)

    async def get_prompt(self, ctx: Any, params: mt.GetPromptRequestParams) -> mt.GetPromptResult:
        """See `PromptSource.get_prompt`."""
        await self._pending.wait()
        return await self._prompts.get_prompt(ctx, params)

    async def list_resources(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListResourcesResult:
        """See `ResourceSource.list_resources`."""
        await self._pending.wait()
        return await self._resources.list_resources(ctx, params)

    async def list_templates(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListResourceTemplatesResult:
        """See `ResourceSource.list_templates`."""
        await self._pending.wait()
        return await self._resources.list_templates(ctx, params)

    async def read_resource(
        self, ctx: Any, params: mt.ReadResourceRequestParams
    ) -> mt.ReadResourceResult:
        """See `ResourceSource.read_resource`."""
        await self._pending.wait()
        return await self._resources.read_resource(ctx, params)
