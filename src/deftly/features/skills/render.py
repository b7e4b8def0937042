"""How a loaded skill and the list of skills are shown to a model.

A loaded skill is one `<skill-loaded ...>` element whose attributes say which skill, what
loaded it (`user-slash`: a person; `model-tool`: the model through the Skill tool;
`nested-skill`: the model again, while following another skill), where it comes from,
its folder and its arguments. The body is the expanded skill text.

The model listing names the skills the model may load, one line each, headed by a line
saying it replaces any earlier list (a conversation may carry an out-of-date one).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from deftly.features.skills.expand import expand_body
from deftly.features.skills.model import SOURCE_ORDER, SOURCE_TITLES, Skill, Trigger

BLOCK_TAG = "skill-loaded"
LISTING_HEADER = (
    "This list of skills replaces any list of skills shown earlier. Skills available now "
    "(load one with the Skill tool):"
)
DEFAULT_DESCRIPTION_CHARS = 250
USER_INTRO = 'The user loaded the skill "{name}". Follow the instructions of the loaded skill.'
MODEL_INTRO = "The Skill tool loaded instructions for this request. Follow them."


def escape_attr(value: str) -> str:
    """Escape a value for an XML attribute (and keep the start tag on one line)."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\r", "&#13;")
        .replace("\n", "&#10;")
    )


def skill_body(skill: Skill, args: str = "", *, session_id: str = "") -> str:
    """The skill's text with its placeholders filled."""
    return expand_body(
        skill.content,
        args,
        argument_names=skill.arguments,
        skill_dir=str(skill.dir),
        session_id=session_id,
    )


def skill_block(skill: Skill, *, trigger: Trigger, args: str = "", session_id: str = "") -> str:
    """The `<skill-loaded ...>` element for one load of `skill`."""
    attributes = (
        ("name", skill.name),
        ("trigger", trigger),
        ("source", skill.source),
        ("dir", str(skill.dir)),
        ("args", args.strip()),
    )
    start = " ".join(f'{key}="{escape_attr(value)}"' for key, value in attributes)
    body = skill_body(skill, args, session_id=session_id)
    return f"<{BLOCK_TAG} {start}>\n{body}\n</{BLOCK_TAG}>"


def activation_text(skill: Skill, *, trigger: Trigger, args: str = "", session_id: str = "") -> str:
    """The message added to a conversation when a skill is loaded: one line, then the block."""
    intro = MODEL_INTRO if trigger != "user-slash" else USER_INTRO.format(name=skill.name)
    block = skill_block(skill, trigger=trigger, args=args, session_id=session_id)
    return f"{intro}\n\n{block}"


def cut(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters; a cut one ends with `...`.

    Never splits a character from the accents or joiners that follow it.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    end = max(limit - 3, 0)
    while 0 < end < len(flat) and _attaches(flat[end]):
        end -= 1
    return flat[:end].rstrip() + "..."


def _attaches(ch: str) -> bool:
    """Does `ch` belong to the character before it (a combining mark, a joiner, ...)?"""
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or ch in ("\u200d", "\ufe0e", "\ufe0f")
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
    )


def listing_candidates(skills: Iterable[Skill]) -> list[Skill]:
    """Skills the model may load by itself: inline, not user-only, not a sub-skill."""
    return [s for s in skills if s.model_invocable and not s.is_sub_skill]


def model_listing(
    skills: Sequence[Skill],
    *,
    description_chars: int = DEFAULT_DESCRIPTION_CHARS,
    max_chars: int | None = None,
    with_paths: bool = True,
) -> str:
    """The listing for a model; empty when it may load no skill at all.

    Grouped by source (project, user, extra, packages, built-in). With `max_chars`, skills
    that no longer fit are named on one last line instead of described.
    """
    candidates = listing_candidates(skills)
    if not candidates:
        return ""
    lines = [LISTING_HEADER]
    used = len(LISTING_HEADER)
    left_out: list[str] = []
    for source in SOURCE_ORDER:
        group = [s for s in candidates if s.source == source]
        if not group:
            continue
        heading_added = False
        for skill in group:
            entry = _entry(skill, description_chars, with_paths)
            size = sum(len(line) + 1 for line in entry)
            if max_chars is not None and used + size > max_chars:
                left_out.append(skill.name)
                continue
            if not heading_added:
                lines.extend(("", f"### {SOURCE_TITLES[source]}"))
                heading_added = True
            lines.extend(entry)
            used += size
    if left_out:
        lines.extend(("", "Also available (no room to describe them): " + ", ".join(left_out)))
    return "\n".join(lines)


def _entry(skill: Skill, description_chars: int, with_paths: bool) -> list[str]:
    entry = [f"- {skill.name}: {cut(skill.description, description_chars)}"]
    if skill.when_to_use:
        entry.append(f"  When to use: {cut(skill.when_to_use, description_chars)}")
    if with_paths:
        entry.append(f"  Path: {skill.path}")
    return entry
