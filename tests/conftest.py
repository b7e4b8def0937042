"""Shared fixtures. Every test runs with its own HOME-like directories, so nothing a test
does can read or change the developer's real configuration or data.

`pytest --env=rooted` (or DEFTLY_TEST_ENV=rooted) runs the tests through a rooted env: the
runtimes `make_runtime` builds see the test's folder as `/workspace` (see
`tests/rooted/harness.py`); tests marked `local_env` (they test a local mechanism: the
command line, `LocalEnv` itself) are skipped there.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from tests.rooted.harness import ENV_OPTION, ENV_VARIABLE, ENVS, VIRTUAL_ROOT, virtual_path_type

HOST_LEAK_MARKS = (VIRTUAL_ROOT, "/var/lib/deftly")
"""Virtual places of the rooted run that must never appear on this machine."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        ENV_OPTION,
        choices=ENVS,
        default=os.environ.get(ENV_VARIABLE) or "local",
        help="the execution environment the tools' tests run through (default: local)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "local_env: the test is about a local mechanism (the command line, LocalEnv, host "
        "paths), so the rooted run skips it",
    )
    config.addinivalue_line(
        "markers", "ray: the test runs a real Ray (select with `-m ray`; they run in the suite)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(ENV_OPTION) != "rooted":
        return
    skip = pytest.mark.skip(reason="about a local mechanism: not run through the rooted env")
    for item in items:
        if item.get_closest_marker("local_env") is not None:
            item.add_marker(skip)


@pytest.fixture
def test_env(request: pytest.FixtureRequest) -> str:
    """The env the tools' tests run through: "local" or "rooted"."""
    return str(request.config.getoption(ENV_OPTION))


@pytest.fixture(autouse=True)
def no_virtual_paths_on_the_host(test_env: str) -> Iterator[None]:
    """In the rooted run, a test whose host-side code used a virtual path as a host one
    (and so made `/workspace` or `/var/lib/deftly` on this machine) fails, and what it
    made is removed."""
    if test_env != "rooted":
        yield
        return
    present = [place for place in HOST_LEAK_MARKS if os.path.lexists(place)]
    if present:
        pytest.fail(f"remove {', '.join(present)} from this machine before the rooted run")
    yield
    leaked = [place for place in HOST_LEAK_MARKS if os.path.lexists(place)]
    for place in leaked:
        shutil.rmtree(place, ignore_errors=True)
    if leaked:
        pytest.fail(f"host-side code used a virtual path on this machine: made {leaked}")


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("DEFTLY_HOME", str(home / "deftly-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    return home


@pytest.fixture
def workspace(tmp_path: Path, test_env: str) -> Path:
    """The test's workspace (`tmp_path / "ws"`); in the rooted run a `VirtualPath`
    naming it as the tools see it (`/workspace/ws`)."""
    root = tmp_path / "ws"
    root.mkdir()
    if test_env == "rooted":
        return virtual_path_type(tmp_path)(VIRTUAL_ROOT) / "ws"
    return root


@pytest.fixture
async def make_runtime(
    workspace: Path, tmp_path: Path, test_env: str
) -> AsyncIterator[Callable[..., Any]]:
    """Build runtimes rooted at the test workspace; all are closed at the end. In the
    rooted run each gets a rooted env (unless the test passes its own `env`)."""
    made: list[Runtime] = []
    envs: list[Any] = []

    async def make(**kwargs: Any) -> Runtime:
        kwargs.setdefault("config", {})
        kwargs.setdefault("plugins", False)
        # Tests that are not about permissions approve every ask (never a deny); the
        # permission tests pass approve_asks=False and an approver of their own.
        kwargs.setdefault("approve_asks", True)
        root = kwargs.pop("root", workspace)
        if test_env == "rooted" and "env" not in kwargs:
            kwargs["env"] = rooted_env(tmp_path)
            envs.append(kwargs["env"])
            root = str(root)  # the virtual path, as a host passes it to a rooted runtime
        runtime = Runtime(root, **kwargs)
        await runtime.start()
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.close()
    for env in envs:
        env.close()


def rooted_env(tmp_path: Path) -> Any:
    """The rooted env of the rooted run: the test's folder at `/workspace`, and also at its
    own path (for tests that name a file elsewhere on the machine by its host path)."""
    from deftly.env.rooted import RootedEnv

    return RootedEnv({VIRTUAL_ROOT: tmp_path, str(tmp_path): tmp_path})


def host_path(path: Path) -> str:
    """The host's name for a path a test holds (the real one behind a `VirtualPath`), for
    the test's own host-side programs (`git init`, `chattr`)."""
    return os.fspath(path)


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
