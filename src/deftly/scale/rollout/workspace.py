"""A task's isolated workspace: a fresh `git clone` of the repo at `ref` in the worker's temp
space, an optional setup command, and at the end every change as a diff against `ref`
(new files included)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from deftly.contract.errors import DeftlyError
from deftly.scale.rollout.tasks import is_url

OUTPUT_TAIL = 2000
"""Characters of a failing command's output quoted in its error."""


class WorkspaceError(DeftlyError):
    """The workspace could not be made (clone, checkout) or its setup failed; the message
    says what happened and what to do."""

    def __init__(self, message: str, *, stage: str = "workspace") -> None:
        super().__init__(message)
        self.stage = stage


@dataclass(frozen=True)
class Workspace:
    """A checked-out clone: its folder and the commit `ref` named when it was made."""

    path: Path
    base: str

    def diff(self) -> str:
        """Every change since `base` as a unified diff (binary-safe), untracked files that
        are not ignored included."""
        _git(["add", "--all", "--intent-to-add"], self.path)
        return _git(["diff", "--binary", "--no-color", "--no-ext-diff", self.base], self.path)


def clone(repo: str, ref: str | None, into: Path) -> Workspace:
    """Clone `repo` (a local path or a URL) into `into` and check out `ref` (None: the
    repo's HEAD) detached."""
    if not is_url(repo) and not Path(repo).is_dir():
        raise WorkspaceError(
            f"the repo {repo} does not exist on this worker; give a path every worker can "
            "reach (shared storage) or a git URL"
        )
    _git(["clone", "--quiet", "--no-checkout", repo, str(into)], None, what=f"clone {repo}")
    base = _resolve(ref, into, repo)
    _git(["checkout", "--quiet", "--detach", base], into, what=f"check out {ref or 'HEAD'}")
    return Workspace(into, base)


def _resolve(ref: str | None, clone_dir: Path, repo: str) -> str:
    candidates = [ref, f"origin/{ref}"] if ref else ["HEAD"]
    for name in candidates:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"],
            cwd=clone_dir,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            return done.stdout.strip()
    if ref is None:
        raise WorkspaceError(f"the repo {repo} has no commit yet; commit something first")
    raise WorkspaceError(
        f"the ref {ref!r} is not a commit, branch or tag of {repo}; check the task's ref"
    )


def _git(args: list[str], cwd: Path | None, *, what: str | None = None) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
        )
    except FileNotFoundError:
        raise WorkspaceError("git is not installed on this worker; install it") from None
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()[-OUTPUT_TAIL:]
        raise WorkspaceError(f"could not {what or 'git ' + args[0]}: {detail}")
    return done.stdout


async def run_setup(command: str, cwd: Path, limit: float | None) -> None:
    """Run the task's setup command in the workspace (its own process group, killed on
    timeout or cancellation); WorkspaceError(stage="setup") when it fails."""
    process = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), limit)
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        raise WorkspaceError(
            f"the setup command did not finish within {limit:g} s and was stopped; make it "
            "faster or raise --setup-timeout",
            stage="setup",
        ) from None
    except BaseException:
        _kill_group(process.pid)
        raise
    finally:
        _kill_group(process.pid)  # whatever it left running in its group
    if process.returncode != 0:
        tail = output.decode(errors="replace").strip()[-OUTPUT_TAIL:]
        raise WorkspaceError(
            f"the setup command failed with exit status {process.returncode}: "
            f"{tail or '(no output)'}",
            stage="setup",
        )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
