"""Execution environments: the only place tools touch files and processes."""

from deftly.env.base import FS, PROCESS, Capability, ExecEnv, PathChanged
from deftly.env.local import LocalEnv

__all__ = ["FS", "PROCESS", "Capability", "ExecEnv", "LocalEnv", "PathChanged"]
