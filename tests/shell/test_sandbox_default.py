"""The wall behind the fence: the default sandbox ("auto") masks secrets and lets nothing a
command starts outlive it; writes and network stay as without it unless configured.

These tests run the permission engine in yolo with every ask approved, so the fence (the
rules and the secret-mention check) lets the commands run: what keeps the secret is the
sandbox. Each leak test also runs once with the sandbox off, to show it would leak."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from deftly.features.shell import BackgroundTasks
from deftly.features.shell.masks import Mask, SecretScanner, resolve_masks, user_credentials
from tests.cli import run_deftly
from tests.shell.conftest import eventually, exec_started, new_marker, task_id_in
from tests.shell.test_sandbox import _outside_sandbox_dir, needs_bwrap

pytestmark = needs_bwrap

SECRET = "supersecret"
READS = [
    "cat .en''v",
    "python3 -c \"print(open('.env').read())\"",
    "grep -r KEY .",
]
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


@pytest.fixture
def secret_ws(workspace: Path) -> Path:
    (workspace / ".env").write_text(f"KEY={SECRET}\n")
    (workspace / "README.md").write_text("KEY names are documented here\n")
    return workspace


async def _yolo(make_runtime: Any, **shell: Any) -> Runtime:
    rt: Runtime = await make_runtime(
        config={"shell": {"kill_grace": 2.0, **shell}}, mode="yolo", approve_asks=True
    )
    return rt


def _survivors(marker: str) -> list[int]:
    """`pgrep -f marker`: every living process whose command line holds the marker."""
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    return [int(pid) for pid in found.stdout.split()]


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# -- secrets ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", READS)
async def test_the_sandbox_keeps_the_secret_the_fence_let_through(
    make_runtime: Any, secret_ws: Path, command: str
) -> None:
    rt = await _yolo(make_runtime)
    assert not [d for d in rt.diagnostics if d.source == "[shell] sandbox"]
    result = await rt.call("Bash", {"command": command})
    assert SECRET not in result.text
    if command.startswith("cat"):
        assert not result.is_error and "no output" in result.text  # reads as empty
    if command.startswith("grep"):
        assert "README.md" in result.text  # the rest of the workspace is searched
    assert (secret_ws / ".env").read_text() == f"KEY={SECRET}\n"  # untouched on disk


@pytest.mark.parametrize("command", READS)
async def test_without_the_sandbox_the_same_command_leaks(
    make_runtime: Any, secret_ws: Path, command: str
) -> None:
    # The control: with the wall off, the fence alone lets yolo + approval read it.
    rt = await _yolo(make_runtime, sandbox="none")
    result = await rt.call("Bash", {"command": command})
    assert SECRET in result.text


@pytest.mark.local_env  # the deftly command runs the local env
@pytest.mark.parametrize("command", READS)
def test_the_cli_with_yes_prints_nothing_secret(secret_ws: Path, command: str) -> None:
    args = '{"command": ' + json.dumps(command) + "}"
    ran = run_deftly("call", "Bash", args, "--yes", "--mode", "yolo", "-w", str(secret_ws))
    assert "Traceback" not in ran.stderr, ran.stderr
    assert SECRET not in ran.stdout + ran.stderr
    if command.startswith("grep"):
        assert "README.md" in ran.stdout, ran.stdout + ran.stderr


async def test_private_keys_by_header_links_and_new_secrets_are_masked(
    make_runtime: Any, secret_ws: Path
) -> None:
    (secret_ws / "deploy.key").write_text(PRIVATE_KEY)
    (secret_ws / "cert.pem").write_text("-----BEGIN CERTIFICATE-----\nMIIB\n")
    (secret_ws / "notes.txt").symlink_to(".env")  # an innocent name for the secret
    nested = secret_ws / "services" / "api"
    nested.mkdir(parents=True)
    (nested / ".env.production").write_text(f"TOKEN={SECRET}-prod\n")
    rt = await _yolo(make_runtime)
    seen = await rt.call(
        "Bash",
        {"command": "cat deploy.key notes.txt services/api/.env.production; cat cert.pem"},
    )
    assert SECRET not in seen.text and "PRIVATE KEY" not in seen.text
    assert "BEGIN CERTIFICATE" in seen.text  # a certificate is not a secret
    # A secret that appears between two commands is masked from the next one on.
    (nested / ".env.local").write_text(f"TOKEN={SECRET}-local\n")
    later = await rt.call("Bash", {"command": "cat services/api/.env.local"})
    assert SECRET not in later.text
    # A key file whose content turns into a private key is masked too.
    (secret_ws / "cert.pem").write_text(PRIVATE_KEY)
    again = await rt.call("Bash", {"command": "cat cert.pem"})
    assert "PRIVATE KEY" not in again.text


async def test_a_secret_removed_after_the_scan_is_not_recreated(
    make_runtime: Any, secret_ws: Path
) -> None:
    rt = await _yolo(make_runtime)
    await rt.call("Bash", {"command": "true"})  # the scan saw .env
    (secret_ws / ".env").unlink()
    result = await rt.call("Bash", {"command": "ls -a"})
    assert not result.is_error and ".env" not in result.text.split()
    assert not (secret_ws / ".env").exists()


async def test_writes_to_a_masked_secret_fail_and_leave_it_alone(
    make_runtime: Any, secret_ws: Path
) -> None:
    rt = await _yolo(make_runtime)
    result = await rt.call("Bash", {"command": "echo KEY=changed > .env"})
    assert result.is_error and "Read-only file system" in result.text
    assert (secret_ws / ".env").read_text() == f"KEY={SECRET}\n"


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(PRIVATE_KEY)
    (home / ".ssh" / "deploy").write_text(PRIVATE_KEY)  # a key under any name
    (home / ".ssh" / "id_ed25519.pub").write_text("ssh-ed25519 AAAA public\n")
    (home / ".ssh" / "known_hosts").write_text("github.com ssh-ed25519 AAAA\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key={SECRET}\n")
    (home / ".aws" / "config").write_text("[default]\nregion=eu-west-1\n")
    tokens = home / ".config" / "gcloud" / "legacy_credentials" / "me@example.com"
    tokens.mkdir(parents=True)
    (tokens / "adc.json").write_text(f'{{"token": "{SECRET}"}}\n')
    for name in (".netrc", ".git-credentials", ".pgpass", ".npmrc", ".pypirc"):
        (home / name).write_text(f"token {SECRET}\n")
    (home / ".docker").mkdir()
    (home / ".docker" / "config.json").write_text(f'{{"auths": "{SECRET}"}}\n')
    (home / ".kube").mkdir()
    (home / ".kube" / "config").write_text(f"token: {SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    return home


async def test_the_users_credential_files_read_as_empty(make_runtime: Any, fake_home: Path) -> None:
    rt = await _yolo(make_runtime)
    command = (
        "cat ~/.ssh/id_ed25519 ~/.ssh/deploy ~/.aws/credentials ~/.netrc ~/.git-credentials "
        "~/.pgpass ~/.npmrc ~/.pypirc ~/.docker/config.json ~/.kube/config; "
        "ls -A ~/.config/gcloud/legacy_credentials; grep -r token ~/.config/gcloud; "
        "cat ~/.ssh/id_ed25519.pub ~/.ssh/known_hosts ~/.aws/config"
    )
    result = await rt.call("Bash", {"command": command})
    assert SECRET not in result.text and "PRIVATE KEY" not in result.text
    assert "me@example.com" not in result.text  # the credential directory is empty
    assert "ssh-ed25519 AAAA public" in result.text  # public files stay readable
    assert "github.com" in result.text and "eu-west-1" in result.text


async def test_the_ssh_agent_socket_stays_reachable(
    make_runtime: Any, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fake_home / ".ssh" / "agent.sock"  # in ~/.ssh, beside masked keys
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"agent-ok")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    monkeypatch.setenv("SSH_AUTH_SOCK", str(path))
    try:
        rt = await _yolo(make_runtime)
        script = (
            "import os, socket; s = socket.socket(socket.AF_UNIX); "
            "s.connect(os.environ['SSH_AUTH_SOCK']); print(s.recv(16).decode())"
        )
        result = await rt.call("Bash", {"command": f'python3 -c "{script}"'})
        assert result.text == "agent-ok\n", result.text
    finally:
        server.close()
        thread.join(5)


async def test_the_strict_sandbox_masks_too(make_runtime: Any, secret_ws: Path) -> None:
    rt = await _yolo(make_runtime, sandbox="bwrap")
    result = await rt.call("Bash", {"command": "cat .en''v; grep -r KEY ."})
    assert SECRET not in result.text and "README.md" in result.text


# -- writes and network ----------------------------------------------------------------


@pytest.mark.local_env  # writes to a folder of this machine outside the workspace
async def test_by_default_writes_and_network_are_as_without_a_sandbox(
    make_runtime: Any, workspace: Path
) -> None:
    outside = _outside_sandbox_dir(workspace) / f"sandbox-probe-{new_marker()}"
    rt = await _yolo(make_runtime)
    try:
        wrote = await rt.call("Bash", {"command": f"echo out > {outside} && cat {outside}"})
        assert wrote.text == "out\n" and outside.read_text() == "out\n"
    finally:
        outside.unlink(missing_ok=True)
    net = await rt.call("Bash", {"command": "cat /proc/net/dev"})
    interfaces = [line.split(":")[0].strip() for line in net.text.splitlines()[2:]]
    assert interfaces != ["lo"]  # the host's network


@pytest.mark.local_env  # writes to a folder of this machine outside the workspace
@pytest.mark.parametrize(
    "shell",
    [
        {"sandbox": {"write": "workspace", "network": False}},  # [shell.sandbox] table
        {"sandbox": {"mode": "auto", "write": "workspace"}, "network": False},  # old key
    ],
)
async def test_write_workspace_and_no_network_when_configured(
    make_runtime: Any, workspace: Path, shell: dict[str, Any]
) -> None:
    outside = _outside_sandbox_dir(workspace) / f"sandbox-probe-{new_marker()}"
    rt = await _yolo(make_runtime, **shell)
    try:
        blocked = await rt.call("Bash", {"command": f"echo bad > {outside}"})
        assert blocked.is_error and "Read-only file system" in blocked.text
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)
    inside = await rt.call(
        "Bash", {"command": "echo ok > in.txt && mktemp >/dev/null && cat in.txt"}
    )
    assert inside.text == "ok\n"
    net = await rt.call("Bash", {"command": "cat /proc/net/dev"})
    interfaces = [line.split(":")[0].strip() for line in net.text.splitlines()[2:]]
    assert interfaces == ["lo"]
    description = rt.registry.get("Bash").tool.description  # type: ignore[union-attr]
    assert "read-only except the workspace" in description and "no network" in description


# -- nothing outlives its task ---------------------------------------------------------

ESCAPES = {
    "setsid &": "setsid bash -c 'exec -a {m} sleep 1000' & echo started",
    "setsid -f": "setsid -f bash -c 'exec -a {m} sleep 1000'; echo started",
    "double fork": "( setsid bash -c 'exec -a {m} sleep 1000' & ) & echo started",
    "nohup": "nohup bash -c 'exec -a {m} sleep 1000' >/dev/null 2>&1 & disown; echo started",
}


@pytest.mark.parametrize("escape", list(ESCAPES))
async def test_a_setsid_grandchild_dies_with_its_command(make_runtime: Any, escape: str) -> None:
    marker = new_marker()
    rt = await _yolo(make_runtime)
    try:
        result = await rt.call("Bash", {"command": ESCAPES[escape].format(m=marker)})
        assert result.text.startswith("started"), result.text
        assert await eventually(lambda: not _survivors(marker), 5)
    finally:
        _kill(_survivors(marker))


@pytest.mark.parametrize("escape", list(ESCAPES))
async def test_a_setsid_grandchild_dies_when_its_background_task_is_stopped(
    make_runtime: Any, escape: str
) -> None:
    marker, main = new_marker(), new_marker()
    rt = await _yolo(make_runtime)
    command = ESCAPES[escape].format(m=marker) + f"; exec -a {main} sleep 1000"
    try:
        started = await rt.call("Bash", {"command": command, "run_in_background": True})
        task_id = task_id_in(started.text)
        assert await eventually(lambda: exec_started(main) and exec_started(marker))
        stopped = await rt.call("TaskStop", {"task_id": task_id})
        assert "status: killed" in stopped.text
        assert not _survivors(marker) and not _survivors(main)
    finally:
        _kill(_survivors(marker) + _survivors(main))


async def test_without_the_sandbox_a_setsid_grandchild_escapes(make_runtime: Any) -> None:
    # Issue 11 changed this control: without the sandbox a new session no longer leaves for
    # good, deftly is a child subreaper and stops it as the command ends
    # (tests/shell/test_reaper.py has the cases).
    marker = new_marker()
    rt = await _yolo(make_runtime, sandbox="none")
    try:
        result = await rt.call("Bash", {"command": ESCAPES["setsid -f"].format(m=marker)})
        assert "they were stopped" in result.text
        assert not _survivors(marker)
        await rt.close()
        assert not _survivors(marker)
    finally:
        _kill(_survivors(marker))


async def test_a_stopped_task_still_gets_sigterm_and_its_grace(make_runtime: Any) -> None:
    marker = new_marker()
    rt = await _yolo(make_runtime)
    # The trap takes a while: without a grace, bubblewrap's end would cut it short.
    command = (
        f"trap 'sleep 0.5; echo term-$((40 + 2)); exit 3' TERM; exec -a {marker} sleep 1000 & wait"
    )
    started = await rt.call("Bash", {"command": command, "run_in_background": True})
    task_id = task_id_in(started.text)
    assert await eventually(lambda: exec_started(marker))
    stopped = await rt.call("TaskStop", {"task_id": task_id})
    assert "term-42" in stopped.text  # the shell's trap ran: SIGTERM first, not SIGKILL
    assert not _survivors(marker)


async def test_commands_see_their_own_processes_and_a_signal_is_named(
    make_runtime: Any,
) -> None:
    rt = await _yolo(make_runtime)
    tasks = rt.service(BackgroundTasks)
    assert tasks.launcher.sandbox.active
    seen = await rt.call("Bash", {"command": "echo $$; ls /proc | grep -c '^[0-9]'"})
    pid, count = (int(x) for x in seen.text.split())
    assert pid < 10 and count < 10  # a PID namespace of its own, with its own /proc
    killed = await rt.call("Bash", {"command": "kill -TERM $$"})
    assert killed.is_error and "SIGTERM" in killed.text


# -- when bubblewrap cannot start --------------------------------------------------------


async def test_auto_falls_back_to_the_fence_and_says_so_once(
    make_runtime: Any, secret_ws: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    rt = await _yolo(make_runtime, bwrap=str(fake))
    [diagnostic] = [d for d in rt.diagnostics if d.source == "[shell] sandbox"]
    assert diagnostic.level == "warning"
    assert "No permissions" in diagnostic.message and "without the sandbox" in diagnostic.message
    assert 'sandbox = "none"' in diagnostic.message
    first = await rt.call("Bash", {"command": "echo hi"})
    assert first.text == "hi\n"  # runs, unconfined
    leaked = await rt.call("Bash", {"command": "cat .en''v"})
    assert SECRET in leaked.text  # no wall here: only the fence, which yolo + approval passed
    description = rt.registry.get("Bash").tool.description  # type: ignore[union-attr]
    assert "sandbox" not in description
    assert len([d for d in rt.diagnostics if d.source == "[shell] sandbox"]) == 1


async def test_the_description_says_what_the_default_sandbox_does(make_runtime: Any) -> None:
    rt = await _yolo(make_runtime)
    description = rt.registry.get("Bash").tool.description  # type: ignore[union-attr]
    assert "secret files" in description and "read as empty" in description
    assert "killed when it ends" in description
    assert "filesystem is read-only" not in description and "no network" not in description
    off = await _yolo(make_runtime, sandbox="none")
    assert "sandbox" not in off.registry.get("Bash").tool.description  # type: ignore[union-attr]


# -- the scanner ---------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / ".env").write_text("x")
    (root / "a" / "b" / ".env.example").write_text("x")
    (root / "a" / "id_rsa").write_text("x")
    (root / "a" / "id_rsa.pub").write_text("x")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / ".env").write_text("x")  # not walked: heavy folder
    (root / ".aws" / "credentials").mkdir(parents=True)
    (root / ".aws" / "credentials" / "prod").write_text("x")
    yield root


def _age(root: Path) -> None:
    """Make every directory look untouched for a minute (so the cache may trust it)."""
    for directory in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        info = directory.stat()
        os.utime(directory, ns=(info.st_atime_ns, info.st_mtime_ns - 60_000_000_000))


def test_the_scanner_finds_what_the_file_tools_refuse(tree: Path) -> None:
    found = set(SecretScanner().scan([tree]).secrets)
    assert found == {
        tree / "a" / "b" / ".env",
        tree / "a" / "id_rsa",
        tree / ".aws" / "credentials" / "prod",
    }


def test_the_scanner_reads_again_only_what_changed(tree: Path) -> None:
    scanner = SecretScanner()
    _age(tree)
    scanner.scan([tree])
    (tree / "a" / "b" / ".env").unlink()  # changes b's mtime: b is read again
    (tree / "a" / ".netrc").write_text("x")
    assert set(scanner.scan([tree]).secrets) == {
        tree / "a" / "id_rsa",
        tree / "a" / ".netrc",
        tree / ".aws" / "credentials" / "prod",
    }
    # A directory changed within the last second is never trusted from the cache, even
    # when its mtime looks the same (a change in the same clock tick).
    fresh = tree / "fresh"
    fresh.mkdir()
    scanner.scan([tree])
    stamp = fresh.stat().st_mtime_ns
    (fresh / ".env").write_text("x")
    os.utime(fresh, ns=(stamp, stamp))
    assert fresh / ".env" in scanner.scan([tree]).secrets


def test_the_scanner_stops_at_its_bound_and_says_so(tree: Path) -> None:
    result = SecretScanner(max_directories=2).scan([tree])
    assert result.incomplete is not None and "2 directories" in result.incomplete


def test_masks_follow_links_and_drop_what_vanished(tmp_path: Path) -> None:
    real = tmp_path / "real.env"
    real.write_text("x")
    link = tmp_path / ".env"
    link.symlink_to(real)
    dangling = tmp_path / ".env.local"
    dangling.symlink_to(tmp_path / "missing")
    masks = resolve_masks([Mask(link), Mask(real), Mask(dangling), Mask(tmp_path / "gone")])
    assert masks == [Mask(real)]


def test_user_credentials_keep_the_agent_socket(tmp_path: Path) -> None:
    (tmp_path / ".config" / "gcloud" / "legacy_credentials").mkdir(parents=True)
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text(PRIVATE_KEY)
    masks = user_credentials(
        tmp_path, keep=[tmp_path / ".config" / "gcloud" / "legacy_credentials" / "s"]
    )
    assert masks == [Mask(tmp_path / ".ssh" / "id_rsa")]


# -- the configuration -------------------------------------------------------------------


def test_sandbox_is_a_string_or_a_table_and_the_old_keys_still_apply() -> None:
    from deftly.config.loader import parse_config
    from deftly.config.shell import Confinement
    from deftly.contract.errors import ConfigError

    def confinement(shell: dict[str, Any]) -> Confinement:
        return parse_config({"shell": shell}).shell.confinement

    assert confinement({}) == Confinement("auto", "anywhere", True, ())
    assert confinement({"sandbox": "bwrap"}) == Confinement("bwrap", "workspace", True, ())
    assert confinement({"sandbox": "none"}).mode == "none"
    table = {"sandbox": {"write": "workspace", "network": False, "writable": ["~/.cache"]}}
    assert confinement(table) == Confinement("auto", "workspace", False, ("~/.cache",))
    old = {"sandbox": "auto", "network": False, "writable": ["/srv"]}
    assert confinement(old) == Confinement("auto", "anywhere", False, ("/srv",))
    both = {"sandbox": {"network": True}, "network": False}
    assert confinement(both).network is True  # the table wins over the old key
    toml = '[shell]\ntimeout = 5\n[shell.sandbox]\nwrite = "workspace"\nnetwork = false\n'
    assert parse_config(tomllib.loads(toml)).shell.confinement.write == "workspace"
    with pytest.raises(ConfigError, match="sandbox"):
        parse_config({"shell": {"sandbox": {"write": "everywhere"}}})
    with pytest.raises(ConfigError, match="sandbox"):
        parse_config({"shell": {"sandbox": {"mode": "firejail"}}})
