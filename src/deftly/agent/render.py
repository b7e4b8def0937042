"""How a call's result becomes the tool message the model reads.

- success: the output as is (empty → a `<system>` line saying so);
- error: marked `<system>ERROR: the tool call failed.</system>` before the text, and the
  message's `is_error` set (the Anthropic API carries it as well);
- the result's `note` appended in a `<system>` block (it is for the model only);
- images as image parts where the provider takes them inside tool results; otherwise a
  line saying so, and the images in a user message right after the results
  (`moved_images`), so the model still sees them.
"""

from __future__ import annotations

from deftly.contract.result import ImagePart as ResultImage
from deftly.contract.result import TextPart as ResultText
from deftly.execution.calls import CallResult
from deftly.providers.types import ImagePart, Message, Part, TextPart

EMPTY = "<system>Tool output is empty.</system>"
ERROR_MARK = "<system>ERROR: the tool call failed.</system>"
IMAGE_MOVED = (
    "<system>The tool returned an image ({mime}); this provider takes no images inside tool "
    "results, so it follows in the next message.</system>"
)


def system_block(text: str) -> str:
    """`text` as a `<system>` block: what the harness (not the user) says to the model
    (as it is when it already is one: some tools write their notes that way)."""
    stripped = text.strip()
    if stripped.startswith("<system>") and stripped.endswith("</system>"):
        return stripped
    return f"<system>{text}</system>"


def tool_message(call: CallResult, *, images: bool, reminder: str | None = None) -> Message:
    """The tool message answering `call`; `images`: whether image parts may be sent;
    `reminder`: a harness reminder appended (the repeated-call nudge)."""
    result = call.result
    parts: list[Part] = []
    output = result.output
    if isinstance(output, str):
        if output.strip():
            parts.append(TextPart(output))
    else:
        for part in output:
            if isinstance(part, ResultText):
                if part.text.strip():
                    parts.append(TextPart(part.text))
            elif isinstance(part, ResultImage):
                parts.append(
                    ImagePart(part.mime_type, part.data)
                    if images
                    else TextPart(IMAGE_MOVED.format(mime=part.mime_type))
                )
            else:
                parts.append(
                    TextPart(
                        f"<system>The tool returned {part.type} content, which "
                        "is not sent to the model.</system>"
                    )
                )
    extras = [system_block(result.note)] if result.note else []
    if reminder:
        extras.append(system_block(reminder))
    if not parts:
        parts.append(
            TextPart(EMPTY if not result.is_error else f"{ERROR_MARK} Tool output is empty.")
        )
    elif result.is_error:
        parts.insert(0, TextPart(ERROR_MARK))
    if extras:
        parts.append(TextPart("\n".join(extras)))
    return Message(
        "tool",
        tuple(_joined(parts)),
        tool_call_id=call.tool_call_id,
        name=call.name,
        is_error=result.is_error,
    )


def _joined(parts: list[Part]) -> list[Part]:
    """Runs of text parts joined with newlines (most servers take one string best)."""
    out: list[Part] = []
    for part in parts:
        if out and isinstance(part, TextPart) and isinstance(out[-1], TextPart):
            out[-1] = TextPart(f"{out[-1].text}\n{part.text}")
        else:
            out.append(part)
    return out


def moved_images(call: CallResult) -> Message | None:
    """For a provider that takes no images in tool results: the call's images as a user
    message that follows the results (None when the result has none)."""
    output = call.result.output
    if isinstance(output, str):
        return None
    found = [ImagePart(p.mime_type, p.data) for p in output if isinstance(p, ResultImage)]
    if not found:
        return None
    intro = TextPart(
        system_block(f'The image(s) returned by the call {call.tool_call_id} ("{call.name}"):')
    )
    return Message("user", (intro, *found), meta={"injected": True})
