"""Session approvals kept in the session's state store, so a resumed session has them.

A "yes, for this session" lands in the permission engine's `SessionApprovals`; after each
permission decision the remembered rules are saved (when they changed), and a session
opened again (`Runtime(session_id=<old id>)`) starts with them.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from deftly.execution.events import Event, EventBus, RuntimeNotice
from deftly.execution.permission_gate import NOTICE_KIND
from deftly.policy.permissions import PermissionEngine
from deftly.session.store import StateStore

APPROVALS_KEY = "permissions.session_approvals"


class SessionApprovalsState(BaseModel):
    """The rules a person approved for this session, oldest first."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    rules: list[str] = []


def keep_session_approvals(
    store: StateStore, engine: PermissionEngine, events: EventBus
) -> Callable[[], None]:
    """Restore the saved approvals into `engine`, then save them whenever they change;
    returns the way to stop saving."""
    slot = store.slot(APPROVALS_KEY, SessionApprovalsState)
    for rule in slot.get().rules:
        engine.session.add(rule)
    saved = list(engine.session.rules)

    def save(event: Event) -> None:
        nonlocal saved
        if not isinstance(event, RuntimeNotice) or event.kind != NOTICE_KIND:
            return
        current = list(engine.session.rules)
        if current != saved:
            saved = current
            slot.set(SessionApprovalsState(rules=current))

    return events.subscribe(save)
