"""Grep with the real rg: modes, flags, paging, long lines, secrets, errors, timeouts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from deftly import Runtime
from deftly.config.files import FilesConfig
from deftly.env import LocalEnv
from deftly.features.files.grep import GrepParams, GrepTool
from deftly.policy import Workspace
from tests.files.helpers import call, git_init, set_mtime


def make(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


async def grep(rt: Runtime, **args: Any) -> Any:
    return await call(rt, "Grep", args)


async def test_files_with_matches_is_the_default_newest_first(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"src/old.ts": "hit\n", "src/new.ts": "a hit\n", "src/none.ts": "miss\n"})
    set_mtime(workspace / "src/old.ts", 1_000_000)
    set_mtime(workspace / "src/new.ts", 2_000_000)
    result = await grep(rt, pattern="hit")
    assert not result.is_error and result.text.splitlines() == ["src/new.ts", "src/old.ts"]


async def test_content_mode_with_numbers_and_context(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"main.ts": "before\nhit here\nafter\nfar\nfar\nfar\nhit again\n"})
    plain = await grep(rt, pattern="hit", output_mode="content")
    assert plain.text.splitlines() == ["main.ts:2:hit here", "main.ts:7:hit again"]
    context = await grep(rt, pattern="hit", output_mode="content", **{"-C": 1})
    assert context.text.splitlines() == [
        "main.ts-1-before",
        "main.ts:2:hit here",
        "main.ts-3-after",
        "--",
        "main.ts-6-far",
        "main.ts:7:hit again",
    ]
    after = await grep(rt, pattern="here", output_mode="content", **{"-A": 1, "-B": 0})
    assert after.text.splitlines() == ["main.ts:2:hit here", "main.ts-3-after"]
    wins = await grep(rt, pattern="here", output_mode="content", **{"-A": 3, "-C": 0})
    assert wins.text.splitlines() == ["main.ts:2:hit here"]
    no_numbers = await grep(rt, pattern="here", output_mode="content", **{"-n": False})
    assert no_numbers.text.splitlines() == ["main.ts:hit here"]


async def test_count_mode_sums_up_first(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"src/a.ts": "x x x\n", "src/b.ts": "x\nx x x x x x\n"})
    result = await grep(rt, pattern="x", output_mode="count_matches", **{"-A": 5})
    lines = result.text.splitlines()
    assert lines[0] == "10 matches in 2 files."
    assert sorted(lines[1:]) == ["src/a.ts:3", "src/b.ts:7"]
    single = await grep(rt, pattern="x x x x x x", output_mode="count_matches")
    assert single.text.splitlines() == ["1 match in 1 file.", "src/b.ts:1"]


async def test_flags_case_multiline_type_and_glob(rt: Runtime, workspace: Path) -> None:
    make(
        workspace,
        {
            "a.py": "Hello World\n",
            "b.ts": "hello\nworld\n",
            "c.min.js": "hello there\n",
            "d.js": "hello again\n",
        },
    )
    strict = await grep(rt, pattern="hello")
    assert "a.py" not in strict.text.splitlines()
    loose = await grep(rt, pattern="hello", **{"-i": True})
    assert "a.py" in loose.text.splitlines()
    spanning = await grep(rt, pattern="hello.world", multiline=True)
    assert spanning.text.splitlines() == ["b.ts"]
    typed = await grep(rt, pattern="hello", type="ts")
    assert typed.text.splitlines() == ["b.ts"]
    globbed = await grep(rt, pattern="hello", glob="*.js")
    assert sorted(globbed.text.splitlines()) == ["c.min.js", "d.js"]
    excluded = await grep(rt, pattern="hello", glob="!*.min.js")
    assert "c.min.js" not in excluded.text and "d.js" in excluded.text
    braces = await grep(rt, pattern="hello", glob="*.{ts,py}", **{"-i": True})
    assert sorted(braces.text.splitlines()) == ["a.py", "b.ts"]


async def test_gitignore_holds_even_against_a_glob(rt: Runtime, workspace: Path) -> None:
    git_init(workspace)
    make(workspace, {".gitignore": "*.log\n", "app.log": "needle\n", "app.py": "needle\n"})
    default = await grep(rt, pattern="needle", glob="*.log")
    assert "No matches" in default.text and "include_ignored" in default.text
    everything = await grep(rt, pattern="needle", glob="*.log", include_ignored=True)
    assert everything.text.splitlines() == ["app.log"]


async def test_paging_with_head_limit_and_offset(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"f.txt": "".join(f"hit {i}\n" for i in range(1, 11))})
    first = await grep(rt, pattern="hit", output_mode="content", head_limit=4)
    lines = first.text.splitlines()
    assert lines[:4] == [f"f.txt:{i}:hit {i}" for i in range(1, 5)]
    assert "Showing lines 1-4 of 10" in first.text and "offset=4" in first.text
    second = await grep(rt, pattern="hit", output_mode="content", head_limit=4, offset=4)
    assert second.text.splitlines()[:4] == [f"f.txt:{i}:hit {i}" for i in range(5, 9)]
    last = await grep(rt, pattern="hit", output_mode="content", head_limit=4, offset=8)
    assert last.text.splitlines() == ["f.txt:9:hit 9", "f.txt:10:hit 10"]
    unlimited = await grep(rt, pattern="hit", output_mode="content", head_limit=0)
    assert len(unlimited.text.splitlines()) == 10 and "offset=" not in unlimited.text
    beyond = await grep(rt, pattern="hit", output_mode="content", offset=50)
    assert "only 10" in beyond.text


async def test_default_page_is_250_files(rt: Runtime, workspace: Path) -> None:
    for i in range(260):
        (workspace / f"f{i:03}.txt").write_text("needle\n")
    result = await grep(rt, pattern="needle")
    paths = [line for line in result.text.splitlines() if line.endswith(".txt")]
    assert len(paths) == 250 and "Showing files 1-250 of 260" in result.text
    assert "offset=250" in result.text


async def test_long_lines_are_cut_around_the_match(rt: Runtime, workspace: Path) -> None:
    minified = "x" * 5000 + "NEEDLE" + "y" * 5000
    make(workspace, {"bundle.min.js": minified + "\n", "short.js": "a NEEDLE b\n"})
    result = await grep(rt, pattern="NEEDLE", output_mode="content")
    lines = result.text.splitlines()
    long_line = next(line for line in lines if line.startswith("bundle.min.js"))
    assert "NEEDLE" in long_line and len(long_line) < 700
    assert long_line.startswith("bundle.min.js:1:[...truncated]")
    assert long_line.endswith("[...truncated]")
    assert "short.js:1:a NEEDLE b" in lines
    assert "1 long line was cut" in result.text


async def test_huge_single_line_does_not_flood(rt: Runtime, workspace: Path) -> None:
    (workspace / "data.json").write_text("[" + ",".join(['"v"'] * 400_000) + ',"END"]\n')
    result = await grep(rt, pattern="END", output_mode="content")
    assert not result.is_error and len(result.text) < 2_000


async def test_secret_files_are_never_searched_or_shown(rt: Runtime, workspace: Path) -> None:
    make(
        workspace,
        {
            ".env": "TOKEN=s3cret\n",
            ".env.local": "TOKEN=s3cret\n",
            "config/credentials": "TOKEN=s3cret\n",
            ".ssh/id_ed25519": "TOKEN=s3cret\n",
            "server.pem": "-----BEGIN RSA PRIVATE KEY-----\nTOKEN=s3cret\n",
            ".env.example": "TOKEN=placeholder\n",
            "app.py": "TOKEN=os.environ\n",
        },
    )
    for mode in ("files_with_matches", "content", "count_matches"):
        for glob in (None, "**/.env", ".env*", "*"):
            args: dict[str, Any] = {
                "pattern": "TOKEN",
                "output_mode": mode,
                "include_ignored": True,
            }
            if glob:
                args["glob"] = glob
            result = await grep(rt, **args)
            assert "s3cret" not in result.text
            for secret in (".env.local", "credentials", "id_ed25519", "server.pem"):
                assert secret not in result.text, (mode, glob, secret)
            assert ".env:" not in result.text and "\n.env\n" not in f"\n{result.text}\n"
    shown = await grep(rt, pattern="TOKEN")
    assert sorted(shown.text.splitlines()) == [".env.example", "app.py"]
    direct = await grep(rt, pattern="TOKEN", path=".env")
    assert direct.is_error and "secret" in direct.text and "s3cret" not in direct.text


async def test_a_single_file_can_be_searched(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"src/a.py": "def run():\n    return 1\n"})
    result = await grep(rt, pattern="return", path="src/a.py", output_mode="content")
    assert result.text.splitlines() == ["src/a.py:2:    return 1"]


async def test_errors_carry_ripgreps_message(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.txt": "x\n"})
    regex = await grep(rt, pattern="(unclosed")
    assert regex.is_error and "regular expression" in regex.text and "unclosed group" in regex.text
    kind = await grep(rt, pattern="x", type="nosuchtype")
    assert kind.is_error and "nosuchtype" in kind.text and "unrecognized file type" in kind.text
    bad_glob = await grep(rt, pattern="x", glob="{a,b")
    assert bad_glob.is_error and "glob" in bad_glob.text
    missing = await grep(rt, pattern="x", path="nowhere")
    assert missing.is_error and "does not exist" in missing.text
    nothing = await grep(rt, pattern="Zebra")
    assert not nothing.is_error and "No matches" in nothing.text and "-i" in nothing.text


async def test_timeout_returns_what_was_found(
    make_runtime: Any, workspace: Path, tmp_path: Path
) -> None:
    """A stand-in rg (a real script) that reports one file, then hangs."""
    fake = tmp_path / "slow-rg"
    fake.write_text(f"#!/bin/sh\nprintf '{workspace}/a.txt\\0'\nexec sleep 60\n")
    fake.chmod(0o755)
    (workspace / "a.txt").write_text("x\n")
    rt = await make_runtime(
        approve_asks=True, config={"files": {"rg_path": str(fake), "search_timeout": 1}}
    )
    started = time.monotonic()
    partial = await grep(rt, pattern="x")
    assert time.monotonic() - started < 30
    assert not partial.is_error and partial.text.splitlines()[0] == "a.txt"
    assert "stopped after 1 s" in partial.text

    silent = tmp_path / "silent-rg"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    rt2 = await make_runtime(
        approve_asks=True, config={"files": {"rg_path": str(silent), "search_timeout": 1}}
    )
    none = await grep(rt2, pattern="x")
    assert none.is_error and "stopped after 1 s" in none.text


def test_the_rg_command_line(tmp_path: Path) -> None:
    tool = GrepTool(LocalEnv(), Workspace(tmp_path), FilesConfig())
    params = GrepParams.model_validate(
        {"pattern": "-x", "-i": True, "type": "ts", "multiline": True, "include_ignored": True}
    )
    argv = tool.rg_argv("rg", params, tmp_path, [])
    assert argv[:6] == ["rg", "--no-config", "--color", "never", "--hidden", "--null"]
    assert "--files-with-matches" in argv and "--ignore-case" in argv
    assert argv[argv.index("--type") + 1] == "ts"
    assert "--multiline" in argv and "--multiline-dotall" in argv and "--no-ignore" in argv
    assert argv[-3:] == ["--", "-x", str(tmp_path)]  # a pattern starting with - is safe
    overrides = [argv[i + 1] for i, a in enumerate(argv) if a == "--glob"]
    assert overrides and all(g.startswith("!") for g in overrides)
    secrets = overrides[-1]  # one alternation, last so that nothing overrides it
    assert secrets.startswith("!{") and "*.[pP][eE][mM]" in secrets[2:-1].split(",")


async def test_pathological_patterns_do_not_hang_the_line_cutter(
    rt: Runtime, workspace: Path
) -> None:
    """rg's engine is linear-time; the cut must not rerun the regex in Python's engine,
    which would backtrack for ages on this line."""
    make(workspace, {"x.txt": "x" * 6000 + "!\n"})
    started = time.monotonic()
    result = await grep(rt, pattern="(x+x+)+!", output_mode="content")
    assert time.monotonic() - started < 20
    assert not result.is_error and result.text.startswith("x.txt:1:")


async def test_case_insensitive_cut_finds_the_match(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"b.js": "q" * 3000 + "FindMe" + "q" * 3000 + "\n"})
    result = await grep(rt, pattern="findme", output_mode="content", **{"-i": True})
    assert "FindMe" in result.text
