"""The todo feature: TodoList, each agent's list in the session store, and the reminder
of a stale list.

Agent step: the agent's `TodoBook` (its list, read back from the session store, so a
resumed session has it), the `StepCounter` on the agent's loop hooks, a state reader there
too (a compacted history keeps a non-empty list while the tool is on), and the
`StaleReminder` among its injection sources (for the main agent only, as the reference
does: a sub-agent's run is one task, reminded by no one).
"""

from __future__ import annotations

from typing import ClassVar

from deftly.contract.identity import MAIN_AGENT
from deftly.features.api import AgentContext, Feature
from deftly.features.todo import CONTRIBUTIONS
from deftly.features.todo.reminder import REMINDER_KIND, StaleReminder, StepCounter
from deftly.features.todo.render import kept_state
from deftly.features.todo.state import TodoBook, TodoState, state_key
from deftly.features.todo.todo_list import TodoListTool
from deftly.registry.contribution import ToolContribution


class TodoFeature(Feature):
    """A todo list for each agent."""

    name: ClassVar[str] = "todo"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_agent(self, ctx: AgentContext) -> None:
        book = TodoBook(ctx.session.store.slot(state_key(ctx.agent_id), TodoState))
        ctx.services.provide(book)
        counter = StepCounter(book)
        ctx.closers.add_sync(ctx.loop.add_budget(counter))
        ctx.closers.add_sync(ctx.loop.on_turn_start(counter.turn_started))
        ctx.closers.add_sync(ctx.loop.on_turn_end(counter.turn_ended))
        ctx.closers.add_sync(ctx.loop.add_state(lambda: _kept(ctx, book)))
        if ctx.agent_id == MAIN_AGENT:
            reminder = StaleReminder(book, lambda: _tool_is_on(ctx))
            ctx.closers.add_sync(ctx.injections.add_source(reminder, REMINDER_KIND))


def _kept(ctx: AgentContext, book: TodoBook) -> str | None:
    """The list a compacted history keeps, while the agent may still use the tool."""
    return kept_state(book.items) if _tool_is_on(ctx) else None


def _tool_is_on(ctx: AgentContext) -> bool:
    """Whether this agent has the TodoList tool and may use it."""
    entry = ctx.registry.get(TodoListTool.name)
    return entry is not None and ctx.is_switched_on(entry.name, entry.source)


FEATURE = TodoFeature()
