"""The `deftly` command, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import subprocess_env, trust_folder

DEFTLY = str(Path(sys.executable).with_name("deftly"))


@pytest.fixture
def cli_workspace(workspace: Path) -> Path:
    config = workspace / ".deftly" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '[tools]\nload = ["tests.helpers:EchoTool", "tests.helpers:SleepTool", '
        '"tests.helpers:BigTool", "tests.helpers:BrokenTool"]\n[output]\nmax_chars = 1000\n'
    )
    trust_folder(workspace)  # its [tools] load runs code: trusted, as by `deftly trust`
    return workspace


def deftly(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEFTLY, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="120"),
        cwd=cwd,
        timeout=60,
        check=False,
    )


def test_help_explains_every_command() -> None:
    result = deftly("--help")
    assert result.returncode == 0
    for command in ("tools", "call", "batch"):
        assert command in result.stdout
    for command in ("tools", "call", "batch"):
        assert deftly(command, "--help").returncode == 0


def test_tools_lists_active_tools_as_json(cli_workspace: Path) -> None:
    result = deftly("tools", "--workspace", str(cli_workspace), "--json")
    assert result.returncode == 0, result.stderr
    tools = json.loads(result.stdout)
    names = [t["name"] for t in tools]
    assert {"Big", "Broken", "Echo", "Sleep"} <= set(names)  # beside the built-in tools
    assert names == sorted(names)
    echo = next(t for t in tools if t["name"] == "Echo")
    assert set(echo) == {
        "name",
        "description",
        "parameters",
        "source",
        "disclosure",
        "title",
        "output_schema",
    }
    assert echo["parameters"]["additionalProperties"] is False
    table = deftly("tools", "-w", str(cli_workspace))
    assert "Echo" in table.stdout and "builtin" in table.stdout


def test_call_success_error_and_usage_exit_codes(cli_workspace: Path) -> None:
    ok = deftly("call", "Echo", '{"text": "hello"}', "-w", str(cli_workspace), "--json")
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["output"] == "hello" and data["is_error"] is False
    assert set(data) == {
        "tool_call_id",
        "name",
        "is_error",
        "output",
        "note",
        "truncated",
        "display",
    }

    failed = deftly(
        "call", "Broken", '{"how": "raise"}', "-w", str(cli_workspace), "--json", "--yes"
    )
    assert failed.returncode == 1 and json.loads(failed.stdout)["is_error"] is True

    for bad in (["call", "Nope"], ["call", "Echo", "{not json"], ["call", "Echo", '{"txt": 1}']):
        usage = deftly(*bad, "-w", str(cli_workspace))
        assert usage.returncode == 2, usage
        assert "Traceback" not in usage.stdout + usage.stderr

    panel = deftly("call", "Echo", '{"text": "shown"}', "-w", str(cli_workspace))
    assert "shown" in panel.stdout and "Echo" in panel.stdout


def test_batch_runs_raw_model_arguments_in_input_order(cli_workspace: Path) -> None:
    lines = [
        {"id": "a", "name": "Sleep", "arguments": json.dumps({"path": "x", "seconds": 0.3})},
        {"id": "b", "name": "Sleep", "arguments": {"path": "y", "seconds": 0.3}},
        {"id": "c", "name": "Echo", "arguments": '{"text": "oops",'},
        {"id": "d", "name": "Big", "arguments": {"chars": 5000}},
    ]
    stdin = "\n".join(json.dumps(line) for line in lines) + "\n"
    result = deftly("batch", "-", "-w", str(cli_workspace), "--json", "--yes", stdin=stdin)
    assert result.returncode == 1, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["tool_call_id"] for r in rows] == ["a", "b", "c", "d"]
    a, b, c, d = rows
    assert a["started_at"] < b["finished_at"] and b["started_at"] < a["finished_at"], (
        "reads ran together"
    )
    assert c["is_error"] and "not valid JSON" in c["output"] and c["started_at"] is None
    assert d["truncated"] and "output_path" in d["output"]


def test_batch_reports_malformed_lines_as_a_usage_error(
    cli_workspace: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "calls.jsonl"
    batch.write_text('{"name": "Echo", "arguments": {"text": "x"}}\nnot json\n[1]\n')
    result = deftly("batch", str(batch), "-w", str(cli_workspace))
    assert result.returncode == 2
    assert "line 2" in result.stderr and "line 3" in result.stderr
    missing = deftly("batch", str(tmp_path / "missing.jsonl"), "-w", str(cli_workspace))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_bad_config_and_bad_options_are_usage_errors(workspace: Path) -> None:
    (workspace / ".deftly").mkdir()
    (workspace / ".deftly" / "config.toml").write_text("[output]\nmax_char = 3\n")
    result = deftly("tools", "-w", str(workspace))
    assert result.returncode == 2
    assert "max_char" in result.stderr and "did you mean 'max_chars'" in result.stderr
    assert "Traceback" not in result.stderr
    mode = deftly("call", "Echo", "{}", "--mode", "reckless", "-w", str(workspace))
    assert mode.returncode == 2


def test_every_command_help_flows_as_paragraphs() -> None:
    # Typer keeps single line breaks, which a narrow terminal wraps into ragged lines.
    import typer

    from deftly.cli.app import app

    def commands(group: typer.Typer) -> list[typer.models.CommandInfo]:
        found = list(group.registered_commands)
        for sub in group.registered_groups:
            assert sub.typer_instance is not None
            found += commands(sub.typer_instance)
        return found

    everything = commands(app)
    assert len(everything) >= 8
    for command in everything:
        assert command.help, command.name
        for paragraph in command.help.split("\n\n"):
            assert "\n" not in paragraph, (command.name, paragraph)
