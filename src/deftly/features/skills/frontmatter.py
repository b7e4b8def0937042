"""YAML front matter: the block between two `---` lines at the top of a Markdown file.

Parsed with `yaml.safe_load` (no Python objects), bounded in size and in how far YAML
aliases may expand, and turned into plain JSON values so it can be printed and compared.
A header of only `key: text` lines (plain or simply quoted text, or a flow list of words),
as the built-in skills have, is read without PyYAML: importing it costs more than a
start-up listing the tools can spare. Anything else goes to PyYAML.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Any

from deftly.contract.errors import DeftlyError

if TYPE_CHECKING:
    import yaml

MAX_FRONT_MATTER_CHARS = 64 * 1024
# Nodes a front matter may expand to (aliases counted each time they are used): enough for
# any hand-written header, far too few for a "billion laughs" document.
MAX_FRONT_MATTER_NODES = 5_000

_LINE_BREAK = re.compile(r"\r?\n")
_SIMPLE_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?: +(.*?))? *")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# Plain words YAML 1.1 (PyYAML's resolver) reads as something other than text.
_NOT_TEXT: dict[str, bool | None] = {
    form: meaning
    for word, meaning in (
        ("yes", True),
        ("true", True),
        ("on", True),
        ("no", False),
        ("false", False),
        ("off", False),
        ("null", None),
    )
    for form in (word, word.capitalize(), word.upper())
}
_NOT_TEXT["~"] = None


class FrontMatterError(DeftlyError):
    """The front matter is there but cannot be read; the message says where and why."""


def split_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """(front matter, body). No opening `---` line: (None, the whole text).

    The front matter must be a mapping; its values come back JSON-safe. The body is
    everything after the closing fence, with line breaks normalised to `\\n`.
    """
    lines = _LINE_BREAK.split(text)
    if not lines or lines[0].strip() != "---":
        return None, text
    closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if closing is None:
        raise FrontMatterError('the front matter has no closing "---" line')
    source = "\n".join(lines[1:closing])  # not stripped: line numbers stay true
    body = "\n".join(lines[closing + 1 :])
    if len(source) > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterError(
            f"the front matter is {len(source):,} characters long; the limit is "
            f"{MAX_FRONT_MATTER_CHARS:,}"
        )
    simple = _simple_front_matter(source)
    data = simple if simple is not None else _load_yaml(source) if source.strip() else None
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a single {type(data).__name__} value"
        raise FrontMatterError(f"the front matter is {kind}; it must be a mapping of fields")
    _check_size(data)
    return {str(key): to_json_value(value) for key, value in data.items()}, body


def _simple_front_matter(source: str) -> dict[str, Any] | None:
    """The mapping when every line is `key: value` with a value whose meaning is plain
    (text that starts with a letter, simply quoted text, or a flow list of words), else
    None: PyYAML reads it. The property test checks both read such headers alike."""
    data: dict[str, Any] = {}
    for line in source.split("\n"):
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None:
            return None
        value = _simple_value(match.group(2) or "")
        if value is _UNSURE or match.group(1) in _NOT_TEXT:
            return None
        data[match.group(1)] = value
    return data or None


_UNSURE = object()


def _simple_value(text: str) -> Any:
    if text == "":
        return _UNSURE
    first = text[0]
    if text in _NOT_TEXT:
        return _NOT_TEXT[text]
    if first in {'"', "'"}:
        inner = text[1:-1]
        simple = len(text) >= 2 and text[-1] == first and first not in inner
        return inner if simple and "\\" not in inner and inner.isprintable() else _UNSURE
    if first == "[":
        if not text.endswith("]"):
            return _UNSURE
        items = [item.strip() for item in text[1:-1].split(",")]
        if all(_WORD.fullmatch(item) and item not in _NOT_TEXT for item in items):
            return items
        return _UNSURE
    plain = (
        first.isascii()
        and first.isalpha()
        and " #" not in text
        and ": " not in text
        and not text.endswith(":")
        and "\t" not in text
        and text.isprintable()
    )
    return text if plain else _UNSURE


def _load_yaml(source: str) -> Any:
    import yaml  # on the first front matter read, not when the skills feature is imported

    # libyaml's safe loader when PyYAML was built with it (about 10x faster), else pure Python.
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(source, Loader=loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        raise FrontMatterError(
            f"the front matter is not valid YAML ({_yaml_problem(exc)})"
        ) from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise FrontMatterError(f"the front matter cannot be read ({exc})") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    text = " ".join(str(problem).split())
    if mark is not None:
        # +2: the opening fence is line 1 of the file, and marks count from zero.
        text += f", at line {mark.line + 2} column {mark.column + 1} of the file"
    return text


def _check_size(data: Any) -> None:
    """Refuse YAML whose aliases expand into something huge (or loop back on itself)."""
    budget = MAX_FRONT_MATTER_NODES
    stack = [data]
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            raise FrontMatterError(
                "the front matter expands to too many values (YAML aliases?); keep it to a "
                "few plain fields"
            )
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple | set):
            stack.extend(node)


def to_json_value(value: Any) -> Any:
    """A YAML value as plain JSON data: dates become ISO text, odd keys become text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime.date | datetime.datetime | datetime.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json_value(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
