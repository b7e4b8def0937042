"""The user's record of trusted folders, and what an untrusted workspace would set.

Trust is kept in the user's data directory (`trusted-folders.json` under deftly's data
home), never in the workspace, so a cloned repository cannot plant it. Folders are keyed
by their real path (links resolved), so a link to a trusted folder is that folder and a
different folder of the same name is not. Trusting a folder covers everything below it.
The file is replaced atomically (temporary file, fsync, rename) and is ignored, with a
problem reported, when another user owns it or others may write it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deftly.config.loader import FeatureTables, load_config, workspace_mcp_file
from deftly.config.untrusted import Withheld
from deftly.contract.errors import ConfigError
from deftly.contract.records import frozen

STORE_NAME = "trusted-folders.json"


@frozen
class TrustedFolder:
    """One folder the user trusted (by its real path), and since when."""

    path: Path
    since: str
    """When it was trusted (UTC, ISO 8601)."""


def real_folder(directory: str | Path) -> Path:
    """The folder's real path; ConfigError when it is not an existing directory."""
    path = Path(directory).expanduser()
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ConfigError(f"{path} does not exist; give the folder to trust.") from None
    if not real.is_dir():
        raise ConfigError(f"{real} is not a folder; give the folder to trust.")
    return real


class TrustStore:
    """`trusted-folders.json` in the data home `home`."""

    def __init__(self, home: Path) -> None:
        self.path = home / STORE_NAME
        self.problem: str | None = None
        """Why the file on disk was not used (unreadable, foreign owner, ...), if it was not."""

    def folders(self) -> list[TrustedFolder]:
        """Every trusted folder, sorted by path."""
        return [
            TrustedFolder(Path(path), str(since)) for path, since in sorted(self._read().items())
        ]

    def trusted_root(self, directory: str | Path) -> Path | None:
        """The recorded folder that covers `directory` (itself or a parent), if any."""
        try:
            real = Path(directory).expanduser().resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        recorded = self._read()
        for candidate in (real, *real.parents):
            if str(candidate) in recorded:
                return candidate
        return None

    def is_trusted(self, directory: str | Path) -> bool:
        """Whether `directory` is a trusted folder or lies inside one."""
        return self.trusted_root(directory) is not None

    def trust(self, directory: str | Path) -> Path:
        """Record the folder's real path; returns it."""
        real = real_folder(directory)
        recorded = self._read(for_update=True)
        recorded.setdefault(str(real), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self._write(recorded)
        return real

    def revoke(self, directory: str | Path) -> Path | None:
        """Forget the folder's own record; returns the path removed, or None if there was
        none (it may still be covered by a trusted parent: see `trusted_root`)."""
        path = Path(directory).expanduser().absolute()
        with contextlib.suppress(OSError, RuntimeError):
            path = path.resolve(strict=True)
        recorded = self._read(for_update=True)
        if recorded.pop(str(path), None) is None:
            return None
        self._write(recorded)
        return path

    # -- the file ---------------------------------------------------------------------------

    def _read(self, *, for_update: bool = False) -> dict[str, str]:
        self.problem = None
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            return self._unusable(f"cannot read it ({exc.strerror})", for_update)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                return self._unusable("it belongs to another user", for_update)
            if info.st_mode & 0o022:
                return self._unusable("others may write it (chmod 600 it)", for_update)
            raw = handle.read()
        try:
            data: Any = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._unusable("it is not valid JSON", for_update)
        folders = data.get("folders") if isinstance(data, Mapping) else None
        if not isinstance(folders, Mapping):
            return self._unusable('it has no "folders" object', for_update)
        return {
            str(path): str(since)
            for path, since in folders.items()
            if isinstance(path, str) and Path(path).is_absolute()
        }

    def _unusable(self, why: str, for_update: bool) -> dict[str, str]:
        message = f"the trust record {self.path} was not used: {why}"
        if for_update:
            raise ConfigError(f"{message}. Fix or remove it, then try again.")
        self.problem = message
        return {}

    def _write(self, folders: Mapping[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"version": 1, "folders": dict(sorted(folders.items()))}, indent=2)
        fd, temporary = tempfile.mkstemp(prefix=f".{STORE_NAME}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        with contextlib.suppress(OSError):  # the rename is durable once the folder is synced
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def pending_settings(workspace: Path, tables: FeatureTables | None = None) -> list[Withheld]:
    """What the workspace's own files would set that needs trust: the withheld parts of
    `.deftly/config.toml` and the servers of its mcp.json files. `tables`: the features'
    config tables (so a `[cron]` table is not an unknown setting)."""
    loaded = load_config(workspace, trusted=False, tables=tables)
    withheld = list(loaded.withheld)
    withheld.extend(mcp_servers_withheld(workspace, loaded.config.mcp.config_files))
    return withheld


def workspace_mcp_files(workspace: Path, config_files: Sequence[str] = ()) -> list[Path]:
    """The mcp.json files inside the workspace: its own, and `[mcp] config_files` given
    as relative paths (from the workspace)."""
    files = [workspace_mcp_file(workspace)]
    files += [workspace / p for p in config_files if not Path(p).expanduser().is_absolute()]
    return files


def mcp_servers_withheld(workspace: Path, config_files: Sequence[str] = ()) -> list[Withheld]:
    """The workspace's mcp.json files that name servers (they would start programs)."""
    withheld: list[Withheld] = []
    for path in workspace_mcp_files(workspace, config_files):
        names = _server_names(path)
        if names is not None:
            withheld.append(Withheld(path, f"MCP servers ({names})"))
    return withheld


def _server_names(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    if not text.strip():
        return None
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        return "the file is not valid JSON"
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        return "?"
    return ", ".join(str(n) for n in servers) or None


def describe_withheld(workspace: Path, withheld: list[Withheld]) -> str:
    """The one message saying what was ignored, from where, and how to trust."""
    by_file: dict[Path, list[str]] = {}
    for item in withheld:
        by_file.setdefault(item.file, []).append(item.setting)
    parts = "; ".join(f"{', '.join(settings)} from {file}" for file, settings in by_file.items())
    quoted = shlex.quote(str(workspace))
    return (
        f"{workspace} is not a trusted folder, so its settings that could run programs or "
        f"widen permissions were ignored: {parts}. Its deny and ask rules still apply. If you "
        f"trust the files in this folder, run `deftly trust {quoted}` (or pass --trust for "
        "one run; from Python, Runtime(trust=True))."
    )
