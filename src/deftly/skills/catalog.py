"""The catalog: the skills of one workspace by (case-insensitive) name."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from deftly.skills.discovery import Discovery
from deftly.skills.model import Skill, SkippedSkill, normalize_name
from deftly.skills.roots import SkillRoot


class SkillCatalog:
    """An immutable snapshot of a discovery. Reloading builds a new catalog."""

    def __init__(
        self,
        skills: Sequence[Skill] = (),
        skipped: Sequence[SkippedSkill] = (),
        roots: Sequence[SkillRoot] = (),
    ) -> None:
        self.skills: tuple[Skill, ...] = tuple(skills)
        self.skipped: tuple[SkippedSkill, ...] = tuple(skipped)
        self.roots: tuple[SkillRoot, ...] = tuple(roots)
        self._by_key = {skill.key: skill for skill in self.skills}

    @classmethod
    def from_discovery(
        cls, discovery: Discovery, extra_skipped: Sequence[SkippedSkill] = ()
    ) -> SkillCatalog:
        return cls(discovery.skills, [*extra_skipped, *discovery.skipped], discovery.roots)

    def __len__(self) -> int:
        return len(self.skills)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name.strip()) in self._by_key

    def get(self, name: str) -> Skill | None:
        return self._by_key.get(normalize_name(name.strip()))

    def names(self) -> list[str]:
        return [skill.name for skill in self.skills]

    def suggestions(
        self, name: str, *, limit: int = 5, among: Sequence[Skill] | None = None
    ) -> list[str]:
        """Names close to `name`: ones containing it (or contained in it), then look-alikes."""
        pool = list(among) if among is not None else list(self.skills)
        wanted = normalize_name(name.strip())
        if not wanted:
            return []
        by_key = {skill.key: skill.name for skill in pool}
        found = [
            by_key[key]
            for key in by_key
            if key != wanted and (wanted in key or (len(key) >= 3 and key in wanted))
        ]
        for key in difflib.get_close_matches(wanted, list(by_key), n=limit, cutoff=0.6):
            if by_key[key] not in found and key != wanted:
                found.append(by_key[key])
        return found[:limit]
