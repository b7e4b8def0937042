"""The session's state store: typed values that outlive one call, kept as JSON files in the
session directory, with change events.

What TodoList, goals, cron, plan mode, session approvals and loaded deferred tools keep
goes here. Each key holds one pydantic model (every field with a default) and lives in its
own file, `<session dir>/state/<key>.json`, written atomically (temporary file, fsync,
rename) and read lazily the first time the key is used::

    store = StateStore(session_directory)
    plan = store.slot("plan", PlanState)
    plan.update(lambda state: state.model_copy(update={"active": True}))
    plan.subscribe(lambda change: print(change.key, change.value))

Every `StateStore` on one directory in one process shares the same values, so slots taken
from different stores see each other's changes at once. Between processes the files are
the meeting point: a process reads a key once (until `reload()`, which a session calls
when it is opened), and the last writer wins. A file that is
corrupt or no longer fits its model never crashes anything and is never silently lost: the
key starts from the model's defaults, the old file is kept as `<key>.json.bad`, and the
slot's `problem` says so. A store without a directory (the session directory could not be
used) keeps its state in memory only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ValidationError

from deftly.contract.records import frozen

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

STATE_DIR = "state"
"""The folder of the session directory the store keeps its files in."""

KEY_PATTERN = re.compile(r"[a-z0-9_][a-z0-9_.-]{0,99}")
"""What a key may be: lower-case letters, digits, `_`, `.` and `-`, not starting with `.`."""


@frozen
class StateChanged(Generic[M]):
    """Told to a slot's listeners after its value changed: the key and the new value."""

    key: str
    value: M


StateListener = Callable[[StateChanged[M]], None]
"""Called with each change of a slot's value, on the thread that made the change."""


class _Entry:
    """One key's value as this process knows it (shared by every slot of the key)."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self.value: BaseModel | None = None  # None until loaded
        self.load_problem: str | None = None
        self.save_problem: str | None = None
        self.listeners: list[Callable[[StateChanged[Any]], None]] = []


class _Shelf:
    """The values of one state directory in this process, shared by its stores."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.lock = threading.RLock()
        self.entries: dict[str, _Entry] = {}
        self.swept = False  # scratch files of dead writers removed (once per process)


_shelves: weakref.WeakValueDictionary[str, _Shelf] = weakref.WeakValueDictionary()
_shelves_lock = threading.Lock()


def _shelf_for(directory: Path | None) -> _Shelf:
    if directory is None:
        return _Shelf(None)
    where = os.path.realpath(directory)
    with _shelves_lock:
        shelf = _shelves.get(where)
        if shelf is None:
            shelf = _Shelf(Path(where))
            _shelves[where] = shelf
        return shelf


class StateStore:
    """Typed state kept in a session directory (`None`: in memory only). Thread-safe.

    Stores made for the same directory in one process share their values and listeners.
    """

    def __init__(self, directory: Path | None) -> None:
        self._shelf = _shelf_for(directory)

    @property
    def directory(self) -> Path | None:
        """The session directory whose `state/` folder holds the files; None in memory."""
        return self._shelf.directory

    @property
    def persistent(self) -> bool:
        """Whether values are written to disk (False: they live in this process only)."""
        return self._shelf.directory is not None

    def slot(self, key: str, model: type[M]) -> StateSlot[M]:
        """The slot of `key`, holding a `model` (every field of which has a default).

        A key holds one model: asking for it with another raises `TypeError`.
        """
        if not KEY_PATTERN.fullmatch(key):
            raise ValueError(
                f"{key!r} is not a valid state key: use lower-case letters, digits, '_', "
                "'.' and '-' (at most 100, not starting with '.')"
            )
        try:
            model()
        except ValidationError as exc:
            raise TypeError(
                f"{model.__name__} cannot be the model of the state key {key!r}: every "
                "field needs a default, the value a key starts from"
            ) from exc
        with self._shelf.lock:
            entry = self._shelf.entries.get(key)
            if entry is None:
                entry = self._shelf.entries[key] = _Entry(model)
            elif entry.model is not model:
                raise TypeError(
                    f"the state key {key!r} already holds {entry.model.__name__}, not "
                    f"{model.__name__}: give the new model a key of its own"
                )
        return StateSlot(self._shelf, key, model)

    def reload(self) -> None:
        """Forget what this process read: each key reads its file again at its next use
        (a resumed session sees what other processes wrote meanwhile). A value whose save
        failed is kept, being nowhere else."""
        with self._shelf.lock:
            for entry in self._shelf.entries.values():
                if entry.save_problem is None:
                    entry.value = None
                    entry.load_problem = None

    def problems(self) -> list[str]:
        """What went wrong with the keys used so far (unreadable files, failed saves)."""
        with self._shelf.lock:
            found: list[str] = []
            for entry in self._shelf.entries.values():
                found.extend(p for p in (entry.load_problem, entry.save_problem) if p)
            return found


class StateSlot(Generic[M]):
    """One key of a `StateStore`: read, write and watch its value.

    `get()` hands out a copy: change the state through `set()` or `update()`, which save it
    and tell the listeners.
    """

    def __init__(self, shelf: _Shelf, key: str, model: type[M]) -> None:
        self._shelf = shelf
        self.key = key
        self.model = model

    @property
    def problem(self) -> str | None:
        """What went wrong with this key, if anything: a file that could not be read (kept
        as `<key>.json.bad`) or the last save that failed."""
        with self._shelf.lock:
            entry = self._entry()
            self._load(entry)
            return entry.save_problem or entry.load_problem

    def get(self) -> M:
        """The current value (a copy); the model's defaults if nothing was kept."""
        with self._shelf.lock:
            entry = self._entry()
            return cast(M, self._load(entry).model_copy(deep=True))

    def set(self, value: M) -> None:
        """Replace the value, save it and tell the listeners.

        Raises `ValueError` if `value` would not read back as itself (so what a later
        process reads is what was set). A save that fails keeps the value in this process
        and records a `problem`; it does not raise.
        """
        self._change(lambda _: value)

    def update(self, change: Callable[[M], M]) -> M:
        """Set the value to `change(current)`, atomically with respect to other updates in
        this process, and return it. `change` gets a copy and runs under the store's lock:
        keep it short and do not wait in it for other threads."""
        return self._change(change)

    def subscribe(self, listener: StateListener[M]) -> Callable[[], None]:
        """Call `listener` after every change of this key (from any slot of the key in this
        process); returns the way to stop."""
        told = cast(Callable[[StateChanged[Any]], None], listener)
        with self._shelf.lock:
            self._entry().listeners.append(told)

        def unsubscribe() -> None:
            with self._shelf.lock:
                listeners = self._entry().listeners
                if told in listeners:
                    listeners.remove(told)

        return unsubscribe

    # -- inside -----------------------------------------------------------------------

    def _entry(self) -> _Entry:
        return self._shelf.entries[self.key]

    def _path(self) -> Path | None:
        directory = self._shelf.directory
        return None if directory is None else directory / STATE_DIR / f"{self.key}.json"

    def _change(self, change: Callable[[M], M]) -> M:
        with self._shelf.lock:
            entry = self._entry()
            current = cast(M, self._load(entry).model_copy(deep=True))
            value = change(current)
            if not isinstance(value, self.model):
                raise TypeError(
                    f"the state key {self.key!r} holds {self.model.__name__}, not "
                    f"{type(value).__name__}"
                )
            text = value.model_dump_json(by_alias=True, indent=2)
            try:
                kept = self.model.model_validate_json(text)
            except ValidationError as exc:
                raise ValueError(
                    f"the value for the state key {self.key!r} would not read back as "
                    f"itself ({_reason(exc)}); it was not kept"
                ) from exc
            entry.value = kept
            self._save(entry, text)
            listeners = tuple(entry.listeners)
            result = kept.model_copy(deep=True)
        if listeners:
            event = StateChanged(self.key, kept.model_copy(deep=True))
            for listener in listeners:
                try:
                    listener(event)
                except Exception:
                    log.exception("a listener of the state key %r failed", self.key)
        return result

    def _load(self, entry: _Entry) -> BaseModel:
        if entry.value is not None:
            return entry.value
        entry.value = self.model()
        path = self._path()
        if path is None:
            return entry.value
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return entry.value
        except (OSError, UnicodeDecodeError) as exc:
            entry.load_problem = (
                f"the saved state {self.key!r} ({path}) could not be read ({exc}); it "
                "starts from its defaults, and the file was left where it is"
            )
            log.warning("%s", entry.load_problem)
            return entry.value
        try:
            entry.value = self.model.model_validate_json(text)
        except ValidationError as exc:
            entry.load_problem = self._set_aside(path, _reason(exc))
            log.warning("%s", entry.load_problem)
        return entry.value

    def _set_aside(self, path: Path, reason: str) -> str:
        """Move an unreadable file to `<key>.json.bad` (`.bad.2`... if that is taken); the
        problem to report."""
        bad = _free_name(path.with_name(path.name + ".bad"))
        said = f"the saved state {self.key!r} ({path}) no longer fits {self.model.__name__}"
        try:
            os.replace(path, bad)
        except OSError as exc:
            return (
                f"{said} ({reason}); it starts from its defaults, and the old file could "
                f"not be set aside ({exc}): copy it away before this key changes again"
            )
        return f"{said} ({reason}); it starts from its defaults, and the old file was kept as {bad}"

    def _save(self, entry: _Entry, text: str) -> None:
        path = self._path()
        if path is None:
            return
        if not self._shelf.swept:
            self._shelf.swept = True
            _sweep_scratch(path.parent)
        try:
            write_text_atomic(path, text)
        except OSError as exc:
            entry.save_problem = (
                f"could not save the state {self.key!r} to {path} ({exc}); the change "
                "holds in this process only"
            )
            log.warning("%s", entry.save_problem)
        else:
            entry.save_problem = None


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: a temporary file beside it, fsync, rename.

    The folder itself is made if missing, its parents are not (a session that was closed
    and removed is not brought back by a late write to its `state/`).
    """
    path.parent.mkdir(exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise


SCRATCH = re.compile(r"\..+\.json\.(\d+)\.[0-9a-f]+\.tmp")
"""The name of a scratch file `write_text_atomic` writes: `.<key>.json.<pid>.<random>.tmp`."""


def _sweep_scratch(folder: Path) -> None:
    """Remove the scratch files that writers killed mid-write left in `folder`."""
    try:
        names = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return
    for name in names:
        match = SCRATCH.fullmatch(name)
        if match and not _alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(folder / name)


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (a reused pid only keeps a stale file longer)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _free_name(path: Path) -> Path:
    """`path`, or `path.2`, `path.3`... the first that does not exist (an earlier bad file
    is never overwritten)."""
    candidate, number = path, 1
    while candidate.exists() and number < 1000:
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


def _reason(exc: ValidationError) -> str:
    """The first few errors of `exc`, in one line."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(part) for part in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
