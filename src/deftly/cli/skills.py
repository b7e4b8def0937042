"""`deftly skills`: list, show and render the skills of a workspace."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from deftly.cli.common import JsonOpt, TrustOpt, WorkspaceOpt, err, escape, out

if TYPE_CHECKING:
    from deftly.features.skills import Skill, SkillService, Trigger

# The runtime and the skills feature are imported when a subcommand runs (not for --help).

T = TypeVar("T")

skills_app = typer.Typer(
    name="skills",
    help="List, show and render the skills of a workspace (SKILL.md manuals for the model).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

NOT_FOUND = 2


def _with_skills(workspace: Path, work: Callable[[SkillService], T], trust: bool = False) -> T:
    """Run `work` with the workspace's skill service; errors become one clean line."""
    import asyncio

    from deftly.contract.errors import DeftlyError
    from deftly.features.skills import SkillError
    from deftly.runtime import Runtime

    async def main() -> T:
        async with Runtime(workspace, trust=True if trust else None) as runtime:
            return work(runtime.skills)

    try:
        return asyncio.run(main())
    except SkillError as exc:
        err.print(f"[red]deftly:[/red] {escape(exc.message)}", highlight=False)
        raise typer.Exit(NOT_FOUND if exc.code == "skill.not_found" else 1) from None
    except DeftlyError as exc:
        err.print(f"[red]deftly:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


@skills_app.command("list")
def list_command(
    workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False, trust: TrustOpt = False
) -> None:
    """List the skills (name, source, path, description) and the files that were skipped.

    With --json: {"skills": [...], "skipped": [...]}.
    """

    def work(service: SkillService) -> None:
        skills, skipped = service.skills(), service.skipped()
        if as_json:
            _print_json(
                {
                    "skills": [s.summary() for s in skills],
                    "skipped": [s.summary() for s in skipped],
                }
            )
            return
        if skills:
            from rich.table import Table

            table = Table(show_edge=False, pad_edge=False)
            for column in ("Name", "Source", "For", "Description", "Path"):
                table.add_column(column, overflow="fold")
            for skill in skills:
                table.add_row(
                    escape(skill.name),
                    skill.source,
                    _audience(skill),
                    escape(skill.description),
                    escape(str(skill.path)),
                )
            out.print(table)
        else:
            out.print("No skills found.")
        if skipped:
            out.print(f"\n[yellow]Skipped ({len(skipped)}):[/yellow]")
            for item in skipped:
                out.print(f"  {escape(item.path)}: {escape(item.reason)}", highlight=False)

    _with_skills(workspace, work, trust)


def _audience(skill: Skill) -> str:
    if skill.type == "reference":
        return "reading"
    if skill.model_invocable:
        return "model+user"
    return "user"


@skills_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="The skill's name (any case).")],
    workspace: WorkspaceOpt = Path("."),
    as_json: JsonOpt = False,
    trust: TrustOpt = False,
) -> None:
    """Show one skill: where it comes from, its fields and its text (before expansion)."""

    def work(service: SkillService) -> None:
        skill = service.require(name)
        if as_json:
            _print_json(
                {**skill.summary(), "metadata": dict(skill.metadata), "content": skill.content}
            )
            return
        fields = [
            ("name", skill.name),
            ("source", skill.source + (f" ({skill.package})" if skill.package else "")),
            ("path", str(skill.path)),
            ("type", skill.type),
            ("for", _audience(skill)),
            ("description", skill.description),
        ]
        if skill.when_to_use:
            fields.append(("when to use", skill.when_to_use))
        if skill.arguments:
            fields.append(("arguments", " ".join(skill.arguments)))
        if skill.argument_hint:
            fields.append(("argument hint", skill.argument_hint))
        for key, value in fields:
            out.print(f"[bold]{key}:[/bold] {escape(value)}", highlight=False)
        out.print()
        sys.stdout.write(skill.content + "\n")

    _with_skills(workspace, work, trust)


@skills_app.command(
    "render", context_settings={"ignore_unknown_options": True, "allow_extra_args": False}
)
def render_command(
    name: Annotated[str, typer.Argument(help="The skill's name (any case).")],
    args: Annotated[
        list[str] | None,
        typer.Argument(
            help='Arguments for the skill; each keeps its quoting ("src/a b.py" stays one).'
        ),
    ] = None,
    workspace: WorkspaceOpt = Path("."),
    trigger: Annotated[
        str,
        typer.Option(help="What loads it: user-slash, model-tool or nested-skill."),
    ] = "user-slash",
    trust: TrustOpt = False,
) -> None:
    """Print the <skill-loaded> block a model would receive for NAME with ARGS."""
    if trigger not in ("user-slash", "model-tool", "nested-skill"):
        err.print(f"[red]deftly:[/red] unknown trigger {trigger!r}", highlight=False)
        raise typer.Exit(2)
    from deftly.features.skills import join_arguments

    chosen = cast("Trigger", trigger)

    def work(service: SkillService) -> str:
        return service.render(name, join_arguments(args or []), trigger=chosen)

    sys.stdout.write(_with_skills(workspace, work, trust) + "\n")
