"""Which MCP servers to mount: `mcp.json` files in the shape other MCP clients use.

    {"mcpServers": {"github": {"command": "npx", "args": ["-y", "@x/github-mcp"],
                               "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
                    "docs":   {"url": "https://example.com/mcp",
                               "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}

Files are read in order (user, project, extra files, then `[mcp] servers`); the project's
file only when the workspace is trusted (its commands would run on start). A later entry
with the same name replaces an earlier one. A broken file or entry is reported and skipped:
it never stops the other servers or the runtime. Keys other clients use and deftly does not
(`autoApprove`, `timeout`...) are ignored and listed by `deftly mcp list`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from deftly.config.loader import user_config_dir, workspace_mcp_file
from deftly.config.mcp import McpConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.contract.records import frozen

TransportKind = Literal["stdio", "http"]
State = Literal["disabled", "pending", "connected", "failed", "closed"]
"""A mounted server's state."""

_HTTP_NAMES = frozenset({"http", "streamable-http", "streamable_http", "streamablehttp"})
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@frozen
class ServerSpec:
    """One server to mount, with every default filled in."""

    name: str
    transport: TransportKind
    origin: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    startup_timeout: float = 30.0
    call_timeout: float = 300.0
    enabled_tools: frozenset[str] | None = None
    disabled_tools: frozenset[str] = frozenset()
    ignored_keys: tuple[str, ...] = ()

    def offers(self, raw_tool: str) -> bool:
        """Whether the config lets this server's tool `raw_tool` be mounted."""
        if self.enabled_tools is not None and raw_tool not in self.enabled_tools:
            return False
        return raw_tool not in self.disabled_tools

    @property
    def target(self) -> str:
        """What to show a person: the command line or the URL."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return self.url or ""


@frozen
class InvalidServer:
    """An entry that could not be understood; shown by `deftly mcp list`."""

    name: str
    origin: str
    error: str


class _RawServer(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    transport: str | None = Field(None, validation_alias=AliasChoices("transport", "type"))
    command: str | None = Field(None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(None, min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    disabled: bool = False
    startup_timeout: float | None = Field(
        None, gt=0, validation_alias=AliasChoices("startup_timeout", "startupTimeout")
    )
    call_timeout: float | None = Field(
        None, gt=0, validation_alias=AliasChoices("call_timeout", "callTimeout")
    )
    enabled_tools: list[str] | None = Field(
        None, validation_alias=AliasChoices("enabled_tools", "enabledTools")
    )
    disabled_tools: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("disabled_tools", "disabledTools")
    )


class SpecError(ValueError):
    """An `mcpServers` entry that cannot be used as written (a wrong type, a missing command, an
    unset `${VAR}`); the message says which."""

    pass


def expand(text: str, environ: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` from the environment, as in other clients' files."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise SpecError(f"${{{name}}} is not set in the environment")
            return default
        return value

    return _VARIABLE.sub(substitute, text)


def _pydantic_message(exc: ValidationError) -> str:
    parts = []
    for item in exc.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"])
        parts.append(f"{where}: {item['msg']}" if where else item["msg"])
    return "; ".join(parts)


def build_spec(
    name: str,
    data: object,
    origin: str,
    *,
    defaults: McpConfig,
    workspace: Path,
    environ: Mapping[str, str],
) -> ServerSpec:
    """Check one `mcpServers` entry and fill in the defaults; raise `SpecError`."""
    if not isinstance(data, Mapping):
        raise SpecError(f"expected an object, got {type(data).__name__}")
    try:
        raw = _RawServer.model_validate(dict(data))
    except ValidationError as exc:
        raise SpecError(_pydantic_message(exc)) from None
    kind = (raw.transport or "").strip().lower()
    transport: TransportKind
    if kind == "stdio" or (not kind and raw.command):
        transport = "stdio"
        if not raw.command:
            raise SpecError('a stdio server needs a "command"')
    elif kind in _HTTP_NAMES or (not kind and raw.url):
        transport = "http"
        if not raw.url:
            raise SpecError('an HTTP server needs a "url"')
    elif kind == "sse":
        raise SpecError(
            'the legacy "sse" transport is not supported; use the server\'s streamable HTTP '
            'endpoint ("type": "http")'
        )
    elif kind:
        raise SpecError(f'unknown transport "{raw.transport}"; use "stdio" or "http"')
    else:
        raise SpecError('give either "command" (stdio) or "url" (streamable HTTP)')

    def sub(text: str) -> str:
        return expand(text, environ)

    cwd: Path | None = None
    if transport == "stdio":
        cwd = workspace
        if raw.cwd:
            given = Path(sub(raw.cwd)).expanduser()
            cwd = given if given.is_absolute() else workspace / given
    return ServerSpec(
        name=name,
        transport=transport,
        origin=origin,
        command=sub(raw.command) if raw.command else None,
        args=tuple(sub(a) for a in raw.args),
        env={k: sub(v) for k, v in raw.env.items()},
        cwd=cwd,
        url=sub(raw.url) if raw.url else None,
        headers={k: sub(v) for k, v in raw.headers.items()},
        enabled=raw.enabled and not raw.disabled,
        startup_timeout=raw.startup_timeout or defaults.startup_timeout,
        call_timeout=raw.call_timeout or defaults.call_timeout,
        enabled_tools=frozenset(raw.enabled_tools) if raw.enabled_tools is not None else None,
        disabled_tools=frozenset(raw.disabled_tools),
        ignored_keys=tuple(sorted(raw.model_extra or {})),
    )


def config_files(
    workspace: Path, config: McpConfig, *, trusted_workspace: bool = True
) -> list[Path]:
    """The mcp.json files to read, in order (missing ones are skipped later). Files in the
    workspace (its own, and relative `config_files`, e.g. a user's `.mcp.json` convention)
    count only when the workspace is trusted: their commands would run on start."""
    files = [user_config_dir() / "mcp.json"]
    if trusted_workspace:
        files.append(workspace_mcp_file(workspace))
    for extra in config.config_files:
        path = Path(extra).expanduser()
        if path.is_absolute():
            files.append(path)
        elif trusted_workspace:
            files.append(workspace / path)
    return files


def _read_file(path: Path, diagnostics: list[Diagnostic]) -> Mapping[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        diagnostics.append(Diagnostic("error", str(path), f"cannot read it: {exc.strerror}"))
        return None
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        diagnostics.append(
            Diagnostic(
                "error",
                str(path),
                f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                "its servers were not mounted",
            )
        )
        return None
    if not isinstance(data, Mapping):
        diagnostics.append(
            Diagnostic("error", str(path), 'expected an object with "mcpServers"; ignored')
        )
        return None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, Mapping):
        diagnostics.append(Diagnostic("error", str(path), '"mcpServers" must be an object'))
        return None
    return servers


def load_specs(
    workspace: Path,
    config: McpConfig,
    diagnostics: list[Diagnostic],
    environ: Mapping[str, str] | None = None,
    *,
    trusted_workspace: bool = True,
) -> tuple[list[ServerSpec], list[InvalidServer]]:
    """Every configured server, later layers overriding earlier ones by name."""
    env = os.environ if environ is None else environ
    layers: list[tuple[str, Mapping[str, Any]]] = []
    for path in config_files(workspace, config, trusted_workspace=trusted_workspace):
        servers = _read_file(path, diagnostics)
        if servers is not None:
            layers.append((str(path), servers))
    if config.servers:
        layers.append(("[mcp] servers", config.servers))
    chosen: dict[str, ServerSpec | InvalidServer] = {}
    for origin, servers in layers:
        for name, data in servers.items():
            try:
                spec: ServerSpec | InvalidServer = build_spec(
                    str(name), data, origin, defaults=config, workspace=workspace, environ=env
                )
            except SpecError as exc:
                spec = InvalidServer(str(name), origin, str(exc))
                diagnostics.append(
                    Diagnostic(
                        "error", origin, f'MCP server "{name}" is not valid and was skipped: {exc}'
                    )
                )
            chosen.pop(str(name), None)
            chosen[str(name)] = spec
    specs = [s for s in chosen.values() if isinstance(s, ServerSpec)]
    invalid = [s for s in chosen.values() if isinstance(s, InvalidServer)]
    return specs, invalid
