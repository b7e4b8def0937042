"""The loaded-skill block and the model listing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from deftly.features.skills import (
    LISTING_HEADER,
    Skill,
    activation_text,
    cut,
    model_listing,
    skill_block,
)


def make(name: str = "demo", **fields: object) -> Skill:
    base = Skill(
        name=name,
        description=f"{name} does things",
        path=Path(f"/skills/{name}/SKILL.md"),
        dir=Path(f"/skills/{name}"),
        source="user",
        content="Body for $0.",
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def test_block_attributes_in_order_and_escaped() -> None:
    skill = make("commit", content="Commit it.")
    block = skill_block(skill, trigger="model-tool", args="src/app.ts")
    assert block == (
        '<skill-loaded name="commit" trigger="model-tool" source="user" dir="/skills/commit" '
        'args="src/app.ts">\nCommit it.\n\nARGUMENTS: src/app.ts\n</skill-loaded>'
    )
    odd = make('a&"b', dir=Path("/x<y>"), content="c")
    tag = skill_block(odd, trigger="user-slash", args='say "hi"\nnow').splitlines()[0]
    assert tag == (
        '<skill-loaded name="a&amp;&quot;b" trigger="user-slash" source="user" '
        'dir="/x&lt;y&gt;" args="say &quot;hi&quot;&#10;now">'
    )


def test_empty_args_are_still_an_attribute() -> None:
    block = skill_block(make(content="x"), trigger="nested-skill")
    assert block.startswith('<skill-loaded name="demo" trigger="nested-skill" ')
    assert 'args="">' in block.splitlines()[0]


def test_activation_text_says_who_loaded_it() -> None:
    user = activation_text(make(), trigger="user-slash", args="a")
    model = activation_text(make(), trigger="model-tool", args="a")
    assert user.startswith('The user loaded the skill "demo".')
    assert model.startswith("The Skill tool loaded instructions")
    for text in (user, model):
        intro, block = text.split("\n\n", 1)
        assert "\n" not in intro and block.startswith("<skill-loaded ")
        assert "Body for a." in block


def test_listing_cuts_descriptions() -> None:
    # reference case 13
    listing = model_listing([make(description="a" * 300)], with_paths=False)
    assert listing.splitlines()[0] == LISTING_HEADER
    assert "- demo: " + "a" * 247 + "..." in listing.splitlines()
    emoji = model_listing([make(description="a" * 248 + "😀" + "b" * 10)], with_paths=False)
    assert "- demo: " + "a" * 247 + "..." in emoji.splitlines()


def test_cut_never_splits_a_character_from_its_marks() -> None:
    text = "e\u0301" * 10  # e + combining acute, ten times
    short = cut(text, 8)
    assert short.endswith("...") and not short[:-3].endswith("e")
    assert short[:-3] == "e\u0301" * 2
    assert cut("  many   spaces\nand lines ", 100) == "many spaces and lines"


def test_listing_leaves_out_what_the_model_may_not_load() -> None:
    skills = [
        make("visible", when_to_use="when asked\n to demo"),
        make("user-only", disable_model_invocation=True),
        make("a-flow", type="flow"),
        make("a-reference", type="reference"),
        make("parent.child", is_sub_skill=True),
    ]
    listing = model_listing(skills)
    assert listing.splitlines() == [
        LISTING_HEADER,
        "",
        "### User",
        "- visible: visible does things",
        "  When to use: when asked to demo",
        "  Path: /skills/visible/SKILL.md",
    ]
    assert model_listing(skills[1:]) == ""
    assert model_listing([]) == ""


def test_listing_groups_by_source_in_precedence_order() -> None:
    skills = [
        make("b", source="builtin"),
        make("p", source="project"),
        make("k", source="package"),
        make("e", source="extra"),
        make("u", source="user"),
    ]
    headings = [line for line in model_listing(skills).splitlines() if line.startswith("###")]
    assert headings == ["### Project", "### User", "### Extra", "### Packages", "### Built-in"]


def test_listing_budget_names_the_skills_it_cannot_describe() -> None:
    skills = [make(f"s{i:02d}", description="d" * 100) for i in range(20)]
    listing = model_listing(skills, max_chars=1_000, with_paths=False)
    assert len(listing) < 1_300
    last = listing.splitlines()[-1]
    assert last.startswith("Also available (no room to describe them): ")
    described = [line for line in listing.splitlines() if line.startswith("- ")]
    assert len(described) + len(last.split(": ", 1)[1].split(", ")) == 20
