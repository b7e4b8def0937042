"""Eliding old tool outputs: each long one becomes a short pointer to a file holding it.

The model keeps what it needs to decide whether to look again (the first lines, the size,
whether the call failed) and a path it can `Read`; the full text is never lost. A result
that already names the file its long output was spilled to (`output_path:`) points there
instead of writing a second copy.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Sequence
from pathlib import Path

from deftly.agent.context_estimate import message_tokens
from deftly.contract.records import frozen
from deftly.providers.types import ImagePart, Message, Part, TextPart

log = logging.getLogger(__name__)

ELIDE_MIN_CHARS = 600
"""A tool output shorter than this stays (its pointer would save next to nothing)."""

HEAD_LINES = 5
HEAD_CHARS = 300
"""How much of an elided output's beginning its pointer keeps."""

ELIDED = "elided"
"""The `meta` key of an elided message: the file that holds its full output."""

_SPILL_PATH = re.compile(r"^output_path: (.+)$", re.MULTILINE)
_IMAGE_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


@frozen
class Elision:
    """What one pass changed: the new history, how many outputs it elided, and the
    tokens that saved (by the estimate)."""

    messages: list[Message]
    count: int
    saved: int


def assistant_indices(messages: Sequence[Message]) -> list[int]:
    """Where the assistant messages (the model's steps) are."""
    return [i for i, m in enumerate(messages) if m.role == "assistant"]


def recent_boundary(messages: Sequence[Message], keep: int) -> int:
    """The index of the first of the last `keep` assistant steps (0 when there are no
    more steps than that: nothing is old)."""
    steps = assistant_indices(messages)
    if keep <= 0:
        return len(messages)
    return steps[-keep] if len(steps) > keep else 0


class Elider:
    """Writes elided outputs under `directory` and names them as `shown` (the same
    folder as the model's tools see it, when an environment maps paths)."""

    def __init__(self, directory: Path, shown: Path | None = None) -> None:
        self.directory = directory
        self.shown = shown or directory

    def elide(self, messages: Sequence[Message], upto: int) -> Elision:
        """Every long tool output (and image) before index `upto`, elided."""
        out = list(messages)
        count = 0
        saved = 0
        for index in range(min(upto, len(out))):
            message = out[index]
            if message.role != "tool" or ELIDED in message.meta:
                continue
            replacement = self._elided(message)
            if replacement is None:
                continue
            out[index] = replacement
            count += 1
            saved += message_tokens(message) - message_tokens(replacement)
        return Elision(out, count, saved)

    def _elided(self, message: Message) -> Message | None:
        text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
        images = [p for p in message.parts if isinstance(p, ImagePart)]
        if len(text) < ELIDE_MIN_CHARS and not images:
            return None
        stem = _file_stem(message.tool_call_id or "result")
        parts: list[Part] = []
        where = ""
        if len(text) >= ELIDE_MIN_CHARS:
            path = self._text_file(text, stem)
            if path is None:
                return None
            where = path
            parts.append(TextPart(pointer(text, path)))
        else:
            parts.extend(p for p in message.parts if isinstance(p, TextPart))
        for number, image in enumerate(images, 1):
            shown = self._image_file(image, f"{stem}-{number}")
            parts.append(TextPart(image_pointer(image.media_type, shown)))
            where = where or (shown or "")
        return Message(
            "tool",
            tuple(parts),
            tool_call_id=message.tool_call_id,
            name=message.name,
            is_error=message.is_error,
            meta={**message.meta, ELIDED: where},
        )

    def _text_file(self, text: str, stem: str) -> str | None:
        spilled = _SPILL_PATH.search(text)
        if spilled:
            return spilled.group(1).strip()
        return self._save(f"{stem}.txt", text.encode("utf-8", "surrogatepass"))

    def _image_file(self, image: ImagePart, stem: str) -> str | None:
        try:
            data = base64.b64decode(image.data, validate=False)
        except (binascii.Error, ValueError):
            return None
        return self._save(f"{stem}.{_IMAGE_EXT.get(image.media_type, 'bin')}", data)

    def _save(self, name: str, data: bytes) -> str | None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / name).write_bytes(data)
        except OSError as exc:
            log.warning("could not save an elided output to %s: %s", self.directory / name, exc)
            return None
        return str(self.shown / name)


def pointer(text: str, path: str) -> str:
    """What an elided text output becomes: its size, where it is, and how it began."""
    lines = text.splitlines()
    head = "\n".join(lines[:HEAD_LINES])
    if len(head) > HEAD_CHARS:
        head = head[:HEAD_CHARS] + "…"
    more = " (it continues)" if len(lines) > HEAD_LINES or len(head) < len(text) else ""
    return (
        f"<system>This tool output ({len(text):,} characters, {len(lines):,} lines) was "
        f"elided to save context. The full output is in {path}: read it with Read if you "
        f"need it again.</system>\nIt began{more}:\n{head}"
    )


def image_pointer(media_type: str, path: str | None) -> str:
    """What an elided image becomes."""
    if path is None:
        return f"<system>An image ({media_type}) was elided to save context.</system>"
    return (
        f"<system>An image ({media_type}) was elided to save context. It is in {path}: view "
        "it with ReadMediaFile if you need it again.</system>"
    )


def _file_stem(call_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", call_id).strip("._") or "result"
