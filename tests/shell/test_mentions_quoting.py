"""Secrets named through quoting, variables or interpreter code are still found (issue 10
§4): the pre-check is not fooled by quotes, `$PWD` / `$HOME` / `~` are expanded, and the
string literals of code given to an interpreter count. Yolo mode then asks, so with no
approver the command is refused and prints nothing secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly import Runtime
from deftly.features.shell.mentions import expand_word, may_name_secrets, named_secrets
from deftly.features.shell.rules import split_command
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))
WS = Path("/ws")
HOME = Path("/home/me")
SECRET = "API_KEY=do-not-leak-7f3a"

# The exact commands of the issue, and where each one leads.
QUOTED = [
    ("cat .en''v", "/ws/.env"),
    ('cat ".env"', "/ws/.env"),
    ('cat ./.e"n"v', "/ws/.env"),
    ("cat \\.env", "/ws/.env"),
    ("cat .e\\nv", "/ws/.env"),
    ('cat "$PWD/.env"', "/ws/.env"),
    ("cat ${PWD}/.env", "/ws/.env"),
    ('cat "$HOME/.ssh/id_rsa"', "/home/me/.ssh/id_rsa"),
    ("cat ${HOME}/.aws/credentials", "/home/me/.aws/credentials"),
    ("cat ~/.netrc", "/home/me/.netrc"),
    ("cat .env$SUFFIX", "/ws/.env"),  # an unknown variable may be empty
    ("cat $'.env'", "/ws/.env"),
    ('cat $".env"', "/ws/.env"),
    ("cat $'\\x2e\\x65nv'", "/ws/.env"),  # ANSI-C quoting, decoded as bash does
    ("python3 -c \"open('.env')\"", "/ws/.env"),
    ("perl -e 'open(F, \".env\")'", "/ws/.env"),
    ("node -e \"require('fs').readFileSync('.env')\"", "/ws/.env"),
    ("python3 -c \"print(open('$HOME/.netrc').read())\"", "/home/me/.netrc"),
    ("python3 -c \"import os; os.system('cat .env')\"", "/ws/.env"),
    ("perl -e 'open(F, \"<.env\"); print <F>'", "/ws/.env"),
    ("ruby -e 'puts File.read(%q(x)) + File.read(\".env\")'", "/ws/.env"),
]


def named(command: str) -> list[str]:
    return list(named_secrets(split_command(command), WS, HOME))


@pytest.mark.parametrize(("command", "path"), QUOTED)
def test_quoted_and_expanded_names_are_found(command: str, path: str) -> None:
    assert may_name_secrets(command), "the pre-check must not be fooled"
    assert path in named(command)


@pytest.mark.parametrize(
    "command",
    [
        "cat $X",  # a bare unknown variable names nothing known
        "echo 'hello world'",
        'python3 -c "print(1)"',
        "cat .env.example",
        "node -e \"console.log('envoy')\"",
    ],
)
def test_harmless_commands_declare_nothing(command: str) -> None:
    assert named(command) == []


def test_expansion_keeps_what_it_cannot_know() -> None:
    assert expand_word("$PWD/a", WS, HOME) == "/ws/a"
    assert expand_word("${HOME}/b", WS, HOME) == "/home/me/b"
    assert expand_word("$OTHER/c", WS, HOME) == "$OTHER/c"
    assert expand_word("$(pwd)/.env", WS, HOME) is None  # parsed as a command of its own


QUOTINGS = st.sampled_from(["plain", "single", "double", "backslash", "empty-pair"])


def _spell(piece: str, how: str) -> str:
    if how == "single":
        return f"'{piece}'"
    if how == "double":
        return f'"{piece}"'
    if how == "backslash":
        return "".join("\\" + ch for ch in piece)
    if how == "empty-pair":
        return piece + "''"
    return piece


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([".env", ".env.local", "id_rsa", "credentials", ".netrc", ".pgpass"]),
    st.data(),
    st.sampled_from(["", "./", "$PWD/", "${PWD}/", '"$PWD"/']),
)
def test_any_quoting_of_a_secret_name_is_found(secret: str, data: Any, prefix: str) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, len(secret) - 1), max_size=3)))
    pieces = [secret[a:b] for a, b in zip([0, *cuts], [*cuts, len(secret)], strict=True)]
    word = prefix + "".join(_spell(p, data.draw(QUOTINGS)) for p in pieces)
    command = f"cat {word}"
    assert may_name_secrets(command), command
    assert f"/ws/{secret}" in named(command), command


@pytest.fixture
def secrets_home(workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "home-for-shell"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (home / ".netrc").write_text(f"machine x login me password {SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    (workspace / ".env").write_text(SECRET + "\n")
    return home


RUNNABLE = [command for command, _ in QUOTED if "SUFFIX" not in command]


async def test_yolo_asks_and_refuses_each_without_printing_the_secret(
    make_runtime: Any, secrets_home: Path
) -> None:
    rt: Runtime = await make_runtime(mode="yolo", approve_asks=False)
    for command in RUNNABLE:
        decision = await rt.explain("Bash", {"command": command})
        assert decision.verdict.value == "ask", (command, decision.reason)
        result = await rt.call("Bash", {"command": command})
        assert result.is_error, command
        assert "do-not-leak" not in result.text, command
    ran = await rt.call("Bash", {"command": "echo harmless"})
    assert not ran.is_error and ran.text.strip() == "harmless"


@pytest.mark.local_env  # the deftly command runs the local env
def test_cli_yolo_refuses_a_quoted_env(workspace: Path) -> None:
    (workspace / ".env").write_text(SECRET + "\n")
    done = subprocess.run(
        [
            DEFTLY,
            "call",
            "--mode",
            "yolo",
            "Bash",
            json.dumps({"command": "cat .en''v"}),
            "-w",
            str(workspace),
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "do-not-leak" not in done.stdout and "do-not-leak" not in done.stderr
    assert ".env" in done.stdout + done.stderr  # it says which file it asked about
    assert os.path.exists(workspace / ".env")
