"""The rooted env: a virtual root mapped onto real folders, for files and for processes,
and no way out of it through a link (real folders, real bubblewrap, a real runtime)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from deftly.env import PathChanged
from deftly.env.rooted import Mount, MountTable, RootedEnv
from deftly.policy.paths import Workspace

SECRET = "host-secret-3f9a"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A real folder holding the workspace (`ws`) and, beside it, a host file no mount
    shows (`outside/secret.txt`)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET)
    return tmp_path


@pytest.fixture
def env(host: Path) -> Iterator[RootedEnv]:
    rooted = RootedEnv({"/workspace": host / "ws"})
    yield rooted
    rooted.close()


def test_the_mount_table_maps_both_ways_through_the_innermost_mount(tmp_path: Path) -> None:
    (tmp_path / "inner").mkdir()
    table = MountTable([Mount("/a", str(tmp_path)), Mount("/a/b/c", str(tmp_path / "inner"))])
    real = os.path.realpath(tmp_path)
    assert table.real_of("/a/x") == f"{real}/x"
    assert table.real_of("/a/b/c/y") == f"{real}/inner/y"
    assert table.real_of("/elsewhere") is None
    assert table.virtual_of(f"{real}/inner/z") == "/a/b/c/z"  # the longest real folder
    assert table.virtual_of("/etc/passwd") is None
    assert table.leads_to_mount("/") and table.leads_to_mount("/a/b")
    assert table.children("/") == ["a"] and table.children("/a/b") == ["c"]
    with pytest.raises(ValueError, match="hide the system"):
        table.add(Mount("/", str(tmp_path)))


def test_files_are_named_in_the_view(env: RootedEnv, host: Path) -> None:
    (host / "ws" / "a.txt").write_text("hello")
    assert env.read_bytes(Path("/workspace/a.txt")) == b"hello"
    assert env.stat(Path("/workspace")).is_dir()
    env.make_dirs(Path("/workspace/new/deep"))
    env.write_atomic(Path("/workspace/new/deep/b.txt"), b"made")
    assert (host / "ws" / "new" / "deep" / "b.txt").read_text() == "made"
    names = {e.name: e.path for e in env.scandir(Path("/workspace"))}
    assert names == {"a.txt": "/workspace/a.txt", "new": "/workspace/new"}
    assert {e.name for e in env.scandir(Path("/"))} >= {"workspace", "tmp", "usr"}
    temp = env.write_temp(b"scratch", suffix=".x")
    assert str(temp).startswith("/tmp/") and env.read_bytes(temp) == b"scratch"
    env.remove(temp)
    assert not env.exists(temp)
    assert env.to_virtual(host / "ws" / "a.txt") == Path("/workspace/a.txt")
    assert env.to_real("/workspace/a.txt") == Path(os.path.realpath(host / "ws" / "a.txt"))


def test_a_path_outside_every_mount_does_not_exist(env: RootedEnv, host: Path) -> None:
    real_secret = host / "outside" / "secret.txt"
    for path in (real_secret, Path("/nowhere/file"), Path("/workspace/../outside/secret.txt")):
        with pytest.raises(FileNotFoundError):
            env.read_bytes(path)
        assert not env.exists(path)
    with pytest.raises(OSError) as refused:
        env.write_atomic(Path("/nowhere/new.txt"), b"x")
    assert refused.value.errno == errno.ENOENT
    with pytest.raises(OSError) as read_only:
        env.write_atomic(Path("/usr/deftly-rooted-test"), b"x")
    assert read_only.value.errno == errno.EROFS


def test_errors_name_the_virtual_path_never_the_real_one(env: RootedEnv, host: Path) -> None:
    with pytest.raises(FileNotFoundError) as missing:
        env.read_bytes(Path("/workspace/missing.txt"))
    assert missing.value.filename == "/workspace/missing.txt"
    assert str(host) not in str(missing.value)


def _plant_escapes(host: Path) -> dict[str, str]:
    """Links inside the workspace that lead out of it on the host."""
    ws = host / "ws"
    outside = host / "outside"
    os.symlink(outside / "secret.txt", ws / "abs-file")  # a host path outside the mounts
    os.symlink(outside, ws / "abs-dir")
    os.symlink("../outside/secret.txt", ws / "up-file")  # climbs above the mount's root
    os.symlink("../../../../../../../../../../" + str(outside).lstrip("/"), ws / "deep-up")
    (ws / "sub").mkdir()
    os.symlink(outside, ws / "sub" / "hop")
    return {
        "abs-file": "/workspace/abs-file",
        "abs-dir/secret.txt": "/workspace/abs-dir/secret.txt",
        "up-file": "/workspace/up-file",
        "deep-up/secret.txt": "/workspace/deep-up/secret.txt",
        "..-after-link": "/workspace/sub/hop/../outside/secret.txt",
    }


def test_links_to_host_paths_lead_nowhere_not_out(env: RootedEnv, host: Path) -> None:
    escapes = _plant_escapes(host)
    for name, path in escapes.items():
        with pytest.raises(FileNotFoundError):
            env.read_bytes(Path(path))
        # A write through the link stays in the view: nothing lands on the host file.
        with pytest.raises(OSError):
            env.append(Path(path), b"pwned")
        assert (host / "outside" / "secret.txt").read_text() == SECRET, name
    # A new file written "through" a link to a host folder is not made there.
    with pytest.raises(OSError):
        env.write_atomic(Path("/workspace/abs-dir/planted.txt"), b"x")
    assert not (host / "outside" / "planted.txt").exists()


def test_the_path_policy_sees_the_links_in_the_view(env: RootedEnv, host: Path) -> None:
    escapes = _plant_escapes(host)
    workspace = Workspace(Path("/workspace"), home=env.home(), probe=env.path_probe())
    for path in escapes.values():
        located = workspace.locate(path, "read")
        # Where the link leads in the view is a path no mount shows (or outside the
        # workspace), never the host file.
        assert not env.exists(located.real), path
        assert str(host) not in str(located.real) or located.outside, path


async def test_processes_see_the_view(env: RootedEnv, host: Path) -> None:
    (host / "ws" / "a.txt").write_text("from the host\n")
    _plant_escapes(host)
    script = "pwd; cat /workspace/a.txt; cat abs-file up-file 2>&1; echo home=$HOME; ls /"
    process = await env.spawn(["bash", "-c", script], cwd=Path("/workspace"))
    assert process.stdout is not None
    output = (await process.stdout.read()).decode()
    assert await process.wait() == 0
    lines = output.splitlines()
    assert lines[0] == "/workspace" and lines[1] == "from the host"
    assert SECRET not in output and "No such file" in output
    assert str(host) not in output
    assert f"home={env.home()}" in lines
    assert "workspace" in lines and "outside" not in lines


async def test_spawn_in_a_missing_folder_fails_as_locally(env: RootedEnv) -> None:
    with pytest.raises(FileNotFoundError):
        await env.spawn(["true"], cwd=Path("/workspace/missing"))


def test_which_and_the_program_dirs_are_in_the_view(env: RootedEnv) -> None:
    bash = env.which("bash")
    assert bash is not None and env.exists(Path(bash))
    rg = env.which("rg", os.pathsep.join(env.program_dirs()))
    assert rg is not None and env.stat(Path(rg)).is_file()
    assert env.which("deftly-no-such-program") is None


def test_the_session_area_is_mounted_once(env: RootedEnv, tmp_path: Path) -> None:
    local = tmp_path / "data" / "sessions" / "abc"
    area = env.session_area(local)
    assert area == Path("/var/lib/deftly/sessions/abc") and env.session_area(local) == area
    env.write_atomic(area / "spill.txt", b"long output")
    assert (local / "spill.txt").read_bytes() == b"long output"


def test_a_checked_path_is_never_re_resolved_through_a_swapped_link(
    env: RootedEnv, host: Path
) -> None:
    # The policy checked /workspace/a/b (no links). A directory on the way swapped for a
    # link to a folder the view also shows must be refused, not followed.
    (host / "ws" / "a").mkdir()
    (host / "ws" / "elsewhere").mkdir()
    (host / "ws" / "elsewhere" / "old.txt").write_text("not this one")
    os.rename(host / "ws" / "a", host / "ws" / "a.moved")
    os.symlink("elsewhere", host / "ws" / "a")  # the same place in the view and on the host
    with pytest.raises(PathChanged):
        env.make_dirs(Path("/workspace/a/b"), pinned=True)
    with pytest.raises(PathChanged):
        env.write_atomic(Path("/workspace/a/new.txt"), b"x", pinned=True)
    with pytest.raises(PathChanged):
        env.open_read(Path("/workspace/a/old.txt"), pinned=True)
    with pytest.raises(PathChanged):
        env.append(Path("/workspace/a/old.txt"), b"x", pinned=True)
    assert [p.name for p in (host / "ws" / "elsewhere").iterdir()] == ["old.txt"]
    assert (host / "ws" / "elsewhere" / "old.txt").read_text() == "not this one"
