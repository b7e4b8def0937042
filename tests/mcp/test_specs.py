"""Reading mcp.json files: layers, the shapes other clients write, and broken entries."""

from __future__ import annotations

import json
import os
from pathlib import Path

from deftly.config.mcp import McpConfig
from deftly.contract.diagnostics import Diagnostic
from deftly.features.mcp.specs import load_specs


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def user_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "mcp.json"


def test_project_file_adds_to_and_overrides_the_user_file(workspace: Path) -> None:
    write(
        user_file(),
        {"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b", "args": ["1"]}}},
    )
    write(
        workspace / ".deftly" / "mcp.json",
        {"mcpServers": {"b": {"command": "project-b"}, "c": {"url": "http://127.0.0.1:1/mcp"}}},
    )
    diagnostics: list[Diagnostic] = []
    specs, invalid = load_specs(workspace, McpConfig(), diagnostics)
    by_name = {s.name: s for s in specs}
    assert sorted(by_name) == ["a", "b", "c"]
    assert by_name["a"].command == "user-a"
    assert by_name["b"].command == "project-b" and by_name["b"].args == ()
    assert by_name["b"].origin == str(workspace / ".deftly" / "mcp.json")
    assert by_name["c"].transport == "http"
    assert invalid == [] and diagnostics == []


def test_extra_files_and_inline_servers_come_last(workspace: Path, tmp_path: Path) -> None:
    write(workspace / ".deftly" / "mcp.json", {"mcpServers": {"a": {"command": "project"}}})
    extra = write(tmp_path / "more.json", {"mcpServers": {"a": {"command": "extra"}}})
    config = McpConfig(config_files=[str(extra)], servers={"b": {"command": "inline"}})
    specs, _ = load_specs(workspace, config, [])
    assert {s.name: s.command for s in specs} == {"a": "extra", "b": "inline"}


def test_defaults_transports_and_other_clients_keys(workspace: Path) -> None:
    config = McpConfig(startup_timeout=7, call_timeout=9)
    servers = {
        "plain": {"command": "srv", "args": ["--x"], "env": {"K": "v"}},
        "typed": {"type": "stdio", "command": "srv", "cwd": "sub", "startup_timeout": 1},
        "web": {"type": "http", "url": "http://h/mcp", "headers": {"X": "1"}, "call_timeout": 2},
        "off": {"command": "srv", "enabled": False},
        "cline": {"command": "srv", "disabled": True, "autoApprove": [], "timeout": 60},
        "some": {"command": "srv", "enabledTools": ["a", "b"], "disabledTools": ["b"]},
    }
    specs, invalid = load_specs(workspace, config.model_copy(update={"servers": servers}), [])
    by = {s.name: s for s in specs}
    assert invalid == []
    assert by["plain"].transport == "stdio" and by["plain"].env == {"K": "v"}
    assert by["plain"].cwd == workspace
    assert (by["plain"].startup_timeout, by["plain"].call_timeout) == (7, 9)
    assert by["typed"].cwd == workspace / "sub" and by["typed"].startup_timeout == 1
    assert by["web"].headers == {"X": "1"} and by["web"].call_timeout == 2
    assert by["web"].target == "http://h/mcp"
    assert not by["off"].enabled and not by["cline"].enabled
    assert by["cline"].ignored_keys == ("autoApprove", "timeout")
    assert by["some"].offers("a") and not by["some"].offers("b") and not by["some"].offers("c")


def test_environment_variables_are_expanded(workspace: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEFTLY_TEST_TOKEN", "s3cret")
    monkeypatch.delenv("DEFTLY_TEST_MISSING", raising=False)
    servers = {
        "ok": {
            "url": "http://h/${DEFTLY_TEST_TOKEN}",
            "headers": {"Authorization": "Bearer ${DEFTLY_TEST_TOKEN}"},
        },
        "default": {"command": "srv", "args": ["${DEFTLY_TEST_MISSING:-fallback}"]},
        "broken": {"command": "srv", "env": {"T": "${DEFTLY_TEST_MISSING}"}},
    }
    diagnostics: list[Diagnostic] = []
    specs, invalid = load_specs(workspace, McpConfig(servers=servers), diagnostics)
    by = {s.name: s for s in specs}
    assert by["ok"].url == "http://h/s3cret"
    assert by["ok"].headers["Authorization"] == "Bearer s3cret"
    assert by["default"].args == ("fallback",)
    assert [bad.name for bad in invalid] == ["broken"]
    assert "DEFTLY_TEST_MISSING" in invalid[0].error
    assert any("broken" in d.message for d in diagnostics)


def test_broken_files_and_entries_are_reported_and_skipped(workspace: Path) -> None:
    write(user_file(), '{"mcpServers": {"a": {"command": "x"},}')
    write(
        workspace / ".deftly" / "mcp.json",
        {
            "mcpServers": {
                "good": {"command": "srv"},
                "neither": {"args": ["x"]},
                "sse": {"type": "sse", "url": "http://h/sse"},
                "weird": {"type": "carrier-pigeon", "command": "x"},
                "badtimeout": {"command": "srv", "call_timeout": -1},
                "notobject": "srv",
            }
        },
    )
    diagnostics: list[Diagnostic] = []
    specs, invalid = load_specs(workspace, McpConfig(), diagnostics)
    assert [s.name for s in specs] == ["good"]
    errors = {bad.name: bad.error for bad in invalid}
    assert set(errors) == {"neither", "sse", "weird", "badtimeout", "notobject"}
    assert '"command"' in errors["neither"] and '"url"' in errors["neither"]
    assert "streamable HTTP" in errors["sse"]
    assert "carrier-pigeon" in errors["weird"]
    assert "call_timeout" in errors["badtimeout"]
    json_problem = [d for d in diagnostics if d.source == str(user_file())]
    assert json_problem and "not valid JSON" in json_problem[0].message


def test_empty_and_missing_files_mean_no_servers(workspace: Path) -> None:
    write(user_file(), "   \n")
    diagnostics: list[Diagnostic] = []
    assert load_specs(workspace, McpConfig(), diagnostics) == ([], [])
    assert diagnostics == []
