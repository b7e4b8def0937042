"""The interactive session's slash commands: `/exit`, `/clear`, `/compact`, `/mode`,
`/model`, `/help`, and each skill as `/<name> [args]`.

A skill's command becomes the turn's prompt the way the reference delivers a user-slash
activation: the skill service's activation text (one line saying the user activated it,
then the `<skill-loaded>` block with the arguments). `/skill:<name>` works as well, for a
skill whose name a built-in command takes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from deftly.agent.events import ContextChanged
from deftly.contract.errors import DeftlyError
from deftly.features.plan.mode import PlanMode
from deftly.features.skills.service import SkillError
from deftly.policy.permissions.modes import MODES
from deftly.providers.base import ChatProvider
from deftly.runtime import Runtime

if TYPE_CHECKING:
    from deftly.agent import Agent


class Exit(Enum):
    """The session should end."""

    EXIT = "exit"


EXIT = Exit.EXIT

SlashOutcome = str | Exit | None
"""What a command line did: a prompt to run as a turn, the end of the session, or nothing
more to do (it was handled)."""

_COMMAND = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+(.*))?$", re.DOTALL)

COMMANDS = {
    "help": "list these commands and the skills",
    "exit": "end the session (also /quit, Ctrl-D)",
    "clear": "start a fresh conversation (the same session)",
    "compact": "summarise older turns now: /compact [what to keep]",
    "mode": "show or set the permission mode: /mode [manual|yolo|auto|plan]",
    "model": "show or switch the model: /model [profile or model id]",
}


@dataclass
class SlashContext:
    """What the commands work on. `switch_model(name)` resolves a profile or model id into
    a provider (raising `ModelError` with a clear message)."""

    agent: Agent
    runtime: Runtime
    console: Console
    switch_model: Callable[[str], ChatProvider]
    show: Callable[[ContextChanged], None]
    """Shows an agent event (the ContextChanged of /compact)."""


def parse_slash(line: str) -> tuple[str, str] | None:
    """`(name, args)` for a slash command line, None for a prompt (a path such as
    `/etc/hosts is empty` is a prompt)."""
    match = _COMMAND.match(line.strip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


def skill_names(runtime: Runtime) -> list[str]:
    """The skills a person may start, for /help and completion ([] when skills are off)."""
    try:
        return [s.name for s in runtime.skills.skills() if s.user_activatable]
    except DeftlyError:
        return []


async def run_slash(line: str, ctx: SlashContext) -> SlashOutcome:
    """Carry out one slash command line (see `parse_slash`)."""
    parsed = parse_slash(line)
    if parsed is None:
        return line
    name, args = parsed
    command = name.lower()
    if command in ("exit", "quit"):
        return EXIT
    if command == "help":
        _help(ctx)
    elif command == "clear":
        ctx.agent.clear()
        ctx.console.print("[dim]A fresh conversation (the session stays the same).[/dim]")
    elif command == "compact":
        await _compact(ctx, args)
    elif command == "mode":
        _mode(ctx, args)
    elif command == "model":
        await _model(ctx, args)
    else:
        return _skill(ctx, name.removeprefix("skill:"), args)
    return None


def _error(ctx: SlashContext, message: str) -> None:
    ctx.console.print(f"[red]{escape(message)}[/red]", highlight=False)


def _help(ctx: SlashContext) -> None:
    lines = [f"  [bold]/{name}[/bold]  {escape(text)}" for name, text in COMMANDS.items()]
    skills = skill_names(ctx.runtime)
    if skills:
        lines.append("Skills (run one with /<name> [arguments]):")
        lines += [f"  [bold]/{escape(name)}[/bold]" for name in skills]
    lines.append(
        "Enter sends; Esc then Enter adds a line. Ctrl-C cancels a running turn; "
        "Ctrl-C or Ctrl-D at an empty prompt ends the session."
    )
    ctx.console.print("\n".join(lines), highlight=False)


async def _compact(ctx: SlashContext, args: str) -> None:
    ctx.console.print("[dim]Compacting the conversation…[/dim]")
    try:
        changed = await ctx.agent.compact(args or None)
    except DeftlyError as exc:
        _error(ctx, f"could not compact: {exc}")
        return
    except Exception as exc:  # a provider error: say it, keep the session
        _error(ctx, f"could not compact: {exc}")
        return
    if changed is None:
        ctx.console.print("[dim]Nothing to compact yet.[/dim]")
    else:
        ctx.show(changed)


def _plan_mode(ctx: SlashContext) -> PlanMode | None:
    try:
        return ctx.runtime.service(PlanMode)
    except LookupError:
        return None


def _mode(ctx: SlashContext, args: str) -> None:
    plan = _plan_mode(ctx)
    wanted = args.lower()
    if not wanted:
        planning = " (plan mode on)" if plan is not None and plan.active else ""
        ctx.console.print(
            f"Permission mode: [bold]{ctx.runtime.mode.value}[/bold]{planning}. "
            f"Set one with /mode {'|'.join((*MODES, 'plan'))}.",
            highlight=False,
        )
        return
    if wanted == "plan":
        if plan is None:
            _error(ctx, "plan mode is not available in this runtime (the plan feature is off)")
            return
        path = plan.enter()
        ctx.console.print(
            "Plan mode on: the model investigates and writes its plan to "
            f"[cyan]{escape(str(path))}[/cyan]; nothing else changes until you approve the "
            "plan. Leave it with /mode manual (or yolo, auto).",
            highlight=False,
        )
        return
    if wanted not in MODES:
        _error(ctx, f"unknown mode {args!r}; use one of {', '.join((*MODES, 'plan'))}")
        return
    ctx.runtime.set_mode(wanted)
    ended = ""
    if plan is not None and plan.active:
        plan.exit()
        ended = " Plan mode is off."
    ctx.console.print(f"Permission mode: [bold]{wanted}[/bold].{ended}", highlight=False)


async def _model(ctx: SlashContext, args: str) -> None:
    current = ctx.agent.provider
    if not args:
        profiles = sorted(ctx.runtime.config.models)
        listed = f" Profiles: {', '.join(profiles)}." if profiles else ""
        ctx.console.print(
            f"Model: [bold]{escape(current.model)}[/bold] ({escape(current.name)}).{listed} "
            "Switch with /model NAME.",
            highlight=False,
        )
        return
    try:
        provider = ctx.switch_model(args)
    except Exception as exc:  # ModelError: a clear message of its own
        _error(ctx, str(exc))
        return
    ctx.agent.set_provider(provider)
    await current.aclose()
    ctx.console.print(
        f"Model: [bold]{escape(provider.model)}[/bold] ({escape(provider.name)}) from the next "
        "step on.",
        highlight=False,
    )


def _skill(ctx: SlashContext, name: str, args: str) -> SlashOutcome:
    try:
        return ctx.runtime.skills.activate(name, args)
    except SkillError as exc:
        _error(ctx, f"/{name}: {exc} Type /help for the commands.")
    except DeftlyError as exc:  # skills switched off
        _error(ctx, f"/{name} is not a command, and {exc}")
    return None
