"""WebSearch through the runtime against fake search APIs on loopback, one per provider:
the request each provider sends, the results as the model reads them, the count limit,
the citation reminder, provider errors, when the tool is absent, and a plugin provider."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly.contract.tool import CancelToken
from deftly.execution.calls import ToolCall
from deftly.policy.approval import ApprovalRequest, ApprovalResponse
from tests.web.search_api import PATHS, search_api
from tests.web.server import WebServer

CITE = (
    "When you rely on a result in your answer, cite it inline as a markdown link, e.g. "
    "[title](url)."
)
KEYS = {
    "BRAVE_API_KEY": "brave-key",
    "TAVILY_API_KEY": "tvly-key",
    "MOONSHOT_API_KEY": "msh-key",
}


@pytest.fixture
def api() -> Iterator[WebServer]:
    with search_api() as server:
        yield server


async def searching(web_runtime: Any, provider: str, base_url: str, **search: Any) -> Any:
    table = {"provider": provider, "base_url": base_url, **search}
    return await web_runtime({"search": table}, environ=search.pop("environ", KEYS))


async def test_the_moonshot_provider_gives_the_reference_format(
    web_runtime: Any, api: WebServer
) -> None:
    rt = await searching(web_runtime, "moonshot", api.url("/moonshot"))
    result = await rt.call("WebSearch", {"query": "fox facts"})
    assert (result.is_error, result.text) == (
        False,
        "Title: Result 1\nURL: https://example.com/1\nSnippet: Snippet 1\n\n---\n\n"
        "Title: Result 2\nDate: 2024-01-01\nURL: https://example.com/2\nSnippet: Snippet 2\n\n"
        + CITE,
    )
    [seen] = api.requests
    assert (seen.method, json.loads(seen.body)) == ("POST", {"text_query": "fox facts"})
    assert seen.headers["authorization"] == "Bearer msh-key"


async def test_searxng_asks_its_json_api(web_runtime: Any, api: WebServer) -> None:
    rt = await searching(web_runtime, "searxng", api.url("/searxng"), options={"language": "en"})
    result = await rt.call("WebSearch", {"query": "fox facts"})
    assert result.text.startswith("Title: Result 1\nURL: https://example.com/1\nSnippet: Snippet 1")
    assert "Date: 2024-01-01" in result.text and result.text.endswith(CITE)
    [seen] = api.requests
    assert seen.path == "/searxng/search"
    assert seen.query == {
        "q": ["fox facts"],
        "format": ["json"],
        "pageno": ["1"],
        "language": ["en"],
    }
    assert "authorization" not in seen.headers


async def test_brave_sends_its_token_and_count_and_gives_the_site(
    web_runtime: Any, api: WebServer
) -> None:
    rt = await searching(web_runtime, "brave", api.url("/brave"), max_results=5)
    result = await rt.call("WebSearch", {"query": "fox"})
    assert result.text.startswith(
        "Title: Result 1\nSite: Example Co\nURL: https://example.com/1\nSnippet: Snippet 1\n"
    )  # the <strong> tags of Brave's snippets are gone
    [seen] = api.requests
    assert seen.headers["x-subscription-token"] == "brave-key"
    assert seen.query["q"] == ["fox"] and seen.query["count"] == ["5"]


async def test_tavily_gives_page_content_when_asked_for_it(
    web_runtime: Any, api: WebServer
) -> None:
    rt = await searching(
        web_runtime, "tavily", api.url("/tavily"), include_content=True, content_chars=100
    )
    result = await rt.call("WebSearch", {"query": "fox", "max_results": 1})
    text = result.text
    assert "Content:\nFull page text of Result 1. xxx" in text
    assert " [...]" in text  # cut at content_chars
    assert "Result 2" not in text
    [seen] = api.requests
    body = json.loads(seen.body)
    assert body["query"] == "fox" and body["max_results"] == 1
    assert body["include_raw_content"] is True
    assert seen.headers["authorization"] == "Bearer tvly-key"


async def test_the_result_count_is_held_to_the_limit(web_runtime: Any) -> None:
    hits = [
        {"title": f"R{n}", "url": f"https://example.com/{n}", "snippet": f"S{n}"} for n in range(9)
    ]
    with search_api(hits) as many:
        rt = await searching(web_runtime, "moonshot", many.url("/moonshot"), max_results=3)
        capped = await rt.call("WebSearch", {"query": "q"})
        fewer = await rt.call("WebSearch", {"query": "q", "max_results": 2})
        more = await rt.call("WebSearch", {"query": "q", "max_results": 50})
    assert capped.text.count("Title: ") == 3
    assert fewer.text.count("Title: ") == 2
    assert more.text.count("Title: ") == 3
    entry = rt.registry.get("WebSearch")
    assert entry is not None and "at most 3 results" in entry.tool.description


async def test_no_results_say_so_without_the_citation_line(web_runtime: Any) -> None:
    with search_api([]) as empty:
        rt = await searching(web_runtime, "brave", empty.url("/brave"))
        result = await rt.call("WebSearch", {"query": "nothing at all"})
    assert not result.is_error
    assert result.text.startswith("No search results found.")
    assert CITE not in result.text


@pytest.mark.parametrize("provider", list(PATHS))
@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/status/401", "Search failed (authentication): the {p} search API refused the "
                        "request (HTTP 401)"),
        ("/status/429", "Search failed (rate limited): the {p} search API says too many "
                        "requests (HTTP 429); try again after 7 s."),
        ("/status/503", "Search failed (provider): the {p} search API answered HTTP 503."),
        ("/not-json", "Search failed (provider): the {p} search API did not answer with JSON"),
    ],
)  # fmt: skip
async def test_provider_errors_are_clear_tool_errors(
    web_runtime: Any, api: WebServer, provider: str, path: str, said: str
) -> None:
    base = api.url(path if provider != "searxng" else path.rpartition("/")[0])
    if provider == "searxng":  # it asks <base>/search: route that path to the failure
        api.routes[path.rpartition("/")[0] + "/search"] = api.routes[path]
    rt = await searching(web_runtime, provider, base)
    result = await rt.call("WebSearch", {"query": "fox"})
    assert result.is_error
    assert result.text.startswith(said.format(p=provider)), result.text


async def test_an_authentication_error_names_the_key_variable(
    web_runtime: Any, api: WebServer
) -> None:
    rt = await searching(web_runtime, "brave", api.url("/status/401"))
    result = await rt.call("WebSearch", {"query": "fox"})
    assert "check the key in $BRAVE_API_KEY" in result.text


async def test_searxng_without_its_json_api_says_how_to_enable_it(
    web_runtime: Any, api: WebServer
) -> None:
    api.routes["/closed/search"] = api.routes["/status/403"]
    rt = await searching(web_runtime, "searxng", api.url("/closed"))
    result = await rt.call("WebSearch", {"query": "fox"})
    assert result.is_error and "add json to search.formats" in result.text


async def test_a_timeout_and_an_unreachable_provider_are_clear_errors(
    web_runtime: Any, api: WebServer
) -> None:
    slow = await searching(web_runtime, "moonshot", api.url("/slow"), timeout=0.5)
    late = await slow.call("WebSearch", {"query": "fox"})
    assert late.is_error
    assert late.text == (
        "Search failed (timeout): the moonshot search API did not answer within 0.5 s; try "
        "again later."
    )
    gone = await searching(web_runtime, "moonshot", "http://127.0.0.1:9/search")
    down = await gone.call("WebSearch", {"query": "fox"})
    assert down.is_error
    assert down.text.startswith(
        "Search failed (network): cannot reach the moonshot search API at http://127.0.0.1:9/search"
    )


async def test_without_a_provider_there_is_no_web_search(web_runtime: Any) -> None:
    rt = await web_runtime()
    names = set(rt.registry.names())
    assert "FetchURL" in names and "WebSearch" not in names
    assert not [d for d in rt.diagnostics if d.source == "[web.search]"]


@pytest.mark.parametrize(
    ("search", "said"),
    [
        ({"provider": "brave"}, "set the environment variable BRAVE_API_KEY"),
        ({"provider": "tavily", "api_key_env": "MY_TAVILY"},
         "set the environment variable MY_TAVILY"),
        ({"provider": "searxng"}, "needs its address: set [web.search] base_url"),
        ({"provider": "bing"}, 'there is no built-in search provider named "bing"'),
    ],
)  # fmt: skip
async def test_a_provider_that_cannot_work_leaves_the_tool_out_and_says_why(
    web_runtime: Any, search: dict[str, Any], said: str
) -> None:
    rt = await web_runtime({"search": search}, environ={})
    assert "WebSearch" not in rt.registry.names()
    [diagnostic] = [d for d in rt.diagnostics if d.source == "[web.search]"]
    assert said in diagnostic.message


async def test_the_key_comes_from_the_variable_named(web_runtime: Any, api: WebServer) -> None:
    rt = await web_runtime(
        {"search": {"provider": "brave", "base_url": api.url("/brave"), "api_key_env": "K2"}},
        environ={"K2": "second-key"},
    )
    await rt.call("WebSearch", {"query": "fox"})
    assert api.requests[0].headers["x-subscription-token"] == "second-key"


async def test_a_person_may_allow_every_search_for_the_session(
    web_runtime: Any, api: WebServer
) -> None:
    asked: list[ApprovalRequest] = []

    class Approver:
        async def request(self, request: ApprovalRequest) -> ApprovalResponse:
            asked.append(request)
            return ApprovalResponse("approve_session", rule="WebSearch")

    rt = await web_runtime(
        {"search": {"provider": "moonshot", "base_url": api.url("/moonshot")}},
        environ=KEYS,
        mode="manual",
        approve_asks=False,
        approver=Approver(),
    )
    assert not (await rt.call("WebSearch", {"query": "first"})).is_error
    assert not (await rt.call("WebSearch", {"query": "second"})).is_error
    [request] = asked
    assert request.approval_rule == "WebSearch(first)"
    assert "WebSearch" in request.session_choices


PLUGIN = """
from deftly.features.web import ProviderSettings, SearchResult


class Echo:
    name = "echo"

    def __init__(self, settings: ProviderSettings) -> None:
        self.prefix = settings.options.get("prefix", "")

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        return [SearchResult(self.prefix + query, "https://echo.test/" + query, "echoed")]
"""


async def test_a_plugin_provider_comes_from_the_entry_point_group(
    web_runtime: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "plugin"
    (root / "echo_search_plugin").mkdir(parents=True)
    (root / "echo_search_plugin" / "__init__.py").write_text(PLUGIN)
    dist = root / "echo_search_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: echo-search-plugin\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text("[deftly.web_search]\necho = echo_search_plugin:Echo\n")
    monkeypatch.syspath_prepend(str(root))
    try:
        rt = await web_runtime(
            {"search": {"provider": "echo", "options": {"prefix": "> "}}}, plugins=True
        )
        result = await rt.call("WebSearch", {"query": "hello"})
        assert result.text.startswith("Title: > hello\nURL: https://echo.test/hello\n")
        off = await web_runtime({"search": {"provider": "echo"}}, plugins=False)
        assert "WebSearch" not in off.registry.names()
    finally:
        sys.modules.pop("echo_search_plugin", None)


async def test_a_cancelled_search_ends_at_once(web_runtime: Any, api: WebServer) -> None:
    started = api.finished.setdefault("/slow started", threading.Event())
    rt = await searching(web_runtime, "moonshot", api.url("/slow"), timeout=120)
    token = CancelToken()
    batch = asyncio.create_task(
        rt.run_batch([ToolCall("c1", "WebSearch", {"query": "fox"})], cancel=token)
    )
    assert await asyncio.to_thread(started.wait, 30)
    token.cancel("stop", by_user=True)
    [result] = await asyncio.wait_for(batch, 30)
    assert (result.is_error, result.text) == (True, "The search was cancelled before it finished.")
