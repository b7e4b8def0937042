"""Small helpers the file tools share: messages for common failures, sizes, paths."""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Callable
from pathlib import Path

from deftly.contract.tool import RuleMatch
from deftly.env.base import ExecEnv
from deftly.policy.paths import PathOp, Workspace
from deftly.policy.rules import resolved_rule_matcher

MAX_SUGGESTIONS = 3
_SCAN_LIMIT = 2_000


def locate_file(
    workspace: Workspace, raw: str, operation: PathOp
) -> tuple[Path, Callable[[str], RuleMatch]]:
    """The real path to use for `raw` (or PathSecurityError), and the rule matcher that
    checks a rule against both the path as given and where it really leads."""
    found = workspace.locate(raw, operation)
    return found.real, resolved_rule_matcher(found, cwd=workspace.cwd, home=workspace.home)


def human_size(size: int) -> str:
    """1023 -> "1,023 bytes", 5 MiB -> "5.0 MiB"."""
    if size < 1024:
        return f"{size:,} byte" + ("" if size == 1 else "s")
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def shown_path(path: Path, workspace: Workspace) -> str:
    """A result path as a model should pass it back: relative to the working directory
    when it is inside it, else absolute."""
    cwd = workspace.cwd or workspace.root
    try:
        relative = path.relative_to(cwd)
    except ValueError:
        return os.fspath(path)
    return relative.as_posix() if relative.parts else "."


class ShownPaths:
    """`shown_path` for the many raw paths rg prints: those under the working directory
    by stripping its prefix (no Path objects on the hot path), the rest by `shown_path`."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        cwd = os.fsencode(workspace.cwd or workspace.root)
        self.prefix = cwd if cwd.endswith(b"/") else cwd + b"/"

    def __call__(self, raw: bytes) -> str:
        if raw.startswith(self.prefix):
            rest = raw[len(self.prefix) :]
            plain = not (rest.startswith(b"/") or rest.endswith(b"/") or b"//" in rest)
            if rest and plain and not _has_dot_part(rest):
                return os.fsdecode(rest)
        return shown_path(Path(os.fsdecode(raw)), self.workspace)


def _has_dot_part(rest: bytes) -> bool:
    """Does a relative path have a "." part (which Path would drop)?"""
    return rest == b"." or rest.startswith(b"./") or b"/./" in rest or rest.endswith(b"/.")


def similar_names(env: ExecEnv, path: Path) -> list[Path]:
    """Names in the parent directory that look like the missing file's name."""
    parent = path.parent
    names: list[str] = []
    try:
        for count, entry in enumerate(env.scandir(parent)):
            if count >= _SCAN_LIMIT:
                break
            names.append(entry.name)
    except OSError:
        return []
    close = difflib.get_close_matches(path.name, names, n=MAX_SUGGESTIONS, cutoff=0.6)
    lowered = [n for n in names if n.lower() == path.name.lower() and n not in close]
    return [parent / name for name in (*lowered, *close)]


def missing_message(env: ExecEnv, raw: str, path: Path, workspace: Workspace) -> str:
    """`raw` does not exist: say so, and suggest close names or the nearest directory."""
    text = f'"{raw}" does not exist.'
    suggestions = similar_names(env, path)
    if suggestions:
        listed = " or ".join(f'"{shown_path(s, workspace)}"' for s in suggestions)
        return f"{text} Did you mean {listed}?"
    ancestor = path.parent
    while not env.exists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if ancestor != path.parent:
        return (
            f"{text} Its directory does not exist either (the nearest existing one is "
            f'"{shown_path(ancestor, workspace)}"). Use Glob to find the file by name.'
        )
    return f"{text} Use Glob to find the file by name, or check the spelling."


def stale_message(raw: str, verb: str) -> str:
    """`raw` changed since the model last read it, so it was not `verb` ("edited")."""
    return (
        f'"{raw}" has changed on disk since you last read it (someone or something else '
        f"wrote to it), so it was not {verb}, to avoid overwriting that change. Read it "
        "again, then redo your change on its current text."
    )


def os_error_message(raw: str, exc: OSError, action: str) -> str:
    """A readable sentence for an OS error while doing `action` (e.g. "read") on `raw`."""
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        return (
            f'Permission denied: "{raw}" cannot be {action_past(action)} by this process. '
            "Ask the user to change its permissions if the task needs it."
        )
    if code == errno.ENOSPC:
        return (
            f'The disk is full, so "{raw}" could not be {action_past(action)}; the file was '
            "left as it was. Free some space (or ask the user to) and try again."
        )
    if code == errno.EFBIG:
        return (
            f'"{raw}" would grow past the largest file size allowed here, so it could not be '
            f"{action_past(action)}; the file was left as it was."
        )
    if code == errno.EDQUOT:
        return (
            f'The disk quota is exhausted, so "{raw}" could not be {action_past(action)}; '
            "the file was left as it was."
        )
    if code == errno.EROFS:
        return f'"{raw}" is on a read-only file system; it cannot be {action_past(action)}.'
    if code == errno.EISDIR:
        return f'"{raw}" is a directory, not a file.'
    if code == errno.ENAMETOOLONG:
        return f'"{raw}" is too long a name for this file system. Use a shorter name.'
    if code == errno.ELOOP:
        return f'"{raw}" goes through a loop of symbolic links. Use a path without the loop.'
    reason = exc.strerror or str(exc)
    return f'Could not {action} "{raw}": {reason}.'


def action_past(action: str) -> str:
    """The past participle of a file action, for messages ("edit" -> "edited")."""
    return {"read": "read", "write": "written", "edit": "edited", "search": "searched"}.get(
        action, action + "ed"
    )
