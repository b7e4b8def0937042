"""The ask feature: the AskUserQuestion tool. It keeps no state and starts nothing: the
agent's `QuestionDesk` (in every agent scope) carries the questions to whoever answers, and
the tool's `asks_user` trait keeps it off the tool list where nobody can."""

from __future__ import annotations

from typing import ClassVar

from deftly.features.api import Feature
from deftly.features.ask import CONTRIBUTIONS
from deftly.registry.contribution import ToolContribution


class AskFeature(Feature):
    """Questions for the person."""

    name: ClassVar[str] = "ask"
    contributions: ClassVar[list[ToolContribution]] = CONTRIBUTIONS


FEATURE = AskFeature()
