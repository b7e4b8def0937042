"""Neutral messages and tools → the chat-completions request body, in the form every
OpenAI-compatible server accepts.

- An assistant message always carries `content` as a string: `""` when it only calls
  tools. OpenAI accepts `null`, but llama.cpp ("Expected 'content' to be a string or an
  array", ggml-org/llama.cpp#13471), LM Studio and llama-cpp-python refuse it, and vLLM /
  SGLang gateways refuse a missing `content` key or an empty list; `""` is accepted by all
  of them and by OpenAI and DeepSeek (checked against its API in agentjido/req_llm#966).
- Reasoning goes back as `reasoning_content` only where a server needs it (`echo`):
  Kimi's thinking models refuse an assistant tool-call message without it; DeepSeek's
  reasoner refuses it in input; OpenAI ignores it. See `reasoning_echo`.
- A user message of text only is a plain string (text-only local servers take nothing
  else); with images it is a list of text and `image_url` (data URL) parts.
- A tool message is text. Images a tool returned go, when the model does not take them
  in tool results, into one user message after the run of tool messages (the API allows
  nothing between an assistant's tool calls and their results), with a pointer in each
  tool message saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from deftly.providers.types import ImagePart, Message, TextPart, ThinkPart, ToolSpec

ReasoningEcho: TypeAlias = Literal["auto", "tool_calls", "always", "never"]
"""When reasoning goes back to the server: "tool_calls" on assistant messages that call
tools (what Kimi's thinking models require), "always" on every assistant message that
has some, "never" (what DeepSeek's reasoner requires), "auto" — "tool_calls" for Kimi /
Moonshot models or endpoints, else "never"."""


def resolve_echo(echo: ReasoningEcho, model: str, base_url: str | None) -> ReasoningEcho:
    """The concrete policy for "auto"."""
    if echo != "auto":
        return echo
    where = f"{model} {base_url or ''}".lower()
    return "tool_calls" if ("kimi" in where or "moonshot" in where) else "never"


def encode_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs as function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            },
        }
        for tool in tools
    ]


def encode_messages(
    system: str,
    messages: Sequence[Message],
    *,
    echo: ReasoningEcho = "never",
    images_in_tool_results: bool = False,
) -> list[dict[str, Any]]:
    """The `messages` array: the system prompt first, then the conversation."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    pending: list[ImagePart] = []  # images from tool results, for the next user message
    for message in messages:
        if message.role != "tool" and pending:
            out.append(_images_message(pending))
            pending = []
        if message.role == "system":
            out.append({"role": "system", "content": message.text})
        elif message.role == "user":
            out.append(_user(message))
        elif message.role == "assistant":
            out.append(_assistant(message, echo))
        else:
            out.append(_tool(message, images_in_tool_results, pending))
    if pending:
        out.append(_images_message(pending))
    return out


def _data_url(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.media_type};base64,{image.data}"},
    }


def _user(message: Message) -> dict[str, Any]:
    if not any(isinstance(p, ImagePart) for p in message.parts):
        return {"role": "user", "content": message.text}
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append(_data_url(part))
    return {"role": "user", "content": content}


def _assistant(message: Message, echo: ReasoningEcho) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": message.text}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call in message.tool_calls
        ]
    reasoning = "".join(p.text for p in message.parts if isinstance(p, ThinkPart))
    if (echo == "tool_calls" and message.tool_calls) or (echo == "always" and reasoning):
        out["reasoning_content"] = reasoning
    return out


def _tool(message: Message, images_inline: bool, pending: list[ImagePart]) -> dict[str, Any]:
    images = [p for p in message.parts if isinstance(p, ImagePart)]
    text = message.text
    content: str | list[dict[str, Any]] = text
    if images and images_inline:
        content = [{"type": "text", "text": text}] if text else []
        content += [_data_url(image) for image in images]
    elif images:
        first = len(pending) + 1
        numbers = ", ".join(str(n) for n in range(first, first + len(images)))
        noun = "image" if len(images) == 1 else "images"
        pointer = f"[{noun} {numbers} of this result: in the user message after the tool results]"
        content = f"{text}\n{pointer}" if text else pointer
        pending.extend(images)
    return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}


def _images_message(images: list[ImagePart]) -> dict[str, Any]:
    noun = "image" if len(images) == 1 else f"{len(images)} images"
    content: list[dict[str, Any]] = [
        {"type": "text", "text": f"The {noun} returned by the tool calls above:"}
    ]
    content += [_data_url(image) for image in images]
    return {"role": "user", "content": content}
