"""Shared fixtures. Every test runs with its own HOME-like directories, so nothing a test
does can read or change the developer's real configuration or data."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("DEFTLY_HOME", str(home / "deftly-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
async def make_runtime(workspace: Path) -> AsyncIterator[Callable[..., Any]]:
    """Build runtimes rooted at the test workspace; all are closed at the end."""
    made: list[Runtime] = []

    async def make(**kwargs: Any) -> Runtime:
        kwargs.setdefault("config", {})
        kwargs.setdefault("plugins", False)
        # Tests that are not about permissions approve every ask (never a deny); the
        # permission tests pass approve_asks=False and an approver of their own.
        kwargs.setdefault("approve_asks", True)
        runtime = Runtime(kwargs.pop("root", workspace), **kwargs)
        await runtime.start()
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.close()


def trust_folder(path: Path) -> Path:
    """Record `path` as trusted, as `deftly trust PATH` does (in the test's data home), for
    tests whose workspace config loads tools, runs hooks or starts MCP servers."""
    from deftly.config.trust import TrustStore
    from deftly.session import data_home

    return TrustStore(data_home()).trust(path)


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo_root()) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env
