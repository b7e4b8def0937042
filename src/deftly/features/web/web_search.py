"""WebSearch: a web search through the configured provider; results with title, URL and
snippet (site, date and page content when the provider gives them), and the reminder to
cite them."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import SearchDisplay
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.execution.result_builder import ResultBuilder
from deftly.features.web.cancel import until_cancelled
from deftly.features.web.config import SearchConfig
from deftly.features.web.search_providers import SearchError, SearchResult, WebSearchProvider
from deftly.policy.rules import glob_rule_matcher, literal_rule

CITE = (
    "When you rely on a result in your answer, cite it inline as a markdown link, e.g. "
    "[title](url)."
)
MAX_QUERY = 500
MAX_CHARS = 50_000
"""The longest result; the citation reminder always comes after the results kept."""


@frozen
class SearchEngine:
    """The session's configured provider and its settings (offered only when one works)."""

    provider: WebSearchProvider
    config: SearchConfig


class WebSearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY, description="What to search for.")
    max_results: int | None = Field(
        None,
        ge=1,
        description="How many results at most (default and upper limit: the configured maximum).",
    )


def format_result(result: SearchResult, content_chars: int) -> str:
    """One result as the model reads it."""
    lines = [f"Title: {result.title}"]
    if result.site:
        lines.append(f"Site: {result.site}")
    if result.date:
        lines.append(f"Date: {result.date}")
    lines += [f"URL: {result.url}", f"Snippet: {result.snippet}"]
    if result.content:
        content = result.content.strip()
        cut = len(content) > content_chars
        lines.append("Content:\n" + content[:content_chars] + (" [...]" if cut else ""))
    return "\n".join(lines) + "\n\n"


class WebSearchTool(Tool[WebSearchParams]):
    """Searches the web. Not read-only for the permission engine: the query goes to a
    third party, so manual mode asks (a person may allow every search for the session)."""

    name = "WebSearch"
    title = "Search the web"
    description = describe("web_search.md")
    params = WebSearchParams
    traits = ToolTraits(open_world=True, idempotent=True)

    def __init__(self, engine: SearchEngine) -> None:
        self.engine = engine

    def description_vars(self) -> Mapping[str, object]:
        """The result limit the tool keeps."""
        return {"MAX_RESULTS": self.engine.config.max_results}

    def resolve(self, args: WebSearchParams) -> ToolExecution | ToolResult:
        """A blank query is refused; the call touches no file."""
        query = " ".join(args.query.split())
        if not query:
            return ToolResult.error("The query is blank: say what to search for.")
        limit = min(
            args.max_results or self.engine.config.max_results, self.engine.config.max_results
        )

        async def execute(ctx: ToolContext) -> ToolResult:
            return await until_cancelled(self._search(query, limit), ctx.cancel, "The search")

        return ToolExecution(
            accesses=Accesses.none(),
            description=f"Searching: {query if len(query) <= 60 else query[:59] + '…'}",
            display=SearchDisplay(query=query, scope=self.engine.provider.name),
            approval_rule=literal_rule(self.name, query),
            matches_rule=glob_rule_matcher(query),
            session_rules=lambda: [self.name],
            execute=execute,
        )

    async def _search(self, query: str, limit: int) -> ToolResult:
        provider = self.engine.provider
        try:
            results = await provider.search(query, limit=limit)
        except SearchError as exc:
            return ToolResult.error(f"Search failed ({exc.kind}): {exc}")
        except TimeoutError as exc:
            return ToolResult.error(f"Search timed out: {exc or 'no answer in time'}")
        if not results:
            return ToolResult.ok(
                "No search results found. Try other words, fewer of them, or a broader query."
            )
        builder = ResultBuilder(max_chars=MAX_CHARS - len(CITE) - 200, max_line_length=None)
        chars = self.engine.config.content_chars
        builder.write("---\n\n".join(format_result(r, chars) for r in results[:limit]))
        found = builder.ok()
        sep = "" if found.text.endswith("\n") else "\n"
        return found.with_(output=f"{found.text}{sep}{CITE}")
