"""Connecting to a Ray cluster, or starting a local one, for the length of a `with` block.

One place decides how deftly meets Ray, so the rollout and the swarm backend behave the same:
`address=None` starts a private local instance (stopped on exit), `"auto"` joins the cluster
this machine belongs to, anything else is a cluster address (`ray://host:10001`, `host:6379`).
A Ray that is already initialised in this process (a test's cluster, a host program's) is used
as it is and left running.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from deftly.contract.errors import DeftlyError

INSTALL_HINT = "install it with `pip install 'deftly[ray]'`"


class RayUnavailable(DeftlyError):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


def import_ray() -> Any:
    """The `ray` module, or RayUnavailable saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"The Ray backend needs the `ray` package: {INSTALL_HINT}.") from None
    return ray


@contextlib.contextmanager
def ray_session(
    address: str | None = None,
    *,
    namespace: str = "deftly",
    runtime_env: Mapping[str, Any] | None = None,
    num_cpus: int | None = None,
) -> Iterator[Any]:
    """Ray connected for the block (see the module docstring); yields the `ray` module."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    options: dict[str, Any] = {
        "namespace": namespace,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if runtime_env:
        options["runtime_env"] = dict(runtime_env)
    if address is None:
        # "local": a private instance even when RAY_ADDRESS or a `ray start` cluster exists
        options.update(
            address="local", include_dashboard=False, num_cpus=num_cpus or os.cpu_count() or 1
        )
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        where = "a local Ray instance" if address is None else f"the Ray cluster at {address}"
        hint = (
            "check that `ray start --head` runs there and the address is right, or leave out "
            "--address to start a local instance"
            if address is not None
            else "check the Ray installation (`ray start --head` by hand shows the error)"
        )
        raise RayUnavailable(f"Could not start {where}: {exc}. {hint.capitalize()}.") from None
    try:
        yield ray
    finally:
        ray.shutdown()
