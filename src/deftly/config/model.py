"""The whole configuration: one typed section per concern."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import Field, PrivateAttr

from deftly.config.agents import AgentsConfig
from deftly.config.base import Section
from deftly.config.files import FilesConfig
from deftly.config.hooks import HooksConfig
from deftly.config.mcp import McpConfig
from deftly.config.models import LoopConfig, ModelSettings
from deftly.config.output import OutputConfig
from deftly.config.permissions import PermissionsConfig
from deftly.config.session import SessionConfig
from deftly.config.shell import ShellConfig
from deftly.config.skills import SkillsConfig
from deftly.config.tools import ToolsConfig

S = TypeVar("S", bound=Section)


class DeftlyConfig(Section):
    """The whole configuration: deftly's own sections as fields, and the tables features
    bring (`Feature.config_tables`), validated by the loader against the feature's model
    and read with `section(Model)`."""

    """The whole configuration: one typed section per TOML table (`[tools]`, `[permissions]`,
    `[shell]`, ...), each with its defaults."""

    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    files: FilesConfig = Field(default_factory=FilesConfig)
    shell: ShellConfig = Field(default_factory=ShellConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    session: SessionConfig = Field(default_factory=SessionConfig)
    model: ModelSettings = Field(default_factory=ModelSettings)
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    loop: LoopConfig = Field(default_factory=LoopConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    _feature_sections: dict[type[Section], Section] = PrivateAttr(default_factory=dict)

    def section(self, model: type[S]) -> S:
        """The section whose model is `model`: one of deftly's own, or a feature's table
        (the model's defaults when the configuration has none)."""
        for name in type(self).model_fields:
            value = getattr(self, name)
            if type(value) is model:
                return value
        found = self._feature_sections.get(model)
        return found if isinstance(found, model) else model()

    def with_sections(self, sections: Mapping[type[Section], Section]) -> DeftlyConfig:
        """A copy that also holds these feature sections (by their model)."""
        copy = self.model_copy()
        copy._feature_sections = {**self._feature_sections, **sections}
        return copy
