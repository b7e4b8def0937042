"""Permission modes: how much the engine approves on its own."""

from __future__ import annotations

from enum import StrEnum

from deftly.contract.errors import ConfigError


class Mode(StrEnum):
    """`manual` asks for anything not known to be safe; `yolo` approves all but protected
    paths and ask rules; `auto` approves everything a deny rule does not forbid."""

    MANUAL = "manual"
    YOLO = "yolo"
    AUTO = "auto"


MODES: tuple[str, ...] = tuple(m.value for m in Mode)


def parse_mode(value: str | Mode, where: str = "the permission mode") -> Mode:
    """A `Mode` from its name; a ConfigError that lists the modes otherwise."""
    try:
        return Mode(str(value).strip().lower())
    except ValueError:
        raise ConfigError(
            f"{where}: unknown permission mode {value!r}; use one of {', '.join(MODES)}."
        ) from None
