"""Tool calls as a model sends them, and the record of how each one went."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from deftly.contract.display import Display
from deftly.contract.result import ToolResult, output_text


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call: `arguments` is the raw JSON text the model sent, or an already-decoded
    mapping (from a host that parsed it), or None for "no arguments"."""

    id: str
    name: str
    arguments: str | Mapping[str, Any] | None = None


class ArgumentsParseError(ValueError):
    pass


def parse_arguments(raw: str | Mapping[str, Any] | object | None) -> object:
    """Decode a call's arguments strictly (no repair); empty means `{}`."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArgumentsParseError(
                f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
    return raw


class Outcome(StrEnum):
    EXECUTED = "executed"
    PREFLIGHT_REJECTED = "preflight-rejected"
    RESOLUTION_FAILED = "resolution-failed"
    VETOED = "vetoed"
    CANCELLED = "cancelled"
    SYNTHETIC = "synthetic"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
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
        out = self.result.output
        return out if isinstance(out, str) else list(out)

    @property
    def text(self) -> str:
        return output_text(self.result.output)

    @property
    def is_error(self) -> bool:
        return self.result.is_error

    @property
    def note(self) -> str | None:
        return self.result.note

    @property
    def truncated(self) -> bool:
        return self.result.truncated

    @property
    def delivery(self) -> str | None:
        return self.result.delivery
