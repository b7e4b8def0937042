"""Glob with the real rg: newest first, ignore files, secrets, caps, errors."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.config.files import FilesConfig
from deftly.env import LocalEnv
from deftly.features.files.glob import GlobParams, GlobTool
from deftly.policy import Workspace
from tests.files.helpers import call, git_init, set_mtime


def make(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)


async def test_lists_matches_newest_first_relative_to_the_workspace(
    rt: Runtime, workspace: Path
) -> None:
    make(workspace, "old.ts", "mid.ts", "src/new.ts", "notes.md")
    now = time.time()
    set_mtime(workspace / "old.ts", now - 300)
    set_mtime(workspace / "mid.ts", now - 200)
    set_mtime(workspace / "src/new.ts", now - 100)
    result = await call(rt, "Glob", {"pattern": "*.ts"})
    assert not result.is_error
    assert result.text.splitlines() == ["src/new.ts", "mid.ts", "old.ts"]


async def test_pattern_forms(rt: Runtime, workspace: Path) -> None:
    make(workspace, "src/a.ts", "src/deep/b.ts", "src/c.tsx", "test/d.ts", "e.py")
    one_level = await call(rt, "Glob", {"pattern": "src/*.ts"})
    assert one_level.text.splitlines() == ["src/a.ts"]
    deep = await call(rt, "Glob", {"pattern": "src/**/*.ts"})
    assert sorted(deep.text.splitlines()) == ["src/a.ts", "src/deep/b.ts"]
    braces = await call(rt, "Glob", {"pattern": "*.{ts,tsx}"})
    assert len(braces.text.splitlines()) == 4
    scoped = await call(rt, "Glob", {"pattern": "*.ts", "path": "src"})
    assert sorted(scoped.text.splitlines()) == ["src/a.ts", "src/deep/b.ts"]


async def test_gitignore_is_respected_unless_asked(rt: Runtime, workspace: Path) -> None:
    git_init(workspace)
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    make(workspace, "build/out.js", "app.log", "app.js", ".hidden/config.js")
    visible = await call(rt, "Glob", {"pattern": "*.js"})
    assert sorted(visible.text.splitlines()) == [".hidden/config.js", "app.js"]
    everything = await call(rt, "Glob", {"pattern": "*.js", "include_ignored": True})
    assert sorted(everything.text.splitlines()) == [".hidden/config.js", "app.js", "build/out.js"]
    none = await call(rt, "Glob", {"pattern": "*.log"})
    assert "No files match" in none.text and "include_ignored" in none.text


async def test_version_control_directories_are_never_listed(rt: Runtime, workspace: Path) -> None:
    git_init(workspace)
    make(workspace, "a.txt")
    result = await call(rt, "Glob", {"pattern": "*"})
    assert result.text.splitlines() == ["a.txt"]
    forced = await call(rt, "Glob", {"pattern": ".git/**", "include_ignored": True})
    assert "No files match" in forced.text


async def test_secret_files_are_never_listed(rt: Runtime, workspace: Path) -> None:
    make(
        workspace,
        ".env",
        ".env.local",
        ".ENV.production",
        ".env.example",
        "id_rsa",
        "id_rsa.pub",
        "keys/id_ed25519_old",
        ".aws/credentials",
        "credentials",
        "credentials.json",
        ".netrc",
        "src/app.ts",
    )
    for pattern in ("*", "**/.env", ".env*", "**/*", "**/credentials", "id_*"):
        result = await call(rt, "Glob", {"pattern": pattern, "include_ignored": True})
        listed = set(result.text.splitlines())
        for secret in (".env", ".env.local", ".ENV.production", "id_rsa", "credentials"):
            assert secret not in listed, (pattern, secret)
        assert ".aws/credentials" not in listed and ".netrc" not in listed
        assert "keys/id_ed25519_old" not in listed
    everything = set((await call(rt, "Glob", {"pattern": "*"})).text.splitlines())
    assert {".env.example", "id_rsa.pub", "credentials.json", "src/app.ts"} <= everything


async def test_at_most_a_hundred_with_a_note(rt: Runtime, workspace: Path) -> None:
    for i in range(130):
        (workspace / f"f{i:03}.txt").write_text("x")
        set_mtime(workspace / f"f{i:03}.txt", 1_000_000 + i)
    result = await call(rt, "Glob", {"pattern": "*.txt"})
    lines = result.text.splitlines()
    assert lines[:3] == ["f129.txt", "f128.txt", "f127.txt"]
    assert len([line for line in lines if line.endswith(".txt")]) == 100
    assert "30 more files match (130 in all" in result.text
    exact = await call(rt, "Glob", {"pattern": "f0[0-9][0-9].txt"})
    assert len(exact.text.splitlines()) == 100 and "more" not in exact.text


async def test_errors_are_results(rt: Runtime, workspace: Path) -> None:
    make(workspace, "file.txt")
    missing = await call(rt, "Glob", {"pattern": "*", "path": "nope"})
    assert missing.is_error and '"nope" does not exist' in missing.text
    not_dir = await call(rt, "Glob", {"pattern": "*", "path": "file.txt"})
    assert not_dir.is_error and "not a directory" in not_dir.text
    bad = await call(rt, "Glob", {"pattern": "src/{a,b"})
    assert bad.is_error and "ripgrep said" in bad.text and "glob" in bad.text
    broken = await call(rt, "Glob", {"pattern": "a\nb"})
    assert broken.is_error and "line break" in broken.text
    escape = await call(rt, "Glob", {"pattern": "*", "path": "../.."})
    assert escape.is_error and "outside the workspace" in escape.text
    secret_dir = await call(rt, "Glob", {"pattern": "*", "path": ".aws/credentials"})
    assert secret_dir.is_error


async def test_outside_directories_are_shown_absolute(
    rt: Runtime, workspace: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    make(extra, "pkg/a.ts")
    result = await call(rt, "Glob", {"pattern": "pkg/**/*.ts", "path": str(extra)})
    assert result.text.splitlines() == [str(extra / "pkg" / "a.ts")]


def test_the_rg_command_line(tmp_path: Path) -> None:
    tool = GlobTool(LocalEnv(), Workspace(tmp_path), FilesConfig())
    narrowing = ["--ignore-file", "/tmp/x.rgignore"]
    argv = tool.rg_argv("rg", GlobParams(pattern="**/.env", include_ignored=True), narrowing)
    assert argv[:7] == [
        "rg",
        "--no-config",
        "--files",
        "--hidden",
        "--sortr=modified",
        "--ignore-file",
        "/tmp/x.rgignore",
    ]
    assert "**/.env" not in argv  # never an override: it would beat .gitignore and secrets
    overrides = [argv[i + 1] for i, a in enumerate(argv) if a == "--glob"]
    assert overrides[:6] == ["!.git", "!.svn", "!.hg", "!.bzr", "!.jj", "!.sl"]
    assert all(g.startswith("!") for g in overrides)
    assert "--no-ignore" in argv and argv[-1] == "."


async def test_rg_timeout_reports_partial_results(
    make_runtime: Any, workspace: Path, tmp_path: Path
) -> None:
    """A stand-in rg (a real script) that prints two paths and then hangs."""
    fake = tmp_path / "slow-rg"
    fake.write_text("#!/bin/sh\nprintf './a.txt\\n./b.txt\\n'\nexec sleep 60\n")
    fake.chmod(0o755)
    rt = await make_runtime(
        approve_asks=True, config={"files": {"rg_path": str(fake), "search_timeout": 1}}
    )
    started = time.monotonic()
    result = await call(rt, "Glob", {"pattern": "*"})
    assert time.monotonic() - started < 30
    assert not result.is_error
    assert result.text.splitlines()[:2] == ["a.txt", "b.txt"]
    assert "stopped after 1 s" in result.text


async def test_missing_rg_says_how_to_install(make_runtime: Any, tmp_path: Path) -> None:
    rt = await make_runtime(
        approve_asks=True, config={"files": {"rg_path": str(tmp_path / "no-rg")}}
    )
    result = await call(rt, "Glob", {"pattern": "*"})
    assert result.is_error and "rg_path" in result.text
