"""Services a runtime offers its tools, looked up by type.

Tools receive their dependencies through the constructor; a parameter annotated
`workspace: Workspace` gets the runtime's `Workspace`. This is how the earlier Python
implementation loaded tools from "module:Class" paths, and how every tool here is built.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar, cast

from deftly.contract.errors import ToolLoadError

T = TypeVar("T")


class Services:
    """A scope's services by type. A scope may have a parent (an agent scope under its
    session scope): what it does not provide itself is looked up there, so a child agent
    shares its session's services and can shadow one with its own."""

    def __init__(self, parent: Services | None = None) -> None:
        self._by_type: dict[type, object] = {}
        self.parent = parent

    def provide(self, instance: object, as_type: type | None = None) -> None:
        """Offer `instance` under its own type (or `as_type`, e.g. a protocol)."""
        self._by_type[as_type or type(instance)] = instance

    def withdraw(self, as_type: type) -> None:
        """Stop offering what was provided under `as_type` in this scope (not its parent)."""
        self._by_type.pop(as_type, None)

    def clear(self) -> None:
        """Stop offering everything this scope provides (its parent keeps its own)."""
        self._by_type.clear()

    def find(self, wanted: type[T]) -> T | None:
        """The instance provided as `wanted` (or as a subtype of it), nearest scope first."""
        if wanted in self._by_type:
            return cast(T, self._by_type[wanted])
        for instance in self._by_type.values():
            if isinstance(instance, wanted):
                return instance
        return self.parent.find(wanted) if self.parent is not None else None

    def get(self, wanted: type[T]) -> T:
        """Like `find`, but a missing service is a LookupError."""
        found = self.find(wanted)
        if found is None:
            raise LookupError(f"no {wanted.__name__} is provided")
        return found

    def __contains__(self, wanted: type) -> bool:
        return self.find(wanted) is not None

    def type_names(self) -> list[str]:
        """The names of every type offered here or in a parent scope (for error messages)."""
        names = {t.__name__ for t in self._by_type}
        if self.parent is not None:
            names.update(self.parent.type_names())
        return sorted(names)


def build(factory: Callable[..., T], services: Services, *, label: str) -> T:
    """Call `factory` with each annotated parameter filled from `services`.

    A parameter with a default keeps it when no service matches; a parameter without one
    that no service matches is a clear `ToolLoadError`.
    """
    target: Any = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(target)
    except Exception as exc:  # unresolvable annotation, e.g. a typo in a plugin
        raise ToolLoadError(f"{label}: cannot read the constructor's annotations ({exc})") from None
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError) as exc:
        raise ToolLoadError(f"{label}: cannot inspect {factory!r} ({exc})") from None
    kwargs: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        wanted = hints.get(param.name)
        instance: object | None = services.find(wanted) if isinstance(wanted, type) else None
        if instance is not None:
            kwargs[param.name] = instance
        elif param.default is inspect.Parameter.empty:
            shown = getattr(wanted, "__name__", str(wanted)) if wanted is not None else "value"
            raise ToolLoadError(
                f'{label} needs a {shown} for its parameter "{param.name}", which this runtime '
                f"does not provide (it provides: {', '.join(services.type_names())})."
            )
    return factory(**kwargs)
