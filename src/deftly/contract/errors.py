"""Errors that cross the contract boundary.

Each carries a message written for its reader (a model or a person): what happened and what
to do next. None of them is ever shown with a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence


class DeftlyError(Exception):
    """Base class for every error deftly raises on purpose."""


class ToolError(DeftlyError):
    """The one exception a tool raises to fail a call: its message is the error result.

    Raise it from `resolve` or `execute` (or anything they call) when returning
    `ToolResult.error(...)` is awkward, e.g. deep in a helper. The executor turns it into
    `ToolResult.error(message)` with the message as is: no "failed" wording, no exception
    name, no traceback. So write the message for the model: what happened and what to do
    next. Any *other* exception escaping a tool is a bug in the tool: it becomes a short
    error result naming the exception, and is logged.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        """The text of the error result, for the model."""


class PathSecurityError(ToolError):
    """A path argument was refused by the path policy, before anything was touched.

    Raised from `resolve`; the executor turns it into an error result with this message
    verbatim (it is a `ToolError`), and nobody is asked for approval.
    """

    def __init__(self, code: str, raw_path: str, message: str, resolved: str | None = None):
        super().__init__(message)
        self.code = code
        self.raw_path = raw_path
        self.resolved = resolved


class InvalidArguments(ToolError):
    """Arguments did not match the tool's schema. `problems` are short, human sentences.

    Raised by `parse_args` (and, for checks a schema cannot say, by `resolve`): the model
    reads the message and fixes its call.
    """

    def __init__(self, tool: str, problems: Sequence[str]):
        self.tool = tool
        self.problems = list(problems) or ["the arguments do not match the schema"]
        joined = "; ".join(self.problems)
        super().__init__(
            f'Invalid arguments for tool "{tool}": {joined}. '
            "Fix the arguments to match the tool's schema and call it again."
        )


class ToolDeclined(DeftlyError):
    """Raised by a tool's constructor or factory to say "do not load me here".

    The tool is then absent from the registry (not broken); the reason is kept as a
    diagnostic. This is the reference's SkipThisTool.
    """


class ToolLoadError(DeftlyError):
    """A tool could not be built: a missing dependency, a bad "module:Class" path, ..."""


class ConfigError(DeftlyError):
    """The configuration could not be read or does not validate."""
