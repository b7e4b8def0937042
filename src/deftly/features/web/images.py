"""Images from the web for a model that can see: sent as they are when they fit, else
downscaled (Pillow, imported on first use), as ReadMediaFile does for files."""

from __future__ import annotations

import io

from deftly.contract.result import ImagePart

SENT_AS_IS = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_EDGE = 2_000
"""The longest side sent; a larger image is downscaled to it."""
MAX_BYTES = 3_750_000
"""The most image bytes sent (5 MB once base64-encoded, what providers accept)."""
MAX_PIXELS = 100_000_000
"""A larger image is refused before it is decoded (a small file can claim billions)."""


class UnusableImage(Exception):
    """The image cannot be shown; the message says why."""


def prepare_image(data: bytes, media_type: str) -> tuple[ImagePart, str]:
    """The image as a content part, and a line saying what it is (type, size in pixels,
    downscaled or not)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as probe:
            width, height = probe.size
            mime = Image.MIME.get(probe.format or "", media_type)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise UnusableImage(f"The {media_type} image cannot be decoded ({exc}).") from None
    if width * height > MAX_PIXELS:
        raise UnusableImage(f"The image is {width}×{height} pixels, too large to decode.")
    size = f"{width}×{height} pixels"
    if mime in SENT_AS_IS and len(data) <= MAX_BYTES and max(width, height) <= MAX_EDGE:
        return ImagePart.from_bytes(data, mime), f"{mime}, {size}"
    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail((MAX_EDGE, MAX_EDGE))
        lossless = mime in {"image/png", "image/gif"} or image.mode in {"RGBA", "LA", "P"}
        out = io.BytesIO()
        if lossless:
            image.save(out, format="PNG", optimize=True)
            sent = "image/png"
        if not lossless or out.tell() > MAX_BYTES:
            out = io.BytesIO()
            image.convert("RGB").save(out, format="JPEG", quality=80)
            sent = "image/jpeg"
        shown = f"{image.width}×{image.height}"
    if out.tell() > MAX_BYTES:
        raise UnusableImage(f"The image ({size}) stays too large to send even downscaled.")
    return ImagePart.from_bytes(out.getvalue(), sent), f"{mime}, {size}, sent downscaled to {shown}"
