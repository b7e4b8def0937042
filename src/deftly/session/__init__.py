"""Sessions: where a runtime keeps what outlives one call, and what the model hears next.

`paths`: the data home, one directory per session and the shared claim on it; `store`: the
typed state store persisted in the session directory, with change events; `injections`: the
per-agent channel for everything the model must hear at its next turn.
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
from deftly.session.store import StateChanged, StateListener, StateSlot, StateStore

__all__ = [
    "IN_USE",
    "Injection",
    "InjectionSource",
    "Injections",
    "SessionClaim",
    "StateChanged",
    "StateListener",
    "StateSlot",
    "StateStore",
    "data_home",
    "new_session_id",
    "prune_sessions",
    "session_dir",
]
