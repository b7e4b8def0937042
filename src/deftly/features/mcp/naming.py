"""Names of mounted MCP tools: `mcp__<server>__<tool>`, at most 64 characters.

Model APIs reject tool names over 64 characters and most reject characters other than
letters, digits, `_` and `-`. Each part is sanitised so it can never contain the `__`
separator, and a name that is still too long is cut and ends with a short hash of the full
name, so it stays unique and the same on every run.

The hash is a 32-bit FNV-1a computed in *signed* arithmetic and printed the way
JavaScript prints a negative number in hex (`-785fd989`), then left-padded with zeros to 8
characters. The quirk is kept on purpose: the names match those other clients produce, so
permission rules and tool lists written for them keep working.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

MCP_PREFIX = "mcp__"
SEPARATOR = "__"
MAX_TOOL_NAME = 64

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_UNDERSCORES = re.compile(r"_+")

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def sanitize_part(part: str) -> str:
    """Every character outside `[A-Za-z0-9_-]` becomes `_`; runs of `_` become one."""
    return _UNDERSCORES.sub("_", _UNSAFE.sub("_", part))


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def stable_hash8(text: str) -> str:
    """Signed 32-bit FNV-1a of the UTF-16 code units, rendered like JS `toString(16)`."""
    h = _int32(_FNV_OFFSET)
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = _int32(h ^ int.from_bytes(units[i : i + 2], "little"))
        h = _int32(h * _FNV_PRIME)
    rendered = format(h, "x") if h >= 0 else "-" + format(-h, "x")
    return rendered.rjust(8, "0")


def qualify(server: str, tool: str) -> str:
    """The deftly name of `tool` on `server`: deterministic, unique, at most 64 characters."""
    full = f"{MCP_PREFIX}{sanitize_part(server)}{SEPARATOR}{sanitize_part(tool)}"
    if len(full) <= MAX_TOOL_NAME:
        return full
    digest = stable_hash8(full)
    return f"{full[: MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def is_mcp_tool_name(name: str) -> bool:
    """True for `mcp__<server>__<tool>` with both parts non-empty."""
    if not name.startswith(MCP_PREFIX):
        return False
    server, sep, tool = name[len(MCP_PREFIX) :].partition(SEPARATOR)
    return bool(sep and server and tool)


RESOURCE_SCHEME = "mcp"


def resource_uri(server: str, remote_uri: str) -> str:
    """deftly's URI for a mounted server's resource: `mcp://<server>/<remote uri>`, both parts
    percent-encoded, so any remote URI (with its own scheme and slashes) maps back exactly."""
    return f"{RESOURCE_SCHEME}://{quote(server, safe='')}/{quote(remote_uri, safe='')}"


def parse_resource_uri(uri: str) -> tuple[str, str] | None:
    """(server, remote uri) of a URI made by `resource_uri`, or None when it is not one."""
    head = f"{RESOURCE_SCHEME}://"
    if not uri.startswith(head):
        return None
    server, sep, remote = uri[len(head) :].partition("/")
    if not (sep and server and remote):
        return None
    return unquote(server), unquote(remote)
