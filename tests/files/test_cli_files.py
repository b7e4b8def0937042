"""The file tools from the command line: `deftly call` and `deftly batch`, as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import subprocess_env

pytestmark = pytest.mark.local_env  # the deftly command runs the local env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def deftly(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEFTLY, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="120"),
        timeout=120,
        check=False,
    )


def call_json(workspace: Path, name: str, args: dict[str, object]) -> dict[str, object]:
    done = deftly("call", name, json.dumps(args), "--workspace", str(workspace), "--yes", "--json")
    assert done.returncode in (0, 1), done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_the_six_tools_are_listed(workspace: Path) -> None:
    done = deftly("tools", "-w", str(workspace), "--json")
    names = {tool["name"] for tool in json.loads(done.stdout)}
    assert {"Read", "Write", "Edit", "Glob", "Grep", "ReadMediaFile"} <= names


def test_call_each_tool(workspace: Path) -> None:
    (workspace / "README.md").write_bytes(b"# Title\r\nSome text\r\n")
    read = call_json(workspace, "Read", {"path": "README.md"})
    assert read["output"] == "1\t# Title\n2\tSome text" and "CRLF" in str(read["note"])
    edit = call_json(
        workspace, "Edit", {"path": "README.md", "old_string": "Some", "new_string": "Other"}
    )
    assert edit["is_error"] is False
    assert (workspace / "README.md").read_bytes() == b"# Title\r\nOther text\r\n"
    write = call_json(workspace, "Write", {"path": "src/app.py", "content": "print(1)\n"})
    assert write["output"] == "Created src/app.py: 9 bytes."
    glob = call_json(workspace, "Glob", {"pattern": "*.py"})
    assert glob["output"] == "src/app.py"
    grep = call_json(workspace, "Grep", {"pattern": "Other", "output_mode": "content"})
    assert grep["output"] == "README.md:2:Other text"
    Image.new("RGB", (8, 8), (1, 2, 3)).save(workspace / "dot.png")
    media = call_json(workspace, "ReadMediaFile", {"path": "dot.png"})
    parts = media["output"]
    assert isinstance(parts, list) and parts[1]["type"] == "image"
    assert parts[1]["mime_type"] == "image/png"


def test_errors_exit_with_1_and_never_a_traceback(workspace: Path) -> None:
    done = deftly("call", "Read", '{"path": "missing.txt"}', "-w", str(workspace), "--yes")
    assert done.returncode == 1 and "does not exist" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    usage = deftly("call", "Read", '{"path": "a", "line_offset": 0}', "-w", str(workspace))
    assert usage.returncode == 2


def test_a_batch_of_edits_to_one_file_lands_in_order(workspace: Path) -> None:
    (workspace / "n.txt").write_text("0\n")
    lines = [
        json.dumps(
            {
                "id": f"e{i}",
                "name": "Edit",
                "arguments": {"path": "n.txt", "old_string": f"{i}\n", "new_string": f"{i + 1}\n"},
            }
        )
        for i in range(5)
    ]
    done = deftly("batch", "-", "-w", str(workspace), "--yes", "--json", stdin="\n".join(lines))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (workspace / "n.txt").read_text() == "5\n"
