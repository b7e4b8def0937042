"""The whole configuration: one typed section per concern."""

from __future__ import annotations

from pydantic import Field

from deftly.config.base import Section
from deftly.config.files import FilesConfig
from deftly.config.hooks import HooksConfig
from deftly.config.mcp import McpConfig
from deftly.config.output import OutputConfig
from deftly.config.permissions import PermissionsConfig
from deftly.config.session import SessionConfig
from deftly.config.shell import ShellConfig
from deftly.config.skills import SkillsConfig
from deftly.config.tools import ToolsConfig


class DeftlyConfig(Section):
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
