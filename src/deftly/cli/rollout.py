"""`deftly rollout`: one agent turn per task of a JSONL file, each in a fresh workspace, on
this machine (a process pool) or a Ray cluster; one result line per task, appended as it
finishes. Kept light at import: the rollout package loads when the command runs."""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deftly.cli import startup
from deftly.cli.common import McpConfigOpt, ModeOpt, TrustOpt, YesOpt, fail

if TYPE_CHECKING:
    from deftly.scale.rollout.driver import Backend

INTERRUPTED = 130


def rollout_command(
    tasks: Annotated[
        Path,
        typer.Argument(
            help="The tasks: one JSON object a line, {id, repo, ref?, prompt, setup?, mode?, "
            "max_steps?, model?}; repo a local path (relative to this file) or a git URL.",
            exists=True,
            dir_okay=False,
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The results file (appended; ids already in it are skipped). "
            "Default: TASKS with .results.jsonl.",
        ),
    ] = None,
    backend: Annotated[
        str, typer.Option("--backend", help="local (a process pool here) or ray.")
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="The Ray cluster: auto (the one this machine belongs to) or host:port / "
            "ray://host:10001. Default: a local Ray instance for this rollout.",
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Tasks at once. Default: local, the CPUs; ray, what the cluster's CPUs hold.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="A \\[models.NAME] profile, or a model id (a task's own wins)."
        ),
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider", help="openai or anthropic.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The API's base URL.")] = None,
    mode: ModeOpt = None,
    yes: YesOpt = False,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=0, help="Most steps per task (0: no limit).")
    ] = None,
    mcp_config: McpConfigOpt = None,
    trust: TrustOpt = False,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0, help="Seconds a task's turn may run (then: timeout)."),
    ] = None,
    setup_timeout: Annotated[
        float, typer.Option("--setup-timeout", min=0, help="Seconds a task's setup may run.")
    ] = 600.0,
    transcripts: Annotated[
        Path | None,
        typer.Option(
            "--transcripts",
            file_okay=False,
            help="Write each transcript to DIR/<id>.jsonl (the result holds the path) instead "
            "of inline in the result line.",
        ),
    ] = None,
    scratch: Annotated[
        str | None,
        typer.Option("--scratch", help="Where workers make workspaces (default: their temp dir)."),
    ] = None,
    keep_workspaces: Annotated[
        bool, typer.Option("--keep-workspaces", help="Keep each workspace after its task.")
    ] = False,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Runs more of a task whose worker died.")
    ] = 2,
    num_cpus: Annotated[
        float, typer.Option("--num-cpus", min=0, help="Ray: CPUs each task takes.")
    ] = 1.0,
    resource: Annotated[
        list[str] | None,
        typer.Option("--resource", help="Ray: NAME=AMOUNT of a custom resource per task (repeat)."),
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env",
            help="Ray: forward this environment variable (an API key's, say) to the workers "
            "through the job's runtime_env (repeat).",
        ),
    ] = None,
) -> None:
    """Run an agent on every task of TASKS and append one result line per task to --out.

    Each result line: {id, status, stop_reason, text, diff, usage, steps, seconds,
    transcript, error, attempts}; status is ok, failed or timeout. Exit status: 0 when every
    task is ok, 1 when one is not or a task line is bad, 2 for a usage error, 130 when
    interrupted (finished results stay; rerun the command for the rest).
    """
    if backend not in ("local", "ray"):
        raise fail(f"unknown backend {backend!r}; use local or ray")
    if provider is not None and provider not in ("openai", "anthropic"):
        raise fail(f"unknown provider {provider!r}; use openai or anthropic")
    if mode is not None and mode not in ("manual", "yolo", "auto"):
        raise fail(f"unknown mode {mode!r}; use manual, yolo or auto")
    if address is not None and backend != "ray":
        raise fail("--address is for --backend ray; add it, or leave out --address")
    code = rollout(
        RolloutArgs(
            tasks=tasks,
            out=out,
            backend=backend,
            address=address,
            concurrency=concurrency,
            model=model,
            provider=provider,
            base_url=base_url,
            mode=mode,
            yes=yes,
            max_steps=max_steps,
            mcp_config=tuple(str(p) for p in mcp_config or ()),
            trust=trust,
            timeout=timeout,
            setup_timeout=setup_timeout,
            transcripts=transcripts,
            scratch=scratch,
            keep_workspaces=keep_workspaces,
            retries=retries,
            num_cpus=num_cpus,
            resources=tuple(resource or ()),
            env=tuple(env or ()),
        )
    )
    raise typer.Exit(code)


@dataclass(frozen=True)
class RolloutArgs:
    """The command line, checked."""

    tasks: Path
    out: Path | None
    backend: str
    address: str | None
    concurrency: int | None
    model: str | None
    provider: str | None
    base_url: str | None
    mode: str | None
    yes: bool
    max_steps: int | None
    mcp_config: tuple[str, ...]
    trust: bool
    timeout: float | None
    setup_timeout: float
    transcripts: Path | None
    scratch: str | None
    keep_workspaces: bool
    retries: int
    num_cpus: float
    resources: tuple[str, ...]
    env: tuple[str, ...]


def rollout(args: RolloutArgs) -> int:
    """Run the rollout the command line describes; its exit status."""
    # A shell starts background jobs (`deftly rollout ... &`, CI scripts) with SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: SIGINT must stop a rollout
    # (every task and its processes) however it was started.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    startup.resume()  # the driver runs for as long as the tasks do
    from deftly.scale.cluster import RayUnavailable
    from deftly.scale.rollout.driver import run_rollout
    from deftly.scale.rollout.progress import Progress
    from deftly.scale.rollout.results import ResultWriter, finished_ids
    from deftly.scale.rollout.runner import RunOptions
    from deftly.scale.rollout.tasks import load_tasks

    tasks, problems = load_tasks(args.tasks)
    for problem in problems:
        _say(f"{args.tasks}: {problem}; skipped (the other tasks run)")
    out = args.out or args.tasks.with_name(
        args.tasks.name.removesuffix(".jsonl") + ".results.jsonl"
    )
    done = finished_ids(out)
    todo = [task for task in tasks if task.id not in done]
    if len(todo) < len(tasks):
        _say(
            f"{len(tasks) - len(todo)} of {len(tasks)} tasks already have results in {out}; skipped"
        )
    if not todo:
        _say(f"nothing to run; the results are in {out}")
        return 1 if problems else 0
    backend = _backend(args)
    options = RunOptions(
        mode=args.mode,
        yes=args.yes,
        trust=args.trust,
        max_steps=args.max_steps,
        model=args.model,
        provider=args.provider,
        base_url=args.base_url,
        mcp_config=args.mcp_config,
        timeout=args.timeout or None,
        setup_timeout=args.setup_timeout or None,
        scratch=args.scratch,
        keep=args.keep_workspaces,
    )
    with ResultWriter(out, args.transcripts) as writer, Progress(len(todo)) as progress:
        try:
            summary = run_rollout(todo, options, backend, writer, progress)
        except KeyboardInterrupt:
            progress.say(
                f"interrupted: {writer.written} tasks finished (in {out}); the tasks in flight "
                "were stopped. Run the same command again to run the rest."
            )
            return INTERRUPTED
        except RayUnavailable as exc:
            raise fail(str(exc), 1) from None
    counts = ", ".join(f"{n} {status}" for status, n in sorted(summary.by_status.items()))
    _say(f"{summary.written} results in {out}: {counts}")
    return 0 if summary.all_ok and not problems else 1


def _backend(args: RolloutArgs) -> Backend:
    if args.backend == "local":
        from deftly.scale.rollout.local import LocalBackend

        return LocalBackend(args.concurrency, retries=args.retries)
    from deftly.scale.rollout.ray_backend import RayBackend

    return RayBackend(
        args.address,
        concurrency=args.concurrency,
        num_cpus=args.num_cpus,
        resources=_resources(args.resources),
        env=args.env,
        retries=args.retries,
    )


def _resources(specs: tuple[str, ...]) -> dict[str, float]:
    resources = {}
    for spec in specs:
        name, sep, amount = spec.partition("=")
        try:
            resources[name.strip()] = float(amount)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise fail(f"--resource {spec!r} is not NAME=AMOUNT (for example GPU=1)")
    return resources


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
