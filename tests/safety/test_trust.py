"""Workspace trust through the Python API: an untrusted folder's own config cannot run a
program or loosen the leash; trusted (recorded, or trust=True) it applies whole.

Everything is real: hooks are shell commands and MCP servers are processes that would
leave a marker file behind; the trust record is the real file in the test's data home.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly import CallResult, Outcome, Runtime
from deftly.config import load_config, user_config_dir
from deftly.config.trust import STORE_NAME, TrustStore
from deftly.config.untrusted import restrict
from deftly.contract import ConfigError
from deftly.features.mcp.manager import McpManager
from deftly.session import data_home

HOOK = """
[[hooks.PreToolUse]]
command = "touch {marker}"
"""


def write_config(workspace: Path, text: str) -> Path:
    path = workspace / ".deftly" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def marker_server(workspace: Path, marker: Path) -> Path:
    """A `.deftly/mcp.json` whose server command leaves `marker` (then exits)."""
    path = workspace / ".deftly" / "mcp.json"
    path.parent.mkdir(exist_ok=True)
    code = f"open({str(marker)!r}, 'w').close()"
    server = {"command": sys.executable, "args": ["-c", code], "startup_timeout": 20}
    path.write_text(json.dumps({"mcpServers": {"planted": server}}))
    return path


def store() -> TrustStore:
    return TrustStore(data_home())


def refused(result: CallResult) -> bool:
    """Asked, and nobody could answer (the runtime has no approver)."""
    return result.outcome is Outcome.VETOED and "needs approval" in result.text


def denied(result: CallResult) -> bool:
    return result.outcome is Outcome.VETOED and "denied by the permission rule" in result.text


def trust_warnings(rt: Runtime) -> list[str]:
    return [d.message for d in rt.diagnostics if d.source == "workspace trust"]


async def started(workspace: Path, **kwargs: Any) -> Runtime:
    kwargs.setdefault("plugins", False)
    rt = Runtime(workspace, **kwargs)
    await rt.start()
    return rt


# -- what runs a program -----------------------------------------------------------------


async def test_an_untrusted_hook_does_not_run_and_a_trusted_one_does(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "hook-ran"
    config = write_config(workspace, HOOK.format(marker=shlex.quote(str(marker))))
    (workspace / "notes.txt").write_text("hello\n")

    rt = await started(workspace)
    try:
        result = await rt.call("Read", {"path": "notes.txt"})
        assert result.outcome is Outcome.EXECUTED and "hello" in result.text
        assert not marker.exists()
        [warning] = trust_warnings(rt)
        assert "[hooks] PreToolUse (1 entry)" in warning and str(config) in warning
        assert f"deftly trust {workspace}" in warning and "--trust" in warning
        assert "Runtime(trust=True)" in warning
    finally:
        await rt.close()

    rt = await started(workspace, trust=True)
    try:
        await rt.call("Read", {"path": "notes.txt"})
        assert marker.exists()
        assert trust_warnings(rt) == []
    finally:
        await rt.close()


async def test_an_untrusted_mcp_json_server_is_never_started(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "server-ran"
    mcp_json = marker_server(workspace, marker)

    rt = await started(workspace)
    try:
        assert not marker.exists()
        assert rt.service(McpManager).statuses() == []
        [warning] = trust_warnings(rt)
        assert "MCP servers (planted)" in warning and str(mcp_json) in warning
    finally:
        await rt.close()

    rt = await started(workspace, trust=True)  # the server starts (and fails: it exits)
    try:
        assert marker.exists()
        assert [s.name for s in rt.service(McpManager).statuses()] == ["planted"]
    finally:
        await rt.close()


async def test_a_users_relative_mcp_file_in_the_workspace_counts_only_when_trusted(
    workspace: Path, tmp_path: Path
) -> None:
    """A user who reads every project's `.mcp.json` (a relative `config_files` entry) does
    not let an untrusted project start its servers."""
    marker = tmp_path / "server-ran"
    user = user_config_dir() / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[mcp]\nconfig_files = [".mcp.json"]\n')
    planted = marker_server(workspace, marker).rename(workspace / ".mcp.json")
    rt = await started(workspace)
    try:
        assert not marker.exists() and rt.service(McpManager).statuses() == []
        [warning] = trust_warnings(rt)
        assert f"MCP servers (planted) from {planted}" in warning
    finally:
        await rt.close()
    rt = await started(workspace, trust=True)
    try:
        assert marker.exists()
    finally:
        await rt.close()


async def test_untrusted_tool_modules_and_mcp_servers_in_config_toml_are_ignored(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "inline-server-ran"
    code = f"open({str(marker)!r}, 'w').close()"
    server = {"command": sys.executable, "args": ["-c", code]}
    write_config(
        workspace,
        '[tools]\nload = ["tests.helpers:EchoTool"]\n'
        f"[mcp.servers.inline]\ncommand = {json.dumps(server['command'])}\n"
        f"args = {json.dumps(server['args'])}\n",
    )
    rt = await started(workspace)
    try:
        assert "Echo" not in {t.name for t in rt.tools()}
        assert not marker.exists()
        [warning] = trust_warnings(rt)
        assert "[tools] load (1 entry)" in warning and "[mcp] servers (inline)" in warning
    finally:
        await rt.close()
    rt = await started(workspace, trust=True)
    try:
        assert "Echo" in {t.name for t in rt.tools()}
        assert marker.exists()
    finally:
        await rt.close()


# -- what widens permissions ---------------------------------------------------------------


async def test_mode_and_allow_rules_need_trust_but_deny_and_ask_rules_always_apply(
    workspace: Path,
) -> None:
    write_config(
        workspace,
        "[permissions]\n"
        'mode = "auto"\n'
        'allow = ["Write(notes.txt)"]\n'
        'deny = ["Write(secret.txt)"]\n'
        'ask = ["Read(asked.txt)"]\n',
    )
    (workspace / "notes.txt").write_text("mine\n")  # untracked, never read: asks in manual
    (workspace / "asked.txt").write_text("private\n")
    write = {"path": "notes.txt", "content": "replaced\n"}

    rt = await started(workspace)
    try:
        assert rt.mode == "manual"
        assert [e.text for e in rt.permissions.rules] == ["Write(secret.txt)", "Read(asked.txt)"]
        result = await rt.call("Write", write)
        assert refused(result), result.text
        assert (workspace / "notes.txt").read_text() == "mine\n"
        result = await rt.call("Write", {"path": "secret.txt", "content": "x"})
        assert denied(result) and not (workspace / "secret.txt").exists()
        result = await rt.call("Read", {"path": "asked.txt"})
        assert refused(result) and "private" not in result.text
        [warning] = trust_warnings(rt)
        assert '[permissions] mode = "auto"' in warning
        assert "[permissions] allow (1 entry)" in warning
        assert "deny and ask rules still apply" in warning
    finally:
        await rt.close()

    store().trust(workspace)  # recorded, as `deftly trust` does: everything applies
    rt = await started(workspace)
    try:
        assert rt.trusted and rt.mode == "auto" and trust_warnings(rt) == []
        written = await rt.call("Write", write)
        assert written.outcome is Outcome.EXECUTED, written.text
        assert (workspace / "notes.txt").read_text() == "replaced\n"
        result = await rt.call("Write", {"path": "secret.txt", "content": "x"})
        assert denied(result) and not (workspace / "secret.txt").exists()
    finally:
        await rt.close()


async def test_an_allow_rule_alone_is_ignored_until_trusted(workspace: Path) -> None:
    write_config(workspace, '[permissions]\nallow = ["Write(notes.txt)"]\n')
    (workspace / "notes.txt").write_text("mine\n")
    write = {"path": "notes.txt", "content": "replaced\n"}
    rt = await started(workspace)
    try:
        assert refused(await rt.call("Write", write))
        assert (workspace / "notes.txt").read_text() == "mine\n"
    finally:
        await rt.close()
    rt = await started(workspace, trust=True)
    try:
        assert (await rt.call("Write", write)).outcome is Outcome.EXECUTED
    finally:
        await rt.close()


async def test_additional_directories_need_trust(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text("beyond\n")
    write_config(
        workspace, f"[permissions]\nadditional_directories = [{json.dumps(str(outside))}]\n"
    )
    rt = await started(workspace)
    try:
        result = await rt.call("Read", {"path": str(outside / "data.txt")})
        assert refused(result) and "beyond" not in result.text
    finally:
        await rt.close()
    rt = await started(workspace, trust=True)
    try:
        assert "beyond" in (await rt.call("Read", {"path": str(outside / "data.txt")})).text
    finally:
        await rt.close()


# -- whose config is trusted ---------------------------------------------------------------


async def test_the_users_own_config_and_the_hosts_config_are_always_trusted(
    workspace: Path, tmp_path: Path
) -> None:
    user_marker, host_marker = tmp_path / "user-hook", tmp_path / "host-hook"
    user = user_config_dir() / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        HOOK.format(marker=shlex.quote(str(user_marker))) + '[permissions]\nmode = "yolo"\n'
    )
    rt = await started(workspace)
    try:
        assert not rt.trusted and rt.mode == "yolo" and trust_warnings(rt) == []
        await rt.call("Glob", {"pattern": "*"})
        assert user_marker.exists()
    finally:
        await rt.close()

    hooks = {"PreToolUse": [{"command": f"touch {shlex.quote(str(host_marker))}"}]}
    mcp_marker = tmp_path / "server-ran"
    marker_server(workspace, mcp_marker)
    rt = await started(workspace, config={"hooks": hooks})
    try:
        await rt.call("Glob", {"pattern": "*"})
        assert host_marker.exists()
        assert not mcp_marker.exists()  # the workspace's own mcp.json is still not read
        [warning] = trust_warnings(rt)
        assert "MCP servers (planted)" in warning
    finally:
        await rt.close()


async def test_trust_false_overrides_the_record(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    write_config(workspace, HOOK.format(marker=shlex.quote(str(marker))))
    store().trust(workspace)
    rt = await started(workspace, trust=False)
    try:
        await rt.call("Glob", {"pattern": "*"})
        assert not rt.trusted and not marker.exists()
        assert len(trust_warnings(rt)) == 1
    finally:
        await rt.close()


async def test_no_diagnostic_when_nothing_needs_trust(workspace: Path) -> None:
    write_config(
        workspace,
        '[permissions]\ndeny = ["Bash(rm *)"]\nmode = "manual"\n[output]\nmax_chars = 2000\n'
        '[tools]\ndisabled = ["Bash"]\n',
    )
    rt = await started(workspace)
    try:
        assert trust_warnings(rt) == []
        assert rt.config.output.max_chars == 2000
        assert "Bash" not in {t.name for t in rt.tools()}
    finally:
        await rt.close()


# -- the record: real paths, subfolders, the file itself ------------------------------------


def test_a_link_to_a_trusted_folder_is_that_folder_and_a_namesake_is_not(
    tmp_path: Path,
) -> None:
    real = tmp_path / "a" / "proj"
    namesake = tmp_path / "b" / "proj"
    prefixed = tmp_path / "a" / "proj-evil"
    for folder in (real / "sub", namesake, prefixed):
        folder.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)

    recorded = store().trust(link)
    assert recorded == real.resolve()
    assert [f.path for f in store().folders()] == [real.resolve()]
    assert store().is_trusted(real) and store().is_trusted(link)
    assert store().is_trusted(real / "sub")  # trust covers the folder and below
    assert not store().is_trusted(namesake)
    assert not store().is_trusted(prefixed)
    assert Runtime(link, plugins=False).trusted
    assert not Runtime(namesake, plugins=False).trusted

    # a link planted somewhere else that points at an untrusted folder stays untrusted
    decoy = real / "sub" / "decoy"
    decoy.symlink_to(namesake)
    assert not store().is_trusted(decoy)

    assert store().revoke(link) == real.resolve()
    assert not store().is_trusted(real) and store().folders() == []


def test_revoking_a_subfolder_of_a_trusted_folder_leaves_it_covered(tmp_path: Path) -> None:
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    store().trust(tmp_path / "proj")
    assert store().revoke(tmp_path / "proj" / "sub") is None
    assert store().trusted_root(tmp_path / "proj" / "sub") == (tmp_path / "proj").resolve()


def test_the_record_is_written_atomically_and_privately(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        store().trust(tmp_path / name)
    path = data_home() / STORE_NAME
    assert (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(f".{STORE_NAME}")] == []
    data = json.loads(path.read_text())
    assert sorted(data["folders"]) == [str((tmp_path / n).resolve()) for n in ("one", "two")]


def test_a_record_others_may_write_or_that_is_broken_is_not_used(
    workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "hook-ran"
    write_config(workspace, HOOK.format(marker=shlex.quote(str(marker))))
    store().trust(workspace)
    path = data_home() / STORE_NAME
    os.chmod(path, 0o666)
    rt = Runtime(workspace, plugins=False)
    assert not rt.trusted
    problems = [d.message for d in rt.diagnostics if "was not used" in d.message]
    assert problems and "others may write it" in problems[0]

    path.write_text("{not json")
    os.chmod(path, 0o600)
    assert not store().is_trusted(workspace)
    with pytest.raises(ConfigError, match="not valid JSON"):
        store().trust(workspace)  # never silently replaces a record it cannot read
    assert path.read_text() == "{not json"


def test_trusting_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        store().trust(tmp_path / "nowhere")


# -- which settings an untrusted file keeps ----------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "trusted_so_far", "applies"),
    [
        ({"shell": {"sandbox": "bwrap"}}, {}, True),
        ({"shell": {"sandbox": "none"}}, {}, False),
        ({"shell": {"sandbox": "auto"}}, {"shell": {"sandbox": "bwrap"}}, False),
        ({"shell": {"sandbox": {"mode": "bwrap", "write": "workspace"}}}, {}, True),
        ({"shell": {"sandbox": {"write": "anywhere"}}}, {}, False),
        ({"shell": {"sandbox": {"writable": ["/"]}}}, {}, False),
        ({"shell": {"sandbox": {"network": False}}}, {}, True),
        ({"shell": {"network": False}}, {}, True),
        ({"shell": {"network": True}}, {"shell": {"network": False}}, False),
        ({"shell": {"writable": ["/home"]}}, {}, False),
        ({"shell": {"env": {"BASH_ENV": "x"}}}, {}, False),
        ({"shell": {"shell": "/tmp/evil"}}, {}, False),
        ({"shell": {"bwrap": "/tmp/evil"}}, {}, False),
        ({"shell": {"timeout": 5}}, {}, True),
        ({"files": {"rg_path": "/tmp/evil"}}, {}, False),
        ({"files": {"read_max_lines": 50}}, {}, True),
        ({"mcp": {"trust_read_only_hints": True}}, {}, False),
        ({"mcp": {"config_files": ["x.json"]}}, {}, False),
        ({"mcp": {"select_tools": True}}, {}, True),
        ({"skills": {"extra_dirs": ["/"]}}, {}, False),
        ({"skills": {"disabled": ["x"]}}, {}, True),
        ({"permissions": {"mode": "yolo"}}, {}, False),
        ({"permissions": {"mode": "manual"}}, {"permissions": {"mode": "auto"}}, True),
        ({"permissions": {"mode": "yolo"}}, {"permissions": {"mode": "auto"}}, True),
        ({"permissions": {"additional_directories": ["/"]}}, {}, False),
        ({"tools": {"enabled": ["Read"]}}, {}, True),
        ({"tools": {"enabled": ["Read", "Bash"]}}, {"tools": {"enabled": ["Read"]}}, False),
        ({"tools": {"enabled": []}}, {"tools": {"enabled": ["Read"]}}, False),
        ({"session": {"keep_days": 1}}, {}, True),
    ],
)
def test_an_untrusted_file_keeps_only_what_narrows(
    setting: dict[str, Any], trusted_so_far: dict[str, Any], applies: bool
) -> None:
    kept, withheld = restrict(setting, trusted_so_far, Path("/ws/.deftly/config.toml"))
    assert (kept == setting) is applies
    assert (withheld == []) is applies


def test_an_untrusted_disabled_list_adds_to_the_users(workspace: Path) -> None:
    user = user_config_dir() / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[tools]\ndisabled = ["Bash"]\n')
    write_config(workspace, '[tools]\ndisabled = ["Grep"]\n')
    assert load_config(workspace, trusted=False).config.tools.disabled == ["Bash", "Grep"]
    assert load_config(workspace, trusted=True).config.tools.disabled == ["Grep"]


def test_a_misspelt_or_invalid_setting_is_still_reported_untrusted(workspace: Path) -> None:
    write_config(workspace, '[permissions]\nallow = ["Bash(ls"]\n[shell]\nshel = "zsh"\n')
    with pytest.raises(ConfigError, match="did you mean 'shell'"):
        load_config(workspace, trusted=False)


# -- property: whatever an untrusted file says, the result is never looser ------------------

MODES = ("manual", "yolo", "auto")
SANDBOX_STRICTNESS = ("bwrap", "auto", "none")


def _sections() -> st.SearchStrategy[dict[str, Any]]:
    """A config file drawn from a vocabulary of settings that loosen and that narrow."""
    rules = st.lists(st.sampled_from(["Write(*)", "Bash(rm *)", "Read(**)", "Bash"]), max_size=2)
    folders = st.lists(st.sampled_from(["/", "/tmp", "~"]), max_size=2)
    hook = st.fixed_dictionaries({"command": st.sampled_from(["true", "touch /tmp/x"])})
    sandbox = st.one_of(
        st.sampled_from(SANDBOX_STRICTNESS),
        st.fixed_dictionaries(
            {},
            optional={
                "mode": st.sampled_from(SANDBOX_STRICTNESS),
                "write": st.sampled_from(["workspace", "anywhere"]),
                "network": st.booleans(),
                "writable": folders,
            },
        ),
    )
    tables = {
        "permissions": st.fixed_dictionaries(
            {},
            optional={
                "mode": st.sampled_from(MODES),
                "allow": rules,
                "ask": rules,
                "deny": rules,
                "additional_directories": folders,
            },
        ),
        "hooks": st.fixed_dictionaries(
            {}, optional={"PreToolUse": st.lists(hook, max_size=2), "PostToolUse": st.lists(hook)}
        ),
        "tools": st.fixed_dictionaries(
            {},
            optional={
                "enabled": st.lists(st.sampled_from(["Read", "Bash", "Write"]), max_size=2),
                "disabled": st.lists(st.sampled_from(["Read", "Bash", "Write"]), max_size=2),
                "load": st.lists(st.just("tests.helpers:EchoTool"), max_size=1),
            },
        ),
        "shell": st.fixed_dictionaries(
            {},
            optional={
                "sandbox": sandbox,
                "network": st.booleans(),
                "writable": folders,
                "env": st.dictionaries(st.sampled_from(["BASH_ENV", "PATH"]), st.just("x")),
                "shell": st.just("/tmp/evil-shell"),
                "timeout": st.integers(1, 60),
            },
        ),
        "mcp": st.fixed_dictionaries(
            {},
            optional={
                "trust_read_only_hints": st.booleans(),
                "config_files": st.lists(st.just("x.json"), max_size=1),
                "servers": st.dictionaries(st.just("s"), st.just({"command": "evil"})),
            },
        ),
        "skills": st.fixed_dictionaries({}, optional={"extra_dirs": folders}),
        "files": st.fixed_dictionaries({}, optional={"rg_path": st.just("/tmp/evil-rg")}),
    }
    return st.fixed_dictionaries({}, optional=tables)


def _toml(data: dict[str, Any]) -> str:
    """Enough TOML for these shapes: tables of scalars, lists, inline tables."""

    def value(v: Any) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "true" if v is True else "false" if v is False else json.dumps(v)

    return "".join(
        f"[{section}]\n" + "".join(f"{json.dumps(k)} = {value(v)}\n" for k, v in table.items())
        for section, table in data.items()
    )


@settings(max_examples=150, deadline=None)
@given(user=_sections(), project=_sections())
def test_an_untrusted_file_never_loosens_what_the_trusted_ones_set(
    user: dict[str, Any], project: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        user_file = user_config_dir() / "config.toml"
        user_file.parent.mkdir(parents=True, exist_ok=True)
        user_file.write_text(_toml(user))
        write_config(workspace, _toml(project))
        try:
            alone = load_config(workspace, [user_file]).config
        except ConfigError:
            return  # the user's own file is invalid on its own (e.g. timeout limits)
        try:
            merged = load_config(workspace, trusted=False).config
        except ConfigError:
            return  # an invalid project file stops the start: nothing applies at all
    before, after = alone.permissions, merged.permissions
    assert MODES.index(after.mode) <= MODES.index(before.mode)
    assert after.allow == before.allow
    assert after.additional_directories == before.additional_directories
    assert set(before.deny) <= set(after.deny) and set(before.ask) <= set(after.ask)
    assert set(project.get("permissions", {}).get("deny", [])) <= set(after.deny)
    assert merged.hooks == alone.hooks
    assert merged.tools.load == alone.tools.load
    assert set(alone.tools.disabled) <= set(merged.tools.disabled)
    if alone.tools.enabled:
        assert merged.tools.enabled == alone.tools.enabled
    for name in ("shell", "bwrap", "env", "writable"):
        assert getattr(merged.shell, name) == getattr(alone.shell, name)
    old, new = alone.shell.confinement, merged.shell.confinement
    assert SANDBOX_STRICTNESS.index(new.mode) <= SANDBOX_STRICTNESS.index(old.mode)
    assert (new.write, old.write) != ("anywhere", "workspace")
    assert new.network <= old.network and set(new.writable) <= set(old.writable)
    assert merged.mcp.servers == alone.mcp.servers
    assert merged.mcp.config_files == alone.mcp.config_files
    assert merged.mcp.trust_read_only_hints <= alone.mcp.trust_read_only_hints
    assert merged.skills.extra_dirs == alone.skills.extra_dirs
    assert merged.files.rg_path == alone.files.rg_path
