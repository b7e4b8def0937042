"""HTML to readable Markdown: the page's main content, links kept (trafilatura, imported
on first use).

trafilatura is a maintained extractor built for exactly this: it finds the main text
(boilerplate such as navigation, footers and cookie banners left out), writes Markdown
with headings, lists, tables and links, resolves relative links against the page's URL,
and reads the title from the page's metadata. When it finds no main text, the page's whole
text is the fallback.
"""

from __future__ import annotations

import re

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


class NoReadableText(Exception):
    """The page has no text to show (it may be built by JavaScript)."""


def html_to_markdown(html: str, url: str) -> tuple[str, str | None]:
    """The main content of `html` as Markdown, and the page's title (or None)."""
    import trafilatura

    text = trafilatura.extract(
        html,
        url=url,
        output_format="markdown",
        include_links=True,
        include_formatting=True,
        include_tables=True,
        include_images=False,
        include_comments=False,
        favor_recall=True,
    )
    if not text or not text.strip():
        text = trafilatura.html2txt(html)
    if not text or not text.strip():
        raise NoReadableText(
            "The page has no readable text: it may be built by JavaScript in a browser, or "
            "be empty. Look for another source of the same content (an API, a raw or "
            "printable version)."
        )
    return text.strip(), _title(html)


def _title(html: str) -> str | None:
    import trafilatura

    try:
        meta = trafilatura.extract_metadata(html)
    except Exception:
        meta = None
    title = getattr(meta, "title", None) if meta is not None else None
    if not title:
        found = _TITLE.search(html)
        title = found.group(1) if found else None
    if not title:
        return None
    return " ".join(title.split()) or None
