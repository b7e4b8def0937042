"""A new stateful feature is its folder plus one line: `features=[*BUILTIN_FEATURES, COUNTER]`.

The counter feature (tests/runtime/counter_feature/) brings a tool, a session service, a
config table of its own and state in the session store; these tests run it end to end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deftly import Runtime
from deftly.contract.errors import ConfigError
from deftly.features import BUILTIN_FEATURES
from tests.runtime.counter_feature import COUNTER


async def test_the_feature_tool_runs_with_the_builtins(workspace: Path) -> None:
    async with Runtime(
        workspace, features=[*BUILTIN_FEATURES, COUNTER], plugins=False, approve_asks=True
    ) as rt:
        names = {t.name for t in rt.tools()}
        assert {"Counter", "Read", "Bash"} <= names
        assert (
            "survives a restart" in next(t for t in rt.tools() if t.name == "Counter").description
        )
        first = await rt.call("Counter", {})
        second = await rt.call("Counter", {"times": 3})
        assert (first.is_error, first.text) == (False, "count: 1")
        assert second.text == "count: 4"


async def test_the_count_survives_a_resumed_session(workspace: Path) -> None:
    features = [*BUILTIN_FEATURES, COUNTER]
    async with Runtime(workspace, features=features, plugins=False, approve_asks=True) as rt:
        await rt.call("Counter", {"times": 2})
        session_id = rt.session_id
        state_file = rt.session_dir / "state" / "counter.json"
    assert state_file.is_file()  # kept on disk, in the session directory
    async with Runtime(
        workspace, features=features, plugins=False, approve_asks=True, session_id=session_id
    ) as rt:
        assert (await rt.call("Counter", {})).text == "count: 3"
    async with Runtime(workspace, features=features, plugins=False, approve_asks=True) as fresh:
        assert (await fresh.call("Counter", {})).text == "count: 1"  # a new session starts at 0


async def test_the_feature_reads_its_own_config_table(workspace: Path) -> None:
    config = {"counter": {"step": 5}}
    async with Runtime(
        workspace,
        features=[*BUILTIN_FEATURES, COUNTER],
        config=config,
        plugins=False,
        approve_asks=True,
    ) as rt:
        assert (await rt.call("Counter", {"times": 2})).text == "count: 10"


async def test_its_config_table_is_validated_against_its_model(workspace: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"counter\.stpe: unknown setting \(did you mean 'step'\?\)"
    ):
        Runtime(workspace, features=[*BUILTIN_FEATURES, COUNTER], config={"counter": {"stpe": 2}})
    # Without the feature, the table is not deftly's: an unknown section, as before.
    with pytest.raises(ConfigError, match="counter: unknown setting"):
        Runtime(workspace, config={"counter": {"step": 2}})


async def test_the_workspace_file_sets_it_once_trusted(workspace: Path) -> None:
    (workspace / ".deftly").mkdir()
    (workspace / ".deftly" / "config.toml").write_text("[counter]\nstep = 7\n")
    features = [*BUILTIN_FEATURES, COUNTER]
    async with Runtime(
        workspace, features=features, plugins=False, approve_asks=True, trust=True
    ) as rt:
        assert (await rt.call("Counter", {})).text == "count: 7"
    # Untrusted, a feature's table is withheld whole (deftly cannot tell what is harmless).
    async with Runtime(
        workspace, features=features, plugins=False, approve_asks=True, trust=False
    ) as rt:
        assert (await rt.call("Counter", {})).text == "count: 1"
        assert any("[counter]" in d.message for d in rt.diagnostics)
