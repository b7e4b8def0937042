"""A session: one workspace's run of deftly, shared by the main agent and its sub-agents.

It has an id, a directory under the data home (held by a shared claim, so pruning leaves it
alone while anyone uses it), and a state store kept in that directory. Opening an existing
id resumes it: the same directory and the state kept there.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from types import TracebackType

from deftly.session.paths import SessionClaim, new_session_id, session_dir
from deftly.session.store import StateStore

SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""What a session id may be: it names a directory, so letters, digits, `.`, `_` and `-`."""


def check_session_id(session_id: str) -> str:
    """`session_id` if it can name a session directory; `ValueError` saying why not."""
    if not SESSION_ID_PATTERN.fullmatch(session_id):
        raise ValueError(
            f"{session_id!r} is not a valid session id: use letters, digits, '.', '_' and "
            "'-' (at most 128, starting with a letter or digit)"
        )
    return session_id


class Session:
    """One open session: its id, workspace, directory, claim and state store.

    Made by `Session.open`, which counts as the first holder. Each agent that shares the
    session (a child agent, a nested run) calls `attach()` and later `detach()`; the claim
    is released with the last `detach()`, or at once by `close()` (the end of the whole
    session; later detaches are then no-ops). Thread-safe.

    When the directory cannot be used (a read-only data home, a session held exclusively by
    an older deftly), the session still opens: `directory` is None, the store keeps its
    state in memory only, and `problem` says what happened.
    """

    def __init__(
        self,
        *,
        session_id: str,
        workspace: Path,
        location: Path,
        claim: SessionClaim | None,
        problem: str | None,
        resumed: bool,
    ) -> None:
        self.id = session_id
        self.workspace = workspace
        self.location = location
        self.problem = problem
        self.resumed = resumed
        self._claim = claim
        self._directory = location if claim is not None else None
        self.store = StateStore(self._directory)
        self.store.reload()  # what other processes wrote since this one last read
        self._holders = 1
        self._closed = False
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls, workspace: Path, home: Path | None = None, session_id: str | None = None
    ) -> Session:
        """Open the session `session_id` of `workspace` (a new one when None) under the
        data home `home` (default: `data_home()`), and claim its directory.

        An id whose directory exists resumes that session: its directory and the state
        kept there are used again. Blocks for at most a few seconds (while the directory
        is being pruned); raises `ValueError` for an id that cannot name a directory.
        """
        session_id = check_session_id(session_id) if session_id else new_session_id()
        location = session_dir(workspace, session_id, home)
        resumed = location.is_dir()
        claim = SessionClaim(location)
        held: SessionClaim | None = claim
        problem = None
        try:
            claim.claim()
        except OSError as exc:
            held = None
            problem = (
                f"cannot use the session directory {location} ({exc}); this session "
                "keeps its state in memory only, and what it would keep there (long "
                "results spilled to disk, task logs, plans) cannot be written: check that "
                "the data home ($DEFTLY_HOME) is a writable directory"
            )
        return cls(
            session_id=session_id,
            workspace=workspace,
            location=location,
            claim=held,
            problem=problem,
            resumed=resumed,
        )

    @property
    def directory(self) -> Path | None:
        """The session directory this session holds; None when it could not be used."""
        return self._directory

    @property
    def holders(self) -> int:
        """How many holders (the opener and each attached agent) have not detached."""
        with self._lock:
            return self._holders

    @property
    def closed(self) -> bool:
        """Whether the claim has been released (by the last detach or by `close()`)."""
        with self._lock:
            return self._closed

    def attach(self) -> Session:
        """Add a holder (an agent that shares this session); returns the session.

        Raises `RuntimeError` once the session is closed.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the session {self.id} is closed: open it again to resume it")
            self._holders += 1
        return self

    def detach(self) -> None:
        """Drop a holder; the last one closes the session. A no-op once it is closed."""
        with self._lock:
            if self._closed:
                return
            self._holders -= 1
            last = self._holders <= 0
        if last:
            self.close()

    def close(self) -> None:
        """End the session now, whoever still holds it: release the claim, which removes
        the directory when it kept nothing. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._holders = 0
            claim, self._claim = self._claim, None
        if claim is not None:
            claim.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self._directory or f"memory only, not {self.location}"
        return f"Session({self.id!r}, {where})"
