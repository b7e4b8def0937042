"""The skill service: one workspace's skills, found once, loaded for a person or the model.

    service = SkillService(Path("repo"))
    service.skills()                      # usable skills, sorted by name
    service.skipped()                     # what was not usable, with reasons
    print(service.render("commit", "src/app.py"))

The runtime builds one per workspace (`Runtime.skills`); the Skill tool, `deftly skills`
and the MCP server all go through it. Roots are resolved at once (cheap: a few `stat`s);
the walk happens on first use and is kept until `reload()`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from deftly.config.skills import SkillsConfig
from deftly.contract.errors import ToolError
from deftly.contract.result import ToolResult
from deftly.contract.tool import RuleMatch
from deftly.features.skills.allowed import ToolLimit, allowed_tools
from deftly.features.skills.catalog import SkillCatalog
from deftly.features.skills.discovery import discover
from deftly.features.skills.model import Skill, SkippedSkill, Trigger
from deftly.features.skills.nesting import MAX_SKILL_DEPTH, SkillNesting
from deftly.features.skills.render import (
    activation_text,
    listing_candidates,
    model_listing,
    skill_block,
)
from deftly.features.skills.roots import SkillRoot, resolve_roots

RootsListener = Callable[[Sequence[Path]], None]


class SkillError(ToolError):
    """A skill could not be found or loaded; the message says what to do instead.

    `code` is one of `skill.not_found`, `skill.not_activatable`, `skill.bad_arguments`.
    """

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class SkillService:
    """The skills of one workspace."""

    def __init__(
        self,
        workspace: str | Path,
        config: SkillsConfig | None = None,
        *,
        home: str | Path | None = None,
        session_id: str = "",
        packages: bool = True,
        max_depth: int = MAX_SKILL_DEPTH,
        on_roots: RootsListener | None = None,
    ) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.config = config or SkillsConfig()
        self.home = Path(home).expanduser() if home is not None else Path.home()
        self.session_id = session_id
        self.packages = packages and self.config.packages
        self.nesting = SkillNesting(max_depth)
        self._on_roots = on_roots
        self._lock = threading.RLock()
        self._catalog: SkillCatalog | None = None
        self.roots: list[SkillRoot] = []
        self._root_problems: list[SkippedSkill] = []
        self.limit: ToolLimit | None = None
        """The running skill's `allowed-tools` (see `deftly.features.skills.allowed`)."""
        self._resolve_roots()

    @property
    def max_depth(self) -> int:
        """How deeply model skill loads may nest (see `SkillNesting`)."""
        return self.nesting.max_depth

    # -- finding -------------------------------------------------------------------------

    def _resolve_roots(self) -> None:
        roots, problems = resolve_roots(
            self.workspace,
            home=self.home,
            extra_dirs=self.config.extra_dirs,
            packages=self.packages,
            builtin=self.config.builtin,
        )
        self.roots, self._root_problems = roots, problems
        if self._on_roots is not None:
            self._on_roots([root.path for root in roots])

    @property
    def catalog(self) -> SkillCatalog:
        """The current catalog; the first access walks the roots."""
        with self._lock:
            if self._catalog is None:
                found = discover(
                    self.roots,
                    max_bytes=self.config.max_file_kb * 1024,
                    disabled=self.config.disabled,
                )
                self._catalog = SkillCatalog.from_discovery(found, self._root_problems)
            return self._catalog

    def reload(self) -> SkillCatalog:
        """Look for roots and skills again (after skills were added, edited or removed)."""
        with self._lock:
            self._resolve_roots()
            self._catalog = None
            return self.catalog

    def skills(self) -> list[Skill]:
        """Every skill found, in precedence order."""
        return list(self.catalog.skills)

    def skipped(self) -> list[SkippedSkill]:
        """What did not become a skill, and why."""
        return list(self.catalog.skipped)

    def get(self, name: str) -> Skill | None:
        """The skill called `name`, in any case, or None (see `require` for an error naming close
        matches)."""
        return self.catalog.get(name)

    def require(self, name: str) -> Skill:
        """The skill called `name` (any case), or a `SkillError` naming close matches."""
        skill = self.catalog.get(name)
        if skill is None:
            raise SkillError("skill.not_found", self._not_found(name, self.skills()))
        return skill

    def _not_found(self, name: str, pool: Sequence[Skill]) -> str:
        """Say the name is unknown, and offer close names, else the names there are."""
        text = f'There is no skill named "{name}".'
        close = self.catalog.suggestions(name, among=pool)
        if close:
            return text + " Did you mean " + " or ".join(f'"{c}"' for c in close) + "?"
        if not pool:
            return text + " No skills are available."
        shown = [s.name for s in pool[:20]]
        more = f" (and {len(pool) - 20} more)" if len(pool) > 20 else ""
        return text + " Available skills: " + ", ".join(shown) + more + "."

    # -- showing -------------------------------------------------------------------------

    def model_listing(self) -> str:
        """What the model is told about the skills it may load ("" when there are none)."""
        return model_listing(
            self.skills(),
            description_chars=self.config.description_chars,
            max_chars=self.config.listing_chars,
        )

    def render(self, name: str, args: str = "", *, trigger: Trigger = "user-slash") -> str:
        """The `<skill-loaded>` block for `name` with `args`, without loading anything."""
        skill = self.require(name)
        return skill_block(skill, trigger=trigger, args=args, session_id=self.session_id)

    # -- loading -------------------------------------------------------------------------

    def activate(self, name: str, args: str = "") -> str:
        """A person loads a skill (a slash command, an MCP prompt): the message to add.

        Starts a new user turn for nesting purposes. Flow skills may be started this way;
        reference skills may not.
        """
        skill = self.require(name)
        if not skill.user_activatable:
            raise SkillError(
                "skill.not_activatable",
                f'Skill "{skill.name}" is a {skill.type} skill: it is listed for reading and '
                f"cannot be started. Open {skill.path} to read it.",
            )
        self.nesting.reset()
        text = activation_text(skill, trigger="user-slash", args=args, session_id=self.session_id)
        limit = self._start_skill(skill)
        return text + ("\n\n" + limit.announcement() if limit else "")

    def load_for_model(self, name: str, args: str = "") -> ToolResult:
        """The Skill tool's work: look the skill up, check it may be loaded, count nesting.

        The result's text says the skill was loaded and carries the block (an MCP client
        only sees the text); `delivery` carries the message an agent loop adds to the
        conversation.
        """
        wanted = name.strip()
        depth = self.nesting.depth
        if not self.nesting.allowed(depth):
            self.nesting.record(depth)
            return ToolResult.error(
                f'Skill "{wanted}" was not loaded: it would be nested {depth + 1} levels deep '
                f"(skills loaded one right after another, each while following the last), and "
                f"the limit is {self.nesting.max_depth}. Carry out the instructions already "
                "loaded with your other tools first; load more skills after that."
            )
        skill = self.catalog.get(wanted)
        if skill is None:
            pool = self.invocable()
            next_step = (
                " Call Skill again with a name from the skill list."
                if pool
                else " Do the task without a skill."
            )
            return ToolResult.error(self._not_found(wanted, pool) + next_step)
        if skill.disable_model_invocation and skill.is_inline:
            return ToolResult.error(
                f'Skill "{skill.name}" can only be started by the user (it sets '
                "disable-model-invocation), so the Skill tool will not load it. If it fits the "
                "task, suggest that the user starts it."
            )
        if not skill.is_inline:
            detail = (
                "only the user can start it"
                if skill.type == "flow"
                else f"it is listed for reading only; Read {skill.path} if you need it"
            )
            return ToolResult.error(
                f'Skill "{skill.name}" is a {skill.type} skill, which the Skill tool does not '
                f"load: {detail}."
            )
        trigger: Trigger = "model-tool" if depth == 0 else "nested-skill"
        self.nesting.record(depth)
        block = skill_block(skill, trigger=trigger, args=args, session_id=self.session_id)
        message = activation_text(skill, trigger=trigger, args=args, session_id=self.session_id)
        limit = self._start_skill(skill)
        announced = "\n\n" + limit.announcement() if limit else ""
        return ToolResult.ok(
            f'Skill "{skill.name}" loaded. Follow its instructions:\n\n{block}{announced}',
            delivery=message + announced,
        )

    # -- allowed-tools -------------------------------------------------------------------

    def _start_skill(self, skill: Skill) -> ToolLimit | None:
        """The loaded skill's tool limit replaces the last one (none lifts it)."""
        entries = allowed_tools(skill.metadata)
        self.limit = ToolLimit(skill.name, entries) if entries is not None else None
        return self.limit

    def end_skill(self) -> None:
        """The running skill is done (a host's turn ended): its tool limit is lifted."""
        self.limit = None

    def pattern_refusal_for(
        self, tool: str, matches: Callable[[str], bool | RuleMatch] | None
    ) -> str | None:
        """Why the running skill's `Tool(pattern)` entries refuse this resolved call (None:
        allowed); `matches` is the call's own rule matcher."""
        limit = self.limit
        patterns = limit.patterns_for(tool) if limit is not None else None
        if limit is None or patterns is None:
            return None
        if matches is not None:
            for pattern in patterns:
                found = matches(pattern)
                if found is True or found is RuleMatch.FULL:
                    return None
        return limit.pattern_refusal(tool)

    def refusal_for(self, tool: str) -> str | None:
        """Why the running skill's allowed-tools refuse a call to `tool` (None: allowed)."""
        limit = self.limit
        return None if limit is None or limit.allows(tool) else limit.refusal(tool)

    def invocable(self) -> list[Skill]:
        """Skills the model may load by name (the listing leaves out sub-skills)."""
        return [s for s in self.skills() if s.model_invocable]

    def listed(self) -> list[Skill]:
        """The skills the model is told about and may load by itself."""
        return listing_candidates(self.skills())
