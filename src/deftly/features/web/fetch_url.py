"""FetchURL: one web page (or text, JSON, PDF, image) for the model, within the `[web]`
limits, through the address guard, in pages when it is long."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from deftly.config.output import OutputConfig
from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import UrlFetchDisplay
from deftly.contract.result import TextPart, ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.execution.result_builder import ResultBuilder
from deftly.features.web.cancel import until_cancelled
from deftly.features.web.config import WebConfig
from deftly.features.web.content import Document, Picture, Unreadable, read_body
from deftly.features.web.domains import domain_rule, url_rule_matcher
from deftly.features.web.fetcher import Fetcher, FetchFailed
from deftly.features.web.guard import FetchRefused
from deftly.features.web.pages import PageCache, footer, page_end

MIN_PAGE = 1_000
PAGE_MARGIN = 1_000
"""Room left in the output budget for the lines around a page."""


class FetchURLParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, description="The http:// or https:// URL to fetch.")
    start: int = Field(
        0,
        ge=0,
        description="Character offset to start at, to read on in a long document (the "
        "previous result says which).",
    )
    max_chars: int | None = Field(
        None,
        ge=MIN_PAGE,
        description="Most characters to return in this call (default and upper limit: the "
        "page size).",
    )


def citation(title: str | None, url: str) -> str:
    """The reminder to cite the page, with a ready link."""
    shown = (title or "title").replace("[", "(").replace("]", ")")
    return (
        f"If you use it in your answer, cite this page as a markdown link, e.g. [{shown}]({url})."
    )


class FetchURLTool(Tool[FetchURLParams]):
    """Fetches a URL. Not read-only for the permission engine: a request carries what its URL
    says off the machine, so manual mode asks, by domain."""

    name = "FetchURL"
    title = "Fetch a web page"
    description = describe("fetch_url.md")
    params = FetchURLParams
    traits = ToolTraits(open_world=True, idempotent=True)

    def __init__(
        self, config: WebConfig, fetcher: Fetcher, cache: PageCache, output: OutputConfig
    ) -> None:
        self.config = config
        self.fetcher = fetcher
        self.cache = cache
        self.page_chars = max(min(config.page_chars, output.max_chars - PAGE_MARGIN), MIN_PAGE)

    def description_vars(self) -> Mapping[str, object]:
        """The limits the tool enforces."""
        c = self.config
        return {
            "MAX_MB": f"{c.max_bytes / (1024 * 1024):g}",
            "TIMEOUT": f"{c.timeout:g}",
            "MAX_REDIRECTS": c.max_redirects,
            "PAGE_CHARS": f"{self.page_chars:,}",
        }

    def resolve(self, args: FetchURLParams) -> ToolExecution | ToolResult:
        """What needs no I/O is refused here: a bad URL, a local name, a private literal."""
        try:
            parsed = self.fetcher.guard.precheck(args.url)
        except FetchRefused as exc:
            return ToolResult.error(str(exc))
        url = parsed.url

        async def execute(ctx: ToolContext) -> ToolResult:
            return await until_cancelled(self._fetch(url, args), ctx.cancel, f"Fetching {url}")

        return ToolExecution(
            accesses=Accesses.none(),
            description=f"Fetching {url if len(url) <= 80 else url[:79] + '…'}",
            display=UrlFetchDisplay(url=url, method="GET"),
            approval_rule=domain_rule(self.name, parsed.host),
            matches_rule=url_rule_matcher(url, parsed.host),
            execute=execute,
        )

    async def _fetch(self, url: str, args: FetchURLParams) -> ToolResult:
        size = min(args.max_chars or self.page_chars, self.page_chars)
        if args.start > 0:
            kept = self.cache.get(url)
            if kept is not None:
                return self._page(url, kept.url, kept.document, args.start, size)
        try:
            fetched = await self.fetcher.fetch(url)
        except (FetchRefused, FetchFailed) as exc:
            return ToolResult.error(str(exc))
        if fetched.moved_to is not None:
            return ToolResult.ok(
                f"{fetched.url} redirects to another host: {fetched.moved_to}. The redirect was "
                "not followed; to read that page, call FetchURL with that URL."
            )
        if not fetched.body:
            return ToolResult.ok(
                f"The response body is empty (HTTP {fetched.status}, {fetched.url})."
            )
        try:
            content = await asyncio.to_thread(read_body, fetched)
        except Unreadable as exc:
            return ToolResult.error(str(exc))
        if isinstance(content, Picture):
            text = f"An image from {fetched.url}: {content.summary}. {citation(None, fetched.url)}"
            return ToolResult.ok([TextPart(text), content.image])
        self.cache.put(url, fetched.url, content)
        return self._page(url, fetched.url, content, args.start, size)

    def _page(self, url: str, final: str, document: Document, start: int, size: int) -> ToolResult:
        text = document.text
        total = len(text)
        if start >= total:
            return ToolResult.error(
                f"start={start} is past the end: the document from {final} has {total:,} "
                "characters. Call again with a smaller start (0 for the beginning)."
            )
        end = page_end(text, start, size)
        moved = f"Fetched {final} (redirected from {url}). " if final != url else ""
        head = f"{moved}{document.what} {citation(document.title, final)}"
        tail = footer(start, end, total)
        builder = ResultBuilder(max_chars=len(head) + size + 400, max_line_length=None)
        builder.write(head + "\n\n")
        builder.write(text[start:end])
        if tail is not None:
            builder.write(("" if text[start:end].endswith("\n") else "\n") + "\n" + tail)
        return builder.ok().with_(spill_exempt=True)
