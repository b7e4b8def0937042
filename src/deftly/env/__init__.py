"""Execution environments: the only place tools touch files and processes."""

from deftly.env.base import FS, PROCESS, PROCESS_TREE, Capability, ExecEnv, PathChanged
from deftly.env.local import LocalEnv
from deftly.env.tree import ProcessTree

__all__ = [
    "FS",
    "PROCESS",
    "PROCESS_TREE",
    "Capability",
    "ExecEnv",
    "LocalEnv",
    "PathChanged",
    "ProcessTree",
]
