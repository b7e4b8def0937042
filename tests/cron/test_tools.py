"""CronCreate, CronList and CronDelete through the runtime (reference cases 60), with the
clock in Berlin local time: outputs, errors, approval rules, sub-agents, the config table."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from deftly.contract.errors import ConfigError
from deftly.execution.calls import Outcome, ToolCall
from deftly.features.cron import CronJob, ManualClock
from deftly.features.cron.feature import FEATURE
from deftly.features.cron.ids import is_job_id
from deftly.policy.permissions.decision import Verdict
from deftly.policy.rules import glob_matches, parse_rule
from tests.cron.helpers import at, cron_runtime, job_id, service

NOW = at(2024, 5, 1, 10, 0, 20)
ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}"
MAIN_ONLY = "Cron tools are only supported by the main agent"


def clock() -> ManualClock:
    return ManualClock(NOW)


async def test_create_normalises_the_expression_and_answers_the_fields(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    created = await runtime.call("CronCreate", {"cron": "  */5\n*\t*\t*\t*  ", "prompt": "ping"})
    assert not created.is_error, created.text
    lines = created.text.split("\n")
    assert re.fullmatch(r"id: [0-9A-HJKMNP-TV-Z]{26}", lines[0])
    assert lines[1:4] == ["cron: */5 * * * *", "humanSchedule: every 5 minutes", "recurring: true"]
    assert re.fullmatch(f"nextFireAt: {ISO}", lines[4])
    assert len(lines) == 5
    # 10:05 Berlin (summer time), plus this job's jitter of less than 30 seconds.
    assert lines[4].startswith("nextFireAt: 2024-05-01T10:05:") and lines[4].endswith("+02:00")
    (job,) = service(runtime).jobs()
    assert job.cron == "*/5 * * * *" and job.prompt == "ping" and job.created_at == NOW
    assert created.description == "Scheduling cron */5 * * * *"


async def test_create_has_an_approval_rule_of_its_arguments_that_matches_it(
    make_runtime: Any,
) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    args = {"cron": "*/5  * * * *", "prompt": 'say "hi"', "recurring": False}
    created = await runtime.call("CronCreate", args)
    rule = created.approval_rule
    assert rule is not None and rule.startswith("CronCreate(")
    assert r"\*/5 \* \* \* \*" in rule
    subject = json.dumps(
        {"cron": "*/5 * * * *", "prompt": 'say "hi"', "recurring": False},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    parsed = parse_rule(rule)
    assert glob_matches(subject, parsed.args or "")
    assert created.description == "Scheduling one-shot */5 * * * *"


async def test_permission_rules_match_create_by_its_json(make_runtime: Any) -> None:
    config = {"permissions": {"deny": ['CronCreate(*"recurring":true*)'], "allow": ["CronCreate"]}}
    runtime = await cron_runtime(make_runtime, clock(), config=config)
    recurring = await runtime.explain("CronCreate", {"cron": "0 9 * * *", "prompt": "x"})
    assert recurring.verdict is Verdict.DENY
    once = await runtime.explain(
        "CronCreate", {"cron": "0 9 * * *", "prompt": "x", "recurring": False}
    )
    assert once.verdict is Verdict.APPROVE
    refused = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "x"})
    assert refused.is_error and service(runtime).jobs() == []


async def test_create_refuses_what_cannot_be_scheduled_before_anything_runs(
    make_runtime: Any,
) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    cases = {
        "not a cron": "The cron expression cannot be used: a cron expression has exactly 5 "
        "fields (minute hour day-of-month month day-of-week); this one has 3.",
        "0 0 31 2 *": 'The cron expression "0 0 31 2 *" never matches within the next 5 years',
        "61 * * * *": "the minute field's value 61 is out of range",
    }
    for cron, says in cases.items():
        result = await runtime.call("CronCreate", {"cron": cron, "prompt": "ping"})
        assert result.is_error and says in result.text, result.text
        assert result.outcome == Outcome.SYNTHETIC  # refused at resolve: nothing ran
    assert service(runtime).jobs() == []


async def test_the_prompt_is_limited_in_utf8_bytes(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    wide = "你" * 3000  # 3000 characters (the schema allows 8192), 9000 bytes
    result = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": wide})
    assert result.is_error
    assert "The prompt is 9000 bytes in UTF-8, more than the 8192" in result.text
    empty = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": ""})
    assert empty.is_error  # the schema's minLength
    ok = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "é" * 4096})
    assert not ok.is_error  # exactly 8192 bytes


async def test_a_one_shot_more_than_350_days_away_is_refused(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())  # 1 May 2024
    past = await runtime.call(
        "CronCreate", {"cron": "0 9 30 4 *", "prompt": "x", "recurring": False}
    )
    assert past.is_error
    assert 'The one-shot "0 9 30 4 *" would first fire on 2025-04-30T09:00:00.000+02:00' in (
        past.text
    )
    assert "already passed this year" in past.text
    recurring = await runtime.call("CronCreate", {"cron": "0 9 30 4 *", "prompt": "x"})
    assert not recurring.is_error  # a yearly job may wait a year


async def test_the_job_cap_is_checked_at_resolve(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock(), cron={"max_jobs": 3})
    for n in range(3):
        assert not (
            await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": f"{n}"})
        ).is_error
    full = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "one more"})
    assert full.is_error
    assert "already holds 3 cron jobs" in full.text and "CronDelete" in full.text
    assert len(service(runtime).jobs()) == 3


async def test_the_default_cap_is_fifty(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    jobs = service(runtime)
    for n in range(50):
        jobs.add(CronJob(id=f"{n:08x}", cron="0 9 * * *", prompt="p", created_at=NOW))
    full = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "one more"})
    assert full.is_error and "already holds 50 cron jobs" in full.text
    tool = runtime.agent.registry.get("CronCreate").tool
    assert "at most 50 jobs per session" in tool.description


async def test_two_creates_in_one_batch_respect_the_cap(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock(), cron={"max_jobs": 1})
    results = await runtime.run_batch(
        [
            ToolCall("a", "CronCreate", {"cron": "0 9 * * *", "prompt": "a"}),
            ToolCall("b", "CronCreate", {"cron": "0 9 * * *", "prompt": "b"}),
        ]
    )
    assert [r.is_error for r in results] == [False, True]
    assert len(service(runtime).jobs()) == 1


async def test_list_when_empty(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    listed = await runtime.call("CronList", {})
    assert listed.text == "cron_jobs: 0\nNo cron jobs scheduled."


async def test_list_shows_each_job(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    created = await runtime.call("CronCreate", {"cron": "*/5 * * * *", "prompt": "hi"})
    listed = await runtime.call("CronList", {})
    lines = listed.text.split("\n")
    assert lines[0] == "cron_jobs: 1"
    assert lines[1] == f"id: {job_id(created.text)}"
    assert lines[2:5] == ["cron: */5 * * * *", "humanSchedule: every 5 minutes", 'prompt: "hi"']
    assert re.fullmatch(f"nextFireAt: {ISO}", lines[5])
    assert lines[5] == created.text.split("\n")[4]  # the same next fire as CronCreate said
    assert lines[6:] == ["recurring: true", "ageDays: 0.00", "stale: false"]


async def test_list_separates_jobs_and_keeps_their_order(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    for prompt in ("first", "second"):
        await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": prompt})
    text = (await runtime.call("CronList", {})).text
    assert text.startswith("cron_jobs: 2\n")
    first, second = text.removeprefix("cron_jobs: 2\n").split("\n---\n")
    assert 'prompt: "first"' in first and 'prompt: "second"' in second


async def test_list_shows_age_staleness_unparsable_jobs_and_long_prompts(
    make_runtime: Any,
) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    jobs = service(runtime)
    jobs.add(CronJob(id="0000000a", cron="0 9 * * *", prompt="old", created_at=NOW - 8 * 86400))
    jobs.add(CronJob(id="0000000b", cron="garbage", prompt="broken", created_at=NOW))
    long_prompt = "a" * 199 + "é" + "tail"  # the 200th byte is inside "é"
    jobs.add(CronJob(id="0000000c", cron="0 9 * * *", prompt=long_prompt, created_at=NOW))
    records = (await runtime.call("CronList", {})).text.split("\n---\n")
    assert "ageDays: 8.00" in records[0] and "stale: true" in records[0]
    assert "humanSchedule: garbage" in records[1] and "nextFireAt: null" in records[1]
    assert f'prompt: "{"a" * 199}"…(truncated)' in records[2]


async def test_list_prompt_json_keeps_unicode_and_escapes_quotes(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": 'dis "bonjour"\nà Zoë'})
    text = (await runtime.call("CronList", {})).text
    assert 'prompt: "dis \\"bonjour\\"\\nà Zoë"' in text


async def test_delete(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    created = await runtime.call("CronCreate", {"cron": "0 9 * * *", "prompt": "x"})
    ident = job_id(created.text)
    bad = await runtime.call("CronDelete", {"id": "xyz"})
    assert bad.is_error and bad.outcome == Outcome.SYNTHETIC
    assert bad.text == '"xyz" is not a cron job id: ids are 26-character ULIDs, as CronCreate ' + (
        "and CronList show them."
    )
    absent = await runtime.call("CronDelete", {"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})
    assert absent.is_error
    assert absent.text.startswith("There is no cron job with the id 01ARZ3NDEKTSV4RRFFQ69G5FAV")
    deleted = await runtime.call("CronDelete", {"id": ident})
    assert not deleted.is_error
    assert deleted.text == f"Deleted cron job {ident}: it will not fire again."
    assert service(runtime).jobs() == []
    again = await runtime.call("CronDelete", {"id": ident})
    assert again.is_error


async def test_delete_takes_legacy_eight_hex_ids(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    service(runtime).add(CronJob(id="deadbeef", cron="0 9 * * *", prompt="x", created_at=NOW))
    assert is_job_id("deadbeef") and is_job_id("DEADBEEF") and not is_job_id("deadbeefa")
    deleted = await runtime.call("CronDelete", {"id": "deadbeef"})
    assert not deleted.is_error and service(runtime).jobs() == []


async def test_every_cron_tool_refuses_a_sub_agent(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock())
    child = await runtime.agent.spawn_child("helper")
    child.inbox.attach()  # offered to it, so the call reaches the tool
    calls = [
        ToolCall("1", "CronCreate", {"cron": "0 9 * * *", "prompt": "x"}),
        ToolCall("2", "CronList", {}),
        ToolCall("3", "CronDelete", {"id": "deadbeef"}),
    ]
    for result in await child.run_batch(calls):
        assert result.is_error and result.text.startswith(MAIN_ONLY), result.text
        assert result.outcome == Outcome.SYNTHETIC


async def test_switched_off_by_config_the_tools_say_so(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock(), cron={"enabled": False})
    for name, args in (
        ("CronCreate", {"cron": "0 9 * * *", "prompt": "x"}),
        ("CronList", {}),
        ("CronDelete", {"id": "deadbeef"}),
    ):
        result = await runtime.call(name, args)
        assert result.is_error and "`[cron] enabled = false`" in result.text


async def test_the_config_table_is_checked(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock(), cron={"poll_interval": 0.25})
    settings = service(runtime).settings
    assert (settings.poll_interval, settings.max_jobs, settings.no_jitter) == (0.25, 50, False)
    assert FEATURE.config_tables == {"cron": type(settings)}


async def test_no_jitter_fires_at_the_ideal_time(make_runtime: Any) -> None:
    runtime = await cron_runtime(make_runtime, clock(), cron={"no_jitter": True})
    created = await runtime.call("CronCreate", {"cron": "*/5 * * * *", "prompt": "x"})
    assert "nextFireAt: 2024-05-01T10:05:00.000+02:00" in created.text


async def test_a_misspelt_cron_setting_is_an_error_with_a_suggestion(make_runtime: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        await cron_runtime(make_runtime, clock(), cron={"poll_intervall": 1})
    assert "did you mean 'poll_interval'" in str(caught.value)
