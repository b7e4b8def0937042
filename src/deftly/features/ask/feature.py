"""The ask feature: the AskUserQuestion tool. The agent's `QuestionDesk` (in every agent
scope) carries the questions to whoever answers, and the tool's `asks_user` trait keeps it
off the tool list where nobody can. Session step: `BackgroundQuestions`, where questions
asked with `background` go on being asked (as "question" tasks on the session's board)
until they are answered, withdrawn, or the session closes."""

from __future__ import annotations

from typing import ClassVar

from deftly.features.api import Feature, SessionContext
from deftly.features.ask import CONTRIBUTIONS
from deftly.features.ask.background import BackgroundQuestions
from deftly.registry.contribution import ToolContribution
from deftly.session.tasks import TaskBoard


class AskFeature(Feature):
    """Questions for the person."""

    name: ClassVar[str] = "ask"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS

    async def start_session(self, ctx: SessionContext) -> None:
        board = ctx.services.find(TaskBoard)
        if board is None:
            return  # no board: the tool cannot be built, and says so
        questions = BackgroundQuestions(board)
        ctx.services.provide(questions)
        ctx.on_close(questions.close)


FEATURE = AskFeature()
