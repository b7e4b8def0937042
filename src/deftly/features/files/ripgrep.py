"""Finding and running ripgrep for Glob and Grep.

`rg` comes from the `ripgrep` wheel pinned in deftly's dependencies, which puts it in the
interpreter's scripts directory (the venv's `bin/`), a place that is often not on PATH.
So that directory is searched first, then PATH, both in the environment the search runs
in (`ExecEnv.program_dirs` and `ExecEnv.which`). Nothing is ever downloaded.

A run streams rg's stdout record by record to a consumer (memory stays flat however many
results there are), keeps the tail of stderr for error messages, and stops rg (SIGTERM,
then SIGKILL) at a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from deftly.contract.fs import ByteStream, Process
from deftly.env.base import ExecEnv

RG_VERSION = "14.1.0"
STDERR_KEEP = 64 * 1024
READ_CHUNK = 256 * 1024
TERM_GRACE = 2.0
VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")


class BadPattern(ValueError):
    """A glob that cannot be given to rg (the message says why)."""


@contextlib.contextmanager
def glob_filter(env: ExecEnv, glob: str) -> Iterator[list[str]]:
    """rg arguments that keep only the files matching `glob` (or, for "!glob", drop them),
    as a lowest-precedence ignore file.

    Not as `--glob`: rg lets a --glob override every ignore rule, so `*.log` would list
    the very files .gitignore leaves out. An ignore file keeps .gitignore in charge, and
    it uses the same gitignore-style globs (braces, `**`, a pattern without `/` matching
    names at any depth, one with `/` anchored at the search directory).
    """
    if "\n" in glob or "\r" in glob:
        raise BadPattern("a glob cannot contain a line break")
    negate = glob.startswith("!")
    body = glob[1:] if negate else glob
    if not body.strip():
        raise BadPattern("the glob is empty")
    if body.startswith("#"):
        body = "\\" + body
    if body.endswith(" "):
        body = body[:-1] + "\\ "
    # Keep only the matches: ignore everything, bring back directories (to walk them) and
    # the matching files. A negated glob is just one rule ignoring its matches.
    rules = body + "\n" if negate else "*\n!*/\n!" + body + "\n"
    path = env.write_temp(rules.encode("utf-8"), suffix=".rgignore")
    try:
        yield ["--ignore-file", os.fspath(path)]
    finally:
        env.remove(path)


class RipgrepMissing(Exception):
    """No usable rg; the message says how to install it."""


def locate_rg(env: ExecEnv, configured: str | None = None) -> str:
    """The rg to run, in the environment `env`: the configured one, else in the env's
    program directories (beside this Python, locally), else on the env's PATH."""
    if configured:
        expanded = _expand_home(configured, env)
        if os.sep in expanded or (os.altsep and os.altsep in expanded):
            if env.which(os.path.basename(expanded), os.path.dirname(expanded)):
                return expanded
            raise RipgrepMissing(
                f"The rg configured in [files] rg_path ({configured}) does not exist or is not "
                "executable. Fix the setting, or remove it to use the rg installed with deftly."
            )
        found = env.which(expanded)
        if found:
            return found
        raise RipgrepMissing(
            f"The rg configured in [files] rg_path ({configured}) is not on PATH. Fix the "
            "setting, or remove it to use the rg installed with deftly."
        )
    name = "rg.exe" if os.name == "nt" else "rg"
    searched = env.program_dirs()
    found = (env.which(name, os.pathsep.join(searched)) if searched else None) or env.which(name)
    if found:
        return found
    raise RipgrepMissing(missing_message(searched))


def _expand_home(configured: str, env: ExecEnv) -> str:
    """`~` at the start of a configured path, as the env's home directory."""
    if configured == "~" or configured.startswith("~/"):
        return os.fspath(env.home()) + configured[1:]
    return configured


def missing_message(searched: Sequence[str]) -> str:
    """How to install rg, for the model (which was searched, and that nothing is fetched)."""
    where = ", ".join(searched)
    return (
        "ripgrep (rg) is not installed: it is not beside this Python "
        f"({where}) nor on PATH, and deftly never downloads programs. Install it into "
        f"deftly's environment with `{sys.executable} -m pip install ripgrep=={RG_VERSION}` "
        "(deftly's own dependency; reinstalling deftly does it too), or system-wide with "
        "`apt install ripgrep`, `dnf install ripgrep` or `brew install ripgrep`; or point "
        "[files] rg_path at an rg binary. Until then, use Bash (find, grep) to search."
    )


@dataclass
class RgRun:
    """How one rg run ended: exit code, the tail of stderr, timed out or stopped early."""

    returncode: int | None
    stderr: str
    timed_out: bool = False
    stopped_early: bool = False

    @property
    def failed(self) -> bool:
        """Whether rg reported an error (not a timeout, an early stop or no matches)."""
        return not (self.timed_out or self.stopped_early) and self.returncode not in (0, 1)

    @property
    def glob_error(self) -> str | None:
        """rg's complaint about a glob in an ignore file (it warns and goes on, matching
        nothing), without the scratch file's name."""
        for line in self.stderr.splitlines():
            if "error parsing glob" in line:
                return "error parsing glob" + line.split("error parsing glob", 1)[1]
        return None

    @property
    def out_of_threads(self) -> bool:
        """Did rg fail for want of a thread (EAGAIN)? One more run on one thread may work."""
        return self.failed and (
            "os error 11" in self.stderr or "Resource temporarily unavailable" in self.stderr
        )

    def error_summary(self) -> str:
        """rg's own error, in its words: the last `error:` line, else the last line."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        for line in reversed(lines):
            if line.lower().startswith(("error:", "rg: error")):
                return line
        return lines[-1] if lines else f"ripgrep exited with code {self.returncode}"


def one_thread(argv: Sequence[str]) -> list[str]:
    """The same rg command line, run on a single thread."""
    return [argv[0], "-j", "1", *argv[1:]]


Consumer = Callable[[list[bytes]], bool]
"""Gets the complete stdout records of each chunk rg wrote (without their separators);
returns False to stop rg early."""


async def run_rg(
    env: ExecEnv,
    argv: Sequence[str],
    *,
    cwd: Path,
    deadline: float,
    consume: Consumer,
    separator: bytes = b"\n",
) -> RgRun:
    """Run rg, feeding its complete stdout records to `consume` in batches as they arrive,
    for at most `deadline` seconds.

    A record cut short by a timeout or an early stop is dropped, never half-shown.
    """
    process = await env.spawn(argv, cwd=cwd, merge_stderr=False)
    assert process.stdout is not None and process.stderr is not None
    stderr_task = asyncio.ensure_future(_read_tail(process.stderr, STDERR_KEEP))
    timed_out = False
    stopped = False
    try:
        async with asyncio.timeout(deadline):
            stopped = not await _pump(process.stdout, consume, separator)
    except TimeoutError:
        timed_out = True
    except BaseException:  # cancelled (or the consumer failed): never leave rg running
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        stderr_task.cancel()
        raise
    if timed_out or stopped:
        await _stop(process)
    returncode = await process.wait()
    stderr = await stderr_task
    return RgRun(returncode, stderr, timed_out=timed_out, stopped_early=stopped)


async def _pump(stream: ByteStream, consume: Consumer, separator: bytes) -> bool:
    pending = b""
    while True:
        chunk = await stream.read(READ_CHUNK)
        if not chunk:
            return consume([pending]) if pending else True
        records = (pending + chunk if pending else chunk).split(separator)
        pending = records.pop()
        if records and not consume(records):
            return False


async def _read_tail(stream: ByteStream, keep: int) -> str:
    buffer = bytearray()
    while True:
        chunk = await stream.read(READ_CHUNK)
        if not chunk:
            break
        buffer += chunk
        if len(buffer) > 2 * keep:
            del buffer[: len(buffer) - keep]
    return bytes(buffer[-keep:]).decode("utf-8", "replace")


async def _stop(process: Process) -> None:
    """SIGTERM, a short grace, then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        async with asyncio.timeout(TERM_GRACE):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
