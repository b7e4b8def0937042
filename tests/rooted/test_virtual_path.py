"""The rooted run's `VirtualPath`: named in the view, reached on the host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.rooted.harness import VIRTUAL_ROOT, virtual_path_type


def test_str_is_virtual_and_fspath_is_real(tmp_path: Path) -> None:
    ws = virtual_path_type(tmp_path)(VIRTUAL_ROOT) / "ws"
    real = os.path.realpath(tmp_path)
    assert str(ws) == "/workspace/ws" and os.fspath(ws) == f"{real}/ws"
    child = ws / "sub" / "a.txt"
    assert type(child) is type(ws)  # the mapping travels with every derived path
    assert str(child.parent) == "/workspace/ws/sub" and child.name == "a.txt"
    assert str(child.with_suffix(".md")) == "/workspace/ws/sub/a.md"
    assert os.fspath(child.parent.parent.parent) == real


def test_the_tests_own_file_work_lands_on_the_host(tmp_path: Path) -> None:
    ws = virtual_path_type(tmp_path)(VIRTUAL_ROOT) / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "a.txt").write_text("hi")
    assert (tmp_path / "ws" / "sub" / "a.txt").read_text() == "hi"
    assert (ws / "sub" / "a.txt").exists() and (ws / "sub").is_dir()
    assert (ws / "sub" / "a.txt").stat().st_size == 2
    assert [str(p) for p in (ws / "sub").iterdir()] == ["/workspace/ws/sub/a.txt"]
    assert [str(p) for p in ws.rglob("*.txt")] == ["/workspace/ws/sub/a.txt"]
    assert [str(p) for p in ws.glob("sub/*")] == ["/workspace/ws/sub/a.txt"]
    assert str((ws / "sub" / ".." / "sub").resolve()) == "/workspace/ws/sub"
    done = subprocess.run(
        ["cat", "a.txt"], cwd=ws / "sub", capture_output=True, text=True, check=True
    )
    assert done.stdout == "hi"
    (ws / "sub" / "a.txt").rename(ws / "b.txt")
    assert (tmp_path / "ws" / "b.txt").read_text() == "hi"


def test_links_name_their_target_in_the_view(tmp_path: Path) -> None:
    ws = virtual_path_type(tmp_path)(VIRTUAL_ROOT) / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(ws / "target")
    (ws / "rel").symlink_to("target")
    assert os.readlink(tmp_path / "ws" / "link") == "/workspace/ws/target"
    assert str((ws / "link").readlink()) == "/workspace/ws/target"
    assert os.readlink(tmp_path / "ws" / "rel") == "target"


def test_host_paths_outside_the_view_are_left_alone(tmp_path: Path) -> None:
    kind = virtual_path_type(tmp_path)
    assert os.fspath(kind("/etc/hostname")) == "/etc/hostname"
    assert os.fspath(kind("/workspacex/a")) == "/workspacex/a"  # not under /workspace
