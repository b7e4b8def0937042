"""`ToolInfo`: what a client (a model, `deftly tools`, `deftly serve`) is told about a tool."""

from __future__ import annotations

from typing import Any

from deftly.contract.records import frozen
from deftly.contract.schema import JsonSchema
from deftly.registry.registry import Disclosure, Source


@frozen
class ToolInfo:
    """What a client is told about one tool."""

    name: str
    description: str
    parameters: JsonSchema
    source: Source
    disclosure: Disclosure
    title: str = ""
    output_schema: JsonSchema | None = None

    def to_json(self) -> dict[str, Any]:
        """The tool as JSON for `deftly tools --json`: name, description, schema, source and
        disclosure."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "source": self.source,
            "disclosure": self.disclosure,
            "title": self.title,
            "output_schema": self.output_schema,
        }
