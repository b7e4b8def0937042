"""Secret and .git files a shell command names: declared so the permission engine asks
(even in yolo mode), found by the real parser, with no I/O while resolving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly import Runtime
from deftly.features.shell.mentions import may_name_secrets, named_secrets
from deftly.features.shell.rules import split_command

WS = Path("/ws")
HOME = Path("/home/me")


def named(command: str) -> list[str]:
    return list(named_secrets(split_command(command), WS, HOME))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat .env", ["/ws/.env"]),
        ("source .env && npm start", ["/ws/.env"]),
        ("grep -r TOKEN . --include=.env.local", ["/ws/.env.local"]),
        ("cat ~/.ssh/id_rsa", ["/home/me/.ssh/id_rsa"]),
        ("echo $(cat deploy/id_ed25519_old)", ["/ws/deploy/id_ed25519_old"]),
        ("tar czf out.tgz ~/.aws/credentials", ["/home/me/.aws/credentials"]),
        ("cp hook.sh .git/hooks/pre-commit", ["/ws/.git/hooks/pre-commit"]),
        ("rm -rf .git", ["/ws/.git"]),
        ("curl -s http://x < .netrc", ["/ws/.netrc"]),
        ("echo token > ../other/.env", ["/other/.env"]),
        ("cat .e*", ["/ws/.env"]),
        ("cat secrets/id_*", ["/ws/secrets/id_rsa"]),
        ("cat .env.example", []),
        ("cat id_rsa.pub", []),
        ("cat *", []),  # the shell's * does not match dot files
        ("git status && git log -1", []),
        ("ls -la; cat README.md | head", []),
        ("echo $HOME/.env", ["/home/me/.env"]),  # $HOME is known statically (issue 10)
    ],
)
def test_named_secret_and_git_paths(command: str, expected: list[str]) -> None:
    assert named(command) == expected
    if expected:
        assert may_name_secrets(command)


SAFE_WORD = st.text(alphabet="abcdfghjklmopqrsuvwxyz0123456789_./", min_size=1, max_size=10)


@settings(max_examples=200, deadline=None)
@given(st.lists(SAFE_WORD, min_size=1, max_size=6))
def test_commands_without_a_secret_name_declare_nothing(words: list[str]) -> None:
    command = " ".join(words)
    assert named(command) == [] or may_name_secrets(command)
    if not may_name_secrets(command):
        assert named(command) == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(SAFE_WORD.filter(lambda w: "$" not in w), min_size=0, max_size=4),
    st.sampled_from([".env", ".env.production", "id_rsa", "credentials", ".pgpass"]),
    st.sampled_from([" ", " | cat ", " && echo ", "; "]),
)
def test_a_secret_name_anywhere_is_found(words: list[str], secret: str, joint: str) -> None:
    command = "cat " + " ".join(words) + joint + "cat " + secret
    assert f"/ws/{secret}" in named(command)


async def test_yolo_asks_before_a_command_that_names_a_secret(
    make_runtime: Any, workspace: Path
) -> None:
    (workspace / ".env").write_text("API_KEY=do-not-leak\n")
    (workspace / "notes.txt").write_text("plain\n")
    rt: Runtime = await make_runtime(mode="yolo", approve_asks=False)
    decision = await rt.explain("Bash", {"command": "cat .env"})
    assert decision.verdict.value == "ask" and ".env" in decision.reason
    refused = await rt.call("Bash", {"command": "cat notes.txt .env"})
    assert refused.is_error and "do-not-leak" not in refused.text
    ran = await rt.call("Bash", {"command": "cat notes.txt"})
    assert not ran.is_error and ran.text.strip() == "plain"


async def test_auto_mode_and_allow_rules_still_decide_first(make_runtime: Any) -> None:
    auto: Runtime = await make_runtime(mode="auto", approve_asks=False)
    assert (await auto.explain("Bash", {"command": "cat .env"})).verdict.value == "approve"
    config = {"permissions": {"mode": "yolo", "allow": ["Bash(cat .env)"]}}
    allowed: Runtime = await make_runtime(config=config, approve_asks=False)
    decision = await allowed.explain("Bash", {"command": "cat .env"})
    assert decision.verdict.value == "approve" and "Bash(cat .env)" in decision.reason
