"""Keeping a conversation inside the model's context window.

Before every request the loop asks `ContextKeeper.fit`: below `[loop] elide_at` of the
window nothing changes; above it, old tool outputs become pointers to files holding them
(`context_elide`); still above `compact_at`, the older part of the history is replaced by a
summary the model writes (`context_compact`), keeping the original task and the last
`keep_recent_steps` steps verbatim. When the summary cannot be written the older part is
dropped with a note instead, so a turn never fails for want of room.

The size of a prompt is what the provider reported for the last request, plus an estimate
(`context_estimate`) for what was added since.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from deftly.agent.context_compact import (
    SUMMARY_PROMPT,
    SUMMARY_SYSTEM,
    dropped_note,
    first_user,
    head_message,
    kept_start,
    render,
    summary_note,
    task_parts,
)
from deftly.agent.context_elide import Elider, recent_boundary
from deftly.agent.context_estimate import (
    CHARS_PER_TOKEN,
    fixed_tokens,
    message_tokens,
    messages_tokens,
)
from deftly.config.models import LoopConfig
from deftly.providers.types import ChatRequest, Message, ToolSpec, Usage

log = logging.getLogger(__name__)

Summarizer = Callable[[ChatRequest], Awaitable[str]]
"""Runs one tool-less request (with the loop's retries) and returns the reply's text."""

StateReader = Callable[[], "str | None"]
"""The session state (todos, goals, plan) as text for a compacted history, or None."""

SUMMARY_SHARE = 0.6
"""The part of the window the summary request's rendering of the history may fill (the
rest is the instructions and the reply)."""

SUMMARY_MAX_SHARE = 0.15
"""The part of the window a summary may take; a longer one is cut."""


@dataclass
class Fitted:
    """What `fit`/`compact` made of the history: the messages to continue with, what was
    done to them (None: nothing), the estimate before and after, and a line saying what
    happened (for the `ContextChanged` event)."""

    messages: list[Message]
    change: Literal["elided", "compacted"] | None
    tokens_before: int
    detail: str = ""
    tokens_after: int = 0


class ContextKeeper:
    """One agent's context window: measures the prompt, elides, compacts.

    `window`: the model's context window in tokens; `loop`: the `[loop]` thresholds;
    `elided_dir`: where elided outputs are written (on this machine), `elided_view` the
    same folder as the model's tools see it (a rooted env's view; default the same path);
    `state`: the session state a compacted history carries ("Session state: ..."): the
    agent's `LoopHooks.state_text` (the todo list, the goal), None for none.
    """

    def __init__(
        self,
        *,
        window: int,
        loop: LoopConfig,
        elided_dir: Path,
        state: StateReader | None = None,
        elided_view: Path | None = None,
    ) -> None:
        self.window = window
        self.loop = loop
        self.elided_dir = elided_dir
        self.state = state
        self._elider = Elider(elided_dir, elided_view)
        self._observed: tuple[int, int] | None = None  # (prompt tokens, messages covered)
        self._fixed = 0  # the system prompt and tools, by estimate (when nothing is observed)

    # -- measuring -------------------------------------------------------------------------

    def observe(self, usage: Usage, sent: int) -> None:
        """After a request: its prompt tokens, and how many messages of the history (the
        list `fit` is given) it held. A request that reported no usage changes nothing."""
        if usage.input_tokens > 0:
            self._observed = (usage.input_tokens, sent)

    def estimate(self, messages: Sequence[Message]) -> int:
        """The prompt `messages` make: the last observed prompt plus an estimate for the
        messages added since (all of it estimated when nothing was observed)."""
        if self._observed is not None:
            prompt, sent = self._observed
            if sent <= len(messages):
                return prompt + messages_tokens(messages[sent:])
        return self._fixed + messages_tokens(messages)

    # -- fitting ---------------------------------------------------------------------------

    async def fit(
        self,
        system: str,
        messages: list[Message],
        tools: Sequence[ToolSpec],
        summarize: Summarizer,
    ) -> Fitted:
        """The history to send next: unchanged while it fits, else elided, else
        compacted (see the module docstring)."""
        self._fixed = fixed_tokens(system, tools)
        before = self.estimate(messages)
        if before <= self.loop.elide_at * self.window:
            return Fitted(messages, None, before, tokens_after=before)
        elided, count = self._elide(
            messages, recent_boundary(messages, self.loop.keep_recent_steps)
        )
        after = self.estimate(elided)
        note = ""
        if after > self.loop.compact_at * self.window:
            compacted = await self._compact(elided, summarize, before=before, instructions=None)
            if compacted.change is not None or not count:
                return compacted
            note = f"; {compacted.detail}"  # nothing to compact: the elision stands
            after = compacted.tokens_after
        if not count:
            return Fitted(messages, None, before, tokens_after=after)
        detail = (
            f"elided {count} old tool output{'s' if count != 1 else ''} (about {before:,} → "
            f"{after:,} tokens); their full text is in files the pointers name{note}"
        )
        return Fitted(elided, "elided", before, detail, after)

    async def compact(
        self,
        system: str,
        messages: list[Message],
        tools: Sequence[ToolSpec],
        summarize: Summarizer,
        *,
        instructions: str | None = None,
    ) -> Fitted:
        """Compact now, whatever the size (`/compact`, or after the provider said the
        prompt was too long); `instructions` are the person's words on what the summary
        should keep."""
        self._fixed = fixed_tokens(system, tools)
        before = self.estimate(messages)
        return await self._compact(messages, summarize, before=before, instructions=instructions)

    def _elide(self, messages: list[Message], upto: int) -> tuple[list[Message], int]:
        """Elide before `upto`, keeping the observed prompt true to what it now holds."""
        elision = self._elider.elide(messages, upto)
        if elision.count and self._observed is not None:
            prompt, sent = self._observed
            saved = sum(
                message_tokens(old) - message_tokens(new)
                for old, new in zip(messages[:sent], elision.messages[:sent], strict=True)
                if old is not new
            )
            self._observed = (max(prompt - saved, 0), sent)
        return elision.messages, elision.count

    async def _compact(
        self,
        messages: list[Message],
        summarize: Summarizer,
        *,
        before: int,
        instructions: str | None,
    ) -> Fitted:
        first = first_user(messages)
        if first is None:
            nothing = "nothing to compact: no user message yet"
            return Fitted(messages, None, before, nothing, self.estimate(messages))
        start, keep = self._split(messages, first)
        if start is None:
            return self._elide_all(messages, before)
        older = messages[:start]
        dropped = start - 1 if first < start else start
        task = task_parts(messages[first])
        summary, failure = await self._summary(older, summarize, instructions)
        state = self._state()
        if summary is not None:
            head = head_message(task, summary_note(summary, dropped), state)
            detail = f"compacted {dropped:,} older messages into a summary"
        else:
            head = head_message(task, dropped_note(dropped, failure), state)
            detail = (
                f"the summary could not be written ({failure}): dropped {dropped:,} older "
                "messages instead"
            )
        compacted = [head, *messages[start:]]
        self._observed = None  # the last prompt measured another history
        after = self.estimate(compacted)
        if after > self.loop.compact_at * self.window:
            compacted, count = self._elide(compacted, len(compacted))
            if count:
                detail += f", and elided {count} recent tool output{'s' if count != 1 else ''}"
            after = self.estimate(compacted)
        detail += f" (about {before:,} → {after:,} tokens; kept the task and the last {keep} steps)"
        if after >= self.window:
            detail += "; the recent steps alone still exceed the context window"
        return Fitted(compacted, "compacted", before, detail, after)

    def _split(self, messages: list[Message], first: int) -> tuple[int | None, int]:
        """Where the kept part starts, keeping as many of the recent steps as
        `keep_recent_steps` allows while something older is left to compact."""
        for keep in range(self.loop.keep_recent_steps, 0, -1):
            start = kept_start(messages, keep)
            if start > first + 1:
                return start, keep
        return None, 0

    def _elide_all(self, messages: list[Message], before: int) -> Fitted:
        """Nothing older than the last step is left to compact: when the history is still
        too long, its recent tool outputs are elided too."""
        nothing = "nothing to compact: the history is only the task and its last step"
        current = self.estimate(messages)
        if current <= self.loop.compact_at * self.window:
            return Fitted(messages, None, before, nothing, current)
        elided, count = self._elide(messages, len(messages))
        after = self.estimate(elided)
        if not count:
            return Fitted(messages, None, before, nothing, after)
        detail = (
            f"{nothing}; elided {count} of its tool output{'s' if count != 1 else ''} "
            f"(about {before:,} → {after:,} tokens)"
        )
        return Fitted(elided, "elided", before, detail, after)

    async def _summary(
        self, older: list[Message], summarize: Summarizer, instructions: str | None
    ) -> tuple[str | None, str]:
        """The model's summary of `older`, or None and why it could not be had."""
        budget = int(self.window * SUMMARY_SHARE) * CHARS_PER_TOKEN
        prompt = SUMMARY_PROMPT
        if instructions and instructions.strip():
            prompt += f"\n\nThe user's instructions for this summary: {instructions.strip()}"
        text = render(older, budget - len(prompt) - len(SUMMARY_SYSTEM))
        request = ChatRequest(
            SUMMARY_SYSTEM, [Message.user(f"{text}\n\n---\n\n{prompt}")], tools=()
        )
        try:
            summary = await summarize(request)
        except Exception as exc:  # a failed summary must not fail the turn
            reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            log.warning("the compaction summary failed: %s", reason)
            return None, str(reason)
        if not summary.strip():
            return None, "the model returned an empty summary"
        limit = int(self.window * SUMMARY_MAX_SHARE) * CHARS_PER_TOKEN
        if len(summary) > limit:
            summary = summary[:limit] + "\n[... the summary was cut here to fit the window]"
        return summary, ""

    def _state(self) -> str | None:
        if self.state is None:
            return None
        try:
            return self.state()
        except Exception as exc:  # the state is a bonus; compaction goes on without it
            log.warning("could not read the session state for the compaction: %s", exc)
            return None
