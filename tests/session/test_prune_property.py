"""Property: pruning never removes a session someone holds, whatever the mix of holders
and ages; it removes exactly the free sessions older than the cutoff, and the last holder's
release removes a session that kept nothing.

Holders here are claims in this process: each opens its own file description, so the
flock semantics are those of holders in separate processes (tests/session/test_claim.py
checks that with real subprocesses)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.session import IN_USE, SessionClaim, prune_sessions
from tests.core.test_sessions import age

CUTOFF_DAYS = 10
AGES = st.integers(min_value=0, max_value=CUTOFF_DAYS - 1) | st.integers(
    min_value=CUTOFF_DAYS + 1, max_value=400
)
SESSIONS = st.lists(
    st.tuples(AGES, st.integers(min_value=0, max_value=3), st.booleans()),
    min_size=1,
    max_size=6,
)


@settings(max_examples=50, deadline=None)
@given(SESSIONS)
def test_pruning_never_removes_a_held_session(plan: list[tuple[int, int, bool]]) -> None:
    with tempfile.TemporaryDirectory() as temp:
        sessions = Path(temp) / "sessions"
        claims: dict[Path, list[SessionClaim]] = {}
        for index, (_, holders, kept_something) in enumerate(plan):
            path = sessions / f"s{index}"
            path.mkdir(parents=True)
            if kept_something:
                (path / "spill").mkdir()
                (path / "spill" / "out.txt").write_text("kept")
            claims[path] = [SessionClaim(path) for _ in range(holders)]
            for claim in claims[path]:
                claim.claim()
        for index, (days, _, _) in enumerate(plan):
            age(sessions / f"s{index}", days=days)

        removed = prune_sessions(sessions, older_than_days=CUTOFF_DAYS, keep=sessions / "none")

        for index, (days, holders, _) in enumerate(plan):
            path = sessions / f"s{index}"
            if holders:
                assert path not in removed and (path / IN_USE).exists()
            else:
                assert (path in removed) == (days > CUTOFF_DAYS)
                assert path.exists() == (days < CUTOFF_DAYS)
        assert not [p for p in sessions.iterdir() if p.name.startswith(".pruning-")]

        for index, (_, holders, kept_something) in enumerate(plan):
            path = sessions / f"s{index}"
            for claim in claims[path]:
                claim.release()
            if holders:
                assert path.exists() == kept_something
