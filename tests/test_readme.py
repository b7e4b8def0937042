"""The README stays true: its configuration parses, its tool example runs as written."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import pytest

from deftly import Runtime
from deftly.config import parse_config

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_the_configuration_example_is_valid() -> None:
    [config] = [b for b in blocks("toml") if "[permissions]" in b]
    parse_config(tomllib.loads(config), "the README")
    [hooks] = [b for b in blocks("toml") if "[[hooks.PreToolUse]]" in b]
    parse_config(tomllib.loads(hooks), "the README")


def test_the_json_examples_parse() -> None:
    for block in blocks("json"):
        assert "mcpServers" in json.loads(block)


async def test_the_tool_example_runs_as_written(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [code] = [b for b in blocks("python") if "class WordCount" in b]
    package = tmp_path / "my_tools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "word_count.py").write_text(code)
    (package / "word_count.md").write_text("Count the words of a text file.\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (workspace / "notes.txt").write_text("one two three\nfour\n")
    config = {"tools": {"load": ["my_tools.word_count:WordCount"]}}
    try:
        async with Runtime(workspace, config=config, plugins=False) as rt:
            counted = await rt.call("WordCount", {"path": "notes.txt"})
            escaped = await rt.call("WordCount", {"path": "../outside.txt"})
            schema = next(t.parameters for t in rt.tools() if t.name == "WordCount")
    finally:
        for name in [m for m in sys.modules if m.startswith("my_tools")]:
            del sys.modules[name]
    assert not counted.is_error and counted.text == "4"
    assert escaped.is_error and "outside the workspace" in escaped.text
    assert schema["additionalProperties"] is False and schema["required"] == ["path"]
