"""Tool calls as a model sends them, and the record of how each one went."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from deftly.contract.display import Display
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult, output_text


@frozen
class ToolCall:
    """One call: `arguments` is the raw JSON text the model sent, or an already-decoded
    mapping (from a host that parsed it), or None for "no arguments"."""

    id: str
    name: str
    arguments: str | Mapping[str, Any] | None = None


class ArgumentsParseError(ValueError):
    """A call's raw arguments are not a JSON object (malformed, or another JSON value); the message
    says what is wrong, for the model."""

    pass


class ArgumentsTooDeep(ArgumentsParseError):
    """Valid or not, the arguments nest deeper than any tool takes."""


MAX_DEPTH = 100
"""Deepest nesting of arrays and objects a call's arguments may have. No tool's schema
comes near it; far deeper input would exhaust the recursion of the decoder and of the
validators after it, and take its whole batch down."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def _too_deep_text(text: str) -> bool:
    """Whether JSON text nests deeper than MAX_DEPTH (brackets inside strings skipped),
    told without decoding it."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:
            depth -= 1
    return False


def _too_deep_value(value: object) -> bool:
    """The same for an already-decoded value (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth + 1 > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _too_deep_error() -> ArgumentsTooDeep:
    return ArgumentsTooDeep(
        f"the arguments are nested more than {MAX_DEPTH} levels deep; no tool takes that. "
        "Send flat arguments as the tool's schema describes them"
    )


def parse_arguments(raw: str | Mapping[str, Any] | object | None) -> object:
    """Decode a call's arguments strictly (no repair); empty means `{}`."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        if _too_deep_text(raw):
            raise _too_deep_error()
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArgumentsParseError(
                f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
        except RecursionError:  # pragma: no cover - the depth check comes first
            raise _too_deep_error() from None
    if _too_deep_value(raw):
        raise _too_deep_error()
    return raw


class Outcome(StrEnum):
    """How far a call got: it ran, or it stopped at preflight, at resolve, at a before-hook's veto,
    by cancellation, with a result of its own from resolve (synthetic), or skipped after an
    earlier call ended the batch."""

    EXECUTED = "executed"
    PREFLIGHT_REJECTED = "preflight-rejected"
    RESOLUTION_FAILED = "resolution-failed"
    VETOED = "vetoed"
    CANCELLED = "cancelled"
    SYNTHETIC = "synthetic"
    SKIPPED = "skipped"


@frozen
class CallResult:
    """How one call of a batch went: the result the model sees, plus what a UI needs."""

    tool_call_id: str
    name: str
    args: object
    result: ToolResult
    outcome: Outcome
    description: str | None = None
    display: Display | None = None
    approval_rule: str | None = None
    started_at: float | None = None
    finished_at: float | None = None

    @property
    def output(self) -> str | list[Any]:
        """The result's output: its text, or a list of its content parts."""
        out = self.result.output
        return out if isinstance(out, str) else list(out)

    @property
    def text(self) -> str:
        """The result's text parts joined (what a person or a log reads)."""
        return output_text(self.result.output)

    @property
    def is_error(self) -> bool:
        """Whether the call failed or was refused (the model is told it was an error)."""
        return self.result.is_error

    @property
    def note(self) -> str | None:
        """The model-only status line of the result, if any."""
        return self.result.note

    @property
    def truncated(self) -> bool:
        """Whether the output was cut or spilled to disk."""
        return self.result.truncated

    @property
    def delivery(self) -> str | None:
        """Text an agent loop should add to the conversation (a loaded skill), if any."""
        return self.result.delivery
