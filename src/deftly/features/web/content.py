"""What a fetched body becomes, by its type: HTML to Markdown, text and JSON as they are,
PDF to text, images as image content; anything else is refused, saying what it was.

A body without a usable Content-Type (none, or `application/octet-stream`) is recognised
by its first bytes.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from deftly.contract.records import frozen
from deftly.contract.result import ImagePart
from deftly.features.web.fetcher import Fetched
from deftly.features.web.html import NoReadableText, html_to_markdown
from deftly.features.web.images import UnusableImage, prepare_image
from deftly.features.web.pdf import UnreadablePdf, pdf_to_text

Kind: TypeAlias = Literal["extracted", "verbatim", "pdf"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/javascript",
        "application/x-javascript",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
    }
)
UNTYPED = frozenset({"", "application/octet-stream", "binary/octet-stream"})
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class Unreadable(Exception):
    """The body cannot be shown to the model; the message says why and what to do."""


@frozen
class Document:
    """Text for the model, with what kind of text it is."""

    kind: Kind
    text: str
    title: str | None = None
    pages: int | None = None

    @property
    def what(self) -> str:
        """The sentence telling the model what the text is."""
        if self.kind == "extracted":
            return "The returned content is the main text extracted from the page, as Markdown."
        if self.kind == "pdf":
            return (
                f"The returned content is the text of a PDF document ({self.pages} page(s)), "
                "without its layout."
            )
        return "The returned content is the full response body, returned verbatim."


@frozen
class Picture:
    """An image for the model, with a line saying what it is."""

    image: ImagePart
    summary: str


def sniff(body: bytes) -> str:
    """The media type of a body without one, from its first bytes ("" when unknown)."""
    head = body[:512]
    for magic, media_type in _IMAGE_MAGIC:
        if head.startswith(magic):
            return media_type
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # not just a character cut at the end
                return ""
        return "text/plain"
    return ""


def decode(body: bytes, charset: str | None) -> str:
    """The body as text: its declared charset, else UTF-8 (a BOM dropped); bad bytes are
    replaced, never fatal."""
    if body.startswith(b"\xef\xbb\xbf"):
        return body[3:].decode("utf-8", "replace")
    try:
        return body.decode(charset or "utf-8", "replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", "replace")


def is_text_type(media_type: str) -> bool:
    """Whether a media type is text FetchURL returns as it is."""
    return (
        (media_type.startswith("text/") and media_type not in HTML_TYPES)
        or media_type in TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


def read_body(fetched: Fetched) -> Document | Picture:
    """Turn a fetched body into text or an image (CPU work: call it in a thread)."""
    media_type = fetched.media_type
    if media_type in UNTYPED:
        media_type = sniff(fetched.body) or media_type
    try:
        if media_type in HTML_TYPES:
            text, title = html_to_markdown(decode(fetched.body, fetched.charset), fetched.url)
            return Document("extracted", text, title)
        if media_type == "application/pdf":
            text, title, pages = pdf_to_text(fetched.body)
            return Document("pdf", text, title, pages)
        if media_type.startswith("image/") and not media_type.endswith("+xml"):
            image, summary = prepare_image(fetched.body, media_type)
            return Picture(image, summary)
        if is_text_type(media_type):
            return Document("verbatim", decode(fetched.body, fetched.charset))
    except (NoReadableText, UnreadablePdf, UnusableImage) as exc:
        raise Unreadable(f"{exc} (from {fetched.url})") from None
    shown = media_type or "content of an unknown type"
    raise Unreadable(
        f"FetchURL cannot read {shown} ({len(fetched.body):,} bytes from {fetched.url}): it "
        "reads web pages, text, Markdown, JSON, PDF and images. Look for a page about the "
        "file instead, or download it with a shell command if that is allowed."
    )
