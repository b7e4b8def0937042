"""The README stays true: its configuration parses, its tool example runs as written."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.config import parse_config
from deftly.features import builtin_tables
from tests.conftest import subprocess_env

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_the_configuration_example_is_valid() -> None:
    [config] = [b for b in blocks("toml") if "[permissions]" in b]
    parse_config(tomllib.loads(config), "the README", builtin_tables())
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


# -- every example runs (issue 11) -------------------------------------------------------

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def _after(marker: str, language: str) -> str:
    """The first ```language block after `marker` in the README."""
    start = README.index(marker)
    [block] = re.findall(rf"```{language}\n(.*?)```", README[start:], re.S)[:1]
    return block


def _run(argv: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="200"),
        timeout=300,
        check=False,
        **kw,
    )


def test_the_python_examples_import_only_what_exists() -> None:
    for block in blocks("python"):
        for module, names in re.findall(r"^from (deftly[\w.]*) import (.+)$", block, re.M):
            imported = importlib.import_module(module)
            for name in (n.strip() for n in names.split(",")):
                assert hasattr(imported, name), f"from {module} import {name}"
    # The names the prose promises (approvers, events, hooks) exist at the top level too.
    import deftly

    promised = ("ApprovalRequest", "ApprovalResponse", "ToolCallStarted", "ToolProgress")
    promised += ("ToolCallFinished", "RuntimeNotice", "Allow", "Proceed", "Veto")
    for name in promised:
        assert name in README and hasattr(deftly, name), name


def test_the_word_count_description_is_shown_and_is_what_loads(
    tmp_path: Path, workspace: Path
) -> None:
    code = _after("## Writing a tool", "python")
    description = _after("`my_tools/word_count.md`", "markdown")
    package = tmp_path / "my_tools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "word_count.py").write_text(code)
    (package / "word_count.md").write_text(description)
    (workspace / "notes.txt").write_text("one two three\n")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[tools]\nload = ["my_tools.word_count:WordCount"]\n')
    env = subprocess_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{Path(__file__).parent.parent}")

    def deftly(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DEFTLY, *argv, "-w", str(workspace), "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    done = deftly("call", "WordCount", '{"path": "notes.txt"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == "3"
    listed = {t["name"]: t for t in json.loads(deftly("tools").stdout)}
    assert listed["WordCount"]["description"] == description.strip()
    assert listed["WordCount"]["source"] == "plugin"


def test_the_from_python_example_runs(workspace: Path) -> None:
    code = _after("## From Python", "python").replace("path/to/repo", str(workspace))
    (workspace / "README.md").write_text("# hello\nTODO: write\n")
    script = workspace.parent / "example.py"
    script.write_text(code)
    done = _run([sys.executable, str(script)], workspace)
    assert done.returncode == 0, done.stderr
    assert "'Read'" in done.stdout and "# hello" in done.stdout


def test_the_skill_example_renders_with_its_argument(workspace: Path) -> None:
    skill = workspace / ".deftly" / "skills" / "fix-lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(_after("## Skills", "markdown"))
    done = _run(
        [DEFTLY, "skills", "render", "fix-lint", "src/a b.py", "-w", str(workspace)], workspace
    )
    assert done.returncode == 0, done.stderr
    assert "ruff check src/a b.py" in done.stdout


def _command_lines() -> list[str]:
    """The `deftly ...` lines of the command-line synopsis and of the bash examples."""
    synopsis = _after("## The command line", "")
    lines = [line for line in synopsis.splitlines() if line.startswith("deftly ")]
    assert len(lines) >= 8
    return lines


def test_every_synopsis_line_names_real_commands_and_options(tmp_path: Path) -> None:
    checked = 0
    for line in _command_lines():
        # `deftly skills list [--json] | show NAME | render NAME`: three commands
        first, *others = line.split("#")[0].split(" | ")
        group = first.split()[1]
        for usage in [first, *(f"deftly {group} {other}" for other in others)]:
            words = usage.split()
            path = [w for w in words[1:3] if re.fullmatch(r"[a-z][a-z-]*", w)]
            if len(path) == 2 and _run([DEFTLY, *path, "--help"], tmp_path).returncode:
                path = path[:1]  # the second word is an argument, not a subcommand
            shown = _run([DEFTLY, *path, "--help"], tmp_path)
            assert shown.returncode == 0, (usage, shown.stderr)
            for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage):
                assert option in shown.stdout, (usage, option)
                checked += 1
    assert checked >= 20


def test_the_bash_examples_run(workspace: Path) -> None:
    """Each `deftly` example runs to a real result (0 or 1), never a usage error or a crash."""
    (workspace / "README.md").write_text("# hi\n")
    (workspace / "logs").mkdir()
    (workspace / "logs" / "app.log").write_text("".join(f"line {n}\n" for n in range(200)))
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1  # TODO\n")
    (workspace / "Makefile").write_text("all:\n\t@echo made\n")
    bindir = Path(DEFTLY).parent
    script = _after("deftly trust    [DIR]", "bash")
    commands = re.sub(r"\\\n\s*", " ", script).strip().splitlines()
    assert any("deftly batch" in c for c in commands)
    outputs = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=workspace,
            capture_output=True,
            text=True,
            env=subprocess_env(PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}"),
            stdin=subprocess.DEVNULL,
            timeout=300,
            check=False,
        )
        assert done.returncode in (0, 1), (command, done.stdout, done.stderr)
        assert "internal error" not in done.stderr and "Usage:" not in done.stderr, command
        outputs.append(done.stdout)
    assert "# hi" in outputs[0] and "line 199" in outputs[1]  # the two Reads
    # Without a terminal the Edit asks and is refused, saying how to allow it.
    assert "--yes" in outputs[2] and "x = 1" in (workspace / "src" / "app.py").read_text()
    assert "made" in outputs[-1]  # the batch's background make, waited for


def test_the_agent_example_runs_against_a_model_server(workspace: Path) -> None:
    from tests.scripted.script import Call, calls, say
    from tests.scripted.server import ModelServer

    start = README.index("The agent loop from Python")
    [code] = re.findall(r"```python\n(.*?)```", README[start:], re.S)[:1]
    (workspace / "test_x.py").write_text("def test_x():\n    assert 1 == 2\n")
    script = [
        calls(Call("Read", {"path": "test_x.py"})),
        say("test_x fails: 1 is not 2."),
        say("Fixed."),
    ]
    with ModelServer(script) as server:
        code = code.replace("path/to/repo", str(workspace)).replace(
            "http://127.0.0.1:11434/v1", server.openai_url
        )
        example = workspace.parent / "agent_example.py"
        example.write_text(code)
        done = _run([sys.executable, str(example)], workspace)
    assert done.returncode == 0, done.stderr
    assert "end_turn 2" in done.stdout and "test_x fails" in done.stdout
    assert "'type': 'turn_end'" in done.stdout
    assert "assert 1 == 2" in json.dumps(server.requests[1])


def test_the_model_profiles_example_parses_and_every_profile_resolves() -> None:
    from deftly.agent.models import resolve_model

    [block] = [b for b in blocks("toml") if "[models.kimi]" in b]
    config = parse_config(tomllib.loads(block), "the README")
    assert config.model.model == "qwen2.5-coder:14b"
    for name in config.models:
        assert resolve_model(config, name).model
    assert resolve_model(config, "claude").provider == "anthropic"
