"""Sessions: where a runtime keeps what outlives one call, and what the model hears next.

`session`: a `Session` (id, workspace, directory, shared claim, store) that the main agent
and its sub-agents share through `attach()`/`detach()`; `paths`: the data home, one
directory per session, the shared claim on it and pruning; `store`: the typed state store
persisted in the session directory, with change events; `injections`: the per-agent channel
for everything the model must hear at its next turn; `inbox`: prompts that arrive on their
own (cron), run when the agent is idle; `questions`: questions for the person and who
answers them.

Scopes (a session scope with agent scopes under it) are `deftly.registry.services.Services`
chained by `parent=`; this package does not repeat them.
"""

from deftly.session.inbox import Inbox, InboxMessage
from deftly.session.injections import Injection, Injections, InjectionSource
from deftly.session.paths import (
    IN_USE,
    SessionClaim,
    data_home,
    new_session_id,
    prune_sessions,
    session_dir,
)
from deftly.session.questions import (
    Answerer,
    Answers,
    Choice,
    Question,
    QuestionDesk,
    QuestionRequest,
    QuestionsUnsupported,
)
from deftly.session.session import SESSION_ID_PATTERN, Session, check_session_id
from deftly.session.store import StateChanged, StateListener, StateSlot, StateStore
from deftly.session.turns import LoopHooks, TurnBudget, TurnEnd, TurnStart, TurnUsage

__all__ = [
    "IN_USE",
    "SESSION_ID_PATTERN",
    "Answerer",
    "Answers",
    "Choice",
    "Inbox",
    "InboxMessage",
    "Injection",
    "InjectionSource",
    "Injections",
    "LoopHooks",
    "Question",
    "QuestionDesk",
    "QuestionRequest",
    "QuestionsUnsupported",
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
