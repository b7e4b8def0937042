"""Images for a model: sent as they are when they fit, else downscaled or cropped (Pillow).

Everything happens in memory on bytes the tool read through its environment. An image
is decoded only when it must change, and only after its header says its pixel count is
sane (a small file can claim billions of pixels).
"""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING, Literal

from deftly.contract.records import frozen

if TYPE_CHECKING:
    from PIL import Image

# Pillow is imported by the functions that decode or encode: on the first image a tool
# prepares, not when the file tools are imported.

ACCEPTED_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_LOSSLESS = frozenset({"image/png", "image/gif", "image/webp"})
_JPEG_QUALITIES = (85, 70, 55, 40)
_SHRINK = 0.75
_MIN_EDGE = 256

Delivery = Literal["as_is", "downscaled", "cropped", "full"]


class ImageError(Exception):
    """The image cannot be prepared; the message says why (for the model)."""


@frozen
class ImageInfo:
    """An image's type and size in pixels."""

    mime: str
    width: int
    height: int
    """Display size: width and height after the EXIF orientation is applied."""
    frames: int


@frozen
class Region:
    """A rectangle of an image, in pixels."""

    x: int
    y: int
    width: int
    height: int

    def text(self) -> str:
        """The region as the model passes it back (x, y, width, height)."""
        return f"x={self.x}, y={self.y}, width={self.width}, height={self.height}"


@frozen
class Prepared:
    """An image ready to send: its bytes, type and final size."""

    data: bytes
    mime: str
    width: int
    height: int
    delivery: Delivery
    region: Region | None = None
    resized: bool = False


def _open(data: bytes) -> Image.Image:
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Image.open(io.BytesIO(data))


def inspect_image(data: bytes, mime: str) -> ImageInfo:
    """Size and frame count from the header (no full decode)."""
    try:
        image = _open(data)
        width, height = image.size
        frames = getattr(image, "n_frames", 1)
        orientation = image.getexif().get(0x0112, 1) if mime == "image/jpeg" else 1
    except Exception as exc:
        raise ImageError(f"it cannot be decoded as {mime} ({exc})") from None
    if orientation in (5, 6, 7, 8):
        width, height = height, width
    return ImageInfo(mime, width, height, int(frames))


def _decode(data: bytes, max_pixels: int) -> Image.Image:
    image = _open(data)
    if image.width * image.height > max_pixels:
        raise ImageError(
            f"it has {image.width * image.height:,} pixels, more than the {max_pixels:,} "
            "deftly decodes"
        )
    try:
        image.seek(0)
        image.load()
    except Exception as exc:
        raise ImageError(f"it cannot be decoded ({exc})") from None
    from PIL import ImageOps

    return ImageOps.exif_transpose(image) or image


def _encode(image: Image.Image, mime: str, quality: int = 90) -> bytes:
    buffer = io.BytesIO()
    if mime == "image/png":
        if image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
            image = image.convert("RGBA")
        image.save(buffer, "PNG", optimize=True)
    else:
        if image.mode in ("RGBA", "LA", "P", "PA"):
            from PIL import Image

            rgba = image.convert("RGBA")
            background = Image.new("RGB", rgba.size, (255, 255, 255))
            background.paste(rgba, mask=rgba.getchannel("A"))
            image = background
        elif image.mode != "RGB":
            image = image.convert("RGB")
        image.save(buffer, "JPEG", quality=quality, optimize=True)
    return buffer.getvalue()


def _fit(image: Image.Image, edge: int) -> Image.Image:
    longest = max(image.width, image.height)
    if longest <= edge:
        return image
    scale = edge / longest
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    if image.mode == "P":
        image = image.convert("RGBA")
    from PIL import Image

    return image.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)


def _squeeze(image: Image.Image, mime: str, budget: int) -> tuple[bytes, str, Image.Image]:
    """Encode within `budget` bytes: PNG for lossless sources, then JPEG, then smaller."""
    current = image
    while True:
        if mime in _LOSSLESS:
            data = _encode(current, "image/png")
            if len(data) <= budget:
                return data, "image/png", current
        for quality in _JPEG_QUALITIES:
            data = _encode(current, "image/jpeg", quality)
            if len(data) <= budget:
                return data, "image/jpeg", current
        longest = max(current.width, current.height)
        if longest <= _MIN_EDGE:
            raise ImageError(
                f"even at {current.width}x{current.height} pixels it needs {len(data):,} bytes, "
                f"more than the {budget:,}-byte limit"
            )
        current = _fit(current, max(_MIN_EDGE, int(longest * _SHRINK)))


def prepare_image(
    data: bytes,
    info: ImageInfo,
    *,
    budget: int,
    max_edge: int,
    full_max_bytes: int,
    max_pixels: int,
    full_resolution: bool = False,
    region: Region | None = None,
) -> Prepared:
    """The bytes to send: as is, downscaled, cropped or at full resolution."""
    if region is not None:
        return _crop(data, info, region, max_edge, full_max_bytes, max_pixels, full_resolution)
    if full_resolution:
        if len(data) > full_max_bytes:
            raise ImageError(
                f"at full resolution it is {len(data):,} bytes, over the {full_max_bytes:,}-byte "
                "limit for one image; use region to look at a part of it at full resolution"
            )
        return Prepared(data, info.mime, info.width, info.height, "full")
    if len(data) <= budget and max(info.width, info.height) <= max_edge:
        return Prepared(data, info.mime, info.width, info.height, "as_is")
    image = _fit(_decode(data, max_pixels), max_edge)
    encoded, mime, final = _squeeze(image, info.mime, budget)
    return Prepared(encoded, mime, final.width, final.height, "downscaled", resized=True)


def _crop(
    data: bytes,
    info: ImageInfo,
    region: Region,
    max_edge: int,
    full_max_bytes: int,
    max_pixels: int,
    full_resolution: bool,
) -> Prepared:
    if region.x >= info.width or region.y >= info.height:
        raise ImageError(
            f"the region ({region.text()}) starts outside the image, which is "
            f"{info.width}x{info.height} pixels; x must be below {info.width} and y below "
            f"{info.height}"
        )
    width = min(region.width, info.width - region.x)
    height = min(region.height, info.height - region.y)
    clamped = Region(region.x, region.y, width, height)
    image = _decode(data, max_pixels)
    if getattr(image, "n_frames", 1) > 1:
        image = image.convert("RGBA")
    piece = image.crop((clamped.x, clamped.y, clamped.x + width, clamped.y + height))
    if full_resolution:
        mime = "image/png" if info.mime in _LOSSLESS else "image/jpeg"
        encoded = _encode(piece, mime)
        if len(encoded) > full_max_bytes:
            raise ImageError(
                f"the region encodes to {len(encoded):,} bytes at full resolution, over the "
                f"{full_max_bytes:,}-byte limit; choose a smaller region, or leave "
                "full_resolution off to allow downscaling"
            )
        return Prepared(encoded, mime, width, height, "cropped", clamped)
    fitted = _fit(piece, max_edge)
    encoded, mime, final = _squeeze(fitted, info.mime, full_max_bytes)
    resized = (final.width, final.height) != (width, height)
    return Prepared(encoded, mime, final.width, final.height, "cropped", clamped, resized)
