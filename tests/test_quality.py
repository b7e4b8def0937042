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
    "session": {"contract"},
    "features": {"contract", "policy", "env", "execution", "registry", "config", "session"},
    "serve": {
        "contract",
        "policy",
        "env",
        "execution",
        "registry",
        "config",
        "session",
        "features",
        "runtime",
    },
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


def _feature_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["deftly", "features"] and len(parts) > 2:
                found.add(parts[2])
    return found


def test_a_feature_never_imports_another_feature() -> None:
    """DESIGN §2: features meet through lower layers (protocols, traits), never directly."""
    violations = []
    for folder in sorted(p for p in (SRC / "features").iterdir() if p.is_dir()):
        if folder.name.startswith("__"):
            continue
        for path in folder.rglob("*.py"):
            wrong = _feature_imports(path) - {folder.name}
            if wrong:
                violations.append(f"{path.relative_to(ROOT)} imports features {sorted(wrong)}")
    assert violations == []
