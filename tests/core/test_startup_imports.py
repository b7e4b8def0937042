"""Start-up discipline: what each entry point imports, checked in a fresh interpreter.

Every `deftly` command and every `import deftly.<module>` pays for `import deftly` first,
and a command pays for everything its module imports before it does any work. So the
package imports its names on first use, the command line imports a command's machinery
inside that command, and a runtime imports a library only when a tool needs it. These
tests read `sys.modules` after each entry point (behaviour, not time: the figures are in
benchmarks/bench_startup.py).
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import deftly
from tests.conftest import subprocess_env

SRC = Path(deftly.__file__).resolve().parent

MODEL_SDKS = {"openai", "anthropic"}
COMMAND_LINE = {"rich", "typer", "click", "prompt_toolkit", "pygments"}
ON_FIRST_USE = {"yaml", "PIL", "jsonschema", "croniter", "bashlex", "httpx", "httpx2"}
"""Libraries a tool needs only when it runs (front matter, images, schema-only tools, cron
expressions, web requests), never to be listed."""
SERVING = {"mcp", "uvicorn", "starlette", "anyio"}

PROBE = """
import atexit, json, sys

def _dump():
    with open({out!r}, "w") as handle:
        json.dump(sorted(sys.modules), handle)

atexit.register(_dump)
{code}
"""


def _modules_after(code: str, tmp_path: Path, *, cwd: Path | None = None) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (also when it exits
    through SystemExit, as a command does)."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(out=str(out), code=code)],
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="100"),
        cwd=cwd or tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(out.read_text()))


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def _command(*argv: str) -> str:
    run = "from deftly.cli.app import main\nmain()\n"
    return f"import sys\nsys.argv = ['deftly', *{list(argv)!r}]\n{run}"


# -- the package ---------------------------------------------------------------------------


def test_import_deftly_imports_nothing_of_deftly_nor_any_library(tmp_path: Path) -> None:
    modules = _modules_after("import deftly", tmp_path)
    assert {m for m in modules if m.startswith("deftly")} == {"deftly"}
    heavy = {"pydantic", "asyncio", *MODEL_SDKS, *COMMAND_LINE, *ON_FIRST_USE, *SERVING}
    assert _tops(modules) & heavy == set()


def test_every_top_level_name_is_the_object_its_home_module_defines() -> None:
    homes: dict[str, str] = deftly._HOME  # type: ignore[attr-defined]
    assert set(homes) == set(deftly.__all__) - {"__version__"}
    for name, module in homes.items():
        assert getattr(deftly, name) is getattr(importlib.import_module(module), name), name
        assert name in vars(deftly)  # kept: the next lookup is a plain attribute
    assert set(deftly.__all__) <= set(dir(deftly))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = deftly.Nope  # type: ignore[attr-defined]


def test_the_typed_imports_and_the_lazy_table_name_the_same_homes() -> None:
    """Type checkers read the `TYPE_CHECKING` imports, the interpreter reads `_FROM`: they
    must not drift apart."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module
                typed.update({alias.name: statement.module for alias in statement.names})
    assert typed == deftly._HOME  # type: ignore[attr-defined]


def test_the_contract_and_the_runtime_class_import_no_feature(tmp_path: Path) -> None:
    modules = _modules_after("from deftly import Runtime, Tool, ToolResult, Workspace", tmp_path)
    features = {m for m in modules if m.startswith("deftly.features")}
    assert features <= {"deftly.features", "deftly.features.api"}, sorted(features)
    above = {"deftly.agent", "deftly.providers", "deftly.serve", "deftly.cli", "deftly.scale"}
    assert {m for m in modules if m.rsplit(".", 1)[0] in above or m in above} == set()
    assert _tops(modules) & (MODEL_SDKS | COMMAND_LINE | ON_FIRST_USE | SERVING) == set()


def test_importing_one_feature_module_does_not_import_the_others(tmp_path: Path) -> None:
    modules = _modules_after("import deftly.features.todo.state", tmp_path)
    features = {m.split(".")[2] for m in modules if m.count(".") >= 2 and ".features." in m}
    assert features == {"api", "todo"}


def test_a_started_runtime_imports_only_what_listing_its_tools_needs(tmp_path: Path) -> None:
    code = (
        "import asyncio\nfrom deftly import Runtime\n"
        "async def main():\n"
        f"    async with Runtime({str(tmp_path)!r}) as rt:\n"
        "        assert len(rt.tools()) > 10\n"
        "asyncio.run(main())\n"
    )
    modules = _modules_after(code, tmp_path)
    tops = _tops(modules)
    assert tops & (MODEL_SDKS | COMMAND_LINE | SERVING) == set()
    # yaml reads the built-in skills' front matter; the rest wait for a tool that needs them.
    assert tops & ON_FIRST_USE == set()
    assert not {m for m in modules if m.startswith(("deftly.agent", "deftly.providers"))}


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ("tools", "--help")])
def test_help_and_version_import_no_runtime_and_no_pydantic(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    modules = _modules_after(_command(*argv), tmp_path)
    ours = {m for m in modules if m.startswith("deftly")}
    assert {m for m in ours if not m.startswith("deftly.cli")} == {"deftly"}, sorted(ours)
    libraries = {"asyncio", *MODEL_SDKS, *ON_FIRST_USE, *SERVING}
    if len(argv) == 1:  # typer itself imports pydantic to parse a subcommand's options
        libraries.add("pydantic")
    assert _tops(modules) & libraries == set()


def test_deftly_tools_imports_neither_mcp_nor_rich_nor_the_model_sdks_nor_the_agent(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    modules = _modules_after(_command("tools", "--json", "-w", str(tmp_path / "ws")), tmp_path)
    tops = _tops(modules)
    # rich too: JSON on stdout and no diagnostics need no console.
    assert tops & (MODEL_SDKS | SERVING | {"prompt_toolkit", "pygments", "rich"}) == set()
    assert tops & ON_FIRST_USE == set()
    above = ("deftly.agent", "deftly.providers", "deftly.serve", "deftly.scale")
    assert not {m for m in modules if m.startswith(above)}
    # No person can answer (stdin is not a terminal): neither the prompt nor its renderer.
    assert {
        "deftly.cli.approver",
        "deftly.cli.render",
        "deftly.cli.trust_question",
    } & modules == set()


def test_the_lazy_consoles_print_and_an_error_line_still_reaches_stderr(tmp_path: Path) -> None:
    """`out` and `err` are made on first use; what is printed through them arrives."""
    done = subprocess.run(
        [sys.executable, "-m", "deftly.cli", "call", "Read", "--mode", "bogus", "-w", tmp_path],
        capture_output=True,
        text=True,
        env=subprocess_env(COLUMNS="100"),
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "deftly: unknown mode 'bogus'; use manual, yolo or auto" in done.stderr
    assert "Traceback" not in done.stderr
