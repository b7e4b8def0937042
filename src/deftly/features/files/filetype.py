"""What kind of file this is: text, image, video or something else.

The first bytes (magic numbers) win over the name; the name is a hint when the bytes say
nothing. Read uses it to refuse images and videos (pointing at ReadMediaFile), and
ReadMediaFile to know what it was given.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Literal

from deftly.contract.records import frozen

Kind = Literal["text", "image", "video", "unknown"]

IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".avif": "image/avif",
    ".svgz": "image/svg+xml",
}
VIDEO_SUFFIXES = {
    ".mp4": "video/mp4",
    ".mpg": "video/mpeg",
    ".mpeg": "video/mpeg",
    ".mkv": "video/x-matroska",
    ".avi": "video/x-msvideo",
    ".mov": "video/quicktime",
    ".ogv": "video/ogg",
    ".wmv": "video/x-ms-wmv",
    ".webm": "video/webm",
    ".m4v": "video/x-m4v",
    ".flv": "video/x-flv",
    ".3gp": "video/3gpp",
    ".3g2": "video/3gpp2",
}
NON_TEXT_SUFFIXES = frozenset(
    {
        ".pdf",
        ".doc",
        ".docx",
        ".xls",
        ".xlsx",
        ".ppt",
        ".pptx",
        ".odt",
        ".ods",
        ".odp",
        ".rtf",
        ".epub",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".zst",
        ".7z",
        ".rar",
        ".tar",
        ".jar",
        ".war",
        ".whl",
        ".egg",
        ".deb",
        ".rpm",
        ".apk",
        ".dmg",
        ".iso",
        ".img",
        ".mp3",
        ".wav",
        ".flac",
        ".ogg",
        ".oga",
        ".m4a",
        ".aac",
        ".opus",
        ".wma",
        ".mid",
        ".midi",
        ".ttf",
        ".otf",
        ".woff",
        ".woff2",
        ".eot",
        ".exe",
        ".dll",
        ".so",
        ".dylib",
        ".a",
        ".o",
        ".obj",
        ".lib",
        ".bin",
        ".elf",
        ".class",
        ".pyc",
        ".pyo",
        ".wasm",
        ".node",
        ".sqlite",
        ".sqlite3",
        ".db",
        ".mdb",
        ".parquet",
        ".feather",
        ".arrow",
        ".npy",
        ".npz",
        ".pkl",
        ".pickle",
        ".h5",
        ".hdf5",
        ".psd",
        ".ai",
        ".sketch",
        ".fig",
        ".blend",
        ".fbx",
        ".glb",
        ".stl",
    }
)

_ISO_IMAGE_BRANDS = {
    "avif": "image/avif",
    "avis": "image/avif",
    "heic": "image/heic",
    "hevc": "image/heic",
    "heif": "image/heif",
    "heix": "image/heif",
    "mif1": "image/heif",
    "msf1": "image/heif",
}
_ISO_VIDEO_BRANDS = {
    "isom": "video/mp4",
    "iso2": "video/mp4",
    "iso5": "video/mp4",
    "mp41": "video/mp4",
    "mp42": "video/mp4",
    "avc1": "video/mp4",
    "mp4v": "video/mp4",
    "m4v": "video/x-m4v",
    "qt": "video/quicktime",
    "3gp4": "video/3gpp",
    "3gp5": "video/3gpp",
    "3gp6": "video/3gpp",
    "3gp7": "video/3gpp",
    "3g2": "video/3gpp2",
}
_ASF = bytes.fromhex("3026B2758E66CF11A6D900AA0062CE6C")


@frozen
class FileType:
    """What a file is (text, image, video, binary...) and its MIME type."""

    kind: Kind
    mime: str


def suffix_of(path: str | PurePath) -> str:
    """The last extension, lower-cased; none for dot-files like `.env`."""
    name = (path if isinstance(path, PurePath) else PurePath(path)).name  # no re-parse
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def sniff_media(header: bytes) -> FileType | None:
    """Recognise an image or video by its magic number, or None."""
    h = header
    if h.startswith(b"\x89PNG\r\n\x1a\n"):
        return FileType("image", "image/png")
    if h.startswith(b"\xff\xd8\xff"):
        return FileType("image", "image/jpeg")
    if h.startswith((b"GIF87a", b"GIF89a")):
        return FileType("image", "image/gif")
    if h.startswith(b"BM") and len(h) >= 14:
        return FileType("image", "image/bmp")
    if h.startswith((b"II*\x00", b"MM\x00*")):
        return FileType("image", "image/tiff")
    if h.startswith(b"\x00\x00\x01\x00"):
        return FileType("image", "image/x-icon")
    if h.startswith(b"RIFF") and len(h) >= 12:
        if h[8:12] == b"WEBP":
            return FileType("image", "image/webp")
        if h[8:12] == b"AVI ":
            return FileType("video", "video/x-msvideo")
    if h.startswith(b"FLV"):
        return FileType("video", "video/x-flv")
    if h.startswith(_ASF):
        return FileType("video", "video/x-ms-wmv")
    if h.startswith(b"\x1a\x45\xdf\xa3"):
        if b"webm" in h:
            return FileType("video", "video/webm")
        if b"matroska" in h:
            return FileType("video", "video/x-matroska")
    if len(h) >= 12 and h[4:8] == b"ftyp":
        brand = h[8:12].decode("latin-1").lower().rstrip("\0 ")
        if brand in _ISO_IMAGE_BRANDS:
            return FileType("image", _ISO_IMAGE_BRANDS[brand])
        if brand in _ISO_VIDEO_BRANDS:
            return FileType("video", _ISO_VIDEO_BRANDS[brand])
    return None


def detect_file_type(
    path: str | PurePath, header: bytes, mode: Literal["text", "media"] = "text"
) -> FileType:
    """Text, image, video or unknown, from the first bytes and the name.

    In "media" mode a recognised magic number always wins; in "text" mode a magic number
    that disagrees with the name's kind gives "unknown" (neither is trusted).
    """
    suffix = suffix_of(path)
    if suffix == ".svg":
        return FileType("text", "image/svg+xml")
    hint: FileType | None = None
    if suffix in IMAGE_SUFFIXES:
        hint = FileType("image", IMAGE_SUFFIXES[suffix])
    elif suffix in VIDEO_SUFFIXES:
        hint = FileType("video", VIDEO_SUFFIXES[suffix])
    sniffed = sniff_media(header) if header else None
    if sniffed is not None:
        if mode == "media" or hint is None:
            return sniffed
        return hint if hint.kind == sniffed.kind else FileType("unknown", sniffed.mime)
    if header and hint is not None:
        if hint.kind == "image":
            return FileType("unknown", hint.mime)  # named like an image, bytes are not
        if mode == "media":
            return hint
    if header and b"\0" in header:
        return FileType("unknown", "application/octet-stream")
    if hint is not None:
        return hint
    if suffix in NON_TEXT_SUFFIXES:
        return FileType("unknown", "application/octet-stream")
    return FileType("text", "text/plain")
