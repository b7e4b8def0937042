"""NotifyUser: a short message for the person, emitted as a "notify" notice on the
session's event bus (the terminal of `deftly run`, a desktop notification, an MCP log
message when served)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deftly.contract.accesses import Accesses
from deftly.contract.describe import describe
from deftly.contract.display import GenericDisplay
from deftly.contract.result import ToolResult
from deftly.contract.tool import Tool, ToolContext, ToolExecution, ToolTraits
from deftly.execution.events import EventBus, RuntimeNotice
from deftly.features.notify.notification import NOTICE_KIND, Notification, Urgency

MAX_MESSAGE = 500
"""The longest message: a notification is read at a glance; details go in the reply."""
MAX_TITLE = 80


class NotifyUserParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(
        min_length=1,
        max_length=MAX_MESSAGE,
        description="What the person should know, in one or two sentences.",
    )
    title: str | None = Field(
        default=None, max_length=MAX_TITLE, description="A few words heading the message."
    )
    urgency: Urgency = Field(
        default="normal",
        description="low: shown only; normal: shown with the terminal bell and a desktop "
        "notification; high: the same, and the desktop notification stays until dismissed.",
    )


class NotifyUserTool(Tool[NotifyUserParams]):
    """Tells the person something now, without ending the turn (read-only: it changes
    nothing, so it is never asked about)."""

    name = "NotifyUser"
    title = "Notify the user"
    description = describe("notify_user.md")
    params = NotifyUserParams
    traits = ToolTraits(read_only=True)

    def __init__(self, events: EventBus) -> None:
        self.events = events

    def description_vars(self) -> dict[str, object]:
        """The message limit the tool enforces."""
        return {"MAX_MESSAGE": MAX_MESSAGE}

    def resolve(self, args: NotifyUserParams) -> ToolExecution | ToolResult:
        """A blank message is refused; the call touches nothing."""
        message = args.message.strip()
        if not message:
            return ToolResult.error(
                "The message is blank: nothing to tell. Give the person a sentence to read."
            )
        title = " ".join(args.title.split()) if args.title else None
        note = Notification(message, title or None, args.urgency)

        def execute(ctx: ToolContext) -> ToolResult:
            return self._send(note, ctx)

        return ToolExecution(
            accesses=Accesses.none(),
            description="Notifying the user",
            display=GenericDisplay(summary=note.text.splitlines()[0]),
            approval_rule=self.name,
            execute=execute,
        )

    def _send(self, note: Notification, ctx: ToolContext) -> ToolResult:
        self.events.emit(RuntimeNotice(NOTICE_KIND, note.text, note, ctx.identity))
        if note.channels:
            return ToolResult.ok(
                "The person was notified: " + "; ".join(note.channels) + ". "
                "Go on with the task; there is no reply to wait for."
            )
        return ToolResult.ok(
            "The notification was emitted as a notice event of this session, but no "
            "terminal, client or desktop reported showing it, so the person may not have "
            "seen it. If it matters, say it in your reply too."
        )
