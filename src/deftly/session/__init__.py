"""Sessions: where a runtime keeps what outlives one call, and what the model hears next.

`paths`: the data home and one directory per session; `injections`: the per-agent channel
for everything the model must hear at its next turn.
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

__all__ = [
    "IN_USE",
    "Injection",
    "InjectionSource",
    "Injections",
    "SessionClaim",
    "data_home",
    "new_session_id",
    "prune_sessions",
    "session_dir",
]
