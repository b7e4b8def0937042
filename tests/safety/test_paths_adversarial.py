"""The adversarial path suite: zero escapes, zero secrets read, nothing written outside.

Every case runs through the path policy directly and through each path-taking tool in
PATH_TOOLS (a real runtime, manual mode, a git work tree, nobody to approve). After each
call the files outside the workspace and the secrets inside it must be exactly as they
were, and no output may contain a secret or an outside file's content.

To run the suite through more tools, add one line to PATH_TOOLS (see the comment there).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly import Outcome, Runtime
from deftly.contract import PathSecurityError
from deftly.policy import PathOp, Workspace
from tests.helpers import PeekTool, WriteTool
from tests.safety.layout import (
    CANARY,
    OUTSIDE,
    SECRET,
    Layout,
    build_layout,
    protected_snapshot,
)


class Expect(Enum):
    REFUSED = "refused by the path policy, before anything is touched"
    ASKS = "allowed by the path policy, but the permission engine asks"
    INSIDE = "allowed: it stays inside the workspace"


@dataclass(frozen=True)
class Case:
    id: str
    raw: str
    expect: Expect
    code: str | None = None
    """For REFUSED: the PathSecurityError code."""
    outside: bool | None = None
    """For allowed paths: whether the policy says it is outside the workspace."""


R, A, IN = Expect.REFUSED, Expect.ASKS, Expect.INSIDE
OUT, SENS, LOOP, INVALID = "PATH_OUTSIDE_WORKSPACE", "PATH_SENSITIVE", "PATH_LOOP", "PATH_INVALID"

CASES = [
    # relative traversal
    Case("rel-parent", "../outside/secret.txt", R, OUT),
    Case("rel-two-parents", "../../outside/secret.txt", R, OUT),
    Case("rel-down-then-up", "src/../../outside/secret.txt", R, OUT),
    Case("dot-slash-parent", "./../outside/secret.txt", R, OUT),
    Case("dots-mixed", "src/./.././../outside/secret.txt", R, OUT),
    Case("missing-dirs-then-up", "a/b/c/../../../../outside/secret.txt", R, OUT),
    Case("sibling-prefix-relative", "../ws-evil/x.txt", R, OUT),
    Case("file-used-as-dir", "src/app.py/../../../outside/secret.txt", R, OUT),
    # absolute paths outside: allowed by the policy, asked about by the engine
    Case("sibling-prefix-absolute", "{root}/ws-evil/x.txt", A, outside=True),
    Case("absolute-outside", "{out}/secret.txt", A, outside=True),
    Case("absolute-double-slash", "/{out}/secret.txt", A, outside=True),
    Case("absolute-new-outside", "{out}/new-file.txt", A, outside=True),
    Case("absolute-through-symlinked-dir", "{ws}/out/secret.txt", A, outside=True),
    Case("absolute-dangling-link", "{ws}/dangling", A, outside=True),
    # ~ expansion
    Case("tilde-outside", "~/notes.md", A, outside=True),
    Case("tilde-alone", "~", A, outside=True),
    Case("tilde-public-key", "~/.ssh/id_rsa.pub", A, outside=True),
    Case("tilde-ssh-key", "~/.ssh/id_rsa", R, SENS),
    Case("tilde-ed25519", "~/.ssh/id_ed25519", R, SENS),
    Case("tilde-netrc", "~/.netrc", R, SENS),
    Case("tilde-git-credentials", "~/.git-credentials", R, SENS),
    Case("tilde-aws", "~/.aws/credentials", R, SENS),
    Case("tilde-user-is-not-expanded", "~nobody/x.txt", IN, outside=False),
    # symlinked directories out of the workspace, and `..` after a symlink
    Case("symlinked-dir", "out/secret.txt", R, OUT),
    Case("symlinked-dir-itself", "out", R, OUT),
    Case("symlinked-dir-new-file", "out/new/file.txt", R, OUT),
    Case("symlinked-nested-dir", "deep/inner.txt", R, OUT),
    Case("dotdot-after-symlink-escapes", "out/../outside/secret.txt", R, OUT),
    Case("dotdot-after-nested-symlink", "deep/../secret.txt", R, OUT),
    Case("dotdot-after-symlink-lands-inside", "out/../ws/README.md", IN, outside=False),
    Case("missing-dir-then-dotdot-then-symlink", "missing/../out/secret.txt", R, OUT),
    # symlinked files
    Case("symlinked-file-out", "passwd-link", R, OUT),
    Case("innocent-name-to-ssh-key", "innocent.txt", R, SENS),
    Case("innocent-name-to-env", "notes.txt", R, SENS),
    Case("innocent-name-to-private-key", "key-link.txt", R, SENS),
    # dangling symlinks cannot be written through to outside
    Case("dangling-relative-target", "dangling", R, OUT),
    Case("dangling-absolute-target", "dangling-abs", R, OUT),
    Case("dangling-chain", "chain1", R, OUT),
    # loops
    Case("loop", "loop_a", R, LOOP),
    Case("loop-below", "loop_a/x.txt", R, LOOP),
    Case("self-loop", "self", R, LOOP),
    # environment files, any case, templates exempt
    Case("env", ".env", R, SENS),
    Case("env-upper-case", "config/.ENV", R, SENS),
    Case("env-mixed-case-variant", "config/.Env.Local", R, SENS),
    Case("env-variant", ".env.production", R, SENS),
    Case("env-trailing-slash", ".env/", R, SENS),
    Case("env-dot-component", ".env/.", R, SENS),
    Case("env-via-traversal", "src/../.env", R, SENS),
    Case("env-absolute", "{ws}/.env", R, SENS),
    Case("env-example-exempt", ".env.example", IN, outside=False),
    Case("env-sample-exempt", ".env.sample", IN, outside=False),
    Case("env-template-exempt", ".env.template", IN, outside=False),
    # keys and credentials, renamed copies too
    Case("key-renamed-underscore", "keys/id_rsa_old", R, SENS),
    Case("key-renamed-upper-bak", "keys/ID_ED25519.BAK", R, SENS),
    Case("key-renamed-dash", "keys/id_ecdsa-backup", R, SENS),
    Case("credentials-renamed", "keys/credentials_prod", R, SENS),
    Case("aws-credentials-in-workspace", ".aws/credentials", R, SENS),
    Case("public-key-allowed", "keys/id_rsa.pub", IN, outside=False),
    Case("private-key-by-header", "certs/private.key", R, SENS),
    Case("private-key-upper-extension", "certs/ALT.PEM", R, SENS),
    Case("certificate-allowed", "certs/server.pem", IN, outside=False),
    # malformed
    Case("nul-byte", "src/a\x00b", R, INVALID),
    Case("empty", "", R, INVALID),
    Case("blank", "   ", R, INVALID),
    # git's control files ask, even inside the workspace
    Case("git-config", ".git/config", A, outside=False),
    Case("git-upper-case", ".GIT/HEAD", A, outside=False),
    # plainly inside
    Case("symlink-alias-inside", "alias/app.py", IN, outside=False),
    Case("unicode-inside", "src/ünï cödé.txt", IN, outside=False),
    Case("new-nested-inside", "new/dir/file.txt", IN, outside=False),
    Case("absolute-inside", "{ws}/README.md", IN, outside=False),
    Case("dotdot-staying-inside", "src/../README.md", IN, outside=False),
]


@dataclass(frozen=True)
class PathTool:
    """One path-taking tool: how to call it with a path, and whether it writes."""

    name: str
    op: PathOp
    args: Callable[[str], dict[str, Any]]
    tool: type | None = None
    """A test tool class to register, or None for a built-in tool."""
    id: str = field(default="")


def _path(raw: str) -> dict[str, Any]:
    return {"path": raw}


def _write(raw: str) -> dict[str, Any]:
    return {"path": raw, "content": CANARY}


PATH_TOOLS = [
    PathTool("Peek", PathOp.READ, _path, PeekTool, id="test-reader"),
    PathTool("Write", PathOp.WRITE, _write, WriteTool, id="test-writer"),
    # the built-in file tools, through the whole suite
    PathTool("Read", PathOp.READ, _path, id="Read"),
    PathTool("Write", PathOp.WRITE, _write, id="Write"),
    PathTool(
        "Edit",
        PathOp.WRITE,
        lambda raw: {"path": raw, "old_string": "TOKEN", "new_string": CANARY},
        id="Edit",
    ),
    PathTool("ReadMediaFile", PathOp.READ, _path, id="ReadMediaFile"),
]


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    built = build_layout(tmp_path / "root")
    monkeypatch.setenv("HOME", str(built.home))
    return built


def _runtime(layout: Layout, tool: PathTool, **kwargs: Any) -> Runtime:
    return Runtime(
        layout.ws,
        config={},
        plugins=False,
        builtins=tool.tool is None,
        tools=[tool.tool] if tool.tool is not None else [],
        **kwargs,
    )


def _leaks(text: str) -> list[str]:
    return [marker for marker in (SECRET, OUTSIDE) if marker in text]


# -- the policy alone ----------------------------------------------------------------------


@pytest.mark.parametrize("op", [PathOp.READ, PathOp.WRITE], ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_policy_decides_each_case(layout: Layout, case: Case, op: PathOp) -> None:
    workspace = Workspace(layout.ws, home=layout.home)
    raw = layout.expand(case.raw)
    if case.expect is Expect.REFUSED:
        with pytest.raises(PathSecurityError) as caught:
            workspace.locate(raw, op)
        assert caught.value.code == case.code
        assert caught.value.message.strip()
        if raw.strip() and "\0" not in raw:
            assert raw in caught.value.message, "the error names the path as given"
        return
    found = workspace.locate(raw, op)
    assert found.outside is case.outside
    if not found.outside:
        assert workspace.contains(found.real)
        assert found.real == layout.ws or layout.ws in found.real.parents


def test_the_suite_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert {c.expect for c in CASES} == set(Expect)


# -- through real tools --------------------------------------------------------------------


@pytest.mark.parametrize("tool", PATH_TOOLS, ids=lambda t: t.id)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_tools_never_escape_in_manual_mode(
    layout: Layout, case: Case, tool: PathTool
) -> None:
    before = protected_snapshot(layout)
    async with _runtime(layout, tool) as rt:
        result = await rt.call(tool.name, tool.args(layout.expand(case.raw)))
    assert protected_snapshot(layout) == before, "a protected file changed or appeared"
    assert _leaks(result.text) == [], result.text
    if case.expect is Expect.REFUSED:
        assert result.is_error
        assert result.outcome in (Outcome.RESOLUTION_FAILED, Outcome.PREFLIGHT_REJECTED)
    elif case.expect is Expect.ASKS:
        # never run without approval (a tool may also answer from resolve, e.g. "that is a
        # directory", which runs nothing either)
        assert result.is_error and result.outcome in (Outcome.VETOED, Outcome.SYNTHETIC)
        if result.outcome is Outcome.VETOED:
            assert "needs approval" in result.text and "--yes" in result.text
    else:
        assert result.outcome in (Outcome.EXECUTED, Outcome.SYNTHETIC), result.text


REFUSED = [c for c in CASES if c.expect is Expect.REFUSED]


@pytest.mark.parametrize("tool", PATH_TOOLS, ids=lambda t: t.id)
@pytest.mark.parametrize(
    "settings_", [{"mode": "yolo"}, {"mode": "auto"}, {"approve_asks": True}], ids=str
)
async def test_refusals_hold_in_every_mode(
    layout: Layout, tool: PathTool, settings_: dict[str, Any]
) -> None:
    """Modes and --yes approve asks; they never reach past the path policy."""
    before = protected_snapshot(layout)
    async with _runtime(layout, tool, **settings_) as rt:
        results = await rt.run_batch(
            [{"name": tool.name, "arguments": tool.args(layout.expand(c.raw))} for c in REFUSED]
        )
    assert protected_snapshot(layout) == before
    for case, result in zip(REFUSED, results, strict=True):
        assert result.is_error, case.id
        assert result.outcome in (Outcome.RESOLUTION_FAILED, Outcome.PREFLIGHT_REJECTED), case.id
        assert _leaks(result.text) == [], case.id


async def test_allowed_inside_calls_really_run(layout: Layout) -> None:
    """The suite is not passing by refusing everything: inside paths work."""
    async with Runtime(
        layout.ws, config={}, plugins=False, builtins=False, tools=[PeekTool, WriteTool]
    ) as rt:
        read = await rt.call("Peek", {"path": "alias/app.py"})
        wrote = await rt.call("Write", {"path": "new/dir/file.txt", "content": CANARY})
        back = await rt.call("Peek", {"path": "out/../ws/new/dir/file.txt"})
    assert read.text.startswith("PUBLIC-app.py")
    assert not wrote.is_error and (layout.ws / "new/dir/file.txt").read_text() == CANARY
    assert back.text == CANARY


async def test_approved_absolute_write_goes_to_the_real_target(layout: Layout) -> None:
    """Once a person approves an outside path, the write lands where the path really
    leads (the link's target), which is what the prompt showed."""
    async with Runtime(
        layout.ws, config={}, plugins=False, builtins=False, tools=[WriteTool], approve_asks=True
    ) as rt:
        result = await rt.call("Write", {"path": f"{layout.ws}/dangling", "content": CANARY})
    assert not result.is_error, result.text
    assert result.display is not None
    assert (layout.outside / "created-by-dangling.txt").read_text() == CANARY
    assert str(layout.outside / "created-by-dangling.txt") in str(result.display)


# -- random compositions -------------------------------------------------------------------

SEGMENTS = [
    "..",
    ".",
    "out",
    "deep",
    "src",
    "alias",
    "loop_a",
    "dangling",
    "chain1",
    "missing",
    "notes.txt",
    "innocent.txt",
    ".env",
    ".ENV",
    "keys",
    "id_rsa_old",
    "README.md",
    "x",
    "sub",
    "certs",
    "private.key",
    "passwd-link",
    "ws",
    "outside",
    "",
]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=7),
    anchor=st.sampled_from(["", "~/", "ABS_WS/", "ABS_OUT/"]),
    op=st.sampled_from([PathOp.READ, PathOp.WRITE]),
)
def test_random_paths_never_escape_or_reach_a_secret(
    layout: Layout, parts: list[str], anchor: str, op: PathOp
) -> None:
    workspace = Workspace(layout.ws, home=layout.home)
    prefix = {"ABS_WS/": f"{layout.ws}/", "ABS_OUT/": f"{layout.outside}/"}.get(anchor, anchor)
    raw = prefix + "/".join(parts)
    try:
        found = workspace.locate(raw, op)
    except PathSecurityError:
        return
    assert Path(os.path.realpath(found.real)) == found.real, "a symlink is left to follow"
    real = found.real
    inside = real == layout.ws or layout.ws in real.parents
    relative = not (raw.startswith(("/", "~/")) or raw == "~")
    if relative:
        assert inside, f"relative {raw!r} escaped to {real}"
    if not inside:
        assert found.outside, f"{raw!r} leads outside ({real}) but is not flagged"
    text = real.read_text(errors="replace") if real.is_file() else ""
    assert SECRET not in text, f"{raw!r} reached a secret at {real}"


def test_a_fifo_named_like_a_key_does_not_hang_the_policy(layout: Layout) -> None:
    fifo = layout.ws / "certs" / "pipe.pem"
    os.mkfifo(fifo)
    workspace = Workspace(layout.ws, home=layout.home)

    async def locate() -> Path:
        return await asyncio.wait_for(
            asyncio.to_thread(workspace.resolve, "certs/pipe.pem", PathOp.READ), timeout=30
        )

    assert asyncio.run(locate()) == fifo
