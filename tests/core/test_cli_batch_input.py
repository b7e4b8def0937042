"""Bad bytes in a batch file never crash `deftly batch`: a line that is not UTF-8 is that
line's error (named, like a line of bad JSON), and a line nested thousands of levels deep is
one error result for the call it names while the other calls run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.contract.json_scan import top_level_fields
from tests.conftest import subprocess_env

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def _deftly(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [DEFTLY, *argv],
        input=stdin,
        capture_output=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _line(call_id: str, path: str) -> bytes:
    return json.dumps({"id": call_id, "name": "Read", "arguments": {"path": path}}).encode()


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_invalid_utf8_is_that_lines_error(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    batch = workspace / "calls.jsonl"
    batch.write_bytes(
        _line("1", "a.txt") + b"\n" + _line("2", "a.txt") + b"\n" + b'{"id": "\xff\xfe"}\n'
    )
    done = _deftly("batch", str(batch), "-w", str(workspace))
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "line 3: not valid UTF-8" in done.stderr
    assert "line 1" not in done.stderr and "line 2" not in done.stderr


def test_invalid_utf8_on_stdin_too(workspace: Path) -> None:
    done = _deftly("batch", "-", "-w", str(workspace), stdin=b"\xc3\x28\n")
    assert done.returncode == 2
    assert "line 1: not valid UTF-8 (byte 0xc3 at column 1)" in done.stderr


def test_a_line_nested_5000_deep_is_one_error_and_the_rest_run(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    deep = f'{{"id": "deep", "name": "Read", "arguments": {_nested(5000)}}}'.encode()
    whole_line_deep = ("[" * 1200 + "]" * 1200).encode()  # no name to report it against
    batch = workspace / "calls.jsonl"
    batch.write_bytes(b"\n".join([_line("1", "a.txt"), deep, _line("3", "a.txt")]) + b"\n")
    done = _deftly("batch", "--json", str(batch), "-w", str(workspace))
    assert done.returncode == 1, done.stderr  # one call failed; none was lost
    assert "RecursionError" not in done.stderr + done.stdout
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["tool_call_id"] for r in results] == ["1", "deep", "3"]
    assert [r["is_error"] for r in results] == [False, True, False]
    assert "nested more than 100 levels deep" in results[1]["output"]
    assert results[1]["name"] == "Read"
    assert "alpha" in results[0]["output"] and "alpha" in results[2]["output"]

    batch.write_bytes(_line("1", "a.txt") + b"\n" + whole_line_deep + b"\n")
    done = _deftly("batch", str(batch), "-w", str(workspace))
    assert done.returncode == 2 and "line 2: nested more than 100 levels deep" in done.stderr


def test_a_deep_line_whose_arguments_are_a_json_string(workspace: Path) -> None:
    """A line deep elsewhere (an extra field) still runs its flat string arguments."""
    (workspace / "a.txt").write_text("alpha\n")
    line = json.dumps({"id": "s", "name": "Read", "arguments": json.dumps({"path": "a.txt"})})
    line = line[:-1] + ', "extra": ' + "[" * 2000 + "]" * 2000 + "}"
    done = _deftly("batch", "-", "--json", "-w", str(workspace), stdin=line.encode() + b"\n")
    [result] = [json.loads(x) for x in done.stdout.splitlines()]
    assert result["tool_call_id"] == "s" and not result["is_error"], result
    assert "alpha" in result["output"]


def test_deftly_call_with_arguments_5000_deep_is_a_clean_usage_error(workspace: Path) -> None:
    done = _deftly("call", "Read", _nested(5000), "-w", str(workspace))
    assert done.returncode == 2, done.stderr
    assert "nested more than 100 levels deep" in done.stdout
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "name", "arguments", "other"]), _values))
def test_top_level_fields_give_back_each_value_as_decoded(item: dict[str, object]) -> None:
    """The scanner the batch reader uses for too-deep lines agrees with `json.loads`."""
    fields = top_level_fields(json.dumps(item), ("id", "name", "arguments"))
    assert {k: json.loads(v) for k, v in fields.items()} == {
        k: v for k, v in item.items() if k != "other"
    }
