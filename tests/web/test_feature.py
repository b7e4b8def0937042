"""The web feature as a whole: light to import, absent offline, its `[web]` table withheld
in an untrusted workspace, its traits, and FetchURL through a real agent turn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from deftly.agent import Agent
from deftly.contract.traits import ToolTraits
from deftly.env.base import FS, PROCESS, PROCESS_TREE
from deftly.env.local import LocalEnv
from deftly.features import BUILTIN_FEATURES
from tests.agent.loop.helpers import content_text, openai_provider, run_turn, tool_messages
from tests.scripted.script import Call, calls, say
from tests.scripted.server import ModelServer
from tests.web.server import WebServer
from tests.web.site import FOX


class OfflineEnv(LocalEnv):
    """This machine, declared without the network."""

    capabilities = frozenset({FS, PROCESS, PROCESS_TREE})


def test_importing_the_feature_loads_no_http_or_extraction_library() -> None:
    code = (
        "import sys, deftly\n"
        "from deftly.features.web.feature import FEATURE\n"
        "heavy = ('httpx', 'trafilatura', 'pypdf', 'lxml')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


async def test_without_the_network_capability_the_web_tools_are_absent(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime(
        env=OfflineEnv(),
        features=BUILTIN_FEATURES,
        config={"web": {"search": {"provider": "moonshot", "base_url": "http://127.0.0.1:9"}}},
    )
    names = set(runtime.registry.names())
    assert "FetchURL" not in names and "WebSearch" not in names
    assert "Read" in names


async def test_an_untrusted_workspace_cannot_open_private_addresses(
    make_runtime: Any, tmp_path: Path, site: WebServer
) -> None:
    root = tmp_path / "ws"  # on this machine, in either test run
    (root / ".deftly").mkdir(parents=True, exist_ok=True)
    (root / ".deftly" / "config.toml").write_text('[web]\nallow_hosts = ["127.0.0.1"]\n')
    made = {"features": BUILTIN_FEATURES, "config": None, "root": root}
    untrusted = await make_runtime(env=LocalEnv(), trust=False, **made)
    refused = await untrusted.call("FetchURL", {"url": site.url("/plain")})
    assert refused.is_error and "private, local or reserved" in refused.text
    trusted = await make_runtime(env=LocalEnv(), trust=True, **made)
    assert not (await trusted.call("FetchURL", {"url": site.url("/plain")})).is_error


async def test_the_tools_reach_the_open_world_and_are_not_read_only(web_runtime: Any) -> None:
    runtime = await web_runtime(
        {"search": {"provider": "moonshot", "base_url": "http://127.0.0.1:9"}},
        environ={"MOONSHOT_API_KEY": "k"},
    )
    for name in ("FetchURL", "WebSearch"):
        entry = runtime.registry.get(name)
        assert entry is not None
        assert entry.tool.traits == ToolTraits(open_world=True, idempotent=True)


async def test_a_fetched_page_reaches_the_model_with_the_citation_reminder(
    web_runtime: Any, site: WebServer
) -> None:
    runtime = await web_runtime()
    url = site.url("/article")
    script = [calls(Call("FetchURL", {"url": url})), say("Foxes are small omnivores.")]
    with ModelServer(script) as server:
        agent = Agent(runtime, openai_provider(server))
        turn = await run_turn(agent, "what are foxes?")
        await agent.aclose()
    [message] = tool_messages(server.requests[1])
    text = content_text(message)
    assert f"cite this page as a markdown link, e.g. [Fox Facts]({url})" in text
    assert FOX in text
    assert turn.end.stop_reason == "end_turn"
