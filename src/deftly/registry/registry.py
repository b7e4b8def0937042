"""The tool table: name → tool, where it came from, and how it is disclosed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, TypeAlias

from deftly.contract.tool import BaseTool

Source: TypeAlias = Literal["builtin", "plugin", "user", "mcp"]
Disclosure: TypeAlias = Literal["inline", "deferred"]


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    tool: BaseTool
    source: Source = "builtin"
    disclosure: Disclosure = "inline"

    @property
    def name(self) -> str:
        return self.tool.name


def tool_sort_key(name: str) -> tuple[str, str]:
    """Case-insensitive, lower case first on ties (close to a locale collation)."""
    return (name.casefold(), name.swapcase())


class ToolRegistry:
    """Registering a name again replaces it; an unregister handle only removes its own entry."""

    def __init__(self) -> None:
        self._entries: dict[str, RegisteredTool] = {}

    def register(
        self, tool: BaseTool, *, source: Source = "builtin", disclosure: Disclosure = "inline"
    ) -> Callable[[], None]:
        entry = RegisteredTool(tool, source, disclosure)
        self._entries[tool.name] = entry

        def unregister() -> None:
            if self._entries.get(tool.name) is entry:
                del self._entries[tool.name]

        return unregister

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def get(self, name: str) -> RegisteredTool | None:
        return self._entries.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self.entries())

    def entries(self) -> list[RegisteredTool]:
        return [self._entries[n] for n in sorted(self._entries, key=tool_sort_key)]

    def names(self) -> list[str]:
        return sorted(self._entries, key=tool_sort_key)
