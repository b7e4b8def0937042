"""Grep: search file contents with ripgrep; files, matching lines or counts, paged.

rg streams its results (`--null` keeps paths and text apart); only the requested page
is kept, everything else is just counted, so memory stays flat. Secret files are
excluded on rg's command line (never opened) and filtered again by name. A very long
line is cut around its first match, so one hit in a minified file cannot flood the
model's context.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal, TypeAlias, cast

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import ToolExecution, ToolResult, ToolTraits, describe
from deftly.contract.output_schema import OutputSchema
from deftly.contract.records import frozen
from deftly.env.base import ExecEnv
from deftly.execution.result_builder import MARKER
from deftly.features.files.common import ShownPaths
from deftly.features.files.outputs import GrepCount, GrepLine, GrepOutput
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

OutputMode = Literal["files_with_matches", "content", "count_matches"]
RG_MAX_COLUMNS = 65_536
STAT_BATCH = 1_000
_RG_PREVIEW_MARK = b" [... omitted end of long line]"

Datum: TypeAlias = str | GrepLine | GrepCount | None
"""A result as structured data: a path, a line, a count; None for a group separator."""


class GrepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description=(
            "A regular expression in ripgrep's (Rust) syntax, e.g. `def \\w+\\(` or "
            "`TODO|FIXME`. Escape literal braces and brackets: `\\{`, `\\[`."
        ),
    )
    path: str | None = Field(
        None,
        description="A file or directory to search (default: the working directory).",
    )
    glob: str | None = Field(
        None,
        description=(
            'Only search files whose path matches this glob, e.g. "*.ts", "*.{ts,tsx}", '
            '"!*.min.js" (a leading ! excludes). To search one directory, use `path`.'
        ),
    )
    type: str | None = Field(
        None,
        description=(
            "Only search files of this ripgrep type, e.g. py, js, ts, rust, go, java, md. "
            "Faster and surer than a glob when a type fits."
        ),
    )
    output_mode: OutputMode = Field(
        "files_with_matches",
        description=(
            '"files_with_matches" (default): the paths of matching files, newest first. '
            '"content": the matching lines (with -n, -A, -B, -C). '
            '"count_matches": how many matches each file has.'
        ),
    )
    case_insensitive: bool = Field(False, alias="-i", description="Ignore letter case.")
    line_numbers: bool = Field(
        True, alias="-n", description='Show line numbers ("content" mode only).'
    )
    after: int | None = Field(
        None, alias="-A", ge=0, description='Lines to show after each match ("content" mode).'
    )
    before: int | None = Field(
        None, alias="-B", ge=0, description='Lines to show before each match ("content" mode).'
    )
    context: int | None = Field(
        None,
        alias="-C",
        ge=0,
        description='Lines to show before and after each match ("content" mode; wins over -A/-B).',
    )
    multiline: bool = Field(
        False,
        description="Let the pattern span lines (`.` then also matches a line break).",
    )
    head_limit: int | None = Field(
        None,
        ge=0,
        description="Results per page (lines, files or counts); 0 means all.",
    )
    offset: int = Field(0, ge=0, description="Skip this many results first (for the next page).")
    include_ignored: bool = Field(
        False, description="Also search files that .gitignore / .ignore / .rgignore leave out."
    )


@dataclass
class _Page:
    """Results in order: only those on the requested page are kept."""

    offset: int
    limit: int | None
    items: list[str] = field(default_factory=list)
    data: list[Datum] = field(default_factory=list)
    """The same results as data, one for each item."""
    total: int = 0

    @property
    def full(self) -> bool:
        return self.limit is not None and len(self.items) >= self.limit

    @property
    def wants_next(self) -> bool:
        """Will the next result be kept (it is on the page)?"""
        return self.total >= self.offset and not self.full

    def add(self, item: str, datum: Datum) -> None:
        if self.total >= self.offset and (self.limit is None or len(self.items) < self.limit):
            self.items.append(item)
            self.data.append(datum)
        self.total += 1


class GrepTool(SearchTool[GrepParams]):
    """Grep: search file contents with ripgrep (matches, files or counts)."""

    name = "Grep"
    title = "Search file contents"
    params = GrepParams
    description = describe("grep.md")
    traits = ToolTraits(read_only=True, idempotent=True)
    output_schema = OutputSchema(GrepOutput)

    def description_vars(self) -> Mapping[str, object]:
        c = self.config
        return {
            "HEAD_LIMIT": f"{c.grep_head_limit:,}",
            "MAX_LINE_CHARS": f"{c.grep_max_line_chars:,}",
            "MAX_CHARS": f"{c.grep_max_chars:,}",
            "TIMEOUT": f"{c.search_timeout:g}",
            "MARKER": MARKER,
        }

    def resolve(self, args: GrepParams) -> ToolExecution:
        where = args.path if args.path is not None else "the working directory"
        return self.search_execution(
            args.pattern,
            args.path,
            partial(self._run, args),
            operation="grep",
            detail=f"pattern: {args.pattern}",
            description=f"Searching for {args.pattern!r} in {where}",
        )

    # -- the rg command line -------------------------------------------------------------

    def rg_argv(
        self, rg: str, args: GrepParams, target: Path, glob_filter_args: list[str]
    ) -> list[str]:
        """The rg command line; the caller's `glob` comes as an ignore file (see
        `glob_filter`), so it narrows the search without overriding .gitignore."""
        argv = [rg, "--no-config", "--color", "never", "--hidden", "--null", *glob_filter_args]
        if args.output_mode == "files_with_matches":
            argv.append("--files-with-matches")
        elif args.output_mode == "count_matches":
            argv += ["--count-matches", "--with-filename"]
        else:
            argv += ["--with-filename", "--max-columns", str(RG_MAX_COLUMNS)]
            argv.append("--max-columns-preview")
            argv.append("--line-number" if args.line_numbers else "--no-line-number")
            if args.context is not None:
                argv += ["--context", str(args.context)]
            else:
                if args.after is not None:
                    argv += ["--after-context", str(args.after)]
                if args.before is not None:
                    argv += ["--before-context", str(args.before)]
        if args.case_insensitive:
            argv.append("--ignore-case")
        if args.type is not None:
            argv += ["--type", args.type]
        if args.multiline:
            argv += ["--multiline", "--multiline-dotall"]
        if args.include_ignored:
            argv.append("--no-ignore")
        # Overrides beat every ignore rule (and the caller's glob, an ignore file), so
        # version-control directories and secret files cannot be brought back.
        for vcs in VCS_DIRS:
            argv += ["--glob", "!" + vcs]
        argv += glob_args(secret_globs(private_keys=True))
        argv += ["--", args.pattern, os.fspath(target)]
        return argv

    # -- running -------------------------------------------------------------------------

    async def _run(self, args: GrepParams, target: Path) -> ToolResult:
        raw = args.path if args.path is not None else "."
        st = self.stat_target(raw, target)
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            return ToolResult.error(f'"{raw}" is neither a file nor a directory.')
        rg = self.find_rg()
        cwd = target if stat.S_ISDIR(st.st_mode) else target.parent
        try:
            with self.starting_rg(rg), contextlib.ExitStack() as stack:
                narrowing = (
                    stack.enter_context(glob_filter(self.env, args.glob))
                    if args.glob is not None
                    else []
                )
                argv = self.rg_argv(rg, args, target, narrowing)
                search = await self._search(args, argv, cwd)
                if search.run.out_of_threads and not search.records:
                    search = await self._search(args, one_thread(argv), cwd)
        except BadPattern as exc:
            return ToolResult.error(f"The glob {args.glob!r} cannot be used: {exc}.")
        if search.run.glob_error:
            return ToolResult.error(
                f"Grep failed: the glob {args.glob!r} is not valid; ripgrep said: "
                f"{search.run.glob_error}. Balance its braces and brackets, or drop it."
            )
        if search.run.failed and not search.records:
            return ToolResult.error(self._failure(args, search.run))
        if search.run.timed_out and not search.records:
            return ToolResult.error(
                f"Grep was stopped after {self.config.search_timeout:g} s without results. "
                "Search a smaller directory (path), restrict the files (glob or type), or "
                "use a more specific pattern."
            )
        if args.output_mode == "files_with_matches":
            await self._sort_newest_first(search)
        return self._result(args, search)

    async def _search(self, args: GrepParams, argv: list[str], cwd: Path) -> _Search:
        limit = self.config.grep_head_limit if args.head_limit is None else args.head_limit
        search = _Search(
            args,
            _Page(args.offset, limit or None),
            self.workspace,
            self.env,
            self.config.grep_max_line_chars,
            _Needles.of(args.pattern, ignore_case=args.case_insensitive),
        )
        separator = b"\0" if args.output_mode == "files_with_matches" else b"\n"
        search.run = await run_rg(
            self.env,
            argv,
            cwd=cwd,
            deadline=self.config.search_timeout,
            consume=search.add,
            separator=separator,
        )
        return search

    async def _sort_newest_first(self, search: _Search) -> None:
        """Order matching files by modification time (newest first, ties in rg's order),
        then keep the requested page of them."""
        times = await search.mtimes()
        page = search.page
        end = None if page.limit is None else page.offset + page.limit
        order = newest_first(times, end)
        show = search.shown
        paths = search.paths
        page.items = [show(paths[i]) for i in order[page.offset : end]]
        page.data = list(page.items)
        page.total = len(times)

    # -- the result ----------------------------------------------------------------------

    def _failure(self, args: GrepParams, run: RgRun) -> str:
        stderr = run.stderr.strip()
        lowered = stderr.lower()
        if "regex parse error" in lowered or "error parsing regex" in lowered:
            return (
                "Grep failed: the pattern is not a valid regular expression in ripgrep's "
                f"(Rust) syntax. ripgrep said:\n{stderr}\nEscape characters meant literally "
                "(\\( \\[ \\{ \\. \\* \\+ \\?), or simplify the pattern."
            )
        if "unrecognized file type" in lowered:
            return (
                f'Grep failed: ripgrep has no file type "{args.type}" ({run.error_summary()}). '
                "Use a known type (py, js, ts, rust, go, java, c, cpp, cs, rb, php, sh, md, "
                'json, yaml, toml, html, css, sql) or a glob such as "*.ext" instead.'
            )
        if "glob" in lowered and "error" in lowered:
            return (
                f"Grep failed: the glob {args.glob!r} is not valid. ripgrep said:\n{stderr}\n"
                "Balance its braces and brackets, or drop it."
            )
        detail = f":\n{stderr}" if stderr else f" (exit code {run.returncode})."
        return f"Grep failed; ripgrep reported an error{detail}"

    def _result(self, args: GrepParams, search: _Search) -> ToolResult:
        page = search.page
        run = search.run
        body: list[str] = []
        notes: list[str] = []
        if args.output_mode == "count_matches" and search.count_files:
            files = search.count_files
            body.append(
                f"{search.count_total:,} match{'es' if search.count_total != 1 else ''} in "
                f"{files:,} file{'s' if files != 1 else ''}."
            )
        budget = self.config.grep_max_chars
        used = sum(len(line) + 1 for line in body)
        consumed = 0
        shown_lines: list[str] = []
        for item in page.items:
            if item == "--" and (not shown_lines or shown_lines[-1] == "--"):
                consumed += 1
                continue
            if used + len(item) + 1 > budget and shown_lines:
                break
            shown_lines.append(item)
            used += len(item) + 1
            consumed += 1
        cut_by_budget = consumed < len(page.items)
        while shown_lines and shown_lines[-1] == "--":
            shown_lines.pop()
        body.extend(shown_lines)
        items = page.items
        if page.total == 0:
            body.append(self._nothing_found(args, search))
        elif not items:
            body.append(
                f"No results at offset {page.offset:,}: there are only {page.total:,}. "
                "Use a smaller offset."
            )
        next_offset = page.offset + consumed
        remaining = page.total - next_offset
        if remaining > 0 and items:
            unit = {"files_with_matches": "files", "content": "lines", "count_matches": "files"}[
                args.output_mode
            ]
            reason = f" (the output is limited to {budget:,} characters)" if cut_by_budget else ""
            notes.append(
                f"Showing {unit} {page.offset + 1:,}-{next_offset:,} of {page.total:,}{reason}. "
                f"For the next page, call Grep again with offset={next_offset}."
            )
        if search.cut_lines:
            notes.append(
                f"{search.cut_lines} long line{'s were' if search.cut_lines != 1 else ' was'} "
                f"cut to about {self.config.grep_max_line_chars:,} characters around the first "
                f"match ({MARKER} marks a cut)."
            )
        if search.secrets:
            notes.append(
                f"Left out {search.secrets} result{'s' if search.secrets != 1 else ''} from "
                "secret files (deftly never shows .env files, private keys or credentials)."
            )
        if run.timed_out:
            notes.append(
                f"The search was stopped after {self.config.search_timeout:g} s, so the results "
                "are incomplete. Narrow the path, glob, type or pattern."
            )
        elif run.failed:
            notes.append(
                "Some files could not be searched, so results may be incomplete (ripgrep said: "
                f"{run.error_summary()})."
            )
        truncated = remaining > 0 or bool(search.cut_lines)
        structured = GrepOutput(
            mode=args.output_mode,
            total=page.total,
            offset=page.offset,
            next_offset=next_offset if remaining > 0 and items else None,
            truncated=truncated,
            incomplete=run.timed_out or run.failed,
        )
        shown = [datum for datum in page.data[:consumed] if datum is not None]
        if args.output_mode == "files_with_matches":
            structured["files"] = cast(list[str], shown)
        elif args.output_mode == "content":
            structured["matches"] = cast(list[GrepLine], shown)  # a mode has one kind
        else:
            structured["counts"] = cast(list[GrepCount], shown)
            structured["total_matches"] = search.count_total
        return ToolResult.ok("\n".join([*body, *notes]), truncated=truncated, structured=structured)

    def _nothing_found(self, args: GrepParams, search: _Search) -> str:
        where = f" in {args.path}" if args.path is not None else ""
        hints: list[str] = []
        if not args.case_insensitive and any(ch.isupper() for ch in args.pattern):
            hints.append("matching is case-sensitive (set -i to ignore case)")
        if not args.include_ignored:
            hints.append("files ignored by .gitignore were not searched (set include_ignored)")
        if args.glob or args.type:
            hints.append("only files matching the glob/type were searched")
        hint = f" Note: {'; '.join(hints)}." if hints else ""
        return f"No matches for {args.pattern!r}{where}.{hint}"


def newest_first(times: list[float], end: int | None) -> list[int]:
    """The indices of `times`, largest first (ties in their given order), through `end`.

    Only the files up to the page's end need an order: picking those few is about twice
    as fast as sorting all 20,000, and it runs after rg, so all of it is wall time.
    `heapq.nlargest` keeps ties in order, exactly as the stable sort does.
    """
    every = range(len(times))
    if end is not None and end < len(times) // 4:
        return heapq.nlargest(end, every, key=times.__getitem__)
    return sorted(every, key=times.__getitem__, reverse=True)


@dataclass
class _Search:
    """Consumes rg's records: keeps the requested page, counts the rest."""

    args: GrepParams
    page: _Page
    workspace: Workspace
    env: ExecEnv
    max_line_chars: int
    finder: _Needles | None
    run: RgRun = field(default_factory=lambda: RgRun(0, ""))
    records: int = 0
    secrets: int = 0
    cut_lines: int = 0
    count_total: int = 0
    count_files: int = 0
    paths: list[bytes] = field(default_factory=list)
    mtime_jobs: list[asyncio.Future[list[float]]] = field(default_factory=list)
    _statted: int = 0
    _last_checked: bytes = b""
    _last_shown: tuple[bytes, str] = (b"", "")

    def __post_init__(self) -> None:
        self.shown = ShownPaths(self.workspace)

    def _secret(self, raw_path: bytes, *, strict: bool) -> bool:
        """Is this result's file one the policy calls secret?

        When lines of text are shown (`strict`), every file gets the policy's full check
        (once per file), so whatever the policy calls secret stays hidden even if rg's
        exclusion globs fall behind it; for names and counts the cheap pre-check decides
        whether the full check is needed.
        """
        if raw_path == self._last_checked:
            return False
        if (strict or may_hold_secrets(raw_path)) and secret_reason(
            os.fsdecode(raw_path), self.workspace.probe
        ) is not None:
            return True
        self._last_checked = raw_path
        return False

    def _show(self, raw_path: bytes) -> str:
        """The path as the model should pass it back (relative when inside the cwd)."""
        if raw_path != self._last_shown[0]:
            self._last_shown = (raw_path, self.shown(raw_path))
        return self._last_shown[1]

    def add(self, records: list[bytes]) -> bool:
        self.records += len(records)
        mode = self.args.output_mode
        if mode == "files_with_matches":
            self._add_files(records)
        elif mode == "count_matches":
            for record in records:
                self._add_count(record)
        elif self.page.full and not may_hold_secrets(b"\0".join(records)):
            self.page.total += len(records)  # past the page: only counted
        else:
            for record in records:
                self._add_content(record)
        return True

    def _add_files(self, records: list[bytes]) -> None:
        if may_hold_secrets(b"\0".join(records)):
            kept = []
            for record in records:
                if may_hold_secrets(record) and secret_reason(
                    os.fsdecode(record), self.workspace.probe
                ):
                    self.secrets += 1
                else:
                    kept.append(record)
            records = kept
        batch = [record for record in records if record]
        if batch:
            self.paths.extend(batch)
            self._stat_pending(final=False)

    def _stat_pending(self, *, final: bool) -> None:
        """Stat the files found so far in a worker thread while rg goes on searching, in
        batches large enough that handing them over costs little."""
        pending = len(self.paths) - self._statted
        if pending and (final or pending >= STAT_BATCH):
            batch = self.paths[self._statted :]
            self._statted = len(self.paths)
            loop = asyncio.get_running_loop()
            self.mtime_jobs.append(loop.run_in_executor(None, self.env.mtimes, batch))

    async def mtimes(self) -> list[float]:
        self._stat_pending(final=True)
        times: list[float] = []
        for job in self.mtime_jobs:
            times.extend(await job)
        return times

    def _add_count(self, record: bytes) -> None:
        raw_path, sep, payload = record.rpartition(b"\0")
        if not sep:
            return
        if self._secret(raw_path, strict=False):
            self.secrets += 1
            return
        try:
            count = int(payload)
        except ValueError:
            return
        self.count_total += count
        self.count_files += 1
        if self.page.wants_next:
            shown = self._show(raw_path)
            datum: GrepCount = {"path": shown, "count": count}
            self.page.add(f"{shown}:{count}", datum)
        else:
            self.page.total += 1

    def _add_content(self, record: bytes) -> None:
        if record == b"--":
            if self.page.total:
                self.page.add("--", None)
            return
        raw_path, sep, payload = record.partition(b"\0")
        if not sep:
            return  # a message from rg, not a result
        if self._secret(raw_path, strict=True):
            self.secrets += 1
            return
        if self.page.wants_next:
            self.page.add(*self._content_line(self._show(raw_path), payload))
        else:
            self.page.total += 1

    def _content_line(self, shown: str, payload: bytes) -> tuple[str, GrepLine]:
        number = ""
        separator = ":"
        if self.args.line_numbers:
            match = re.match(rb"(\d+)([:-])", payload)
            if match:
                number = match.group(1).decode()
                separator = match.group(2).decode()
                payload = payload[match.end() :]
        previewed = payload.endswith(_RG_PREVIEW_MARK)
        if previewed:
            payload = payload[: -len(_RG_PREVIEW_MARK)]
        text = payload.decode("utf-8", "replace").rstrip("\r\n")
        if previewed or len(text) > self.max_line_chars:
            text = self._cut(text, previewed)
            self.cut_lines += 1
        head = f"{shown}{separator}{number}{separator}" if number else f"{shown}{separator}"
        datum: GrepLine = {  # a literal: twice as fast as calling the TypedDict
            "path": shown,
            "line": int(number) if number else None,
            "text": text,
            "context": separator == "-" if number else None,
        }
        return head + text, datum

    def _cut(self, text: str, previewed: bool) -> str:
        """About `max_line_chars` of the line, around the first match when it can be found."""
        cap = self.max_line_chars
        start = 0
        found = self.finder.locate(text) if self.finder is not None else -1
        if found >= 0:
            start = max(0, found - cap // 4)
        start = min(start, max(0, len(text) - cap))
        end = start + cap
        out = text[start:end]
        if start > 0:
            out = MARKER + out
        if end < len(text) or previewed:
            out += MARKER
        return out


_META = set("\\.^$|?*+()[]{}")
_QUANTIFIERS = set("?*{")


@frozen
class _Needles:
    """Literal pieces of a regex, to find roughly where it matched in a long line.

    Never the regex itself: Python's engine backtracks, and a pathological pattern that
    rg (a linear-time engine) handles fine could hang it. `str.find` cannot.
    """

    pieces: tuple[str, ...]
    ignore_case: bool

    @classmethod
    def of(cls, pattern: str, *, ignore_case: bool) -> _Needles | None:
        pieces: list[str] = []
        current: list[str] = []
        depth = 0
        i = 0

        def flush() -> None:
            if len(current) >= 2:
                pieces.append("".join(current))
            current.clear()

        while i < len(pattern):
            ch = pattern[i]
            if depth:  # inside a character class
                if ch == "\\":
                    i += 1
                elif ch == "]":
                    depth = 0
            elif ch == "[":
                flush()
                depth = 1
            elif ch == "\\" and i + 1 < len(pattern):
                following = pattern[i + 1]
                if following.isalnum():  # \w, \d, \b...: not a literal
                    flush()
                else:
                    current.append(following)
                i += 1
            elif ch in _META:
                if ch in _QUANTIFIERS and current:
                    current.pop()  # the quantified character is optional
                flush()
                if ch == "{":  # a repetition count, not text
                    closing = pattern.find("}", i)
                    i = closing if closing >= 0 else len(pattern)
            else:
                current.append(ch)
            i += 1
        flush()
        if not pieces:
            return None
        if ignore_case:
            pieces = [piece.lower() for piece in pieces]
        return cls(tuple(sorted(set(pieces), key=len, reverse=True)), ignore_case)

    def locate(self, text: str) -> int:
        """Where the first piece occurs earliest in `text`, or -1."""
        haystack = text.lower() if self.ignore_case else text
        hits = [found for piece in self.pieces if (found := haystack.find(piece)) >= 0]
        return min(hits) if hits else -1
