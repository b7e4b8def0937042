"""Reasoning that arrives inside the text: a reply that opens with `<think>...</think>`
(Qwen3, DeepSeek-R1 distills, QwQ on llama.cpp, vLLM or LM Studio without a reasoning
parser), and Mistral's list-of-parts content with `thinking` parts.

The split works on a stream: a tag cut across chunks ("<thi" + "nk>") is held back until
it is whole, so text and reasoning come out as they stream, never a tag's fragment.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

Piece: TypeAlias = tuple[Literal["text", "think"], str]

OPEN = "<think>"
CLOSE = "</think>"


class ThinkSplitter:
    """Splits one reply's text into text and reasoning pieces as it streams."""

    def __init__(self) -> None:
        self._state: Literal["start", "think", "after", "text"] = "start"
        self._held = ""

    def feed(self, text: str) -> list[Piece]:
        """The pieces `text` completes (some of it may be held back)."""
        if self._state == "text":
            return [("text", text)] if text else []
        out: list[Piece] = []
        held = self._held + text
        self._held = ""
        if self._state == "start":
            stripped = held.lstrip()
            if not stripped or (len(stripped) < len(OPEN) and OPEN.startswith(stripped)):
                self._held = held  # not yet known whether the reply opens with a tag
                return out
            if not stripped.startswith(OPEN):
                self._state = "text"
                return [("text", held)]
            self._state = "think"
            held = stripped[len(OPEN) :]
        if self._state == "think":
            end = held.find(CLOSE)
            if end < 0:
                keep = _partial_suffix(held, CLOSE)
                think, self._held = held[: len(held) - keep], held[len(held) - keep :]
                if think:
                    out.append(("think", think))
                return out
            if held[:end]:
                out.append(("think", held[:end]))
            self._state = "after"
            held = held[end + len(CLOSE) :]
        # "after": the whitespace between </think> and the answer is dropped
        rest = held.lstrip()
        if rest:
            self._state = "text"
            out.append(("text", rest))
        return out

    def flush(self) -> list[Piece]:
        """What is still held back when the reply ends."""
        held, self._held = self._held, ""
        if not held:
            return []
        return [("think" if self._state == "think" else "text", held)]


def _partial_suffix(text: str, tag: str) -> int:
    """The length of the longest end of `text` that begins `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def content_pieces(content: Any) -> list[Piece]:
    """The text and reasoning in a `content` value: a string, or a list of parts
    (`{"type": "text", "text"}`, Mistral's `{"type": "thinking", "thinking": [...]}`)."""
    if isinstance(content, str):
        return [("text", content)] if content else []
    if not isinstance(content, list):
        return []
    out: list[Piece] = []
    for part in content:
        kind = _field(part, "type")
        if kind == "text":
            text = _field(part, "text")
            if isinstance(text, str) and text:
                out.append(("text", text))
        elif kind in ("thinking", "reasoning"):
            inner = _field(part, "thinking") or _field(part, "text")
            if isinstance(inner, str) and inner:
                out.append(("think", inner))
            elif isinstance(inner, list):
                out += [("think", text) for _, text in content_pieces(inner)]
    return out


def _field(part: Any, name: str) -> Any:
    return part.get(name) if isinstance(part, dict) else getattr(part, name, None)
