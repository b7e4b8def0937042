"""The two-phase tool contract: a tool first *resolves* a call, then *executes* it.

`resolve(args)` is pure: it normalises paths, declares what the call touches, how to ask a
person about it and how to show it, and hands back the closure that does the work. Bad
arguments and forbidden paths fail there, before anything is touched and nobody is asked.

How a tool fails a call, one convention: return `ToolResult.error(message)` (from
`resolve` or from `execute`), or raise `ToolError(message)` (`deftly.contract.errors`;
`PathSecurityError` and `InvalidArguments` are ToolErrors) from either of them or from
anything they call. Both give the model an error result whose text is the message as
written: say what happened and what to do next. Any other exception escaping a tool is
taken for a bug in the tool: the call becomes a short error result naming the exception
(`Tool "X" failed: ValueError: ...`, or `could not prepare the call` from `resolve`), the
traceback is logged, and the rest of the batch runs.

`execute` receives a `ToolContext`: the call's id and `Identity` (session, agent, turn),
its cancel token, where to report progress, and what the before-hooks handed over for it
(`ctx.handoff(PlanReview)`).
"""

from __future__ import annotations

import asyncio
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Generic, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError

from deftly.contract.accesses import Accesses
from deftly.contract.display import Display
from deftly.contract.errors import InvalidArguments
from deftly.contract.identity import Identity
from deftly.contract.records import frozen
from deftly.contract.result import ToolResult
from deftly.contract.schema import JsonSchema, input_json_schema
from deftly.contract.traits import ToolTraits
from deftly.contract.validation import JsonSchemaValidator, pydantic_problems

__all__ = [
    "BaseTool",
    "CancelToken",
    "Execute",
    "Resolution",
    "RuleMatch",
    "SchemaTool",
    "Tool",
    "ToolContext",
    "ToolExecution",
    "ToolTraits",
    "ToolUpdate",
]

P = TypeVar("P", bound=BaseModel)
H = TypeVar("H")

UpdateKind: TypeAlias = Literal["stdout", "stderr", "progress", "status"]


@frozen
class ToolUpdate:
    """Progress from a running call, for UIs (and MCP progress notifications)."""

    kind: UpdateKind
    text: str | None = None
    progress: float | None = None
    total: float | None = None


class CancelToken:
    """A cancellation signal shared by the calls of one batch."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._callbacks: list[Callable[[], None]] = []
        self.reason: str | None = None
        self.by_user = False

    def cancel(self, reason: str = "cancelled", *, by_user: bool = False) -> None:
        """Cancel every call of the batch (the first reason given is kept)."""
        if not self._event.is_set():
            self.reason = reason
            self.by_user = by_user
            self._event.set()
            for callback in tuple(self._callbacks):
                callback()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` when the batch is cancelled (so a watcher costs nothing until
        then; it must not raise); returns the way to stop. Not called if already cancelled."""
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    @property
    def cancelled(self) -> bool:
        """Whether the batch was cancelled."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once the batch is cancelled."""
        await self._event.wait()


def _ignore_update(update: ToolUpdate) -> None:
    return None


@frozen
class ToolContext:
    """What `execute` receives: which call it is and whose (`identity`), whether to stop,
    where to report progress, and what the before-hooks handed over for it.

    `handoffs` are the values before-hooks gave with their decision (`Proceed(handoff=...)`,
    `Allow(handoff=...)`), in chain order; a tool asks for the one it knows by its type
    with `handoff(...)` (ExitPlanMode reads the plan review that way).
    """

    call_id: str
    cancel: CancelToken = field(default_factory=CancelToken)
    report: Callable[[ToolUpdate], None] = _ignore_update
    handoffs: tuple[object, ...] = ()
    identity: Identity = field(default_factory=Identity)

    @property
    def cancelled(self) -> bool:
        """Whether the batch this call belongs to was cancelled."""
        return self.cancel.cancelled

    def handoff(self, kind: type[H]) -> H | None:
        """The first value of type `kind` a before-hook handed over, or None."""
        for value in self.handoffs:
            if isinstance(value, kind):
                return value
        return None


class RuleMatch(Enum):
    """How far the argument part of a rule covers a call.

    Most calls have one subject and answer FULL or NONE. A compound shell command has one
    subject per segment: PARTIAL means some segments match, which is enough for a deny
    rule and never enough for an allow rule.
    """

    NONE = "none"
    PARTIAL = "partial"
    FULL = "full"

    @classmethod
    def of(cls, value: bool | RuleMatch) -> RuleMatch:
        """A matcher's answer as a RuleMatch (True is FULL, False is NONE)."""
        if isinstance(value, RuleMatch):
            return value
        return cls.FULL if value else cls.NONE


Execute: TypeAlias = Callable[[ToolContext], "Awaitable[ToolResult] | ToolResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecution:
    """A resolved call, ready to run once the executor allows it.

    `accesses=None` means "may touch anything": the call runs alone. `approval_rule` is the
    rule remembered when a person approves the call "for this session"; `matches_rule`
    tells whether the argument part of a rule `Tool(pattern)` covers this call.
    `matches_rules` is for calls made of parts (a compound shell command): whether several
    patterns together cover it, each part by at least one of them. Without it, allow
    rules count one at a time.
    """

    execute: Execute
    approval_rule: str
    accesses: Accesses | None = None
    display: Display | None = None
    description: str | None = None
    matches_rule: Callable[[str], bool | RuleMatch] | None = None
    matches_rules: Callable[[Sequence[str]], bool | RuleMatch] | None = None
    stop_batch_after_this: bool = False
    unverifiable: Callable[[], str | None] | None = None
    """Why what this call runs cannot be known before it runs (`$X f`, `bash s.sh`), or
    None; asked for lazily. Such a call asks whenever a deny or ask rule exists for it."""
    not_read_only: Callable[[], str | None] | None = None
    """For a tool that is not read-only as a whole: why this one call may change
    something, or None when it is proven to only read (a shell command of read-only
    programs, nothing redirected); asked for lazily. Plan mode lets proven calls run."""
    preview: Callable[[], Display | None] | None = None
    """The display to show a person who is asked about the call, when working it out needs
    I/O (an edit's real diff reads the file). Called only when someone is asked, never by
    `resolve`; None (or returning None) keeps `display`."""
    session_rules: Callable[[], Sequence[str]] | None = None
    """Broader rules a person may choose to remember for the session instead of the exact
    `approval_rule` (`Bash(git commit *)` for `git commit -m "x"`); asked for lazily."""
    harmless: Callable[[Sequence[str]], str | None] | None = None
    """Given the configured harmless commands (`[permissions] harmless_commands`), why this
    call is not one of them, or None when it is (a listed read-only command touching only
    the workspace); manual mode runs such calls unasked."""


Resolution: TypeAlias = ToolExecution | ToolResult


class BaseTool(ABC):
    """What the registry and the executor see. Subclass `Tool` (or `SchemaTool`) instead."""

    name: str
    description: str
    traits: ToolTraits = ToolTraits()
    """Class-level for most tools; per instance for tools described at run time (MCP)."""
    title: str | None = None
    """A short name for people ("Read file"); `tool_title()` derives one when unset."""
    output_schema: JsonSchema | None = None
    """The JSON schema of `ToolResult.structured`, for tools whose results have a shape."""

    @property
    @abstractmethod
    def parameters(self) -> JsonSchema:
        """The JSON schema of the arguments, as given to a model."""

    @abstractmethod
    def parse_args(self, raw: Any) -> Any:
        """Validate raw (already JSON-decoded) arguments; raise `InvalidArguments`."""

    @abstractmethod
    def resolve(self, args: Any) -> Resolution | Awaitable[Resolution]:
        """Turn validated arguments into an execution (or an error result). No I/O.

        To refuse the call, return `ToolResult.error(...)` or raise `ToolError`."""

    def description_vars(self) -> Mapping[str, object]:
        """Values for `${NAME}` placeholders in the description."""
        return {}


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def tool_title(tool: BaseTool) -> str:
    """The tool's title, or one made of its name ("TaskOutput" -> "Task output")."""
    if tool.title:
        return tool.title
    words = _WORD.findall(tool.name.rsplit("__", 1)[-1]) or [tool.name]
    text = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)
    return text[:1].upper() + text[1:]


class Tool(BaseTool, Generic[P]):
    """A tool whose arguments are a pydantic model (`params`), the schema the model sees."""

    params: ClassVar[type[BaseModel]]

    @property
    def parameters(self) -> JsonSchema:
        """The input view of `params` as a closed draft-07 schema."""
        return input_json_schema(self.params)

    def parse_args(self, raw: Any) -> P:
        """`raw` validated into `params`; `InvalidArguments` naming each bad field."""
        try:
            return self.params.model_validate(raw)  # type: ignore[return-value]
        except ValidationError as exc:
            raise InvalidArguments(
                self.name, pydantic_problems(exc, self.params.model_fields)
            ) from None

    @abstractmethod
    def resolve(self, args: P) -> Resolution | Awaitable[Resolution]:
        """See `BaseTool.resolve`; `args` is an instance of `params`."""


class SchemaTool(BaseTool):
    """A tool described only by a JSON schema (MCP tools, host tools).

    The schema is used as given (not closed); arguments are validated with `jsonschema`
    in the draft the schema declares.
    """

    def __init__(self, name: str, description: str, parameters: JsonSchema):
        self.name = name
        self.description = description
        self._parameters = parameters
        self._validator: JsonSchemaValidator | None = None

    @property
    def parameters(self) -> JsonSchema:
        """The schema as it was given."""
        return self._parameters

    def parse_args(self, raw: Any) -> dict[str, Any]:
        """`raw` checked against the schema; `InvalidArguments` naming each problem."""
        validator = self._validator
        if validator is None or validator.schema is not self._parameters:
            validator = self._validator = JsonSchemaValidator(self._parameters)
        problems = validator.problems(raw)
        if problems:
            raise InvalidArguments(self.name, problems)
        return dict(raw)
