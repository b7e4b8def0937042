"""Probing the permission rules without running anything: a subject becomes a call, the
call is resolved (pure, no I/O), and its own matcher says whether a rule covers it.

`deftly permissions --test 'rm -rf x'` and the examples rule files carry (`{ rule = ...,
match = [...], not_match = [...] }`) go the same way, so an example means exactly what a
real call would: a Bash example is a command, a Read example a path.

A subject is `Tool(text)`, `Tool({json arguments})`, or (for `--test`) a bare command for
the default tool. `text` goes into the tool's first required string argument (Bash:
`command`, Read/Write/Edit: `path`, Glob/Grep: `pattern`); the other required arguments get
placeholders from the tool's params schema (a string is `<name>`, so Edit's old and new
strings differ; numbers their minimum or 1; booleans false; lists and objects empty).
"""

from __future__ import annotations

import inspect
import json
import re
import shlex
from collections.abc import Collection, Mapping
from typing import Any

from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ConfigError, DeftlyError
from deftly.contract.records import frozen
from deftly.contract.tool import RuleMatch, ToolExecution
from deftly.policy.permissions.rulebook import RuleBook, RuleEntry, covers, match_rule
from deftly.registry.registry import ToolRegistry

_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_.\-]*)\((.*)\)$", re.DOTALL)


@frozen
class ProbeCall:
    """A call built from a subject: the tool and its arguments."""

    tool: str
    arguments: dict[str, Any]


def split_subject(text: str, tools: Collection[str]) -> tuple[str | None, str]:
    """(`Tool`, inside) for `Tool(inside)` when Tool is one of `tools`, else (None, text)."""
    found = _CALL.match(text.strip())
    if found is not None and found.group(1) in tools:
        return found.group(1), found.group(2)
    return None, text


def arguments_for(schema: Mapping[str, Any], subject: str) -> dict[str, Any]:
    """Arguments for a call whose subject is `subject`: a JSON object as it is, else the
    subject in the first required string argument and placeholders in the rest."""
    stripped = subject.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = [name for name in schema.get("required") or () if name in properties]
    target = next((n for n in required if _type(properties[n]) == "string"), None)
    if target is None:
        target = next((n for n in properties if _type(properties[n]) == "string"), None)
    if target is None:
        raise DeftlyError(
            "this tool takes no text argument to put the subject in; give its arguments as "
            'JSON instead, e.g. Tool({"name": "value"})'
        )
    arguments = {name: _placeholder(name, properties[name]) for name in required}
    arguments[target] = subject
    return arguments


def _type(prop: Mapping[str, Any]) -> str | None:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for option in prop.get("anyOf") or prop.get("oneOf") or ():
            if isinstance(option, Mapping) and option.get("type") not in (None, "null"):
                return _type(option)
    return kind if isinstance(kind, str) else None


def _placeholder(name: str, prop: Mapping[str, Any]) -> Any:
    if prop.get("enum"):
        return prop["enum"][0]
    if "const" in prop:
        return prop["const"]
    kind = _type(prop)
    if kind == "string":
        return f"<{name}>"
    if kind in ("integer", "number"):
        low = prop.get("minimum", prop.get("exclusiveMinimum", 0) + 1)
        return low if kind == "number" else int(low)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return None


def probe_call(registry: ToolRegistry, text: str, *, default_tool: str | None) -> ProbeCall:
    """The call `text` stands for: `Tool(subject)`, or a subject of `default_tool`."""
    tool, subject = split_subject(text, registry.names())
    tool = tool or default_tool
    if tool is None or registry.get(tool) is None:
        raise DeftlyError(
            f"{text!r} does not name an active tool; write Tool(subject), e.g. "
            '"Read(src/a.py)" or "Bash(git status)".'
        )
    entry = registry.get(tool)
    assert entry is not None
    return ProbeCall(tool, arguments_for(entry.tool.parameters, subject))


async def resolve_call(registry: ToolRegistry, call: ProbeCall) -> ToolExecution:
    """Resolve a call as the executor would (pure: nothing runs); DeftlyError when it
    would fail before the permission chain (bad arguments, a refused path)."""
    entry = registry.get(call.tool)
    if entry is None:
        raise DeftlyError(f'There is no active tool named "{call.tool}".')
    resolution = entry.tool.resolve(entry.tool.parse_args(call.arguments))
    if inspect.isawaitable(resolution):
        resolution = await resolution
    if not isinstance(resolution, ToolExecution):
        raise DeftlyError(
            f'"{call.tool}" answers this call itself without running anything, so no '
            "permission is needed."
        )
    return resolution


async def check_rules(
    book: RuleBook, registry: ToolRegistry, known: Collection[str]
) -> list[Diagnostic]:
    """Warnings for rules that can match nothing; raise ConfigError for the first example
    a rule gets wrong."""
    warnings = [*book.warnings, *book.unknown_tools(known)]
    for entry in book:
        if entry.match or entry.not_match:
            warnings += await _check_examples(entry, registry)
    return [Diagnostic("warning", "[permissions]", text) for text in warnings]


async def _check_examples(entry: RuleEntry, registry: ToolRegistry) -> list[str]:
    tool = entry.rule.tool
    plain = not any(ch in tool for ch in "*?[]{}")
    if plain and registry.get(tool) is None:
        return [
            f'{entry.origin}: the examples of the {entry.kind} rule "{entry.text}" were not '
            f'checked: no active tool is named "{tool}".'
        ]
    for expected, examples in ((True, entry.match), (False, entry.not_match)):
        for example in examples:
            try:
                if plain:
                    schema = _schema(registry, tool)
                    call = ProbeCall(tool, arguments_for(schema, example))
                else:  # `mcp__x__*`: the example names its tool, `Tool(subject)`
                    call = probe_call(registry, example, default_tool=None)
                execution = await resolve_call(registry, call)
            except DeftlyError as exc:
                raise ConfigError(
                    f'{entry.origin}: the example {example!r} of the {entry.kind} rule "'
                    f'{entry.text}" cannot be checked: {exc}'
                ) from None
            match, _ = match_rule(entry.rule, call.tool, execution)
            if covers(entry.kind, match) is not expected:
                raise ConfigError(_failure(entry, example, expected, match))
    return []


def _failure(entry: RuleEntry, example: str, expected: bool, match: RuleMatch) -> str:
    field = "match" if expected else "not_match"
    if expected:
        said = (
            "it covers only part of it, which is not enough for an allow rule"
            if match is RuleMatch.PARTIAL
            else "it does not"
        )
        what = f"should apply to {example!r}, but {said}"
    else:
        what = f"should not apply to {example!r}, but it does"
    return (
        f'{entry.origin}: the {entry.kind} rule "{entry.text}" {what} (listed in its '
        f"`{field}` examples). Fix the rule or the example; check one with "
        f"`deftly permissions --test {shlex.quote(entry.rule.tool + '(' + example + ')')}`."
    )


def _schema(registry: ToolRegistry, tool: str) -> Mapping[str, Any]:
    entry = registry.get(tool)
    if entry is None:
        raise DeftlyError(f'There is no active tool named "{tool}".')
    return entry.tool.parameters
