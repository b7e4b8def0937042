"""The client's roots (`roots/list`) for `deftly serve`: which directories it works in.

Without `--workspace`, the first root becomes the workspace and the others additional
directories: asked once the client says `notifications/initialized`, and again on every
`notifications/roots/list_changed`. With `--workspace`, roots outside it are reported, never
used to widen access. A client that declares no roots keeps the current directory. Only
`file://` roots name directories here; any other is ignored with a notice.

Tool calls that arrive before the roots are known wait for them (`ready`, bounded), so a
call never runs in the wrong workspace; `tools/list` never waits.

Over streamable HTTP the first question waits for the first tool call instead, and travels
on that call's own response stream: a request sent at `notifications/initialized` would go
on the standalone stream, which the client opens only after it sent the notification, and
the SDK drops a message sent before it is open (the call then waited for an answer that
never came). Later changes are asked on the standalone stream, open by then.

2026-07-28 clients cannot be asked that way: that protocol has no client-to-server
notifications (no `notifications/initialized`, no `roots/list_changed`) and no requests
from server to client. So such a client is asked inside its first tool call: the call
answers an `InputRequiredResult` holding a `roots/list` request, the client retries it with
its roots (the SDK client answers through its `list_roots_callback`), and the call runs
where they say. That is one extra round trip, once per `deftly serve` process. The
protocol gives no word when the roots change afterwards (roots are deprecated there,
SEP-2577), so they are not asked again: restart `deftly serve` to move such a client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import mcp.types as mt
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from deftly.contract.records import frozen

log = logging.getLogger(__name__)

ROOTS_LOGGER = "deftly.roots"
ASK_SECONDS = 10.0
"""How long the client may take to answer `roots/list`."""
WAIT_SECONDS = 15.0
"""How long a tool call waits for the roots to be known before it runs anyway."""
ROOTS_KEY = "roots"
"""The key of the `roots/list` request inside a tool call's `InputRequiredResult`."""


@frozen
class Roots:
    """The directories of a `roots/list` answer, and what was left out and why."""

    directories: tuple[Path, ...]
    ignored: tuple[str, ...] = ()


def read_roots(result: mt.ListRootsResult) -> Roots:
    """The existing local directories the roots name, in the client's order."""
    directories: list[Path] = []
    ignored: list[str] = []
    for root in result.roots:
        uri = str(root.uri)
        parsed = urlparse(uri)
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
            ignored.append(f"{uri} (not a file:// URI of this machine)")
            continue
        path = Path(unquote(parsed.path)).expanduser().resolve()
        if not path.is_dir():
            ignored.append(f"{uri} (no such directory)")
        elif path not in directories:
            directories.append(path)
    return Roots(tuple(directories), tuple(ignored))


def outside(roots: Sequence[Path], workspace: Path) -> list[Path]:
    """The roots that are not inside `workspace` (nor it)."""
    return [r for r in roots if r != workspace and workspace not in r.parents]


def client_has_roots(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client of this request declared the roots capability."""
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.roots is not None


Apply = Callable[[Roots], Awaitable[None]]
Tell = Callable[[str, str, mt.LoggingLevel], None]


class RootsFollower:
    """Asks the client for its roots when it is ready and when they change (or, for a
    2026-07-28 client, in its first tool call: a `CallPreflight`), and hands the answer to
    `apply` (without `--workspace`) or reports the roots outside `fixed` (with it). `ready`
    is set once the first answer is applied, or at once when there is none to wait for."""

    def __init__(
        self,
        apply: Apply,
        tell: Tell,
        *,
        fixed: Path | None = None,
        warn: Callable[[str], None],
        greet: Callable[[ServerRequestContext[Any]], object] = lambda ctx: None,
        ask_at_start: bool = True,
    ) -> None:
        self.apply = apply
        self.greet = greet
        self.tell = tell
        self.fixed = fixed
        self.warn = warn
        self.ready = asyncio.Event()
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._asked_in_call: asyncio.Event | None = None
        """Set when a 2026-07-28 client was asked in a call (once), and again once it answered."""
        self._ask_at_start = ask_at_start
        """False over streamable HTTP: the first tool call asks, on its own stream."""
        self._ask_in_call = False
        """True from `notifications/initialized` until a tool call of such a client asks."""

    def install(self, server: Any) -> None:
        """Register the two notification handlers on the SDK's low-level server."""
        server.add_notification_handler(
            "notifications/initialized", mt.NotificationParams, self._on_initialized
        )
        server.add_notification_handler(
            "notifications/roots/list_changed", mt.NotificationParams, self._on_notice
        )

    async def _on_initialized(self, ctx: ServerRequestContext[Any], params: Any) -> None:
        if self._ask_at_start or not client_has_roots(ctx):
            await self._on_notice(ctx, params)
        else:
            self.greet(ctx)
            self._ask_in_call = True

    async def _on_notice(self, ctx: ServerRequestContext[Any], params: Any) -> None:
        self.greet(ctx)  # a client that has not asked anything yet can be told things
        if not client_has_roots(ctx):
            self.ready.set()  # nothing will come: the current directory stays
            return
        task = asyncio.get_running_loop().create_task(self.follow(ctx))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def follow(self, ctx: ServerRequestContext[Any], *, in_call: bool = False) -> None:
        """Ask for the roots and act on them (one at a time: a change waits for the last);
        `in_call`: on the stream of the tool call `ctx` is the context of."""
        related = ServerMessageMetadata(related_request_id=ctx.request_id) if in_call else None
        async with self._lock:
            try:
                async with asyncio.timeout(ASK_SECONDS):
                    result = await ctx.session.send_request(
                        mt.ListRootsRequest(), mt.ListRootsResult, metadata=related
                    )
            except Exception as exc:
                self.tell(ROOTS_LOGGER, f"could not list the client's roots: {exc}", "warning")
                self.ready.set()
                return
            await self._use(result)

    async def _use(self, result: mt.ListRootsResult) -> None:
        """Act on one `roots/list` answer (under the lock); `ready` whatever happens."""
        roots = read_roots(result)
        for what in roots.ignored:
            self.tell(ROOTS_LOGGER, f"root ignored: {what}", "notice")
        try:
            await self._act(roots)
        except Exception as exc:
            log.warning("could not use the client's roots", exc_info=exc)
            self.tell(ROOTS_LOGGER, f"could not use the client's roots: {exc}", "error")
        finally:
            self.ready.set()

    async def _act(self, roots: Roots) -> None:
        if self.fixed is None:
            if roots.directories:
                await self.apply(roots)
            return
        wide = outside(roots.directories, self.fixed)
        if wide:
            listed = ", ".join(str(p) for p in wide)
            message = (
                f"the client's roots {listed} are outside the workspace {self.fixed} "
                "(--workspace): they are not used; add them as [permissions] "
                "additional_directories, or serve without --workspace, to work there"
            )
            self.tell(ROOTS_LOGGER, message, "warning")
            self.warn(f"deftly serve: {message}")

    async def needs(self, ctx: ServerRequestContext[Any]) -> dict[str, mt.InputRequest] | None:
        """Before a tool call (`CallPreflight`): a 2026-07-28 client that declared roots and
        was not asked yet is asked now; any other call waits (bounded) until the roots asked
        for are known, then runs."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await self.wait_ready(ctx)
            return None
        asked = self._asked_in_call
        if asked is None and client_has_roots(ctx):
            asked = self._asked_in_call = asyncio.Event()
            # a client that never retries must not hold the other calls for long
            asyncio.get_running_loop().call_later(ASK_SECONDS, asked.set)
            return {ROOTS_KEY: mt.ListRootsRequest()}
        if asked is not None and not asked.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WAIT_SECONDS):
                    await asked.wait()
        return None

    async def answered(
        self, ctx: ServerRequestContext[Any], responses: Mapping[str, mt.InputResponse]
    ) -> None:
        """A 2026-07-28 client's retry, with its roots: act on them before the call runs."""
        result = responses.get(ROOTS_KEY)
        try:
            if isinstance(result, mt.ListRootsResult):
                async with self._lock:
                    await self._use(result)
            else:
                self.tell(ROOTS_LOGGER, "the client retried without its roots", "warning")
        finally:
            if self._asked_in_call is not None:
                self._asked_in_call.set()

    async def wait_ready(self, ctx: ServerRequestContext[Any]) -> None:
        """Before a handshake-era client's tool call: wait (bounded) until the roots are
        known (not with `--workspace`); the first call of an HTTP client asks for them."""
        if self._ask_in_call:
            self._ask_in_call = False
            await self.follow(ctx, in_call=True)
            return
        if self.ready.is_set() or self.fixed is not None:
            return
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                await self.ready.wait()
        except TimeoutError:
            log.info("the client's roots did not come within %g s; going on", WAIT_SECONDS)

    async def aclose(self) -> None:
        """Stop asking."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)
