"""One failure convention: a tool returns `ToolResult.error(...)` or raises `ToolError`,
from `resolve` or `execute`, and the model reads the message as written; any other
exception is a bug, reported briefly and logged with its traceback."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from deftly.contract import Accesses, CancelToken, ToolContext, ToolExecution, ToolResult
from deftly.contract.errors import InvalidArguments, PathSecurityError, ToolError
from deftly.execution import Outcome
from tests.execution.tools import Free, WorkTool, calls, executor

MESSAGE = 'The branch "main" is protected; push to a new branch instead.'


def _deep_helper() -> None:
    raise ToolError(MESSAGE)


def raise_in_execute(error: Exception) -> Any:
    def work(ctx: ToolContext) -> ToolResult:
        raise error

    return work


@pytest.mark.parametrize(
    "error",
    [
        ToolError(MESSAGE),
        PathSecurityError("PATH_SENSITIVE", ".env", MESSAGE),
        InvalidArguments("Work", ["x must be positive"]),
    ],
    ids=["ToolError", "PathSecurityError", "InvalidArguments"],
)
async def test_a_tool_error_from_execute_is_the_result_as_written(
    tmp_path: Path, error: ToolError
) -> None:
    run = executor(tmp_path, WorkTool("Work", raise_in_execute(error)))
    [result] = await run.run_batch(calls("Work"))
    assert result.is_error and result.outcome is Outcome.EXECUTED
    assert result.text == error.message
    assert "failed" not in result.text and type(error).__name__ not in result.text


async def test_a_tool_error_from_resolve_is_the_result_as_written(tmp_path: Path) -> None:
    def resolve(args: Free) -> ToolExecution:
        _deep_helper()
        raise AssertionError("unreachable")

    ran: list[str] = []
    run = executor(tmp_path, WorkTool("Work", lambda ctx: ran.append("x"), resolve=resolve))
    asked: list[str] = []

    async def gate(ctx: Any) -> None:
        asked.append(ctx.call.name)

    run.before.add("gate", gate)
    [result] = await run.run_batch(calls("Work"))
    assert result.is_error and result.outcome is Outcome.RESOLUTION_FAILED
    assert result.text == MESSAGE
    assert asked == [] and ran == []  # nobody asked, nothing ran


async def test_an_async_execute_may_raise_it_too(tmp_path: Path) -> None:
    async def work(ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(0)
        _deep_helper()
        raise AssertionError("unreachable")

    run = executor(tmp_path, WorkTool("Work", work))
    [result, other] = await run.run_batch(calls("Work", "Missing"))
    assert result.text == MESSAGE and result.is_error
    assert other.outcome is Outcome.PREFLIGHT_REJECTED  # the rest of the batch ran


async def test_a_returned_error_result_is_the_same_convention(tmp_path: Path) -> None:
    run = executor(tmp_path, WorkTool("Work", lambda ctx: ToolResult.error(MESSAGE)))
    [result] = await run.run_batch(calls("Work"))
    assert result.is_error and result.text == MESSAGE


async def test_any_other_exception_is_a_short_error_and_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = executor(tmp_path, WorkTool("Work", raise_in_execute(KeyError("missing key"))))
    with caplog.at_level(logging.DEBUG, logger="deftly.execution.executor"):
        [result] = await run.run_batch(calls("Work"))
    assert result.is_error and result.outcome is Outcome.EXECUTED
    assert result.text == "Tool \"Work\" failed: KeyError: 'missing key'"
    assert "Traceback" not in result.text
    logged = [r for r in caplog.records if r.exc_info and "Work" in r.getMessage()]
    assert logged and isinstance(logged[0].exc_info[1], KeyError)  # type: ignore[index]


async def test_a_bug_in_resolve_says_the_call_could_not_be_prepared(tmp_path: Path) -> None:
    def resolve(args: Free) -> ToolExecution:
        raise ZeroDivisionError("division by zero")

    run = executor(tmp_path, WorkTool("Work", lambda ctx: None, resolve=resolve))
    [result] = await run.run_batch(calls("Work"))
    assert result.outcome is Outcome.RESOLUTION_FAILED
    assert result.text == (
        'Tool "Work" could not prepare the call: ZeroDivisionError: division by zero'
    )


async def test_a_tool_error_after_a_cancel_reports_the_cancel(tmp_path: Path) -> None:
    token = CancelToken()

    async def work(ctx: ToolContext) -> ToolResult:
        ctx.cancel.cancel("stop", by_user=True)
        raise ToolError("the command was interrupted")

    def resolve(args: Free) -> ToolExecution:
        return ToolExecution(approval_rule="Work", accesses=Accesses.none(), execute=work)

    run = executor(tmp_path, WorkTool("Work", work, resolve=resolve))
    [result] = await run.run_batch(calls("Work"), cancel=token)
    assert result.is_error and "The user interrupted" in result.text


def test_the_errors_keep_their_fields_and_messages() -> None:
    refused = PathSecurityError("PATH_OUTSIDE", "../x", "outside", resolved="/x")
    assert (refused.code, refused.raw_path, refused.resolved, refused.message) == (
        "PATH_OUTSIDE",
        "../x",
        "/x",
        "outside",
    )
    assert str(refused) == "outside"
    invalid = InvalidArguments("Read", ["path is required"])
    assert invalid.message == str(invalid)
    assert invalid.message.startswith('Invalid arguments for tool "Read": path is required.')
    assert isinstance(refused, ToolError) and isinstance(invalid, ToolError)


class Refused(ToolError):
    """A feature's own error type, with a field of its own (as SkillError has a code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


async def test_a_features_own_tool_error_subclass_is_the_result_as_written(
    tmp_path: Path,
) -> None:
    run = executor(tmp_path, WorkTool("Work", raise_in_execute(Refused("task.limit", MESSAGE))))
    [result] = await run.run_batch(calls("Work"))
    assert result.is_error and result.text == MESSAGE
