"""Resources of `deftly serve`: the session's spilled outputs and background-task logs, and
the mounted MCP servers' resources re-exported.

A result too long for the model is cut short and names the file holding all of it; a
background task's result names its log. Each such file is listed as the `file://` URI of the
very path the text names, so a client turns the path it read into a `resources/read`
without guessing. Only files under those session directories are served; anything else is
asked of the mounted servers (their resources carry deftly's namespaced URIs).
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import mcp.types as mt
from mcp.shared.exceptions import MCPError

from deftly.contract.errors import DeftlyError
from deftly.contract.records import frozen
from deftly.features.mcp.manager import McpManager

MAX_LISTED = 500
"""Files listed per directory, newest first (a long session spills many)."""


@frozen
class SessionArea:
    """One directory of the session: where it is on this machine, the path results name
    (the environment's view of it), and what its files are."""

    local: Path
    shown: Path
    what: str


def _uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class SessionResources:
    """The three resource handlers of the low-level server."""

    def __init__(self, areas: Sequence[SessionArea], mcp: McpManager | None = None) -> None:
        self.areas = tuple(areas)
        self.mcp = mcp

    def _files(self, area: SessionArea) -> list[Path]:
        try:
            found = [p for p in area.local.rglob("*") if p.is_file()]
        except OSError:
            return []
        found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        return found[:MAX_LISTED]

    def session_resources(self) -> list[mt.Resource]:
        """Every spilled output and task log now on disk."""
        out: list[mt.Resource] = []
        for area in self.areas:
            for path in self._files(area):
                shown = area.shown / path.relative_to(area.local)
                mime = mimetypes.guess_type(path.name)[0] or "text/plain"
                out.append(
                    mt.Resource(
                        uri=shown.as_uri(),
                        name=path.name,
                        title=f"{area.what}: {path.name}",
                        description=f"The full text of a {area.what.lower()} ({shown}).",
                        mime_type=mime,
                        size=path.stat().st_size,
                    )
                )
        return out

    async def list_resources(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListResourcesResult:
        """`resources/list`: the session's files, then the mounted servers' resources."""
        listed = self.session_resources()
        for mounted in self.mcp.resources() if self.mcp is not None else []:
            listed.append(
                mt.Resource(
                    uri=mounted.uri,
                    name=mounted.name,
                    title=mounted.title,
                    description=mounted.description,
                    mime_type=mounted.mime_type,
                )
            )
        return mt.ListResourcesResult(resources=listed)

    async def list_templates(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListResourceTemplatesResult:
        """`resources/templates/list`: one template per session directory, for a file named
        in a result but not listed yet (or beyond the listing's limit)."""
        templates = [
            mt.ResourceTemplate(
                name=area.what.lower().replace(" ", "-"),
                title=area.what,
                uri_template=area.shown.as_uri() + "/{name}",
                description=f"A {area.what.lower()} of this session, by file name.",
                mime_type="text/plain",
            )
            for area in self.areas
        ]
        return mt.ListResourceTemplatesResult(resource_templates=templates)

    def _local(self, uri: str) -> Path | None:
        """The file on this machine a session URI stands for, or None when it is not one."""
        path = _uri_path(uri)
        if path is None or ".." in path.parts:
            return None
        for area in self.areas:
            if _inside(path, area.shown):
                return area.local / path.relative_to(area.shown)
        return None

    async def read_resource(
        self, ctx: Any, params: mt.ReadResourceRequestParams
    ) -> mt.ReadResourceResult:
        """`resources/read`: a session file's contents (text, or base64 when it is not
        UTF-8), else the mounted server's answer; an unknown URI is an invalid-params error
        that says what can be read."""
        uri = str(params.uri)
        local = self._local(uri)
        if local is not None:
            return self._read_file(uri, local)
        if self.mcp is not None:
            try:
                return await self.mcp.read_resource(uri)
            except DeftlyError as exc:
                raise MCPError(mt.INVALID_PARAMS, str(exc)) from None
        raise MCPError(
            mt.INVALID_PARAMS,
            f"There is no resource {uri}. resources/list shows the session's spilled outputs "
            "and task logs that can be read.",
        )

    @staticmethod
    def _read_file(uri: str, path: Path) -> mt.ReadResourceResult:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise MCPError(
                mt.INVALID_PARAMS,
                f"{path.name} is no longer in the session (finished sessions are cleaned up); "
                "run the call again to get its output.",
            ) from None
        except OSError as exc:
            raise MCPError(mt.INTERNAL_ERROR, f"Could not read {path.name}: {exc}") from None
        mime = mimetypes.guess_type(path.name)[0] or "text/plain"
        try:
            text = data.decode()
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode()
            content: mt.TextResourceContents | mt.BlobResourceContents = mt.BlobResourceContents(
                uri=uri, mime_type="application/octet-stream", blob=blob
            )
        else:
            content = mt.TextResourceContents(uri=uri, mime_type=mime, text=text)
        return mt.ReadResourceResult(contents=[content])
