"""What Glob and Grep share: where a search runs, how it is resolved, and finding and
starting ripgrep, with the failures of each turned into messages for the model."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Literal

from deftly.contract import Accesses, FileIODisplay, ToolContext, ToolExecution, ToolResult
from deftly.contract.fs import FileStat
from deftly.contract.tool import P
from deftly.features.files.base import FileTool, FileToolFailed
from deftly.features.files.common import missing_message, os_error_message
from deftly.features.files.ripgrep import RipgrepMissing, locate_rg
from deftly.policy import PathOp, glob_rule_matcher, literal_rule

Search = Callable[[Path], Awaitable[ToolResult]]
"""A tool's search below the resolved path; it fails by raising FileToolFailed."""


class SearchTool(FileTool[P]):
    """A tool that searches the workspace with ripgrep (Glob, Grep)."""

    _rg: str | None = None  # the rg found by the first call, until it vanishes

    def search_execution(
        self,
        pattern: str,
        raw: str | None,
        search: Search,
        *,
        operation: Literal["glob", "grep"],
        detail: str,
        description: str,
    ) -> ToolExecution:
        """The execution of a search for `pattern` in `raw` (default: the working
        directory), approved and matched by the pattern."""
        if raw is None:
            root = self.workspace.cwd or self.workspace.root
        else:
            root = self.workspace.resolve(raw, PathOp.SEARCH, check_sensitive=True)
        return ToolExecution(
            accesses=Accesses.search_tree(root),
            display=FileIODisplay(operation=operation, path=str(root), detail=detail),
            description=description,
            approval_rule=literal_rule(self.name, pattern),
            matches_rule=glob_rule_matcher(pattern),
            execute=partial(self._searching, search, root),
        )

    async def _searching(self, search: Search, root: Path, ctx: ToolContext) -> ToolResult:
        try:
            return await search(root)
        except FileToolFailed as exc:
            return ToolResult.error(str(exc))

    def stat_target(self, raw: str, target: Path) -> FileStat:
        """The stat of what is searched; FileToolFailed when it is missing or unreadable."""
        try:
            return self.env.stat(target)
        except (FileNotFoundError, NotADirectoryError):
            raise FileToolFailed(missing_message(self.env, raw, target, self.workspace)) from None
        except OSError as exc:
            raise FileToolFailed(os_error_message(raw, exc, "search")) from None

    def find_rg(self) -> str:
        """The rg to run (found once, then kept); FileToolFailed when there is none."""
        try:
            rg = self._rg or locate_rg(self.env, self.config.rg_path)
        except RipgrepMissing as exc:
            raise FileToolFailed(str(exc)) from None
        self._rg = rg
        return rg

    @contextlib.contextmanager
    def starting_rg(self, rg: str) -> Iterator[None]:
        """Turns a failure to start `rg` (or to write its scratch files) into
        FileToolFailed; an rg that vanished is looked for again on the next call."""
        try:
            yield
        except FileNotFoundError:
            self._rg = None
            raise FileToolFailed(str(RipgrepMissing(f"rg vanished: {rg}"))) from None
        except OSError as exc:
            raise FileToolFailed(
                f"Could not start ripgrep ({rg}): {exc.strerror or exc}."
            ) from None
