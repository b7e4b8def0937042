"""`[shell]` configuration: defaults, limits, errors that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from deftly.config.loader import load_config, parse_config
from deftly.config.shell import ShellConfig
from deftly.contract.errors import ConfigError


def test_defaults() -> None:
    cfg = ShellConfig()
    assert (cfg.timeout, cfg.max_timeout) == (60, 300)
    assert (cfg.background_timeout, cfg.max_background_timeout) == (600, 86_400)
    assert cfg.on_timeout == "background" and cfg.sandbox == "auto"
    assert cfg.output_limit_bytes == 16 * 1024 * 1024


def test_a_default_above_its_maximum_is_an_error() -> None:
    with pytest.raises(ConfigError, match="must not exceed max_timeout"):
        parse_config({"shell": {"timeout": 500}})
    with pytest.raises(ConfigError, match="must not exceed max_background_timeout"):
        parse_config({"shell": {"background_timeout": 10, "max_background_timeout": 5}})


def test_unknown_and_invalid_settings_are_named() -> None:
    with pytest.raises(ConfigError, match="sandbx"):
        parse_config({"shell": {"sandbx": "bwrap"}})
    with pytest.raises(ConfigError, match="sandbox"):
        parse_config({"shell": {"sandbox": "firejail"}})
    with pytest.raises(ConfigError, match="on_timeout"):
        parse_config({"shell": {"on_timeout": "ignore"}})


def test_read_from_the_project_file(workspace: Path) -> None:
    (workspace / ".deftly").mkdir()
    (workspace / ".deftly" / "config.toml").write_text(
        '[shell]\ntimeout = 5\nsandbox = "bwrap"\nnetwork = false\n[shell.env]\nCI = "1"\n'
    )
    cfg = load_config(workspace).config.shell
    assert cfg.timeout == 5 and cfg.sandbox == "bwrap" and not cfg.network
    assert cfg.env == {"CI": "1"}
