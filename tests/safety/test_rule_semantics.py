"""Rules mean what they say (issue 10 §1): a deny rule for a command stops it however it is
spelt, and an allow rule never covers what it does not name.

The runtime tests run real commands through `Runtime` (real bash, real files) and check the
file a denied command would delete is still there.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly import RuleMatch, Runtime
from deftly.features.shell.rules import CommandMatcher, split_command

FULL, PARTIAL, NONE = RuleMatch.FULL, RuleMatch.PARTIAL, RuleMatch.NONE


def m(command: str, pattern: str) -> RuleMatch:
    return CommandMatcher(command).one(pattern)


# -- through the runtime: the file survives ---------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo v | xargs rm",
        "echo v | xargs -I{} rm {}",
        "printf 'v\\0' | xargs -0 rm",
        "echo v | xargs -n1 rm",
        "coproc rm v",
        "/bin/rm v",
        "/usr/bin/rm v",
        "\\rm v",
        "command rm v",
        "env rm v",
        "exec rm v",
        "find . -name v -exec rm {} \\;",
        "find . -name v -execdir rm {} +",
        "true && r''m v",
    ],
)
async def test_a_deny_rule_stops_every_spelling(
    make_runtime: Any, workspace: Path, command: str
) -> None:
    (workspace / "v").write_text("keep me")
    config = {"permissions": {"mode": "yolo", "deny": ["Bash(rm *)"]}}
    rt: Runtime = await make_runtime(config=config, approve_asks=True)
    result = await rt.call("Bash", {"command": command})
    assert result.is_error and "Bash(rm *)" in result.text, result.text
    assert (workspace / "v").read_text() == "keep me"


async def test_rm_rf_star_stops_absolute_and_nested_paths(
    make_runtime: Any, workspace: Path
) -> None:
    build = workspace / "src" / "build"
    build.mkdir(parents=True)
    (build / "out.o").write_text("x")
    config = {"permissions": {"mode": "yolo", "deny": ["Bash(rm -rf *)"]}}
    rt: Runtime = await make_runtime(config=config, approve_asks=True)
    for command in (f"rm -rf {build}", "rm -rf src/build", "cd src && rm -rf build/"):
        result = await rt.call("Bash", {"command": command})
        assert result.is_error and "Bash(rm -rf *)" in result.text, (command, result.text)
    assert (build / "out.o").exists()
    allowed = await rt.call("Bash", {"command": "rm src/build/out.o"})  # not -rf: yolo runs it
    assert not allowed.is_error and not (build / "out.o").exists()


@pytest.mark.parametrize(
    "command",
    [
        "X=rm; $X v",
        "$(echo rm) v",
        'cmd=rm; "$cmd" v',
        "echo 'rm v' | bash",
        "printf 'rm v' > s.sh; bash s.sh",
        "python3 -c 'import os; os.remove(\"v\")'",
        "echo 'import os; os.remove(\"v\")' | python3",
    ],
)
async def test_an_opaque_command_is_never_approved_by_an_allow_pattern(
    make_runtime: Any, workspace: Path, command: str
) -> None:
    (workspace / "v").write_text("keep me")
    config = {"permissions": {"mode": "manual", "allow": ["Bash(*)"]}}
    rt: Runtime = await make_runtime(config=config, approve_asks=False)  # nobody to ask
    decision = await rt.explain("Bash", {"command": command})
    assert decision.verdict.value != "approve", decision.reason
    result = await rt.call("Bash", {"command": command})
    assert result.is_error
    assert (workspace / "v").read_text() == "keep me"
    assert split_command(command).opaque  # and it says why


async def test_the_same_allow_rule_approves_a_static_command(
    make_runtime: Any, workspace: Path
) -> None:
    config = {"permissions": {"mode": "manual", "allow": ["Bash(echo *)"]}}
    rt: Runtime = await make_runtime(config=config, approve_asks=False)
    result = await rt.call("Bash", {"command": "echo /a/b/c"})
    assert not result.is_error and result.text.strip() == "/a/b/c"


# -- properties --------------------------------------------------------------------------------

RM = st.sampled_from(
    ["rm", "'rm'", '"rm"', "r''m", '"r"m', "\\rm", "/bin/rm", "/usr/bin/rm", "/bin/'rm'"]
)
WRAPPER = st.sampled_from(
    [
        "command ",
        "command -p ",
        "env ",
        "env A=1 ",
        "env -i ",
        "exec ",
        "nice ",
        "nice -n 5 ",
        "timeout 5 ",
        "timeout -s KILL 5 ",
        "sudo ",
        "sudo -u root ",
        "xargs ",
        "xargs -0 ",
        "xargs -I{} ",
        "xargs -n1 ",
        "nohup ",
        "/usr/bin/env ",
        "2>err ",
        "\\command ",
    ]
)
ARGS = st.sampled_from([" v", " -rf v", " -f /abs/path", " src/build", " -- -x"])
REDIRECT = st.sampled_from(["", " > out", " 2>&1", " >/dev/null", " 2>>err.log", " < in"])
CONTEXT = st.sampled_from(
    [
        "{}",
        "echo a; {}",
        "echo a && {}",
        "false || {}",
        "echo a | {}",
        "{} &",
        "{} & echo b",
        "echo a\n{}",
        "echo $({})",
        "echo `{}`",
        "bash -c {q}",
        "sh -c {q}",
        "eval {q}",
        "( {} )",
        "{{ {}; }}",
        "if true; then {}; fi",
        'echo "$({})"',
        "cat <({})",
    ]
)
SAFE = st.sampled_from(["git status", "ls -la", "echo hi", "cat notes.txt", "wc -l"])
SEPARATOR = st.sampled_from(["; ", " && ", " || ", " | ", " & ", "\n"])


@st.composite
def denied_command(draw: st.DrawFn) -> str:
    """`rm` spelt some way, behind wrappers, with arguments and redirections."""
    wrappers = "".join(draw(st.lists(WRAPPER, max_size=3)))
    lead = draw(st.sampled_from(["", "A=1 ", "PATH=/x:$PATH "]))  # only before the words
    if not lead and draw(st.booleans()) and not wrappers.startswith("2>"):
        lead = "coproc "
    core = lead + wrappers + draw(RM) + draw(ARGS) + draw(REDIRECT)
    for _ in range(draw(st.integers(0, 2))):
        shape = draw(CONTEXT)
        core = shape.format(core, q=shlex.quote(core))
        if shape.startswith("echo `"):
            break  # backticks do not nest without escaping
    return core


def compound(draw: st.DrawFn, hidden: str) -> str:
    before = draw(st.lists(SAFE, max_size=2))
    after = draw(st.lists(SAFE, max_size=2))
    parts = [*before, hidden, *after]
    line = parts[0]
    for part in parts[1:]:
        line += draw(SEPARATOR) + part
    return line


@settings(deadline=None, max_examples=400)
@given(st.data())
def test_a_deny_rule_for_rm_always_applies(data: st.DataObject) -> None:
    line = compound(data.draw, data.draw(denied_command()))
    assert m(line, "rm *") in (FULL, PARTIAL), (line, split_command(line))


@settings(deadline=None, max_examples=300)
@given(st.data())
def test_allow_rules_never_cover_an_unlisted_segment(data: st.DataObject) -> None:
    line = compound(data.draw, data.draw(denied_command()))
    allow = ["git status", "ls *", "echo *", "cat *", "wc *", "sh -c *", "bash -c *", "eval *"]
    matcher = CommandMatcher(line)
    assert matcher.together(allow) is not FULL, line
    for pattern in allow:
        assert matcher.one(pattern) is not FULL, (line, pattern)


@settings(deadline=None, max_examples=200)
@given(st.lists(SAFE, min_size=1, max_size=4), st.data())
def test_listed_segments_are_covered_however_they_are_joined(
    commands: list[str], data: st.DataObject
) -> None:
    line = commands[0]
    for command in commands[1:]:
        line += data.draw(SEPARATOR) + command
    allow = ["git status", "ls *", "echo *", "cat *", "wc *"]
    assert CommandMatcher(line).together(allow) is FULL, line


# -- rules that can match nothing are warnings; examples are checked at load ------------------


async def test_rules_that_can_match_nothing_are_warned_about(make_runtime: Any) -> None:
    deny = ["Bash( git status)", "Bash(npm:* x)", "Bsh(rm *)", "Bash()", "mcp__gh__*"]
    rt: Runtime = await make_runtime(config={"permissions": {"deny": deny}})
    warnings = [d.message for d in rt.diagnostics if d.source == "[permissions]"]
    assert any("'Bash( git status)' has spaces" in w for w in warnings), warnings
    assert any("'Bash(npm:* x)' has \":*\" before the end" in w for w in warnings)
    assert any('"Bsh(rm *)" names the tool "Bsh"' in w and 'mean "Bash"' in w for w in warnings)
    assert any("'Bash()' has an empty pattern, so it covers every Bash call" in w for w in warnings)
    assert not any("mcp__gh__*" in w for w in warnings)  # servers may come later
    assert len(warnings) == 4


async def test_a_clean_rule_list_gives_no_warning(make_runtime: Any) -> None:
    config = {"permissions": {"deny": ["Bash(rm -rf *)", "Read(secrets/**)"], "allow": ["Glob"]}}
    rt: Runtime = await make_runtime(config=config)
    assert [d for d in rt.diagnostics if d.source == "[permissions]"] == []


async def test_examples_that_hold_load_quietly(make_runtime: Any, workspace: Path) -> None:
    config = {
        "permissions": {
            "deny": [
                {
                    "rule": "Bash(rm -rf *)",
                    "match": ["rm -rf /abs", "rm -rf src/build", "echo x | xargs rm"],
                    "not_match": ["rm x", "ls -rf"],
                },
                {"rule": "Bash(npm run test:*)", "match": ["npm run test -- -x"]},
            ],
            "ask": [{"rule": "Write(secrets/**)", "match": ["secrets/a.txt"]}],
            "allow": [
                {"rule": "Edit(src/**)", "match": ["src/a.py"], "not_match": ["b.py"]},
                {"rule": "Bash(git status)", "not_match": ["git status && rm x"]},
                {"rule": "Read", "match": ['{"path": "any.txt", "n_lines": 3}']},
            ],
        }
    }
    rt: Runtime = await make_runtime(config=config)
    assert [d for d in rt.diagnostics if d.source == "[permissions]"] == []
    # plain strings and tables live side by side in one list
    texts = [entry.text for entry in rt.permissions.rules]
    assert "Bash(rm -rf *)" in texts and "Edit(src/**)" in texts


@pytest.mark.parametrize(
    ("kind", "item", "said"),
    [
        (
            "deny",
            {"rule": "Bash(rm *)", "match": ["ls x"]},
            "the deny rule \"Bash(rm *)\" should apply to 'ls x', but it does not",
        ),
        (
            "deny",
            {"rule": "Bash(rm *)", "not_match": ["/bin/rm x"]},
            "the deny rule \"Bash(rm *)\" should not apply to '/bin/rm x', but it does",
        ),
        (
            "allow",
            {"rule": "Bash(git *)", "match": ["git status | rm x"]},
            "should apply to 'git status | rm x', but it covers only part of it",
        ),
        (
            "allow",
            {"rule": "Bash(npm run test:*)", "match": ["npm run testing"]},
            "should apply to 'npm run testing', but it does not",
        ),
        (
            "ask",
            {"rule": "Write(src/**)", "not_match": ["src/deep/a.py"]},
            "the ask rule \"Write(src/**)\" should not apply to 'src/deep/a.py', but it does",
        ),
    ],
)
async def test_a_failing_example_is_a_load_error(
    workspace: Path, kind: str, item: dict[str, Any], said: str
) -> None:
    from deftly.contract.errors import ConfigError

    rt = Runtime(workspace, config={"permissions": {kind: [item]}}, plugins=False)
    with pytest.raises(ConfigError) as caught:
        await rt.start()
    message = str(caught.value)
    assert said in message, message
    assert "deftly permissions --test" in message  # how to look into it


async def test_a_failing_example_names_the_file_and_line(workspace: Path) -> None:
    from deftly.contract.errors import ConfigError

    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        "[permissions]\n"
        'deny = [\n  "Bash(curl *)",\n'
        '  { rule = "Bash(rm -rf *)", match = ["rm -rf /abs"], not_match = ["rm -rf x"] },\n]\n'
    )
    rt = Runtime(workspace, plugins=False)  # deny rules apply even in an untrusted folder
    with pytest.raises(ConfigError) as caught:
        await rt.start()
    message = str(caught.value)
    assert f"{config}:4" in message
    assert "should not apply to 'rm -rf x', but it does" in message


# -- a subject becomes a call by the tool's schema, not by its name ---------------------------


def test_arguments_are_filled_from_the_params_schema() -> None:
    from deftly.execution.probe import arguments_for

    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 2},
            "target": {"type": "string"},
            "old": {"type": "string"},
            "new": {"type": "string"},
            "how": {"enum": ["fast", "slow"]},
            "flag": {"type": "boolean"},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["count", "target", "old", "new", "how", "flag"],
    }
    args = arguments_for(schema, "src/a.py")
    assert args == {
        "count": 2,
        "target": "src/a.py",  # the first required text argument
        "old": "<old>",
        "new": "<new>",  # distinct placeholders, so an edit is an edit
        "how": "fast",
        "flag": False,
    }
    assert arguments_for(schema, '{"target": "x"}') == {"target": "x"}  # JSON as it is


async def test_a_host_tool_is_probed_through_its_own_schema(make_runtime: Any) -> None:
    from deftly.contract.tool import SchemaTool, ToolExecution
    from deftly.execution.probe import probe_call, resolve_call
    from deftly.policy import glob_rule_matcher

    class Deploy(SchemaTool):
        def resolve(self, args: Any) -> ToolExecution:
            return ToolExecution(
                execute=lambda ctx: None,  # type: ignore[arg-type,return-value]
                approval_rule=f"Deploy({args['env']})",
                matches_rule=glob_rule_matcher(args["env"]),
            )

    schema = {
        "type": "object",
        "properties": {"replicas": {"type": "integer"}, "env": {"type": "string"}},
        "required": ["replicas", "env"],
        "additionalProperties": False,
    }
    rt: Runtime = await make_runtime()
    rt.register_tool(Deploy("Deploy", "Deploys.", schema))
    call = probe_call(rt.registry, "Deploy(prod/eu)", default_tool="Bash")
    assert call.tool == "Deploy" and call.arguments == {"replicas": 1, "env": "prod/eu"}
    execution = await resolve_call(rt.registry, call)
    assert execution.matches_rule is not None and execution.matches_rule("prod/*")
    bare = probe_call(rt.registry, "echo(x)", default_tool="Bash")  # not a tool: a command
    assert bare.tool == "Bash" and bare.arguments == {"command": "echo(x)"}


@pytest.mark.parametrize("command", ["echo v | xargs rm", "coproc rm v", "/usr/bin/rm v"])
async def test_an_ask_rule_meets_every_spelling_too(
    make_runtime: Any, workspace: Path, command: str
) -> None:
    (workspace / "v").write_text("keep me")
    config = {"permissions": {"mode": "yolo", "ask": ["Bash(rm *)"]}}
    rt: Runtime = await make_runtime(config=config, approve_asks=False)  # nobody to ask
    decision = await rt.explain("Bash", {"command": command})
    assert decision.verdict.value == "ask" and "Bash(rm *)" in decision.reason
    result = await rt.call("Bash", {"command": command})
    assert result.is_error
    assert (workspace / "v").read_text() == "keep me"
