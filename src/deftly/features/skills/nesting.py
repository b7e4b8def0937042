"""Counting how deeply the model's skill loads nest, so a skill loop cannot run forever.

A skill may tell the model to load another skill, which may load another... The count is
kept per model *step* (one batch of tool calls):

- a skill loaded in a step that follows a step without a skill load is at depth 0
  (trigger `model-tool`): the model chose it while doing its work;
- a skill loaded in the step right after a step that loaded skills is nested one level
  deeper than the deepest of those (trigger `nested-skill`): instead of acting on the
  instructions it just received, the model loaded more instructions;
- any step without a skill load ends the chain, and so does a new user turn (`reset`).

Loads at depth `max_depth` (3) and beyond are refused. A refused attempt still counts as a
load at its depth, so retrying at once stays refused; doing any other work first clears it.

Steps are reported by the host: the skills feature closes the step whenever the agent's
executor opens a batch (`BatchStarted`), which is one model step whether its calls came at
once or streamed in one by one. A host without an executor may call `next_step()` itself.
"""

from __future__ import annotations

import threading

MAX_SKILL_DEPTH = 3


class SkillNesting:
    """The depth count of one agent's skill loads, step by step (see the module docstring);
    thread-safe."""

    def __init__(self, max_depth: int = MAX_SKILL_DEPTH) -> None:
        self.max_depth = max_depth
        self._lock = threading.Lock()
        self._previous: int | None = None  # deepest load of the last finished step
        self._current: int | None = None  # deepest load of the step under way

    # -- step boundaries -----------------------------------------------------------------

    def next_step(self) -> None:
        """Close the current step: a new batch (model step) begins."""
        with self._lock:
            self._close_step()

    def reset(self) -> None:
        """A new user turn: whatever the model loads next is not nested."""
        with self._lock:
            self._previous = None
            self._current = None

    def _close_step(self) -> None:
        self._previous = self._current
        self._current = None

    # -- loads ---------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """The depth a skill loaded now would have."""
        with self._lock:
            return 0 if self._previous is None else self._previous + 1

    def allowed(self, depth: int) -> bool:
        """Whether a load at `depth` may go ahead (below `max_depth`)."""
        return depth < self.max_depth

    def record(self, depth: int) -> None:
        """A load (or a refused attempt) at `depth` happened in the current step."""
        with self._lock:
            self._current = depth if self._current is None else max(self._current, depth)
