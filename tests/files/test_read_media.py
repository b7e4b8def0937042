"""ReadMediaFile with real images made by Pillow: as is, downscaled, cropped, refused."""

from __future__ import annotations

import base64
import io
import random
from pathlib import Path
from typing import Any

from PIL import Image

from deftly import Runtime
from deftly.contract import ImagePart, TextPart
from tests.files.helpers import call


def noise(width: int, height: int, seed: int = 1) -> Image.Image:
    rng = random.Random(seed)
    return Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))


def save(image: Image.Image, path: Path, fmt: str, **options: Any) -> Path:
    image.save(path, fmt, **options)
    return path


def sent_image(result: Any) -> tuple[Image.Image, ImagePart]:
    parts = result.result.output
    assert isinstance(parts, list) and isinstance(parts[0], TextPart)
    image_part = next(p for p in parts if isinstance(p, ImagePart))
    return Image.open(io.BytesIO(base64.b64decode(image_part.data))), image_part


async def test_small_images_are_sent_as_is(rt: Runtime, workspace: Path) -> None:
    path = save(Image.new("RGB", (64, 32), (200, 10, 10)), workspace / "small.png", "PNG")
    result = await call(rt, "ReadMediaFile", {"path": "small.png"})
    assert not result.is_error
    image, part = sent_image(result)
    assert part.mime_type == "image/png" and image.size == (64, 32)
    assert base64.b64decode(part.data) == path.read_bytes()
    note = result.note or ""
    assert "image/png" in note and "64x32 pixels" in note and "as is" in note


async def test_big_images_are_downscaled_to_the_budget(rt: Runtime, workspace: Path) -> None:
    save(noise(2200, 1100), workspace / "big.png", "PNG")
    result = await call(rt, "ReadMediaFile", {"path": "big.png"})
    assert not result.is_error
    image, part = sent_image(result)
    assert max(image.size) <= 2000 and len(base64.b64decode(part.data)) <= 256 * 1024
    note = result.note or ""
    assert "2200x1100" in note and "downscaled" in note and "region" in note


async def test_regions_are_cropped_in_original_pixels(rt: Runtime, workspace: Path) -> None:
    picture = Image.new("RGB", (2100, 2100), (0, 0, 255))
    picture.paste((255, 0, 0), (100, 50, 500, 350))
    save(picture, workspace / "scene.png", "PNG")
    result = await call(
        rt,
        "ReadMediaFile",
        {"path": "scene.png", "region": {"x": 100, "y": 50, "width": 400, "height": 300}},
    )
    assert not result.is_error
    image, _ = sent_image(result)
    assert image.size == (400, 300)
    assert image.convert("RGB").getpixel((200, 150)) == (255, 0, 0)
    note = result.note or ""
    assert "region x=100, y=50, width=400, height=300" in note and "full resolution" in note
    assert "a + 100" in note

    clamped = await call(
        rt,
        "ReadMediaFile",
        {"path": "scene.png", "region": {"x": 2000, "y": 2000, "width": 500, "height": 500}},
    )
    assert sent_image(clamped)[0].size == (100, 100)
    outside = await call(
        rt,
        "ReadMediaFile",
        {"path": "scene.png", "region": {"x": 5000, "y": 0, "width": 10, "height": 10}},
    )
    assert outside.is_error and "2100x2100" in outside.text


async def test_full_resolution(make_runtime: Any, workspace: Path) -> None:
    rt = await make_runtime(
        approve_asks=True, config={"files": {"image_full_max_bytes": 200 * 1024}}
    )
    save(noise(300, 300), workspace / "mid.png", "PNG")  # ~270 KB of noise
    save(noise(100, 100), workspace / "tiny.png", "PNG")
    too_big = await call(rt, "ReadMediaFile", {"path": "mid.png", "full_resolution": True})
    assert too_big.is_error and "region" in too_big.text
    fine = await call(rt, "ReadMediaFile", {"path": "tiny.png", "full_resolution": True})
    assert not fine.is_error and sent_image(fine)[0].size == (100, 100)


async def test_jpeg_gif_and_webp(rt: Runtime, workspace: Path) -> None:
    save(noise(120, 80), workspace / "photo.jpg", "JPEG", quality=80)
    frames = [Image.new("RGB", (40, 40), (i * 60, 0, 0)) for i in range(3)]
    frames[0].save(workspace / "anim.gif", save_all=True, append_images=frames[1:], duration=100)
    save(noise(50, 50), workspace / "pic.webp", "WEBP")
    for name, mime in (
        ("photo.jpg", "image/jpeg"),
        ("anim.gif", "image/gif"),
        ("pic.webp", "image/webp"),
    ):
        result = await call(rt, "ReadMediaFile", {"path": name})
        assert not result.is_error, result.text
        assert sent_image(result)[1].mime_type == mime
    animated = await call(rt, "ReadMediaFile", {"path": "anim.gif"})
    assert "3 frames" in (animated.note or "")


async def test_exif_rotation_reports_display_size(rt: Runtime, workspace: Path) -> None:
    image = noise(300, 100)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated 90 degrees: displayed 100 wide, 300 high
    image.save(workspace / "rotated.jpg", "JPEG", exif=exif.tobytes())
    result = await call(rt, "ReadMediaFile", {"path": "rotated.jpg"})
    assert "100x300 pixels" in (result.note or "")
    cropped = await call(
        rt,
        "ReadMediaFile",
        {"path": "rotated.jpg", "region": {"x": 0, "y": 0, "width": 100, "height": 50}},
    )
    assert sent_image(cropped)[0].size == (100, 50)


async def test_other_formats_are_refused_with_a_way_forward(rt: Runtime, workspace: Path) -> None:
    save(Image.new("RGB", (10, 10)), workspace / "old.bmp", "BMP")
    save(Image.new("RGB", (10, 10)), workspace / "scan.tiff", "TIFF")
    (workspace / "photo.heic").write_bytes(b"\0\0\0\x18ftypheic" + b"\0" * 64)
    (workspace / "note.txt").write_text("hello")
    (workspace / "archive.zip").write_bytes(b"PK\x03\x04" + b"\0" * 64)
    (workspace / "clip.mp4").write_bytes(b"\0\0\0\x18ftypmp42" + b"\0" * 64)
    (workspace / "empty.png").write_bytes(b"")
    (workspace / "junk.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20)

    bmp = await call(rt, "ReadMediaFile", {"path": "old.bmp"})
    assert bmp.is_error and "image/bmp" in bmp.text and "magick" in bmp.text
    tiff = await call(rt, "ReadMediaFile", {"path": "scan.tiff"})
    assert tiff.is_error and "image/tiff" in tiff.text
    heic = await call(rt, "ReadMediaFile", {"path": "photo.heic"})
    assert heic.is_error and "heif-convert" in heic.text and "photo.jpg" in heic.text
    text = await call(rt, "ReadMediaFile", {"path": "note.txt"})
    assert text.is_error and "Use Read" in text.text
    archive = await call(rt, "ReadMediaFile", {"path": "archive.zip"})
    assert archive.is_error and "not an image" in archive.text
    video = await call(rt, "ReadMediaFile", {"path": "clip.mp4"})
    assert video.is_error and "ffmpeg" in video.text
    empty = await call(rt, "ReadMediaFile", {"path": "empty.png"})
    assert empty.is_error and "empty" in empty.text
    junk = await call(rt, "ReadMediaFile", {"path": "junk.png"})
    assert junk.is_error and "Nothing was sent" in junk.text
    missing = await call(rt, "ReadMediaFile", {"path": "nope.png"})
    assert missing.is_error and "does not exist" in missing.text
    secret = await call(rt, "ReadMediaFile", {"path": ".env"})
    assert secret.is_error and "secret" in secret.text


async def test_decompression_bombs_are_not_decoded(make_runtime: Any, workspace: Path) -> None:
    rt = await make_runtime(approve_asks=True, config={"files": {"image_max_pixels": 10_000}})
    save(Image.new("RGB", (3000, 3000)), workspace / "wide.png", "PNG")
    result = await call(rt, "ReadMediaFile", {"path": "wide.png"})
    assert result.is_error and "pixels" in result.text
