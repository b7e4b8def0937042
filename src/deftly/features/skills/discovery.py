"""The discovery walk: from skill roots to a catalog of skills (and a list of what was not).

Per root, depth first, entries in sorted order so the result never depends on the file
system's order:

- a folder holding a `SKILL.md` is a skill; its other files are payload and not scanned
  (unless the skill is a bundle marked `has-sub-skill`: its sub-folders' skills are named
  `parent.child`);
- a loose `*.md` file at the top of a root is a flat skill named after the file (not
  `SKILL.md`, not `README.md`, not a dot-file, and not when a folder skill of that name
  sits beside it);
- other folders are descended into, except dot-folders and `node_modules` (a dot-folder
  that itself holds a `SKILL.md` is still a skill); at most 8 levels deep.

Across all roots the first skill found with a name wins (roots come in precedence order);
the others are reported as shadowed. Symlink loops, unreadable folders, huge or broken
files are reported and skipped: discovery never raises and always ends. A skill file that
is (or links to) a secret, and a file or linked folder that resolves outside its root, is
refused before it is read (`guard`).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from deftly.features.skills.guard import real_path, refusal
from deftly.features.skills.model import (
    SOURCE_TITLES,
    Skill,
    SkipKind,
    SkippedSkill,
    normalize_name,
    sort_key,
)
from deftly.features.skills.parser import (
    DEFAULT_MAX_BYTES,
    SKILL_FILE,
    SkillParseError,
    has_sub_skills,
    parse_skill_text,
    read_skill_file,
)
from deftly.features.skills.roots import SkillRoot

MAX_SCAN_DEPTH = 8
MAX_SCANNED_DIRS = 50_000
_NOT_FLAT = frozenset({"skill.md", "readme.md"})


@dataclass
class Discovery:
    """The outcome: usable skills sorted by name, skipped files, the roots scanned."""

    skills: list[Skill] = field(default_factory=list)
    skipped: list[SkippedSkill] = field(default_factory=list)
    roots: list[SkillRoot] = field(default_factory=list)
    scanned_dirs: int = 0


class _Walker:
    def __init__(self, max_bytes: int, max_dirs: int) -> None:
        self.max_bytes = max_bytes
        self.max_dirs = max_dirs
        self.by_key: dict[str, Skill] = {}
        self.skipped: list[SkippedSkill] = []
        self.seen_files: set[tuple[int, int]] = set()
        self.visited_dirs: set[tuple[int, int]] = set()
        self.scanned = 0
        self.budget_reported = False

    # -- one root ------------------------------------------------------------------------

    def walk_root(self, root: SkillRoot) -> None:
        self._walk(root, root.path, top=True, depth=0, parent=None, ancestors=frozenset())

    def _walk(
        self,
        root: SkillRoot,
        directory: Path,
        *,
        top: bool,
        depth: int,
        parent: str | None,
        ancestors: frozenset[tuple[int, int]],
    ) -> None:
        if depth > MAX_SCAN_DEPTH:
            return
        if self.scanned >= self.max_dirs:
            if not self.budget_reported:
                self.budget_reported = True
                self._skip(
                    root,
                    directory,
                    f"discovery stopped after scanning {self.max_dirs:,} folders; point the "
                    "skill directories at smaller trees",
                    "unreadable",
                )
            return
        try:
            info = os.stat(directory)
        except OSError as exc:
            self._skip(
                root, directory, f"this folder cannot be read ({_os_text(exc)})", "unreadable"
            )
            return
        identity = (info.st_dev, info.st_ino)
        if identity in ancestors:
            self._skip(
                root,
                directory,
                "a symbolic link here leads back to a folder above it (a loop); it was not "
                "followed",
                "loop",
            )
            return
        if identity in self.visited_dirs and not top:
            return  # reached again through another link: scanned once is enough
        self.visited_dirs.add(identity)
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            self._skip(
                root, directory, f"this folder cannot be read ({_os_text(exc)})", "unreadable"
            )
            return
        self.scanned += 1
        ancestors = ancestors | {identity}

        subdirs: list[os.DirEntry[str]] = []
        skill_dirs: list[str] = []
        for entry in entries:
            if not _is_dir(entry):
                continue
            is_skill = _is_regular_file(os.path.join(entry.path, SKILL_FILE))
            if not is_skill and (entry.name == "node_modules" or entry.name.startswith(".")):
                continue
            if _is_link(entry) and not self._folder_allowed(root, Path(entry.path)):
                continue
            if is_skill:
                skill_dirs.append(entry.name)
            else:
                subdirs.append(entry)

        bundles: dict[str, str] = {}
        for name in skill_dirs:
            skill = self._register(
                root, Path(directory, name, SKILL_FILE), default_name=name, parent=parent
            )
            if skill is not None and has_sub_skills(skill):
                bundles[name] = skill.name

        if top:
            taken = {normalize_name(n) for n in skill_dirs}
            for entry in entries:
                self._flat(root, entry, taken)

        for name, bundle_name in bundles.items():
            self._walk(
                root,
                Path(directory, name),
                top=False,
                depth=depth + 1,
                parent=bundle_name,
                ancestors=ancestors,
            )
        for entry in subdirs:
            self._walk(
                root,
                Path(entry.path),
                top=False,
                depth=depth + 1,
                parent=parent,
                ancestors=ancestors,
            )

    def _flat(self, root: SkillRoot, entry: os.DirEntry[str], taken: set[str]) -> None:
        lower = entry.name.lower()
        if not lower.endswith(".md") or lower in _NOT_FLAT or entry.name.startswith("."):
            return
        stem = entry.name[:-3]
        if not stem or not _is_regular_file(entry.path):
            return
        if normalize_name(stem) in taken:
            self._skip(
                root,
                Path(entry.path),
                f'the folder skill "{stem}/{SKILL_FILE}" beside it has the same name and wins',
                "shadowed",
            )
            return
        self._register(root, Path(entry.path), default_name=stem, parent=None)

    def _folder_allowed(self, root: SkillRoot, path: Path) -> bool:
        """A linked folder is scanned only when it resolves inside its root."""
        real = real_path(path)
        if real is None:
            return True  # a broken link or a loop: the walk reports it when it gets there
        reason = refusal(path, real, root.path, folder=True)
        if reason is not None:
            self._skip(root, path, reason, "refused")
            return False
        return True

    # -- one file ------------------------------------------------------------------------

    def _register(
        self, root: SkillRoot, path: Path, *, default_name: str, parent: str | None
    ) -> Skill | None:
        try:
            info = os.stat(path)
        except OSError as exc:
            self._skip(root, path, f"it cannot be read ({_os_text(exc)})", "unreadable")
            return None
        real = real_path(path)
        if real is None:
            self._skip(root, path, "its symbolic links cannot be resolved", "unreadable")
            return None
        reason = refusal(path, real, root.path, folder=False)
        if reason is not None:
            self._skip(root, path, reason, "refused")
            return None
        identity = (info.st_dev, info.st_ino)
        if identity in self.seen_files:  # the same file reached twice (links, nested roots)
            return None
        self.seen_files.add(identity)
        try:
            text = read_skill_file(real, self.max_bytes)  # what was checked, not the link
            skill = parse_skill_text(
                text, path, default_name=default_name, source=root.source, package=root.package
            )
        except SkillParseError as exc:
            self._skip(root, path, exc.reason, exc.kind)
            return None
        except Exception as exc:  # never let one odd file stop discovery
            self._skip(root, path, f"it could not be read ({type(exc).__name__}: {exc})")
            return None
        if parent is not None:
            folded, prefix = normalize_name(skill.name), normalize_name(parent)
            if folded != prefix and not folded.startswith(prefix + "."):
                skill = replace(skill, name=f"{parent}.{skill.name}")
            skill = replace(skill, is_sub_skill=True)
        winner = self.by_key.get(skill.key)
        if winner is not None:
            self._skip(
                root,
                path,
                f'the name "{skill.name}" is already taken by {winner.path} '
                f"({SOURCE_TITLES[winner.source].lower()}), which wins",
                "shadowed",
            )
            return None
        self.by_key[skill.key] = skill
        return skill

    def _skip(
        self,
        root: SkillRoot,
        path: Path,
        reason: str,
        kind: SkipKind = "invalid",
    ) -> None:
        self.skipped.append(SkippedSkill(str(path), reason, kind, root.source))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return True  # cannot tell: check where it leads


def _is_regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _os_text(exc: OSError) -> str:
    return exc.strerror or str(exc)


def discover(
    roots: Sequence[SkillRoot],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    disabled: Iterable[str] = (),
    max_dirs: int = MAX_SCANNED_DIRS,
) -> Discovery:
    """Walk `roots` (highest precedence first) and return what they hold."""
    walker = _Walker(max_bytes, max_dirs)
    for root in roots:
        walker.walk_root(root)
    patterns = [normalize_name(p) for p in disabled if p.strip()]
    skills: list[Skill] = []
    skipped = list(walker.skipped)
    for skill in walker.by_key.values():
        if any(fnmatch.fnmatchcase(skill.key, pattern) for pattern in patterns):
            skipped.append(
                SkippedSkill(
                    str(skill.path),
                    f'the skill "{skill.name}" is switched off by [skills] disabled',
                    "disabled",
                    skill.source,
                )
            )
        else:
            skills.append(skill)
    skills.sort(key=lambda s: sort_key(s.name))
    return Discovery(skills, skipped, list(roots), walker.scanned)
