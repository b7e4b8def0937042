"""Running `deftly run` against a scripted model server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

from tests.cli import run_deftly
from tests.scripted.server import ModelServer


def deftly_run(
    server: ModelServer, workspace: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`deftly run ARGS -w WORKSPACE` talking to `server` (OpenAI wire format)."""
    return run_deftly(
        "run",
        *args,
        "-w",
        str(workspace),
        "--base-url",
        server.openai_url,
        "--model",
        "scripted",
        stdin=stdin,
        OPENAI_API_KEY="k",
    )


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """Every stdout line as JSON (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in stdout.splitlines()]


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def user_config(text: str) -> None:
    """Write the user's config.toml (in the test's own config home)."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def user_texts(request: dict[str, Any]) -> list[str]:
    """The user messages' texts of one recorded chat-completions request."""
    texts = []
    for message in request["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content)
        texts.append(content)
    return texts
