"""FetchURL through the runtime against the loopback site: each content type, the
citation line first, paging, and how the call is resolved and shown."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from PIL import Image

from deftly.contract.accesses import Accesses
from deftly.contract.display import UrlFetchDisplay
from deftly.contract.result import ImagePart, TextPart
from deftly.execution.calls import ToolCall
from deftly.execution.events import ToolCallStarted
from tests.web.server import WebServer
from tests.web.site import DATA, FOX, LONG, MARKDOWN, PLAIN

VERBATIM = "The returned content is the full response body, returned verbatim."
EXTRACTED = "The returned content is the main text extracted from the page, as Markdown."


def cite(title: str, url: str) -> str:
    return (
        f"If you use it in your answer, cite this page as a markdown link, e.g. [{title}]({url})."
    )


async def fetch(runtime: Any, url: str, **args: Any) -> Any:
    return await runtime.call("FetchURL", {"url": url, **args})


async def test_an_article_becomes_its_main_text_in_markdown_with_links(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime()
    url = site.url("/article")
    result = await fetch(rt, url)
    assert not result.is_error
    text = result.text
    assert text.startswith(f"{EXTRACTED} {cite('Fox Facts', url)}\n\n# Fox Facts\n")
    assert FOX in text
    assert "## Diet" in text and "- berries and fruit" in text
    assert "[the encyclopedia entry](https://example.org/foxes)" in text
    assert f"[the guide to dens]({site.url('/guide/dens')})" in text  # resolved
    assert "Cookie settings" not in text and "About us" not in text  # boilerplate left out


async def test_a_compressed_page_is_decoded(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/article.gz"))
    assert not result.is_error
    assert FOX in result.text


async def test_plain_text_markdown_and_json_come_back_verbatim(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime()
    for path, body in [
        ("/plain", PLAIN),
        ("/notes.md", MARKDOWN),
        ("/data.json", json.dumps(DATA)),
    ]:
        url = site.url(path)
        result = await fetch(rt, url)
        assert (result.is_error, result.text) == (
            False,
            f"{VERBATIM} {cite('title', url)}\n\n{body}",
        )


async def test_the_declared_charset_is_used(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/latin1"))
    assert result.text.endswith("\n\ncafé")


async def test_a_pdf_becomes_its_text_with_its_title(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    for path in ("/doc.pdf", "/untyped.pdf"):  # the second one has no Content-Type
        url = site.url(path)
        result = await fetch(rt, url)
        assert not result.is_error, result.text
        assert result.text.startswith(
            "The returned content is the text of a PDF document (1 page(s)), without its "
            f"layout. {cite('A Test Document', url)}\n\n[page 1]\n"
        )
        assert "Hello from the PDF world" in result.text


async def test_an_image_is_image_content(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    url = site.url("/image.png")
    result = await fetch(rt, url)
    assert not result.is_error
    text, image = result.output
    assert isinstance(text, TextPart) and isinstance(image, ImagePart)
    assert text.text.startswith(f"An image from {url}: image/png, 64×48 pixels.")
    assert image.mime_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (64, 48)


async def test_a_large_image_is_downscaled(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/wide.png"))
    text, image = result.output
    assert "4000×1000 pixels, sent downscaled to 2000×500" in text.text
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (2000, 500)


async def test_a_wrong_content_type_is_refused_with_what_it_was(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/archive.zip"))
    assert result.is_error
    assert result.text.startswith(
        f"FetchURL cannot read application/zip (204 bytes from {site.url('/archive.zip')})"
    )


async def test_unreadable_bodies_say_why(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    script = await fetch(rt, site.url("/script-only"))
    assert script.is_error and "JavaScript" in script.text
    broken = await fetch(rt, site.url("/broken.pdf"))
    assert broken.is_error and broken.text.startswith("The PDF cannot be read")


async def test_an_empty_body_is_not_an_error(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    result = await fetch(rt, site.url("/empty"))
    assert (result.is_error, result.text) == (
        False,
        f"The response body is empty (HTTP 200, {site.url('/empty')}).",
    )


async def test_http_errors_are_tool_errors(web_runtime: Any, site: WebServer) -> None:
    rt = await web_runtime()
    missing = await fetch(rt, site.url("/missing"))
    assert missing.is_error
    assert missing.text.startswith(f"Failed to fetch {site.url('/missing')}: HTTP 404 Not Found.")
    failing = await fetch(rt, site.url("/error"))
    assert failing.is_error and "HTTP 500" in failing.text


async def test_a_long_document_comes_in_pages_read_from_the_kept_copy(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime({"page_chars": 50_000})
    url = site.url("/long.txt")
    first = await fetch(rt, url, max_chars=40_000)
    text = first.text
    head = f"{VERBATIM} {cite('title', url)}\n\n"
    assert text.startswith(head)
    body, _, foot = text[len(head) :].rpartition("\n[")
    foot = "[" + foot
    assert LONG.startswith(body) and body.endswith("\n")  # cut at a line break
    end = len(body)
    assert 32_000 <= end <= 40_000
    assert foot == (
        f"[Characters 0–{end:,} of {len(LONG):,}. To read on, call FetchURL with the same url "
        f"and start={end}.]"
    )
    requests = len(site.requests)
    bodies = [body]
    while "the end of the document" not in foot:
        page = await fetch(rt, url, start=end)
        assert page.text.startswith(head)
        body, _, foot = page.text[len(head) :].rpartition("\n[")
        foot = "[" + foot
        assert foot.startswith(f"[Characters {end:,}–")
        bodies.append(body)
        end += len(body)
    assert len(site.requests) == requests  # paged from the kept copy
    assert "".join(bodies) == LONG
    assert len(bodies) == 4  # 40,000 characters, then pages of 49,000 (the budget's)
    past = await fetch(rt, url, start=len(LONG) + 5)
    assert past.is_error and "past the end" in past.text


async def test_the_page_size_is_held_to_the_output_budget(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime({"page_chars": 100_000}, config={"output": {"max_chars": 20_000}})
    result = await fetch(rt, site.url("/long.txt"), max_chars=100_000)
    assert len(result.text) <= 20_000
    assert "To read on" in result.text
    assert not result.truncated


async def test_the_call_is_shown_as_a_url_fetch_and_touches_no_file(
    web_runtime: Any, site: WebServer
) -> None:
    rt = await web_runtime()
    started: list[ToolCallStarted] = []
    rt.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
    url = site.url("/plain")
    [result] = await rt.run_batch([ToolCall("c1", "FetchURL", {"url": url})])
    assert not result.is_error
    [event] = started
    assert event.display == UrlFetchDisplay(url=url, method="GET")
    entry = rt.registry.get("FetchURL")
    assert entry is not None
    execution = entry.tool.resolve(entry.tool.parse_args({"url": url}))
    assert execution.accesses == Accesses.none()
    assert execution.approval_rule == "FetchURL(domain:127.0.0.1)"
