"""Looking skills up by name, and suggesting names for a miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from deftly.features.skills import Skill, SkillCatalog

NAMES = ["review-changes", "Commit", "write-skill", "deploy-staging", "deploy-prod", "zeta"]


@pytest.fixture
def catalog() -> SkillCatalog:
    return SkillCatalog(
        [Skill(n, "d", Path(f"/s/{n}/SKILL.md"), Path(f"/s/{n}"), "user", "body") for n in NAMES]
    )


def test_lookup_ignores_case_and_surrounding_space(catalog: SkillCatalog) -> None:
    found = catalog.get("  COMMIT ")
    assert found is not None and found.name == "Commit"
    assert "commit" in catalog and "nope" not in catalog and 3 not in catalog
    assert catalog.get("nope") is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("revew", ["review-changes"]),  # a look-alike of one word of the name
        ("review", ["review-changes"]),  # contained in a name
        ("comit", ["Commit"]),
        ("deploy", ["deploy-staging", "deploy-prod"]),
        ("deploy-stagin", ["deploy-staging", "deploy-prod"]),
        ("zzzzzz", []),
        ("", []),
        ("commit", []),  # an exact name is not its own suggestion
    ],
)
def test_suggestions(catalog: SkillCatalog, query: str, expected: list[str]) -> None:
    assert catalog.suggestions(query) == expected


def test_suggestions_stay_in_the_pool(catalog: SkillCatalog) -> None:
    pool = [s for s in catalog.skills if s.name != "review-changes"]
    assert catalog.suggestions("review", among=pool) == []
