"""No guard decides by tool names: the old name lists are gone and cannot come back.

Guards (plan mode, the permission engine, Bash's background mode, `deftly serve`'s tool
list) read the traits a tool declares. This test reads the source of `src/deftly` with
`ast` and fails on:

- the old constants (PLAN_WRITE_TOOLS, BLOCKED_TASK_TOOLS, ..., HIDDEN_TOOLS);
- a comparison (`==`, `!=`, `in`, `not in`) against the name of a built-in tool, written
  as a string literal, a constant holding one, or a collection of them;
- a loop or comprehension over a collection of built-in tool names;
- a module-level collection (or dict keyed by) built-in tool names: a name list.

Only a tool's own module may compare its name; every other module, in its feature too,
asks for a trait. The checker itself is tested on the old code.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import deftly
from deftly.contract.tool import BaseTool

SRC = Path(deftly.__file__).parent

OLD_CONSTANTS = (
    "PLAN_WRITE_TOOLS",
    "BLOCKED_TASK_TOOLS",
    "BLOCKED_CRON_TOOLS",
    "EXIT_TOOL",
    "TASK_TOOLS",
    "HIDDEN_TOOLS",
    "GIT_WRITE_TOOLS",
)


def _all_subclasses(cls: type) -> Iterator[type]:
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        yield sub
        yield from _all_subclasses(sub)


def builtin_tool_names() -> dict[str, str]:
    """Every built-in tool's name -> the module that defines it."""
    for module in pkgutil.walk_packages([str(SRC)], prefix="deftly."):
        if not module.name.endswith("__main__"):  # running it would start the CLI
            importlib.import_module(module.name)
    owners: dict[str, str] = {}
    for cls in _all_subclasses(BaseTool):
        name = cls.__dict__.get("name")
        if isinstance(name, str) and cls.__module__.startswith("deftly."):
            owners[name] = cls.__module__
    return owners


@dataclass(frozen=True)
class Finding:
    """One place where code decides by a tool's name."""

    where: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.what}"


class NameListChecker:
    """Finds name-based decisions in one module's source."""

    def __init__(self, owners: dict[str, str], constants: dict[str, frozenset[str]]) -> None:
        self.owners = owners
        self.constants = constants
        """Module-level names, in any module, bound to tool names (a string or a collection)."""

    def names_in(self, node: ast.AST, local: dict[str, frozenset[str]]) -> frozenset[str]:
        """The built-in tool names an expression stands for (a literal, a constant, a
        collection of only such names, frozenset({...})), or none."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return frozenset({node.value}) & self.owners.keys()
        if isinstance(node, ast.Name):
            return local.get(node.id) or self.constants.get(node.id, frozenset())
        if isinstance(node, ast.Attribute):
            return self.constants.get(node.attr, frozenset())
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            found: set[str] = set()
            for element in node.elts:
                names = self.names_in(element, local)
                if not names and isinstance(element, ast.Constant):
                    return frozenset()  # other words too (config keys): not a name list
                found |= names
            return frozenset(found)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("frozenset", "set", "tuple", "list")
            and len(node.args) == 1
        ):
            return self.names_in(node.args[0], local)
        return frozenset()

    def check(self, source: str | ast.Module, module: str) -> list[Finding]:
        """Every name-based decision in `source`, the code of `module` (dotted name)."""
        tree = source if isinstance(source, ast.Module) else ast.parse(source)
        local = module_constants(tree, self.owners)
        findings: list[Finding] = []

        def foreign(names: frozenset[str]) -> list[str]:
            return sorted(n for n in names if self.owners[n] != module)

        def report(node: ast.AST, what: str, names: frozenset[str]) -> None:
            others = foreign(names)
            if others:
                line = getattr(node, "lineno", 0)
                findings.append(Finding(module, line, f"{what} {', '.join(others)}"))

        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                named = frozenset().union(*(self.names_in(o, local) for o in operands))
                report(node, "compares with the tool name(s)", named)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                report(node, "loops over the tool names", self.names_in(node.iter, local))
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                for loop in node.generators:
                    report(node, "loops over the tool names", self.names_in(loop.iter, local))
            elif isinstance(node, ast.Dict):
                keys = [k for k in node.keys if k is not None]
                named = frozenset().union(*(self.names_in(k, local) for k in keys))
                report(node, "keys a table by the tool name(s)", named)
        for statement in tree.body:
            target, value = _assignment(statement)
            if target is None or value is None or target == "__all__":
                continue
            if isinstance(value, (ast.Set, ast.Tuple, ast.List, ast.Call)):
                report(statement, f"lists tool names in {target}:", self.names_in(value, local))
        return findings


def _assignment(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id, statement.value
    return None, None


def module_constants(tree: ast.Module, owners: dict[str, str]) -> dict[str, frozenset[str]]:
    """Module-level names bound to a tool name or a collection of tool names."""
    plain = NameListChecker(owners, {})
    found: dict[str, frozenset[str]] = {}
    for statement in tree.body:
        target, value = _assignment(statement)
        if target is None or value is None or target == "__all__":
            continue
        names = plain.names_in(value, found)
        if names:
            found[target] = names
    return found


@functools.cache
def sources() -> tuple[tuple[str, ast.Module], ...]:
    """(dotted module name, syntax tree) of every module of deftly."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC.parent).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append((".".join(parts), ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(found)


@functools.cache
def checker() -> NameListChecker:
    """A checker that knows every built-in tool and every constant naming one."""
    owners = builtin_tool_names()
    constants: dict[str, frozenset[str]] = {}
    for _module, tree in sources():
        constants.update(module_constants(tree, owners))
    return NameListChecker(owners, constants)


# -- the tests ---------------------------------------------------------------------------


def test_the_old_name_lists_are_gone() -> None:
    found = [
        f"{module}:{node.lineno}: {node.id}"
        for module, tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in OLD_CONSTANTS
    ]
    assert not found, "guards decide by traits (ToolTraits), not by name lists:\n" + "\n".join(
        found
    )


NOT_GUARDS = {
    "deftly": "the lazy exports are keyed by Python class names (the Agent loop class)",
    "deftly.features.agents.profiles": (
        "a sub-agent type's tool set is a list of names, exactly like the `tools:` of an "
        "agent file; it chooses tools, it decides nothing about a call"
    ),
}
"""Modules whose tool names are data, not decisions (and why)."""


def test_no_guard_compares_tool_names_outside_the_tools_own_module() -> None:
    check = checker()
    found = [
        str(f)
        for module, tree in sources()
        if module not in NOT_GUARDS
        for f in check.check(tree, module)
    ]
    assert not found, (
        "decide by the traits the tool declares (entry.tool.traits), not by its name:\n"
        + "\n".join(found)
    )


def test_the_built_in_tools_are_known_to_the_checker() -> None:
    owners = builtin_tool_names()
    expected = {
        "Read": "deftly.features.files.read",
        "Write": "deftly.features.files.write",
        "Edit": "deftly.features.files.edit",
        "Bash": "deftly.features.shell.bash",
        "TaskStop": "deftly.features.shell.task_stop",
        "TaskOutput": "deftly.features.shell.task_output",
        "ExitPlanMode": "deftly.features.plan.exit_plan_mode",
        "Skill": "deftly.features.skills.skill",
        "select_tools": "deftly.features.disclosure.select_tools",
    }
    assert {name: owners.get(name) for name in expected} == expected


OLD_PLAN_MODE = """
PLAN_WRITE_TOOLS = frozenset({"Write", "Edit"})
BLOCKED_CRON_TOOLS = frozenset({"CronCreate", "CronDelete"})
EXIT_TOOL = "ExitPlanMode"

def guard(name):
    if name in PLAN_WRITE_TOOLS:
        return 1
    if name == EXIT_TOOL:
        return 2
"""

OLD_BASH = """
TASK_TOOLS = ("TaskOutput", "TaskStop")

def background_enabled(registry):
    return all(name in registry for name in TASK_TOOLS)
"""

OLD_SERVER = """
HIDDEN_TOOLS = frozenset({"select_tools"})

def listing(infos):
    return [i for i in infos if i.name not in HIDDEN_TOOLS and i.name != "Skill"]
"""


def test_the_checker_finds_the_old_guards() -> None:
    check = checker()
    plan = check.check(OLD_PLAN_MODE, "deftly.policy.plan_guard")
    assert {f.line for f in plan} == {2, 3, 7, 9}, [str(f) for f in plan]
    bash = check.check(OLD_BASH, "deftly.features.other")
    assert {f.line for f in bash} == {2, 5}, [str(f) for f in bash]
    assert any("loops over" in f.what for f in bash)
    server = check.check(OLD_SERVER, "deftly.serve.server")
    assert {f.line for f in server} == {2, 5} and any("Skill" in str(f) for f in server)


def test_only_a_tools_own_module_may_name_it() -> None:
    check = checker()
    own = 'def hidden(name):\n    return name == "select_tools"\n'
    assert not check.check(own, "deftly.features.disclosure.select_tools")
    assert check.check(own, "deftly.features.disclosure.disclosure"), "its feature asks traits"
    assert len(check.check(OLD_BASH, "deftly.features.shell.bash")) == 2
