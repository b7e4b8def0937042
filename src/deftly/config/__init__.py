"""TOML configuration → typed models."""

from deftly.config.loader import (
    LoadedConfig,
    config_paths,
    load_config,
    parse_config,
    user_config_dir,
)
from deftly.config.model import DeftlyConfig

__all__ = [
    "DeftlyConfig",
    "LoadedConfig",
    "config_paths",
    "load_config",
    "parse_config",
    "user_config_dir",
]
