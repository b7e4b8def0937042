"""What the model must hear next, as the executor sees it: notices and the injection channel.

The executor knows nothing of what produces them. Each agent has one injection channel
(`deftly.session.Injections`; declared here as the `InjectionChannel` protocol, since
`execution` may not import `session`): the deferred-tool announcement ("deferred_tools"),
a loaded skill ("skill": a result's `delivery`, pushed by the executor) and background
tasks that ended ("task_finished") all go through it.

Who drains it: an agent loop, before each model request. Without a loop (a library caller,
`deftly call`/`batch`, `deftly serve`) the kinds in `RESULT_KINDS` ride on the next result
instead: the executor appends them to that result's `note`, the model-only side channel,
one `[notice] ...` line each, so a model told "you will be notified when it ends" is, on
whatever call it makes next.

Hosts written before the channel register a `NoticeSource` (anything with
`take_notices()`) with `Executor.add_notice_source`; its notices are treated as
"task_finished" injections.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

TASK_FINISHED_KIND = "task_finished"
"""A background task ended and the model has not been told yet."""
SKILL_KIND = "skill"
"""A result's `delivery`: text for the conversation (a loaded skill)."""
RESULT_KINDS = frozenset({TASK_FINISHED_KIND})
"""The kinds that ride on the next result's note when no agent loop drains the channel
(`Executor(notices_on_results=True)`): exactly what rode on results before the channel."""


class Notice(Protocol):
    """One thing a `NoticeSource` gives out: its `message` is what the model reads."""

    @property
    def message(self) -> str:
        """What the model reads."""
        ...


class NoticeSource(Protocol):
    """Something with notices for the model (the background-task manager)."""

    def take_notices(self) -> Sequence[Notice]:
        """The notices not given out yet; each is given out once."""
        ...


class Injected(Protocol):
    """One injection as the channel gives it out (`deftly.session.Injection`)."""

    @property
    def kind(self) -> str:
        """Its producer ("task_finished", "skill", "deferred_tools", ...)."""
        ...

    @property
    def text(self) -> str:
        """What the model reads."""
        ...


class InjectionChannel(Protocol):
    """The per-agent injection channel, as far as the executor uses it
    (`deftly.session.Injections` is one)."""

    def push(self, kind: str, text: str) -> None:
        """Queue `text` for the model's next turn."""
        ...

    def drain(self, kinds: Callable[[str], bool] | None = None) -> Sequence[Injected]:
        """Everything pending whose kind `kinds` accepts (all when None), each once."""
        ...


def with_notices(note: str | None, messages: Sequence[str]) -> str | None:
    """`note` with the pending notices added after it, one per line."""
    if not messages:
        return note
    lines = [f"[notice] {message}" for message in messages]
    return "\n".join([note, *lines] if note else lines)
