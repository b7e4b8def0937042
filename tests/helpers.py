"""Small real tools used by the core tests (and loadable by path from the CLI tests)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deftly import Accesses, Tool, ToolContext, ToolExecution, ToolResult, ToolTraits, ToolUpdate
from deftly.contract import FileIODisplay, WriteHow
from deftly.env import ExecEnv
from deftly.policy import PathOp, Workspace, glob_rule_matcher, literal_rule, path_rule_matcher
from deftly.policy.rules import resolved_rule_matcher


class EchoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="What to say back.")
    times: int = Field(1, ge=1, le=5, description="How many times.")


class EchoTool(Tool[EchoParams]):
    """Says its text back; declares no accesses (so it conflicts with nothing)."""

    name = "Echo"
    description = "Echo the text back."
    params = EchoParams
    traits = ToolTraits(read_only=True, idempotent=True)

    def resolve(self, args: EchoParams) -> ToolExecution:
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            description=f"Echoing {args.text[:20]}",
            execute=lambda ctx: ToolResult.ok(args.text * args.times),
        )


class SleepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    seconds: float = 0.05
    write: bool = False
    progress: bool = False


class SleepTool(Tool[SleepParams]):
    """Sleeps while 'touching' a path, recording when it ran (for scheduling tests)."""

    name = "Sleep"
    description = "Sleep on a path."
    params = SleepParams

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.log: list[tuple[str, str, float]] = []

    def resolve(self, args: SleepParams) -> ToolExecution:
        path = self.workspace.resolve(args.path, PathOp.WRITE if args.write else PathOp.READ)
        accesses = Accesses.write_file(path) if args.write else Accesses.read_file(path)
        return ToolExecution(
            accesses=accesses,
            display=FileIODisplay(operation="write" if args.write else "read", path=str(path)),
            approval_rule=literal_rule(self.name, path),
            matches_rule=path_rule_matcher(path, cwd=self.workspace.cwd),
            execute=lambda ctx: self._run(ctx, args),
        )

    async def _run(self, ctx: ToolContext, args: SleepParams) -> ToolResult:
        loop = asyncio.get_running_loop()
        self.log.append(("start", args.path, loop.time()))
        if args.progress:
            ctx.report(ToolUpdate("stdout", text="working"))
            ctx.report(ToolUpdate("progress", progress=50, total=100))
        await asyncio.sleep(args.seconds)
        self.log.append(("end", args.path, loop.time()))
        return ToolResult.ok(f"slept on {args.path}")


class BigParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chars: int = Field(ge=0)
    exempt: bool = False


class BigTool(Tool[BigParams]):
    """Returns a long output, to exercise the output budget."""

    name = "Big"
    description = "Produce a lot of text."
    params = BigParams

    def resolve(self, args: BigParams) -> ToolExecution:
        def run(ctx: ToolContext) -> ToolResult:
            body = "".join(f"line {i:07d}\n" for i in range(args.chars // 13 + 1))[: args.chars]
            return ToolResult.ok(body, spill_exempt=args.exempt)

        return ToolExecution(accesses=Accesses.none(), approval_rule=self.name, execute=run)


class BrokenParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    how: str = Field(description="raise | none | garbage | resolve-raise | resolve-garbage | slow")


class BrokenTool(Tool[BrokenParams]):
    """Misbehaves on demand."""

    name = "Broken"
    description = "Misbehave."
    params = BrokenParams

    def resolve(self, args: BrokenParams) -> Any:
        if args.how == "resolve-raise":
            raise RuntimeError("resolve blew up")
        if args.how == "resolve-garbage":
            return 42

        async def run(ctx: ToolContext) -> Any:
            if args.how == "raise":
                raise ValueError("tool blew up")
            if args.how == "none":
                return None
            if args.how == "garbage":
                return {"not": "a result"}
            if args.how == "slow":
                await asyncio.sleep(30)
            if args.how == "stubborn":
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    await asyncio.sleep(0.01)
                    raise
            return ToolResult.ok("fine")

        return ToolExecution(accesses=Accesses.none(), approval_rule=self.name, execute=run)


# -- path-taking tools for the safety suite ------------------------------------------------
# Small real tools that read and write through the path policy the way the file tools do:
# `workspace.locate` in resolve (nothing touched there), the real path declared as the
# access, the rule matcher over both the given and the real path, the I/O through ExecEnv.


class PathParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="The file to read.")


class PeekTool(Tool[PathParams]):
    """Reads a text file (a stand-in for Read)."""

    name = "Peek"
    description = "Read a text file."
    params = PathParams
    traits = ToolTraits(read_only=True)

    def __init__(self, env: ExecEnv, workspace: Workspace):
        self.env = env
        self.workspace = workspace

    def resolve(self, args: PathParams) -> ToolExecution:
        found = self.workspace.locate(args.path, PathOp.READ)
        return ToolExecution(
            accesses=Accesses.read_file(found.real),
            display=FileIODisplay(operation="read", path=str(found.real)),
            description=f"Reading {args.path}",
            approval_rule=literal_rule(self.name, found.real),
            matches_rule=resolved_rule_matcher(
                found, cwd=self.workspace.cwd, home=self.workspace.home
            ),
            execute=lambda ctx: self._read(found.real),
        )

    def _read(self, path: Path) -> ToolResult:
        try:
            return ToolResult.ok(self.env.read_bytes(path).decode("utf-8", errors="replace"))
        except OSError as exc:
            return ToolResult.error(f"cannot read {path}: {exc.strerror}")


class WriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="The file to write.")
    content: str = Field(description="The whole new content.")


class ScribbleTool(Tool[WriteParams]):
    """Writes a whole file, creating parent directories (a stand-in for Write)."""

    name = "Scribble"
    description = "Write a text file."
    params = WriteParams

    def __init__(self, env: ExecEnv, workspace: Workspace):
        self.env = env
        self.workspace = workspace

    def resolve(self, args: WriteParams) -> ToolExecution:
        found = self.workspace.locate(args.path, PathOp.WRITE)
        return ToolExecution(
            accesses=Accesses.write_file(found.real),
            display=FileIODisplay(operation="write", path=str(found.real), content=args.content),
            description=f"Writing {args.path}",
            approval_rule=literal_rule(self.name, found.real),
            matches_rule=resolved_rule_matcher(
                found, cwd=self.workspace.cwd, home=self.workspace.home
            ),
            execute=lambda ctx: self._write(found.real, args.content),
        )

    def _write(self, path: Path, content: str) -> ToolResult:
        try:
            self.env.make_dirs(path.parent)
            self.env.write_atomic(path, content.encode())
        except OSError as exc:
            return ToolResult.error(f"cannot write {path}: {exc.strerror}")
        return ToolResult.ok(f"wrote {len(content)} characters to {path}")


class WriteTool(ScribbleTool):
    """The same under the name "Write", declaring (as the real Write does) that it
    replaces the whole file, which the permission chain's restorable-write link reads."""

    name = "Write"
    traits = ToolTraits(writes_files=True)

    def resolve(self, args: WriteParams) -> ToolExecution:
        execution = super().resolve(args)
        path = execution.accesses.written_paths[0] if execution.accesses else args.path
        return dataclasses.replace(
            execution, accesses=Accesses.write_file(path, how=WriteHow.REPLACE)
        )


class NamedTool(Tool[EchoParams]):
    """A do-nothing tool with any name and traits (TaskStop, CronCreate, an MCP name...)."""

    params = EchoParams

    def __init__(
        self,
        name: str,
        *,
        read_only: bool = False,
        subject: str | None = None,
        traits: ToolTraits | None = None,
    ):
        self.name = name
        self.description = name
        self.traits = traits or ToolTraits(read_only=read_only)
        self._subject = subject

    def resolve(self, args: EchoParams) -> ToolExecution:
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=literal_rule(self.name, args.text) if self._subject else self.name,
            matches_rule=glob_rule_matcher(args.text) if self._subject else None,
            execute=lambda ctx: ToolResult.ok(f"{self.name} ran with {args.text}"),
        )


class TickParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(5, ge=1, le=10_000, description="How many lines to print.")
    interval: float = Field(0.05, ge=0, le=10, description="Seconds between lines.")
    marker: str | None = Field(None, description="File to write 'finished' or 'cancelled' to.")


class TickTool(Tool[TickParams]):
    """Prints numbered lines over time, like a long shell command streaming its output.

    It stops as soon as the call is cancelled, and (when given a marker file) records
    whether it finished or was cancelled, so tests can see what really happened."""

    name = "Tick"
    description = "Print numbered lines over time, reporting each as progress."
    params = TickParams
    traits = ToolTraits(read_only=True)

    def resolve(self, args: TickParams) -> ToolExecution:
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            description=f"Ticking {args.count} times",
            execute=lambda ctx: self._run(ctx, args),
        )

    @staticmethod
    def _mark(args: TickParams, text: str) -> None:
        if args.marker:
            with open(args.marker, "w", encoding="utf-8") as handle:
                handle.write(text)

    async def _run(self, ctx: ToolContext, args: TickParams) -> ToolResult:
        lines = []
        try:
            for i in range(1, args.count + 1):
                if ctx.cancelled:
                    self._mark(args, "cancelled")
                    return ToolResult.error(f"stopped after {i - 1} lines")
                lines.append(f"tick {i}")
                ctx.report(ToolUpdate("stdout", text=f"tick {i}"))
                await asyncio.sleep(args.interval)
        except asyncio.CancelledError:
            self._mark(args, "cancelled")
            raise
        self._mark(args, "finished")
        return ToolResult.ok("\n".join(lines))


class PictureParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    caption: str = Field("a pixel", description="Text to put before the image.")


PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNg"
    "+M/A8B8ABQACAeCj8aQAAAAASUVORK5CYII="
)


class PictureTool(Tool[PictureParams]):
    """Returns text and an image (to check that images travel as image content)."""

    name = "Picture"
    description = "Return a one-pixel PNG with a caption."
    params = PictureParams
    traits = ToolTraits(read_only=True, idempotent=True)

    def resolve(self, args: PictureParams) -> ToolExecution:
        from deftly import ImagePart, TextPart

        output = [TextPart(args.caption), ImagePart(PNG_1PX, "image/png")]
        return ToolExecution(
            accesses=Accesses.none(),
            approval_rule=self.name,
            execute=lambda ctx: ToolResult.ok(output),
        )
