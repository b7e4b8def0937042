"""`deftly serve` (the tools as an MCP server) and `deftly mcp list` (mounted servers)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deftly.cli.common import (
    JsonOpt,
    McpConfigOpt,
    ModeOpt,
    TrustOpt,
    UsageError,
    WorkspaceOpt,
    build_runtime,
    err,
    out,
    print_diagnostics,
    run_async,
)

if TYPE_CHECKING:
    from deftly.features.mcp.manager import ChangeKind, McpManager, ServerStatus
    from deftly.runtime import Runtime
    from deftly.serve.prompts import ServedPrompts
    from deftly.serve.resources import SessionResources
    from deftly.serve.roots import Roots
    from deftly.serve.server import ToolHost, ToolServer

MCP_LOGGER = "deftly.mcp"

mcp_app = typer.Typer(
    name="mcp",
    help="External MCP servers mounted as tools (configured in mcp.json files).",
    no_args_is_help=True,
)


class Transport(StrEnum):
    """How `deftly serve` talks to its client: stdio, or streamable HTTP on a port."""

    stdio = "stdio"
    http = "http"


def instructions(runtime: Runtime) -> str:
    """The server instructions an MCP client is given: which workspace the tools work in, and that
    every call passes deftly's path policy and permission engine."""
    return (
        f"deftly's tools for the workspace {runtime.workspace_path}: read, edit, search and "
        "run there. Relative paths are relative to the workspace. Every call goes through "
        f"deftly's path policy and permission engine (mode: {runtime.mode}); a call that "
        "needs approval asks the user, or is refused with a message saying how to allow it."
    )


def session_resources(rt: Runtime, mcp: McpManager | None) -> SessionResources:
    """The session's spilled outputs and task logs (where results say they are), and the
    mounted servers' resources."""
    from deftly.serve.resources import SessionArea, SessionResources

    shown = rt.session.session_area
    areas = [
        SessionArea(rt.session_dir / "spill", shown / "spill", "Spilled output"),
        SessionArea(rt.session_dir / "tasks", shown / "tasks", "Background task log"),
    ]
    return SessionResources(areas, mcp)


class MountWatcher:
    """Tells the clients what changed among the mounted servers: the list that changed, and
    a log message for each server that connected or failed since the last change."""

    def __init__(self, mcp: McpManager, server: ToolServer) -> None:
        self.mcp = mcp
        self.server = server
        self.states = {s.name: s.state for s in mcp.statuses()}

    def __call__(self, kind: ChangeKind) -> None:
        """One change event of the MCP manager."""
        self.server.changed(kind)
        for status in self.mcp.statuses():
            before = self.states.get(status.name)
            self.states[status.name] = status.state
            if status.state == before:
                continue
            if status.state == "connected":
                count = len(status.tools)
                tools = f"{count} tool{'s' if count != 1 else ''}"
                message = f'MCP server "{status.name}" connected: {tools}'
                self.server.log_soon(MCP_LOGGER, message, "info")


class ServedRuntime:
    """The runtime `deftly serve` serves, which the client's roots may replace: a first
    root other than the workspace opens a runtime there, hands the server over to it,
    then closes the old one; the other roots become additional directories."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.server: ToolServer | None = None
        self._from_roots: list[Path] = []
        """The additional directories the client's roots added (and may take back)."""
        self._prompts: ServedPrompts | None = None
        self._resources: SessionResources | None = None
        self._stop_watching: Callable[[], None] = lambda: None

    def attach(
        self, server: ToolServer, prompts: ServedPrompts, resources: SessionResources
    ) -> None:
        """Point the server's prompts, resources and mount watching at the runtime."""
        self.server, self._prompts, self._resources = server, prompts, resources
        self._wire()

    def _wire(self) -> None:
        from deftly.serve.prompts import SkillPrompts

        assert self.server is not None and self._prompts is not None
        assert self._resources is not None
        from deftly.features.mcp.manager import McpManager  # not for `deftly --help`

        rt = self.runtime
        mcp = rt.service(McpManager)
        self._prompts.skills = SkillPrompts(rt.skills) if rt.config.skills.enabled else None
        self._prompts.mcp = mcp
        fresh = session_resources(rt, mcp)
        self._resources.areas, self._resources.mcp = fresh.areas, mcp
        self._stop_watching()
        self._stop_watching = mcp.on_change(MountWatcher(mcp, self.server))

    async def use_roots(
        self, roots: Roots, open_runtime: Callable[[Path], Awaitable[Runtime]]
    ) -> None:
        """Work where the client's roots say (see the class docstring)."""
        server = self.server
        assert server is not None
        first, *others = roots.directories
        if first != self.runtime.workspace_path:
            fresh = await open_runtime(first)
            old, self.runtime = self.runtime, fresh
            self._from_roots = []
            await server.replace_host(fresh, inbox=fresh.agent.inbox)
            self._wire()
            server.changed("resources")
            server.changed("prompts")
            await old.close()
        workspace = self.runtime.session.workspace
        dropped = [d for d in self._from_roots if d not in others]
        for gone in dropped:  # a root the client took back is no longer allowed
            workspace.remove_directory(gone)
        kept = [d for d in self._from_roots if d in others]
        for extra in others:
            if extra not in kept and extra not in workspace.additional_dirs:
                workspace.add_directory(extra)
                if extra in workspace.additional_dirs:  # not already inside a root
                    kept.append(extra)
        self._from_roots = kept
        also = f" (also {', '.join(map(str, others))})" if others else ""
        no_longer = f"; no longer {', '.join(map(str, dropped))}" if dropped else ""
        message = f"working in the client's root {first}{also}{no_longer}"
        server.log_soon("deftly.roots", message, "info")
        err.print(f"deftly serve: {message}", highlight=False, soft_wrap=True)

    async def close(self) -> None:
        """Close the runtime served now (its background tasks, mounted servers)."""
        self._stop_watching()
        await self.runtime.close()


async def serve(
    workspace: Path | None,
    mode: str | None,
    transport: Transport = Transport.stdio,
    host: str = "127.0.0.1",
    port: int = 8765,
    mcp_config: list[Path] | None = None,
    *,
    setup: Callable[[Runtime], None] | None = None,
    trust: bool = False,
) -> None:
    """What `deftly serve` does; `setup` may adjust the runtime before serving (tests).
    `workspace` None: the current directory, until the client's roots say otherwise."""
    # Imported here: the MCP SDK is slow to load, and other commands do not need it.
    import asyncio
    import contextlib

    from deftly.config.loader import user_config_dir
    from deftly.env.signals import on_stop_signals
    from deftly.features.mcp.stdio import kill_mounted_servers
    from deftly.serve.approval import ElicitationApprover
    from deftly.serve.early import (
        BUILD_ANYWAY_SECONDS,
        ListingStore,
        PendingHost,
        WhenReady,
        listing_key,
        responsive_threads,
    )
    from deftly.serve.http_auth import TOKEN_ENV, is_loopback
    from deftly.serve.prompts import ServedPrompts
    from deftly.serve.questions import ElicitationAnswerer
    from deftly.serve.resources import SessionResources
    from deftly.serve.roots import RootsFollower
    from deftly.serve.serve import serve_http, serve_stdio
    from deftly.serve.server import ToolServer
    from deftly.session.paths import data_home

    where = workspace if workspace is not None else Path.cwd().resolve()
    token = os.environ.get(TOKEN_ENV) or None
    if transport is Transport.http and token is None and not is_loopback(host):
        raise UsageError(
            f"serving on {host} would let anyone who can reach it run tools in {where}. "
            f"Set {TOKEN_ENV} to a secret (clients then send `Authorization: Bearer "
            "<secret>`), or listen on a loopback address such as 127.0.0.1"
        )
    approver = ElicitationApprover(workspace=where)
    answerer = ElicitationAnswerer()

    def make_runtime(folder: Path) -> Runtime:
        # stdin may be the protocol: never ask about trust here (--trust or `deftly trust`)
        return build_runtime(
            folder, mode, False, mcp_config=mcp_config, approver=approver, trust=trust
        )

    async def start_runtime(rt: Runtime, folder: Path) -> Runtime:
        rt.connect_in_background()  # answer the client now; mounted tools come later
        await rt.start()
        from deftly.features.disclosure.disclosure import DeferredTools

        rt.service(DeferredTools).enabled = False  # MCP clients do their own tool disclosure
        approver.timeout = answerer.timeout = rt.config.mcp.approval_timeout
        approver.workspace = folder
        rt.answerer = answerer  # listed only to clients that can show a form
        if setup is not None:
            setup(rt)
        return rt

    async def open_runtime(folder: Path) -> Runtime:
        return await start_runtime(make_runtime(folder), folder)

    # stdio: answer from the last start's listing while the runtime is built (early.py)
    listings = ListingStore(data_home() / "serve" / "listings")
    key = None
    if transport is Transport.stdio:
        options = {"mode": mode, "mcp_config": [str(p) for p in mcp_config or ()], "trust": trust}
        key = listing_key(where, options, [user_config_dir(), where / ".deftly"])
    early = listings.load(key) if key is not None and setup is None else None
    pending = PendingHost() if early is not None else None
    prompts = ServedPrompts(None, None)
    resources = SessionResources([], None)  # both wired to the runtime by `served.attach`
    first: Runtime | None = None
    early_instructions = early.instructions if early is not None else None
    if pending is None:
        first = await open_runtime(where)
        print_diagnostics(first)
    served_host: ToolHost
    if first is not None:
        served_host = first
    else:
        assert pending is not None
        served_host = pending
    server = ToolServer(
        served_host,
        approver=approver,
        answerer=answerer,
        instructions=instructions(first) if first is not None else early_instructions,
        answer_timeout=first.config.mcp.approval_timeout if first is not None else 600.0,
        prompts=WhenReady(prompts, resources, pending) if pending is not None else prompts,
        resources=WhenReady(prompts, resources, pending) if pending is not None else resources,
        inbox=first.agent.inbox if first is not None else None,  # cron fires reach the client
        early=early,
    )
    served_at: asyncio.Future[ServedRuntime] = asyncio.get_running_loop().create_future()

    def attach(rt: Runtime) -> None:
        served = ServedRuntime(rt)
        served.attach(server, prompts, resources)
        served_at.set_result(served)

    def keep_listing(rt: Runtime) -> None:
        """What this start's runtime lists, for the next start to say early."""
        if key is None:
            return
        now = server.listing(instructions(rt))
        if early is None or not early.same_as(now) or early.instructions != now.instructions:
            listings.save(key, now)

    async def build_beside() -> None:
        """The runtime, built while the server answers from the early listing. If it
        cannot be built, every call is answered with why, and serve ends with that error
        once the client leaves (as a start that failed before answering would)."""
        assert pending is not None
        await pending.wanted.wait()
        try:
            with responsive_threads():  # the server's threads keep answering meanwhile
                rt = await asyncio.to_thread(make_runtime, where)
            await start_runtime(rt, where)
        except Exception as exc:
            pending.failed(exc)
            build_failed.append(exc)
            err.print(f"deftly serve: could not start: {exc}", highlight=False, soft_wrap=True)
            server.log_soon("deftly", f"deftly could not start: {exc}", "error")
            return
        except BaseException as exc:
            pending.failed(exc)
            raise
        print_diagnostics(rt)
        server.answer_timeout = rt.config.mcp.approval_timeout
        attach(rt)
        await server.replace_host(rt, inbox=rt.agent.inbox)  # told only if the list differs
        pending.ready(rt)
        keep_listing(rt)

    async def use_roots(roots: Roots) -> None:
        if pending is not None:
            pending.want()  # a call may be waiting for these roots
        await (await asyncio.shield(served_at)).use_roots(roots, open_runtime)

    if first is not None:
        attach(first)
        keep_listing(first)
    finished = True
    build_failed: list[Exception] = []
    builder = None
    if pending is not None:
        server.on_listed = pending.want
        asyncio.get_running_loop().call_later(BUILD_ANYWAY_SECONDS, pending.want)
        builder = asyncio.ensure_future(build_beside())
    try:
        follower = RootsFollower(
            use_roots,
            server.log_soon,
            fixed=workspace,
            warn=lambda text: err.print(text, highlight=False, soft_wrap=True),
            greet=server.seen,
            ask_at_start=transport is Transport.stdio,
        )
        follower.install(server.server)
        server.preflight = follower
        banner = f"deftly serve: {len(server.tool_definitions())} tools for {where}"

        def announce(where: str) -> None:
            # Plain text (no rich console to import, no markup read in the path)
            sys.stderr.write(f"{banner} {where}\n")
            sys.stderr.flush()

        try:
            if transport is Transport.stdio:
                announce("on stdio")
                finished = await serve_stdio(server)
            else:
                guarded = " (bearer token required)" if token else ""
                await serve_http(
                    server,
                    host,
                    port,
                    token=token,
                    on_ready=lambda url: announce(f"at {url}{guarded}"),
                )
        finally:
            await follower.aclose()
    finally:
        if builder is not None and not builder.done():
            builder.cancel()  # the client left before the runtime was up
            with contextlib.suppress(BaseException):
                await builder
        # a stop signal now (the SDK's client sends SIGTERM 2 s after closing our stdin)
        # must not cut this short: it ends the mounted servers' grace period instead
        if served_at.done():
            with on_stop_signals(lambda _: kill_mounted_servers()):
                await served_at.result().close()
    if build_failed:
        raise build_failed[0]  # the message and exit code of a start that failed
    if not finished:
        # Stopped by a signal while the client kept stdin open: everything is closed, but
        # the SDK's stdin read sits in a thread nothing can interrupt, so leave now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


ServeWorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="The workspace root (default: the client's first root, else the current "
        "directory). Given, the client's roots never widen it.",
        file_okay=False,
        exists=True,
        resolve_path=True,
    ),
]


def serve_command(
    workspace: ServeWorkspaceOpt = None,
    mode: ModeOpt = None,
    transport: Annotated[
        Transport, typer.Option("--transport", "-t", help="stdio (default) or http.")
    ] = Transport.stdio,
    host: Annotated[
        str, typer.Option("--host", help="HTTP: the address to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="HTTP: the port (0 picks a free one).")
    ] = 8765,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
) -> None:
    """Serve this workspace's tools to any MCP client (over stdio, or streamable HTTP).

    Over HTTP, set DEFTLY_SERVE_TOKEN to require `Authorization: Bearer <token>` on every
    request; it is required to listen on anything but a loopback address.

    Every call goes through the same pipeline as `deftly call`. When a call needs approval,
    the client's user is asked (MCP elicitation); a client that cannot ask is refused with a
    message saying how to allow the call (--mode auto, or an allow rule). Stops when the
    client closes stdin (stdio) or on Ctrl-C / SIGTERM (http), closing everything it started.
    """
    run_async(lambda: serve(workspace, mode, transport, host, port, mcp_config, trust=trust))


_STATE_STYLE = {
    "connected": "green",
    "failed": "red",
    "invalid": "red",
    "disabled": "dim",
    "pending": "yellow",
    "closed": "dim",
}


def _print_status(status: ServerStatus) -> None:
    from rich.text import Text

    style = _STATE_STYLE.get(status.state, "")
    head = Text()
    head.append(status.name, style="bold cyan")
    head.append("  ")
    head.append(status.state, style=style)
    head.append(f"  {status.transport}  {status.target}")
    out.print(head)
    out.print(Text(f"  from {status.origin}", style="dim"))
    if status.server or status.protocol_version:
        out.print(Text(f"  server {status.server or '?'}, protocol {status.protocol_version}"))
    if status.tools:
        out.print(Text(f"  {len(status.tools)} tools:"))
        for tool in status.tools:
            alias = "" if tool.name.endswith(tool.remote_name) else f"  ({tool.remote_name})"
            out.print(Text(f"    {tool.name}{alias}"))
    elif status.state == "connected":
        out.print(Text("  no tools"))
    for collision in status.collisions:
        out.print(Text(f"  left out: {collision.describe()}", style="yellow"))
    if status.ignored_keys:
        out.print(Text(f"  ignored keys: {', '.join(status.ignored_keys)}", style="dim"))
    if status.last_error:
        out.print(Text(f"  last error: {status.last_error}", style="red"))


@mcp_app.command("list")
def list_command(
    workspace: WorkspaceOpt = Path("."),
    as_json: JsonOpt = False,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
) -> None:
    """Start every configured MCP server and show its state, its tools and its last error."""

    from deftly.features.mcp.manager import McpManager

    async def main() -> None:
        async with build_runtime(workspace, None, False, mcp_config=mcp_config, trust=trust) as rt:
            statuses = rt.service(McpManager).statuses()
            if as_json:
                sys.stdout.write(json.dumps([s.to_json() for s in statuses], indent=2) + "\n")
                return
            print_diagnostics(rt)
            if not statuses:
                out.print(
                    "No MCP servers are configured. Add them to ~/.config/deftly/mcp.json or "
                    '<workspace>/.deftly/mcp.json as {"mcpServers": {"name": {"command": ...}}}.'
                )
            for status in statuses:
                _print_status(status)

    run_async(main)
