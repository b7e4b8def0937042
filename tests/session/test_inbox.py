"""The agent's inbox: consumers attach, a waiting consumer makes the agent idle, messages
come out in order and wake whoever waits."""

from __future__ import annotations

import asyncio

from deftly.session.inbox import Inbox, InboxMessage


async def test_attach_and_detach_say_whether_anything_consumes() -> None:
    inbox = Inbox()
    assert not inbox.consumed
    first, second = inbox.attach(), inbox.attach()
    first()
    first()  # detaching twice counts once
    assert inbox.consumed
    second()
    assert not inbox.consumed


async def test_idle_only_while_a_consumer_waits_and_messages_keep_their_order() -> None:
    inbox = Inbox()
    assert not inbox.idle
    waiting = asyncio.create_task(inbox.get())
    while not inbox.idle:  # the task has started waiting
        await asyncio.sleep(0)
    inbox.put(InboxMessage("one", {"kind": "cron_job", "job_id": "a"}))
    inbox.put(InboxMessage("two"))
    got = await waiting
    assert (got.text, got.kind) == ("one", "cron_job")
    assert not inbox.idle
    assert len(inbox) == 1
    assert inbox.take() == InboxMessage("two")
    assert inbox.take() is None
    assert InboxMessage("x").kind == ""


async def test_a_cancelled_wait_leaves_the_agent_busy_and_the_message_queued() -> None:
    inbox = Inbox()
    waiting = asyncio.create_task(inbox.get())
    while not inbox.idle:
        await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert not inbox.idle
    inbox.put(InboxMessage("later"))
    assert (await inbox.get()).text == "later"
