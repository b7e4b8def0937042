"""Which text encoding a file is in, and turning whole files into text and back.

Read, Edit and Write share this, so a file Read shows is the file Edit matches against,
and what Edit or Write puts back keeps the file's encoding and byte-order mark.
Supported: UTF-8 (with or without a BOM) and UTF-16 (LE/BE, with a BOM, or recognised by
its zero bytes). Anything else is refused with a message saying how to convert it.
"""

from __future__ import annotations

import codecs
import unicodedata
from typing import Literal

from deftly.contract.records import frozen

SNIFF_BYTES = 512

UTF8_BOM = codecs.BOM_UTF8
UTF16_LE_BOM = codecs.BOM_UTF16_LE
UTF16_BE_BOM = codecs.BOM_UTF16_BE

EncodingName = Literal["utf-8", "utf-16-le", "utf-16-be"]
SniffKind = Literal["utf-8", "utf-16-le", "utf-16-be", "binary", "undecodable"]

_CONTROL_RATIO = 0.3
_CONTROL_BYTES = bytes(sorted((set(range(32)) - {9, 10, 12, 13, 27}) | {0x7F}))
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


@frozen
class Sniff:
    """What the first bytes of a file say. `bom` is the byte-order mark found, if any."""

    kind: SniffKind
    bom: bytes = b""

    @property
    def is_text(self) -> bool:
        """Whether the bytes looked like text deftly can decode (UTF-8 or UTF-16)."""
        return self.kind in ("utf-8", "utf-16-le", "utf-16-be")

    @property
    def is_utf16(self) -> bool:
        """Whether the text is UTF-16 (either byte order)."""
        return self.kind in ("utf-16-le", "utf-16-be")


def sniff_encoding(header: bytes, *, complete: bool = False) -> Sniff:
    """Classify a file by its first bytes (at most `SNIFF_BYTES` are looked at).

    A BOM decides. Otherwise zero bytes on only the odd (even) offsets mean UTF-16 LE (BE)
    when the sample decodes to plausible text (no control, unassigned or private-use
    characters, and some white space); any other zero byte means binary. A sample that is
    not UTF-8 is "undecodable" when it looks like text in a legacy encoding, "binary" when
    it is full of control bytes.
    `complete` says the header is the whole file (so a sequence cut at its end is an error).
    """
    sample = header[:SNIFF_BYTES]
    if sample.startswith(UTF8_BOM):
        return _utf8_or_not(sample[len(UTF8_BOM) :], UTF8_BOM, complete)
    if sample.startswith(UTF16_LE_BOM):
        return Sniff("utf-16-le", UTF16_LE_BOM)
    if sample.startswith(UTF16_BE_BOM):
        return Sniff("utf-16-be", UTF16_BE_BOM)
    even_zeros = sample[0::2].count(0)
    odd_zeros = sample[1::2].count(0)
    if even_zeros == 0 and odd_zeros == 0:
        return _utf8_or_not(sample, b"", complete)
    if even_zeros == 0 and odd_zeros >= 2:
        return _utf16_or_binary(sample, "utf-16-le")
    if odd_zeros == 0 and even_zeros >= 2:
        return _utf16_or_binary(sample, "utf-16-be")
    return Sniff("binary")


_IMPLAUSIBLE = frozenset({"Cc", "Cs", "Co", "Cn"})
_MIN_SAMPLE_FOR_SPACE = 32


def _utf16_or_binary(sample: bytes, kind: Literal["utf-16-le", "utf-16-be"]) -> Sniff:
    """Zero bytes on one parity only, with no BOM, is a guess: keep it only when the
    decoded sample reads as text. `b"abc\\0\\1\\2" * 100` has that zero pattern too, and
    decodes to a run of CJK and Latin letters with not one space in it."""
    decoder = codecs.getincrementaldecoder(kind)("strict")
    try:
        text = decoder.decode(sample[: len(sample) - len(sample) % 2], final=False)
    except UnicodeDecodeError:
        return Sniff("binary")
    for ch in text:
        if unicodedata.category(ch) in _IMPLAUSIBLE and ch not in "\t\n\r\f\x1b":
            return Sniff("binary")
    if len(text) >= _MIN_SAMPLE_FOR_SPACE and not any(ch.isspace() for ch in text):
        return Sniff("binary")
    return Sniff(kind)


def _utf8_or_not(sample: bytes, bom: bytes, complete: bool) -> Sniff:
    if b"\0" in sample:
        return Sniff("binary")
    controls = len(sample.translate(None, _NOT_CONTROL))  # the control bytes, counted in C
    if sample and controls / len(sample) > _CONTROL_RATIO:
        return Sniff("binary")
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        decoder.decode(sample, final=complete)  # a sequence cut by the sample is fine
    except UnicodeDecodeError:
        return Sniff("undecodable")
    return Sniff("utf-8", bom)


@frozen
class DecodedText:
    """A whole file as text, and how to write it back the same way."""

    text: str
    encoding: EncodingName
    bom: bytes

    def encode(self, text: str) -> bytes:
        """`text` encoded back as the file was: the same encoding and BOM."""
        return encode_text(text, self.encoding, self.bom)


class NotText(ValueError):
    """The bytes are not text deftly can edit; `kind` is "binary" or "undecodable"."""

    def __init__(self, kind: SniffKind, detail: str = ""):
        super().__init__(detail or kind)
        self.kind = kind


def decode_text(raw: bytes) -> DecodedText:
    """Decode a whole file strictly; raise `NotText` for binary or undecodable bytes."""
    sniff = sniff_encoding(raw)
    if sniff.kind in ("binary", "undecodable"):
        raise NotText(sniff.kind)
    encoding: EncodingName = sniff.kind  # type: ignore[assignment]
    body = raw[len(sniff.bom) :]
    codec = {"utf-8": "utf-8", "utf-16-le": "utf-16-le", "utf-16-be": "utf-16-be"}[encoding]
    try:
        text = body.decode(codec, "strict")
    except UnicodeDecodeError as exc:
        # UTF-16 guessed from zero bytes alone, and not decodable: binary, not text.
        kind: SniffKind = "binary" if encoding != "utf-8" and not sniff.bom else "undecodable"
        raise NotText(kind, f"byte {exc.start + len(sniff.bom)}: {exc.reason}") from None
    if "\0" in text:
        raise NotText("binary")
    return DecodedText(text, encoding, sniff.bom)


def encode_text(text: str, encoding: EncodingName, bom: bytes = b"") -> bytes:
    """Encode for disk; a BOM is written when the original had one (and not twice)."""
    if text.startswith("\ufeff") and bom:
        text = text[1:]
    return bom + text.encode(encoding, "strict")


def describe_encoding(encoding: str) -> str:
    """An encoding as a person writes it ("utf-16-le" -> "UTF-16 LE")."""
    return {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}.get(
        encoding, encoding
    )
