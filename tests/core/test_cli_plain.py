"""The command line's small promises: `--version`, `-h` on every command, and plain text
when stdout is not a terminal (the output as the model sees it, then a status line; no
panels, no wrapping at 80 columns, nothing cut)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer.main

from deftly.cli.app import app
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def _deftly(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [DEFTLY, *argv],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=subprocess_env(COLUMNS="80"),
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _command_paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            paths.extend(_command_paths(sub, (*prefix, name)))
    return paths


def test_version_prints_the_package_version() -> None:
    done = _deftly("--version")
    assert done.returncode == 0
    assert done.stdout.decode() == "deftly 0.1.0\n"
    assert importlib.metadata.version("deftly") == "0.1.0"


def test_dash_h_is_help_on_every_command() -> None:
    paths = _command_paths(typer.main.get_command(app))
    assert ("call",) in paths and ("skills", "render") in paths and ("mcp", "list") in paths
    for path in paths:
        short, long = _deftly(*path, "-h"), _deftly(*path, "--help")
        assert short.returncode == 0, (path, short.stderr)
        assert short.stdout == long.stdout and b"Usage: deftly" in short.stdout, path


def test_a_piped_read_is_the_model_text_unwrapped_then_the_status(workspace: Path) -> None:
    long_line = "x" * 150 + " " + "y" * 149
    assert len(long_line) == 300
    (workspace / "long.txt").write_text(long_line + "\nshort\n")
    args = json.dumps({"path": "long.txt"})
    plain = _deftly("call", "Read", args, "-w", str(workspace))
    as_json = json.loads(_deftly("call", "Read", args, "-w", str(workspace), "--json").stdout)
    assert plain.returncode == 0, plain.stderr
    text = plain.stdout.decode()
    assert long_line in text  # one line, not wrapped at 80 columns
    body, status = text.removesuffix("\n").rsplit("\n", 1)
    seen = [as_json["output"].removesuffix("\n"), as_json["note"]]  # what the model sees
    assert body == "\n".join(part for part in seen if part)
    assert status.startswith("-- Read: ok")
    for box in ("╭", "│", "╰"):
        assert box not in text


def test_a_piped_long_output_comes_out_whole(workspace: Path) -> None:
    command = "seq 1 1000; printf '%0300d\\n' 7"
    plain = _deftly("call", "--yes", "Bash", json.dumps({"command": command}), "-w", str(workspace))
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.decode().splitlines()
    assert lines[:1000] == [str(n) for n in range(1, 1001)]  # no "… more lines" cut at 400
    assert lines[1000] == "0" * 299 + "7"
    assert lines[-1].startswith("-- Bash: ok")
    assert "more lines" not in plain.stdout.decode()


def test_piped_batch_and_tools_are_plain(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    batch = workspace / "calls.jsonl"
    batch.write_text(
        json.dumps({"id": "1", "name": "Read", "arguments": {"path": "a.txt"}})
        + "\n"
        + json.dumps({"id": "2", "name": "Read", "arguments": {"path": "missing.txt"}})
        + "\n"
    )
    done = _deftly("batch", str(batch), "-w", str(workspace))
    text = done.stdout.decode()
    assert done.returncode == 1
    statuses = [line for line in text.splitlines() if line.startswith("-- Read: ")]
    assert [s.split()[2] for s in statuses] == ["ok", "error"]
    assert "alpha" in text and "╭" not in text
    tools = _deftly("tools", "-w", str(workspace)).stdout.decode().splitlines()
    rows = {line.split("\t")[0]: line.split("\t") for line in tools}
    assert rows["Read"][1:3] == ["builtin", "inline"]
