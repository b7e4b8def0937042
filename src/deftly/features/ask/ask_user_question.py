"""AskUserQuestion: structured questions for the person, answered by whoever the host
attached (the terminal of `deftly run`, an MCP client's form under `deftly serve`, a
library callback). Where nobody can answer, the tool is not offered at all (its
`asks_user` trait); the call itself only validates, asks, and normalises the answers.
With `background` it returns at once with a "question" task (`background.py`) whose
ending tells the model the answer; that needs the task tools (by their traits).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import GenericDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.features.ask import result
from deftly.features.ask.background import BackgroundQuestions
from deftly.features.ask.validate import duplicate_problem, only_other_problem, without_other
from deftly.registry.offer import ToolOffer
from deftly.session.questions import (
    Answers,
    Choice,
    Question,
    QuestionDesk,
    QuestionRequest,
    QuestionsUnsupported,
    QuestionWithdrawn,
)

log = logging.getLogger(__name__)

MAX_QUESTIONS = 4
MIN_OPTIONS = 2
MAX_OPTIONS = 4
HEADER_HINT = 12
"""The header's advised length (a chip in a narrow display); longer is accepted."""


class OptionParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(
        min_length=1, description="What the person picks: a few words, unique in the question."
    )
    description: str = Field(default="", description="What picking it means, if not obvious.")


class QuestionParam(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, description="The full question, ending in a question mark.")
    header: str = Field(
        default="",
        description=f"A very short tag for the question (about {HEADER_HINT} characters).",
    )
    options: list[OptionParam] = Field(
        min_length=MIN_OPTIONS,
        max_length=MAX_OPTIONS,
        description=f'{MIN_OPTIONS} to {MAX_OPTIONS} choices; do not add an "Other" one.',
    )
    multi_select: bool = Field(
        default=False, description="Whether the person may pick more than one option."
    )


class AskUserQuestionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    questions: list[QuestionParam] = Field(
        min_length=1,
        max_length=MAX_QUESTIONS,
        description=f"1 to {MAX_QUESTIONS} questions, asked together.",
    )
    background: bool = Field(
        default=False,
        description="Do not wait: get a task id at once and hear the answer when the user "
        "responds. Only when you can go on without the answer.",
    )


NO_BACKGROUND = (
    "Background questions are not available here: they need TaskOutput and TaskStop, which "
    "this agent does not have. Ask again without background (the call then waits for the "
    "answer)."
)


def to_questions(args: AskUserQuestionParams) -> tuple[Question, ...]:
    """The arguments as the plain questions an answerer receives."""
    return tuple(
        Question(
            q.question,
            tuple(Choice(o.label, o.description) for o in q.options),
            q.header,
            q.multi_select,
        )
        for q in args.questions
    )


def summary(questions: tuple[Question, ...]) -> str:
    """The first question, and how many more: a one-line display."""
    more = f" (+{len(questions) - 1} more)" if len(questions) > 1 else ""
    return f"{questions[0].question}{more}"


class AskUserQuestionTool(Tool[AskUserQuestionParams]):
    """Puts structured questions to the person and returns their answers as JSON.

    Read-only: it changes nothing, so manual mode runs it unasked (asking permission to
    ask a question would be absurd) and plan mode lets it run."""

    name = "AskUserQuestion"
    title = "Ask the user"
    description = describe("ask_user_question.md")
    params = AskUserQuestionParams
    traits = ToolTraits(asks_user=True, read_only=True)

    def __init__(
        self, desk: QuestionDesk, offer: ToolOffer, background: BackgroundQuestions
    ) -> None:
        self.desk = desk
        self.offer = offer
        self.background = background

    def description_vars(self) -> dict[str, object]:
        """The limits the schema enforces."""
        return {"MAX_QUESTIONS": MAX_QUESTIONS, "MAX_OPTIONS": MAX_OPTIONS}

    def resolve(self, args: AskUserQuestionParams) -> ToolExecution:
        """Nothing to touch: the display shows the first question."""
        questions = to_questions(args)

        async def execute(ctx: ToolContext) -> ToolResult:
            if args.background:
                return self.ask_in_background(questions, ctx)
            return await self.ask(questions, ctx)

        return ToolExecution(
            accesses=Accesses.none(),
            description=(
                f"Starting a background question: {summary(questions)}"
                if args.background
                else "Asking the user"
            ),
            display=GenericDisplay(
                summary=summary(questions),
                detail={
                    "questions": [
                        {
                            "question": q.question,
                            "header": q.header,
                            "options": [o.label for o in q.options],
                            "multi_select": q.multi_select,
                        }
                        for q in questions
                    ]
                },
            ),
            approval_rule=self.name,
            execute=execute,
        )

    async def ask(self, questions: tuple[Question, ...], ctx: ToolContext) -> ToolResult:
        """Check uniqueness (the desk is not called when it fails), ask, and normalise the
        answers; the call's cancel token withdraws the questions."""
        problem = duplicate_problem(questions) or only_other_problem(questions)
        if problem is not None:
            return ToolResult.error(problem)
        request = self._request(questions, ctx)
        return await self._answers(questions, lambda: self.desk.ask_until(request, ctx.cancel))

    def ask_in_background(self, questions: tuple[Question, ...], ctx: ToolContext) -> ToolResult:
        """Check the questions, post a "question" task and return its id at once; the
        answer reaches the model as that task's notice (or through TaskOutput)."""
        problem = duplicate_problem(questions) or only_other_problem(questions)
        if problem is not None:
            return ToolResult.error(problem)
        if not (
            self.offer.any(lambda t: t.stops_tasks)
            and self.offer.any(lambda t: t.reads_task_output)
        ):
            return ToolResult.error(NO_BACKGROUND)
        request = self._request(questions, ctx)
        task = self.background.start(
            summary(questions),
            ctx.identity.agent_id,
            lambda: self._answers(questions, lambda: self.desk.ask(request)),
        )
        return result.started(task.id, task.description)

    def _request(self, questions: tuple[Question, ...], ctx: ToolContext) -> QuestionRequest:
        shown = tuple(without_other(q) for q in questions)
        return QuestionRequest(ctx.call_id, self.name, shown, ctx.identity)

    async def _answers(
        self,
        questions: tuple[Question, ...],
        get: Callable[[], Awaitable[Answers | None]],
    ) -> ToolResult:
        """The person's answers as the model's result, whatever went wrong on the way."""
        try:
            answers = await get()
        except QuestionWithdrawn:
            return result.withdrawn()
        except QuestionsUnsupported as exc:
            log.info("questions unsupported here: %s", exc)
            return result.unsupported()
        except Exception as exc:
            # one line for the person running deftly; the traceback only when debugging
            log.warning(
                "the answerer failed (%s: %s); the questions count as dismissed",
                type(exc).__name__,
                exc,
            )
            log.debug("the answerer's failure", exc_info=True)
            return result.dismissed()
        return result.answered(questions, answers)
