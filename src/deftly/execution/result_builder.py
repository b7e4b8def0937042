"""Bounded text for tools that stream output (Bash, Grep, web tools).

A total cap and a per-line cap, with a visible marker wherever something was cut, so one
minified line or one chatty command never floods a model's context.
"""

from __future__ import annotations

import re

from deftly.contract.result import ToolResult

MARKER = "[...truncated]"
TRUNCATION_MESSAGE = "Output was cut to fit in one message."
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+")


class ResultBuilder:
    """Collects streamed text up to a total and a per-line cap, marking each cut, and builds the
    result from it."""

    def __init__(self, max_chars: int = 50_000, max_line_length: int | None = 2_000):
        if max_line_length is not None and max_line_length <= len(MARKER):
            raise ValueError(f"max_line_length must be longer than {len(MARKER)} characters")
        self.max_chars = max_chars
        self.max_line_length = max_line_length
        self._parts: list[str] = []
        self.n_chars = 0
        self.truncated = False
        self._full_marked = False
        self._dropping_line = False
        self._line_len = 0

    @property
    def full(self) -> bool:
        """Whether no more text will be kept."""
        return self._full_marked or self.n_chars >= self.max_chars

    @property
    def text(self) -> str:
        """The text kept so far, markers included."""
        return "".join(self._parts)

    def write(self, text: str) -> int:
        """Append text; returns how many characters were kept (markers included).

        The per-line cap holds across writes: a line streamed in many pieces is cut once,
        and the rest of it is dropped up to its line break.
        """
        if not text:
            return 0
        before = self.n_chars
        for match in _LINES.finditer(text):
            segment = match.group(0)
            body = segment.rstrip("\r\n")
            ending = segment[len(body) :]
            if self._full_marked:
                break
            if not self._dropping_line and body and not self._append_body(body):
                break
            if ending:
                self._dropping_line = False
                if self.n_chars + len(ending) > self.max_chars:
                    self._mark_full()
                    break
                self._append(ending)
                self._line_len = 0
        return self.n_chars - before

    def _append(self, text: str) -> None:
        self._parts.append(text)
        self.n_chars += len(text)
        self._line_len += len(text)

    def _append_body(self, body: str) -> bool:
        """Append one line's text within the caps; False once the output is full."""
        remaining = self.max_chars - self.n_chars
        line_room = (
            self.max_line_length - self._line_len if self.max_line_length is not None else remaining
        )
        if len(body) <= min(remaining, line_room):
            self._append(body)
            return True
        self.truncated = True
        if remaining <= line_room:  # the whole output is full
            keep = max(remaining - len(MARKER), 0)
            self._append(body[:keep])
            self._mark_full()
            return False
        keep = max(line_room - len(MARKER), 0)
        self._append(body[:keep] + MARKER)
        self._dropping_line = True
        return True

    def _mark_full(self) -> None:
        self.truncated = True
        if not self._full_marked:
            self._full_marked = True
            self._parts.append(MARKER)
            self.n_chars += len(MARKER)

    def _with_message(self, message: str, *, always: bool) -> str:
        output = self.text
        if message and not message.endswith("."):
            message += "."
        if self.truncated:
            message = f"{message} {TRUNCATION_MESSAGE}".strip()
        if message and (always or self.truncated or not output):
            sep = "" if not output or output.endswith("\n") else "\n"
            output = f"{output}{sep}{message}"
        return output

    def ok(self, message: str = "", *, note: str | None = None) -> ToolResult:
        """Success; `message` is added only when something was cut or nothing was written."""
        return ToolResult.ok(
            self._with_message(message, always=False), note=note, truncated=self.truncated
        )

    def error(self, message: str, *, note: str | None = None) -> ToolResult:
        """Failure; the message is always added after the output."""
        return ToolResult(
            self._with_message(message, always=True),
            is_error=True,
            note=note,
            truncated=self.truncated,
        )
