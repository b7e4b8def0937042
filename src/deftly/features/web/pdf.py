"""PDF to text (pypdf, imported on first use): each page's text under a page marker.

pypdf is pure Python (no system library to install), maintained, and reads the text
layer of ordinary PDFs; a scanned document without one has no text to give.
"""

from __future__ import annotations

import io


class UnreadablePdf(Exception):
    """The PDF has no text to give (encrypted, broken, or scanned images only)."""


def pdf_to_text(data: bytes) -> tuple[str, str | None, int]:
    """The document's text, its title (or None) and its page count."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        locked = reader.is_encrypted and not reader.decrypt("")
        pages = [] if locked else [page.extract_text() or "" for page in reader.pages]
        title = None if locked or reader.metadata is None else reader.metadata.title
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise UnreadablePdf(f"The PDF cannot be read ({exc}).") from None
    if locked:
        raise UnreadablePdf("The PDF is encrypted with a password, so its text cannot be read.")
    if not any(text.strip() for text in pages):
        raise UnreadablePdf(
            f"The PDF has {len(pages)} page(s) but no text layer (it may be scanned images)."
        )
    parts = [f"[page {number}]\n{text.strip()}" for number, text in enumerate(pages, 1)]
    shown = " ".join(str(title).split()) if title else None
    return "\n\n".join(parts), shown or None, len(pages)
