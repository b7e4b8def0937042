"""Glob: files whose path matches a pattern, newest first, found by `rg --files`."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import ToolExecution, ToolResult, ToolTraits, describe
from deftly.contract.output_schema import OutputSchema
from deftly.features.files.common import shown_path
from deftly.features.files.outputs import GlobOutput
from deftly.features.files.ripgrep import (
    VCS_DIRS,
    BadPattern,
    RgRun,
    glob_filter,
    one_thread,
    run_rg,
)
from deftly.features.files.search import SearchTool
from deftly.features.files.secret_globs import (
    glob_args,
    may_hold_secrets,
    secret_globs,
    secret_reason,
)
from deftly.policy import Workspace


class GlobParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description=(
            'A glob, relative to `path`: "*.py" (any depth), "src/*.ts" (directly in src), '
            '"src/**/*.ts", "*.{ts,tsx}", "**/fixtures/**".'
        ),
    )
    path: str | None = Field(
        None, description="The directory to search in (default: the working directory)."
    )
    include_ignored: bool = Field(
        False,
        description="Also list files that .gitignore / .ignore / .rgignore leave out.",
    )


class GlobTool(SearchTool[GlobParams]):
    """Glob: the files whose paths match a pattern, newest first, honouring .gitignore."""

    name = "Glob"
    title = "Find files by name"
    params = GlobParams
    description = describe("glob.md")
    traits = ToolTraits(read_only=True, idempotent=True)
    output_schema = OutputSchema(GlobOutput)

    def description_vars(self) -> Mapping[str, object]:
        return {
            "MAX_RESULTS": f"{self.config.glob_max_results:,}",
            "TIMEOUT": f"{self.config.search_timeout:g}",
        }

    def resolve(self, args: GlobParams) -> ToolExecution:
        detail = f"pattern: {args.pattern}"
        if args.path is not None:
            detail += f", path: {args.path}"
        if args.include_ignored:
            detail += ", include_ignored: true"
        return self.search_execution(
            args.pattern,
            args.path,
            partial(self._run, args),
            operation="glob",
            detail=detail,
            description=f"Finding {args.pattern}",
        )

    def rg_argv(self, rg: str, args: GlobParams, pattern_filter: list[str]) -> list[str]:
        """The rg command line. The pattern comes as an ignore file (`pattern_filter`, see
        `glob_filter`), so .gitignore still applies; version-control directories and
        secret files are excluded by `--glob` overrides, which beat every ignore rule."""
        argv = [rg, "--no-config", "--files", "--hidden", "--sortr=modified", *pattern_filter]
        for vcs in VCS_DIRS:
            argv += ["--glob", "!" + vcs]
        argv += glob_args(secret_globs())
        if args.include_ignored:
            argv.append("--no-ignore")
        argv.append(".")
        return argv

    async def _run(self, args: GlobParams, root: Path) -> ToolResult:
        shown_root = args.path if args.path is not None else "the working directory"
        st = self.stat_target(args.path or str(root), root)
        if not stat.S_ISDIR(st.st_mode):
            return ToolResult.error(
                f'"{args.path}" is a file, not a directory; Glob searches directories. Use '
                f'Read to read it, or pass its directory ("{Path(args.path or "").parent}") '
                "as path."
            )
        rg = self.find_rg()
        try:
            with self.starting_rg(rg), glob_filter(self.env, args.pattern) as pattern_filter:
                argv = self.rg_argv(rg, args, pattern_filter)
                found, run = await self._collect(argv, root)
                if run.out_of_threads and not found.seen:
                    found, run = await self._collect(one_thread(argv), root)
        except BadPattern as exc:
            return ToolResult.error(f"The pattern {args.pattern!r} cannot be used: {exc}.")
        return self._result(args, shown_root, found, run)

    async def _collect(self, argv: list[str], root: Path) -> tuple[_Collector, RgRun]:
        collector = _Collector(root, self.workspace, self.config.glob_max_results)
        run = await run_rg(
            self.env,
            argv,
            cwd=root,
            deadline=self.config.search_timeout,
            consume=collector.add,
        )
        return collector, run

    def _result(
        self, args: GlobParams, shown_root: str, found: _Collector, run: RgRun
    ) -> ToolResult:
        lines: list[str] = []
        notes: list[str] = []
        if run.glob_error:
            return ToolResult.error(
                f"Glob failed: ripgrep said: {run.glob_error}. Fix the pattern (braces and "
                "brackets must be balanced)."
            )
        if run.timed_out and not found.seen:
            return ToolResult.error(
                f"Glob was stopped after {self.config.search_timeout:g} s without results. "
                "Search a smaller directory (path) or use a narrower pattern."
            )
        if run.failed and not found.seen:
            return ToolResult.error(
                f"Glob failed: ripgrep said: {run.error_summary()}. Check the pattern (a glob "
                'such as "**/*.py"; braces and brackets must be balanced).'
            )
        if run.failed:
            notes.append(
                "Some directories could not be read, so the list may be incomplete "
                f"(ripgrep said: {run.error_summary()})."
            )
        if run.timed_out:
            notes.append(
                f"The search was stopped after {self.config.search_timeout:g} s; the list is "
                "incomplete. Search a smaller directory (path) or a narrower pattern."
            )
        lines.extend(found.kept)
        if not found.kept:
            where = f" in {shown_root}" if args.path is not None else ""
            message = f'No files match "{args.pattern}"{where}.'
            if not args.include_ignored:
                message += " (Files ignored by .gitignore are left out; set include_ignored to "
                message += "list them.)"
            lines.append(message)
        extra = found.total - len(found.kept)
        if extra > 0:
            notes.append(
                f"{extra:,} more file{'s' if extra != 1 else ''} match "
                f"({found.total:,} in all; these are the {len(found.kept):,} newest). Narrow "
                "the pattern or the path to see the others."
            )
        if found.secrets:
            notes.append(
                f"{found.secrets} secret file{'s were' if found.secrets != 1 else ' was'} left "
                "out (deftly never lists .env files, private keys or credentials)."
            )
        structured = GlobOutput(
            paths=list(found.kept),
            count=found.total,
            truncated=extra > 0,
            incomplete=run.failed or run.timed_out,
        )
        return ToolResult.ok(
            "\n".join([*lines, *notes]), truncated=extra > 0, structured=structured
        )


class _Collector:
    """Keeps the first `limit` non-secret paths (rg already sorted them newest first) and
    counts the rest without looking at each one."""

    def __init__(self, root: Path, workspace: Workspace, limit: int):
        self.root = root
        self.workspace = workspace
        self.limit = limit
        self.kept: list[str] = []
        self.total = 0
        self.secrets = 0
        self.seen = False

    def add(self, records: list[bytes]) -> bool:
        self.seen = True
        if len(self.kept) >= self.limit and not may_hold_secrets(b"\0".join(records)):
            self.total += len(records) - records.count(b"")
            return True
        for record in records:
            if not record:
                continue
            text = os.fsdecode(record)
            if text.startswith("./"):
                text = text[2:]
            path = self.root / text
            if may_hold_secrets(record) and secret_reason(path, self.workspace.probe) is not None:
                self.secrets += 1
                continue
            self.total += 1
            if len(self.kept) < self.limit:
                self.kept.append(shown_path(path, self.workspace))
        return True
