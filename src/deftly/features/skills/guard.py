"""Skill files go through the path policy before a byte of them is read.

A skill's text reaches every model (its description is in the Skill tool's own
description), so a skill file that is, or links to, a secret would hand the secret out
before any call is made: `.deftly/skills/notes.md -> ../../.env`. A skill file or folder
is refused when its name or the name of what it links to is a secret (the same names the
file tools refuse, and `*.pem` / `*.key` files whose header says private key), or when it
lies outside its skill root once links are resolved (a cloned repository must not reach
into the home directory through a link).
"""

from __future__ import annotations

import os
from pathlib import Path

from deftly.policy.sensitive import private_key_reason, sensitive_reason

_ALLOW_OUTSIDE = (
    "copy it into the skill directory, or add the folder it links to to [skills] extra_dirs "
    "to use it from there"
)


def real_path(path: Path) -> Path | None:
    """`path` with every link resolved, or None when that fails (a loop, a broken link)."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except (OSError, RuntimeError, ValueError):
        return None


def secret_reason(path: Path, real: Path) -> str | None:
    """Why the skill file at `path` (really `real`) is a secret, or None."""
    for candidate in (path, real):
        reason = sensitive_reason(candidate)
        if reason is not None:
            return reason
    return private_key_reason(real)


def refusal(path: Path, real: Path, root: Path, *, folder: bool) -> str | None:
    """Why the skill file or folder `path` (really `real`) of `root` must not be read."""
    what = "folder" if folder else "file"
    if not folder:
        reason = secret_reason(path, real)
        if reason is not None:
            target = "" if real == path else f" (it links to {real})"
            return (
                f"this skill {what} is {reason}{target}; secrets are never read as skills. "
                "Remove the link, or put the skill's text in a file of its own"
            )
    if not real.is_relative_to(root):
        return f"this skill {what} links to {real}, outside its skill directory {root}; " + (
            _ALLOW_OUTSIDE
        )
    return None
