"""Make whatever a tool returned into a well-formed result."""

from __future__ import annotations

from deftly.contract.result import AudioPart, ContentPart, ImagePart, TextPart, ToolResult

EMPTY_OUTPUT = "(the tool produced no output)"
NON_TEXT_OUTPUT = "(the tool returned non-text content)"


def coerce_result(name: str, value: object) -> ToolResult:
    """A `ToolResult`, or an error result that says what the tool did wrong."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult.error(f'Tool "{name}" returned nothing; this is a bug in the tool.')
    return ToolResult.error(
        f'Tool "{name}" returned a {type(value).__name__} instead of a ToolResult; '
        "this is a bug in the tool."
    )


def normalize_result(name: str, result: ToolResult) -> ToolResult:
    """The result made well-formed: an empty output says so, all-text parts become one string, and
    an output that is not text or content parts becomes an error naming the tool's bug."""
    output = result.output
    if isinstance(output, str):
        normalized: str | list[ContentPart] = output if output else EMPTY_OUTPUT
    elif isinstance(output, list | tuple):
        parts = list(output)
        bad = [p for p in parts if not isinstance(p, TextPart | ImagePart | AudioPart)]
        if bad:
            return ToolResult.error(
                f'Tool "{name}" returned an output holding a {type(bad[0]).__name__}, '
                "which is not a content part; this is a bug in the tool."
            )
        texts = [p for p in parts if isinstance(p, TextPart)]
        if len(texts) == len(parts):
            joined = "".join(p.text for p in texts)
            normalized = joined if joined else EMPTY_OUTPUT
        elif any(p.text for p in texts):
            normalized = parts
        else:
            normalized = [TextPart(NON_TEXT_OUTPUT), *[p for p in parts if p not in texts]]
    else:
        return ToolResult.error(
            f'Tool "{name}" returned a result whose output is a {type(output).__name__}; '
            "this is a bug in the tool."
        )
    note = result.note if isinstance(result.note, str) and result.note else None
    if normalized is output and note is result.note:
        return result
    return result.with_(output=normalized, note=note)
