"""Answering a mounted server's elicitation through the calling agent's `QuestionDesk`.

Accepted answers go back typed and checked (`elicitation.typed_answers`); dismissed
questions are a "decline". Where nobody can answer (no call in flight, no answerer), the
server gets an error and the call's result a note saying how to make it answerable.
"""

from __future__ import annotations

import mcp.types as mt

from deftly.contract.tool import ToolContext
from deftly.features.mcp.elicitation import AnswerProblem, form_request, typed_answers
from deftly.session.questions import QuestionDesk, QuestionsUnsupported, QuestionWithdrawn

Outcome = tuple[mt.ElicitResult | mt.ErrorData, str | None]


def _unanswerable(server: str, message: str, why: str) -> Outcome:
    note = (
        f'The MCP server "{server}" asked a question nobody here could answer ({why}): '
        f'"{message}". It got no answer, so its result may be incomplete. To make such '
        "questions answerable, run deftly with a terminal (not in print or auto mode), or "
        "give the library an answerer: Runtime(answerer=...)."
    )
    error = mt.ErrorData(
        code=mt.INVALID_REQUEST,
        message=f"deftly could not ask its user ({why}); the question was not shown to anyone.",
    )
    return error, note


async def elicit(
    server: str,
    params: mt.ElicitRequestParams,
    ctx: ToolContext | None,
    desk: QuestionDesk | None,
) -> Outcome:
    """Put `params` to the person behind `desk` for the call `ctx` (see the module)."""
    if not isinstance(params, mt.ElicitRequestFormParams):
        url = getattr(params, "url", "")
        return _unanswerable(server, f"{params.message} {url}".strip(), "deftly asks only forms")
    if ctx is None:
        return _unanswerable(server, params.message, "it asked outside any tool call")
    if desk is None or not desk.available:
        return _unanswerable(server, params.message, "no one is there to answer")
    schema = params.requested_schema
    schema_dict = schema if isinstance(schema, dict) else schema.model_dump(exclude_none=True)
    request = form_request(
        params.message,
        schema_dict,
        call_id=ctx.call_id,
        tool=f"mcp:{server}",
        identity=ctx.identity,
    )
    try:
        answers = await desk.ask_until(request, ctx.cancel)
    except QuestionWithdrawn:
        return mt.ElicitResult(action="cancel"), None
    except QuestionsUnsupported:
        return _unanswerable(server, params.message, "this front end cannot ask questions")
    if not answers:
        return mt.ElicitResult(action="decline"), None
    try:
        content = typed_answers(request, answers)
    except AnswerProblem as exc:
        note = (
            f'The answer to the MCP server "{server}"\'s question did not fit its form ({exc}), '
            "so the server was told the user declined."
        )
        return mt.ElicitResult(action="decline"), note
    return mt.ElicitResult(action="accept", content=content), None
