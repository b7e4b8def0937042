"""The code stays ruff-clean, mypy-strict and inside its layers."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "deftly"

TOP = "deftly"
"""What `import deftly` / `from deftly import X` reaches: the top level, which imports the
runtime and so everything below it."""

SURFACES = {"cli", "serve", "__init__", "__main__"}
"""Where the top level may be imported: the surfaces above everything (and the top level's
own `__init__.py`)."""

_BASE = {"contract", "policy", "env", "config", "registry", "execution", "session"}
_BELOW_RUNTIME = _BASE | {"features"}
_BELOW_AGENT = _BELOW_RUNTIME | {"runtime", "providers"}
_BELOW_SERVE = _BELOW_AGENT | {"agent", "scale"}

# DESIGN §2: each layer may import only the layers listed (and itself). A package or a
# top-level module (`src/deftly/<name>.py`) is checked as soon as it exists; one that is
# not in this table is a violation until its place in DESIGN §2 is written here.
ALLOWED: dict[str, set[str]] = {
    "contract": set(),
    "policy": {"contract"},
    "env": {"contract"},
    "config": {"contract"},
    "registry": {"contract", "policy"},
    "execution": {"contract", "policy", "registry"},
    "session": {"contract"},
    "features": set(_BASE),
    "runtime": set(_BELOW_RUNTIME),
    "providers": {"contract"},
    "agent": set(_BELOW_AGENT),
    "scale": _BELOW_AGENT | {"agent"},
    "serve": set(_BELOW_SERVE),
    "cli": _BELOW_SERVE | {"serve", TOP},
    "__init__": _BELOW_SERVE | {"serve", "cli"},
    "__main__": _BELOW_SERVE | {"serve", "cli", TOP},
}
ALLOWED["serve"].add(TOP)

FEATURE_API = "api"
"""`deftly.features.api`: what a feature is; every feature may import it."""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_is_clean() -> None:
    result = _run("ruff", "check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


# -- what a module imports ---------------------------------------------------------------


def _module_name(path: Path, src: Path) -> str:
    parts = [src.name, *path.relative_to(src).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, path: Path, src: Path) -> str:
    """The absolute module of a `from ... import`, relative ones resolved."""
    if node.level == 0:
        return node.module or ""
    package = _module_name(path, src).split(".")
    if path.name != "__init__.py":
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


@functools.cache
def _existing_modules(src: Path) -> frozenset[str]:
    return frozenset(_module_name(path, src) for path in src.rglob("*.py"))


def imported_modules(path: Path, src: Path = SRC) -> Iterator[tuple[str, list[str]]]:
    """Every deftly module `path` imports, with the names taken from it (`from m import a`).

    Counted: `import`, `from ... import` (relative ones resolved, `TYPE_CHECKING` ones too),
    `importlib.import_module("deftly....")`, and a string that names an existing deftly
    module exactly (`"deftly.serve.server"`, `"pkg.mod:Class"`), the way lazy exports and
    entry points name what they load.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    existing = _existing_modules(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, path, src)
            if module == src.name or module.startswith(src.name + "."):
                yield module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == src.name or alias.name.startswith(src.name + "."):
                    yield alias.name, []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            module = node.value.split(":", 1)[0]
            if module in existing and module != src.name:
                yield module, []


def _layer_of(path: Path, src: Path) -> str:
    """The layer a file belongs to: its top package, or a top-level module's name."""
    first = path.relative_to(src).parts[0]
    return first.removesuffix(".py")


def _layers_imported(path: Path, src: Path) -> set[str]:
    found = set()
    for module, _names in imported_modules(path, src):
        parts = module.split(".")
        found.add(parts[1] if len(parts) > 1 else TOP)
    return found


def layer_violations(src: Path = SRC) -> list[str]:
    """Every import in `src` that points up DESIGN §2's table, or reaches the top level from
    below the surfaces, and every package or top-level module the table does not place."""
    violations = []
    for path in sorted(src.rglob("*.py")):
        layer = _layer_of(path, src)
        where = path.relative_to(src.parent)
        if layer not in ALLOWED:
            violations.append(f"{where}: layer {layer!r} has no place in ALLOWED (DESIGN §2)")
            continue
        wrong = _layers_imported(path, src) - ALLOWED[layer] - {layer}
        if TOP in wrong:
            violations.append(
                f"{where} imports the top level (`from deftly import ...` / `import deftly`), "
                "which imports the runtime: import from the layer that defines the name"
            )
            wrong.discard(TOP)
        if wrong:
            violations.append(f"{where} imports {sorted(wrong)}")
    return violations


def feature_violations(src: Path = SRC) -> list[str]:
    """Every import by which a feature reaches another feature (DESIGN §2: features meet
    through lower layers: protocols, traits), or `deftly.features.api` reaches any."""
    features = src / "features"
    if not features.is_dir():
        return []
    prefix = [src.name, "features"]
    violations = []
    for path in sorted(features.rglob("*.py")):
        own = path.relative_to(features).parts[0].removesuffix(".py")
        if own == "__init__":
            continue  # the feature list: it names every feature
        allowed = {own, FEATURE_API}
        for module, names in imported_modules(path, src):
            parts = module.split(".")
            if parts[:2] != prefix:
                continue
            if len(parts) > 2:
                reached = {parts[2]}
            else:  # `from deftly.features import x`, or the feature list itself
                reached = set(names) if names else {"the feature list (deftly.features)"}
            wrong = reached - allowed
            if wrong:
                where = path.relative_to(src.parent)
                violations.append(f"{where} imports features {sorted(wrong)}")
    return violations


def test_layers_only_import_downwards() -> None:
    assert layer_violations() == []


def test_a_feature_never_imports_another_feature() -> None:
    """DESIGN §2: features meet through lower layers (protocols, traits), never directly."""
    assert feature_violations() == []


# -- the checks catch what they must (on a small tree of their own) ------------------------


def _tree(root: Path, files: dict[str, str]) -> Path:
    src = root / "deftly"
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in [src, *(p for p in src.rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch()
    return src


def test_the_layer_check_catches_upward_and_top_level_imports(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "__init__.py": "from deftly.runtime import Runtime\n",
            "contract/ok.py": "from . import other\nimport json\n",
            "contract/other.py": "",
            "policy/top.py": "from deftly import Runtime\n",
            "policy/plain.py": "import deftly\n",
            "env/relative.py": "from ..runtime import facade\n",
            "execution/typed.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from deftly.features.files import read\n"
            ),
            "registry/lazy.py": '_EXPORTS = {"Runtime": "deftly.runtime.facade"}\n',
            "session/dynamic.py": 'import importlib\nimportlib.import_module("deftly.env.x")\n',
            "env/x.py": "",
            "runtime/facade.py": "from deftly.features import files\nfrom deftly.agent import a\n",
            "features/files/read.py": "from deftly.execution import typed\n",
            "agent/a.py": "from deftly.runtime import facade\nfrom deftly.scale import s\n",
            "scale/s.py": "from deftly.agent import a\n",
            "serve/server.py": "from deftly import Runtime\nfrom deftly.cli import app\n",
            "cli/app.py": "from deftly import Runtime\nfrom deftly.serve import server\n",
            "tools.py": "from deftly.contract import ok\n",
            "wizard/spell.py": "",
        },
    )
    found = layer_violations(src)
    assert found == [
        "deftly/agent/a.py imports ['scale']",
        "deftly/env/relative.py imports ['runtime']",
        "deftly/execution/typed.py imports ['features']",
        "deftly/policy/plain.py imports the top level (`from deftly import ...` / `import "
        "deftly`), which imports the runtime: import from the layer that defines the name",
        "deftly/policy/top.py imports the top level (`from deftly import ...` / `import "
        "deftly`), which imports the runtime: import from the layer that defines the name",
        "deftly/registry/lazy.py imports ['runtime']",
        "deftly/runtime/facade.py imports ['agent']",
        "deftly/serve/server.py imports ['cli']",
        "deftly/session/dynamic.py imports ['env']",
        "deftly/tools.py: layer 'tools' has no place in ALLOWED (DESIGN §2)",
        "deftly/wizard/__init__.py: layer 'wizard' has no place in ALLOWED (DESIGN §2)",
        "deftly/wizard/spell.py: layer 'wizard' has no place in ALLOWED (DESIGN §2)",
    ]


def test_the_feature_check_allows_only_its_own_folder_and_the_api(tmp_path: Path) -> None:
    src = _tree(
        tmp_path,
        {
            "features/__init__.py": "from deftly.features import files, shell\n",
            "features/api.py": "from deftly.features.files import read\n",
            "features/files/read.py": (
                "from deftly.features.api import Feature\n"
                "from deftly.features import api\n"
                "from deftly.features.files import common\n"
                "from . import common as again\n"
            ),
            "features/files/common.py": "",
            "features/shell/bash.py": (
                "from deftly.features.files.read import x\n"
                "from deftly.features import files\n"
                "from .. import plan\n"
                "import deftly.features\n"
            ),
            "features/plan/mode.py": "",
        },
    )
    assert feature_violations(src) == [
        "deftly/features/api.py imports features ['files']",
        "deftly/features/shell/bash.py imports features ['files']",
        "deftly/features/shell/bash.py imports features ['files']",
        "deftly/features/shell/bash.py imports features ['plan']",
        "deftly/features/shell/bash.py imports features ['the feature list (deftly.features)']",
    ]
