"""This process as a child subreaper (Linux): orphaned descendants come back to it.

A command that leaves its session (`setsid cmd &`, `setsid -f`, a double fork) escapes
every process-group and session signal. Once deftly is a subreaper (`prctl(
PR_SET_CHILD_SUBREAPER)`), such a process, when its parent exits, becomes deftly's child
instead of init's, where the shell tools can find it (by the task mark in its environment)
and stop it. Set once per process, when the first runtime starts; it lasts for the life of
the process, and is inherited by nothing (children start without it).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


@functools.cache
def become_subreaper() -> bool:
    """Make this process a child subreaper, once; whether it is one."""
    return _prctl_subreaper()


def _prctl_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        # The symbols this process already has (the interpreter is linked with libc):
        # `ctypes.util.find_library` would run `ldconfig -p` at every start to find them.
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    if prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log.info("cannot become a child subreaper: errno %d", ctypes.get_errno())
        return False
    flag = ctypes.c_int(0)
    prctl.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if prctl(PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag), 0, 0, 0) != 0:
        return False
    return flag.value == 1
