"""Skills: Markdown manuals a model (or a person) loads into the conversation on demand.

A tool is a compiled hand; a skill is a `SKILL.md` with YAML front matter that teaches
the model one job, found on disk without any code change. This package finds skills
(`roots`, `discovery`), reads them (`parser`), fills in their arguments (`expand`),
shows them to a model (`render`), and offers them to the Skill tool, to `deftly skills`
and, as MCP prompts, to `deftly serve` (`service`, `prompts`).
"""

from deftly.features.skills.catalog import SkillCatalog
from deftly.features.skills.discovery import MAX_SCAN_DEPTH, Discovery, discover
from deftly.features.skills.expand import escape_tags, expand_body, join_arguments, tokenize
from deftly.features.skills.model import (
    SOURCE_ORDER,
    Skill,
    SkillSource,
    SkippedSkill,
    Trigger,
)
from deftly.features.skills.nesting import MAX_SKILL_DEPTH, SkillNesting
from deftly.features.skills.parser import SkillParseError, parse_skill_text, read_skill_file
from deftly.features.skills.prompts import (
    PromptArgument,
    RenderedPrompt,
    SkillPrompt,
    get_skill_prompt,
    list_skill_prompts,
)
from deftly.features.skills.render import (
    LISTING_HEADER,
    activation_text,
    cut,
    model_listing,
    skill_block,
    skill_body,
)
from deftly.features.skills.roots import ENTRY_POINT_GROUP, SkillRoot, project_root, resolve_roots
from deftly.features.skills.service import SkillError, SkillService
from deftly.features.skills.skill import SkillHost, SkillTool
from deftly.registry.contribution import ToolContribution

CONTRIBUTIONS: list[ToolContribution] = [
    # Only when the runtime offers skills ([skills] enabled).
    ToolContribution.of(SkillTool, when=lambda services: SkillHost in services),
]

__all__ = [
    "CONTRIBUTIONS",
    "ENTRY_POINT_GROUP",
    "LISTING_HEADER",
    "MAX_SCAN_DEPTH",
    "MAX_SKILL_DEPTH",
    "SOURCE_ORDER",
    "Discovery",
    "PromptArgument",
    "RenderedPrompt",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "SkillHost",
    "SkillNesting",
    "SkillParseError",
    "SkillPrompt",
    "SkillRoot",
    "SkillService",
    "SkillSource",
    "SkillTool",
    "SkippedSkill",
    "Trigger",
    "activation_text",
    "cut",
    "discover",
    "escape_tags",
    "expand_body",
    "get_skill_prompt",
    "join_arguments",
    "list_skill_prompts",
    "model_listing",
    "parse_skill_text",
    "project_root",
    "read_skill_file",
    "resolve_roots",
    "skill_block",
    "skill_body",
    "tokenize",
]
