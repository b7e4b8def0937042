"""The code stays ruff-clean, mypy-strict and inside its layers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "deftly"

# DESIGN §2: each layer may import only the layers listed (and itself).
ALLOWED = {
    "contract": set(),
    "policy": {"contract"},
    "env": {"contract"},
    "config": {"contract"},
    "registry": {"contract", "policy"},
    "execution": {"contract", "policy", "registry"},
    "tools": {"contract", "policy", "env", "execution", "registry", "config"},
    "skills": {"contract", "config", "policy"},
    "mcp": {"contract", "policy", "registry", "execution", "config", "skills"},
}


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


def _layer_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("deftly."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("deftly."):
                    found.add(alias.name.split(".")[1])
    return found


def test_layers_only_import_downwards() -> None:
    violations = []
    for layer, allowed in ALLOWED.items():
        folder = SRC / layer
        if not folder.exists():
            continue
        for path in folder.rglob("*.py"):
            wrong = _layer_imports(path) - allowed - {layer}
            if wrong:
                violations.append(f"{path.relative_to(ROOT)} imports {sorted(wrong)}")
    assert violations == []
