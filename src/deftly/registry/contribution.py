"""Contributions: the tools that *could* exist, before activation decides which do.

A contribution names a tool, how to build it (a class or a function whose parameters are
filled by type from the runtime's services), what the environment must offer (`fs`,
`process`) and an optional `when` predicate. Third-party packages contribute through the
entry-point group `deftly.tools`; a profile may also name tools as "module:Class".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from deftly.contract.diagnostics import Diagnostic
from deftly.contract.errors import ToolLoadError
from deftly.contract.records import frozen
from deftly.contract.tool import BaseTool
from deftly.registry.entry_points import entry_points
from deftly.registry.registry import Disclosure, Source
from deftly.registry.services import Services

ENTRY_POINT_GROUP = "deftly.tools"


@frozen
class ToolContribution:
    """`name` may be None for a "module:Class" tool whose name is only known once built."""

    name: str | None
    factory: Callable[..., BaseTool]
    requires: frozenset[str] = frozenset()
    when: Callable[[Services], bool] | None = None
    source: Source = "builtin"
    disclosure: Disclosure = "inline"
    origin: str = "builtin"

    @classmethod
    def of(
        cls,
        tool_class: type[BaseTool],
        *,
        requires: Iterable[str] = (),
        when: Callable[[Services], bool] | None = None,
        source: Source = "builtin",
        disclosure: Disclosure = "inline",
        origin: str = "builtin",
    ) -> ToolContribution:
        """A contribution for a tool class with a class-level `name`."""
        name = getattr(tool_class, "name", None)
        return cls(
            name if isinstance(name, str) else None,
            tool_class,
            frozenset(requires),
            when,
            source,
            disclosure,
            origin,
        )


def _as_contributions(obj: Any, origin: str) -> list[ToolContribution]:
    if isinstance(obj, ToolContribution):
        return [obj]
    if isinstance(obj, type) and issubclass(obj, BaseTool):
        return [ToolContribution.of(obj, source="builtin", origin=origin)]
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        out: list[ToolContribution] = []
        for item in obj:
            out.extend(_as_contributions(item, origin))
        return out
    if callable(obj):
        return _as_contributions(obj(), origin)
    raise ToolLoadError(
        f"{origin} gave a {type(obj).__name__}; expected a ToolContribution, a Tool class, "
        "a list of them, or a function returning them"
    )


def load_tool_path(path: str) -> ToolContribution:
    """Resolve "package.module:ClassName" into a contribution (built later); its source
    is "plugin", so listings tell it from deftly's own tools."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ToolLoadError(f'"{path}" is not a tool path; write it as "package.module:ClassName".')
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ToolLoadError(f'cannot import "{module_name}" for tool "{path}": {exc}') from None
    target = getattr(module, attr, None)
    if target is None:
        raise ToolLoadError(f'module "{module_name}" has no "{attr}" (from tool path "{path}").')
    contributions = _as_contributions(target, f'tool path "{path}"')
    if len(contributions) != 1:
        raise ToolLoadError(f'tool path "{path}" must name exactly one tool.')
    found = contributions[0]
    return ToolContribution(
        found.name,
        found.factory,
        found.requires,
        found.when,
        "plugin",
        found.disclosure,
        f'"{path}"',
    )


def entry_point_contributions(diagnostics: list[Diagnostic]) -> list[ToolContribution]:
    """Tools contributed by installed packages; a broken plugin becomes a diagnostic."""
    out: list[ToolContribution] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"plugin {ep.name} ({ep.value})"
        try:
            found = _as_contributions(ep.load(), origin)
            out.extend(replace(c, source="plugin") if c.source == "builtin" else c for c in found)
        except Exception as exc:
            diagnostics.append(Diagnostic("error", origin, f"could not load: {exc}"))
    return out
