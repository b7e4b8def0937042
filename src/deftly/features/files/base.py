"""What the file tools share: their dependencies, and how a call on one file is resolved
and run (in a worker thread, its failures turned into messages for the model)."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

from deftly.config.files import FilesConfig
from deftly.contract import (
    Accesses,
    FileIODisplay,
    Tool,
    ToolContext,
    ToolExecution,
    ToolResult,
    WriteHow,
)
from deftly.contract.errors import ToolError
from deftly.contract.fs import FileStat
from deftly.contract.tool import P
from deftly.env.base import ExecEnv, PathChanged
from deftly.features.files.common import locate_file, missing_message, os_error_message
from deftly.features.files.tracker import FileTracker
from deftly.policy import PathOp, Workspace, literal_rule

Action = Literal["read", "write", "edit"]
Work = Callable[[Path], ToolResult]
"""A tool's work on the resolved path; it fails by raising FileToolFailed or OSError."""

# What each action asks of the path policy, and what it declares it touches (Write and
# Edit replace the whole file by a rename).
_MODES: dict[Action, tuple[PathOp, Callable[[Path], Accesses]]] = {
    "read": (PathOp.READ, Accesses.read_file),
    "write": (PathOp.WRITE, partial(Accesses.write_file, how=WriteHow.REPLACE)),
    "edit": (PathOp.WRITE, partial(Accesses.read_write_file, how=WriteHow.REPLACE)),
}


_DONE: dict[Action, str] = {"read": "read", "write": "written", "edit": "changed"}


class FileToolFailed(ToolError):
    """A file tool's call that ends in an error result; the message is for the model.
    (A `ToolError`: one that escapes the tool becomes the same result in the executor.)"""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class FileTool(Tool[P]):
    """A tool over the workspace's files, built from the runtime's env, workspace and
    [files] config."""

    def __init__(self, env: ExecEnv, workspace: Workspace, config: FilesConfig):
        self.env = env
        self.workspace = workspace
        self.config = config


class SingleFileTool(FileTool[P]):
    """A tool whose call works on the one file a model names (Read, Write, Edit,
    ReadMediaFile)."""

    action: ClassVar[Action]
    _known_stat: tuple[Path, FileStat] | None = None
    inline_max_bytes: ClassVar[int] = 0
    """Files up to this size are worked on in the event loop's thread, not a worker's
    (0: always in a worker). Only for work bounded by the file's size."""

    def file_execution(
        self,
        raw: str,
        work: Work,
        description: str,
        *,
        detail: str | None = None,
        content: str | None = None,
        before: str | None = None,
        after: str | None = None,
    ) -> ToolExecution:
        """The execution of a call on `raw`: the path policy for this tool's action, the
        approval rule and matcher of that one path, and `work` run in a worker thread.
        The keyword arguments are shown with the path (FileIODisplay)."""
        operation, accesses = _MODES[self.action]
        path, matcher = locate_file(self.workspace, raw, operation)
        return ToolExecution(
            accesses=accesses(path),
            display=FileIODisplay(
                operation=self.action,
                path=str(path),
                detail=detail,
                content=content,
                before=before,
                after=after,
            ),
            description=description,
            approval_rule=literal_rule(self.name, path),
            matches_rule=matcher,
            execute=partial(self._in_thread, raw, path, work),
        )

    async def _in_thread(self, raw: str, path: Path, work: Work, ctx: ToolContext) -> ToolResult:
        st = self._small_enough(path)
        if st is None:
            return await asyncio.to_thread(self.run_work, raw, path, work)
        # On the loop's thread, with no await until `work` is done: `regular_file` takes
        # this stat instead of a second one of its own.
        self._known_stat = (path, st)
        try:
            return self.run_work(raw, path, work)
        finally:
            self._known_stat = None

    def _small_enough(self, path: Path) -> FileStat | None:
        """The stat of `path` when the work on it is quick enough to run on the event loop
        (the hop to a worker thread costs more than reading a small regular file does);
        None when it goes to a worker."""
        if self.inline_max_bytes <= 0:
            return None
        try:
            st = self.env.stat(path)
        except OSError:
            return None  # the worker reports it, with the usual message
        if stat.S_ISREG(st.st_mode) and st.st_size <= self.inline_max_bytes:
            return st
        return None

    def run_work(self, raw: str, path: Path, work: Work) -> ToolResult:
        """Run `work` on `path` in this thread; its failures become error results that
        name the path as the model gave it (`raw`)."""
        try:
            return work(path)
        except FileToolFailed as exc:
            return ToolResult.error(str(exc))
        except PathChanged:
            return ToolResult.error(
                f'"{raw}" changed after it was checked: the file or a directory on its way '
                "is now a symbolic link or was moved, so it may lead somewhere the path "
                f"policy did not allow. Nothing was {_DONE[self.action]}. Call {self.name} "
                "again to have the path checked afresh."
            )
        except FileNotFoundError as exc:
            return ToolResult.error(self.missing(raw, path, exc))
        except OSError as exc:
            return ToolResult.error(os_error_message(raw, exc, self.action))

    def missing(self, raw: str, path: Path, exc: FileNotFoundError) -> str:
        """What to say when the file (or a directory on its way) does not exist."""
        return missing_message(self.env, raw, path, self.workspace)

    def regular_file(self, path: Path, *, directory: str, special: str) -> FileStat:
        """The stat of `path`, a regular file. FileNotFoundError when it or a directory on
        its way does not exist; FileToolFailed with `directory` when it is a directory,
        with `special` when it is a device, socket or pipe."""
        known = self._known_stat
        if known is not None and known[0] is path:
            self._known_stat = None  # taken once: a second look stats afresh
            return known[1]  # a regular file, checked by `_small_enough` just now
        try:
            st = self.env.stat(path)
        except NotADirectoryError:
            raise FileNotFoundError(path) from None
        if stat.S_ISDIR(st.st_mode):
            raise FileToolFailed(directory)
        if not stat.S_ISREG(st.st_mode):
            raise FileToolFailed(special)
        return st


class TrackedFileTool(SingleFileTool[P]):
    """A single-file tool that also keeps the stale-read guard (Read, Write, Edit)."""

    def __init__(
        self, env: ExecEnv, workspace: Workspace, config: FilesConfig, tracker: FileTracker
    ):
        super().__init__(env, workspace, config)
        self.tracker = tracker
