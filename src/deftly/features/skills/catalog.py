"""The catalog: the skills of one workspace by (case-insensitive) name."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from deftly.features.skills.discovery import Discovery
from deftly.features.skills.model import Skill, SkippedSkill, normalize_name
from deftly.features.skills.roots import SkillRoot


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
        """The catalog of what a discovery found, with `extra_skipped` (problems found before it)
        listed first."""
        return cls(discovery.skills, [*extra_skipped, *discovery.skipped], discovery.roots)

    def __len__(self) -> int:
        return len(self.skills)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name.strip()) in self._by_key

    def get(self, name: str) -> Skill | None:
        """The skill called `name`, in any case, or None."""
        return self._by_key.get(normalize_name(name.strip()))

    def names(self) -> list[str]:
        """Every skill's name, in catalog order."""
        return [skill.name for skill in self.skills]

    def suggestions(
        self, name: str, *, limit: int = 5, among: Sequence[Skill] | None = None
    ) -> list[str]:
        """Names close to `name`: ones containing it (or contained in it), then look-alikes.

        A look-alike resembles the whole name or one of its words (`revew` finds
        `review-changes`).
        """
        pool = list(among) if among is not None else list(self.skills)
        wanted = normalize_name(name.strip())
        if not wanted:
            return []
        by_key = {skill.key: skill.name for skill in pool if skill.key != wanted}
        found = [
            by_key[key] for key in by_key if wanted in key or (len(key) >= 3 and key in wanted)
        ]
        scored = sorted(
            ((_likeness(wanted, key), key) for key in by_key if by_key[key] not in found),
            key=lambda item: (-item[0], item[1]),
        )
        found.extend(by_key[key] for score, key in scored if score >= _CUTOFF)
        return found[:limit]


_CUTOFF = 0.6
_WORD_SPLIT = re.compile(r"[-_.:/ ]+")


def _likeness(wanted: str, key: str) -> float:
    best = difflib.SequenceMatcher(None, wanted, key).ratio()
    for word in _WORD_SPLIT.split(key):
        if len(word) >= 3 and word != key:
            best = max(best, difflib.SequenceMatcher(None, wanted, word).ratio())
    return best
