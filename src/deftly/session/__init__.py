"""Sessions: where a runtime keeps what outlives one call, and what the model hears next.

`session`: a `Session` (id, workspace, directory, shared claim, store) that the main agent
and its sub-agents share through `attach()`/`detach()`; `paths`: the data home, one
directory per session, the shared claim on it and pruning; `store`: the typed state store
persisted in the session directory, with change events; `injections`: the per-agent channel
for everything the model must hear at its next turn.

Scopes (a session scope with agent scopes under it) are `deftly.registry.services.Services`
chained by `parent=`; this package does not repeat them.
"""

from deftly.session.injections import Injection, Injections, InjectionSource
from deftly.session.paths import (
    IN_USE,
    SessionClaim,
    data_home,
    new_session_id,
    prune_sessions,
    session_dir,
)
from deftly.session.session import SESSION_ID_PATTERN, Session, check_session_id
from deftly.session.store import StateChanged, StateListener, StateSlot, StateStore
from deftly.session.turns import LoopHooks, TurnBudget, TurnEnd, TurnStart, TurnUsage

__all__ = [
    "IN_USE",
    "SESSION_ID_PATTERN",
    "Injection",
    "InjectionSource",
    "Injections",
    "LoopHooks",
    "Session",
    "SessionClaim",
    "StateChanged",
    "StateListener",
    "StateSlot",
    "StateStore",
    "TurnBudget",
    "TurnEnd",
    "TurnStart",
    "TurnUsage",
    "check_session_id",
    "data_home",
    "new_session_id",
    "prune_sessions",
    "session_dir",
]
