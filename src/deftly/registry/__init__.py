"""From contributions (what could exist) to the registry (what does exist)."""

from deftly.registry.activation import Activation, Profile, known_names
from deftly.registry.contribution import (
    ENTRY_POINT_GROUP,
    ToolContribution,
    entry_point_contributions,
    load_tool_path,
)
from deftly.registry.host import HostHandler, HostTool
from deftly.registry.registry import Disclosure, RegisteredTool, Source, ToolRegistry
from deftly.registry.services import Services, build

__all__ = [
    "ENTRY_POINT_GROUP",
    "Activation",
    "Disclosure",
    "HostHandler",
    "HostTool",
    "Profile",
    "RegisteredTool",
    "Services",
    "Source",
    "ToolContribution",
    "ToolRegistry",
    "build",
    "entry_point_contributions",
    "known_names",
    "load_tool_path",
]
