"""Reading configuration: the user file, then the project file (the later one wins).

`~/.config/deftly/config.toml` (or `$XDG_CONFIG_HOME/deftly/config.toml`), then
`<workspace>/.deftly/config.toml`. Tables merge key by key; lists of rules (`allow`, `ask`,
`deny`, hooks) are concatenated, user first; other lists are replaced. Every value
remembers the file and line it came from, so an error can point at it.

A file outside the user's config directory belongs to the workspace. Unless the workspace
is trusted, its settings that run programs or widen permissions are withheld (see
`deftly.config.untrusted`) and listed in `LoadedConfig.withheld`.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from deftly.config.base import Section
from deftly.config.model import DeftlyConfig
from deftly.config.untrusted import Withheld, restrict
from deftly.contract.errors import ConfigError

CONCATENATED_LISTS = frozenset(
    {
        ("permissions", "allow"),
        ("permissions", "ask"),
        ("permissions", "deny"),
        ("permissions", "additional_directories"),
    }
)


def user_config_dir() -> Path:
    """The user's deftly config directory: `$XDG_CONFIG_HOME/deftly`, else `~/.config/deftly`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "deftly"


def config_paths(workspace: Path) -> list[Path]:
    """The config files of `workspace`, in the order they apply: the user's, then the workspace's
    own (the later one wins)."""
    return [user_config_dir() / "config.toml", workspace / ".deftly" / "config.toml"]


def workspace_mcp_file(workspace: Path) -> Path:
    """The workspace's own mcp.json (its servers start only in a trusted workspace)."""
    return workspace / ".deftly" / "mcp.json"


def is_user_file(path: Path) -> bool:
    """Whether `path` lies in the user's own config directory (always trusted)."""
    try:
        path.resolve().relative_to(user_config_dir().resolve())
    except ValueError:
        return False
    return True


@dataclass
class LoadedConfig:
    """The merged configuration with where it came from: the files read (to point an error at a file
    and line) and what an untrusted workspace's file was not allowed to set."""

    config: DeftlyConfig
    files: list[Path] = field(default_factory=list)
    _texts: dict[Path, str] = field(default_factory=dict)
    withheld: list[Withheld] = field(default_factory=list)
    """Settings of an untrusted workspace's file that were not applied."""

    def origin(self, value: str) -> str:
        """ "file:line" of the first place `value` appears as a string, or the file list."""
        spellings = {
            f'"{value}"',
            f"'{value}'",
            json.dumps(value),
            json.dumps(value, ensure_ascii=False),
        }
        for path in reversed(self.files):
            for number, line in enumerate(self._texts.get(path, "").splitlines(), 1):
                if any(spelling in line for spelling in spellings):
                    return f"{path}:{number}"
        return ", ".join(str(p) for p in self.files) or "the configuration passed in"


def _merge(base: dict[str, Any], extra: Mapping[str, Any], trail: tuple[str, ...] = ()) -> None:
    for key, value in extra.items():
        here = (*trail, key)
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value, here)
        elif (
            here in CONCATENATED_LISTS
            and isinstance(value, list)
            and isinstance(base.get(key), list)
        ) or (
            trail[:1] == ("hooks",) and isinstance(value, list) and isinstance(base.get(key), list)
        ):
            base[key] = [*base[key], *value]
        else:
            base[key] = value


def _describe_error(
    error: ValidationError, model: type[BaseModel], where: str, prefix: str | None = None
) -> str:
    lines = []
    for item in error.errors(include_url=False):
        loc = ".".join(str(p) for p in ((prefix,) if prefix else ()) + tuple(item["loc"]))
        if item["type"] == "extra_forbidden":
            known = _known_keys(model, item["loc"][:-1])
            close = difflib.get_close_matches(str(item["loc"][-1]), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            lines.append(f"  {loc}: unknown setting{hint}")
        else:
            lines.append(f"  {loc}: {item['msg']}")
    return f"The configuration in {where} is not valid:\n" + "\n".join(lines)


def _known_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if args else None
            continue
        fields = getattr(current, "model_fields", None)
        by_key = {(info.alias or name): info for name, info in (fields or {}).items()}
        by_key.update(fields or {})
        if part not in by_key:
            return []
        current = by_key[part].annotation
    fields = getattr(current, "model_fields", None)
    return [info.alias or name for name, info in fields.items()] if fields else []


FeatureTables = Mapping[str, type[Section]]
"""Config tables features bring: table name -> the feature's model of it."""


def parse_config(
    data: Mapping[str, Any], where: str = "the configuration", tables: FeatureTables | None = None
) -> DeftlyConfig:
    """Validate one config table (as parsed from TOML); raise ConfigError naming `where` and each
    bad key, with a suggested spelling for an unknown one. A table named in `tables` (a
    feature's) is validated against its model and read back with `config.section(model)`."""
    rest = dict(data)
    sections: dict[type[Section], Section] = {}
    for name, model in (tables or {}).items():
        if name in DeftlyConfig.model_fields:
            raise ConfigError(f"A feature claims the config table [{name}], which deftly owns.")
        if name not in rest:
            continue
        try:
            sections[model] = model.model_validate(rest.pop(name))
        except ValidationError as exc:
            raise ConfigError(_describe_error(exc, model, where, prefix=name)) from None
    try:
        config = DeftlyConfig.model_validate(rest)
    except ValidationError as exc:
        raise ConfigError(_describe_error(exc, DeftlyConfig, where)) from None
    return config.with_sections(sections) if sections else config


def load_config(
    workspace: Path,
    paths: list[Path] | None = None,
    *,
    trusted: bool = True,
    tables: FeatureTables | None = None,
) -> LoadedConfig:
    """Read and merge the config files that exist; raise ConfigError with the file named.

    With `trusted=False`, files outside the user's config directory contribute only the
    settings that cannot run a program or widen permissions; the rest is `withheld`. A
    feature's table (`tables`) in such a file is withheld whole: deftly cannot know which
    of a feature's settings are harmless.
    """
    merged: dict[str, Any] = {}
    whole: dict[str, Any] = {}  # as if trusted: withheld settings are still checked
    used: list[Path] = []
    texts: dict[Path, str] = {}
    withheld: list[Withheld] = []
    for path in paths if paths is not None else config_paths(workspace):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ConfigError(
                f"Cannot read the configuration file {path}: {exc.strerror}"
            ) from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
        _merge(whole, copy.deepcopy(data))
        if not trusted and not is_user_file(path):
            for name in tables or {}:
                if name in data:
                    del data[name]
                    withheld.append(Withheld(path, f"[{name}]"))
            data, held = restrict(data, merged, path)
            withheld.extend(held)
        _merge(merged, data)
        used.append(path)
        texts[path] = text
    where = ", ".join(str(p) for p in used) or "the configuration"
    if withheld:
        parse_config(whole, where, tables)
    return LoadedConfig(parse_config(merged, where, tables), used, texts, withheld)
