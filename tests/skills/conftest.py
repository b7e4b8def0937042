"""Fixtures for the skills tests: a private HOME, and helpers that write real skill trees."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture(autouse=True)
def skills_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`~` is a fresh directory, so `~/.agents/skills` and `~/.claude/skills` are the test's."""
    home = isolated_home / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def skill_text(front: dict[str, Any] | str | None, body: str = "Do the thing.") -> str:
    """A skill file: front matter (a mapping, raw YAML text, or None for none) and a body."""
    if front is None:
        return body
    header = front if isinstance(front, str) else yaml.safe_dump(front, sort_keys=False)
    return f"---\n{header.rstrip()}\n---\n{body}"


def write_skill(
    root: Path,
    rel: str,
    front: dict[str, Any] | str | None = None,
    body: str = "Do the thing.",
    *,
    name: str | None = None,
    description: str | None = None,
) -> Path:
    """Write `root/rel`; `rel` ending in a folder name gets a SKILL.md inside it.

    With neither `front` nor `name`/`description`, a folder skill gets a front matter
    naming it after its folder.
    """
    path = root / rel
    if not rel.endswith(".md"):
        path = path / "SKILL.md"
    if front is None and (name is not None or description is not None or path.name == "SKILL.md"):
        front = {
            "name": name if name is not None else path.parent.name,
            "description": description if description is not None else f"{rel} skill",
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(skill_text(front, body), encoding="utf-8")
    return path


@pytest.fixture
def make_skill() -> Callable[..., Path]:
    return write_skill
