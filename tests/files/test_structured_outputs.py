"""Structured results of Glob, Grep (every mode), Edit and Write, run for real (real files,
real rg) through the runtime, each validated against the schema the runtime publishes;
and on random trees, the structured paths are exactly the ones the text shows."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from deftly import Runtime
from deftly.execution import CallResult
from tests.files.helpers import call, set_mtime


def schema_of(rt: Runtime, name: str) -> dict[str, Any]:
    """The tool's output schema as `deftly tools --json` shows it: a valid draft 2020-12
    object schema (MCP wants `"type": "object"` at the top)."""
    info = next(i for i in rt.tools() if i.name == name)
    schema = info.to_json()["output_schema"]
    assert isinstance(schema, dict), f"{name} declares no output schema"
    assert schema["type"] == "object"
    Draft202012Validator.check_schema(schema)
    return schema


def structured(rt: Runtime, result: CallResult) -> Mapping[str, Any]:
    """The result's structured content, after checking it against the tool's schema."""
    assert not result.is_error, result.text
    data = result.result.structured
    assert data is not None, f"{result.name} gave no structured content"
    errors = list(Draft202012Validator(schema_of(rt, result.name)).iter_errors(dict(data)))
    assert not errors, [e.message for e in errors]
    return data


def make(root: Path, files: Mapping[str, str]) -> None:
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def test_an_off_schema_result_is_caught() -> None:
    """The check the other tests rely on can fail: a stray key or a wrong type."""
    from deftly.contract.output_schema import output_json_schema
    from deftly.features.files.outputs import GlobOutput

    validator = Draft202012Validator(output_json_schema(GlobOutput))
    good = {"paths": ["a"], "count": 1, "truncated": False, "incomplete": False}
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "extra": 1})
    assert not validator.is_valid({**good, "count": "1"})
    assert not validator.is_valid({k: v for k, v in good.items() if k != "paths"})


# -- Glob ---------------------------------------------------------------------------------


async def test_glob_paths_count_and_truncation(make_runtime: Any, workspace: Path) -> None:
    rt: Runtime = await make_runtime(config={"files": {"glob_max_results": 2}})
    make(workspace, {"a.py": "", "src/b.py": "", "src/c.py": "", "d.txt": ""})
    now = time.time()
    for age, name in enumerate(["src/c.py", "src/b.py", "a.py"]):
        set_mtime(workspace / name, now - 100 * (age + 1))
    result = await call(rt, "Glob", {"pattern": "*.py"})
    data = structured(rt, result)
    assert data["paths"] == ["src/c.py", "src/b.py"]  # newest first, as the text lists them
    assert result.text.splitlines()[:2] == data["paths"]
    assert data["count"] == 3 and data["truncated"] is True and data["incomplete"] is False


async def test_glob_with_no_match_is_an_empty_list(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": ""})
    data = structured(rt, await call(rt, "Glob", {"pattern": "*.rs"}))
    assert data == {"paths": [], "count": 0, "truncated": False, "incomplete": False}


async def test_glob_leaves_secrets_out_of_the_data_too(rt: Runtime, workspace: Path) -> None:
    make(workspace, {".env": "KEY=1", "app.env.py": "", "config.py": ""})
    data = structured(rt, await call(rt, "Glob", {"pattern": "*"}))
    assert ".env" not in data["paths"] and "config.py" in data["paths"]


async def test_an_error_result_carries_no_structured_content(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "x"})
    for name, args in [
        ("Glob", {"pattern": "*.py", "path": "missing"}),
        ("Grep", {"pattern": "(", "output_mode": "content"}),
        ("Edit", {"path": "a.py", "old_string": "nope", "new_string": "y"}),
        ("Write", {"path": "a.py/inner.txt", "content": "x"}),
    ]:
        result = await call(rt, name, args)
        assert result.is_error, (name, result.text)
        assert result.result.structured is None, name


# -- Grep ---------------------------------------------------------------------------------


async def test_grep_files_with_matches(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"old.py": "needle\n", "new.py": "x\nneedle\n", "none.py": "hay\n"})
    now = time.time()
    set_mtime(workspace / "old.py", now - 500)
    set_mtime(workspace / "new.py", now - 10)
    result = await call(rt, "Grep", {"pattern": "needle"})
    data = structured(rt, result)
    assert data["mode"] == "files_with_matches"
    assert data["files"] == ["new.py", "old.py"] == result.text.splitlines()
    assert data["total"] == 2 and data["next_offset"] is None and data["truncated"] is False
    assert "matches" not in data and "counts" not in data


async def test_grep_content_with_context_lines(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "one\ntwo needle\nthree\nfour\nfive\nsix needle\n"})
    result = await call(rt, "Grep", {"pattern": "needle", "output_mode": "content", "-B": 1})
    data = structured(rt, result)
    assert data["mode"] == "content"
    assert data["matches"] == [
        {"path": "a.py", "line": 1, "text": "one", "context": True},
        {"path": "a.py", "line": 2, "text": "two needle", "context": False},
        {"path": "a.py", "line": 5, "text": "five", "context": True},
        {"path": "a.py", "line": 6, "text": "six needle", "context": False},
    ]
    shown = [line for line in result.text.splitlines() if line != "--"]
    assert shown == [
        f"a.py{'-' if m['context'] else ':'}{m['line']}{'-' if m['context'] else ':'}{m['text']}"
        for m in data["matches"]
    ]


async def test_grep_content_without_line_numbers(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "needle one\nhay\nneedle two\n"})
    args = {"pattern": "needle", "output_mode": "content", "-n": False}
    data = structured(rt, await call(rt, "Grep", args))
    assert [(m["line"], m["context"], m["text"]) for m in data["matches"]] == [
        (None, None, "needle one"),
        (None, None, "needle two"),
    ]


async def test_grep_content_pages_like_the_text(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "".join(f"needle {i}\n" for i in range(10))})
    args = {"pattern": "needle", "output_mode": "content", "head_limit": 3, "offset": 2}
    result = await call(rt, "Grep", args)
    data = structured(rt, result)
    assert [m["line"] for m in data["matches"]] == [3, 4, 5]
    assert data["total"] == 10 and data["offset"] == 2 and data["next_offset"] == 5
    assert data["truncated"] is True and "offset=5" in result.text


async def test_grep_cuts_a_long_line_in_the_data_too(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"min.js": "x" * 50_000 + "needle" + "y" * 50_000 + "\n"})
    result = await call(rt, "Grep", {"pattern": "needle", "output_mode": "content"})
    data = structured(rt, result)
    (match,) = data["matches"]
    assert "needle" in match["text"] and len(match["text"]) < 5_000
    assert data["truncated"] is True


async def test_grep_count_matches(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "needle needle\nneedle\n", "b.py": "needle\n", "c.py": "hay\n"})
    result = await call(rt, "Grep", {"pattern": "needle", "output_mode": "count_matches"})
    data = structured(rt, result)
    assert data["mode"] == "count_matches"
    assert sorted((c["path"], c["count"]) for c in data["counts"]) == [("a.py", 3), ("b.py", 1)]
    assert data["total_matches"] == 4 and data["total"] == 2
    assert result.text.startswith("4 matches in 2 files.")


async def test_grep_with_nothing_found(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "hay\n"})
    for mode, key in [
        ("files_with_matches", "files"),
        ("content", "matches"),
        ("count_matches", "counts"),
    ]:
        data = structured(rt, await call(rt, "Grep", {"pattern": "zzz", "output_mode": mode}))
        assert data[key] == [] and data["total"] == 0 and data["next_offset"] is None


async def test_grep_budget_cut_keeps_text_and_data_together(
    make_runtime: Any, workspace: Path
) -> None:
    rt: Runtime = await make_runtime(config={"files": {"grep_max_chars": 2_000}})
    make(workspace, {"a.py": "".join(f"needle {'z' * 80} {i}\n" for i in range(100))})
    result = await call(rt, "Grep", {"pattern": "needle", "output_mode": "content"})
    data = structured(rt, result)
    body = [line for line in result.text.splitlines() if line.startswith("a.py:")]
    assert len(data["matches"]) == len(body) < 100
    assert data["next_offset"] == len(body) and data["truncated"] is True


# -- Edit and Write -----------------------------------------------------------------------


async def test_edit_summary(rt: Runtime, workspace: Path) -> None:
    make(workspace, {"a.py": "x = 1\ny = 2\nx = 1\n"})
    await call(rt, "Read", {"path": "a.py"})
    args = {
        "path": "a.py",
        "old_string": "x = 1",
        "new_string": "x = 1\n# one",
        "replace_all": True,
    }
    data = structured(rt, await call(rt, "Edit", args))
    after = (workspace / "a.py").read_bytes()
    assert data == {
        "path": "a.py",
        "replacements": 2,
        "lines": [1, 4],
        "line_delta": 2,
        "bytes": len(after),
    }
    assert after.decode().splitlines()[3] == "x = 1"


async def test_write_created_overwritten_appended(rt: Runtime, workspace: Path) -> None:
    created = structured(rt, await call(rt, "Write", {"path": "new/a.txt", "content": "hi\n"}))
    assert created == {"path": "new/a.txt", "action": "created", "bytes": 3, "kept": []}
    (workspace / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    await call(rt, "Read", {"path": "crlf.txt"})
    over = structured(rt, await call(rt, "Write", {"path": "crlf.txt", "content": "a\nb\n"}))
    assert over["action"] == "overwritten" and over["bytes"] == 6
    assert over["kept"] == ["CRLF line endings"]
    args = {"path": "new/a.txt", "content": "more\n", "mode": "append"}
    appended = structured(rt, await call(rt, "Write", args))
    assert appended["action"] == "appended" and appended["bytes"] == 5
    assert (workspace / "new/a.txt").read_text() == "hi\nmore\n"


# -- text and data agree on random trees --------------------------------------------------

_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
_TREES = st.dictionaries(  # file path -> its lines (a directory never ends in .txt)
    st.lists(_NAMES, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".txt"),
    st.lists(st.sampled_from(["needle", "hay", "needle hay needle", "straw"]), max_size=5),
    min_size=1,
    max_size=12,
)


def _shown_results(text: str, tree: Mapping[str, object]) -> list[str]:
    """The lines of a Grep or Glob text that are results (they start with a tree path)."""
    return [line for line in text.splitlines() if line.split(":", 1)[0] in tree]


async def _agree(root: Path, tree: dict[str, list[str]], limit: int) -> None:
    config = {"files": {"glob_max_results": limit}}
    async with Runtime(root, config=config, plugins=False, approve_asks=True) as rt:
        glob = await rt.call("Glob", {"pattern": "*.txt"})
        data = structured(rt, glob)
        assert data["paths"] == _shown_results(glob.text, tree)
        assert data["count"] == len(tree) and len(data["paths"]) == min(limit, len(tree))
        assert data["truncated"] == (len(tree) > limit)

        holding = {n for n, lines in tree.items() if any("needle" in ln for ln in lines)}
        files = await rt.call("Grep", {"pattern": "needle", "head_limit": limit})
        data = structured(rt, files)
        assert data["files"] == _shown_results(files.text, tree)
        assert set(data["files"]) <= holding and data["total"] == len(holding)
        assert len(data["files"]) == min(limit, len(holding))

        args = {"pattern": "needle", "output_mode": "content", "head_limit": 0}
        content = await rt.call("Grep", args)
        data = structured(rt, content)
        expected = sorted(
            (n, i + 1) for n, lines in tree.items() for i, ln in enumerate(lines) if "needle" in ln
        )
        assert sorted((m["path"], m["line"]) for m in data["matches"]) == expected
        shown = [f"{m['path']}:{m['line']}:{m['text']}" for m in data["matches"]]
        assert shown == _shown_results(content.text, tree)

        args = {"pattern": "needle", "output_mode": "count_matches"}
        counts = await rt.call("Grep", args)
        data = structured(rt, counts)
        by_file = {c["path"]: c["count"] for c in data["counts"]}
        assert by_file == {n: sum(ln.count("needle") for ln in tree[n]) for n in holding}
        assert [f"{c['path']}:{c['count']}" for c in data["counts"]] == _shown_results(
            counts.text, tree
        )
        assert data["total_matches"] == sum(by_file.values())


@settings(max_examples=20, deadline=None)
@given(tree=_TREES, limit=st.integers(1, 6))
def test_text_and_structured_agree_on_random_trees(tree: dict[str, list[str]], limit: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="deftly-structured-"))
    try:
        for name, lines in tree.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines))
        asyncio.run(_agree(root, tree, limit))
    finally:
        shutil.rmtree(root, ignore_errors=True)
