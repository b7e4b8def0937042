"""The MCP client side of a runtime: mount every configured server's tools.

Servers start in parallel, each bounded by its start-up timeout; one that fails is recorded
(state, last error) and never stops the others or the runtime. Their tools are registered
as `mcp__<server>__<tool>`; a name that is already taken keeps its first owner and the loser
is reported. A server that dies keeps its tools registered, so the next call can restart it.

As a client deftly also offers roots (the workspace root and additional directories, read
when a server asks), passes a server's elicitation to the calling agent's user, follows the
servers' list changes, and re-exports their prompts (`mcp__<server>__<prompt>`) and
resources (`mcp://<server>/<percent-encoded remote uri>`, see `naming.resource_uri`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from deftly.config.mcp import McpConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.records import frozen
from deftly.execution.events import EventBus, RuntimeNotice
from deftly.features.mcp.naming import (
    MCP_PREFIX,
    SEPARATOR,
    parse_resource_uri,
    qualify,
    resource_uri,
    sanitize_part,
)
from deftly.features.mcp.specs import InvalidServer, ServerSpec, State, load_specs
from deftly.registry.registry import Disclosure, ToolRegistry

if TYPE_CHECKING:  # the SDK is imported only when a server is configured (it is slow to load)
    import mcp.types as mt

    from deftly.contract.tool import ToolContext
    from deftly.features.mcp.connection import McpConnection
    from deftly.session.questions import QuestionDesk

ChangeKind = Literal["tools", "resources", "prompts"]
"""What changed among the mounted servers' offerings (for `McpManager.on_change`)."""

log = logging.getLogger(__name__)


@frozen
class Collision:
    """A tool left out because its qualified name was already taken."""

    qualified: str
    tool: str
    kind: Literal["same_server", "other_server", "other_tool"]
    winner: str
    """The first tool's raw name (same server), the other server's name, or the tool's."""

    def describe(self) -> str:
        """The collision for a diagnostic: the remote tool, the name it would have had, and who
        holds that name."""
        head = f'"{self.tool}" -> {self.qualified}'
        if self.kind == "same_server":
            return f'{head} (same name as "{self.winner}" from this server)'
        if self.kind == "other_server":
            return f'{head} (already taken by MCP server "{self.winner}")'
        return f"{head} (already taken by a non-MCP tool)"


@frozen
class MountedTool:
    """One tool of a server as mounted: its deftly name and the name the server knows it by."""

    name: str
    """The deftly name (`mcp__server__tool`)."""
    remote_name: str


@frozen
class MountedResource:
    """A resource of a mounted server as deftly re-exports it: `uri` is deftly's
    (namespaced by server), `remote_uri` the server's own."""

    uri: str
    remote_uri: str
    server: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@frozen
class MountedPrompt:
    """A prompt of a mounted server as deftly re-exports it (`mcp__<server>__<prompt>`)."""

    name: str
    remote_name: str
    server: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[tuple[str, str | None, bool], ...] = ()
    """(name, description, required) of each argument."""


@frozen
class ServerStatus:
    """What `deftly mcp list` shows for one server."""

    name: str
    state: State | Literal["invalid"]
    transport: str
    target: str
    origin: str
    tools: tuple[MountedTool, ...] = ()
    collisions: tuple[Collision, ...] = ()
    last_error: str | None = None
    protocol_version: str | None = None
    server: str | None = None
    ignored_keys: tuple[str, ...] = ()
    restarts: int = 0

    def to_json(self) -> dict[str, Any]:
        """The status as JSON for `deftly mcp list --json`."""
        return {
            "name": self.name,
            "state": self.state,
            "transport": self.transport,
            "target": self.target,
            "origin": self.origin,
            "tools": [{"name": t.name, "remote_name": t.remote_name} for t in self.tools],
            "collisions": [
                {"qualified": c.qualified, "tool": c.tool, "kind": c.kind, "winner": c.winner}
                for c in self.collisions
            ],
            "last_error": self.last_error,
            "protocol_version": self.protocol_version,
            "server": self.server,
            "ignored_keys": list(self.ignored_keys),
            "restarts": self.restarts,
        }


@dataclass
class _Mounted:
    connection: McpConnection
    tools: list[MountedTool] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    unregister: list[Callable[[], None]] = field(default_factory=list)


class McpManager:
    """Starts the configured MCP servers, mounts their tools into the registry, restarts a dead
    server on its next call, and closes them all (see the module docstring)."""

    def __init__(
        self,
        workspace: Path,
        config: McpConfig,
        registry: ToolRegistry,
        *,
        events: EventBus | None = None,
        diagnostics: list[Diagnostic] | None = None,
        max_text: int = 50_000,
        disclosure: Disclosure = "inline",
        roots: Callable[[], Sequence[Path]] | None = None,
    ) -> None:
        self.workspace = workspace
        self._roots = roots or (lambda: (workspace,))
        self._listeners: list[Callable[[ChangeKind], None]] = []
        self._desks: dict[str, QuestionDesk] = {}
        self._starting: asyncio.Task[None] | None = None
        self._resource_tool: Callable[[], None] | None = None
        self.config = config
        self.registry = registry
        self.events = events or EventBus()
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.max_text = max_text
        self.disclosure = disclosure
        self.invalid: list[InvalidServer] = []
        self._servers: dict[str, _Mounted] = {}
        self._owners: dict[str, str] = {}
        self._started = False
        self._hold_registration = False

    # -- lifecycle -----------------------------------------------------------------------

    async def start(
        self, specs: list[ServerSpec] | None = None, *, background: bool = False
    ) -> None:
        """Read the configuration and start every enabled server, in parallel. With
        `background`, return at once: each server's tools are registered as it connects, and
        `on_change("tools")` tells the listeners (`close()` stops a start still going)."""
        if self._started:
            return
        self._started = True
        if specs is None:
            specs, self.invalid = load_specs(self.workspace, self.config, self.diagnostics)
        if not specs:
            return
        from deftly.features.mcp.connection import ClientHooks, McpConnection

        hooks = ClientHooks(roots=self._roots, elicit=self._elicit, changed=self._list_changed)
        for spec in specs:
            connection = McpConnection(spec, on_connected=self._connected, hooks=hooks)
            self._servers[spec.name] = _Mounted(connection)
        starting = [m.connection for m in self._servers.values() if m.connection.spec.enabled]
        if background:
            self._starting = asyncio.create_task(self._start_each(starting), name="mcp:start")
            return
        # Register in configuration order once all are up, so who wins a name is stable.
        self._hold_registration = True
        try:
            await asyncio.gather(*(c.start() for c in starting))
        finally:
            self._hold_registration = False
        for mounted in self._servers.values():
            connection = mounted.connection
            if connection.state == "connected":
                self._register(mounted)
            elif connection.state == "failed":
                self._report(
                    "warning",
                    connection.name,
                    f"not mounted: {connection.last_error}",
                    "mcp.server_failed",
                )
        self._sync_resource_tool()

    async def _start_each(self, starting: list[McpConnection]) -> None:
        """Background start: every server at once; each registers when it connects."""

        async def one(connection: McpConnection) -> None:
            if not await connection.start() and connection.state == "failed":
                self._report(
                    "warning",
                    connection.name,
                    f"not mounted: {connection.last_error}",
                    "mcp.server_failed",
                )

        await asyncio.gather(*(one(c) for c in starting), return_exceptions=True)

    async def wait_started(self) -> None:
        """Wait for a background start to finish (every server connected or failed)."""
        if self._starting is not None:
            await asyncio.wait({self._starting})

    async def close(self) -> None:
        """Stop every server (bounded; one slow server does not hold up the others) and take
        their tools out of the registry. The statuses stay readable."""
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.cancel()
            await asyncio.wait({starting}, timeout=10.0)
        if self._resource_tool is not None:
            self._resource_tool()
            self._resource_tool = None
        for mounted in self._servers.values():
            for undo in mounted.unregister:
                undo()
            mounted.unregister = []
        self._owners.clear()
        await asyncio.gather(
            *(m.connection.close() for m in self._servers.values()), return_exceptions=True
        )

    # -- registration --------------------------------------------------------------------

    def _connected(self, connection: McpConnection) -> None:
        """A (re)connect succeeded: (re)register its tools, the list may have changed."""
        mounted = self._servers.get(connection.name)
        if mounted is not None and not self._hold_registration:
            self._register(mounted)
            self._sync_resource_tool()
            self._changed("tools")
            if connection.resources:
                self._changed("resources")
            if connection.prompts:
                self._changed("prompts")

    def _list_changed(self, connection: McpConnection, kind: ChangeKind) -> None:
        """A server said one of its lists changed (it has been listed again)."""
        mounted = self._servers.get(connection.name)
        if mounted is None or self._hold_registration:
            return
        if kind == "tools":
            self._register(mounted)
        else:
            self._sync_resource_tool()
        self._changed(kind)

    def _changed(self, kind: ChangeKind) -> None:
        for listener in list(self._listeners):
            try:
                listener(kind)
            except Exception:
                log.exception("an MCP change listener failed")

    def _sync_resource_tool(self) -> None:
        """ReadMcpResource is offered while some connected server offers resources."""
        wanted = any(c.offers_resources or c.resources for c in self._connected_servers())
        if wanted and self._resource_tool is None:
            from deftly.features.mcp.read_resource import ReadMcpResourceTool

            tool = ReadMcpResourceTool(self)
            if tool.name not in self.registry:
                self._resource_tool = self.registry.register(tool, source="mcp")
        elif not wanted and self._resource_tool is not None:
            self._resource_tool()
            self._resource_tool = None

    def _register(self, mounted: _Mounted) -> None:
        connection = mounted.connection
        server = connection.name
        for undo in mounted.unregister:
            undo()
        for qualified in [q for q, owner in self._owners.items() if owner == server]:
            del self._owners[qualified]
        mounted.unregister, mounted.tools, mounted.collisions = [], [], []
        from deftly.features.mcp.tool import McpTool

        first_raw: dict[str, str] = {}
        for remote in connection.tools:
            if not connection.spec.offers(remote.name):
                continue
            qualified = qualify(server, remote.name)
            owner = self._owners.get(qualified)
            if qualified in first_raw:
                mounted.collisions.append(
                    Collision(qualified, remote.name, "same_server", first_raw[qualified])
                )
                continue
            if owner is not None:
                mounted.collisions.append(Collision(qualified, remote.name, "other_server", owner))
                continue
            if qualified in self.registry:
                mounted.collisions.append(
                    Collision(qualified, remote.name, "other_tool", qualified)
                )
                continue
            first_raw[qualified] = remote.name
            tool = McpTool(
                qualified,
                remote,
                connection,
                trust_hints=self.config.trust_read_only_hints,
                max_text=self.max_text,
            )
            mounted.unregister.append(
                self.registry.register(tool, source="mcp", disclosure=self.disclosure)
            )
            self._owners[qualified] = server
            mounted.tools.append(MountedTool(qualified, remote.name))
        if mounted.collisions:
            items = "; ".join(c.describe() for c in mounted.collisions)
            count = len(mounted.collisions)
            self._report(
                "warning",
                server,
                f"{count} tool name{'s' if count != 1 else ''} collided with names already "
                f"taken, so {'those tools were' if count != 1 else 'that tool was'} left out "
                f"(the first keeps the name): {items}",
                "mcp.tool_name_collision",
            )

    def _report(
        self, level: Literal["error", "warning"], server: str, text: str, kind: str
    ) -> None:
        source = f'MCP server "{server}"'
        self.diagnostics.append(Diagnostic(level, source, text))
        self.events.emit(RuntimeNotice(kind, f"{source}: {text}", {"server": server}))

    def describe_missing(self, name: str) -> str | None:
        """Why a tool of a server that is not running does not exist (executor hook)."""
        for mounted in self._servers.values():
            connection = mounted.connection
            if not name.startswith(f"{MCP_PREFIX}{sanitize_part(connection.name)}{SEPARATOR}"):
                continue
            if connection.state == "disabled":
                return (
                    f'There is no tool "{name}": the MCP server "{connection.name}" is disabled '
                    "in its configuration."
                )
            if connection.state in ("failed", "pending"):
                reason = (connection.last_error or "it is not running").splitlines()[0]
                return (
                    f'There is no tool "{name}" right now: the MCP server "{connection.name}" is '
                    f"not running ({reason}). Tell the user; `deftly mcp list` shows the details."
                )
        return None

    # -- resources, prompts, changes, questions ------------------------------------------

    def _connected_servers(self) -> list[McpConnection]:
        return [m.connection for m in self._servers.values() if m.connection.state == "connected"]

    def resources(self) -> list[MountedResource]:
        """Every connected server's resources, namespaced."""
        return [
            MountedResource(
                uri=resource_uri(c.name, str(r.uri)),
                remote_uri=str(r.uri),
                server=c.name,
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
            )
            for c in self._connected_servers()
            for r in c.resources
        ]

    def mounted_uri(self, server: str, remote_uri: str) -> str:
        """deftly's URI of a server's resource (what `read_resource` takes)."""
        return resource_uri(server, remote_uri)

    async def read_resource(self, uri: str) -> mt.ReadResourceResult:
        """Read one re-exported resource through its server; DeftlyError when `uri` names no
        mounted server or the server cannot read it. Any remote URI of a configured server
        is passed on (a tool's resource link need not be listed)."""
        from deftly.contract.errors import DeftlyError

        parsed = parse_resource_uri(uri)
        mounted = self._servers.get(parsed[0]) if parsed else None
        if parsed is None or mounted is None:
            known = ", ".join(sorted(self._servers)) or "none"
            raise DeftlyError(
                f"No mounted MCP server offers the resource {uri}: deftly's resource URIs "
                f"read mcp://<server>/<the server's uri, percent-encoded> (servers: {known})."
            )
        return await mounted.connection.read_resource(parsed[1])

    def prompts(self) -> list[MountedPrompt]:
        """Every connected server's prompts, namespaced."""
        return [
            MountedPrompt(
                name=qualify(c.name, p.name),
                remote_name=p.name,
                server=c.name,
                title=p.title,
                description=p.description,
                arguments=tuple(
                    (a.name, a.description, bool(a.required)) for a in (p.arguments or ())
                ),
            )
            for c in self._connected_servers()
            for p in c.prompts
        ]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> mt.GetPromptResult:
        """Get one re-exported prompt through its server; DeftlyError when unknown."""
        from deftly.contract.errors import DeftlyError

        for prompt in self.prompts():
            if prompt.name == name:
                connection = self._servers[prompt.server].connection
                return await connection.get_prompt(prompt.remote_name, arguments)
        raise DeftlyError(f'No mounted MCP server offers the prompt "{name}".')

    def on_change(self, listener: Callable[[ChangeKind], None]) -> Callable[[], None]:
        """Call `listener` whenever the mounted tools, resources or prompts change (a server
        connected late, or sent a list_changed notification); returns the unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def roots_changed(self) -> None:
        """The workspace's directories changed: tell every mounted server (roots/list_changed)."""
        for connection in self._connected_servers():
            connection.roots_changed()

    async def settled(self) -> None:
        """Wait until every server's pending work (re-lists, notifications) is done."""
        await asyncio.gather(*(m.connection.settled() for m in self._servers.values()))

    def add_desk(self, agent_id: str, desk: QuestionDesk) -> Callable[[], None]:
        """Where the questions of calls made by `agent_id` go (a server's elicitation)."""
        self._desks[agent_id] = desk

        def remove() -> None:
            if self._desks.get(agent_id) is desk:
                del self._desks[agent_id]

        return remove

    async def _elicit(
        self, connection: McpConnection, params: mt.ElicitRequestParams, ctx: ToolContext | None
    ) -> tuple[mt.ElicitResult | mt.ErrorData, str | None]:
        from deftly.features.mcp.asking import elicit

        desk = self._desks.get(ctx.identity.agent_id) if ctx is not None else None
        return await elicit(connection.name, params, ctx, desk)

    # -- status --------------------------------------------------------------------------

    def connection(self, name: str) -> McpConnection | None:
        """The connection of the server `name`, or None when no such server is configured."""
        mounted = self._servers.get(name)
        return mounted.connection if mounted else None

    def statuses(self) -> list[ServerStatus]:
        """Every configured server (valid or not) in configuration order."""
        out: list[ServerStatus] = []
        for mounted in self._servers.values():
            c = mounted.connection
            out.append(
                ServerStatus(
                    name=c.name,
                    state=c.state,
                    transport=c.spec.transport,
                    target=c.spec.target,
                    origin=c.spec.origin,
                    tools=tuple(mounted.tools),
                    collisions=tuple(mounted.collisions),
                    last_error=c.last_error,
                    protocol_version=c.protocol_version,
                    server=c.server_name,
                    ignored_keys=c.spec.ignored_keys,
                    restarts=c.restarts,
                )
            )
        out.extend(
            ServerStatus(
                name=bad.name,
                state="invalid",
                transport="?",
                target="",
                origin=bad.origin,
                last_error=bad.error,
            )
            for bad in self.invalid
        )
        return out
