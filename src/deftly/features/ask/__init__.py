"""AskUserQuestion: multiple-choice questions for the person, answered by the host's
`Answerer` (`deftly.session.questions`) through the agent's `QuestionDesk`."""

from __future__ import annotations

from deftly.features.ask.ask_user_question import AskUserQuestionTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [ToolContribution.of(AskUserQuestionTool)]

__all__ = ["CONTRIBUTIONS", "AskUserQuestionTool"]
