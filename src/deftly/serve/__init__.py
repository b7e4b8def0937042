"""`deftly serve`: a runtime's tools as an MCP server, over stdio or streamable HTTP.

`ToolServer` exposes a runtime's tools through the SDK's low-level server; `serve_stdio` /
`serve_http` run it; `ElicitationApprover` asks the client's user when a call needs
approval. A surface above the runtime, like the command line.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ElicitationApprover": "deftly.serve.approval",
    "ToolServer": "deftly.serve.server",
    "serve_http": "deftly.serve.serve",
    "serve_stdio": "deftly.serve.serve",
}


def __getattr__(name: str) -> Any:
    """Exports load on first use: the SDK takes most of a second to import."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deftly.serve' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["ElicitationApprover", "ToolServer", "serve_http", "serve_stdio"]
