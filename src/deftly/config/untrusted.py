"""What an untrusted workspace's config file may set.

A cloned repository must not run code or loosen the leash by shipping `.deftly/config.toml`.
Every known setting is classified here; anything not listed as safe needs trust, so a
setting added later is withheld until someone decides otherwise (fail closed).

- safe: limits, timeouts, display and listing choices; `ask` and `deny` rules (they only
  restrict); `[tools] disabled` (added to the user's list, never replacing it).
- safe only when it narrows: `[permissions] mode` no looser than the mode so far,
  `[permissions] harmless_commands` leaving entries out, never adding one,
  `[shell] sandbox` (a mode or a `[shell.sandbox]` table) no weaker in any respect,
  `[shell] network = false`, `[mcp] trust_read_only_hints = false`, `[tools] enabled`
  when no trusted file has an allow list of its own, `[agents] max_depth` and
  `max_concurrency` no higher than before.
- needs trust: everything else, in particular what runs a program (`[hooks]`, `[tools]
  load`, `[mcp] servers` / `config_files`, `[shell] shell` / `bwrap` / `env`, `[files]
  rg_path`) or widens access (`allow` rules, `additional_directories`, `[shell] writable`,
  `[skills] extra_dirs`, whose folders become readable).

Unknown keys are passed through untouched, so validation still names a misspelt setting.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from deftly.config.files import FilesConfig
from deftly.config.model import DeftlyConfig
from deftly.contract.records import frozen

WITHHOLD = object()
"""A rule's answer: do not apply the workspace's value."""

Rule = Callable[[Any, Any], Any]
"""(the workspace's value, the value from trusted files or the default) -> the value to
apply, or WITHHOLD."""


def _always(new: Any, old: Any) -> Any:
    return new


def _not_looser(strictest_first: tuple[str, ...]) -> Rule:
    def rule(new: Any, old: Any) -> Any:
        known = new in strictest_first and old in strictest_first
        if known and strictest_first.index(new) <= strictest_first.index(old):
            return new
        return WITHHOLD

    return rule


def _only(value: Any) -> Rule:
    def rule(new: Any, old: Any) -> Any:
        return new if new is value else WITHHOLD

    return rule


def _added(new: Any, old: Any) -> Any:
    if isinstance(new, list) and isinstance(old, list):
        return [*old, *new]
    return new


def _subset(new: Any, old: Any) -> Any:
    """A list that only leaves things out (`[permissions] harmless_commands`)."""
    if isinstance(new, list) and isinstance(old, list) and set(new) <= set(old):
        return new
    return WITHHOLD


def _at_most(new: Any, old: Any) -> Any:
    """A number that only goes down (`[agents] max_depth`: less delegation, never more)."""
    numbers = isinstance(new, int | float) and isinstance(old, int | float)
    return new if numbers and not isinstance(new, bool) and new <= old else WITHHOLD


def _when_unset(new: Any, old: Any) -> Any:
    return new if not old else WITHHOLD


SANDBOX_MODES = ("bwrap", "auto", "none")  # strictest first


def _sandbox(new: Any, old: Any) -> Any:
    """`[shell] sandbox`, a mode or a `[shell.sandbox]` table: applies when it is no weaker
    in any respect (mode no looser, write only "workspace", network only false, no extra
    writable directories)."""
    old_mode = old.get("mode", "auto") if isinstance(old, Mapping) else old
    if not isinstance(new, Mapping):
        applied = _not_looser(SANDBOX_MODES)(new, old_mode)
        if applied is WITHHOLD or not isinstance(old, Mapping):
            return applied
        return {"mode": new}  # merged into the trusted table, keeping its write/network
    # a table merges into an old table; it replaces a plain mode (its own default: auto)
    mode = new.get("mode", old_mode if isinstance(old, Mapping) else "auto")
    narrower = (
        _not_looser(SANDBOX_MODES)(mode, old_mode) is not WITHHOLD
        and new.get("write", "workspace") == "workspace"
        and new.get("network", False) is False
        and not new.get("writable")
        and set(new) <= {"mode", "write", "network", "writable"}
    )
    return new if narrower else WITHHOLD


SAFE_SECTIONS = frozenset({"output", "session"})

RULES: dict[tuple[str, str], Rule] = {
    ("tools", "disabled"): _added,
    ("tools", "enabled"): _when_unset,
    ("permissions", "mode"): _not_looser(("manual", "yolo", "auto")),
    ("permissions", "ask"): _always,
    ("permissions", "deny"): _always,
    ("permissions", "harmless_commands"): _subset,
    **{("files", name): _always for name in FilesConfig.model_fields if name != "rg_path"},
    **{
        ("shell", name): _always
        for name in (
            "timeout",
            "max_timeout",
            "background_timeout",
            "max_background_timeout",
            "on_timeout",
            "max_background_tasks",
            "output_limit_bytes",
            "log_limit_bytes",
            "preview_bytes",
            "kill_grace",
        )
    },
    ("shell", "sandbox"): _sandbox,
    ("shell", "network"): _only(False),
    **{
        ("mcp", name): _always
        for name in (
            "startup_timeout",
            "call_timeout",
            "select_tools",
            "defer_mcp_tools",
            "approval_timeout",
        )
    },
    ("mcp", "trust_read_only_hints"): _only(False),
    ("agents", "timeout"): _always,
    ("agents", "max_steps"): _always,
    ("agents", "max_depth"): _at_most,
    ("agents", "max_concurrency"): _at_most,
    **{
        ("skills", name): _always
        for name in (
            "enabled",
            "disabled",
            "builtin",
            "packages",
            "description_chars",
            "listing_chars",
            "max_file_kb",
        )
    },
}


@frozen
class Withheld:
    """One setting of an untrusted workspace that was not applied."""

    file: Path
    setting: str

    def __str__(self) -> str:
        return f"{self.setting} in {self.file}"


def restrict(
    data: Mapping[str, Any], trusted: Mapping[str, Any], file: Path
) -> tuple[dict[str, Any], list[Withheld]]:
    """The part of an untrusted file's `data` that may apply on top of `trusted` (what
    the trusted files set so far), and the settings left out."""
    kept: dict[str, Any] = {}
    withheld: list[Withheld] = []
    sections = DeftlyConfig.model_fields
    for section, table in data.items():
        info = sections.get(section)
        if info is None or section in SAFE_SECTIONS or not isinstance(table, Mapping):
            kept[section] = table  # unknown or malformed: validation reports it
            continue
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        names = _field_names(model)
        before = trusted.get(section, {})
        part: dict[str, Any] = {}
        for key, value in table.items():
            name = names.get(key)
            if name is None:
                part[key] = value
                continue
            old = before.get(key, before.get(name)) if isinstance(before, Mapping) else None
            if old is None:
                old = _default(model, name)
            rule = RULES.get((section, name))
            applied = rule(value, old) if rule is not None else WITHHOLD
            if applied is WITHHOLD:
                withheld.append(Withheld(file, describe(section, key, value)))
            else:
                part[key] = applied
        if part:
            kept[section] = part
    return kept, withheld


def describe(section: str, key: str, value: Any) -> str:
    """`[permissions] mode = "auto"`, `[permissions] allow (2 entries)`, ..."""
    head = f"[{section}] {key}"
    if isinstance(value, Mapping):
        parts = [
            str(k) if isinstance(v, Mapping | list) else f"{k} = {_scalar(v)}"
            for k, v in value.items()
        ]
        return f"{head} ({', '.join(parts)})"
    if isinstance(value, list):
        return f"{head} ({len(value)} {'entry' if len(value) == 1 else 'entries'})"
    return f"{head} = {_scalar(value)}"


def _scalar(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """Key as written in a file (name or alias) -> field name."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        names[name] = name
        if info.alias:
            names[info.alias] = name
    return names


def _default(model: type[BaseModel], name: str) -> Any:
    info = model.model_fields[name]
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]
    return info.default
