"""Where a runtime keeps its files: the user data directory and one directory per session."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
from pathlib import Path

import platformdirs


def data_home() -> Path:
    """`$DEFTLY_HOME`, else the platform's user data directory (~/.local/share/deftly)."""
    override = os.environ.get("DEFTLY_HOME")
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("deftly"))


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def session_dir(workspace: Path, session_id: str, home: Path | None = None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", workspace.name).strip("_") or "root"
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:8]
    return (home or data_home()) / "sessions" / f"{slug}-{digest}" / session_id
