"""The `<agent_swarm_result>` block (the reference's case 53): counts, the resume hint only
when an unfinished sub-agent can be resumed, one `<subagent>` per entry in order."""

from __future__ import annotations

from deftly.features.swarm.plan import Entry
from deftly.features.swarm.render import RESUME_HINT, Report, render_swarm
from deftly.session.subagents import ChildOutcome


def completed(agent_id: str, text: str) -> ChildOutcome:
    return ChildOutcome(agent_id, "coder", "completed", text=text)


def test_one_completed_and_one_timed_out() -> None:
    reports = [
        Report(
            Entry("Review src/a.ts", item="src/a.ts"),
            "agent-coder-1",
            completed("agent-coder-1", "imports are stable"),
        ),
        Report(
            Entry("Review src/b.ts", item="src/b.ts"),
            "agent-coder-2",
            ChildOutcome("agent-coder-2", "coder", "timed_out", error="Agent timed out after 30s."),
        ),
    ]
    assert render_swarm(reports) == (
        "<agent_swarm_result>\n"
        "<summary>completed: 1, failed: 1</summary>\n"
        f"<resume_hint>{RESUME_HINT}</resume_hint>\n"
        '<subagent agent_id="agent-coder-1" item="src/a.ts" outcome="completed">'
        "imports are stable</subagent>\n"
        '<subagent agent_id="agent-coder-2" item="src/b.ts" outcome="failed">'
        "Agent timed out after 30s.</subagent>\n"
        "</agent_swarm_result>"
    )
    assert "resume_agent_ids" in RESUME_HINT and "agent_id" in RESUME_HINT


def test_all_completed_has_no_hint() -> None:
    reports = [
        Report(Entry("p a", item="a"), "s-1", completed("s-1", "  fine\n")),
        Report(Entry("p b", item="b"), "s-2", completed("s-2", "")),
    ]
    text = render_swarm(reports)
    assert "<resume_hint>" not in text and "<summary>completed: 2, failed: 0</summary>" in text
    assert '<subagent agent_id="s-1" item="a" outcome="completed">fine</subagent>' in text
    assert "finished without a final message" in text


def test_no_hint_when_no_unfinished_sub_agent_has_an_id() -> None:
    reports = [
        Report(Entry("p a", item="a"), "s-1", completed("s-1", "ok")),
        Report(Entry("p b", item="b"), "s-2", None, stopped_by_user=True),
    ]
    text = render_swarm(reports)
    assert "<resume_hint>" not in text
    assert "<summary>completed: 1, failed: 0, aborted: 1</summary>" in text
    assert (
        '<subagent item="b" state="not_started" outcome="aborted">'
        "The user interrupted the swarm before this sub-agent started.</subagent>"
    ) in text


def test_stopped_resumed_and_escaped() -> None:
    reports = [
        Report(
            Entry("continue", item='<a & "b">', resume_id="s-0"),
            "s-0",
            ChildOutcome("s-0", "coder", "cancelled", error="Stopped by the user."),
        ),
        Report(
            Entry("p", item="line one\nline two"),
            "s-1",
            ChildOutcome("s-1", "coder", "failed"),
        ),
    ]
    text = render_swarm(reports)
    assert (
        '<subagent mode="resume" agent_id="s-0" item="&lt;a &amp; &quot;b&quot;&gt;" '
        'state="started" outcome="aborted">Stopped by the user.</subagent>'
    ) in text
    assert 'item="line one&#10;line two" outcome="failed">' in text
    assert "failed without saying why" in text
    assert "<resume_hint>" in text
    assert "<summary>completed: 0, failed: 1, aborted: 1</summary>" in text


def test_a_resume_not_started_keeps_its_id() -> None:
    [line] = [
        line
        for line in render_swarm([Report(Entry("go on", resume_id="s-9"), "s-9", None)]).split("\n")
        if line.startswith("<subagent")
    ]
    assert line.startswith('<subagent mode="resume" agent_id="s-9" state="not_started"')
    assert "The swarm was stopped before this sub-agent started." in line
