"""A small real Ray for the Ray backend's tests (2 CPUs, 100 MB of object store), started
once per test module and shut down after it; the workers get a clean config home."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

RAY_OPTIONS: dict[str, Any] = {
    "address": "local",  # our own instance, even where the machine runs a cluster
    "num_cpus": 2,
    "object_store_memory": 100 * 1024 * 1024,
    "include_dashboard": False,
    "log_to_driver": False,
    "configure_logging": False,
    "namespace": "deftly-tests",
}


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The `ray` module, initialised for this module's tests."""
    ray = pytest.importorskip("ray")
    home = tmp_path_factory.mktemp("ray-home")
    saved = {name: os.environ.get(name) for name in ("XDG_CONFIG_HOME", "DEFTLY_HOME")}
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")  # the workers inherit these
    os.environ["DEFTLY_HOME"] = str(home / "data")
    try:
        ray.init(**RAY_OPTIONS)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    try:
        yield ray
    finally:
        ray.shutdown()


def gcs_address(ray: Any) -> str:
    """The running instance's address, for a second process to join it."""
    return str(ray.get_runtime_context().gcs_address)


def node_ids(ray: Any) -> set[str]:
    """The ids of the nodes alive now."""
    return {node["NodeID"] for node in ray.nodes() if node.get("Alive")}
