"""Converting tool output between MCP content blocks and deftly content parts."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable

import mcp.types as mt

from deftly.contract.result import AudioPart, ContentPart, ImagePart, TextPart, ToolResult

MAX_BINARY_BYTES = 10 * 1024 * 1024
"""Largest image or audio part passed on (decoded size)."""

ContentBlock = mt.TextContent | mt.ImageContent | mt.AudioContent

TEXT_SEPARATOR = "\n"
"""Between two text blocks of one result: they were separate, so they stay apart."""

LinkMapper = Callable[[str], str]
"""A server's resource URI -> the URI deftly opens it by (`mcp://<server>/...`)."""


def _same(uri: str) -> str:
    return uri


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4


def _binary(kind: str, data: str, mime: str, where: str) -> ContentPart:
    size = _decoded_size(data)
    if size > MAX_BINARY_BYTES:
        return TextPart(
            f"[{kind} from {where} left out: about {size / 1e6:.1f} MB, over the "
            f"{MAX_BINARY_BYTES // (1024 * 1024)} MB limit for one part. Ask for a smaller one.]"
        )
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return TextPart(f"[{kind} from {where} left out: its data is not valid base64.]")
    if kind == "image":
        return ImagePart(data, mime)
    return AudioPart(data, mime)


def _block_part(block: object, where: str, link: LinkMapper = _same) -> ContentPart | None:
    if isinstance(block, mt.TextContent):
        return TextPart(block.text)
    if isinstance(block, mt.ImageContent):
        return _binary("image", block.data, block.mime_type or "image/png", where)
    if isinstance(block, mt.AudioContent):
        return _binary("audio", block.data, block.mime_type or "audio/mpeg", where)
    if isinstance(block, mt.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mt.TextResourceContents):
            return TextPart(resource.text)
        mime = resource.mime_type or "application/octet-stream"
        if mime.startswith("image/"):
            return _binary("image", resource.blob, mime, where)
        if mime.startswith("audio/"):
            return _binary("audio", resource.blob, mime, where)
        return TextPart(
            f"[binary resource {resource.uri} ({mime}, about "
            f"{_decoded_size(resource.blob):,} bytes) not shown]"
        )
    if isinstance(block, mt.ResourceLink):
        label = f" ({block.title or block.name})" if (block.title or block.name) else ""
        mounted = link(str(block.uri))
        hint = (
            f"; open it with ReadMcpResource(uri={json.dumps(mounted)})"
            if mounted != str(block.uri)
            else ""
        )
        return TextPart(f"[resource: {mounted}{label}{hint}]")
    return None


def _cap_text(parts: list[ContentPart], max_chars: int) -> tuple[list[ContentPart], bool]:
    """Hold the text of a mixed (text + media) result to the budget the spiller cannot apply."""
    left = max_chars
    out: list[ContentPart] = []
    cut = False
    for part in parts:
        if isinstance(part, TextPart):
            if len(part.text) > left:
                out.append(TextPart(part.text[:left]))
                cut = True
                left = 0
                continue
            left -= len(part.text)
        out.append(part)
    if cut:
        out.append(
            TextPart(f"\n[text cut at {max_chars:,} characters; ask the tool for less at a time]")
        )
    return out, cut


def from_mcp_result(
    result: mt.CallToolResult, *, where: str, max_text: int, link: LinkMapper = _same
) -> ToolResult:
    """An MCP tool result as a deftly result: text stays one string when it is all text (its
    blocks a line apart), and the structured content rides along as `structured`."""
    parts = [p for block in result.content if (p := _block_part(block, where, link)) is not None]
    has_text = any(isinstance(p, TextPart) and p.text for p in parts)
    if result.structured_content is not None and not has_text:
        parts.append(TextPart(json.dumps(result.structured_content, ensure_ascii=False, indent=2)))
    truncated = False
    if all(isinstance(p, TextPart) for p in parts):
        texts = [p.text for p in parts if isinstance(p, TextPart)]
        output: str | list[ContentPart] = TEXT_SEPARATOR.join(texts)
    else:
        output, truncated = _cap_text(parts, max_text)
    structured = result.structured_content if isinstance(result.structured_content, dict) else None
    return ToolResult(
        output, is_error=bool(result.is_error), truncated=truncated, structured=structured
    )


def to_mcp_content(result: ToolResult) -> list[ContentBlock]:
    """A deftly result as MCP content; the note (for the model) becomes a last text block."""
    blocks: list[ContentBlock] = []
    if isinstance(result.output, str):
        blocks.append(mt.TextContent(type="text", text=result.output))
    else:
        for part in result.output:
            if isinstance(part, TextPart):
                blocks.append(mt.TextContent(type="text", text=part.text))
            elif isinstance(part, ImagePart):
                blocks.append(
                    mt.ImageContent(type="image", data=part.data, mime_type=part.mime_type)
                )
            else:
                blocks.append(
                    mt.AudioContent(type="audio", data=part.data, mime_type=part.mime_type)
                )
    if result.note:
        blocks.append(mt.TextContent(type="text", text=result.note))
    return blocks
