"""User-defined sub-agent types: Markdown files with front matter, one type per file.

The shape other coding agents use for their agent files, so existing files work::

    ---
    name: reviewer
    description: Reviews a change for bugs and missing tests.
    tools: Read, Grep, Glob          # or a YAML list; absent: every tool of the parent
    disallowed_tools: [Bash]         # optional (disallowedTools works too)
    model: fast                      # optional: a [models.NAME] profile or a model id
    ---
    You review code. Report each problem with its file and line...

The body is the type's instructions. Files are read from `~/.config/deftly/agents/*.md`
(the user's) and `.deftly/agents/*.md` (the workspace's, which win on the same name). A
broken file is reported as a diagnostic and left out; it never stops anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from deftly.contract.records import frozen
from deftly.session.subagents import AgentProfile

MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 200
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
INHERIT_MODELS = frozenset({"inherit", "sonnet", "opus", "haiku"})
"""Model values that mean "the parent's model" (the aliases of other agents' files name
models of their own vendor, which this configuration may not reach)."""

TOOL_ALIASES = {
    "LS": "ListDirectory",
    "WebFetch": "FetchURL",
    "TodoWrite": "TodoList",
    "MultiEdit": "Edit",
    "Task": "Agent",
}
"""Other agents' names for deftly's tools, so their agent files' tool lists mean the same."""

_FENCE = re.compile(r"\r?\n")


class ProfileFileError(ValueError):
    """A profile file that cannot be used; the message says why."""


@frozen
class LoadedProfiles:
    """The profiles read from some folders, and what was wrong with the rest."""

    profiles: tuple[AgentProfile, ...]
    problems: tuple[tuple[str, str], ...]
    """(file, what is wrong) for each file left out."""


def parse_profile(text: str, source: str = "") -> AgentProfile:
    """One profile from a file's text (ProfileFileError when it cannot be used)."""
    fields, body = _split(text)
    name = _text(fields, "name", required=True)
    if not NAME_PATTERN.fullmatch(name):
        raise ProfileFileError(
            f'the name "{name}" is not usable: use letters, digits, "-", "_" or "." '
            "(at most 64 characters, starting with a letter or digit)"
        )
    description = " ".join(_text(fields, "description", required=True).split())
    tools = _names(fields.get("tools"), "tools")
    disallowed = _names(
        fields.get("disallowed_tools", fields.get("disallowedTools")), "disallowed_tools"
    )
    model = _text(fields, "model") or None
    if model is not None and model.lower() in INHERIT_MODELS:
        model = None
    return AgentProfile(
        name=name,
        description=description,
        tools=tools,
        disallowed_tools=disallowed or (),
        model=model,
        instructions=body.strip(),
        source=source or "file",
    )


def render_profile(profile: AgentProfile) -> str:
    """A profile as a file (`parse_profile` reads it back to the same profile)."""
    fields: dict[str, Any] = {"name": profile.name, "description": profile.description}
    if profile.tools is not None:
        fields["tools"] = list(profile.tools)
    if profile.disallowed_tools:
        fields["disallowed_tools"] = list(profile.disallowed_tools)
    if profile.model is not None:
        fields["model"] = profile.model
    import yaml  # here and in _split: only when an agent file is written or read

    head = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{head}---\n{profile.instructions}\n"


def load_profiles(folders: Iterable[Path]) -> LoadedProfiles:
    """Every `*.md` profile of `folders` in order (a later folder's profile replaces an
    earlier one of the same name); files that cannot be used become problems."""
    found: dict[str, AgentProfile] = {}
    problems: list[tuple[str, str]] = []
    for folder in folders:
        for path in _files(folder, problems):
            try:
                profile = parse_profile(_read(path), str(path))
            except (OSError, UnicodeDecodeError, ProfileFileError) as exc:
                problems.append((str(path), _why(exc)))
                continue
            found[profile.name] = profile
    return LoadedProfiles(tuple(found.values()), tuple(problems))


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ProfileFileError(f"the file is larger than {MAX_FILE_BYTES // 1024} KB")
    return data.decode("utf-8")


def _files(folder: Path, problems: list[tuple[str, str]]) -> list[Path]:
    try:
        if not folder.is_dir():
            return []
        files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except OSError as exc:
        problems.append((str(folder), f"the folder cannot be read ({exc.strerror or exc})"))
        return []
    if len(files) > MAX_FILES:
        problems.append((str(folder), f"only the first {MAX_FILES} files are read"))
    return files[:MAX_FILES]


def _why(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "the file is not UTF-8 text"
    if isinstance(exc, OSError):
        return f"the file cannot be read ({exc.strerror or exc})"
    return str(exc)


def _split(text: str) -> tuple[dict[str, Any], str]:
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    lines = _FENCE.split(text.lstrip("\ufeff"))
    if not lines or lines[0].strip() != "---":
        raise ProfileFileError(
            'the file has no front matter: start it with a "---" line, the fields '
            '(name, description, ...), and another "---" line'
        )
    closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if closing is None:
        raise ProfileFileError('the front matter has no closing "---" line')
    try:
        data = yaml.load("\n".join(lines[1:closing]), Loader=loader)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise ProfileFileError(f"the front matter is not valid YAML ({problem})") from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise ProfileFileError(f"the front matter cannot be read ({exc})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileFileError("the front matter must be a mapping of fields (name: ...)")
    return {str(k): v for k, v in data.items()}, "\n".join(lines[closing + 1 :])


def _text(fields: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = fields.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ProfileFileError(f'the front matter has no "{key}"')
        return ""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ProfileFileError(f'"{key}" must be text')
    return str(value).strip()


def _names(value: Any, key: str) -> tuple[str, ...] | None:
    """A tool list: "Read, Grep" or ["Read", "Grep"]; None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        items: list[Any] = [part for part in value.split(",") if part.strip()]
    elif isinstance(value, list):
        items = value
    else:
        raise ProfileFileError(f'"{key}" must be a list of tool names or a comma-separated text')
    names: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ProfileFileError(f'"{key}" must hold tool names (text), not {item!r}')
        name = item.strip()
        name = TOOL_ALIASES.get(name, name)
        if name not in names:
            names.append(name)
    return tuple(names)
