"""Questions for the person, and whoever can answer them.

A tool that needs a person's choice (AskUserQuestion) hands a `QuestionRequest` to the
agent's `QuestionDesk`; the desk passes it to the host's `Answerer`: the terminal of
`deftly run`, an MCP elicitation when deftly is served, a callback in the library. Where
there is no answerer (print mode without a terminal, a batch), tools that ask
(`ToolTraits(asks_user=True)`) are not offered at all, and neither are they in auto mode,
where nobody is meant to be interrupted.

Plain data only: the front ends above and the features beside depend on this module, not
on each other.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from deftly.contract.identity import Identity
from deftly.contract.records import frozen

if TYPE_CHECKING:
    from deftly.contract.tool import CancelToken

log = logging.getLogger(__name__)

OTHER_LABEL = "Other"
"""The choice every question gets beside its options: the person types their own answer."""


@frozen
class Choice:
    """One option of a question: a short label, and what choosing it means."""

    label: str
    description: str = ""


@frozen
class Question:
    """One question: its text (also its key in the answers), a short header for narrow
    displays, two or more options, and whether several may be chosen. Every question also
    takes a typed answer of the person's own ("Other")."""

    question: str
    options: tuple[Choice, ...]
    header: str = ""
    multi_select: bool = False


@frozen
class FormSpec:
    """The form a request stands for, when it came as one (an MCP server's elicitation).

    `questions[i]` of the request asks for the property `keys[i]` of `schema`. An answerer
    that can show forms itself (an MCP client) may show `message` and `schema` as they are;
    it still answers keyed by question text, each value as a string (`true`/`false`, numbers
    as written), and the form's owner turns the answers back into typed values."""

    message: str
    schema: Mapping[str, Any]
    keys: tuple[str, ...]


@frozen
class QuestionRequest:
    """The questions of one tool call, for one answerer."""

    call_id: str
    tool: str
    questions: tuple[Question, ...]
    identity: Identity | None = None
    """The agent asking (None outside an agent)."""
    form: FormSpec | None = None
    """Set when the questions stand for a form (see `FormSpec`)."""


Answers: TypeAlias = Mapping[str, str]
"""Question text -> the answer: the chosen label, several labels joined by ", ", or the
person's own words. A question left out was not answered."""


class QuestionsUnsupported(Exception):
    """Raised by an answerer that turns out unable to ask at all (an MCP client without
    form elicitation): the model is told to ask in its reply instead, and not to retry."""


class QuestionWithdrawn(Exception):
    """The call was cancelled while its questions waited for the person."""


class Answerer(Protocol):
    """How a front end puts questions to a person; pass one as `Runtime(answerer=...)`."""

    async def answer(self, request: QuestionRequest) -> Answers | None:
        """The person's answers, or None (or an empty mapping) when they dismissed the
        questions. Raise `QuestionsUnsupported` when asking is impossible here."""
        ...


AnswerCallback: TypeAlias = Callable[
    [QuestionRequest], "Answers | Awaitable[Answers | None] | None"
]
"""A plain function (sync or async) that answers, for the library."""


class CallbackAnswerer:
    """An `Answerer` from a function: `Runtime(answerer=lambda request: {...})` works."""

    def __init__(self, callback: AnswerCallback) -> None:
        self.callback = callback

    async def answer(self, request: QuestionRequest) -> Answers | None:
        """Call the function; await what it returns when that is awaitable."""
        found = self.callback(request)
        if inspect.isawaitable(found):
            found = await found
        return found


def as_answerer(value: Answerer | AnswerCallback | None) -> Answerer | None:
    """An `Answerer`, given one or a function."""
    if value is None:
        return None
    if callable(getattr(value, "answer", None)):
        return value  # type: ignore[return-value]
    if callable(value):
        return CallbackAnswerer(value)
    raise TypeError(
        f"answerer must have an async answer(request) method or be a function; got "
        f"{type(value).__name__}"
    )


class QuestionDesk:
    """Where an agent's questions go: the host's answerer, if there is one. One desk is
    shared by an agent and its children, so every question reaches the same person."""

    def __init__(self, answerer: Answerer | AnswerCallback | None = None) -> None:
        self._answerer = as_answerer(answerer)

    @property
    def answerer(self) -> Answerer | None:
        """Who answers now (None: nobody can)."""
        return self._answerer

    @answerer.setter
    def answerer(self, value: Answerer | AnswerCallback | None) -> None:
        self._answerer = as_answerer(value)

    @property
    def available(self) -> bool:
        """Whether someone can answer."""
        return self._answerer is not None

    async def ask(self, request: QuestionRequest) -> Answers | None:
        """Put `request` to the answerer (None when dismissed). `QuestionsUnsupported` when
        nobody can answer."""
        if self._answerer is None:
            raise QuestionsUnsupported("nobody can answer questions here")
        return await self._answerer.answer(request)

    async def ask_until(self, request: QuestionRequest, cancel: CancelToken) -> Answers | None:
        """`ask`, given up when `cancel` fires (`QuestionWithdrawn`). An answerer that ignores
        the withdrawal is left behind, not awaited: a cancelled call never hangs on a person."""
        if cancel.cancelled:
            raise QuestionWithdrawn
        asking = asyncio.ensure_future(self.ask(request))
        stopped = asyncio.ensure_future(cancel.wait())
        try:
            await asyncio.wait({asking, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not asking.done():
                asking.cancel()
                asking.add_done_callback(_forget)
        if not asking.done() or asking.cancelled():
            raise QuestionWithdrawn
        return asking.result()


def _forget(task: asyncio.Future[Answers | None]) -> None:
    """Retrieve a withdrawn question's outcome, so nothing warns that it was never read."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("a withdrawn question's answerer failed: %s", task.exception())
