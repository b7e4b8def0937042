"""ListDirectory: a directory's structure (directories, files, sizes) as a bounded tree.

Files come from `rg --files`, so .gitignore and friends apply as they do for Glob, and
secret files never show; directories are the ones that hold a listed file. Deeper than
`depth`, a directory is summed up (how many files, how many bytes) instead of opened.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import ToolExecution, ToolResult, ToolTraits, describe
from deftly.contract.fs import PathProbe
from deftly.env.base import ExecEnv
from deftly.features.files.common import shown_path
from deftly.features.files.ripgrep import VCS_DIRS, RgRun, one_thread, run_rg
from deftly.features.files.search import SearchTool
from deftly.features.files.secret_globs import (
    glob_args,
    may_hold_secrets,
    secret_globs,
    secret_reason,
)

MAX_DEPTH = 10
MAX_ENTRIES = 500
"""Lines of the tree shown at most; the rest is counted, never silently dropped."""
MAX_FILES = 200_000
"""Files looked at; in a bigger tree the listing says it stopped counting."""


class ListDirectoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        None, description="The directory to list (default: the working directory)."
    )
    depth: int = Field(
        2,
        ge=1,
        le=MAX_DEPTH,
        description="How many levels to open: 1 lists the directory's own entries; deeper "
        "directories are summed up (files and total size).",
    )
    include_ignored: bool = Field(
        False, description="Also list files that .gitignore / .ignore / .rgignore leave out."
    )


@dataclass
class _Dir:
    files: dict[str, int] = field(default_factory=dict)  # name -> size in bytes
    dirs: dict[str, _Dir] = field(default_factory=dict)
    total_files: int = 0
    total_bytes: int = 0


class ListDirectoryTool(SearchTool[ListDirectoryParams]):
    """ListDirectory: a bounded tree of a directory with sizes, honouring .gitignore."""

    name = "ListDirectory"
    title = "List a directory"
    params = ListDirectoryParams
    description = describe("list_directory.md")
    traits = ToolTraits(read_only=True, idempotent=True)

    def description_vars(self) -> Mapping[str, object]:
        return {
            "MAX_ENTRIES": f"{MAX_ENTRIES:,}",
            "MAX_DEPTH": MAX_DEPTH,
            "TIMEOUT": f"{self.config.search_timeout:g}",
        }

    def resolve(self, args: ListDirectoryParams) -> ToolExecution:
        shown = args.path if args.path is not None else "."
        detail = f"depth: {args.depth}" + (
            ", include_ignored: true" if args.include_ignored else ""
        )
        return self.search_execution(
            shown,
            args.path,
            partial(self._run, args),
            operation="glob",
            detail=detail,
            description=f"Listing {shown}",
        )

    def rg_argv(self, rg: str, args: ListDirectoryParams) -> list[str]:
        """The rg command line that lists the directory's files (NUL-separated)."""
        argv = [rg, "--no-config", "--files", "--hidden", "--null"]
        for vcs in VCS_DIRS:
            argv += ["--glob", "!" + vcs]
        argv += glob_args(secret_globs())
        if args.include_ignored:
            argv.append("--no-ignore")
        argv.append(".")
        return argv

    async def _run(self, args: ListDirectoryParams, root: Path) -> ToolResult:
        st = self.stat_target(args.path or str(root), root)
        if not stat.S_ISDIR(st.st_mode):
            return ToolResult.error(
                f'"{args.path}" is a file, not a directory. Use Read to read it, or list its '
                f'directory ("{Path(args.path or "").parent}").'
            )
        rg = self.find_rg()
        with self.starting_rg(rg):
            argv = self.rg_argv(rg, args)
            tree, run = await self._collect(argv, root, args.depth)
            if run.out_of_threads and not tree.seen:
                tree, run = await self._collect(one_thread(argv), root, args.depth)
        if run.timed_out and not tree.seen:
            return ToolResult.error(
                f"ListDirectory was stopped after {self.config.search_timeout:g} s. List a "
                "smaller directory (path)."
            )
        if run.failed and not tree.seen:
            return ToolResult.error(f"ListDirectory failed: ripgrep said: {run.error_summary()}.")
        return self._result(args, root, tree, run)

    async def _collect(self, argv: list[str], root: Path, depth: int) -> tuple[_Tree, RgRun]:
        tree = _Tree(root, depth, self.env, self.workspace.probe)
        run = await run_rg(
            self.env,
            argv,
            cwd=root,
            deadline=self.config.search_timeout,
            consume=tree.add,
            separator=b"\0",
        )
        await asyncio.to_thread(tree.build)
        return tree, run

    def _result(self, args: ListDirectoryParams, root: Path, tree: _Tree, run: RgRun) -> ToolResult:
        lines: list[str] = []
        hidden = _render(tree.top, 0, args.depth, lines, MAX_ENTRIES)
        header = shown_path(root, self.workspace).rstrip("/") + "/"
        notes: list[str] = []
        if not tree.top.total_files:
            lines.append("(no files)")
            if not args.include_ignored:
                notes.append(
                    "Files ignored by .gitignore are left out; set include_ignored to list them."
                )
        if hidden:
            notes.append(
                f"{hidden:,} more entries are not shown (at most {MAX_ENTRIES:,} lines). List "
                "a subdirectory (path) or a smaller depth to see them."
            )
        if tree.stopped:
            notes.append(
                f"Stopped counting after {MAX_FILES:,} files; the totals are lower bounds."
            )
        if run.timed_out:
            notes.append(
                f"The listing was stopped after {self.config.search_timeout:g} s; it is "
                "incomplete. List a smaller directory."
            )
        elif run.failed:
            notes.append(
                "Some directories could not be read, so the tree may be incomplete "
                f"(ripgrep said: {run.error_summary()})."
            )
        if tree.secrets:
            notes.append(
                f"{tree.secrets} secret file{'s were' if tree.secrets != 1 else ' was'} left "
                "out (deftly never lists .env files, private keys or credentials)."
            )
        summary = (
            f"{tree.top.total_files:,} file{'s' if tree.top.total_files != 1 else ''}, "
            f"{_size(tree.top.total_bytes)}"
        )
        text = "\n".join([f"{header}  ({summary})", *lines, *notes])
        return ToolResult.ok(text, truncated=bool(hidden) or tree.stopped)


class _Tree:
    """Files as rg lists them, placed into directories: opened down to `depth`, counted
    below it."""

    def __init__(self, root: Path, depth: int, env: ExecEnv, probe: PathProbe):
        self.root = root
        self.env = env
        self.probe = probe
        self.depth = depth
        self.top = _Dir()
        self.secrets = 0
        self.seen = False
        self.stopped = False
        self._listed: list[str] = []

    def add(self, records: list[bytes]) -> bool:
        """Keep rg's paths (cheap, on the event loop); `build` sizes them later."""
        self.seen = True
        check = may_hold_secrets(b"\0".join(records))
        for record in records:
            if not record:
                continue
            if len(self._listed) >= MAX_FILES:
                self.stopped = True
                return False
            text = os.fsdecode(record).removeprefix("./")
            if check and secret_reason(self.root / text, self.probe) is not None:
                self.secrets += 1
                continue
            self._listed.append(text)
        return True

    def build(self) -> None:
        """Place every kept path, with its size (one `lstat` each: run in a thread)."""
        for text in self._listed:
            self._place(text.split("/"), self.root / text)
        self._listed = []

    def _place(self, parts: list[str], path: Path) -> None:
        try:
            size = self.env.lstat(path).st_size
        except OSError:
            size = 0
        node = self.top
        node.total_files += 1
        node.total_bytes += size
        for level, part in enumerate(parts[:-1], 1):
            node = node.dirs.setdefault(part, _Dir())
            node.total_files += 1
            node.total_bytes += size
            if level >= self.depth:
                return  # below the depth: counted in this directory, not opened
        node.files[parts[-1]] = size


def _render(node: _Dir, level: int, depth: int, lines: list[str], limit: int) -> int:
    """Append `node`'s entries (directories first, then files, each sorted) to `lines`;
    returns how many entries did not fit."""
    hidden = 0
    indent = "  " * (level + 1)
    for name in sorted(node.dirs, key=str.casefold):
        child = node.dirs[name]
        if len(lines) >= limit:
            hidden += 1
            continue
        opened = level + 1 < depth
        count = f"{child.total_files:,} file{'s' if child.total_files != 1 else ''}"
        lines.append(f"{indent}{name}/  ({count}, {_size(child.total_bytes)})")
        if opened:
            hidden += _render(child, level + 1, depth, lines, limit)
    for name in sorted(node.files, key=str.casefold):
        if len(lines) >= limit:
            hidden += 1
            continue
        lines.append(f"{indent}{name}  {_size(node.files[name])}")
    return hidden


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value, unit = n / 1024, "KB"
    for bigger in ("MB", "GB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"
