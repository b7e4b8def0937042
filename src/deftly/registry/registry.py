"""The tool table: name → tool, where it came from, and how it is disclosed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal, TypeAlias

from deftly.contract.records import frozen
from deftly.contract.tool import BaseTool

Source: TypeAlias = Literal["builtin", "plugin", "user", "mcp"]
Disclosure: TypeAlias = Literal["inline", "deferred"]


@frozen
class RegisteredTool:
    """One registry entry: the tool, where it came from (built-in, plugin, user, MCP) and whether
    its schema is listed inline or deferred."""

    tool: BaseTool
    source: Source = "builtin"
    disclosure: Disclosure = "inline"

    @property
    def name(self) -> str:
        """The tool's name, the registry's key."""
        return self.tool.name


def tool_sort_key(name: str) -> tuple[str, str]:
    """Case-insensitive, lower case first on ties (close to a locale collation)."""
    return (name.casefold(), name.swapcase())


class ToolRegistry:
    """Name -> tool. Registering a name again replaces it; an unregister handle only removes
    its own entry.

    A registry may layer over a `parent` (an agent's registry over its session's, where
    MCP tools are mounted once for every agent): lookups fall back to the parent, and an
    entry of this registry shadows the parent's of the same name. Registering always
    writes here.
    """

    def __init__(self, parent: ToolRegistry | None = None) -> None:
        self._entries: dict[str, RegisteredTool] = {}
        self.parent = parent

    def register(
        self, tool: BaseTool, *, source: Source = "builtin", disclosure: Disclosure = "inline"
    ) -> Callable[[], None]:
        """Add (or replace) `tool`; returns the function that removes this entry again."""
        entry = RegisteredTool(tool, source, disclosure)
        self._entries[tool.name] = entry

        def unregister() -> None:
            if self._entries.get(tool.name) is entry:
                del self._entries[tool.name]

        return unregister

    def unregister(self, name: str) -> None:
        """Remove this registry's own entry for `name` (the parent's stays)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> RegisteredTool | None:
        """The entry for `name`: this registry's own, else the parent's."""
        entry = self._entries.get(name)
        if entry is None and self.parent is not None:
            return self.parent.get(name)
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries or (self.parent is not None and name in self.parent)

    def __len__(self) -> int:
        return len(self._merged())

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self.entries())

    def _merged(self) -> dict[str, RegisteredTool]:
        if self.parent is None:
            return self._entries
        return {**self.parent._merged(), **self._entries}

    def entries(self) -> list[RegisteredTool]:
        """Every entry (the parent's too), sorted by name."""
        merged = self._merged()
        return [merged[n] for n in sorted(merged, key=tool_sort_key)]

    def names(self) -> list[str]:
        """Every name (the parent's too), sorted."""
        return sorted(self._merged(), key=tool_sort_key)
