"""ReadMediaFile: show a model an image (PNG, JPEG, GIF, WebP) as an image content part."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract import ImagePart, TextPart, ToolExecution, ToolResult, ToolTraits, describe
from deftly.features.files.base import FileToolFailed, SingleFileTool
from deftly.features.files.common import human_size
from deftly.features.files.encoding import SNIFF_BYTES
from deftly.features.files.filetype import detect_file_type
from deftly.features.files.media import (
    ACCEPTED_MIMES,
    ImageError,
    ImageInfo,
    Prepared,
    Region,
    inspect_image,
    prepare_image,
)


class RegionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    x: int = Field(ge=0, description="Left edge, in pixels of the original image.")
    y: int = Field(ge=0, description="Top edge, in pixels of the original image.")
    width: int = Field(ge=1, description="Width in pixels.")
    height: int = Field(ge=1, description="Height in pixels.")


class ReadMediaParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The image file: relative to the working directory, or absolute.")
    region: RegionParams | None = Field(
        None,
        description=(
            "Only this rectangle of the image, in the original image's pixels (as the note of "
            "an earlier call reports its size). Shown at full detail when it fits."
        ),
    )
    full_resolution: bool = Field(
        False,
        description="Send the image (or region) without downscaling, if it fits the limit.",
    )


class ReadMediaFileTool(SingleFileTool[ReadMediaParams]):
    """ReadMediaFile: an image (or a region of it, downscaled) as content the model sees."""

    name = "ReadMediaFile"
    title = "View an image or media file"
    params = ReadMediaParams
    description = describe("read_media.md")
    traits = ToolTraits(read_only=True, idempotent=True)
    action = "read"

    def description_vars(self) -> Mapping[str, object]:
        c = self.config
        return {
            "BUDGET": human_size(c.image_byte_budget),
            "MAX_EDGE": f"{c.image_max_edge:,}",
            "FULL_MAX": human_size(c.image_full_max_bytes),
            "MAX_BYTES": human_size(c.media_max_bytes),
        }

    def resolve(self, args: ReadMediaParams) -> ToolExecution:
        return self.file_execution(
            args.path, partial(self._read, args), f"Viewing {args.path}", detail="media"
        )

    def read(self, args: ReadMediaParams, path: Path) -> ToolResult:
        """Show the image at `path` (already resolved by the path policy), in this thread."""
        return self.run_work(args.path, path, partial(self._read, args))

    def _read(self, args: ReadMediaParams, path: Path) -> ToolResult:
        raw = args.path
        c = self.config
        st = self.regular_file(
            path,
            directory=f'"{raw}" is a directory. Use Glob to find images in it.',
            special=f'"{raw}" is not a regular file.',
        )
        with self.env.open_read(path, pinned=True) as handle:
            header = handle.read(SNIFF_BYTES)
            kind = detect_file_type(path, header, "media")
            self._check_kind(raw, path, kind.kind, kind.mime)
            if st.st_size == 0:
                raise FileToolFailed(f'"{raw}" is empty (0 bytes).')
            if st.st_size > c.media_max_bytes:
                raise FileToolFailed(
                    f'"{raw}" is {human_size(st.st_size)}, more than the '
                    f"{human_size(c.media_max_bytes)} ReadMediaFile opens. Make a smaller copy "
                    "with Bash first (e.g. ImageMagick: `magick in.png -resize 2000x2000 "
                    "small.jpg`)."
                )
            handle.seek(0)
            data = handle.read()
        region = (
            Region(args.region.x, args.region.y, args.region.width, args.region.height)
            if args.region is not None
            else None
        )
        try:
            info = inspect_image(data, kind.mime)
            prepared = prepare_image(
                data,
                info,
                budget=c.image_byte_budget,
                max_edge=c.image_max_edge,
                full_max_bytes=c.image_full_max_bytes,
                max_pixels=c.image_max_pixels,
                full_resolution=args.full_resolution,
                region=region,
            )
        except ImageError as exc:
            raise FileToolFailed(
                f'Cannot show "{raw}": {exc}. Nothing was sent. Do not retry unchanged: make '
                "a smaller copy or crop with Bash (e.g. ImageMagick `magick`) and read that."
            ) from None
        note = self._note(raw, len(data), info, prepared)
        return ToolResult.ok(
            [TextPart(f"Image: {raw}"), ImagePart.from_bytes(prepared.data, prepared.mime)],
            note=note,
        )

    def _check_kind(self, raw: str, path: Path, kind: str, mime: str) -> None:
        if kind == "text":
            raise FileToolFailed(f'"{raw}" is a text file. Use Read to read it.')
        if kind == "video":
            raise FileToolFailed(
                f'"{raw}" is a video ({mime}); only images can be shown. Extract frames with '
                f'Bash, e.g. `ffmpeg -i "{raw}" -vf fps=1 frame_%03d.png`, and read those.'
            )
        if kind != "image":
            raise FileToolFailed(
                f'"{raw}" is not an image deftly recognises (PNG, JPEG, GIF or WebP). Use Read '
                "for text files; for other formats (PDF, archives...) use a converter through "
                "Bash."
            )
        if mime not in ACCEPTED_MIMES:
            target = path.with_suffix(".png").name
            raise FileToolFailed(
                f'"{raw}" is a {mime} image; models accept only PNG, JPEG, GIF and WebP. '
                f'Convert it with Bash, then read the copy: with ImageMagick `magick "{raw}" '
                f'"{target}"`; on macOS `sips -s format png "{raw}" --out "{target}"`'
                + (
                    f'; for HEIC/HEIF `heif-convert "{raw}" "{path.with_suffix(".jpg").name}"`'
                    if mime in ("image/heic", "image/heif")
                    else ""
                )
                + "."
            )

    def _note(self, raw: str, size: int, info: ImageInfo, prepared: Prepared) -> str:
        c = self.config
        parts = [
            f"Image {raw}: {info.mime}, {size:,} bytes, {info.width}x{info.height} pixels"
            + (f", {info.frames} frames" if info.frames > 1 else "")
            + "."
        ]
        first_frame = " (its first frame)" if info.frames > 1 else ""
        if prepared.delivery == "as_is":
            parts.append("Sent as is, at full resolution.")
        elif prepared.delivery == "full":
            parts.append("Sent at full resolution, as requested.")
        elif prepared.delivery == "downscaled":
            parts.append(
                f"Sent downscaled{first_frame} to {prepared.width}x{prepared.height} pixels "
                f"({prepared.mime}, {len(prepared.data):,} bytes) to fit the "
                f"{human_size(c.image_byte_budget)} / {c.image_max_edge:,}-pixel limits; fine "
                "detail may be lost. To see detail, call again with region (a rectangle in the "
                "original's pixels) or full_resolution."
            )
        else:
            assert prepared.region is not None
            region = prepared.region
            size_text = (
                f", downscaled to {prepared.width}x{prepared.height} pixels"
                if prepared.resized
                else " at full resolution"
            )
            parts.append(
                f"Showing only the region {region.text()}{first_frame}{size_text}. A point at "
                f"(a, b) in this crop is at (a + {region.x}, b + {region.y}) in the original"
                + (" (scale it up first)." if prepared.resized else ".")
            )
        parts.append(
            "To give coordinates, work them out against the original size above. If you change "
            "the image with a command, read it again before relying on it."
        )
        return "<system>" + " ".join(parts) + "</system>"
