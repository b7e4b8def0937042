"""Where the cron tools exist: only while something consumes the main agent's inbox. Plan
mode refuses Create and Delete (by their trait) and lets List run; EnterPlanMode mentions
the cron refusal only when the cron tools are offered."""

from __future__ import annotations

from typing import Any

from deftly.features import BUILTIN_FEATURES
from deftly.features.cron import ManualClock
from tests.cron.helpers import at, cron_runtime

CRON_TOOLS = {"CronCreate", "CronDelete", "CronList"}
CLOCK_START = at(2024, 5, 1, 10, 0)


def names(runtime: Any) -> set[str]:
    return {tool.name for tool in runtime.tools()}


def enter_plan_description(runtime: Any) -> str:
    (tool,) = [t for t in runtime.tools() if t.name == "EnterPlanMode"]
    return str(tool.description)


async def test_absent_until_something_consumes_the_inbox(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, ManualClock(CLOCK_START), attach=False)
    assert not CRON_TOOLS & names(runtime)
    assert not CRON_TOOLS & {t.name for t in runtime.model_tools().tools}
    refused = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "x"})
    assert refused.is_error and "nothing here runs the prompts" in refused.text
    detach = runtime.agent.inbox.attach()
    assert names(runtime) >= CRON_TOOLS
    assert not (await runtime.call("CronList", {})).is_error
    detach()
    assert not CRON_TOOLS & names(runtime)


async def test_plan_mode_refuses_create_and_delete_and_lets_list_run(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, ManualClock(CLOCK_START))
    created = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "x"})
    ident = created.text.splitlines()[0].removeprefix("id: ")
    assert not (await runtime.call("EnterPlanMode", {})).is_error
    create = await runtime.call("CronCreate", {"cron": "0 10 * * *", "prompt": "y"})
    assert create.is_error and "CronCreate is not available in plan mode" in create.text
    delete = await runtime.call("CronDelete", {"id": ident})
    assert delete.is_error and "CronDelete is not available in plan mode" in delete.text
    listed = await runtime.call("CronList", {})
    assert not listed.is_error and listed.text.startswith("cron_jobs: 1\n")


async def test_enter_plan_mode_mentions_cron_only_when_the_cron_tools_are_offered(
    make_runtime: Any,
) -> None:
    runtime = await cron_runtime(make_runtime, ManualClock(CLOCK_START), attach=False)
    without = enter_plan_description(runtime)
    assert "Cron" not in without and "cron" not in without
    assert "Stopping background tasks (TaskStop) is refused." in without
    detach = runtime.agent.inbox.attach()
    with_cron = enter_plan_description(runtime)
    assert "Creating or deleting scheduled jobs (CronCreate, CronDelete) is refused" in with_cron
    assert "CronList" not in with_cron  # it runs in plan mode
    detach()
    assert enter_plan_description(runtime) == without


async def test_enter_plan_mode_leaves_out_task_stop_when_it_is_not_offered(
    make_runtime: Any,
) -> None:
    runtime = await make_runtime(
        features=list(BUILTIN_FEATURES), config={"tools": {"disabled": ["TaskStop"]}}
    )
    text = enter_plan_description(runtime)
    assert "TaskStop" not in text
    assert "every other write is refused.\n- Reading and searching" in text
