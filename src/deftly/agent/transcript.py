"""An agent's conversation on disk, one JSON record a line, so a later run can resume it.

`<session_dir>/transcripts/<agent_id>.jsonl` gets a record per event of the loop, each
written and flushed at once (a crash loses at most the line being written):

    {"v": 1, "type": "turn_start", "turn": 1, "prompt": "...", "t": 1764650000.1}
    {"v": 1, "type": "message", "turn": 1, "step": 1, "message": {Message.to_json()}}
    {"v": 1, "type": "step_end", "turn": 1, "step": 1, "usage": {...}, "finish_reason": "..."}
    {"v": 1, "type": "turn_end", "turn": 1, "stop_reason": "...", "steps": 3, "usage": {...}}
    {"v": 1, "type": "replaced", "reason": "compacted", "messages": [...]}

`replaced` holds the whole history after a compaction, an elision or a clear: loading
restarts from it. `load_transcript` folds the records back into the history the model saw,
skipping a torn line and giving every tool call left without a result (a crash mid-step) an
error result, so the history stays paired.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from deftly.providers.types import Message, TextPart, Usage
from deftly.session.paths import PRUNING_PREFIX, data_home, session_dir

log = logging.getLogger(__name__)

VERSION = 1
"""The record format's version (`"v"` in every record)."""

TRANSCRIPTS = "transcripts"
"""The folder of a session directory that holds its agents' transcripts."""

INTERRUPTED = "The tool call was interrupted before its result was recorded; do not assume it ran."
"""The error result a restored tool call gets when the transcript has none for it."""


def transcript_path(session_dir: Path, agent_id: str) -> Path:
    """Where the agent `agent_id` of the session in `session_dir` keeps its transcript.

    An id that is not a plain file name (a child's `main/review`, say) is made one, with a
    short hash of the id so two such ids never share a file."""
    return session_dir / TRANSCRIPTS / f"{_file_stem(agent_id)}.jsonl"


def _file_stem(agent_id: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", agent_id).strip("._") or "agent"
    if stem != agent_id:
        stem += "-" + hashlib.sha256(agent_id.encode()).hexdigest()[:8]
    return stem


class TranscriptWriter:
    """Appends one agent's records to its transcript (creating its folders).

    A record is flushed as soon as it is written, and the file is fsynced at the end of
    each turn. A write that fails (a full disk) is logged once and the rest are dropped:
    the turn matters more than its record; `error` says what went wrong.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        """Why records are no longer written (None while all is well)."""
        self._file: BinaryIO | None = None
        self._fold = _Fold()
        self._synced = True
        """Whether `_fold` holds what the file holds (not so for a file this writer did
        not start: then the first rewrite is written whole)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Unbuffered: each record is one write(2) of a whole line to an O_APPEND file,
            # so a crash tears at most that line and two writers never interleave lines.
            self._file = open(path, "ab", buffering=0)  # noqa: SIM115
            self._end_torn_line()
        except OSError as exc:
            self._fail(exc)

    def _end_torn_line(self) -> None:
        """A crash may have left a line without its newline: end it, so the next record
        starts a line of its own (the torn one is skipped when loading)."""
        assert self._file is not None
        end = self._file.seek(0, os.SEEK_END)
        if end == 0:
            return
        self._synced = False
        with open(self.path, "rb") as raw:
            raw.seek(end - 1)
            if raw.read(1) != b"\n":
                self._file.write(b"\n")

    # -- records ---------------------------------------------------------------------------

    def turn_started(self, turn: int, prompt: str) -> None:
        """A turn began with this prompt (restored as a user message unless the loop
        records its own user message before the model's first reply)."""
        self._fold.turn_start(prompt)
        self._write({"type": "turn_start", "turn": turn, "prompt": prompt, "t": time.time()})

    def message(self, message: Message, *, turn: int, step: int) -> None:
        """A message joined the history (the prompt, a reply, a tool result, an injection)."""
        self._fold.message(message, turn, step)
        self._write({"type": "message", "turn": turn, "step": step, "message": message.to_json()})

    def step_ended(self, *, turn: int, step: int, usage: Usage, finish_reason: str) -> None:
        """A model request and its tool calls are done; `usage` is that request's."""
        self._fold.step_end(usage, turn, step)
        self._write(
            {
                "type": "step_end",
                "turn": turn,
                "step": step,
                "usage": usage.to_json(),
                "finish_reason": finish_reason,
            }
        )

    def turn_ended(self, *, turn: int, stop_reason: str, steps: int, usage: Usage) -> None:
        """The turn is over (the file is synced to disk here)."""
        self._fold.flush_prompt()
        self._write(
            {
                "type": "turn_end",
                "turn": turn,
                "stop_reason": stop_reason,
                "steps": steps,
                "usage": usage.to_json(),
                "t": time.time(),
            }
        )
        self._sync()

    def replaced(self, messages: Sequence[Message], *, reason: str) -> None:
        """The history was rewritten (compacted, elided, cleared): a resume restarts from
        `messages`. When only some messages changed (an elision), only those are written
        (a `patch` record), so a long session's file grows with its length, not its
        square."""
        changes = self._changes(messages)
        if changes == []:
            return  # nothing changed
        if changes is not None:
            self._fold.patch(changes)
            record: dict[str, Any] = {
                "type": "patch",
                "reason": reason,
                "changes": [{"index": i, "message": m.to_json()} for i, m in changes],
            }
        else:
            self._fold.replaced(list(messages))
            record = {
                "type": "replaced",
                "reason": reason,
                "messages": [m.to_json() for m in messages],
            }
        record["t"] = time.time()
        self._write(record)
        if self._file is not None and changes is None:
            self._synced = True
        self._sync()

    def _changes(self, messages: Sequence[Message]) -> list[tuple[int, Message]] | None:
        """The messages that differ from what the file holds, when that is a few of them
        in the same places (None: write the history whole)."""
        held = self._fold.messages
        if not self._synced or self._fold.pending_prompt is not None or len(held) != len(messages):
            return None
        changes = [
            (i, new)
            for i, (new, old) in enumerate(zip(messages, held, strict=True))
            if new is not old and new != old
        ]
        return changes if len(changes) * 2 <= len(messages) else None

    def close(self) -> None:
        """Sync and close the file (further records are dropped)."""
        file, self._file = self._file, None
        if file is None:
            return
        with contextlib.suppress(OSError):
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(OSError):
            file.close()

    # -- writing ---------------------------------------------------------------------------

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        line = json.dumps({"v": VERSION, **record}, ensure_ascii=False, separators=(",", ":"))
        try:
            data = memoryview((line + "\n").encode("utf-8", "surrogatepass"))
            while data:  # a regular file takes it in one write; a short one goes on
                data = data[self._file.write(data) :]
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def _sync(self) -> None:
        if self._file is None:
            return
        try:
            os.fsync(self._file.fileno())
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        self.error = (
            f"the transcript {self.path} cannot be written ({exc}); this conversation "
            "will not be resumable from here on; free some disk space or check the "
            "folder's permissions"
        )
        log.warning("%s", self.error)
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError, ValueError):
                file.close()


# -- loading -------------------------------------------------------------------------------


@dataclass
class Restored:
    """A transcript folded back: the history to continue from and its totals.

    `usage` sums every recorded step; `turns`/`steps` count them; `last_prompt_tokens` is
    the prompt of the last step recorded after the last rewrite of the history (0 when
    none), and `prompt_covered` how many of `messages` that prompt held (for
    `ContextKeeper.observe`). `skipped` counts lines that could not be read (a torn last
    line), `repaired` the tool calls given the interrupted result."""

    messages: list[Message]
    usage: Usage
    turns: int
    steps: int
    last_prompt_tokens: int
    prompt_covered: int = 0
    skipped: int = 0
    repaired: int = 0
    last_prompt: str | None = field(default=None)
    """The prompt of the last turn (for a `--continue` banner)."""


class _Fold:
    """The records folded, one at a time, into the history. The loader feeds it what it
    reads; the writer feeds it what it writes, so both hold the same list (and a `patch`
    record's indices mean the same on both sides)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.usage = Usage()
        self.turns = 0
        self.steps = 0
        self.last_prompt_tokens = 0
        self.prompt_covered = 0
        self.last_prompt: str | None = None
        self.pending_prompt: str | None = None
        self._step_start: dict[tuple[int, int], int] = {}

    def turn_start(self, prompt: object) -> None:
        self.flush_prompt()
        self.turns += 1
        self.pending_prompt = prompt if isinstance(prompt, str) else None
        self.last_prompt = self.pending_prompt
        self._step_start.clear()

    def message(self, message: Message, turn: int, step: int) -> None:
        prompt, self.pending_prompt = self.pending_prompt, None
        if prompt is not None and not (message.role == "user" and prompt.strip() in message.text):
            # The loop recorded no user message of its own carrying the prompt.
            self.messages.append(Message.user(prompt))
        self._step_start.setdefault((turn, step), len(self.messages))
        self.messages.append(message)

    def step_end(self, usage: Usage, turn: int, step: int) -> None:
        self.usage = self.usage + usage
        self.steps += 1
        if usage.input_tokens:
            self.last_prompt_tokens = usage.input_tokens
            # The request was sent before the step's own reply joined the history.
            self.prompt_covered = self._step_start.get((turn, step), len(self.messages))

    def replaced(self, messages: list[Message]) -> None:
        self.pending_prompt = None
        self.messages = messages
        self.last_prompt_tokens = 0
        self.prompt_covered = 0
        self._step_start.clear()

    def patch(self, changes: Sequence[tuple[int, Message]]) -> None:
        if any(not 0 <= index < len(self.messages) for index, _ in changes):
            raise ValueError("a patch beyond the history")
        for index, message in changes:
            self.messages[index] = message

    def flush_prompt(self) -> None:
        if self.pending_prompt is not None:
            self.messages.append(Message.user(self.pending_prompt))
            self.pending_prompt = None

    def add(self, record: dict[str, Any]) -> None:
        """Fold one record read from the file."""
        kind = record.get("type")
        if kind == "message":
            self.message(
                Message.from_json(record["message"]),
                int(record.get("turn", 0)),
                int(record.get("step", 0)),
            )
        elif kind == "turn_start":
            self.turn_start(record.get("prompt"))
        elif kind == "step_end":
            self.step_end(
                Usage.from_json(record.get("usage")),
                int(record.get("turn", 0)),
                int(record.get("step", 0)),
            )
        elif kind == "turn_end":
            self.flush_prompt()
        elif kind == "replaced":
            self.replaced([Message.from_json(m) for m in record.get("messages", ())])
        elif kind == "patch":
            self.patch(
                [(int(c["index"]), Message.from_json(c["message"])) for c in record["changes"]]
            )
        # an unknown type (a newer version's) is skipped

    def finish(self, skipped: int) -> Restored:
        self.flush_prompt()
        messages, repaired = pair_results(self.messages)
        return Restored(
            messages=messages,
            usage=self.usage,
            turns=self.turns,
            steps=self.steps,
            last_prompt_tokens=self.last_prompt_tokens,
            prompt_covered=min(self.prompt_covered, len(messages)),
            skipped=skipped,
            repaired=repaired,
            last_prompt=self.last_prompt,
        )


def load_transcript(path: Path) -> Restored:
    """The history and totals the transcript at `path` records (an empty one when the file
    does not exist). Lines that cannot be read are skipped: a torn last line is what a
    crash mid-write leaves."""
    fold = _Fold()
    skipped = 0
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return fold.finish(0)
    loads = json.loads
    with handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = loads(line)
            except ValueError:
                skipped += 1
                continue
            if not _fold_one(fold, record):
                skipped += 1
    if skipped:
        log.info("skipped %d unreadable line(s) of %s", skipped, path)
    return fold.finish(skipped)


def _fold_one(fold: _Fold, record: object) -> bool:
    """Fold one decoded line; False when it is no record this version can read."""
    if not isinstance(record, dict):
        return False
    try:
        fold.add(record)
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


def pair_results(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """`messages` with every tool call answered: a call with no result gets the
    `INTERRUPTED` error result right after the results its message did get; a result
    answering no call is dropped. Returns the history and how many results were made."""
    called: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        if message.role == "assistant":
            called.update(c.id for c in message.tool_calls)
        elif message.role == "tool" and message.tool_call_id is not None:
            answered.add(message.tool_call_id)
    if called <= answered <= called:
        return list(messages), 0
    out: list[Message] = []
    open_calls: list[tuple[str, str]] = []  # the last assistant message's unanswered calls
    made = 0
    seen: set[str] = set()

    def close_open() -> None:
        nonlocal made
        for call_id, name in open_calls:
            if call_id not in answered:
                out.append(
                    Message(
                        "tool",
                        (TextPart(INTERRUPTED),),
                        tool_call_id=call_id,
                        name=name,
                        is_error=True,
                    )
                )
                made += 1
        open_calls.clear()

    for message in messages:
        if message.role == "tool":
            call_id = message.tool_call_id
            if call_id is None or call_id not in called or call_id in seen:
                continue  # an orphan or a duplicate
            seen.add(call_id)
            out.append(message)
            continue
        close_open()
        out.append(message)
        if message.role == "assistant":
            open_calls.extend((c.id, c.name) for c in message.tool_calls)
    close_open()
    return out, made


# -- finding the last session --------------------------------------------------------------


def latest_session(workspace: Path, home: Path | None = None, agent_id: str = "main") -> str | None:
    """The id of `workspace`'s session whose transcript for `agent_id` changed last (for
    `deftly run --continue`), or None when it has none. `home` is the data home."""
    sessions = session_dir(workspace, "-", home or data_home()).parent
    name = transcript_path(Path("."), agent_id).relative_to(".")
    best: tuple[float, str] | None = None
    try:
        entries = list(os.scandir(sessions))
    except OSError:
        return None
    for entry in entries:
        if entry.name.startswith((".", PRUNING_PREFIX)):
            continue
        try:
            info = os.stat(os.path.join(entry.path, name))
        except OSError:
            continue
        if info.st_size == 0:
            continue
        key = (info.st_mtime, entry.name)
        if best is None or key > best:
            best = key
    return best[1] if best else None
