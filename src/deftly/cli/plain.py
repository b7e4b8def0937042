"""Plain text for a pipe or a file: no panels, no colours, no wrapping, nothing cut.

What a script reads is what the model reads (the output, then the note), then one status
line per call, so `deftly call Read ... | grep` sees the real lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from deftly.cli.render import first_sentence
from deftly.contract.result import ImagePart, Output, TextPart
from deftly.execution.calls import CallResult
from deftly.runtime import ToolInfo


def plain_call(call: CallResult) -> str:
    """The output and the note, then `-- Name: ok` or `-- Name: error` (and what the call
    did, when it said)."""
    pieces = [plain_output(call.result.output)]
    if call.note:
        pieces.append(call.note)
    status = f"-- {call.name}: {'error' if call.is_error else 'ok'}"
    if call.description:
        status += f" ({call.description})"
    body = "\n".join(piece.removesuffix("\n") for piece in pieces if piece)
    return (body + "\n" if body else "") + status + "\n"


def plain_output(output: Output) -> str:
    """A result's output as plain text for a pipe: text parts as they are, an image or other part as
    a one-line placeholder."""
    if isinstance(output, str):
        return output
    texts: list[str] = []
    for part in output:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ImagePart):
            texts.append(f"[image {part.mime_type}, {len(part.data) * 3 // 4:,} bytes]")
        else:
            texts.append(f"[{part.type} content]")
    return "\n".join(texts)


def plain_tools(tools: Sequence[ToolInfo]) -> str:
    """One tab-separated line per tool: name, source, disclosure, first sentence."""
    return "".join(
        f"{i.name}\t{i.source}\t{i.disclosure}\t{first_sentence(i.description)}\n" for i in tools
    )
