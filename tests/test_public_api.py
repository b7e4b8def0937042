"""The public API: a typed package, a curated top level, and a docstring on everything public.

What counts as public, for the docstring check (decided here, once, for the whole tree):
- a module is public unless a part of its dotted name starts with `_` (a package's
  `__init__.py` is the package itself, so it is public; `__main__.py` is not);
- in a public module, every class and function whose name does not start with `_`, at
  module level (also inside a module-level `if`/`try`, e.g. `if TYPE_CHECKING:`), and every
  such class nested in a public class;
- in a public class, every method whose name does not start with `_`, including properties
  (the getter; a `@x.setter`/`@x.deleter` shares its docstring), `@abstractmethod`s and
  protocol members (they are the contract others implement, so they need it most);
- not needed: dunder methods such as `__init__` (the class's docstring says what it is
  for), `@overload` stubs (the implementation carries it), dataclass/pydantic fields, and
  an override of a method its base class documents (`help()` shows the inherited one, so
  `inspect.getdoc` finds it), and the class docstring of a tool's `params` model and of
  the models its fields use (pydantic would send it to the model as the schema's
  `description`, changing what the model reads; the tool's `.md` and the fields'
  descriptions say it).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import get_args

from pydantic import BaseModel

import deftly

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "deftly"
README = (ROOT / "README.md").read_text(encoding="utf-8")


# -- the top level -------------------------------------------------------------------------


def test_every_name_in_all_is_importable_from_the_top_level() -> None:
    assert len(deftly.__all__) == len(set(deftly.__all__))
    namespace: dict[str, object] = {}
    exec("from deftly import *", namespace)
    missing = [name for name in deftly.__all__ if name not in namespace]
    assert missing == []
    # Nothing public is left out of __all__ by accident: every public name is listed.
    public = {n for n, v in vars(deftly).items() if not n.startswith("_")}
    public -= {n for n, v in vars(deftly).items() if inspect.ismodule(v)}
    assert public <= set(deftly.__all__), sorted(public - set(deftly.__all__))


def _readme_python() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)


def _readme_imports() -> list[str]:
    lines = []
    for block in _readme_python():
        lines += re.findall(r"^(?:from deftly[\w.]* import .+|import deftly[\w.]*)$", block, re.M)
    return lines


def test_every_readme_import_line_works_as_written() -> None:
    lines = _readme_imports()
    assert len(lines) >= 4, lines  # the examples do import deftly
    for line in lines:
        exec(line, {})


def test_the_top_level_covers_every_name_the_readme_imports_or_names() -> None:
    imported = [
        name.strip()
        for line in _readme_imports()
        if line.startswith("from ")
        for name in line.split(" import ", 1)[1].split(",")
    ]
    # The classes the prose tells users to write or receive (an approver's request and
    # response, the events, the hook decisions, the constructor's refusal).
    named = ["ApprovalRequest", "ApprovalResponse", "ToolDeclined", "ToolCallStarted"]
    named += ["ToolProgress", "ToolCallFinished", "RuntimeNotice", "Allow", "Proceed", "Veto"]
    for name in named:
        assert re.search(rf"\b{name}\b", README), f"the README no longer names {name}"
    named.append("Approver")  # what `Runtime(approver=...)` takes
    missing = [name for name in [*imported, *named] if not hasattr(deftly, name)]
    assert missing == []
    for name in [*imported, *named]:
        assert name in deftly.__all__, name


def test_the_top_level_has_the_tool_contract_events_errors_and_env() -> None:
    from deftly.contract import errors
    from deftly.execution import events

    expected = {
        "Runtime", "ToolInfo", "Tool", "BaseTool", "SchemaTool", "ToolExecution",
        "ToolResult", "ToolContext", "ToolTraits", "Accesses", "Display", "describe",
        "literal_rule", "path_rule_matcher", "Workspace", "PathOp", "Approver",
        "ApprovalRequest", "ApprovalResponse", "Event", "Allow", "Proceed", "Veto",
        "ExecEnv", "LocalEnv", "Identity", "Profile", "ToolContribution", "CallResult",
        "ToolCall",
    }  # fmt: skip
    assert expected <= set(deftly.__all__), sorted(expected - set(deftly.__all__))
    # Every error the contract documents and every event a listener can get.
    error_types = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, Exception) and not name.startswith("_")
    }
    event_types = {
        name
        for name, value in vars(events).items()
        if isinstance(value, type) and value.__module__ == events.__name__
        and name not in {"EventBus"}
    }  # fmt: skip
    assert "DeftlyError" in error_types and "ToolCallStarted" in event_types
    assert error_types <= set(deftly.__all__), sorted(error_types - set(deftly.__all__))
    assert event_types <= set(deftly.__all__), sorted(event_types - set(deftly.__all__))
    # The display kinds a tool writer can return.
    from deftly.contract import display

    kinds = {n for n in vars(display) if n.endswith("Display") and not n.startswith("_")}
    assert kinds and kinds <= set(deftly.__all__), sorted(kinds - set(deftly.__all__))


def test_importing_deftly_loads_neither_the_mcp_sdk_nor_the_command_line() -> None:
    probe = (
        "import sys, deftly\n"
        "heavy = ('mcp', 'rich', 'typer', 'uvicorn', 'starlette', 'httpx')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- types for users ----------------------------------------------------------------------


def test_the_package_is_marked_typed() -> None:
    assert (resources.files("deftly") / "py.typed").is_file()


USER_SCRIPT = """
from deftly import CallResult, Runtime, ToolResult, ToolCallFinished, Event


async def count_lines(root: str) -> int:
    async with Runtime(root, mode="manual") as rt:
        page = await rt.call("Read", {"path": "README.md"})
        reveal_type(page)
        finished: list[ToolCallFinished] = []

        def listen(event: Event) -> None:
            if isinstance(event, ToolCallFinished):
                finished.append(event)

        rt.subscribe(listen)
        results = await rt.run_batch([{"id": "1", "name": "Glob", "arguments": "{}"}])
        reveal_type(results)
        first: CallResult = results[0]
        return len(page.text.splitlines()) + len(first.text) + len(finished)


def failure(why: str) -> ToolResult:
    return ToolResult.error(why)
"""


def test_a_users_mypy_strict_sees_deftlys_types(tmp_path: Path) -> None:
    """The README's examples and a small typed script pass `mypy --strict` against the
    installed package, and what deftly returns has its real type, not `Any`."""
    python = _readme_python()
    scripts = {
        "word_count.py": next(b for b in python if "class WordCount" in b),
        "from_python.py": next(b for b in python if "async def main" in b),
        "user.py": USER_SCRIPT,
    }
    for name, code in scripts.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")  # not the repo's config
    done = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini",
            "--cache-dir", str(tmp_path / "cache"), "--python-executable", sys.executable,
            *scripts,
        ],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    report = done.stdout + done.stderr
    assert "error" not in report and done.returncode == 0, report
    assert 'Revealed type is "deftly.execution.calls.CallResult"' in report, report
    assert 'Revealed type is "list[deftly.execution.calls.CallResult]"' in report


# -- docstrings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Undocumented:
    """One public class, function or method without a docstring."""

    path: Path
    line: int
    name: str

    def __str__(self) -> str:
        where = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{where}:{self.line} {self.name}"


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_public_module(path: Path, src: Path) -> bool:
    return not any(part.startswith("_") for part in _module_name(path, src).split("."))


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module body, looking inside `if`/`try` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)
        else:
            yield node


def _runtime_class(module: str, qualified: list[str]) -> type | None:
    value: object = importlib.import_module(module)
    for part in qualified:
        value = getattr(value, part, None)
    return value if isinstance(value, type) else None


def _models_in(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for argument in get_args(annotation):
        yield from _models_in(argument)


@functools.cache
def _schema_models(module: str) -> set[type]:
    """The pydantic models of `module` whose docstring a model would be sent: a tool's
    `params` and every model its fields use (pydantic makes a model's docstring the
    `description` of its part of the JSON schema; the tool's .md and the field descriptions
    are what the model should read)."""
    found: set[type] = set()
    pending = [
        value.params
        for value in vars(importlib.import_module(module)).values()
        if isinstance(value, type) and isinstance(getattr(value, "params", None), type)
    ]
    while pending:
        model = pending.pop()
        if not issubclass(model, BaseModel) or model in found:
            continue
        found.add(model)
        for info in model.model_fields.values():
            pending.extend(_models_in(info.annotation))
    return found


def _inherits_a_docstring(module: str, owner: list[str], name: str) -> bool:
    """Whether a method without its own docstring overrides one its base class documents."""
    value = _runtime_class(module, owner)
    if value is None:
        return False
    for base in value.__mro__[1:]:
        inherited = base.__dict__.get(name)
        if inherited is not None and inspect.getdoc(inherited):
            return True
    return False


def _undocumented_in(path: Path, src: Path) -> Iterator[Undocumented]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module_name(path, src)

    def visit_class(node: ast.ClassDef, owner: list[str]) -> Iterator[Undocumented]:
        qualified = [*owner, node.name]
        exempt = _runtime_class(module, qualified) in _schema_models(module)
        if ast.get_docstring(node) is None and not exempt:
            yield Undocumented(path, node.lineno, ".".join(qualified))
        for child in node.body:
            if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                yield from visit_class(child, qualified)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if child.name.startswith("_") or ast.get_docstring(child) is not None:
                    continue
                decorators = _decorator_names(child)
                if decorators & {"overload", "setter", "deleter"}:
                    continue
                if _inherits_a_docstring(module, qualified, child.name):
                    continue
                yield Undocumented(path, child.lineno, ".".join([*qualified, child.name]))

    for node in _module_level(tree.body):
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from visit_class(node, [])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("_") or "overload" in _decorator_names(node):
                continue
            if ast.get_docstring(node) is None:
                yield Undocumented(path, node.lineno, node.name)


def undocumented(src: Path = SRC) -> list[Undocumented]:
    """Every public class, function and method in `src` without a docstring."""
    found: list[Undocumented] = []
    for path in sorted(src.rglob("*.py")):
        if _is_public_module(path, src):
            found += _undocumented_in(path, src)
    return found


def test_every_public_class_function_and_method_has_a_docstring() -> None:
    missing = [str(item) for item in undocumented()]
    assert missing == [], (
        f"{len(missing)} without a docstring (add one saying what it is for, in a line or "
        "two; what needs one is decided at the top of tests/test_public_api.py):\n"
        + "\n".join(missing)
    )


def test_the_docstring_check_finds_what_it_should(tmp_path: Path) -> None:
    """The walker itself: it reports what it must and spares what it may."""
    package = tmp_path / "sample_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_private.py").write_text("def undocumented() -> None: ...\n")
    sample = package / "sample.py"
    sample.write_text(
        "from typing import overload, Protocol\n"
        "class Shown:\n"
        "    x: int = 0\n"
        "    def __init__(self) -> None: ...\n"
        "    def bare(self) -> None: ...\n"
        "    @property\n"
        "    def size(self) -> int: return 0\n"
        "    def _hidden(self) -> None: ...\n"
        "    class Inner: ...\n"
        "class Port(Protocol):\n"
        "    def member(self) -> None: ...\n"
        "@overload\n"
        "def f(x: int) -> int: ...\n"
        "def f(x: object) -> object:\n"
        "    return x\n"
        "def _private() -> None: ...\n"
        "if True:\n"
        "    def guarded() -> None: ...\n"
        "class Base:\n"
        '    """A base."""\n'
        "    def run(self) -> None:\n"
        '        """Run it."""\n'
        "class Child(Base):\n"
        '    """A child."""\n'
        "    def run(self) -> None: ...\n"
        "    def extra(self) -> None: ...\n"
        "from pydantic import BaseModel\n"
        "class Item(BaseModel):\n"
        "    n: int\n"
        "class Params(BaseModel):\n"
        "    items: list[Item] | None = None\n"
        "class Loose(BaseModel):\n"
        "    n: int\n"
        "class Counter:\n"
        '    """A tool."""\n'
        "    params = Params\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        found = {item.name for item in undocumented(package)}
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("sample_pkg")]:
            del sys.modules[name]
    assert found == {
        "Shown", "Shown.bare", "Shown.size", "Shown.Inner", "Port", "Port.member", "f",
        "guarded", "Child.extra", "Loose",
    }  # fmt: skip
