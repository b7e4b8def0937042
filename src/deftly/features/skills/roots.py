"""Where skills are looked for, in order of precedence.

1. project: `.deftly/skills`, `.agents/skills`, `.claude/skills` under the project root
   (the nearest ancestor of the workspace holding a `.git` entry, else the workspace);
2. user: `$XDG_CONFIG_HOME/deftly/skills` (default `~/.config/deftly/skills`),
   `~/.agents/skills`, `~/.claude/skills`;
3. extra: the `[skills] extra_dirs` of the configuration;
4. package: directories installed Python packages declare in the entry-point group
   `deftly.skills`;
5. builtin: the skills shipped inside deftly.

A root that does not exist is left out; a root whose real path was already listed is
left out too, so a symlinked or repeated directory is scanned once, for its first source.
A project root that links out of the project is refused (a cloned repository must not
point deftly at the user's files); `[skills] extra_dirs` names such a folder on purpose.
"""

from __future__ import annotations

import os
import types
from collections.abc import Iterable, Sequence
from pathlib import Path

from deftly.contract.records import frozen
from deftly.features.skills.model import SkillSource, SkippedSkill
from deftly.registry.entry_points import entry_points as installed_entry_points

ENTRY_POINT_GROUP = "deftly.skills"
PROJECT_DIRS = (".deftly/skills", ".agents/skills", ".claude/skills")
HOME_DIRS = (".agents/skills", ".claude/skills")
BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"


@frozen
class SkillRoot:
    """One directory to scan. `path` is its real path; `package` names the distribution
    (or entry point) that shipped it, for package roots."""

    path: Path
    source: SkillSource
    package: str | None = None


def user_skills_dir(home: Path) -> Path:
    """`$XDG_CONFIG_HOME/deftly/skills`, else `~/.config/deftly/skills` (as the config loader)."""
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base) if base else home / ".config") / "deftly" / "skills"


def project_root(workspace: Path) -> Path:
    """The nearest ancestor of `workspace` (itself included) holding a `.git` entry."""
    start = Path(os.path.abspath(workspace))
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return start


def expand_configured_dir(raw: str, *, home: Path, base: Path) -> Path:
    """`~` and `~/x` are the home directory; a relative path is taken from the project root."""
    if raw == "~":
        return home
    if raw.startswith("~/"):
        return home / raw[2:]
    path = Path(raw)
    return path if path.is_absolute() else base / path


class RootCollector:
    """Builds the ordered, de-duplicated list of roots and notes what it had to leave out."""

    def __init__(self) -> None:
        self.roots: list[SkillRoot] = []
        self.skipped: list[SkippedSkill] = []
        self._seen: set[str] = set()

    def add(
        self,
        path: Path,
        source: SkillSource,
        *,
        package: str | None = None,
        must_exist: bool = False,
        within: Path | None = None,
    ) -> None:
        """Add a skill directory by its real path, once; a missing one is skipped (noted when
        `must_exist`), and so is one whose real path leaves `within` (a project directory linking
        elsewhere)."""
        try:
            real = Path(os.path.realpath(path))
            exists = real.is_dir()
        except (OSError, ValueError, RuntimeError):
            exists = False
            real = path
        if not exists:
            if must_exist:
                self.skipped.append(
                    SkippedSkill(
                        str(path), "this skill directory does not exist", "unreadable", source
                    )
                )
            return
        if within is not None and not real.is_relative_to(os.path.realpath(within)):
            self.skipped.append(
                SkippedSkill(
                    str(path),
                    f"this skill directory links to {real}, outside the project; add that "
                    "folder to [skills] extra_dirs to use its skills",
                    "refused",
                    source,
                )
            )
            return
        key = os.path.normcase(str(real))
        if key in self._seen:
            return
        self._seen.add(key)
        self.roots.append(SkillRoot(real, source, package))


def resolve_roots(
    workspace: Path,
    *,
    home: Path,
    extra_dirs: Sequence[str] = (),
    project: bool = True,
    user: bool = True,
    packages: bool = True,
    builtin: bool = True,
) -> tuple[list[SkillRoot], list[SkippedSkill]]:
    """The roots to scan, highest precedence first, and problems with configured ones."""
    collector = RootCollector()
    base = project_root(workspace)
    if project:
        for rel in PROJECT_DIRS:
            collector.add(base / rel, "project", within=base)
    if user:
        collector.add(user_skills_dir(home), "user")
        for rel in HOME_DIRS:
            collector.add(home / rel, "user")
    for raw in extra_dirs:
        collector.add(expand_configured_dir(raw, home=home, base=base), "extra", must_exist=True)
    if packages:
        for path, package in package_dirs(collector.skipped):
            collector.add(path, "package", package=package, must_exist=True)
    if builtin:
        collector.add(BUILTIN_DIR, "builtin")
    return collector.roots, collector.skipped


def package_dirs(skipped: list[SkippedSkill]) -> list[tuple[Path, str]]:
    """Skill directories declared by installed packages (entry-point group `deftly.skills`).

    The entry point may name a directory (an absolute `str` or path-like), a module or
    package (its own directory), a list of those, or a function returning them. One that
    fails to load is reported, never fatal.
    """
    found: list[tuple[Path, str]] = []
    try:
        entry_points = sorted(installed_entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    except Exception as exc:  # a broken installation must not stop the runtime
        skipped.append(
            SkippedSkill("entry points", f"cannot list installed packages ({exc})", "unreadable")
        )
        return found
    for ep in entry_points:
        label = f"entry point {ep.name} = {ep.value}"
        dist = getattr(ep, "dist", None)
        package = getattr(dist, "name", None) or ep.name
        try:
            paths = _paths_of(ep.load(), depth=0)
        except Exception as exc:
            skipped.append(
                SkippedSkill(label, f"it could not be loaded ({exc})", "unreadable", "package")
            )
            continue
        if not paths:
            skipped.append(
                SkippedSkill(
                    label,
                    "it names no directory; point it at a directory, a package or a function "
                    "returning directories",
                    "invalid",
                    "package",
                )
            )
        found.extend((path, package) for path in paths)
    return found


def _paths_of(obj: object, depth: int) -> list[Path]:
    if depth > 3:
        return []
    if isinstance(obj, str | os.PathLike):
        path = Path(os.fspath(obj))
        return [path] if path.is_absolute() else []  # relative to what? refuse it
    if isinstance(obj, types.ModuleType):
        file = getattr(obj, "__file__", None)
        if file:
            return [Path(file).resolve().parent]
        return [Path(p) for p in getattr(obj, "__path__", [])]
    if isinstance(obj, Iterable) and not isinstance(obj, bytes | dict):
        return [p for item in obj for p in _paths_of(item, depth + 1)]
    if callable(obj):
        return _paths_of(obj(), depth + 1)
    text = str(obj)  # an importlib.resources Traversable on disk prints as its path
    return [Path(text)] if os.path.isabs(text) else []
