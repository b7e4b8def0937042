"""ListDirectory: a read-only tree of a directory (directories, files, sizes) that honours
.gitignore like Glob, never lists secrets, stays bounded, and needs no approval in manual
mode inside the workspace (through the library and through `deftly call` with no terminal)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deftly import Runtime
from deftly.execution.calls import Outcome
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n"


def _names(text: str) -> set[str]:
    """The entry names of a listing (each line's first column)."""
    return {line.strip().split("  ")[0].rstrip("/") for line in text.splitlines()}


def _tree(root: Path) -> None:
    (root / "src" / "pkg" / "deep").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print(1)\n")  # 9 bytes
    (root / "src" / "pkg" / "data.bin").write_bytes(b"\0" * 3000)
    (root / "src" / "pkg" / "deep" / "leaf.txt").write_text("x\n")
    (root / "node_modules" / "lib").mkdir(parents=True)
    (root / "node_modules" / "lib" / "index.js").write_text("//\n")
    (root / ".gitignore").write_text("node_modules/\n")
    (root / ".env").write_text("TOKEN=1\n")
    (root / "deploy.pem").write_text(PRIVATE_KEY)
    (root / "id_ed25519").write_text(PRIVATE_KEY)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")


async def test_the_tree_shows_directories_files_and_sizes(rt: Runtime, workspace: Path) -> None:
    _tree(workspace)
    result = await rt.call("ListDirectory", {})
    assert not result.is_error, result.text
    lines = result.text.splitlines()
    assert lines[0] == "./  (4 files, 3.0 KB)"  # .gitignore, main.py, data.bin, leaf.txt
    assert "  src/  (3 files, 2.9 KB)" in lines
    assert "    pkg/  (2 files, 2.9 KB)" in lines
    assert "    main.py  9 B" in lines
    assert "  .gitignore  14 B" in lines
    assert "leaf.txt" not in result.text  # below depth 2: counted in pkg/, not opened
    for hidden in ("node_modules", ".env", "deploy.pem", "id_ed25519", ".git", "HEAD"):
        assert hidden not in _names(result.text)


async def test_depth_ignored_files_and_secrets(rt: Runtime, workspace: Path) -> None:
    _tree(workspace)
    deep = await rt.call("ListDirectory", {"path": "src", "depth": 3})
    assert "      leaf.txt  2 B" in deep.text.splitlines()
    assert deep.text.splitlines()[0].startswith("src/  (3 files")
    one = await rt.call("ListDirectory", {"depth": 1})
    assert "  src/  (3 files, 2.9 KB)" in one.text.splitlines() and "main.py" not in one.text
    everything = await rt.call("ListDirectory", {"include_ignored": True})
    assert "node_modules/  (1 file, 3 B)" in everything.text
    for secret in (".env", "deploy.pem", "id_ed25519"):
        assert secret not in _names(everything.text)  # never, even with include_ignored


async def test_the_output_is_bounded_and_says_what_it_left_out(
    rt: Runtime, workspace: Path
) -> None:
    many = workspace / "many"
    many.mkdir()
    for n in range(700):
        (many / f"f{n:03}.txt").write_text("x")
    result = await rt.call("ListDirectory", {"path": "many"})
    lines = result.text.splitlines()
    assert len(lines) < 520 and result.truncated
    assert lines[0] == "many/  (700 files, 700 B)"
    assert "more entries are not shown" in result.text and "200 more" in result.text


async def test_a_file_or_a_missing_path_is_a_clear_error(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    file_result = await rt.call("ListDirectory", {"path": "a.txt"})
    assert file_result.is_error and "Use Read" in file_result.text
    missing = await rt.call("ListDirectory", {"path": "nope"})
    assert missing.is_error


async def test_manual_mode_lists_the_workspace_without_asking(workspace: Path) -> None:
    _tree(workspace)
    async with Runtime(workspace, config={}, plugins=False, mode="manual") as rt:
        inside = await rt.call("ListDirectory", {"path": "src"})
        outside = await rt.call("ListDirectory", {"path": str(workspace.parent)})
        read = next(t for t in rt.tools() if t.name == "Read")
    assert not inside.is_error and "main.py" in inside.text
    assert outside.is_error and outside.outcome is not Outcome.EXECUTED  # asks; nobody to ask
    assert "ListDirectory" in read.description


def test_deftly_call_in_manual_mode_with_no_terminal(workspace: Path) -> None:
    _tree(workspace)
    done = subprocess.run(
        [DEFTLY, "call", "--mode", "manual", "ListDirectory", json.dumps({"depth": 4})],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "        leaf.txt  2 B" in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1] == "-- ListDirectory: ok (Listing .)"
