"""Reading one skill file: size and kind checks, front matter, fields, defaults.

A `SKILL.md` must start with front matter; a loose `*.md` file at the top of a root may
have none. `name` defaults to the folder (or file) name and `description` to the first
line of the body, so skills written for other agents load unchanged. Anything wrong
raises `SkillParseError` with a reason a person can act on; discovery records it and
moves on.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deftly.contract.errors import DeftlyError
from deftly.features.skills.frontmatter import FrontMatterError, split_front_matter
from deftly.features.skills.model import SUPPORTED_TYPES, Skill, SkillSource, SkipKind

SKILL_FILE = "SKILL.md"
DEFAULT_MAX_BYTES = 256 * 1024
MAX_NAME_CHARS = 128
DESCRIPTION_FALLBACK_CHARS = 240
NO_DESCRIPTION = "No description provided."

_BAD_NAME_CHAR = re.compile(r"[\s/\\\x00-\x1f\x7f]")
_NUMERIC = re.compile(r"^\d+$")

# Spellings accepted for the fields deftly gives meaning to (first found wins).
_WHEN_TO_USE = ("when-to-use", "when_to_use", "whenToUse")
_DISABLE_MODEL = ("disable-model-invocation", "disable_model_invocation", "disableModelInvocation")
_USER_INVOCABLE = ("user-invocable", "user_invocable", "userInvocable")
_ARGUMENT_HINT = ("argument-hint", "argument_hint", "argumentHint")
_HAS_SUB_SKILL = ("has-sub-skill", "hasSubSkill", "has_sub_skill")


class SkillParseError(DeftlyError):
    """This file is not a usable skill. `kind` sorts the reasons for listings."""

    def __init__(self, reason: str, kind: SkipKind = "invalid"):
        super().__init__(reason)
        self.reason = reason
        self.kind: SkipKind = kind


def read_skill_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The file's text, if it is a regular UTF-8 file no larger than `max_bytes`.

    Opened without blocking and checked after opening, so a FIFO or a device named
    SKILL.md can never stall discovery, and a huge file is refused without reading it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SkillParseError(_os_reason(exc), "unreadable") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkillParseError("it is not a regular file", "unreadable")
        if info.st_size > max_bytes:
            raise SkillParseError(
                f"it is {_size(info.st_size)}; skill files are limited to {_size(max_bytes)} "
                "(raise [skills] max_file_kb, or move bulk material into payload files)",
                "too-large",
            )
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise SkillParseError(_os_reason(exc), "unreadable") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:  # it grew while we read it
        raise SkillParseError(
            f"it is larger than {_size(max_bytes)}, the limit for skill files", "too-large"
        )
    if b"\0" in data:
        raise SkillParseError("it is a binary file, not Markdown text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillParseError(
            f"it is not UTF-8 text (byte {exc.start} cannot be decoded); save it as UTF-8"
        ) from None


def _os_reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "it cannot be read (permission denied)"
    if exc.errno == errno.ELOOP:
        return "it goes through a loop of symbolic links"
    return f"it cannot be read ({exc.strerror or exc})"


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n} bytes"


def parse_skill_text(
    text: str,
    path: Path,
    *,
    default_name: str,
    source: SkillSource,
    package: str | None = None,
) -> Skill:
    """Turn a skill file's text into a `Skill`, or raise `SkillParseError`."""
    is_folder_skill = path.name == SKILL_FILE
    try:
        front, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise SkillParseError(str(exc)) from None
    if front is None:
        if is_folder_skill:
            raise SkillParseError(
                'it has no front matter: a SKILL.md starts with a "---" line, YAML fields '
                '(name, description, ...), and a closing "---" line'
            )
        front = {}

    skill_type = _skill_type(front)
    name = _text_field(front, ("name",)) or default_name
    _check_name(name)
    content = body.strip()
    description = _text_field(front, ("description",)) or _first_line(content)
    arguments = _argument_names(front.get("arguments"))
    return Skill(
        name=name,
        description=description,
        path=path,
        dir=path.parent,
        source=source,
        content=content,
        type=skill_type,
        arguments=arguments,
        when_to_use=_text_field(front, _WHEN_TO_USE),
        argument_hint=_text_field(front, _ARGUMENT_HINT),
        disable_model_invocation=_flag(front, _DISABLE_MODEL, default=False),
        user_invocable=_flag(front, _USER_INVOCABLE, default=True),
        package=package,
        metadata=front,
    )


def has_sub_skills(skill: Skill) -> bool:
    """Is this skill a bundle whose sub-folders hold `parent.child` skills?"""
    nested = skill.metadata.get("metadata")
    places: list[Mapping[str, Any]] = [skill.metadata]
    if isinstance(nested, Mapping):
        places.append(nested)
    return any(place.get(key) is True for place in places for key in _HAS_SUB_SKILL)


def _skill_type(front: Mapping[str, Any]) -> str:
    if "type" not in front or front["type"] is None:
        return "prompt"
    raw = front["type"]
    value = raw.strip().lower() if isinstance(raw, str) else raw
    if value not in SUPPORTED_TYPES:
        shown = raw if isinstance(raw, str) else repr(raw)
        raise SkillParseError(
            f'its type "{shown}" is not supported; use prompt (the default), inline, flow or '
            "reference",
            "unsupported-type",
        )
    return str(value)


def _text_field(front: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if key not in front or front[key] is None:
            continue
        value = front[key]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise SkillParseError(f'its "{key}" field must be text, not {_kind(value)}')
        text = str(value).strip()
        if text:
            return text
    return None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, bool):
        return "true/false"
    return f"a {type(value).__name__}"


def _check_name(name: str) -> None:
    if len(name) > MAX_NAME_CHARS:
        raise SkillParseError(
            f"its name is {len(name)} characters long; the limit is {MAX_NAME_CHARS}"
        )
    if _BAD_NAME_CHAR.search(name):
        raise SkillParseError(
            f'its name "{name}" contains spaces, slashes or control characters; use letters, '
            "digits, '-', '_' and '.'"
        )


def _first_line(content: str) -> str:
    for line in content.splitlines():
        text = line.strip()
        if text:
            if len(text) > DESCRIPTION_FALLBACK_CHARS:
                return text[: DESCRIPTION_FALLBACK_CHARS - 1] + "…"
            return text
    return NO_DESCRIPTION


def _flag(front: Mapping[str, Any], keys: tuple[str, ...], *, default: bool) -> bool:
    """A yes/no field. `true`/`false` and the words "true"/"false" (any case) count."""
    for key in keys:
        value = front.get(key)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
    return default


def _argument_names(raw: Any) -> tuple[str, ...]:
    """Names for positional arguments: a list, or one whitespace-separated string.

    Blank and purely numeric names are dropped, so `$0`, `$1`, ... stay positional.
    """
    if isinstance(raw, str):
        items: list[Any] = raw.split()
    elif isinstance(raw, list):
        items = raw
    else:
        return ()
    names = [item.strip() for item in items if isinstance(item, str)]
    return tuple(n for n in names if n and not _NUMERIC.match(n))
