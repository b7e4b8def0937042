"""Deferred disclosure: tools announced by name and loaded on demand with `select_tools`.

A big MCP server can add dozens of tools whose schemas would fill the model's context on
every request. With `[mcp] select_tools = true`, *deferred* tools (every MCP tool by
default, and host tools registered with `disclosure="deferred"`) stay out of the tool list
the agent loop sends; the model is told their names in an announcement and loads the ones
it needs with `select_tools`. Loading is remembered for the session.

The announcement is an injection (kind "deferred_tools") when the agent's channel is given
(`DeferredTools(..., injections=...)`): an agent loop draining the channel hears it, and
`shape()` (what `Runtime.model_tools()` returns) takes it from the same channel, so it is
told once, to whichever asks first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from typing import Generic, TypeVar

from deftly.contract.records import frozen
from deftly.contract.traits import traits_of
from deftly.execution.calls import ToolCall
from deftly.registry.registry import RegisteredTool, Source, ToolRegistry, tool_sort_key
from deftly.session.injections import Injection, Injections

T = TypeVar("T")

SELECT_TOOLS = "select_tools"
DEFERRED_TOOLS_KIND = "deferred_tools"
"""The injection kind of the deferred-tool announcement."""


@frozen
class ModelTools(Generic[T]):
    """What an agent loop sends with its next model request."""

    tools: list[T]
    """Definitions to send: inline tools, select_tools, and deferred tools already loaded."""
    announcement: str | None
    """Text to add to the conversation (deferred names added or removed since the last
    announcement), or None when nothing changed."""
    deferred: list[str] = field(default_factory=list)
    """Every deferred tool that can still be loaded."""


@frozen
class LoadOutcome:
    """What one `select_tools` call loaded, found already there, or did not know."""

    loaded: list[str]
    already: list[str]
    unknown: list[str]

    def text(self) -> str:
        """The result text for the model, one line per group or unknown name."""
        lines = []
        if self.loaded:
            lines.append(f"Loaded: {', '.join(self.loaded)}")
        if self.already:
            lines.append(f"Already available: {', '.join(self.already)}")
        lines.extend(
            f"Unknown tool: {name}. Use exact names from the latest list of deferred tools."
            for name in self.unknown
        )
        return "\n".join(lines)

    @property
    def failed(self) -> bool:
        """Nothing could be made available (every name was unknown)."""
        return not self.loaded and not self.already


class DeferredTools:
    """The loaded set and the announcements of one agent.

    With `injections` (the agent's channel) the announcement is also an injection source
    of kind "deferred_tools"; see the module docstring.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        is_active: Callable[[str, Source], bool],
        *,
        enabled: bool = False,
        defer_mcp: bool = True,
        injections: Injections | None = None,
    ) -> None:
        self.registry = registry
        self.is_active = is_active
        self.enabled = enabled
        self.defer_mcp = defer_mcp
        self.loaded: set[str] = set()
        self._announced: set[str] = set()
        self.injections = injections
        if injections is not None:
            injections.add_source(self.pending_injections, DEFERRED_TOOLS_KIND)

    # -- what is deferred ----------------------------------------------------------------

    def is_deferred(self, entry: RegisteredTool) -> bool:
        """Whether `entry` is announced by name instead of listed with its schema."""
        return entry.disclosure == "deferred" or (self.defer_mcp and entry.source == "mcp")

    def _loadable(self, entry: RegisteredTool) -> bool:
        return self.is_deferred(entry) and self.is_active(entry.name, entry.source)

    def loadable(self) -> list[str]:
        """Deferred tools that are switched on, sorted by name."""
        return [e.name for e in self.registry.entries() if self._loadable(e)]

    def hidden(self, name: str) -> bool:
        """Whether `name` stays out of the tool list sent to the model right now."""
        entry = self.registry.get(name)
        if not self.enabled:  # nothing to load: a tool about loading tools is of no use
            traits = traits_of(entry.tool) if entry is not None else None
            return traits is not None and traits.discloses_tools
        return entry is not None and self.is_deferred(entry) and name not in self.loaded

    # -- loading -------------------------------------------------------------------------

    def load(self, names: Iterable[str]) -> LoadOutcome:
        """Load each name; unknown ones are reported one by one, the rest still load."""
        loaded: list[str] = []
        already: list[str] = []
        unknown: list[str] = []
        for name in dict.fromkeys(names):
            entry = self.registry.get(name)
            if entry is None or not self._loadable(entry):
                if entry is not None and self.is_active(name, entry.source):
                    already.append(name)  # an inline tool: nothing to load
                else:
                    unknown.append(name)
            elif name in self.loaded:
                already.append(name)
            else:
                self.loaded.add(name)
                loaded.append(name)
        return LoadOutcome(loaded, already, unknown)

    def reset(self) -> None:
        """Forget what was loaded and announced (a new conversation, or after compaction);
        an announcement waiting in the channel is dropped too."""
        if self.injections is not None:
            self.injections.drain(lambda kind: kind == DEFERRED_TOOLS_KIND)
        self.loaded.clear()
        self._announced.clear()

    # -- the model's view ----------------------------------------------------------------

    def announcement(self) -> str | None:
        """Deferred names added and removed since the last announcement (each change is
        given out once: by this, `pending_injections()` or `shape()`)."""
        if not self.enabled:
            return None
        current = set(self.loadable())
        added = sorted(current - self._announced, key=tool_sort_key)
        removed = sorted(self._announced - current, key=tool_sort_key)
        self._announced = current
        if not added and not removed:
            return None
        sections = []
        if added:
            sections.append("<tools_added>\n" + "\n".join(added) + "\n</tools_added>")
        if removed:
            sections.append("<tools_removed>\n" + "\n".join(removed) + "\n</tools_removed>")
        sections.append(
            "Only the names of these tools are known so far. Call select_tools with the exact "
            "names you need to load their definitions, then call them. Names listed as removed "
            "can no longer be loaded. Later announcements update this list."
        )
        return "\n\n".join(sections)

    def pending_injections(self) -> list[Injection]:
        """The injection source: the announcement, if there is a change to announce."""
        text = self.announcement()
        return [Injection(DEFERRED_TOOLS_KIND, text)] if text else []

    def shape(self, tools: Sequence[T], name: Callable[[T], str]) -> ModelTools[T]:
        """The tool list for the next model request, and the announcement to go with it
        (taken from the channel when there is one: what it holds is not told again)."""
        visible = [t for t in tools if not self.hidden(name(t))]
        pending = [n for n in self.loadable() if n not in self.loaded] if self.enabled else []
        return ModelTools(visible, self._take_announcement(), pending)

    def _take_announcement(self) -> str | None:
        if self.injections is None:
            return self.announcement()
        taken = self.injections.drain(lambda kind: kind == DEFERRED_TOOLS_KIND)
        return "\n\n".join(item.text for item in taken) or None

    # -- executor hooks ------------------------------------------------------------------

    def guard(self, call: ToolCall, entry: RegisteredTool) -> str | None:
        """Refuse a deferred tool that was not loaded (checked before its arguments)."""
        if not self.enabled or entry.name in self.loaded or not self.is_deferred(entry):
            return None
        return (
            f'Tool "{entry.name}" is deferred and has not been loaded. Call select_tools with '
            f'{{"names": ["{entry.name}"]}} first, then call the tool again.'
        )

    def describe_missing(self, name: str) -> str | None:
        """A loaded tool that has since gone away."""
        if not self.enabled or name not in self.loaded:
            return None
        if name.startswith("mcp__"):
            return (
                f'Tool "{name}" was loaded, but its MCP server is not available now. It may come '
                "back when the server reconnects; do not retry it right away."
            )
        return f'Tool "{name}" was loaded but is no longer registered; do not call it again.'
