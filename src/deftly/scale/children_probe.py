"""A quick look at a Ray address before joining it: `ray.init` waits minutes for a cluster
that is not there, so an address where nothing listens is refused in seconds, saying so."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from deftly.scale.cluster import RayUnavailable

PROBE_TIMEOUT = 5.0
"""Seconds a cluster's address has to accept a connection."""


def check_reachable(address: str | None, timeout: float = PROBE_TIMEOUT) -> None:
    """RayUnavailable when `address` ("host:port" or "ray://host:port") takes no
    connection; None and "auto" are left to Ray (it answers those quickly)."""
    if address is None or address == "auto":
        return
    target = urlsplit(address if "://" in address else f"ray://{address}")
    host, port = target.hostname, target.port
    if not host or port is None:
        return  # Ray words its own error for an address it cannot parse
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RayUnavailable(
            f"Could not start the Ray cluster at {address}: nothing accepts connections at "
            f"{host}:{port} ({reason}). Check that `ray start --head` runs there and the "
            "address is right, or leave out the address to start a local instance."
        ) from None
