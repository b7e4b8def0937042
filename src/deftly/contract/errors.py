"""Errors that cross the contract boundary.

Each carries a message written for its reader (a model or a person): what happened and what
to do next. None of them is ever shown with a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence


class DeftlyError(Exception):
    """Base class for every error deftly raises on purpose."""


class PathSecurityError(DeftlyError):
    """A path argument was refused by the path policy, before anything was touched.

    Raised from `resolve`; the executor turns it into an error result with this message
    verbatim, and nobody is asked for approval.
    """

    def __init__(self, code: str, raw_path: str, message: str, resolved: str | None = None):
        super().__init__(message)
        self.code = code
        self.raw_path = raw_path
        self.resolved = resolved
        self.message = message


class InvalidArguments(DeftlyError):
    """Arguments did not match the tool's schema. `problems` are short, human sentences."""

    def __init__(self, tool: str, problems: Sequence[str]):
        self.tool = tool
        self.problems = list(problems) or ["the arguments do not match the schema"]
        super().__init__(self.message)

    @property
    def message(self) -> str:
        joined = "; ".join(self.problems)
        return (
            f'Invalid arguments for tool "{self.tool}": {joined}. '
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
