"""`@frozen`: `@dataclass(frozen=True, slots=True)`, at a third of the cost of defining it.

The standard decorator writes six methods as source text and compiles each one for every
class; deftly defines some two hundred such classes, and compiling their methods was about
90 ms of every `deftly serve` start and every CLI command that builds a runtime. Here only
`__init__` is compiled per class (it runs once per object and must stay fast); equality,
hashing, `repr`, the refusal to assign and pickling are shared functions that read the
class's field names. The result is still a dataclass in every sense the standard library
checks (`fields`, `replace`, `asdict`, `is_dataclass`, frozen for subclasses). A class the
fast path does not cover (a dataclass base, `kw_only`, `InitVar`, `init=False` fields)
is handed to the standard decorator unchanged.

This module imports nothing of deftly: every layer may use it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_KEY = "__deftly_record__"
"""The class attribute naming its fields, in order (made by the fast path)."""


@dataclass_transform(frozen_default=True)
def frozen(cls: type[T]) -> type[T]:
    """Make `cls` a frozen, slotted dataclass (as `@dataclass(frozen=True, slots=True)`)."""
    if not _plain(cls):
        return dataclasses.dataclass(frozen=True, slots=True)(cls)
    own = set(cls.__dict__)
    made: type[T] = dataclasses.dataclass(init=False, repr=False, eq=False, slots=True)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    if not _ordered(fields):
        return dataclasses.dataclass(frozen=True, slots=True)(cls)  # says what is wrong
    names = tuple(f.name for f in fields)
    setattr(made, _KEY, names)
    methods = _methods(
        _getter(tuple(f.name for f in fields if f.compare)),
        _getter(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))),
        tuple(f.name for f in fields if f.repr),
        names,
    )
    # As the dataclass decorator does, a method the class writes itself stays.
    kept = {"__repr__", "__eq__", "__hash__"} & own
    for name, method in {"__init__": _init(made, fields), **methods}.items():
        if name not in kept:
            setattr(made, name, method)
    params = made.__dataclass_params__  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = params.frozen = True
    return made


def _plain(cls: type) -> bool:
    """Whether the fast path covers `cls`: no dataclass among its bases, no special fields."""
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        return False
    for value in cls.__dict__.values():
        if isinstance(value, dataclasses.Field) and (not value.init or value.kw_only is True):
            return False
    annotations = inspect.get_annotations(cls)
    return not any(
        "InitVar" in str(hint) or "KW_ONLY" in str(hint) for hint in annotations.values()
    )


def _ordered(fields: tuple[dataclasses.Field[Any], ...]) -> bool:
    """No field without a default follows one with a default."""
    defaulted = False
    for field in fields:
        has_default = not (
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        )
        if defaulted and not has_default:
            return False
        defaulted = defaulted or has_default
    return True


def _getter(names: tuple[str, ...]) -> Callable[[Any], Any]:
    """The tuple of these attributes of an object (made in C, as a dataclass compares)."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """The class's `__init__`, compiled: it sets each field past the frozen guard."""
    scope: dict[str, Any] = {"__set": object.__setattr__, "__missing": dataclasses.MISSING}
    params, body = [], []
    for field in fields:
        name = field.name
        if field.default is not dataclasses.MISSING:
            scope[f"__default_{name}"] = field.default
            params.append(f"{name}=__default_{name}")
        elif field.default_factory is not dataclasses.MISSING:
            scope[f"__factory_{name}"] = field.default_factory
            params.append(f"{name}=__missing")
            body.append(f"if {name} is __missing: {name} = __factory_{name}()")
        else:
            params.append(name)
        body.append(f"__set(self, {name!r}, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
    exec(source, scope)  # built from the field names alone, as the dataclass module does
    init: Callable[..., None] = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _methods(
    compared: Callable[[Any], Any],
    hashed: Callable[[Any], Any],
    shown: tuple[str, ...],
    names: tuple[str, ...],
) -> dict[str, Callable[..., Any]]:
    """The class's other methods: closures over its field names (no code compiled)."""

    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return compared(self) == compared(other)

    def __hash__(self: object) -> int:
        return hash(hashed(self))

    def __repr__(self: object) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({fields})"

    def __getstate__(self: object) -> list[object]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: object, state: list[object]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return {
        "__eq__": __eq__,
        "__hash__": __hash__,
        "__repr__": __repr__,
        "__getstate__": __getstate__,
        "__setstate__": __setstate__,
        "__setattr__": _refuse_set,
        "__delattr__": _refuse_delete,
    }


def _refuse_set(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
