"""A `PathProbe` that shows a real directory under a virtual prefix (`/virtual/...`),
for tests that prove the path policy looks at files only through its probe: `/virtual`
does not exist on this machine, so any `os` call that slipped past the probe would find
nothing and the result would differ."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from deftly.contract.fs import LOCAL_PROBE, CommandOutput, FileStat

VIRTUAL = "/virtual"


class VirtualProbe:
    """Maps `/virtual/<rest>` to `<real>/<rest>`; absolute link targets are virtual too."""

    def __init__(self, real: Path) -> None:
        self.real = os.fspath(real)
        self.calls: list[str] = []

    def to_real(self, path: str) -> str:
        """The local path behind a virtual one (FileNotFoundError outside `/virtual`)."""
        if path == VIRTUAL or path.startswith(VIRTUAL + "/"):
            return self.real + path[len(VIRTUAL) :]
        raise FileNotFoundError(2, "not in the virtual tree", path)

    def lstat(self, path: str) -> FileStat:
        """See `PathProbe.lstat`."""
        self.calls.append(f"lstat {path}")
        if path in ("", "/"):
            return LOCAL_PROBE.lstat("/")
        return LOCAL_PROBE.lstat(self.to_real(path))

    def stat(self, path: str) -> FileStat:
        """See `PathProbe.stat` (a link's absolute target is taken as virtual)."""
        self.calls.append(f"stat {path}")
        from deftly.policy.paths import real_path_text

        return LOCAL_PROBE.stat(self.to_real(real_path_text(path, self)))

    def link_target(self, path: str) -> str | None:
        """See `PathProbe.link_target`."""
        self.calls.append(f"link_target {path}")
        if path in ("", "/"):
            return None
        return LOCAL_PROBE.link_target(self.to_real(path))

    def readlink(self, path: str) -> str:
        """See `PathProbe.readlink`."""
        return LOCAL_PROBE.readlink(self.to_real(path))

    def lexists(self, path: str) -> bool:
        """See `PathProbe.lexists`."""
        if path in ("", "/"):
            return True
        try:
            return LOCAL_PROBE.lexists(self.to_real(path))
        except FileNotFoundError:
            return False

    def read_header(self, path: str, size: int) -> bytes | None:
        """See `PathProbe.read_header`."""
        self.calls.append(f"read_header {path}")
        try:
            return LOCAL_PROBE.read_header(self.to_real(path), size)
        except FileNotFoundError:
            return None

    def run_command(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float,
    ) -> CommandOutput:
        """See `PathProbe.run_command` (run locally in the mapped directory)."""
        self.calls.append(f"run {argv[0]} in {cwd}")
        return LOCAL_PROBE.run_command(argv, cwd=self.to_real(cwd), env=env, timeout=timeout)
