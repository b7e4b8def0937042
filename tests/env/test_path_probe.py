"""The path policy resolves through its probe: equal to `os.path.realpath` locally, and
blind to this machine when the probe shows another tree."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.contract import PathSecurityError
from deftly.contract.fs import LOCAL_PROBE
from deftly.policy.paths import SymlinkLoopError, Workspace, real_path, real_path_text
from deftly.policy.permissions.git import FileState, file_state, find_git_tree
from deftly.policy.sensitive import private_key_reason
from tests.env.probes import VIRTUAL, VirtualProbe

NAMES = ["a", "b", "c"]
PRIVATE_KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n"

component = st.sampled_from([*NAMES, "..", ".", "x"])
relative_target = st.lists(component, min_size=1, max_size=3).map("/".join)


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    """Entries (kind, path below the root, link target) of a small random tree."""
    entries: list[tuple[str, str, str]] = []
    for depth_one in NAMES:
        kind = draw(st.sampled_from(["dir", "file", "link", "none"]))
        entries.append((kind, depth_one, ""))
        if kind == "dir":
            for depth_two in NAMES:
                inner = draw(st.sampled_from(["dir", "file", "link", "none"]))
                entries.append((inner, f"{depth_one}/{depth_two}", ""))
    out = []
    for kind, path, _ in entries:
        if kind == "link":
            absolute = draw(st.booleans())
            target = draw(relative_target)
            out.append((kind, path, ("{root}/" if absolute else "") + target))
        else:
            out.append((kind, path, ""))
    return out


def build(root: Path, entries: list[tuple[str, str, str]]) -> None:
    """Make the tree: directories first, then files and links (dangling allowed)."""
    for kind, path, _ in entries:
        if kind == "dir":
            (root / path).mkdir(parents=True, exist_ok=True)
    for kind, path, target in entries:
        if kind == "file" and (root / path).parent.is_dir():
            (root / path).write_text("x")
        elif kind == "link" and (root / path).parent.is_dir():
            os.symlink(target.replace("{root}", os.fspath(root)), root / path)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(entries=trees(), queries=st.lists(st.lists(component, min_size=1, max_size=6), max_size=8))
def test_local_resolution_equals_os_realpath_where_it_is_defined(
    tmp_path_factory: pytest.TempPathFactory,
    entries: list[tuple[str, str, str]],
    queries: list[list[str]],
) -> None:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("tree")))
    build(root, entries)
    for parts in [*queries, *([name] for name in NAMES)]:
        query = os.path.join(root, *parts)
        try:
            ours = real_path_text(query, LOCAL_PROBE)
        except SymlinkLoopError:
            # Undefined for realpath: the kernel refuses the path too.
            with pytest.raises(OSError) as refused:
                os.stat(query)
            assert refused.value.errno in (errno.ELOOP, errno.ENOENT, errno.ENOTDIR)
            continue
        assert ours == os.path.realpath(query), (entries, parts)
        assert real_path(query) == Path(ours)  # the default probe is the local one


def test_a_loop_of_links_is_refused_by_the_policy(tmp_path: Path) -> None:
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    with pytest.raises(SymlinkLoopError):
        real_path_text(tmp_path / "a" / "file")
    workspace = Workspace(tmp_path)
    with pytest.raises(PathSecurityError) as refused:
        workspace.resolve("a/file", "read")
    assert refused.value.code == "PATH_LOOP"


def virtual_workspace(tmp_path: Path) -> tuple[Workspace, VirtualProbe, Path]:
    """A workspace at /virtual/ws, really tmp_path/ws, with an outside dir beside it."""
    real = tmp_path / "real"
    (real / "ws" / "src").mkdir(parents=True)
    (real / "outside").mkdir()
    (real / "outside" / "notes.txt").write_text("outside")
    (real / "ws" / "src" / "app.py").write_text("print(1)")
    os.symlink(f"{VIRTUAL}/outside", real / "ws" / "out")  # absolute, in the virtual view
    os.symlink("src", real / "ws" / "code")
    (real / "ws" / "deploy.pem").write_bytes(PRIVATE_KEY)
    (real / "ws" / "cert.pem").write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    probe = VirtualProbe(real)
    return Workspace(Path(f"{VIRTUAL}/ws"), probe=probe), probe, real


def test_every_resolution_goes_through_the_probe(tmp_path: Path) -> None:
    workspace, probe, _ = virtual_workspace(tmp_path)
    assert workspace.resolve("code/app.py", "read") == Path(f"{VIRTUAL}/ws/src/app.py")
    assert workspace.contains(f"{VIRTUAL}/ws/code/app.py")
    assert not workspace.contains(f"{VIRTUAL}/ws/out/notes.txt")
    with pytest.raises(PathSecurityError) as refused:
        workspace.resolve("out/notes.txt", "read")
    assert refused.value.code == "PATH_OUTSIDE_WORKSPACE"
    assert f"{VIRTUAL}/outside/notes.txt" in str(refused.value)
    assert any(call.startswith("link_target /virtual/ws/code") for call in probe.calls)
    # The local machine has no /virtual: through the local probe the link is not there.
    assert real_path_text(f"{VIRTUAL}/ws/code/app.py") == f"{VIRTUAL}/ws/code/app.py"


def test_private_keys_are_recognised_by_the_header_the_probe_reads(tmp_path: Path) -> None:
    workspace, probe, _ = virtual_workspace(tmp_path)
    with pytest.raises(PathSecurityError) as refused:
        workspace.resolve("deploy.pem", "read")
    assert refused.value.code == "PATH_SENSITIVE"
    assert f"read_header {VIRTUAL}/ws/deploy.pem" in probe.calls
    assert workspace.resolve("cert.pem", "read") == Path(f"{VIRTUAL}/ws/cert.pem")
    assert private_key_reason(f"{VIRTUAL}/ws/deploy.pem", probe) == "a private key"
    assert private_key_reason(f"{VIRTUAL}/ws/deploy.pem") is None  # not on this machine


def test_git_checks_ask_the_probe(tmp_path: Path) -> None:
    workspace, probe, real = virtual_workspace(tmp_path)
    git = ["git", "-C", os.fspath(real / "ws")]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "src/app.py"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"], check=True
    )
    tree = find_git_tree(workspace.root, probe)
    assert tree is not None
    assert tree.top == Path(f"{VIRTUAL}/ws")
    assert tree.control_dirs == (Path(f"{VIRTUAL}/ws/.git"),)
    assert find_git_tree(workspace.root) is None  # this machine has no /virtual
    clean = Path(f"{VIRTUAL}/ws/src/app.py")
    assert file_state(tree, clean, probe=probe) == (FileState.CLEAN, "")
    (real / "ws" / "src" / "app.py").write_text("print(2)")
    assert file_state(tree, clean, probe=probe)[0] is FileState.CHANGED
    assert file_state(tree, Path(f"{VIRTUAL}/ws/cert.pem"), probe=probe)[0] is (FileState.UNTRACKED)
    assert f"run git in {VIRTUAL}/ws" in probe.calls


def test_a_worktree_gitdir_file_is_read_through_the_probe(tmp_path: Path) -> None:
    workspace, probe, real = virtual_workspace(tmp_path)
    (real / "outside" / "gitdir").mkdir()
    (real / "outside" / "gitdir" / "commondir").write_text("../common\n")
    (real / "ws" / ".git").write_text(f"gitdir: {VIRTUAL}/outside/gitdir\n")
    tree = find_git_tree(workspace.root / "src", probe)
    assert tree is not None and tree.top == Path(f"{VIRTUAL}/ws")
    assert tree.control_dirs == (
        Path(f"{VIRTUAL}/outside/gitdir"),
        Path(f"{VIRTUAL}/outside/common"),
    )


def test_the_permission_engine_asks_git_and_headers_through_the_workspace_probe(
    tmp_path: Path,
) -> None:
    from deftly.contract.accesses import FileAccess, Operation, WriteHow
    from deftly.policy.permissions.engine import PermissionEngine

    workspace, probe, real = virtual_workspace(tmp_path)
    git = ["git", "-C", os.fspath(real / "ws")]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "src/app.py"], check=True)
    subprocess.run(
        [*git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"], check=True
    )
    engine = PermissionEngine(workspace)
    tree = engine.git_tree()
    assert tree is not None and tree.top == Path(f"{VIRTUAL}/ws")

    def write(path: str) -> FileAccess:
        return FileAccess(Operation.WRITE, path, how=WriteHow.REPLACE)

    # Tracked and clean, as git (run through the probe) says: approved unasked.
    assert engine._write_problem(write(f"{VIRTUAL}/ws/src/app.py")) is None
    untracked = engine._write_problem(write(f"{VIRTUAL}/ws/cert.pem"))
    assert untracked is not None and "not tracked by git" in untracked
    # A private key found by the header the probe reads; git's directory by the probe's tree.
    assert "private key" in (engine._protected_write(write(f"{VIRTUAL}/ws/deploy.pem")) or "")
    assert ".git" in (engine._protected_write(write(f"{VIRTUAL}/ws/.git/config")) or "")
    assert f"run git in {VIRTUAL}/ws" in probe.calls
