"""Shared base for configuration sections: unknown keys are errors, not silently ignored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """Base of every config section: unknown keys are errors (with a suggested spelling), values are
    frozen once loaded, and a key may be given by its alias."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
