"""The main agent's goal: kept in the session store, accounted per turn, held to its budget.

`GoalService` is what the four tools share. The loop tells it each turn's start and end
(`ctx.loop`), and asks it, as a `TurnBudget`, before every step whether the active goal's
budget is used up: then the goal is blocked and the turn ends with `stop_reason="budget"`.
A sub-agent gets a service that refuses every call (`main=False`): goals belong to the
session's main agent.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable

from deftly.features.goals.budget import BudgetLimit
from deftly.features.goals.state import (
    Goal,
    GoalState,
    format_elapsed,
    format_tokens,
    plural,
    reached,
)
from deftly.policy.permissions import Mode
from deftly.session.injections import Injection
from deftly.session.store import StateSlot, StateStore
from deftly.session.turns import TurnEnd, TurnStart, TurnUsage

MAIN_ONLY = "Goal tools are only supported by the main agent."


class GoalService:
    """One agent's view of the session goal (see the module docstring)."""

    def __init__(
        self,
        store: StateStore | None,
        *,
        main: bool = True,
        mode: Callable[[], Mode] = lambda: Mode.MANUAL,
    ) -> None:
        self.main = main and store is not None
        self.mode = mode
        """The session's permission mode now (CreateGoal shows no review in auto mode)."""
        self._slot: StateSlot[GoalState] | None = (
            store.slot("goal", GoalState) if self.main and store is not None else None
        )
        self._lock = threading.RLock()
        # The running turn: what the loop last reported of it, and where the goal joined it.
        self._in_turn = False
        self._seen_tokens = 0
        self._seen_seconds = 0.0
        self._start_tokens = 0
        self._start_seconds = 0.0
        self._working_on: str | None = None  # the goal this turn counts for
        self._created_this_turn: str | None = None
        self._announce = False

    # -- the goal ------------------------------------------------------------------------

    @property
    def goal(self) -> Goal | None:
        """The current goal (any status), or None."""
        return self._slot.get().goal if self._slot is not None else None

    def _save(self, goal: Goal | None) -> None:
        assert self._slot is not None
        self._slot.set(GoalState(goal=goal))

    def totals(self, goal: Goal) -> tuple[int, int]:
        """Tokens and wall milliseconds of `goal`, the running turn included."""
        tokens, ms = goal.tokens_used, goal.wall_ms
        if self._in_turn and self._working_on == goal.goal_id:
            tokens += max(0, self._seen_tokens - self._start_tokens)
            ms += round(max(0.0, self._seen_seconds - self._start_seconds) * 1000)
        return tokens, ms

    def worked(self, goal: Goal) -> str:
        """`Worked 2 turns over 3m05s, using 12.3k tokens.` (the running turn counts)."""
        tokens, ms = self.totals(goal)
        turns = goal.turns_used + (1 if self._in_turn and self._working_on == goal.goal_id else 0)
        return (
            f"Worked {plural(turns, 'turn')} over {format_elapsed(ms)}, "
            f"using {format_tokens(tokens)} tokens."
        )

    def over_budget(self, goal: Goal) -> bool:
        """Whether any budget of `goal` is reached now."""
        return any(reached(goal, *self.totals(goal)).values())

    def created_this_turn(self, goal_id: str) -> bool:
        """Whether `goal_id` was created in the running turn (so calls resolved before it
        existed may still act on it)."""
        return self._created_this_turn == goal_id

    def create(self, objective: str, criterion: str | None) -> Goal:
        """Start a new active goal, replacing any current one."""
        with self._lock:
            goal = Goal(
                goal_id=secrets.token_hex(8),
                objective=objective,
                completion_criterion=criterion,
            )
            self._save(goal)
            self._created_this_turn = goal.goal_id
            self._join(goal.goal_id)
            return goal

    def _join(self, goal_id: str) -> None:
        """Count the rest of the running turn for `goal_id`."""
        if self._working_on == goal_id:
            return
        self._working_on = goal_id
        self._start_tokens, self._start_seconds = self._seen_tokens, self._seen_seconds

    def set_status(self, status: str, reason: str | None = None) -> Goal | None:
        """Move the current goal to `status` (`active` clears the terminal reason)."""
        with self._lock:
            goal = self.goal
            if goal is None:
                return None
            goal = goal.model_copy(
                update={"status": status, "terminal_reason": None if status == "active" else reason}
            )
            self._save(goal)
            if status == "active":
                self._join(goal.goal_id)
            return goal

    def set_budget(self, limit: BudgetLimit) -> Goal | None:
        """Set one budget of the current goal."""
        with self._lock:
            goal = self.goal
            if goal is None:
                return None
            field = {"turns": "turn_budget", "tokens": "token_budget", "wall_ms": "wall_budget_ms"}
            goal = goal.model_copy(update={field[limit.measure]: limit.limit})
            self._save(goal)
            return goal

    # -- the loop ------------------------------------------------------------------------

    def turn_started(self, event: TurnStart) -> None:
        """A turn began: it counts for the goal if the goal is active."""
        with self._lock:
            self._in_turn = True
            self._seen_tokens, self._seen_seconds = 0, 0.0
            self._start_tokens, self._start_seconds = 0, 0.0
            self._created_this_turn = None
            goal = self.goal
            self._working_on = goal.goal_id if goal and goal.status == "active" else None
            self._announce = self._working_on is not None

    def turn_ended(self, event: TurnEnd) -> None:
        """A turn ended: add it (turns, tokens, seconds) to the goal it counted for."""
        with self._lock:
            self._seen_tokens, self._seen_seconds = event.usage.total_tokens, event.seconds
            goal = self.goal
            worked = event.steps > 0  # a turn stopped before its first step did no work
            if goal is not None and worked and self._working_on == goal.goal_id:
                tokens, ms = self.totals(goal)
                done = {"turns_used": goal.turns_used + 1, "tokens_used": tokens, "wall_ms": ms}
                self._save(goal.model_copy(update=done))
            self._in_turn = False
            self._working_on = None
            self._created_this_turn = None

    def exceeded(self, *, steps: int, usage: TurnUsage, seconds: float) -> str | None:
        """Asked before each step: why the active goal's budget ends the turn, or None.
        The goal is blocked then, so later turns run normally until it is resumed."""
        with self._lock:
            self._seen_tokens, self._seen_seconds = usage.total_tokens, seconds
            goal = self.goal
            if goal is None or goal.status != "active":
                return None
            tokens, ms = self.totals(goal)
            hit = [name for name, yes in reached(goal, tokens, ms).items() if yes]
            if not hit:
                return None
            token_limit = format_tokens(goal.token_budget or 0)
            wall_limit = format_elapsed(goal.wall_budget_ms or 0)
            spent = {
                "turns": f"{plural(goal.turns_used, 'turn')} of {goal.turn_budget}",
                "tokens": f"{format_tokens(tokens)} tokens of {token_limit}",
                "wall_clock": f"{format_elapsed(ms)} of {wall_limit}",
            }
            used = "; ".join(spent[name] for name in hit)
            reason = f"budget reached ({used})"
            self.set_status("blocked", reason)
            return (
                f"The turn was stopped: the goal's budget is used up ({used}). "
                f'The goal "{goal.objective}" is now blocked. {self.worked(goal)} '
                "Tell the user what is done and what is left. To go on, the budget must be "
                "raised (SetGoalBudget) and the goal resumed (UpdateGoal with status active)."
            )

    def injections(self) -> list[Injection]:
        """At a turn's first request: the active goal and what is left of its budget."""
        with self._lock:
            if not self._announce:
                return []
            self._announce = False
            goal = self.goal
            if goal is None or goal.status != "active":
                return []
            return [Injection("goal", self.reminder(goal))]

    def reminder(self, goal: Goal) -> str:
        """The goal in a few lines, for the model at the start of a turn."""
        lines = [f"Active goal: {goal.objective}", *self._standing(goal)]
        lines.append(
            "Keep working toward it. When the criterion is met, call UpdateGoal with status "
            "complete; if you cannot go on without the user, call it with status blocked."
        )
        return "\n".join(lines)

    def state_text(self) -> str | None:
        """What a compacted history keeps of the goal (a state reader on the loop hooks):
        an unfinished goal and where it stands; None for no goal or a completed one."""
        with self._lock:
            goal = self.goal
            if goal is None or goal.status == "complete":
                return None
            lines = [f"Goal ({goal.status}): {goal.objective}", *self._standing(goal)]
            reason = goal.terminal_reason
            if goal.status != "active" and reason and reason != goal.status:
                lines.append(f"Why it is {goal.status}: {reason}.")
            return "\n".join(lines)

    def _standing(self, goal: Goal) -> list[str]:
        """The criterion, the usage so far and what is left of the budget."""
        tokens, ms = self.totals(goal)
        lines: list[str] = []
        if goal.completion_criterion:
            lines.append(f"Done when: {goal.completion_criterion}")
        lines.append(
            f"So far: {plural(goal.turns_used, 'turn')}, {format_tokens(tokens)} tokens, "
            f"{format_elapsed(ms)}."
        )
        left = []
        if goal.turn_budget is not None:
            left.append(plural(max(0, goal.turn_budget - goal.turns_used), "turn"))
        if goal.token_budget is not None:
            left.append(f"{format_tokens(max(0, goal.token_budget - tokens))} tokens")
        if goal.wall_budget_ms is not None:
            left.append(format_elapsed(max(0, goal.wall_budget_ms - ms)))
        if left:
            lines.append(f"Budget left: {', '.join(left)}.")
        return lines
